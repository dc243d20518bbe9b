"""The exact solver's Python API: game value, exact margin, the value of every move, a best move.

Values are from A's side: +1 A wins, 0 draw, -1 B wins. The margin is minB - minA under perfect play
(A maximising, B minimising). Win/draw/loss costs two null-window searches at most; the exact margin
is found by MTD(f), a sequence of null windows sharing one transposition table.

The transposition table persists across calls on one ``Solver`` (its entries are bounds on exact
margins, valid whatever asked for them), so solving the positions of one game in turn gets cheaper.

    >>> from highway_env.core import parse_board
    >>> s = Solver()
    >>> r = s.solve(parse_board("6,8,3,0,5,11,10,0,15,0,13,12,1,7,4,0"), margin=True)
    >>> (r.value, r.margin)
    (1, 7)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from highway_env.cli_args import TT_BITS_MAX, TT_BITS_MIN
from highway_env.core import Board, HighwayError, decode_action, encode_action, parse_board
from highway_env.solver import kernel
from highway_env.solver.store import canonical_key

INF = kernel.INF


@dataclass
class MoveValue:
    action: int
    value: int | None  # None: unknown (limit reached)
    margin: int | None = None

    @property
    def number(self) -> int:
        return decode_action(self.action)[0]

    @property
    def cell(self) -> int:
        return decode_action(self.action)[1]

    def to_dict(self) -> dict:
        return {**action_dict(self.action), "value": self.value, "margin": self.margin}


@dataclass
class SolveResult:
    """``value`` None means the limit was reached first ("unknown"); ``best`` None on a full board."""

    value: int | None
    margin: int | None = None
    best: int | None = None
    moves: list[MoveValue] | None = None
    nodes: int = 0
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict:
        out = {
            "value": self.value,
            "margin": self.margin,
            "best": None if self.best is None else action_dict(self.best),
            "nodes": self.nodes,
            "seconds": round(self.seconds, 6),
        }
        if self.value is None:
            out["status"] = "unknown"
        if self.moves is not None:
            out["moves"] = [m.to_dict() for m in self.moves]
        return out


def action_dict(action: int) -> dict:
    """A move as the JSON outputs name it: number, cell and action."""
    number, cell = decode_action(action)
    return {"number": number, "cell": cell, "action": action}


def as_board(position) -> Board:
    """A ``Board`` from what the agents accept: a Board, a board string, or 16 integers (list, tuple
    or integer array); anything else is a ``TypeError`` naming its type."""
    if isinstance(position, Board):
        return position
    if isinstance(position, str):
        return parse_board(position)
    if isinstance(position, np.ndarray) and position.dtype.kind in "iu" and position.ndim == 1:
        return Board(tuple(int(v) for v in position))
    if isinstance(position, (list, tuple)):
        return Board(tuple(position))  # Board validates: 16 integers in 0..16, no repeats
    raise TypeError(f"a position must be a Board, a board string or 16 integers, got "
                    f"{type(position).__name__}" + (f" of dtype {position.dtype}" if isinstance(position, np.ndarray)
                                                    else ""))


def ordered_actions(board: Board) -> list[int]:
    """Every legal action, best first by the solver's static ordering for the side to move."""
    nums, cells = kernel.ordered_moves(np.asarray(board.cells, dtype=np.int64), board.to_move == 0)
    return [encode_action(int(n), int(c)) for n, c in zip(nums, cells)]


class LimitReached(Exception):
    """Raised inside the solver when the node or time budget runs out."""


@dataclass
class _Budget:
    node_limit: int | None
    deadline: float | None
    nodes: int = 0

    def remaining(self) -> tuple[int, float]:
        nodes = 0
        if self.node_limit is not None:
            nodes = self.node_limit - self.nodes
            if nodes <= 0:
                raise LimitReached
        seconds = 0.0
        if self.deadline is not None:
            seconds = self.deadline - time.monotonic()
            if seconds <= 0:
                raise LimitReached
        return nodes, seconds


