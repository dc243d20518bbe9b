"""Exact solver for the Black Path Game: negamax (win/loss only) with a memo on the filled board.

The filled board (2 bits a square) and the fixed start determine the whole position, so it is the
memo key. A move loses at once if the path runs into the edge, else it wins iff the position it
leads to is lost for the opponent; there are no draws, so the search stops at the first win.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from highway_env.blackpath.game import (_DELTA, EXIT, TILE_NAMES, BlackPathError, State, boundary_starts,
                                        is_boundary, move_name, new_game, start_name)

__all__ = ["Result", "SearchLimitError", "solve", "solve_state", "brute_force_winner", "solve_all_starts",
           "DEFAULT_MAX_POSITIONS"]

#: Memo entries a search may hold by default: about 100 bytes each in Python, so ~400 MB. 6x6 needs
#: 1.1 million; 10x10 would grow without bound (past 1.8 GB) without this.
DEFAULT_MAX_POSITIONS = 4_000_000


class SearchLimitError(BlackPathError):
    """The search reached its position or time limit before it was solved."""


@dataclass
class Result:
    rows: int
    cols: int
    start: str
    winner: int  # 1 or 2: who wins from the position with perfect play
    to_move: int  # the player to move in the solved position
    winning_tiles: list[int] = field(default_factory=list)  # the to-move player's winning tiles
    winning_moves: list[str] = field(default_factory=list)  # the same in notation
    states: int = 0  # positions searched (memo entries)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "winner": self.winner,
            "rows": self.rows,
            "cols": self.cols,
            "start": self.start,
            "to_move": self.to_move,
            "winning_first_tiles": [TILE_NAMES[t] for t in self.winning_tiles],
            "winning_moves": self.winning_moves,
            "states_searched": self.states,
            "seconds": round(self.seconds, 4),
        }


class _Search:
    def __init__(self, rows: int, cols: int, max_positions: int | None = DEFAULT_MAX_POSITIONS,
                 time_limit: float | None = None):
        self.max_positions = max_positions
        self.time_limit = time_limit
        self.started = time.perf_counter()
        # next[square * 4 + exit_side] = neighbour * 4 + entry side, or -1 at the edge
        self.next = []
        for sq in range(rows * cols):
            for side in range(4):
                dr, dc = _DELTA[side]
                edge = is_boundary(sq, side, rows, cols)
                self.next.append(-1 if edge else (sq + dr * cols + dc) * 4 + (side + 2) % 4)
        self.memo: dict[int, bool] = {}

    def advance(self, key: int, sq: int, entry: int) -> int:
        """From the path end (sq, entry) follow filled squares; -> sq*4+entry of an empty square or -1."""
        nxt = self.next
        while True:
            t = (key >> (2 * sq)) & 3
            if t == 0:
                return sq * 4 + entry
            pos = nxt[sq * 4 + EXIT[t][entry]]
            if pos < 0:
                return -1
            sq, entry = pos >> 2, pos & 3

    def wins(self, key: int, sq: int, entry: int) -> bool:
        """True iff the player to move (to fill ``sq``, entered by ``entry``) wins."""
        memo = self.memo
        got = memo.get(key)
        if got is not None:
            return got
        nxt = self.next
        advance = self.advance
        wins = self.wins
        shift = 2 * sq
        result = False
        for t in (1, 2, 3):
            pos = nxt[sq * 4 + EXIT[t][entry]]
            if pos < 0:
                continue  # this tile runs into the edge: it loses
            k2 = key | (t << shift)
            pos = advance(k2, pos >> 2, pos & 3)
            if pos < 0:
                continue
            if not wins(k2, pos >> 2, pos & 3):
                result = True
                break
        memo[key] = result
        if len(memo) & 4095 == 0:  # limits are checked now and then: cheap, and precise enough
            self._check_limits()
        return result

    def _check_limits(self) -> None:
        seconds = time.perf_counter() - self.started
        if self.max_positions is not None and len(self.memo) >= self.max_positions:
            raise SearchLimitError(
                f"gave up after {len(self.memo):,} positions in {seconds:.0f} s (the position limit, about "
                f"{len(self.memo) * 100 // 2**20} MB): allow more with --max-positions N, or solve a smaller board")
        if self.time_limit is not None and seconds > self.time_limit:
            raise SearchLimitError(f"gave up after {seconds:.0f} s and {len(self.memo):,} positions (the time "
                                   f"limit): allow more with --time-limit S, or solve a smaller board")


def solve_state(state: State, max_positions: int | None = DEFAULT_MAX_POSITIONS,
                time_limit: float | None = None) -> Result:
    """Solve a position exactly: the winner and every winning tile for the side to move. Raises
    :class:`SearchLimitError` once the memo holds ``max_positions`` positions or ``time_limit``
    seconds have passed (None: no limit)."""
    t0 = time.perf_counter()
    if state.is_over:
        return Result(state.rows, state.cols, state.start, state.winner, state.to_move,
                      seconds=time.perf_counter() - t0)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * state.rows * state.cols + 1000))
    try:
        search = _Search(state.rows, state.cols, max_positions, time_limit)
        winning = []
        for t in (1, 2, 3):  # a tile wins if the path goes on into a position lost for the opponent
            child = state.play(t)
            if not child.is_over and not search.wins(child.key(), child.square, child.entry):
                winning.append(t)
    finally:
        sys.setrecursionlimit(old)
    mover = state.to_move
    winner = mover if winning else 3 - mover
    return Result(
        state.rows, state.cols, state.start, winner, mover, winning,
        [move_name(state.square, t, state.cols) for t in winning],
        states=len(search.memo), seconds=time.perf_counter() - t0,
    )


def solve(rows: int = 4, cols: int = 4, start: str | tuple[int, int] = "A1:top",
          max_positions: int | None = DEFAULT_MAX_POSITIONS, time_limit: float | None = None) -> Result:
    """Who wins the empty ``rows x cols`` board from ``start`` with perfect play (1 or 2)."""
    return solve_state(new_game(rows, cols, start), max_positions, time_limit)


def solve_all_starts(rows: int, cols: int, max_positions: int | None = DEFAULT_MAX_POSITIONS,
                     time_limit: float | None = None) -> dict[str, int]:
    """{start ("A1:top", ...): winner} for every boundary side of the board (limits per start)."""
    return {start_name(sq, side, cols): solve(rows, cols, (sq, side), max_positions, time_limit).winner
            for sq, side in boundary_starts(rows, cols)}


def brute_force_winner(state: State) -> int:
    """Plain minimax over ``State.play`` with no memo (a cross-check for tiny boards)."""
    if state.is_over:
        return state.winner
    mover = state.to_move
    for t in (1, 2, 3):
        if brute_force_winner(state.play(t)) == mover:
            return mover
    return 3 - mover
