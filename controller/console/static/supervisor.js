// Sign-in: a supervisor touches her name and keys in her PIN on the keypad (a badge reader
// types into the focused field and ends with Enter); a console account types its credential.
// The PIN or credential goes to the console once; the browser keeps only the session cookie
// (HttpOnly), then returns to the table's screen with the supervisor's buttons.
import { el } from "./dom.js";

const form = document.getElementById("sign-in");
const name = document.getElementById("name");
const credential = document.getElementById("credential");

function keypad() {
  const key = (label, press) => el("button", { type: "button", "data-key": label, text: label,
    onclick: () => { press(); credential.focus(); } });
  const digit = (d) => key(d, () => { if (credential.value.length < 256) credential.value += d; });
  document.getElementById("pin-keys").replaceChildren(
    ..."123456789".split("").map(digit),
    key("Clear", () => { credential.value = ""; }), digit("0"),
    key("\u232b", () => { credential.value = credential.value.slice(0, -1); }));
}

async function offerNames() {
  const reply = await fetch("/api/supervisors", { credentials: "same-origin" });
  if (!reply.ok) return;
  const { with_pin: names } = await reply.json();
  const choose = (who) => {
    name.value = who;
    for (const node of document.querySelectorAll("[data-supervisor]")) {
      node.classList.toggle("chosen", node.dataset.supervisor === who);
    }
    credential.focus();
  };
  document.getElementById("names").replaceChildren(...names.map((who) =>
    el("button", { type: "button", class: "small", "data-supervisor": who, text: who, onclick: () => choose(who) })));
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = document.getElementById("error");
  error.textContent = "";
  const body = JSON.stringify({ name: name.value.trim(), credential: credential.value });
  credential.value = "";
  const reply = await fetch("/api/sign-in", { method: "POST", headers: { "content-type": "application/json" },
    body, credentials: "same-origin" });
  const answer = await reply.json();
  const next = new URLSearchParams(location.search).get("next") === "/pit" ? "/pit" : "/";
  if (answer.ok) location.assign(next);
  else error.textContent = `Refused: ${answer.error}`;
});
keypad();
offerNames();
