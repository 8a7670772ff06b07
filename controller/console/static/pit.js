// The pit's read-only screen: the live table, the last hands step by step, the alarms.
import { el } from "./dom.js";
const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const state = { view: null, session: { role: "dealer" }, hand: null, upTo: 0, socket: null };

function card(text, discarded = false) {
  // A hidden card: the table sends no name for it until the hand is over.
  if (text === null) return el("span", { class: "mini back", "data-card": "back", text: "\u25ae" });
  const suit = text.slice(-1);
  const rank = text.slice(0, -1) === "T" ? "10" : text.slice(0, -1);
  return el("span", { class: `mini ${"hd".includes(suit) ? "red" : ""}${discarded ? " discarded" : ""}`,
    "data-card": text, text: `${rank}${SUITS[suit] || "?"}` });
}

// A card as printed on it ("Th" -> "10♥"); a text's cards likewise.
const face = (text) => `${text.slice(0, -1) === "T" ? "10" : text.slice(0, -1)}${SUITS[text.slice(-1)] || text.slice(-1)}`;
const faces = (text) => text.replace(/(?<![A-Za-z0-9])(10|[A2-9TJQK])([cdhs])(?![A-Za-z0-9])/g, (card) => face(card));

function money(cents) {
  const abs = Math.abs(cents);
  return `${cents < 0 ? "-" : ""}$${Math.floor(abs / 100).toLocaleString("en-US")}.${String(abs % 100).padStart(2, "0")}`;
}

// Who played the spot a record names (the player id the dealer gave with the wager).
const who = (record) => (record.player ? ` (${record.player})` : "");

// A hand's players, spot by spot: "spot 1: p1, spot 2: p2".
const playersText = (players) => Object.entries(players).map(([spot, player]) => `spot ${spot}: ${player}`).join(", ");

function describe(step) {
  const d = step.data;
  switch (step.type) {
    case "wagers_locked": return `wagers locked: ${d.wagers.map((w) => `spot ${w.seat}${who(w)} ${w.wager} ${money(w.amount)}`).join(", ")}`;
    case "card_dealt": return `${face(d.card)} to ${typeof d.to === "number" ? `spot ${d.to}` : d.to} (${d.phase})`;
    case "decisions_due": return `spot ${d.seats.join(", ")} to decide: ${d.options.join(" or ")}`;
    case "decision_made": return `spot ${d.seat}: ${d.decision}${d.raised ? ` (raise ${money(d.raised)})` : ""}`;
    case "house_way": return `house way: dealer discards ${d.discard.map(face).join(" ") || "nothing"} (${d.rule})`;
    case "hand_shown": return `${typeof d.to === "number" ? `spot ${d.to}` : d.to} shows ${d.cards.map(face).join(" ")}: ${d.hand_class}${d.folded ? " (folded)" : ""}`;
    case "wager_settled": return `spot ${d.seat}${who(d)} ${d.wager} ${money(d.amount)}: ${d.result} ${money(d.net)}`;
    case "progressive_awarded": return `spot ${d.seat}${who(d)} progressive ${d.award}: pay ${money(d.amount)}`;
    case "hand_settled": return `settled: players ${money(d.players_net)}, house ${money(d.house_result)}`;
    case "hand_voided": return `voided by ${d.by}: ${d.reason}`;
    case "fault": return `fault: ${faces(d.detail)}`;
    default: return `${step.type} ${JSON.stringify(d)}`;
  }
}

