"""A perfect player: an :class:`agents.base.Agent` that never gives away the game value.

Every move it returns is *value-keeping*: the position after it has the same game value (win /
draw / loss, from A's side) as the position before, the best the mover can get. A tie-break picks
among the value-keeping moves:

- ``"random"``: uniformly at random (seeded, reproducible).
- ``"margin"``: a move reaching the best exact margin for the mover (max for A, min for B), random
  among equals. Cost: the exact margin M (MTD(f)) and one null window per child ("still M?").
- ``"hardest"``: a move that leaves the opponent the fewest value-keeping replies (random among
  equals); every grandchild is classified. When the mover wins, every reply of the lost opponent
  keeps the value, so all moves tie and this is the random tie-break.

Answers come from the :class:`~highway_env.solver.oracle.Oracle`: a cache, the opening book (the
first plies, where the solver needs minutes), the optional position store, then the exact solver.

The value and one value-keeping move are always exact, however long they take. The tie-break is
attempted from ply ``exact_min_ply[tiebreak]`` on, within a budget per move; before plies where
every child is cheap the player first secures a value-keeping move (the first in the solver's
order). When the budget runs out, or the ply is earlier, it plays a value-keeping move found
cheaply (the best candidate fully evaluated, else one already found, else the first in the
solver's order) and sets ``last_info["exact"] = False``. Book positions use the book's moves; the
``margin`` tie-break plays the margin book's first (A's first two moves, proven to keep margin 2).

Options (the defaults are ``make_agent("perfect")``'s, :data:`OPPONENT_OPTIONS`):

- ``budget_nodes`` / ``early_budget_nodes`` (:data:`DEFAULT_BUDGET_NODES` /
  :data:`DEFAULT_EARLY_BUDGET_NODES`): the tie-break's and the early moves' budgets in solver nodes
  (:class:`~highway_env.solver.oracle.NodeBudget`), so the moves depend on the position and the
  seed alone, not on the machine or its load.
- ``budget`` / ``early_budget``: the same in seconds, used when the nodes option is not given
  (``math.inf``: no limit); moves then depend on the machine (``bench/bench_perfect.py``).
- ``exact_from_ply`` (default 0). Before that ply, a position the book does not know can take the
  solver minutes: the player tries within the early budget and, if that runs out, plays the
  solver's first move in its static order, counted in ``unproven_moves`` (``moves`` counts all).
- ``inherit_max_ply`` (default 6; 0: off): after its own move to a position of value v (up to this
  ply), the value after any reply is bounded by v (the replier cannot do better).
- ``margin_book`` (``margin`` tie-break only): True (the shipped one,
  :data:`~highway_env.solver.opening_book.MARGIN_BOOK_PATH`), a path, a Book, or False. Without it A's
  first moves keep the win only: a game could end with A winning by 1, less than the game's value.
- ``first_moves``: a ``proof/first_moves.json`` whose values after A's first moves and B's
  refuting replies are loaded into the oracle.

``last_info`` after each ``act``: value, candidates (moves the tie-break chose among, None when not
enumerated), exact, seconds, value_seconds, fallback_seconds (if it fell back), source (of the
value: book / store / cache / solver / rules), move_source (book / tiebreak / fallback), margin
(margin tie-break), margin_floor (the margin tie-break's A fell back to a move keeping this margin:
:data:`MARGIN_FLOOR` where the position has it, else :data:`GAME_VALUE_MARGIN`),
opponent_replies (hardest tie-break), action.
"""

from __future__ import annotations

import json
import math
import time
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np

from agents.base import Agent
from highway_env.core import CELLS, SYMMETRIES, Board, HighwayError, transform_action
from highway_env.solver.opening_book import MARGIN_BOOK_PATH, Book, load_book
from highway_env.solver.oracle import (Deadline, Oracle, cells_after, ordered_actions,  # noqa: F401
                                      parent_keys, position_key)
from highway_env.solver.solver import Solver
from highway_env.solver.store import (UNKNOWN_HI, UNKNOWN_LO, PositionStore, bounds_from_value, open_store,
                                      value_from_bounds)

