// The Go Boom page: a new-game form, the table drawn from the server's frames, and the replay viewer.
// The server owns the game (goboom_env.web): this script only draws frames and sends moves.
"use strict";

const $ = (sel) => document.querySelector(sel);
const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const SYMBOLS = { "\u2663": "C", "\u2666": "D", "\u2665": "H", "\u2660": "S" };
const CONFIG_FIELDS = ["variant", "num_players", "hand_size", "num_decks", "num_jokers", "scoring",
                       "target_score", "rounds", "after_joker"];
const NUMBER_FIELDS = new Set(["num_players", "hand_size", "num_decks", "num_jokers", "target_score", "rounds"]);

const state = { options: null, socket: null, game: null, token: null, frame: null, seq: 0, logHand: null,
                logCount: 0, replay: null, replayText: null, busy: false };
const FINISHED = new Set(["over", "failed"]);

// -- small helpers ----------------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function showError(message) {
  const box = $("#error");
  box.textContent = message;
  box.hidden = !message;
}

async function api(method, path, body, headers = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    // a record file's text is JSON Lines; the server refuses text/plain, which any web site may send
    init.headers["Content-Type"] = typeof body === "string" ? "application/x-ndjson" : "application/json";
  }
  const response = await fetch(path, init);
  const data = response.status === 204 ? {} : await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function show(panel) {
  for (const id of ["#new-game", "#table", "#replay"]) $(id).hidden = id !== panel;
}

// -- cards ------------------------------------------------------------------------------------------

function cardNode(card, { tag = "div", size = "", number = 0 } = {}) {
  const node = el(tag, { class: `card ${size}`.trim() });
  if (!card) { node.classList.add("back"); node.setAttribute("aria-label", "hidden card"); return node; }
  node.dataset.code = card.code;
  node.setAttribute("aria-label", card.text);
  if (card.code === "JK") {
    node.classList.add("joker");
    node.append(el("span", { class: "rank", text: "\u2605" }), el("span", { class: "suit", text: "JK" }));
  } else {
    const suit = card.code[1];
    if (suit === "D" || suit === "H") node.classList.add("red");
    const rank = card.code[0] === "T" ? "10" : card.code[0];
    node.append(el("span", { class: "rank", text: rank }), el("span", { class: "suit", text: SUITS[suit] }));
  }
  if (number) node.append(el("span", { class: "num", text: String(number) }));
  return node;
}

// -- the new-game form ------------------------------------------------------------------------------

function formValues() {
  const form = $("#new-form");
  const config = {};
  for (const name of CONFIG_FIELDS) {
    const value = form.elements[name].value.trim();
    if (value !== "") config[name] = NUMBER_FIELDS.has(name) ? Number(value) : value;
  }
  return { form, config };
}

function effectiveGame() {
  const { form, config } = formValues();
  const preset = state.options.presets[form.elements.preset.value] || {};
  return { variant: config.variant || preset.variant || "classic",
           players: config.num_players || preset.num_players || 4 };
}

function refreshSeats() {
  if (!state.options) return;
  const { variant, players } = effectiveGame();
  const seat = $("#seat");
  const chosen = Number(seat.value || 0);
  seat.replaceChildren(...Array.from({ length: Math.max(players, 2) }, (_, s) =>
    el("option", { value: String(s), text: `P${s}`, selected: s === chosen })));
  const box = $("#opponents");
  const previous = Array.from(box.querySelectorAll("select")).map((s) => s.value);
  box.replaceChildren();
  const agents = state.options.agents.filter((a) => (!a.variant || a.variant === variant) &&
    (!a.player_counts || a.player_counts.includes(players)));
  for (let i = 0; i < players - 1; i++) {
    const select = el("select", { name: "opponent", "data-index": String(i) });
    for (const a of agents) select.append(el("option", { value: a.id, text: `${a.id} \u2013 ${a.label}` }));
    select.value = agents.some((a) => a.id === previous[i]) ? previous[i] : "heuristic";
    box.append(el("label", { text: `Opponent ${i + 1}` }, select));
  }
}

