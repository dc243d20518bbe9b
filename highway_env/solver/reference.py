"""Plain-Python reference solver: memoised minimax on the margin, straight from the rules in core.

Slow and obviously right; the tests check the compiled solver against it (and against the compiled
brute force ``kernel.brute_force_margin``, which shares no pruning with the real search).
"""

from __future__ import annotations

from functools import lru_cache

from highway_env.core import Board


@lru_cache(maxsize=None)
def _margin(cells: tuple[int, ...]) -> int:
    board = Board(cells)
    if board.is_terminal():
        return board.outcome().margin
    children = (_margin(board.apply(a).cells) for a in board.legal_actions())
    return max(children) if board.to_move == 0 else min(children)


def reference_margin(board: Board) -> int:
    """Exact margin minB - minA under perfect play (A maximising)."""
    return _margin(board.cells)


def reference_move_values(board: Board) -> dict[int, int]:
    """action -> exact margin after that move."""
    return {a: reference_margin(board.apply(a)) for a in board.legal_actions()}
