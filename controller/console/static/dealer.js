// The dealer's screen: draws the console's view and sends the dealer's touches as commands.
// It decides nothing: a button is shown only when the view lists its action.
import { el } from "./dom.js";

const SUITS = { s: ["\u2660", false], h: ["\u2665", true], d: ["\u2666", true], c: ["\u2663", false] };
const WAGER_NAMES = { ante: "Ante", xtra_bonus: "Xtra", lowdown_bonus: "Lowdown", bonus: "Bonus",
  progressive: "Prog", raise: "Raise", bet: "Bet" };
const ACTION_NAMES = { raise: "Raise", check: "Check", bet: "Bet", fold: "Fold", stand: "Stand",
  open: "Open", lock: "Lock", continue: "Continue", close: "Close" };

const ui = { view: null, spot: null, wager: null, amount: 0, chosen: {}, socket: null,
  waiting: new Map(), session: { role: "dealer" }, reason: "", keypad: null };
// The longest player id or dealer's name the table takes (a player id, in characters).
const MAX_NAME = 64;

function money(cents) {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100).toLocaleString("en-US")}.${String(abs % 100).padStart(2, "0")}`;
}

// A card as printed on it ("Th" -> "10♥"), for the texts and buttons that name one.
function face(card) {
  const rank = card.slice(0, -1) === "T" ? "10" : card.slice(0, -1);
  return rank + ((SUITS[card.slice(-1)] || [card.slice(-1)])[0]);
}

function cardNode(card, { discarded = false, onpick = null, chosen = false } = {}) {
  // A hidden card: the table sends no name for it, and the screen draws its back.
  if (card === null) {
    return el("div", { class: `card back${discarded ? " discarded" : ""}`, "data-card": "back",
      title: discarded ? "face down (discarded)" : "face down" });
  }
  const rank = card.slice(0, -1) === "T" ? "10" : card.slice(0, -1);
  const [symbol, red] = SUITS[card.slice(-1)] || ["?", false];
  const classes = ["card", red ? "red" : "black"];
  if (discarded) classes.push("discarded");
  if (chosen) classes.push("chosen");
  if (onpick) classes.push("pickable");
  const node = el("div", { class: classes.join(" "), "data-card": card,
    title: discarded ? `${face(card)} (discarded)` : face(card) },
  el("span", { text: rank }), el("span", { text: symbol }));
  if (onpick) node.addEventListener("click", onpick);
  return node;
}

function newId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

function send(command) {
  if (!ui.socket || ui.socket.readyState !== WebSocket.OPEN) {
    notice("Not connected to the console: nothing was sent");
    return;
  }
  const id = newId();
  ui.waiting.set(id, command);
  ui.socket.send(JSON.stringify({ type: "command", id, command }));
}

function notice(text) {
  const box = document.getElementById("notice");
  box.textContent = text || "";
  box.hidden = !text;
}

function can(name) {
  return (ui.view?.actions || []).some((action) => action.command === name);
}

// Naming who is at the table (a spot's player, the dealer): between hands, as the view says.
function canSeat(name) {
  return (ui.view?.seating || []).some((action) => action.command === name);
}

// What a card reader typed, as the id on the card: a magnetic stripe reader types the
// track's sentinels around it (";4417009812?" track 2, "%B4417009812^SMITH/PAT^...?" track 1).
export function cardRead(text) {
  let typed = text.trim();
  const track2 = typed.match(/^;([^=?]*)[=?]/);
  const track1 = typed.match(/^%[A-Za-z]?([^^?]*)[\^?]/);
  if (track2) typed = track2[1];
  else if (track1) typed = track1[1];
  return typed.replace(/\s+/g, " ").trim();
}

const KEYPADS = {
  player: (spot) => ({ title: `Player at spot ${spot}`, none: "Unrated",
    hint: "Key in the player-card number, or read the card; Unrated for a player with no card" }),
  dealer: () => ({ title: "Dealer sign-in", none: "No dealer",
    hint: "Your badge number, keyed in or read; or type your name" }),
};

function openKeypad(kind, spot = null) {
  const words = KEYPADS[kind](spot);
  ui.keypad = { kind, spot };
  document.getElementById("keypad-title").textContent = words.title;
  document.getElementById("keypad-hint").textContent = words.hint;
  document.getElementById("keypad-none").textContent = words.none;
  document.getElementById("keypad-error").textContent = "";
  const entry = document.getElementById("keypad-entry");
  entry.value = "";
  document.getElementById("keypad").hidden = false;
  entry.focus();   // a card reader types into it
}

function closeKeypad() {
  ui.keypad = null;
  document.getElementById("keypad").hidden = true;
}

// Send what the keypad holds ("" from its Unrated / No dealer key).
function seat(name) {
  const pad = ui.keypad;
  if (!pad) return;
  if (name.length > MAX_NAME) {
    document.getElementById("keypad-error").textContent = `At most ${MAX_NAME} characters`;
    return;
  }
  if (pad.kind === "player") send({ command: "seat_player", spot: pad.spot, player: name });
  else send({ command: "change_dealer", dealer: name });
  closeKeypad();
}

function buildKeypad() {
  const entry = document.getElementById("keypad-entry");
  const key = (label, press) => el("button", { type: "button", "data-key": label, text: label,
    onclick: () => { press(); entry.focus(); } });
  const digits = ["1", "2", "3", "4", "5", "6", "7", "8", "9"].map((d) =>
    key(d, () => { if (entry.value.length < MAX_NAME) entry.value += d; }));
  document.getElementById("keypad-keys").replaceChildren(...digits,
    key("Clear", () => { entry.value = ""; }),
    key("0", () => { if (entry.value.length < MAX_NAME) entry.value += "0"; }),
    key("\u232b", () => { entry.value = entry.value.slice(0, -1); }));
  document.getElementById("keypad-box").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = cardRead(entry.value);
    if (!name) {
      document.getElementById("keypad-error").textContent =
        `Key in a number first, or touch ${document.getElementById("keypad-none").textContent}`;
      return;
    }
    seat(name);
  });
  document.getElementById("keypad-none").addEventListener("click", () => seat(""));
  document.getElementById("keypad-cancel").addEventListener("click", closeKeypad);
}

function button(label, action, onclick, extra = "") {
  return el("button", { class: `action ${extra}`.trim(), "data-action": action, text: label, onclick });
}

function renderTop(view) {
  document.getElementById("table").textContent = `Table ${view.table_id} \u2014 ${view.game_name} (${view.paytable})`;
  document.getElementById("hand").textContent = view.hand_id ? `Hand ${view.hand_id}` : `Hands ${view.hand_number}`;
  document.getElementById("state").textContent = view.state;
  document.getElementById("meter").textContent = view.meter_text ? `Jackpot ${view.meter_text}` : "";
  const devices = document.getElementById("devices");
  devices.replaceChildren(...Object.entries(view.devices).map(([name, status]) =>
    el("span", { class: status === "connected" ? "ok" : "lost", text: `${name} ${status}  ` })));
  const banner = document.getElementById("banner");
  banner.textContent = view.banner;
  banner.classList.toggle("paused", view.state === "PAUSED");
  document.getElementById("offline").hidden = view.connected;
  // after a void, until the next hand: what to give back to whom (the view's lines)
  const voided = document.getElementById("void-summary");
  voided.hidden = !view.voided;
  voided.replaceChildren(...(view.voided ? view.voided.lines : []).map((line) => el("div", { text: line })));
  const jackpot = document.getElementById("jackpot");
  jackpot.hidden = !view.jackpot;
  if (view.jackpot) {
    document.getElementById("jackpot-text").textContent =
      `${view.jackpot.text} on spot ${view.jackpot.seats.join(", ")} (hand ${view.jackpot.hand_id})`;
  }
}

function renderHouse(view) {
  document.getElementById("dealer-cards").replaceChildren(
    ...view.dealer.map((c) => cardNode(c.card, { discarded: c.discarded })));
  document.getElementById("community-box").hidden = view.community.length === 0;
  document.getElementById("community").replaceChildren(...view.community.map((c) => cardNode(c.card)));
  const way = document.getElementById("house-way");
  way.textContent = view.house_way
    ? (view.house_way.discard.length ? `House way: discard ${view.house_way.discard.map(face).join(" ")} (${view.house_way.rule})`
      : `House way: stand (${view.house_way.rule})`)
    : "";
}

function decisionButtons(view, spot) {
  const mine = view.actions.filter((a) => a.command === "decide" && a.spot === spot.spot);
  const nodes = [];
  const chosen = ui.chosen[spot.spot] || [];
  for (const action of mine) {
    if (action.decision === "discard") {
      if (chosen.length > 0) {
        nodes.push(button(`Discard ${chosen.map(face).join(" ")}`, "discard",
          () => { send({ command: "decide", spot: spot.spot, decision: `discard:${chosen.join(",")}` }); ui.chosen[spot.spot] = []; }));
      } else {
        nodes.push(el("span", { class: "hint", text: "or touch 1-2 cards to discard" }));
      }
    } else {
      nodes.push(button(ACTION_NAMES[action.decision] || action.decision, action.decision,
        () => send({ command: "decide", spot: spot.spot, decision: action.decision }),
        action.decision === "fold" ? "fold" : ""));
    }
  }
  return nodes;
}

function payoutNode(view, spot) {
  const panel = view.payouts.find((p) => p.spot === spot.spot);
  if (!panel) return null;
  const lines = panel.lines.map((line) => el("div", { class: `line ${line.action}${line.award ? " award" : ""}` },
    el("span", { text: `${WAGER_NAMES[line.wager] || line.wager} ${line.result}` }),
    el("span", { text: `${line.action} ${line.text}` })));
  const total = el("div", { class: "line total" }, el("span", { text: "Total" }),
    el("span", { text: panel.total > 0 ? `pay ${panel.total_text}` : panel.total < 0 ? `collect ${money(-panel.total)}` : "even" }));
  const player = panel.player ? [el("div", { class: "line player", "data-player": panel.player, text: panel.player })] : [];
  return el("div", { class: "payout", "data-payout": String(spot.spot) }, ...player, ...lines, total);
}

function renderSpots(view) {
  const placing = can("place");
  const discarding = new Set(view.actions.filter((a) => a.decision === "discard").map((a) => a.spot));
  const nodes = view.spots.map((spot) => {
    const classes = ["spot"];
    if (spot.to_act) classes.push("to-act");
    if (spot.to_deal) classes.push("to-deal");
    if (placing && ui.spot === spot.spot) classes.push("selected");
    const chosen = ui.chosen[spot.spot] || [];
    const pick = (card) => () => {
      const list = ui.chosen[spot.spot] || [];
      ui.chosen[spot.spot] = list.includes(card) ? list.filter((c) => c !== card)
        : list.length < 2 ? [...list, card] : list;
      render();
    };
    const cards = spot.cards.map((c) => cardNode(c.card, { discarded: c.discarded, chosen: chosen.includes(c.card),
      onpick: discarding.has(spot.spot) && !c.discarded && c.card !== null ? pick(c.card) : null }));
    const wagers = spot.wagers.map((w) => el("div", { class: "wager", "data-wager": w.wager },
      el("span", { text: WAGER_NAMES[w.wager] || w.wager }), el("b", { text: w.text }),
      can("cancel") ? el("button", { class: "cancel", "data-action": "cancel", text: "\u00d7",
        onclick: (event) => { event.stopPropagation(); send({ command: "cancel", spot: spot.spot, wager: w.wager }); } }) : null));
    const named = spot.player ? " named" : "";
    const player = canSeat("seat_player")
      ? el("button", { class: `small${named}`, "data-seat": String(spot.spot), text: spot.player || "Unrated",
        title: "Who plays this spot: touch to key in the player card",
        onclick: (event) => { event.stopPropagation(); openKeypad("player", spot.spot); } })
      : spot.player ? el("span", { class: named.trim(), text: spot.player }) : null;
    const node = el("div", { class: classes.join(" "), "data-spot": String(spot.spot),
      onclick: () => { if (can("place")) { ui.spot = spot.spot; render(); } } },
    el("div", { class: "spot-head" }, el("span", { text: `Spot ${spot.spot}` }),
      el("span", { class: `lamp ${spot.lamp}`, title: spot.lamp, "data-lamp": spot.lamp })),
    el("div", { class: "seat", "data-player": spot.player }, player),
    el("div", { class: "wagers" }, ...wagers),
    el("div", { class: "cards" }, ...cards),
    spot.decision ? el("div", { class: "decision", text: spot.decision.replace(":", " ") }) : null,
    payoutNode(view, spot),
    el("div", { class: "spot-actions" }, ...decisionButtons(view, spot)));
    return node;
  });
  document.getElementById("spots").replaceChildren(...nodes);
}

function renderControls(view) {
  const tray = document.getElementById("tray");
  tray.hidden = !can("place");
  if (!tray.hidden) {
    if (!view.wager_kinds.includes(ui.wager)) ui.wager = view.wager_kinds[0];
    document.getElementById("tray-target").textContent = ui.spot ? `Spot ${ui.spot}` : "Touch a spot";
    document.getElementById("wager-kinds").replaceChildren(...view.wager_kinds.map((kind) =>
      el("button", { class: `small${kind === ui.wager ? " chosen" : ""}`, "data-wager-kind": kind,
        text: WAGER_NAMES[kind] || kind, onclick: () => { ui.wager = kind; render(); } })));
    document.getElementById("chips").replaceChildren(...view.chips.map((chip) =>
      el("button", { class: `chip c${chip.amount}`, "data-chip": String(chip.amount), text: chip.text.replace(".00", ""),
        onclick: () => { ui.amount += chip.amount; render(); } })));
    document.getElementById("tray-amount").textContent = ui.amount ? money(ui.amount) : "";
    const place = document.getElementById("place");
    place.hidden = !(ui.spot && ui.amount);
    place.textContent = `Place ${money(ui.amount)}`;
    document.getElementById("clear").hidden = !ui.amount;
  }
  const actions = ["open", "lock", "continue"].filter(can).map((name) =>
    button(ACTION_NAMES[name], name, () => send({ command: name })));
  document.getElementById("table-actions").replaceChildren(...actions);
  document.getElementById("shift").replaceChildren(
    el("span", { id: "dealer-name", class: view.dealer_name ? "who" : "", "data-dealer": view.dealer_name,
      text: view.dealer_name ? `Dealer ${view.dealer_name}` : "No dealer signed in" }),
    canSeat("change_dealer") ? el("button", { class: "small", "data-seat": "dealer",
      text: view.dealer_name ? "Change dealer" : "Dealer sign-in", onclick: () => openKeypad("dealer") }) : null);
}

function supervising() {
  return ui.session.role === "supervisor" && Date.now() < ui.session.until;
}

function canSupervise(name) {
  return supervising() &&
    (ui.view?.supervisor_actions || []).some((action) => action.command === name);
}

function renderSupervisor(view) {
  const box = document.getElementById("supervisor");
  const jackpot = document.getElementById("jackpot-actions");
  if (!supervising()) {
    box.replaceChildren(el("a", { class: "small", href: "/supervisor", text: "Supervisor sign-in" }));
    jackpot.replaceChildren();
    return;
  }
  const nodes = [el("span", { class: "who", text: `Supervisor ${ui.session.name} (one action)` })];
  if (canSupervise("void") || canSupervise("burn")) {
    nodes.push(el("input", { id: "void-reason", placeholder: "reason (journaled)", maxlength: "200",
      value: ui.reason, oninput: (event) => { ui.reason = event.target.value; } }));
  }
  const withReason = (name) => () => {
    if (!ui.reason.trim()) { notice(`A ${name} needs a reason`); return; }
    send({ command: name, reason: ui.reason.trim() });
    ui.reason = "";
  };
  if (canSupervise("burn")) nodes.push(button("Burn card, go on", "burn", withReason("burn")));
  if (canSupervise("void")) nodes.push(button("Void hand", "void", withReason("void"), "fold"));
  if (canSupervise("reload")) nodes.push(button("Reload config", "reload", () => send({ command: "reload" })));
  nodes.push(el("button", { class: "small", "data-action": "sign-out", text: "Sign out",
    onclick: async () => { await fetch("/api/sign-out", { method: "POST" }); location.reload(); } }));
  box.replaceChildren(...nodes);
  jackpot.replaceChildren(...(canSupervise("verify_jackpot")
    ? [button("Verify hand-pay", "verify_jackpot", () => send({ command: "verify_jackpot" }))] : []));
}

function render() {
  const view = ui.view;
  if (!view) return;
  const typing = document.activeElement?.id === "void-reason";
  renderTop(view);
  renderHouse(view);
  renderSpots(view);
  renderControls(view);
  renderSupervisor(view);
  if (typing) document.getElementById("void-reason")?.focus();
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws`);
  ui.socket = socket;
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "view") {
      const before = ui.view?.hand_id;
      ui.view = message;
      if (message.hand_id !== before) ui.chosen = {};
      document.body.dataset.seq = String(message.seq);
      render();
    } else if (message.type === "session") {
      if (ui.session.role === "supervisor" && message.role !== "supervisor" && message.ended) {
        notice(`The supervisor's sign-in is over: ${message.ended}. One sign-in, one action.`);
      }
      ui.session = { ...message, until: Date.now() + (message.seconds || 0) * 1000 };
      document.body.dataset.role = message.role;
      if (message.role === "supervisor") {
        // the buttons go when the session ends, whether or not anything happens meanwhile
        setTimeout(() => { document.body.dataset.role = "dealer"; render(); }, message.seconds * 1000);
      }
      render();
    } else if (message.type === "answer") {
      ui.waiting.delete(message.id);
      notice(message.ok ? "" : `Refused: ${message.error}`);
    } else if (message.type === "error") {
      notice(`Refused: ${message.error}`);
    }
  });
  socket.addEventListener("close", () => {
    document.getElementById("offline").hidden = false;
    setTimeout(connect, 1000);
  });
}

document.getElementById("place").addEventListener("click", () => {
  if (ui.spot && ui.amount) {
    send({ command: "place", spot: ui.spot, wager: ui.wager, amount: ui.amount });
    ui.amount = 0;
    render();
  }
});
document.getElementById("clear").addEventListener("click", () => { ui.amount = 0; render(); });
buildKeypad();
connect();
