// Highway in the browser: renders the server's game state and sends the human's clicks.
// Everything the rules decide (legality, paths, result, hints) comes from the server.
"use strict";

const CELL = 84, GAP = 8, PAD = 10;            // board geometry, as in style.css
const VERDICT = { "1": "A wins", "0": "draw", "-1": "B wins" };

const ui = {
  body: document.body,
  status: document.getElementById("status"),
  board: document.getElementById("board"),
  paths: document.getElementById("paths"),
  palette: document.getElementById("palette"),
  error: document.getElementById("error"),
  undo: document.getElementById("undo"),
  hintToggle: document.getElementById("hint-toggle"),
  hintCard: document.getElementById("hint-card"),
  hintVerdict: document.getElementById("hint-verdict"),
  hintMessage: document.getElementById("hint-message"),
  result: document.getElementById("result"),
  pathA: document.getElementById("path-a"),
  pathB: document.getElementById("path-b"),
  bounds: document.getElementById("bounds"),
  setup: document.getElementById("setup"),
  opponent: document.getElementById("opponent"),
  opponentArg: document.getElementById("opponent-arg"),
  seed: document.getElementById("seed"),
  history: document.getElementById("history"),
};

let game = null;          // the last state from the server
let selected = null;      // the number picked in the palette
let hint = null;          // the last hint that matches the board
let busy = false;         // a request of ours is in flight
let pollToken = 0;        // bumped to stop an older polling loop
let hintToken = 0;
let thinkingSince = null;
let creating = false;     // a new game is being set up (an opponent process may take seconds)

