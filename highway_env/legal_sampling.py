"""A uniformly random legal action per row of a batch of action masks: the one draw that every
random player uses (``agents.game.sample_legal``: random agents, self-play openings, the position
sets' random games; ``batch_rules.random_legal``: the vector env's random opponent).

It lives in the lowest layer, beside ``core``, so that ``agents`` (which may not import a game's
rules) and Highway's rules kernel share it: one generator call, ``rng.random(N)``, gives the same
moves everywhere.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def kth_legal(masks, draws, out):
    """out[g] <- the k-th legal action of row g of the (N, A) masks in action order, k =
    int(draws[g] * legal count) for a draw in [0, 1); -1 in a row with no legal action."""
    width = masks.shape[1]
    for g in range(masks.shape[0]):
        count = 0
        for a in range(width):
            count += masks[g, a] != 0  # no branch: numba makes it a vector sum
        k = int(draws[g] * count)
        out[g] = -1
        start = 0
        while start + 16 <= width:  # whole blocks of 16 skipped by their sum: twice as fast as one by one
            block = 0
            for a in range(start, start + 16):
                block += masks[g, a] != 0
            if block > k:
                break
            k -= block
            start += 16
        for a in range(start, width):
            k -= masks[g, a] != 0
            if k < 0:
                out[g] = a
                break


def random_legal(masks, rng: np.random.Generator) -> np.ndarray:
    """(N,) int64: a uniformly random legal action per row of the (N, A) masks (nonzero = legal),
    -1 in a row with none. One ``rng.random(N)`` draw, the k-th legal action for k = int(draw *
    legal count)."""
    masks = np.asarray(masks)
    out = np.empty(len(masks), np.int64)
    kth_legal(masks, rng.random(len(masks)), out)
    return out
