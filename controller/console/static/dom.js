// Building the screens' elements: one helper shared by the dealer's and the pit's screens.

// An element with its attributes ("class", "text", "on<event>" handlers, the rest set as
// attributes) and its children (falsy ones skipped).
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}