// ------------------------------------------------------------------ server

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch (e) { /* not JSON: handled below */ }
  if (!response.ok) {
    const error = new Error((data && data.error) || `HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

async function request(method, path, body) {
  // One user action at a time; errors go to the banner and leave the game as it was.
  busy = true;
  updateBodyState();
  try {
    const state = await api(method, path, body);
    clearError();
    accept(state);
    return state;
  } catch (e) {
    showError(e.message);
    return null;
  } finally {
    busy = false;
    updateBodyState();
  }
}

function accept(state) {
  const changed = !game || game.id !== state.id || game.cells.join() !== state.cells.join();
  game = state;
  if (location.hash !== `#game=${state.id}`) history.replaceState(null, "", `#game=${state.id}`);
  if (changed) hint = null;
  if (selected !== null && state.used.includes(selected)) selected = null;
  render();
  if (state.thinking) pollWhileThinking();
  else if (changed || !hint) requestHint();
}

async function pollWhileThinking() {
  const token = ++pollToken;
  thinkingSince = thinkingSince || Date.now();
  while (token === pollToken && game && game.thinking) {
    try {
      const state = await api("GET", `/api/games/${game.id}?wait=20`);
      if (token !== pollToken) return;
      accept(state);
      return;  // accept() starts a new loop if the opponent is still thinking
    } catch (e) {
      if (token !== pollToken) return;
      showError(`lost contact with the server (${e.message}); retrying`);
      await sleep(1000);
    }
  }
}

async function requestHint() {
  const token = ++hintToken;  // an older hint loop stops at its next step
  if (!ui.hintToggle.checked || !game || game.over || !game.your_turn) {
    ui.body.dataset.hint = ui.hintToggle.checked ? "waiting" : "off";
    renderHint();
    return;
  }
  const cells = game.cells.join();
  ui.body.dataset.hint = "loading";
  renderHint();
  for (let round = 0; round < 30; round++) {
    let h;
    try {
      const first = selected === null ? "" : `?number=${selected}`;  // its moves are solved first
      h = await api("GET", `/api/games/${game.id}/hint${first}`);
    } catch (e) {
      if (token === hintToken) { ui.hintMessage.textContent = `hint failed: ${e.message}`; ui.body.dataset.hint = "error"; }
      return;
    }
    if (token !== hintToken || !game || game.cells.join() !== cells) return;  // the board moved on
    if (h.cells.join() !== cells) return;
    hint = h;
    ui.body.dataset.hint = h.status;
    render();
    if (h.status !== "partial" && h.status !== "busy") return;
    await sleep(h.status === "busy" ? 500 : 50);  // the server goes on where it stopped
  }
}

// ------------------------------------------------------------------ user actions

function onCellClick(cell) {
  if (!game) return;
  if (game.over) return showError("The game is over: start a new game, or undo.");
  if (game.thinking || !game.your_turn) return showError("Wait: it is the opponent's turn.");
  if (selected === null) return showError("Pick a number first (below the board), then a cell.");
  const number = selected;
  request("POST", `/api/games/${game.id}/move`, { number, cell });
}

function onNumberClick(number) {
  if (!game) return;
  if (game.used.includes(number)) return showError(`Number ${number} is already on the board.`);
  clearError();
  selected = selected === number ? null : number;
  render();
  if (hint && hint.status === "partial" && selected !== null) requestHint();  // this number first
}

function onUndo() {
  if (game) request("POST", `/api/games/${game.id}/undo`, {});
}

function opponentSpec() {
  const choice = ui.opponent.value;
  const arg = ui.opponentArg.value.trim();
  if (choice === "mcts") return `mcts:${arg || 200}`;
  if (choice === "az-file") return arg ? `az:${arg}` : null;
  if (choice === "custom") return arg;
  return choice;
}

function onNewGame(event) {
  event.preventDefault();
  const opponent = opponentSpec();
  if (!opponent) return showError("Enter the opponent: a checkpoint path or an agent spec.");
  const body = { side: document.querySelector("input[name=side]:checked").value, opponent };
  if (ui.seed.value !== "") body.seed = Number(ui.seed.value);
  selected = null;
  hint = null;
  pollToken++;
  creating = true;
  renderStatus();
  const done = () => { creating = false; renderStatus(); };
  if (game) request("POST", `/api/games/${game.id}/new`, body).finally(done);
  else request("POST", "/api/games", body).finally(done);
}

function onOpponentChange() {
  const choice = ui.opponent.value;
  const arg = ui.opponentArg;
  arg.hidden = !["mcts", "az-file", "custom"].includes(choice);
  arg.placeholder = { mcts: "simulations (200)", "az-file": "path/to/checkpoint.pt[:SIMS]",
                      custom: "agent spec, e.g. mcts:50" }[choice] || "";
  if (choice === "mcts" && !arg.value) arg.value = "200";
}

// ------------------------------------------------------------------ drawing

function centre(cell) {
  const r = Math.floor(cell / 4), c = cell % 4;
  return [PAD + c * (CELL + GAP) + CELL / 2, PAD + r * (CELL + GAP) + CELL / 2];
}

function buildBoard() {
  for (let cell = 0; cell < 16; cell++) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "cell empty";
    b.dataset.cell = cell;
    b.setAttribute("aria-label", `row ${Math.floor(cell / 4) + 1}, column ${cell % 4 + 1}`);
    b.addEventListener("click", () => onCellClick(cell));
    ui.board.appendChild(b);
  }
  for (let n = 1; n <= 16; n++) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "num-btn";
    b.dataset.number = n;
    b.textContent = n;
    b.addEventListener("click", () => onNumberClick(n));
    ui.palette.appendChild(b);
  }
}

function hintMove(number, cell) {
  if (!hint || !hint.moves) return undefined;
  return hint.moves.find((x) => x.number === number && x.cell === cell);
}