@dataclass
class Solver:
    """One search thread with its transposition table (2**tt_bits buckets of two entries, 21 bytes
    an entry: the default 22 bits take about 180 MB).

    ``use_pair_bounds`` / ``use_tt`` switch techniques off for benchmarks and tests.
    """

    tt_bits: int = 22
    use_pair_bounds: bool = True
    use_tt: bool = True
    _ctx: dict = field(init=False, repr=False)

    def __post_init__(self):
        if not TT_BITS_MIN <= self.tt_bits <= TT_BITS_MAX:
            raise HighwayError(f"tt_bits must be in {TT_BITS_MIN}..{TT_BITS_MAX}, got {self.tt_bits!r}")
        self._ctx = kernel.new_context(self.tt_bits)

    def clear(self) -> None:
        """Forget the transposition table."""
        kernel.clear_tt(self._ctx)

    # ------------------------------------------------------------------ core questions
    def _window(self, board: Board, alpha: int, beta: int, budget: _Budget) -> int:
        nodes, seconds = budget.remaining()
        v, aborted, n = kernel.run_search(self._ctx, board.cells, alpha, beta, node_limit=nodes,
                                          seconds=seconds, use_pair=self.use_pair_bounds,
                                          use_tt=self.use_tt)
        budget.nodes += n
        if aborted:
            raise LimitReached
        return v

    def _at_least(self, board: Board, threshold: int, budget: _Budget) -> bool:
        """Can A force margin >= threshold? One null-window search."""
        return self._window(board, threshold - 1, threshold, budget) >= threshold

    def _value(self, board: Board, budget: _Budget) -> int:
        if board.is_terminal():
            return board.outcome().value
        if self._at_least(board, 1, budget):
            return 1
        return 0 if self._at_least(board, 0, budget) else -1

    def _margin(self, board: Board, budget: _Budget, value: int | None = None) -> int:
        """MTD(f): null windows closing in on the exact margin; ``value`` narrows the start."""
        if board.is_terminal():
            return board.outcome().margin
        lower, upper = -INF, INF
        if value == 1:
            lower = 1
        elif value == 0:
            return 0
        elif value == -1:
            upper = -1
        b = board.bounds().margin
        lower, upper = max(lower, b[0]), min(upper, b[1])
        guess = lower if lower > -INF else (upper if upper < INF else 0)
        while lower < upper:
            beta = max(guess, lower + 1)
            guess = self._window(board, beta - 1, beta, budget)
            if guess < beta:
                upper = guess
            else:
                lower = guess
        return lower

    def _best_move(self, board: Board, value: int, budget: _Budget) -> int:
        """The first move, in search order, whose child keeps ``value``."""
        a_to_move = board.to_move == 0
        for action in ordered_actions(board):
            child = board.apply(action)
            if a_to_move and (value == -1 or self._at_least(child, value, budget)):
                return action
            if not a_to_move and (value == 1 or not self._at_least(child, value + 1, budget)):
                return action
        raise AssertionError(f"no move keeps value {value} in {board.to_string()}")  # unreachable

    # ------------------------------------------------------------------ public API
    def solve(self, board: Board | str | Sequence[int], *, margin: bool = False, moves: bool = False,
              time_limit: float | None = None, node_limit: int | None = None) -> SolveResult:
        """Value (and on request the exact margin and every move's value) of ``board`` (see
        :func:`as_board` for the forms accepted).

        A time or node limit that runs out gives a result with ``value`` None ("unknown").
        """
        board = as_board(board)
        if time_limit is not None and time_limit <= 0:
            raise HighwayError(f"time_limit must be positive, got {time_limit!r}")
        if node_limit is not None and node_limit <= 0:
            raise HighwayError(f"node_limit must be positive, got {node_limit!r}")
        start = time.monotonic()
        budget = _Budget(node_limit, None if time_limit is None else start + time_limit)
        result = SolveResult(value=None)
        try:
            if board.is_terminal():
                out = board.outcome()
                result.value, result.margin = out.value, (out.margin if margin else None)
            elif moves:
                result.moves = self._move_values(board, margin, budget)
                pick = max if board.to_move == 0 else min
                best = pick(result.moves, key=lambda m: (m.margin, m.value) if margin else m.value)
                result.value, result.margin, result.best = best.value, best.margin, best.action
            else:
                value = self._value(board, budget)
                if margin:
                    result.margin = self._margin(board, budget, value)
                result.best = self._best_move(board, value, budget)
                result.value = value
        except LimitReached:
            result = SolveResult(value=None)
        result.nodes = budget.nodes
        result.seconds = time.monotonic() - start
        return result

    def _move_values(self, board: Board, margin: bool, budget: _Budget) -> list[MoveValue]:
        """Every legal move with its value (and margin), in action order; children that are the same
        position up to symmetry are solved once."""
        seen: dict[str, MoveValue] = {}
        out = []
        for action in sorted(board.legal_actions()):
            child = board.apply(action)
            key = canonical_key(child)
            if key not in seen:
                value = self._value(child, budget)
                m = self._margin(child, budget, value) if margin else None
                seen[key] = MoveValue(action, value, m)
            known = seen[key]
            out.append(MoveValue(action, known.value, known.margin))
        return out

    def value(self, board: Board, **limits) -> int | None:
        return self.solve(board, **limits).value

    def margin(self, board: Board, **limits) -> int | None:
        return self.solve(board, margin=True, **limits).margin

    def search_window(self, board: Board, alpha: int, beta: int,
                      node_limit: int | None = None) -> tuple[int | None, int]:
        """One fail-soft alpha-beta search: (value, nodes). value <= alpha means the margin is at most
        value; value >= beta means at least value; otherwise exact. value None: ``node_limit`` ran
        out first (the table keeps only what was finished, so a later search is still exact)."""
        budget = _Budget(node_limit, None)
        try:
            return self._window(board, alpha, beta, budget), budget.nodes
        except LimitReached:
            return None, budget.nodes

    def keeping_move(self, board: Board, threshold: int) -> int | None:
        """A move after which "A can force margin >= threshold" is as true or false as before (one
        always exists); None on a full board."""
        if board.is_terminal():
            return None
        budget = _Budget(None, None)
        holds = self._at_least(board, threshold, budget)
        for action in ordered_actions(board):
            if self._at_least(board.apply(action), threshold, budget) == holds:
                return action
        return None

    def at_least(self, board: Board, threshold: int, *, time_limit: float | None = None,
                 node_limit: int | None = None) -> bool | None:
        """Can A force margin >= threshold? None if a limit ran out first."""
        return self.counted_at_least(board, threshold, time_limit=time_limit, node_limit=node_limit)[0]

    def counted_at_least(self, board: Board, threshold: int, *, time_limit: float | None = None,
                         node_limit: int | None = None) -> tuple[bool | None, int]:
        """``at_least`` and the nodes it searched (those of a cut search included)."""
        budget = _Budget(node_limit, None if time_limit is None else time.monotonic() + time_limit)
        try:
            if board.is_terminal():
                return board.outcome().margin >= threshold, 0
            return self._at_least(board, threshold, budget), budget.nodes
        except LimitReached:
            return None, budget.nodes