#: A new tie-break needs: its rule in ``PerfectPlayer._choose``, its ply in DEFAULT_EXACT_MIN_PLY, a
#: line in this module's docstring and the README's; tests/test_perfect_player.py runs every name here.
TIEBREAKS = ("random", "margin", "hardest")
DEFAULT_TIEBREAK = "hardest"
#: From which ply (filled cells) on each tie-break is attempted exactly (measured: earlier it
#: rarely fits a 2 s budget and the attempt would only waste the budget).
DEFAULT_EXACT_MIN_PLY = {"random": 3, "margin": 5, "hardest": 7}
#: From which ply on "random" enumerates every value-keeping move (else: first keeper in a
#: shuffled order, which is the same uniform choice, cheaper).
ENUMERATE_MIN_PLY = 8
#: The tie-break's budget per move in solver nodes (about half a second a move on one core), and the
#: budget of a move before ``exact_from_ply``: counted in nodes, the moves are the same on any machine
#: under any load.
DEFAULT_BUDGET_NODES = 300_000
DEFAULT_EARLY_BUDGET_NODES = 2_000_000
#: The margin of the game under perfect play (``proof/certificate_margin2.json`` and its refuted
#: threshold 3): the ``margin`` tie-break's A never lets a position that has it fall below it.
GAME_VALUE_MARGIN = 2
#: What the ``margin`` tie-break's A keeps where it does not play the exact margin and the position
#: has it: a point above the game's margin, so that a game ends at the game's margin exactly when B
#: held A to it (``PerfectPlayer._margin_floor``)
MARGIN_FLOOR = GAME_VALUE_MARGIN + 1
#: ``make_agent("perfect")``'s options, the constructor's defaults but quiet (the evaluation sets
#: its budgets from its command line, :data:`EVALUATION_OPPONENT`)
OPPONENT_OPTIONS = {"budget_nodes": DEFAULT_BUDGET_NODES, "early_budget_nodes": DEFAULT_EARLY_BUDGET_NODES,
                    "inherit_max_ply": 6, "progress": False}
#: The evaluation's perfect opponent: the defaults of ``evaluate.py``'s ``--perfect-*`` options and
#: of ``highway_env.benchmark.evaluate``'s ``perfect_options``. make_agent("perfect")'s tie-break and
#: node budgets (the seconds apply only where a nodes budget is 0), every move exact (the shipped
#: book answers the early plies), and the default position store.
EVALUATION_OPPONENT = {"tiebreak": DEFAULT_TIEBREAK, "budget": 0.5, "budget_nodes": DEFAULT_BUDGET_NODES,
                       "exact_from_ply": 0, "early_budget": 3.0, "early_budget_nodes": DEFAULT_EARLY_BUDGET_NODES,
                       "store": True}


class _OutOfTime(Exception):
    pass


def _memo(child_key: dict, child_cells: dict, cache: dict, question) -> Callable[[int], bool]:
    """A predicate on actions asking ``question(child cells, key=child key)`` once per symmetry class of
    the child (answers kept in ``cache``); a question the budget cannot answer raises _OutOfTime."""

    def pred(action: int) -> bool:
        k = child_key[action]
        if k not in cache:
            ans = question(child_cells[k], key=k)
            if ans is None:
                raise _OutOfTime
            cache[k] = ans
        return cache[k]

    return pred


def _book(book, path) -> Book | None:
    """A book option: True (the shipped file at ``path``, None: the opening book), a path, a Book,
    or False / None (none)."""
    if book is True:
        return load_book(path)
    if book is False or book is None:
        return None
    return book if isinstance(book, Book) else load_book(book)


def _default_game():
    from agents.games import get_game

    return get_game("highway")