function render() {
  if (!game) return;
  const g = game;
  const full = g.result !== null;
  const aCells = new Set(full ? g.result.a_paths[0] : g.paths.A.cells);
  const bCells = new Set(full ? g.result.b_paths[0] : g.paths.B.cells);
  const last = g.history.length ? g.history[g.history.length - 1].cell : -1;
  const showHint = ui.hintToggle.checked && hint && hint.value !== null && selected !== null;

  ui.board.dataset.ply = g.ply;
  ui.board.classList.toggle("hinting", Boolean(showHint && g.your_turn));
  ui.board.querySelectorAll(".cell").forEach((el) => {
    const cell = Number(el.dataset.cell), v = g.cells[cell];
    el.className = "cell " + (v ? "filled" : "empty");
    el.classList.toggle("on-a", aCells.has(cell));
    el.classList.toggle("on-b", bCells.has(cell));
    el.classList.toggle("last", cell === last);
    el.dataset.number = v;
    el.title = "";
    el.innerHTML = "";
    if (v) {
      const span = document.createElement("span");
      span.className = "num";
      span.textContent = v;
      el.appendChild(span);
    } else if (g.your_turn && selected !== null) {
      el.classList.add("selectable");
      el.dataset.preview = selected;
      if (showHint) {
        const m = hintMove(selected, cell);
        if (m && m.keeps !== null) {
          const outcome = m.value === null ? "" : `${VERDICT[m.value]}, `;
          el.classList.add(m.keeps ? "hint-keep" : "hint-lose");
          el.title = `${selected} here: ${outcome}${m.keeps ? "keeps" : "gives away"} "${hint.verdict}"`;
          const badge = document.createElement("span");
          badge.className = "badge";
          badge.textContent = m.value === null ? (m.keeps ? "keeps" : "loses") : VERDICT[m.value];
          el.appendChild(badge);
        }
      }
    }
  });

  ui.palette.classList.toggle("inactive", !g.your_turn);
  ui.palette.querySelectorAll(".num-btn").forEach((el) => {
    const n = Number(el.dataset.number);
    const used = g.used.includes(n);
    el.className = "num-btn";
    el.classList.toggle("used", used);
    el.classList.toggle("selected", n === selected);
    el.setAttribute("aria-disabled", used ? "true" : "false");
    el.title = used ? `${n} is on the board` : "";
    if (!used && ui.hintToggle.checked && hint && hint.value !== null && g.your_turn) {
      const judged = hint.moves.filter((m) => m.number === n && m.keeps !== null);
      if (judged.some((m) => m.keeps)) el.classList.add("hint-keep");
      else if (judged.length && judged.length === 16 - g.ply) el.classList.add("hint-lose");
    }
  });

  drawPaths(aCells, bCells, full);
  renderStatus();
  renderPathsCard();
  renderHint();
  renderHistory();
  ui.undo.disabled = !g.can_undo;
  updateBodyState();
}

function drawPaths(aCells, bCells, full) {
  const line = (cells, cls, d) => {
    const pts = [...cells].map((c) => centre(c).map((x) => x + d).join(",")).join(" ");
    const [x0, y0] = centre([...cells][0]).map((x) => x + d);
    const [x1, y1] = centre([...cells][cells.size - 1]).map((x) => x + d);
    return `<polyline class="${cls}-path" points="${pts}"/>` +
      `<circle class="${cls}-end" cx="${x0}" cy="${y0}" r="6"/><circle class="${cls}-end" cx="${x1}" cy="${y1}" r="6"/>`;
  };
  ui.paths.classList.toggle("partial", !full);
  ui.paths.innerHTML = line(aCells, "a", -4) + line(bCells, "b", 4);
}

function renderStatus() {
  const g = game;
  const s = ui.status;
  s.className = "status";
  if (creating) {
    s.textContent = `Starting the opponent (${opponentSpec()})\u2026`;
    s.classList.add("thinking");
  } else if (!g) {
    return;
  } else if (g.opponent_error) {
    s.textContent = g.opponent_error;
    s.classList.add("failed");
  } else if (g.over) {
    const you = g.result.winner === null ? "" : g.result.winner === g.human ? " \u2014 you win!" : " \u2014 you lose.";
    s.textContent = g.result.text + you;
  } else if (g.thinking) {
    const secs = thinkingSince ? Math.round((Date.now() - thinkingSince) / 1000) : 0;
    s.textContent = `${g.to_move} (${g.opponent}) is thinking\u2026${secs >= 2 ? ` ${secs} s` : ""}`;
    s.classList.add("thinking");
  } else if (selected !== null) {
    s.textContent = `Your move (${g.human}): pick a cell for ${selected}`;
  } else {
    s.textContent = `Your move (${g.human}): pick a number, then a cell`;
  }
  if (!g) return;
  if (!g.thinking) thinkingSince = null;
  renderResult();
}

function renderResult() {
  const g = game;
  const r = ui.result;
  if (g.over) {
    const res = g.result;
    r.hidden = false;
    r.className = "card result " + (res.winner === "A" ? "win-a" : res.winner === "B" ? "win-b" : "draw");
    r.dataset.winner = res.winner || "draw";
    r.dataset.minA = res.min_a;
    r.dataset.minB = res.min_b;
    const you = res.winner === null ? "a draw" : res.winner === g.human ? "you win" : "you lose";
    r.innerHTML = "";
    r.append(res.text);
    const sub = document.createElement("span");
    sub.className = "sub";
    sub.textContent = `A's cheapest path ${res.min_a}, B's ${res.min_b}: ${you}`;
    r.appendChild(sub);
  } else {
    r.hidden = true;
  }
}

