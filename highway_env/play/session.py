"""Game sessions: one game per id, played by a human against an agent. Pure Python (no HTTP), so
the rules of the web app are testable without a browser or a server.

The opponent moves in a background thread, so a request never waits for a slow agent; the page
polls :meth:`Session.state`, or waits on it with ``wait``. Undo and new game bump ``generation``,
so a reply that an agent is still computing for an abandoned position is dropped when it arrives.
"""

from __future__ import annotations

import secrets
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

from highway_env.core import CELLS, NUMBERS, PLAYER_NAMES, Board, cell_rc, decode_action, encode_action
from highway_env.play.limits import LimitError, ServerLimits
from highway_env.play.opponents import ISOLATED_KINDS, OpponentSpecError, build_opponent, is_engine
from highway_env.play.view import board_view

DEFAULT_OPPONENT = "greedy"


class PlayError(Exception):
    """A request the game cannot take; ``status`` is its HTTP status (the game is left unchanged)."""

    status = 400

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status


class BadRequest(PlayError):
    status = 400


class NotFound(PlayError):
    status = 404


class Conflict(PlayError):
    """Well formed, but not possible in the current position (occupied cell, not your turn...)."""

    status = 409


class TooBusy(PlayError):
    """Every engine process the server allows is busy thinking: try again when one is free."""

    status = 429


@dataclass(frozen=True)
class Move:
    action: int
    player: str  # "A" or "B"
    by: str  # "human" or "opponent"

    def to_json(self, ply: int) -> dict:
        number, cell = decode_action(self.action)
        r, c = cell_rc(cell)
        return {"ply": ply, "player": self.player, "by": self.by, "action": self.action,
                "number": number, "cell": cell, "row": r, "col": c}


def parse_side(side) -> int:
    if side not in ("A", "a", "B", "b"):
        raise BadRequest(f"side must be 'A' or 'B', got {side!r}")
    return PLAYER_NAMES.index(side.upper())


def parse_seed(seed) -> int | None:
    if seed is None or seed == "":
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise BadRequest(f"seed must be a non-negative integer, got {seed!r}")
    return seed


def _int_field(body: dict, name: str, lo: int, hi: int) -> int:
    v = body.get(name)
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadRequest(f"{name} must be an integer in {lo}..{hi}, got {v!r}")
    if not lo <= v <= hi:
        raise BadRequest(f"{name} {v} is out of range {lo}..{hi}")
    return v


def parse_action(body) -> int:
    """The action of a move request: ``{"action": 0..255}`` or ``{"number": 1..16, "cell": 0..15}``."""
    if not isinstance(body, dict):
        raise BadRequest(f"a move is a JSON object with 'number' and 'cell' (or 'action'), got {body!r}")
    if "action" in body:
        return _int_field(body, "action", 0, NUMBERS * CELLS - 1)
    if "number" not in body or "cell" not in body:
        raise BadRequest(f"a move needs 'number' (1..16) and 'cell' (0..15), got keys {sorted(body)}")
    return encode_action(_int_field(body, "number", 1, NUMBERS), _int_field(body, "cell", 0, CELLS - 1))