class PerfectPlayer(Agent):
    """Plays value-keeping moves, tie-broken by ``tiebreak`` in :data:`TIEBREAKS` (the module
    docstring explains the tie-breaks, budgets and options).

    ``game``: default ``agents.get_game("highway")``; ``store``: a PositionStore, a path, True for
    the default path, or None; ``book``: True (the shipped book), a path, a Book, or False;
    ``exact_min_ply``: per tie-break, over :data:`DEFAULT_EXACT_MIN_PLY`; ``solver`` (share one
    Solver) or ``tt_bits``; ``progress``: tqdm bars for first-use work and long analyses.
    """

    name = "perfect"

    def __init__(self, game=None, tiebreak: str = DEFAULT_TIEBREAK, seed: int | None = None, store=None,
                 book=True, budget: float | None = None, exact_min_ply: dict | None = None,
                 solver: Solver | None = None, tt_bits: int = 22, store_max_ply: int = 12,
                 progress: bool = True, exact_from_ply: int = 0, early_budget: float | None = None,
                 inherit_max_ply: int = OPPONENT_OPTIONS["inherit_max_ply"],
                 first_moves: str | Path | None = None,
                 budget_nodes: int | None = None, early_budget_nodes: int | None = None,
                 margin_book=True):
        if tiebreak not in TIEBREAKS:
            raise ValueError(f"tiebreak must be one of {TIEBREAKS}, got {tiebreak!r}")
        for name, seconds in (("budget", budget), ("early_budget", early_budget)):
            if seconds is not None and not seconds >= 0:
                raise ValueError(f"{name} must be >= 0 seconds, got {seconds!r}")
        if budget is None and budget_nodes is None:  # seconds only when asked for: reproducible moves
            budget_nodes = DEFAULT_BUDGET_NODES
        if early_budget is None and early_budget_nodes is None:
            early_budget_nodes = DEFAULT_EARLY_BUDGET_NODES
        for name, nodes in (("budget_nodes", budget_nodes), ("early_budget_nodes", early_budget_nodes)):
            if nodes is not None and (not isinstance(nodes, int) or nodes <= 0):
                raise ValueError(f"{name} must be a positive number of solver nodes, got {nodes!r}")
        super().__init__(game if game is not None else _default_game(), seed)
        self.tiebreak = tiebreak
        self.budget = budget
        self.budget_nodes = budget_nodes
        self.early_budget_nodes = early_budget_nodes
        self.exact_min_ply = dict(DEFAULT_EXACT_MIN_PLY, **(exact_min_ply or {}))
        self.progress = progress
        self.name = f"perfect:{tiebreak}"
        self.book = book = _book(book, None)
        self.margin_book = _book(margin_book, MARGIN_BOOK_PATH) if tiebreak == "margin" else None
        self.oracle = Oracle(book=book, store=open_store(store), solver=solver, tt_bits=tt_bits,
                             store_max_ply=store_max_ply)
        self.last_info: dict = {}
        self._warm = False
        self._partial_counts = None
        self.exact_from_ply = exact_from_ply
        self.early_budget = early_budget
        self.inherit_max_ply = inherit_max_ply
        self.moves = 0
        self.unproven_moves = 0
        self._after: dict[str, int] = {}  # key of a position after our own move -> its value
        self._refutations: dict[str, list] = {}  # key of a 1-filled position -> [(cells, reply, hi)]
        if first_moves:
            self._load_first_moves(first_moves)

    @classmethod
    def from_spec(cls, args: list, game=None, seed: int | None = None, **options) -> "PerfectPlayer":
        """``make_agent("perfect[:TIEBREAK]")`` (Highway's ``Game.perfect_player``): tie-break
        ``hardest`` unless given, with :data:`OPPONENT_OPTIONS`, over which ``options`` (the
        constructor's) are laid (the evaluation's budgets and store)."""
        if len(args) > 1:
            raise ValueError(f"perfect spec is perfect[:TIEBREAK], got args {args}")
        tiebreak = args[0] if args else DEFAULT_TIEBREAK
        if tiebreak not in TIEBREAKS:
            raise ValueError(f"perfect: tie-break must be one of {list(TIEBREAKS)}, got {tiebreak!r}")
        return cls(game, tiebreak=tiebreak, seed=seed, **dict(OPPONENT_OPTIONS, **options))

    @property
    def store(self) -> PositionStore | None:
        return self.oracle.store

    # -- helpers
    def _board(self, state) -> Board:
        if isinstance(state, Board):
            return state
        arr = self.game.as_state(state)
        return Board(tuple(int(v) for v in arr))

    def warm_up(self) -> None:
        """Compile / load the solver kernels (first use; shows a bar if it takes a while)."""
        if self._warm:
            return
        from tqdm import tqdm

        with tqdm(total=1, desc="perfect player: loading solver kernels", delay=0.5, leave=False,
                  disable=not self.progress) as bar:
            Solver(tt_bits=10).solve(Board((0,) * 4 + tuple(range(1, 13))), margin=True)
            ordered_actions(Board())
            bar.update(1)
        self._warm = True

    def close(self) -> None:
        if self.oracle.store is not None:
            self.oracle.store.flush()

    # -- public helpers
    def value_of(self, board) -> int:
        """Exact game value (+1 A wins, 0 draw, -1 B wins) of a position."""
        self.warm_up()
        return self.oracle.value(self._board(board).cells)

    def move_values(self, board, margin: bool = False) -> dict[int, int]:
        """action -> exact value (or, with ``margin``, exact margin) of the position after it, for
        every legal move; symmetric children are solved once."""
        from tqdm import tqdm

        self.warm_up()
        board = self._board(board)
        out, seen = {}, {}
        actions = board.legal_actions()
        for action in tqdm(actions, desc="move values", delay=1.0, leave=False, disable=not self.progress):
            child = cells_after(board.cells, action)
            k = position_key(child)
            if k not in seen:
                seen[k] = self.oracle.margin(child, key=k) if margin else self.oracle.value(child, key=k)
            out[action] = seen[k]
        return out

    # -- the move
    def act(self, state, rng: np.random.Generator | None = None) -> int:
        self.warm_up()
        start = time.monotonic()
        rng = self._rng(rng)
        board = self._board(state)
        if board.is_terminal():
            raise HighwayError("act() on a full board: the game is over")
        self._inherit(board)
        self.moves += 1
        if board.ply < self.exact_from_ply and self._book_moves(board) is None:
            return self._early_move(board)
        o = self.oracle
        cells = board.cells
        key = position_key(cells)
        had = key in o.cache and value_from_bounds(*o.cache[key]) is not None
        value = o.value(cells, key=key)
        source = "cache" if had and o.origin.get(key) not in ("book", "store") else o.origin.get(key, "solver")
        info = {"ply": board.ply, "mover": "AB"[board.to_move], "tiebreak": self.tiebreak, "value": value,
                "candidates": None, "exact": False, "source": source, "move_source": None}
        info["value_seconds"] = time.monotonic() - start
        action = self._choose(board, value, rng, self._budget(self.budget, self.budget_nodes), info)
        end = time.monotonic()
        info["seconds"] = end - start
        if "fallback_at" in info:
            info["fallback_seconds"] = end - info.pop("fallback_at")
        info["action"] = action
        self.last_info = info
        self._remember(board, action, value)
        return int(action)

    def _budget(self, seconds: float | None, nodes: int | None):
        """A move's budget: ``nodes`` solver nodes if given, else ``seconds`` from now (inf: none)."""
        if nodes is not None:
            return self.oracle.node_budget(nodes)
        return Deadline(None if seconds == math.inf else time.monotonic() + seconds)

    def _book_moves(self, board: Board):
        """(moves, complete) from the margin book (margin tie-break), else the opening book, or None."""
        for book in (self.margin_book, self.book):
            bm = book.moves(board) if book is not None else None
            if bm is not None:
                return bm
        return None

    # -- before exact_from_ply, and what the player knows from its own moves
    def _early_move(self, board: Board) -> int:
        """A value-keeping move if the oracle finds one within the early budget, else the
        solver's first move in its static order (counted in ``unproven_moves``)."""
        o = self.oracle
        budget = self._budget(self.early_budget, self.early_budget_nodes)
        v = o.value(board.cells, budget)
        action = None
        if v is not None:
            if v == (-1 if board.to_move == 0 else 1):  # the mover is lost: every move keeps the value
                action = ordered_actions(board)[0]
            elif board.ply == 1:
                action = self._known_reply(board, v)
            if action is None:
                keep = o.keeping_moves(board, v, first_only=True, budget=budget)
                action = keep[0] if keep else None
        self.last_info = {"ply": board.ply, "mover": "AB"[board.to_move], "value": v,
                          "exact": action is not None, "move_source": "early"}
        if action is None:
            self.unproven_moves += 1
            action = ordered_actions(board)[0]
        else:
            self._remember(board, action, v)
        self.last_info["action"] = action
        return int(action)

    def _inherit(self, board: Board) -> None:
        """Bound the value of ``board`` by the value of a remembered parent (after our own move)."""
        if board.ply > self.inherit_max_ply or not self._after:
            return
        we_are_a = board.to_move == 0
        for parent in parent_keys(board.cells):
            v = self._after.get(parent)
            if v is None:
                continue
            if we_are_a and v >= 0:
                self.oracle.record(board.cells, v, UNKNOWN_HI)
            elif not we_are_a and v <= 0:
                self.oracle.record(board.cells, UNKNOWN_LO, v)

    def _remember(self, board: Board, action: int, value) -> None:
        if value is None or board.ply + 1 > self.inherit_max_ply:
            return
        self._after[position_key(cells_after(board.cells, action))] = int(value)

    def _load_first_moves(self, path) -> None:
        """Values of the positions after A's first moves, complete or not, and B's refutations
        (``refuted_at_1_by``: a reply after which A cannot force a win; ``refuted_at_0_by``: ... cannot
        force a draw), as ``python -m highway_env.solver first-moves`` writes them. An unreadable
        file or row adds nothing (the solver then finds the same answers, slower)."""
        try:
            doc = json.loads(Path(path).read_text())
            rows = doc.get("moves", []) if isinstance(doc, dict) else doc
        except (OSError, ValueError, AttributeError):
            return
        for r in rows:
            try:
                a = int(r["action"]) if "action" in r else (int(r["number"]) - 1) * CELLS + int(r["cell"])
                cells = cells_after((0,) * CELLS, a)
                v = r.get("value")
                if v is not None:
                    self.oracle.record(cells, *bounds_from_value(int(v)))
                for field, hi in (("refuted_at_1_by", 0), ("refuted_at_0_by", -1)):
                    ref = r.get(field)
                    if isinstance(ref, dict) and "action" in ref:
                        b = int(ref["action"])
                        self.oracle.record(cells_after(cells, b), UNKNOWN_LO, hi)
                        self._refutations.setdefault(position_key(cells), []).append((cells, b, hi))
            except (KeyError, TypeError, ValueError):
                continue

    def _known_reply(self, board: Board, value: int):
        """A stored refutation of A's first move that keeps ``value`` for B, in ``board``'s frame."""
        for cells, action, hi in self._refutations.get(position_key(board.cells), []):
            if hi > value:
                continue
            src = Board(cells)
            for perm in SYMMETRIES.values():
                if src.transform(perm) == board:
                    return transform_action(action, perm)
        return None

    def _choose(self, board: Board, value: int, rng, budget, info) -> int:
        o = self.oracle
        cells = board.cells
        a_moves = board.to_move == 0
        mover_lost = value == (1 if not a_moves else -1)
        mover_wins = value == (1 if a_moves else -1)
        actions = board.legal_actions()
        self._partial_counts = None

        # 1. the book's moves
        bm = self._book_moves(board)
        if bm is not None:
            moves, complete = bm
            info.update(move_source="book", candidates=len(moves) if complete else None,
                        exact=complete and self.tiebreak == "random")
            return int(rng.choice(moves))

        # children grouped by symmetry class
        child_key: dict[int, str] = {}
        child_cells: dict[str, tuple] = {}
        for a in actions:
            c = cells_after(cells, a)
            k = position_key(c)
            child_key[a] = k
            child_cells.setdefault(k, c)

        keep_cache: dict[str, bool] = {}
        keeps = _memo(child_key, child_cells, keep_cache,
                      partial(o.keeps, value=value, a_moved=a_moves, budget=budget))
        tb = self.tiebreak
        if tb == "hardest" and mover_wins:
            tb = "random"  # every reply of the lost opponent keeps the value: all moves tie
            info["note"] = "mover wins: every opponent reply keeps the value, hardest = random"
        if board.ply >= self.exact_min_ply[tb]:
            if board.ply < ENUMERATE_MIN_PLY and budget.limited:
                # Expensive region: first secure a value-keeping move the way the plain solver finds
                # one (its order, its fresh table), then give the exact tie-break the whole budget.
                t = time.monotonic()
                self._first_keeper(board, value, child_key, child_cells, keep_cache)
                budget.extend(time.monotonic() - t)
            try:
                if tb == "random" and mover_lost:
                    info.update(move_source="tiebreak", exact=True, candidates=len(actions))
                    return int(rng.choice(actions))
                if tb == "random":
                    return self._uniform(board, actions, keeps, rng, info)
                if tb == "margin":
                    m = o.margin(cells, budget)
                    if m is None:
                        raise _OutOfTime
                    info["margin"] = m
                    best = _memo(child_key, child_cells, {},
                                 partial(o.reaches, t=m, a_moved=a_moves, budget=budget))
                    return self._uniform(board, actions, best, rng, info)
                if tb != "hardest":  # a name added to TIEBREAKS must not play "hardest" unnoticed
                    raise AssertionError(f"tie-break {tb!r} is in TIEBREAKS but has no rule in PerfectPlayer._choose")
                # hardest, mover not winning: count the opponent's value-keeping replies
                return self._hardest(board, value, actions, child_key, child_cells, keeps, rng, budget, info)
            except _OutOfTime:
                pass
        return self._fallback(board, value, child_key, child_cells, keep_cache, rng, info)

    @staticmethod
    def _uniform(board: Board, actions, pred: Callable[[int], bool], rng, info) -> int:
        """Uniform among the actions satisfying ``pred``: from ENUMERATE_MIN_PLY on all of them are
        listed, earlier the first in a random order is taken (the same choice, cheaper)."""
        if board.ply >= ENUMERATE_MIN_PLY:
            good = [a for a in actions if pred(a)]
            info.update(move_source="tiebreak", exact=True, candidates=len(good))
            return int(rng.choice(good))
        for i in rng.permutation(len(actions)):
            if pred(actions[i]):
                info.update(move_source="tiebreak", exact=True)
                return int(actions[i])
        raise AssertionError("no action satisfies the predicate")  # a value-keeping move always exists

    def _hardest(self, board, value, actions, child_key, child_cells, keeps, rng, budget, info) -> int:
        counts: dict[str, int] = {}
        best = None
        self._partial_counts = counts
        for a in ordered_actions(board):
            k = child_key[a]
            if k in counts or not keeps(a):
                continue
            child = child_cells[k]
            n = 0
            for _, ans in self.oracle.keeps_each(child, Board(child).legal_actions(), value, budget):
                if ans is None:
                    raise _OutOfTime
                n += ans
                if best is not None and n > best:
                    break
            counts[k] = n
            if best is None or n < best:
                best = n
        good = [a for a in actions if counts.get(child_key[a]) == best]
        info.update(move_source="tiebreak", exact=True, candidates=len(good), opponent_replies=best,
                    keeping=sum(1 for a in actions if child_key[a] in counts))
        return int(rng.choice(good))

    def _fallback(self, board, value, child_key, child_cells, keep_cache, rng, info) -> int:
        """A value-keeping move found cheaply (no deadline: correctness first)."""
        info.update(move_source="fallback", exact=False, fallback_at=time.monotonic())
        counts = self._partial_counts
        self._partial_counts = None
        if self.tiebreak == "hardest" and counts:
            # the best among the children fully counted (counts that stopped early are > best)
            best = min(counts.values())
            good = [a for a in child_key if counts.get(child_key[a]) == best]
            return int(rng.choice(good))
        floor = self._margin_floor(board.cells) if self.tiebreak == "margin" and board.to_move == 0 \
            and value == 1 else None
        if floor is not None:
            info["margin_floor"] = floor
            return self._first_keeper(board, floor, child_key, child_cells, {})
        known = [a for a in child_key if keep_cache.get(child_key[a])]
        if known and self.tiebreak != "margin":
            return int(rng.choice(known))
        return self._first_keeper(board, value, child_key, child_cells, keep_cache)

    def _margin_floor(self, cells) -> int | None:
        """What A's fallback keeps out of budget: one point above the game's margin where the
        position has it, else the game's margin where it has that. So a game ends at the game's
        margin exactly when B never gave more (B cannot take back a point A keeps), and "held to
        the game value" counts the games B held, whatever A's exact margin would have been. The
        check costs seconds at ply 4 where B held (a refutation), far less later."""
        for floor in (MARGIN_FLOOR, GAME_VALUE_MARGIN):
            if self.oracle.at_least(cells, floor):
                return floor
        return None

    def _first_keeper(self, board, value, child_key, child_cells, keep_cache) -> int:
        """The first value-keeping move in the solver's move order (no deadline); for A, ``value``
        may be a margin it keeps (``Oracle.keeps``)."""
        a_moves = board.to_move == 0
        for a in ordered_actions(board):
            k = child_key[a]
            if k not in keep_cache:
                keep_cache[k] = self.oracle.keeps(child_cells[k], value, a_moves, key=k)
            if keep_cache[k]:
                return int(a)
        raise AssertionError(f"no value-keeping move in {board.to_string()}")  # unreachable

