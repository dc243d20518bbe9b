"""Helpers shared by the tests: independent reference computations on core boards."""

import numpy as np

from highway_env.core import Board


def one_hot(board: Board) -> np.ndarray:
    """(4, 4, 16) int8 planes: [r, c, k] = 1 iff number k+1 is in cell (r, c)."""
    out = np.zeros((4, 4, 16), dtype=np.int8)
    for cell, v in enumerate(board.cells):
        if v:
            out[cell // 4, cell % 4, v - 1] = 1
    return out
