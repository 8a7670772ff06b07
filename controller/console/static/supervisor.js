// Supervisor sign-in: the credential goes to the console once; the browser keeps only the
// session cookie (HttpOnly), then returns to the table's screen with the supervisor's buttons.
const form = document.getElementById("sign-in");
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = document.getElementById("error");
  error.textContent = "";
  const credential = document.getElementById("credential");
  const body = JSON.stringify({ name: document.getElementById("name").value, credential: credential.value });
  credential.value = "";
  const reply = await fetch("/api/sign-in", { method: "POST", headers: { "content-type": "application/json" },
    body, credentials: "same-origin" });
  const answer = await reply.json();
  const next = new URLSearchParams(location.search).get("next") === "/pit" ? "/pit" : "/";
  if (answer.ok) location.assign(next);
  else error.textContent = `Refused: ${answer.error}`;
});