async function startGame(event) {
  event.preventDefault();
  showError("");
  const { form, config } = formValues();
  const body = { config, seat: Number(form.elements.seat.value || 0), episode: form.elements.episode.value,
                 opponents: Array.from($("#opponents").querySelectorAll("select")).map((s) => s.value),
                 delay_ms: Number(form.elements.delay_ms.value || 0) };
  if (form.elements.preset.value) body.preset = form.elements.preset.value;
  if (form.elements.seed.value !== "") body.seed = Number(form.elements.seed.value);
  try {
    const created = await api("POST", "/api/games", body);
    leaveGame();
    sessionStorage.setItem(`goboom-token-${created.game}`, created.token);
    history.replaceState(null, "", `#game=${created.game}`);
    openGame(created.game, created.token);
  } catch (err) {
    showError(err.message);
  }
}

// -- live play ----------------------------------------------------------------------------------------

// The server frees a finished game's slot soon; the page ends the games it leaves at once.
function leaveGame({ onlyFinished = false } = {}) {
  const { game, token } = state;
  if (!game || (onlyFinished && !(state.frame && FINISHED.has(state.frame.status)))) return;
  if (state.socket) { state.socket.close(); state.socket = null; }
  state.game = null; state.token = null;
  sessionStorage.removeItem(`goboom-token-${game}`);
  fetch(`/api/games/${game}`, { method: "DELETE", headers: { "X-Game-Token": token }, keepalive: true })
    .catch(() => {});
}

function forgetGame(game) {
  sessionStorage.removeItem(`goboom-token-${game}`);
  if (location.hash === `#game=${game}`) history.replaceState(null, "", location.pathname);
  state.game = null; state.token = null;
}