class Session:
    """One game: the human plays ``human`` ("A" or "B"), ``agent`` the other side."""

    def __init__(self, game_id: str, human: int, opponent: str, agent, seed: int | None):
        self.id = game_id
        self.lock = threading.Condition()  # guards the game; notified whenever it changes
        self._agent_lock = threading.Lock()  # an agent is not thread-safe: one act() at a time
        self.human = human
        self.opponent = opponent
        self.agent = agent
        self.seed = seed
        self.board = Board()
        self.history: list[Move] = []
        self.thinking = False
        self.opponent_error: str | None = None
        self.opponent_seconds: float | None = None
        self.generation = 0
        self.last_used = time.monotonic()
        self.closed = False  # deleted, dropped or the server stopping: no agent may be installed after it
        with self.lock:
            self._start_opponent_if_due()

    # -- what the page sees
    def state(self) -> dict:
        with self.lock:
            self.last_used = time.monotonic()
            board = self.board
            view = board_view(board)
            over = board.is_terminal()
            your_turn = not over and not self.thinking and board.to_move == self.human
            view.update({
                "id": self.id,
                "human": PLAYER_NAMES[self.human],
                "opponent": self.opponent,
                "seed": self.seed,
                "over": over,
                "thinking": self.thinking,
                "your_turn": your_turn,
                "can_undo": any(m.by == "human" for m in self.history),
                "history": [m.to_json(i + 1) for i, m in enumerate(self.history)],
                "opponent_error": self.opponent_error,
                "opponent_seconds": self.opponent_seconds,
                "generation": self.generation,
            })
            return view

    def wait(self, timeout: float) -> dict:
        """The state once the opponent has stopped thinking, or after ``timeout`` seconds."""
        end = time.monotonic() + timeout
        with self.lock:
            while self.thinking and (left := end - time.monotonic()) > 0:
                self.lock.wait(left)
            return self.state()

    # -- the human's requests
    def play(self, action: int) -> dict:
        number, cell = decode_action(action)
        with self.lock:
            board = self.board
            if board.is_terminal():
                raise Conflict(f"the game is over ({board_view(board)['result']['text']}): "
                               "start a new game or undo")
            if self.thinking or board.to_move != self.human:
                raise Conflict(f"not your turn: {PLAYER_NAMES[board.to_move]} (the opponent, "
                               f"{self.opponent}) is to move")
            if board.cells[cell] != 0:
                r, c = cell_rc(cell)
                raise Conflict(f"cell {cell} (row {r + 1}, column {c + 1}) already holds {board.cells[cell]}")
            if number in board.cells:
                raise Conflict(f"number {number} is already on the board (cell {board.cells.index(number)})")
            self._apply(action, "human")
            self._start_opponent_if_due()
            return self.state()

    def undo(self) -> dict:
        """Take back the human's last move and every opponent move after it (its reply, or the
        reply it is still thinking about)."""
        with self.lock:
            human_plies = [i for i, m in enumerate(self.history) if m.by == "human"]
            if not human_plies:
                raise Conflict("nothing to undo: you have not moved yet")
            del self.history[human_plies[-1]:]
            self.board = Board()
            for m in self.history:
                self.board = self.board.apply(m.action)
            self._abandon_opponent_move()
            return self.state()

    def restart(self, human: int | None = None, opponent: str | None = None, agent=None,
                seed: int | None = None) -> dict:
        """A new game in this session; the opponent (``agent`` built for ``opponent``) is kept
        unless a new one is given. NotFound once the session is closed (``agent`` is closed then)."""
        with self.lock:
            if self.closed:  # ended while ``agent`` started (a DELETE, an eviction): no one else closes it
                state, old_agent = None, agent
            else:
                old_agent = None
                if human is not None:
                    self.human = human
                if agent is not None:
                    old_agent = self.agent
                    self.agent, self.opponent, self.seed = agent, opponent, seed
                self.board = Board()
                self.history = []
                self._abandon_opponent_move()
                self._start_opponent_if_due()
                state = self.state()
        _close_agent(old_agent)  # a reply it may still be computing is dropped anyway
        if state is None:
            raise NotFound(f"unknown game id {self.id!r} (it was ended)")
        return state

    def close(self) -> None:
        """End the session: drop a pending reply and stop the agent (its process, if any)."""
        with self.lock:
            self.closed = True
            self._abandon_opponent_move()
            agent = self.agent
        _close_agent(agent)

    # -- internals (called with self.lock held)
    def _apply(self, action: int, by: str) -> None:
        self.history.append(Move(action, PLAYER_NAMES[self.board.to_move], by))
        self.board = self.board.apply(action)
        self.last_used = time.monotonic()
        self.lock.notify_all()

    def _abandon_opponent_move(self) -> None:
        self.generation += 1
        self.thinking = False
        self.opponent_error = None
        self.last_used = time.monotonic()
        self.lock.notify_all()

    def _start_opponent_if_due(self) -> None:
        board = self.board
        if board.is_terminal() or board.to_move == self.human or self.thinking:
            return
        self.thinking = True
        self.opponent_error = None
        thread = threading.Thread(target=self._opponent_turn, args=(self.generation, board, self.agent),
                                  name=f"opponent-{self.id}", daemon=True)
        thread.start()

    def _opponent_turn(self, generation: int, board: Board, agent) -> None:
        start = time.monotonic()
        action, error = None, None
        with self._agent_lock:
            if generation != self.generation:
                return  # undone or restarted while waiting for the agent
            try:
                action = int(agent.act(board))
            except Exception as e:  # an agent bug must not kill the session: report it
                error = f"the opponent {self.opponent} failed: {type(e).__name__}: {e}"
        with self.lock:
            if generation != self.generation or self.board != board:
                return
            self.thinking = False
            self.opponent_seconds = round(time.monotonic() - start, 3)
            if error is None and not board.is_legal(action):
                error = f"the opponent {self.opponent} chose an illegal move (action {action})"
            if error is not None:
                self.opponent_error = error
                self.lock.notify_all()
                return
            self._apply(action, "opponent")


def _close_agent(agent) -> None:
    close = getattr(agent, "close", None)
    if close is not None:
        close()