function renderNow(view) {
  document.getElementById("table").textContent = `Table ${view.table_id} \u2014 ${view.game_name}`;
  document.getElementById("hand").textContent = view.hand_id || `hands ${view.hand_number}`;
  document.getElementById("state").textContent = view.connected ? view.state : "TABLE NOT ANSWERING";
  document.getElementById("meter").textContent = view.meter_text ? `meter ${view.meter_text}` : "";
  document.getElementById("devices").textContent = Object.entries(view.devices).map(([n, s]) => `${n} ${s}`).join("  ");
  document.getElementById("banner").textContent = view.banner;
  renderJournal(view.journal);
  const rows = view.spots.filter((s) => s.wagers.length || s.cards.length).map((spot) => el("tr", { "data-spot": String(spot.spot) },
    el("td", { text: String(spot.spot) }), el("td", { text: spot.player || "" }),
    el("td", { text: spot.wagers.map((w) => `${w.wager} ${w.text}`).join(", ") }),
    el("td", {}, ...spot.cards.map((c) => card(c.card, c.discarded))), el("td", { text: spot.lamp })));
  if (view.dealer.length) rows.push(el("tr", {}, el("td", { text: "dealer" }), el("td"), el("td"),
    el("td", {}, ...view.dealer.map((c) => card(c.card, c.discarded))), el("td")));
  document.querySelector("#now tbody").replaceChildren(...rows);
  document.getElementById("alarms").replaceChildren(...view.alarms.map((alarm) => el("li",
    { class: alarm.acknowledged_by ? "acknowledged" : "open", "data-alarm": String(alarm.seq) },
    el("span", { text: `#${alarm.seq} ${alarm.ts.slice(11, 19)} ${alarm.text}` }),
    alarm.acknowledged_by ? el("span", { class: "ack", text: ` acknowledged by ${alarm.acknowledged_by} at ${alarm.acknowledged_at.slice(11, 19)}` })
      : state.session.role === "supervisor" && alarm.seq > 0 ? el("button", { class: "small", "data-action": "acknowledge", text: "Acknowledge",
        onclick: () => send({ type: "acknowledge", seq: alarm.seq }) }) : null)));
  document.getElementById("hands").replaceChildren(...view.recall.map((hand) => el("li", {},
    el("button", { class: "link", "data-hand": hand.hand_id, text: `${hand.hand_id}`,
      onclick: () => send({ type: "recall", hand_id: hand.hand_id }) }),
    el("span", { text: ` ${hand.started.slice(11, 19)} ${hand.result}${hand.house_result !== null ? `, house ${money(hand.house_result)}` : ""}` }),
    Object.keys(hand.players).length ? el("span", { class: "players", "data-players": hand.hand_id, text: ` \u2014 ${playersText(hand.players)}` }) : null)));
}

// The journal's hash chain as the table states it: verified at start-up through one seq, and
// through another since (the daemon reads back what it journals), or broken.
function renderJournal(journal) {
  const box = document.getElementById("journal");
  if (journal?.broken_at) {
    box.className = "journal broken";
    box.textContent = `JOURNAL BROKEN at seq ${journal.broken_at}`;
  } else if (journal && journal.verified_through !== null) {
    box.className = "journal verified";
    box.textContent = `journal verified through seq ${journal.verified_through} (at start-up through ${journal.verified_at_start})`;
  } else {
    box.className = "journal unknown";
    box.textContent = "journal: not verified by the table";
  }
}

function renderRecall() {
  const hand = state.hand;
  const box = document.getElementById("recall");
  box.hidden = !hand;
  if (!hand) return;
  document.getElementById("recall-title").textContent = `Hand ${hand.hand_id}: ${hand.result}`;
  const players = playersText(hand.players);
  document.getElementById("recall-players").textContent = players ? `Players ${players}` : "";
  const shown = hand.steps.slice(0, state.upTo);
  const cards = {};
  for (const step of shown) {
    if (step.type === "card_dealt") (cards[step.data.to] ||= []).push(step.data.card);
  }
  document.getElementById("recall-cards").replaceChildren(...Object.entries(cards).map(([to, list]) =>
    el("div", {}, el("b", { text: `${Number.isNaN(Number(to)) ? to : `spot ${to}`}: ` }), ...list.map((c) => card(c)))));
  document.getElementById("recall-steps").replaceChildren(...shown.map((step) =>
    el("li", { "data-step": step.type, text: describe(step) })));
  document.getElementById("step-count").textContent = `step ${state.upTo} of ${hand.steps.length}`;
}

function send(message) {
  if (state.socket?.readyState === WebSocket.OPEN) state.socket.send(JSON.stringify(message));
}

function notice(text) {
  const box = document.getElementById("notice");
  box.textContent = text || "";
  box.hidden = !text;
}

function connect() {
  const socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/pit`);
  state.socket = socket;
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "view") {
      state.view = message;
      document.body.dataset.seq = String(message.seq);
      renderNow(message);
    } else if (message.type === "session") {
      state.session = message;
      document.body.dataset.role = message.role;
      document.getElementById("who").replaceChildren(message.role === "supervisor"
        ? el("span", { text: `Supervisor ${message.name}` })
        : el("a", { class: "small", href: "/supervisor?next=/pit", text: "Supervisor sign-in" }));
      if (state.view) renderNow(state.view);
    } else if (message.type === "hand") {
      state.hand = message.hand;
      state.upTo = message.hand.steps.length;
      renderRecall();
    } else if (message.type === "error") {
      notice(message.error);
    }
  });
  socket.addEventListener("close", () => setTimeout(connect, 1000));
}

const stepTo = (n) => { if (state.hand) { state.upTo = Math.max(0, Math.min(state.hand.steps.length, n)); renderRecall(); } };
document.getElementById("first").addEventListener("click", () => stepTo(0));
document.getElementById("back").addEventListener("click", () => stepTo(state.upTo - 1));
document.getElementById("step").addEventListener("click", () => stepTo(state.upTo + 1));
document.getElementById("all").addEventListener("click", () => stepTo(Infinity));
connect();