function openGame(game, token, retry = true) {
  if (state.socket) state.socket.close();
  if (state.game !== game) state.seq = 0;  // frame numbers go on across the sockets of one game
  state.game = game; state.token = token; state.frame = null; state.replay = null; state.logHand = null;
  $("#log").replaceChildren();
  $("#replay-controls").hidden = true;
  show("#table");
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/api/games/${game}/play?token=${encodeURIComponent(token)}`);
  state.socket = socket;
  socket.onmessage = (message) => {
    if (state.socket !== socket) return;  // a socket this page has left
    const data = JSON.parse(message.data);
    if (data.type === "error") showError(data.error);
    else if (data.type === "frame" && data.seq > state.seq) {  // an older frame than the one shown: stale
      state.seq = data.seq;
      showError("");
      drawFrame(data.frame);
    }
  };
  socket.onclose = (event) => {
    if (state.socket !== socket || event.code < 4000) return;
    // a reload can reach the server before the closed page's socket is gone: try once more
    if (event.code === 4409 && retry) setTimeout(() => openGame(game, token, false), 700);
    else if (event.code === 4410) forgetGame(game);  // the game ended early: its last frame says why
    else if (event.code === 4404 || event.code === 4403) { forgetGame(game); show("#new-game"); }
    else $("#status").textContent = "not connected";
  };
}

function send(message) {
  if (!state.socket || state.socket.readyState !== WebSocket.OPEN) { showError("not connected to the game"); return; }
  showError("");
  state.socket.send(JSON.stringify(message));
}

function playMove(move) {
  if (!state.frame || state.frame.status !== "your_turn") { showError("wait for your turn"); return; }
  send({ type: "move", move });
}

// -- drawing a frame ----------------------------------------------------------------------------------

const STATUS_TEXT = { your_turn: "Your turn", agents: "Opponents are playing\u2026", hand_over: "Hand over",
                      over: "Game over", failed: "Game ended early", replay: "Replay" };

function drawFrame(frame, view = null) {
  state.frame = frame;
  document.body.dataset.frames = String(Number(document.body.dataset.frames || 0) + 1);  // for scripted players
  const replaying = frame.status === "replay";
  const seat = replaying ? view : frame.seat;
  const status = $("#status");
  status.className = frame.status;
  status.textContent = frame.status === "agents" && frame.current !== null
    ? `P${frame.current} (${frame.players[frame.current].name}) to move` : STATUS_TEXT[frame.status];
  if (replaying) status.textContent += ` \u2013 hand ${frame.hand_number}, move ${frame.move_number}/${frame.moves_in_hand}`;
  const cfg = frame.config;
  $("#info").textContent = `${cfg.variant}, ${cfg.num_players} players \u00b7 hand ${frame.hand_number} \u00b7 ` +
    `dealer P${frame.dealer} \u00b7 stock ${frame.stock}`;
  drawPlayers(frame, seat, replaying);
  drawCenter(frame);
  drawHand(frame, seat, replaying);
  drawLog(frame);
  drawHandEnd(frame);
  $("#next").hidden = frame.status !== "hand_over";
  $("#again").hidden = !(FINISHED.has(frame.status) || frame.status === "hand_over");
  $("#again").textContent = "New game";
}

function drawPlayers(frame, seat, replaying) {
  const winners = new Set((frame.hand_result || {}).winners || []);
  const nodes = frame.players.map((p) => {
    const you = !replaying && p.seat === frame.seat;
    const box = el("div", { class: "player", "data-seat": String(p.seat) });
    if (p.to_move) box.classList.add("to-move");
    if (you) box.classList.add("you");
    if (winners.has(p.seat)) box.classList.add("winner");
    const name = el("div", { class: "name", text: `P${p.seat} ${you ? "(you)" : p.name}` });
    if (p.dealer) name.append(el("span", { class: "badge", text: "dealer" }));
    if (winners.has(p.seat)) name.append(el("span", { class: "badge", text: "won the hand" }));
    box.append(name);
    const score = frame.scores ? frame.scores[p.seat] : 0;
    box.append(el("div", { class: "meta", "data-role": "size",
                           text: `${p.size} card${p.size === 1 ? "" : "s"} \u00b7 score ${score}` }));
    if (!you) {
      const visible = p.cards && (!replaying || seat === null || seat === p.seat || frame.hand_result);
      const cards = el("div", { class: "cards" });
      if (visible) for (const c of p.cards) cards.append(cardNode(c, { size: "small" }));
      else for (let i = 0; i < Math.min(p.size, 20); i++) cards.append(cardNode(null, { size: "small" }));
      box.append(cards);
    }
    return box;
  });
  $("#players").replaceChildren(...nodes);
}

function drawCenter(frame) {
  const area = $("#pile-area");
  if (frame.config.variant === "classic") {
    const trick = el("div", { class: "trick", "data-role": "trick" });
    frame.trick.forEach((t, s) => {
      const slot = el("div", { class: "slot" });
      if (s === frame.leader) slot.classList.add("led");
      if (t === "pass") slot.append(el("div", { class: "card mini empty", text: "pass" }));
      else if (t) slot.append(cardNode(t, { size: "mini" }));
      else slot.append(el("div", { class: "card mini empty" }));
      slot.append(el("span", { text: `P${s}${s === frame.leader ? " led" : ""}` }));
      trick.append(slot);
    });
    area.replaceChildren(el("div", { class: "slot" }, el("strong", { text: "Trick" })), trick);
  } else {
    const pile = el("div", { class: "slot", "data-role": "pile" },
      frame.top ? cardNode(frame.top) : el("div", { class: "card empty" }), el("span", { text: "discard pile" }));
    const nodes = [pile];
    if (frame.match_card && frame.top && frame.match_card.code !== frame.top.code) {
      nodes.push(el("div", { class: "slot", "data-role": "match-card" }, cardNode(frame.match_card, { size: "mini" }),
        el("span", { text: "card to match" })));
    }
    area.replaceChildren(...nodes);
  }
  $("#stock-area").replaceChildren(el("div", { class: "slot", "data-role": "stock" },
    frame.stock ? cardNode(null) : el("div", { class: "card empty" }), el("span", { text: `stock ${frame.stock}` })));
}

function drawHand(frame, seat, replaying) {
  const hand = $("#hand");
  const yourTurn = frame.status === "your_turn";
  let cards = frame.your_hand;
  if (replaying) cards = seat === null ? [] : frame.players[seat].cards || [];
  hand.replaceChildren(...cards.map((c, i) => {
    if (replaying) return cardNode(c);  // watched, not played
    const node = cardNode(c, { tag: "button", number: i + 1 });
    node.type = "button";
    node.disabled = !(yourTurn && c.legal);
    if (!node.disabled) { node.classList.add("legal"); node.onclick = () => playMove(c.code); }
    return node;
  }));
  hand.hidden = replaying && seat === null;
  $("#controls").hidden = replaying;
  $("#draw").disabled = !(yourTurn && frame.can_draw);
  $("#draw").textContent = frame.config.variant === "classic" ? "Draw (until a match)" : "Draw / Pass";
}

function drawLog(frame) {
  const log = $("#log");
  const replaying = frame.status === "replay";
  const events = replaying ? frame.step_events : frame.events;
  if (state.logHand !== frame.hand_number) {
    state.logHand = frame.hand_number;
    state.logCount = 0;
    log.append(el("li", { class: "head", text: `Hand ${frame.hand_number} \u2013 dealer P${frame.dealer}` }));
  }
  const fresh = replaying ? events : events.slice(state.logCount);
  state.logCount = replaying ? 0 : events.length;
  for (const e of fresh) log.append(el("li", { class: `ev-${e.kind}`, "data-kind": e.kind, text: e.text }));
  log.scrollTop = log.scrollHeight;
  mark(fresh);
}

function mark(events) {
  const order = ["out", "blocked", "boom", "trick", "draw"];
  const main = order.map((k) => events.find((e) => e.kind === k)).find(Boolean);
  const banner = $("#banner");
  banner.className = "";
  if (!main) { banner.textContent = ""; return; }
  banner.textContent = main.kind === "boom" ? "BOOM!" : main.text;
  void banner.offsetWidth;  // restart the animation
  banner.className = `show ${main.kind}`;
}

function drawHandEnd(frame) {
  const box = $("#hand-end");
  const result = frame.hand_result;
  if (!result) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  const who = result.blocked ? "The round is blocked" : `P${result.winner} went out`;
  const hands = el("div", { class: "hands" });
  for (const p of frame.players) {
    const row = el("div", { class: "row", "data-seat": String(p.seat) },
      el("strong", { text: `P${p.seat} ${p.name}` }), el("span", { text: `${result.points[p.seat]} points` }));
    for (const c of p.cards || []) row.append(cardNode(c, { size: "mini" }));
    hands.append(row);
  }
  const n = frame.players.length;
  const head = el("tr", {}, el("th", { text: "" }), ...frame.players.map((p) => el("th", { text: `P${p.seat}` })));
  const table = el("table", { "data-role": "scores" }, head);
  (frame.results || []).forEach((r, i) => table.append(el("tr", {}, el("th", { text: `hand ${i + 1}` }),
    ...r.deltas.map((d) => el("td", { text: `+${d}` })))));
  if (!(frame.results || []).length && frame.status !== "replay") {
    table.append(el("tr", {}, el("th", { text: "this hand" }), ...frame.scores.map((d) => el("td", { text: `+${d}` }))));
  }
  table.append(el("tr", { class: "total" }, el("th", { text: "total" }),
    ...Array.from({ length: n }, (_, s) => el("td", { "data-seat": String(s), text: String(frame.scores[s]) }))));
  const nodes = [el("h3", { text: `${who}. Winner${result.winners.length > 1 ? "s" : ""}: ` +
    result.winners.map((w) => `P${w}`).join(", ") }), hands, table];
  if (frame.winners && frame.status !== "replay") {
    const you = frame.winners.includes(frame.seat);
    nodes.push(el("h3", { "data-role": "verdict", text: `${frame.episode === "match" ? "Match" : "Game"} over: ` +
      `${frame.winners.map((w) => `P${w}`).join(", ")} win${frame.winners.length > 1 ? "" : "s"}. ` +
      (you ? "You win!" : "You lose.") }));
  }
  box.replaceChildren(...nodes);
}

// -- keyboard -------------------------------------------------------------------------------------------

function typedMove(text) {
  let word = text.trim().toLowerCase();
  if (!word) return null;
  if (["d", "draw", "p", "pass"].includes(word)) return "draw";
  if (/^\d+$/.test(word)) {  // a card's number in your hand
    const card = state.frame && state.frame.your_hand[Number(word) - 1];
    if (!card) showError(`you have no card number ${word}`);
    return card ? card.code : null;
  }
  for (const [symbol, letter] of Object.entries(SYMBOLS)) word = word.replace(symbol, letter);
  return word.toUpperCase();
}

function onKey(event) {
  if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (state.replay) { replayKey(event); return; }
  if (!state.frame || $("#table").hidden) return;
  const key = event.key.toLowerCase();
  if (/^[0-9]$/.test(key) && state.frame.status === "your_turn") {
    const card = state.frame.your_hand[(key === "0" ? 10 : Number(key)) - 1];
    if (card) playMove(card.code);
  } else if (key === "d" && state.frame.status === "your_turn") {
    playMove("draw");
  } else if ((key === "n" || key === "enter") && state.frame.status === "hand_over") {
    send({ type: "next" });
  } else if (key === "/") {
    event.preventDefault();
    $("#move-input").focus();
  } else {
    return;
  }
  event.preventDefault();
}

// -- replay ---------------------------------------------------------------------------------------------

// A replay arrives in pages of at most page_size frames (a long match has many): the page that holds a step is
// fetched when it is first needed, the next one while the current one is shown, and only those near the step kept.

async function loadReplay(text, game = 0, source = null) {
  showError("");
  try {
    const data = await fetchReplay(text, game, source, 0);
    if (state.socket) { state.socket.close(); state.socket = null; }
    state.replay = { games: data.games, game, total: data.total, pageSize: data.page_size,
                     handStarts: data.hand_starts, pages: new Map([[0, Promise.resolve(data.frames)]]),
                     index: -1, wanted: 0, timer: null, source, text };  // -1: nothing drawn yet
    const pick = $("#game-pick");
    pick.replaceChildren(...data.games.map((g, i) => el("option", { value: String(i), selected: i === game,
      text: `game ${i + 1}: ${g.config.variant} ${g.config.num_players}p, ${g.hands} hand(s), ` +
            `winner(s) ${g.winners.map((w) => "P" + w).join(",")} (${g.seats.join(", ")})` })));
    $("#game-pick-label").hidden = data.games.length < 2;
    $("#rp-hand").replaceChildren(...data.hand_starts.map((_, i) => el("option", { value: String(i + 1),
                                                                                  text: `hand ${i + 1}` })));
    const players = data.frames[0].players;
    $("#rp-view").replaceChildren(el("option", { value: "", text: "all hands face up" }),
      ...players.map((p) => el("option", { value: String(p.seat), text: `as P${p.seat} (${p.name})` })));
    $("#log").replaceChildren();
    state.logHand = null;
    $("#replay-controls").hidden = false;
    show("#table");
    if (data.games.length > 1) $("#replay").hidden = false;
    await replayGo(0);
  } catch (err) {
    showError(err.message);
  }
}

function fetchReplay(text, game, source, start) {
  const query = `game=${game}&start=${start}`;
  return source ? api("GET", `/api/records/${encodeURIComponent(source)}?${query}`)
    : api("POST", `/api/replay?${query}`, text);
}

function replayFrame(index) {
  // The frame of step `index` (a promise): from the page that holds it, fetched if it is not here yet.
  const rp = state.replay;
  const start = index - (index % rp.pageSize);
  if (!rp.pages.has(start)) {
    const page = fetchReplay(rp.text, rp.game, rp.source, start).then((data) => data.frames);
    page.catch(() => rp.pages.delete(start));  // asked again next time
    rp.pages.set(start, page);
  }
  return rp.pages.get(start).then((frames) => frames[index - start]);
}

function replayKeep(index) {
  // Keep the pages next to step `index`, drop the others, and start fetching the next page.
  const rp = state.replay;
  const start = index - (index % rp.pageSize);
  for (const key of rp.pages.keys()) if (Math.abs(key - start) > rp.pageSize) rp.pages.delete(key);
  if (start + rp.pageSize < rp.total) replayFrame(start + rp.pageSize).catch(() => {});
}

function replayView() {
  const value = $("#rp-view").value;
  return value === "" ? null : Number(value);
}

async function replayGo(index) {
  const rp = state.replay;
  if (!rp) return;
  index = Math.max(0, Math.min(index, rp.total - 1));
  rp.wanted = index;
  try {
    const frame = await replayFrame(index);
    const jump = index !== rp.index + 1;  // then the log is that of the step's hand up to the step
    const first = jump ? rp.handStarts[frame.hand_number - 1] : index;
    const before = await Promise.all(Array.from({ length: index - first }, (_, i) => replayFrame(first + i)));
    if (state.replay !== rp || rp.wanted !== index) return;  // another step was asked for meanwhile
    if (jump) {
      $("#log").replaceChildren();
      state.logHand = null;
      for (const earlier of before) drawLog(earlier);
    }
    rp.index = index;
    drawFrame(frame, replayView());
    $("#rp-hand").value = String(frame.hand_number);
    $("#rp-pos").textContent = `step ${index + 1} / ${rp.total}`;
    if (index === rp.total - 1) replayPause();
    replayKeep(index);
  } catch (err) {
    replayPause();
    showError(err.message);
  }
}

function replayPlay() {
  const rp = state.replay;
  if (!rp) return;
  if (rp.timer) { replayPause(); return; }
  if (rp.index >= rp.total - 1) replayGo(0);
  $("#rp-play").textContent = "Pause";
  const tick = () => {
    replayGo(rp.index + 1);
    if (rp.timer) rp.timer = setTimeout(tick, Number($("#rp-speed").value));
  };
  rp.timer = setTimeout(tick, Number($("#rp-speed").value));
}

function replayPause() {
  const rp = state.replay;
  if (rp && rp.timer) { clearTimeout(rp.timer); rp.timer = null; }
  $("#rp-play").textContent = "Play";
}

function replayKey(event) {
  const actions = { ArrowRight: () => replayGo(state.replay.index + 1), ArrowLeft: () => replayGo(state.replay.index - 1),
                    " ": replayPlay, Home: () => replayGo(0), End: () => replayGo(state.replay.total - 1) };
  if (actions[event.key]) { event.preventDefault(); actions[event.key](); }
}

async function refreshSaved() {
  try {
    const data = await api("GET", "/api/records");
    $("#saved").replaceChildren(...data.records.map((name) => el("option", { value: name, text: name })));
    $("#load-saved").disabled = !data.records.length;
  } catch (err) {
    showError(err.message);
  }
}

// -- start ------------------------------------------------------------------------------------------------

function wire() {
  $("#new-form").addEventListener("submit", startGame);
  $("#new-form").addEventListener("input", refreshSeats);
  $("#show-new").onclick = () => { replayPause(); state.replay = null; show("#new-game"); };
  $("#again").onclick = () => { state.replay = null; show("#new-game"); };
  $("#show-replay").onclick = () => { replayPause(); show("#replay"); refreshSaved(); };
  $("#draw").onclick = () => playMove("draw");
  $("#next").onclick = () => send({ type: "next" });
  $("#move-input").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    const move = typedMove(event.target.value);
    event.target.value = "";
    if (move) playMove(move);
  });
  $("#record-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) loadReplay(await file.text(), 0);
  });
  $("#load-saved").onclick = () => { if ($("#saved").value) loadReplay(null, 0, $("#saved").value); };
  $("#game-pick").onchange = (event) => {
    const rp = state.replay;
    if (rp) loadReplay(rp.text, Number(event.target.value), rp.source);
  };
  $("#rp-start").onclick = () => replayGo(0);
  $("#rp-back").onclick = () => replayGo(state.replay.index - 1);
  $("#rp-step").onclick = () => replayGo(state.replay.index + 1);
  $("#rp-end").onclick = () => replayGo(state.replay.total - 1);
  $("#rp-play").onclick = replayPlay;
  $("#rp-view").onchange = async () => drawFrame(await replayFrame(state.replay.index), replayView());
  $("#rp-hand").onchange = (event) => replayGo(state.replay.handStarts[Number(event.target.value) - 1]);
  document.addEventListener("keydown", onKey);
  window.addEventListener("pagehide", () => leaveGame({ onlyFinished: true }));
}

async function init() {
  wire();
  try {
    state.options = await api("GET", "/api/options");
  } catch (err) {
    showError(`cannot reach the server: ${err.message}`);
    return;
  }
  const presets = $("#preset");
  for (const name of Object.keys(state.options.presets)) presets.append(el("option", { value: name, text: name }));
  presets.value = "classic";
  refreshSeats();
  const match = /#game=([\w-]+)/.exec(location.hash);
  const token = match && sessionStorage.getItem(`goboom-token-${match[1]}`);
  if (token) openGame(match[1], token);
  else show("#new-game");
}

init();