class SessionManager:
    """Sessions by id. Old idle sessions are dropped beyond ``max_sessions``; opponents that run in
    a process of their own (each up to ~340 MB) are capped by ``limits.max_engines``, and the
    search sizes a spec may ask for by ``limits`` too. A game that is replaced, deleted or dropped
    stops its engine's search (the process ends)."""

    def __init__(self, hints=None, max_sessions: int = 32, build=build_opponent,
                 limits: ServerLimits | None = None):
        self.hints = hints
        self.max_sessions = max_sessions
        self.limits = limits if limits is not None else ServerLimits()
        self._build = build
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._engines_starting = 0
        self._closed = False  # the server is stopping: no new game

    def _agent(self, opponent, seed):
        try:
            self.limits.check(opponent)
            return self._build(opponent, seed)
        except (OpponentSpecError, LimitError) as e:
            raise BadRequest(str(e)) from e

    @contextmanager
    def _engine_slot(self, opponent, replacing: Session | None = None):
        """Hold a place for ``opponent``'s process while it starts (none needed for in-server
        agents). When all places are taken, the least recently used idle engine games are
        dropped; when every engine is thinking, :class:`TooBusy`."""
        if not is_engine(opponent):
            yield
            return
        with self._lock:
            engines = [s for s in self._sessions.values() if s is not replacing and is_engine(s.opponent)]
            excess = len(engines) + self._engines_starting + 1 - self.limits.max_engines
            idle = sorted((s for s in engines if not s.thinking), key=lambda s: s.last_used)
            if excess > len(idle):
                raise TooBusy(f"all {self.limits.max_engines} engine processes this server allows are busy "
                              f"({', '.join(ISOLATED_KINDS)} opponents): try again when a game has finished thinking, "
                              "or start the server with a larger --max-engines")
            self._drop(idle[:max(0, excess)])
            self._engines_starting += 1
        try:
            yield
        finally:
            with self._lock:
                self._engines_starting -= 1

    def create(self, side="A", opponent=DEFAULT_OPPONENT, seed=None) -> Session:
        if self._closed:  # no engine process started for nothing
            raise PlayError("the server is stopping", 503)
        human = parse_side(side)
        seed = parse_seed(seed)
        if seed is None:
            seed = secrets.randbelow(2**31)
        with self._engine_slot(opponent):
            agent = self._agent(opponent, seed)  # may take seconds (a process): outside any lock
            session = Session(secrets.token_urlsafe(9), human, opponent.strip(), agent, seed)
            with self._lock:
                stopping = self._closed
                if not stopping:
                    self._sessions[session.id] = session
                    self._evict()
        if stopping:  # close() ran while the opponent started: nothing else would ever stop it
            session.close()
            raise PlayError("the server is stopping", 503)
        return session

    def delete(self, game_id) -> dict:
        """End a game: its opponent's search stops and its process ends."""
        with self._lock:
            session = self._sessions.pop(game_id, None)
        if session is None:
            raise NotFound(f"unknown game id {game_id!r}")
        session.close()
        return {"id": game_id, "deleted": True}

    def get(self, game_id) -> Session:
        with self._lock:
            session = self._sessions.get(game_id)
        if session is None:
            raise NotFound(f"unknown game id {game_id!r}")
        return session

    def restart(self, game_id, side=None, opponent=None, seed=None) -> dict:
        session = self.get(game_id)
        human = None if side is None else parse_side(side)
        seed = parse_seed(seed)
        if opponent is not None and not isinstance(opponent, str):
            raise BadRequest(f"opponent must be an agent spec string, got {opponent!r}")
        # a new opponent, a new seed, or an engine still searching the old game: a new agent
        # (the old one is closed, which stops its search)
        if ((opponent is not None and opponent.strip() != session.opponent) or seed is not None
                or (session.thinking and is_engine(session.opponent))):
            opponent = session.opponent if opponent is None else opponent
            seed = secrets.randbelow(2**31) if seed is None else seed
            with self._engine_slot(opponent, replacing=session):
                agent = self._agent(opponent, seed)
                return session.restart(human, opponent.strip(), agent, seed)
        return session.restart(human)

    def hint(self, game_id, first: int | None = None) -> dict:
        """The hint for the game's position (computed outside the game's lock: moves go on)."""
        session = self.get(game_id)
        with session.lock:
            board = session.board
        if self.hints is None:
            raise Conflict("hints are switched off on this server")
        return self.hints.hint(board, first=first)

    def __len__(self) -> int:
        return len(self._sessions)

    def close(self) -> None:
        """Close every session (the server is stopping)."""
        with self._lock:
            sessions, self._sessions, self._closed = list(self._sessions.values()), {}, True
        for s in sessions:
            s.close()

    def _evict(self) -> None:
        """Drop the least recently used idle sessions beyond ``max_sessions`` (lock held)."""
        idle = sorted((s for s in self._sessions.values() if not s.thinking), key=lambda s: s.last_used)
        self._drop(idle[:max(0, len(self._sessions) - self.max_sessions)])

    def _drop(self, dropped) -> None:
        """Forget these sessions and stop their agents (lock held)."""
        for s in dropped:
            del self._sessions[s.id]
        for s in dropped:
            threading.Thread(target=s.close, daemon=True).start()  # stopping a process takes a moment
