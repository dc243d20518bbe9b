"""Rules of *Jumping Farther & Farther* (Leroy Quet, 2006/2008).

An ``n x n`` grid (default 4). The integers 1, 2, 3, ... are placed in order, one per move; in the
two-player game player 1 (index 0) places the odd ones and player 2 (index 1) the even ones. 1 goes
on any square; each next integer goes on an empty square any number of squares away from the
previous integer along one of the 8 queen lines (jumping over filled squares). The player placing
``m`` scores a point when the jump ``m-1 -> m`` is strictly longer (Chebyshev distance along the
line) than the jump ``m-2 -> m-1``. Placing 2 never scores (there is no earlier jump to beat).
Play ends when the last-placed integer has no empty square on any of its 8 lines.
In solitaire one person makes every move; the score is the total of the points.

Squares are numbered ``sq = r * n + c``; an action is the target square. The state is small:
occupancy bitmask, last square (-1 before the first move), last jump length (0 before the second
move), the two scores and the ply (= number of integers placed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
MIN_N, MAX_N = 1, 7  # the solver packs (occupancy, last, jump, value) into a uint64 (checked there)


class JumpingError(ValueError):
    """Bad input (size, square, option)."""


class IllegalMoveError(JumpingError):
    """A move the rules do not allow."""


def check_n(n) -> int:
    """``n`` as an int in MIN_N..MAX_N; a bool, float or string is refused, not read as 1, 4 or 5."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or not MIN_N <= n <= MAX_N:
        raise JumpingError(f"n must be an int in {MIN_N}..{MAX_N}, got {n!r}")
    return int(n)


@lru_cache(maxsize=None)
def rays(n: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``rays(n)[sq][d]`` = the squares from ``sq`` in direction ``DIRECTIONS[d]``, nearest first
    (the k-th one, 0-based, is at distance k + 1)."""
    def line(sq: int, dr: int, dc: int) -> tuple[int, ...]:
        r, c = divmod(sq, n)
        return tuple((r + k * dr) * n + c + k * dc for k in range(1, n)
                     if 0 <= r + k * dr < n and 0 <= c + k * dc < n)

    return tuple(tuple(line(sq, dr, dc) for dr, dc in DIRECTIONS) for sq in range(n * n))


def rays_array(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The rays as arrays for numba: ``ray_sq[sq, d, k]`` (-1 past the edge), ``ray_len[sq, d]``."""
    rs = rays(n)
    ray_sq = np.full((n * n, 8, max(n - 1, 1)), -1, dtype=np.int64)
    ray_len = np.zeros((n * n, 8), dtype=np.int64)
    for sq in range(n * n):
        for d in range(8):
            line = rs[sq][d]
            ray_len[sq, d] = len(line)
            ray_sq[sq, d, : len(line)] = line
    return ray_sq, ray_len


def targets(n: int, occ: int, last: int) -> list[tuple[int, int]]:
    """(empty square, jump length) on the queen lines of square ``last``, by direction, nearest first."""
    return [(sq, k + 1) for line in rays(n)[last] for k, sq in enumerate(line) if not occ >> sq & 1]


def jump_length(n: int, a: int, b: int) -> int | None:
    """The distance from square ``a`` to ``b`` if they share a queen line, else None."""
    dr, dc = abs(b // n - a // n), abs(b % n - a % n)
    return max(dr, dc) if a != b and (dr == 0 or dc == 0 or dr == dc) else None


def symmetries(n: int) -> list[tuple[int, ...]]:
    """The 8 dihedral permutations of the squares, old square -> new (they preserve queen lines and
    distances): k & 4 transposes the board, k & 1 flips the rows, k & 2 the columns, in that order."""
    perms = []
    for k in range(8):
        grid = np.arange(n * n).reshape(n, n)  # grid[new square] = old square
        for bit, flip in ((4, np.transpose), (1, np.flipud), (2, np.fliplr)):
            if k & bit:
                grid = flip(grid)
        perms.append(tuple(np.argsort(grid, axis=None).tolist()))
    return perms


def orbit_representatives(n: int) -> list[int]:
    """The smallest square of each orbit under the dihedral group (distinct first moves)."""
    syms = symmetries(n)
    return sorted({min(p[sq] for p in syms) for sq in range(n * n)})


@dataclass(frozen=True)
class State:
    n: int = 4
    occ: int = 0  # bit sq set iff square sq is filled
    last: int = -1  # square of the last integer placed, -1 at the start
    jump: int = 0  # length of the last jump, 0 before the second integer is placed
    scores: tuple[int, int] = (0, 0)  # points of player 1 (odd) and player 2 (even)
    ply: int = 0  # integers placed so far; the next one is ply + 1

    @property
    def to_move(self) -> int:
        """0 (player 1, places odd integers) or 1 (player 2, even)."""
        return self.ply % 2

    @property
    def next_number(self) -> int:
        return self.ply + 1

    def filled(self, sq: int) -> bool:
        return bool(self.occ >> sq & 1)

    def legal_moves(self) -> list[tuple[int, int]]:
        """(target square, jump length) of every legal move, by square."""
        if self.last < 0:
            return [(sq, 0) for sq in range(self.n * self.n)]
        return sorted(targets(self.n, self.occ, self.last))

    def action_mask(self) -> np.ndarray:
        mask = np.zeros(self.n * self.n, dtype=np.int8)
        mask[[sq for sq, _ in self.legal_moves()]] = 1
        return mask

    def is_terminal(self) -> bool:
        return self.last >= 0 and not targets(self.n, self.occ, self.last)

    def apply(self, target: int) -> tuple["State", int]:
        """Place the next integer on ``target`` -> (new state, points the mover scored)."""
        n = self.n
        try:
            t = int(target)
        except (TypeError, ValueError) as e:
            raise IllegalMoveError(f"square must be an int, got {target!r}") from e
        if t != target or not 0 <= t < n * n:
            raise IllegalMoveError(f"square {target!r} out of range 0..{n * n - 1}")
        if self.occ >> t & 1:
            raise IllegalMoveError(f"square {t} {divmod(t, n)} is filled")
        if self.last < 0:
            d = 0
        else:
            d = jump_length(n, self.last, t)
            if d is None:
                raise IllegalMoveError(
                    f"square {t} {divmod(t, n)} is not on a queen line of {self.ply} at {divmod(self.last, n)}"
                )
        pts = int(0 < self.jump < d)
        scores = list(self.scores)
        scores[self.to_move] += pts
        new = replace(self, occ=self.occ | 1 << t, last=t, jump=d, scores=tuple(scores), ply=self.ply + 1)
        return new, pts


def initial_state(n: int = 4) -> State:
    return State(n=check_n(n))


def play(n: int, squares) -> State:
    """The state after placing 1, 2, ... on ``squares`` in order (raises IllegalMoveError)."""
    s = initial_state(n)
    for sq in squares:
        if s.is_terminal():
            raise IllegalMoveError(f"the game is over after {s.ply} integers")
        s, _ = s.apply(sq)
    return s

