"""The perfect opponent of the evaluation: :class:`~highway_env.solver.player.PerfectPlayer` with a
time cap on the first plies.

From ply ``exact_from_ply`` on (default 0: every move, since the shipped book makes the first plies
of games from the empty board instant), and wherever the opening book answers, every move is the perfect
player's: value-keeping, proven by the solver (the tie-break, e.g. "hardest", within ``budget``
seconds a move). Before that ply a position the book does not know can take the solver minutes (a
1-filled board) to tens of seconds, so the player tries within ``early_budget`` seconds and, if that
runs out, plays the solver's first move in its static order and counts the move as *unproven*
(``unproven_moves``; the evaluation reports it). Two cheap sources of exact knowledge come first:

- ``first_moves`` (off by default: the shipped book holds the complete table): the values of the
  positions after A's first moves and B's refuting replies (a ``proof/first_moves.json``, complete
  or not) are loaded into the oracle: B's answer to a first move listed there is then immediate;
- inheritance: after its own move to a position of value v, the value of the position after any
  reply is bounded by v (the replier cannot do better than v); a won position stays won whatever the
  loser replies, so e.g. after the book's 16@r0c3 the player knows every ply-2 position is won.

``make_agent("perfect[:tiebreak]")`` builds one (:func:`perfect_factory`, named by
``HighwayGame.perfect_player``).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from agents.base import Agent
from highway_env.core import CELLS, Board



class EvalPerfect(Agent):
    """See the module docstring. ``store``: a PositionStore path (shared by processes), True for
    the default store, None for none."""

    def __init__(self, game=None, tiebreak: str = "hardest", seed: int | None = None, store=None,
                 budget: float = 0.5, exact_from_ply: int = 0, early_budget: float = 5.0,
                 first_moves: str | Path | None = None, inherit_max_ply: int = 6):
        from highway_env.solver.player import PerfectPlayer

        self.player = PerfectPlayer(game, tiebreak=tiebreak, seed=seed, store=store, budget=budget,
                                    progress=False)
        super().__init__(self.player.game, seed)
        self.name = f"perfect:{tiebreak}"
        self.tiebreak = tiebreak
        self.exact_from_ply = exact_from_ply
        self.early_budget = early_budget
        self.inherit_max_ply = inherit_max_ply
        self.moves = 0
        self.unproven_moves = 0
        self._after: dict[str, int] = {}  # key of a position after our move -> its value
        self._refutations: dict[str, list] = {}  # key of a 1-filled position -> [(cells, reply, hi)]
        if first_moves:
            self._load_first_moves(first_moves)

    def _load_first_moves(self, path) -> None:
        """Values of the positions after A's first moves, complete or not, and B's refutations
        (``refuted_at_1_by``: a reply after which A cannot force a win; ``refuted_at_0_by``: ... cannot
        force a draw), as written by ``python -m highway_env.solver first-moves`` (``proof/first_moves.json``)."""
        import json

        from highway_env.solver.store import UNKNOWN_HI, UNKNOWN_LO

        try:
            doc = json.loads(Path(path).read_text())
            rows = doc.get("moves", []) if isinstance(doc, dict) else doc
        except (OSError, ValueError, AttributeError):
            return
        o = self.player.oracle
        for r in rows:
            try:
                a = int(r["action"]) if "action" in r else (int(r["number"]) - 1) * CELLS + int(r["cell"])
                cells = [0] * CELLS
                cells[a % CELLS] = a // CELLS + 1
                cells = tuple(cells)
                v = r.get("value")
                if v is not None:
                    o.record(cells, *{1: (1, UNKNOWN_HI), 0: (0, 0), -1: (UNKNOWN_LO, -1)}[int(v)])
                for field, hi in (("refuted_at_1_by", 0), ("refuted_at_0_by", -1)):
                    ref = r.get(field)
                    if isinstance(ref, dict) and "action" in ref:
                        b = int(ref["action"])
                        child = list(cells)
                        child[b % CELLS] = b // CELLS + 1
                        o.record(tuple(child), UNKNOWN_LO, hi)
                        self._refutations.setdefault(self._key(cells), []).append((cells, b, hi))
            except (KeyError, TypeError, ValueError):
                continue

    def _known_reply(self, board: Board, value: int):
        """A stored refutation of A's first move that keeps ``value`` for B, in ``board``'s frame."""
        from highway_env.core import SYMMETRIES, transform_action

        for cells, action, hi in self._refutations.get(self._key(board.cells), []):
            if hi > value:
                continue
            src = Board(cells)
            for perm in SYMMETRIES.values():
                if src.transform(perm) == board:
                    return transform_action(action, perm)
        return None

    def _key(self, cells) -> str:
        from highway_env.solver.player import position_key

        return position_key(cells)

    def _inherit(self, board: Board) -> None:
        """Bound the value of ``board`` by the value of a remembered parent (after our own move)."""
        from highway_env.solver.store import UNKNOWN_HI, UNKNOWN_LO

        if board.ply > self.inherit_max_ply or not self._after:
            return
        we_are_a = board.to_move == 0
        for c in range(CELLS):
            if board.cells[c]:
                parent = list(board.cells)
                parent[c] = 0
                v = self._after.get(self._key(parent))
                if v is None:
                    continue
                if we_are_a and v >= 0:
                    self.player.oracle.record(board.cells, v, UNKNOWN_HI)
                elif not we_are_a and v <= 0:
                    self.player.oracle.record(board.cells, UNKNOWN_LO, v)

    def _remember(self, board: Board, action: int, value) -> None:
        if value is None or board.ply + 1 > self.inherit_max_ply:
            return
        child = list(board.cells)
        child[action % CELLS] = action // CELLS + 1
        self._after[self._key(child)] = int(value)

    def act(self, state, rng: np.random.Generator | None = None) -> int:
        from highway_env.solver.player import ordered_actions

        rng = self._rng(rng)
        board = self.player._board(state)
        self.player.warm_up()
        self._inherit(board)
        self.moves += 1
        book = self.player.book
        if board.ply >= self.exact_from_ply or (book is not None and book.moves(board) is not None):
            a = self.player.act(board, rng)
            self._remember(board, a, self.player.last_info.get("value"))
            return a
        o = self.player.oracle
        deadline = time.monotonic() + self.early_budget
        v = o.value(board.cells, deadline)
        if v is not None:
            a_moves = board.to_move == 0
            if v == (-1 if a_moves else 1):  # the mover is lost: every move keeps the value
                a = ordered_actions(board)[0]
                self._remember(board, a, v)
                return a
            known = self._known_reply(board, v) if board.ply == 1 else None
            if known is not None:
                self._remember(board, known, v)
                return known
            keep = o.keeping_moves(board, v, first_only=True, deadline=deadline)
            if keep:
                self._remember(board, keep[0], v)
                return keep[0]
        self.unproven_moves += 1
        return ordered_actions(board)[0]


def perfect_factory(args, game, seed):
    """``perfect[:tiebreak]`` for :func:`agents.registry.make_agent` (tie-break random|margin|hardest,
    default hardest); ``game`` None means Highway."""
    from highway_env.solver.player import TIEBREAKS

    if len(args) > 1:
        raise ValueError(f"perfect spec is perfect[:TIEBREAK], got args {args}")
    tb = args[0] if args else "hardest"
    if tb not in TIEBREAKS:
        raise ValueError(f"perfect: tie-break must be one of {list(TIEBREAKS)}, got {tb!r}")
    return EvalPerfect(game, tiebreak=tb, seed=seed)