function renderPathsCard() {
  const g = game;
  const describe = (who, p) => {
    if (p.empty === 0) return `${who}'s cheapest path: ${p.placed}`;
    return `${who}'s cheapest path so far: ${p.placed} placed + ${p.empty} empty \u2192 ${p.lo}\u2013${p.hi}`;
  };
  for (const [el, who] of [[ui.pathA, "A"], [ui.pathB, "B"]]) {
    const p = g.paths[who];
    el.textContent = describe(who, p);
    el.dataset.placed = p.placed;
    el.dataset.lo = p.lo;
    el.dataset.hi = p.hi;
    el.dataset.cells = p.cells.join(",");
  }
  const b = g.bounds;
  ui.bounds.textContent = g.over
    ? `margin (B \u2212 A): ${g.result.margin > 0 ? "+" : ""}${g.result.margin}`
    : `Whatever is played: A's cheapest path will cost ${b.min_a[0]}\u2013${b.min_a[1]}, B's ${b.min_b[0]}\u2013${b.min_b[1]}.`;
}

function renderHint() {
  const on = ui.hintToggle.checked;
  ui.hintCard.hidden = !on;
  if (!on || !game) return;
  const v = ui.hintVerdict, m = ui.hintMessage;
  v.className = "verdict";
  if (game.over) {
    v.textContent = game.result.text;
    m.textContent = "";
  } else if (!game.your_turn) {
    v.textContent = "\u2026";
    m.textContent = "hints are computed on your turn";
  } else if (!hint) {
    v.textContent = "\u2026";
    m.textContent = "asking the solver\u2026";
  } else {
    if (hint.value !== null) {
      v.textContent = `With perfect play: ${hint.verdict}`;
      v.classList.add(hint.value > 0 ? "v-a" : hint.value < 0 ? "v-b" : "v-draw");
    } else {
      v.textContent = hint.status === "unavailable" ? "Not known yet" : "Solving\u2026";
    }
    m.textContent = hint.message || "";
  }
}

function renderHistory() {
  ui.history.innerHTML = "";
  for (const mv of game.history) {
    const li = document.createElement("li");
    li.className = (mv.by === "human" ? "you " : "") + (mv.player === "A" ? "pa" : "pb");
    li.textContent = `${mv.player} ${mv.number}@r${mv.row}c${mv.col}${mv.by === "human" ? " (you)" : ""}`;
    ui.history.appendChild(li);
  }
}

function updateBodyState() {
  // For people: nothing. For the browser tests: what the page is waiting for.
  let state = "idle";
  if (!game) state = "loading";
  else if (busy) state = "busy";
  else if (game.thinking) state = "thinking";
  else if (game.over) state = "over";
  ui.body.dataset.state = state;
}

function showError(message) {
  ui.error.textContent = message;
  ui.error.hidden = false;
}

function clearError() {
  ui.error.hidden = true;
  ui.error.textContent = "";
}

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

// ------------------------------------------------------------------ start

async function loadOpponents() {
  let presets = [];
  try { presets = (await api("GET", "/api/opponents")).presets; } catch (e) { /* the fixed ones below */ }
  const options = presets.filter((p) => !p.spec.startsWith("mcts:"))
    .concat([{ spec: "mcts", label: "MCTS (random rollouts)\u2026" },
             { spec: "az-file", label: "AlphaZero, checkpoint file\u2026" },
             { spec: "custom", label: "Any agent spec\u2026" }]);
  for (const p of options) {
    const o = document.createElement("option");
    o.value = p.spec;
    o.textContent = p.label;
    ui.opponent.appendChild(o);
  }
  ui.opponent.value = "greedy";
  onOpponentChange();
}

async function start() {
  buildBoard();
  await loadOpponents();
  ui.setup.addEventListener("submit", onNewGame);
  ui.undo.addEventListener("click", onUndo);
  ui.opponent.addEventListener("change", onOpponentChange);
  ui.hintToggle.addEventListener("change", () => { hint = null; render(); requestHint(); });
  setInterval(() => { if (game && game.thinking) renderStatus(); }, 1000);

  const m = location.hash.match(/^#game=([A-Za-z0-9_-]+)$/);
  if (m) {
    try {
      accept(await api("GET", `/api/games/${m[1]}`));
      return;
    } catch (e) { /* an old id (server restarted): start a new game */ }
  }
  ui.setup.requestSubmit();
}

start();
