"""Tic-tac-toe as an :class:`agents.game.Game`: a complete example of training our AlphaZero on your
own game, with no change to the package.

    python train.py --game examples.tictactoe_game:TicTacToeGame --run tictactoe_az --minutes 4 \\
        --eval-opponents random,perfect --workers 1
    python evaluate.py --game examples.tictactoe_game:TicTacToeGame \\
        --agent az:checkpoints/tictactoe_az/best.pt --agent random --games 50

(run from the repository root, or with it on ``PYTHONPATH``: the checkpoint stores the reference
``examples.tictactoe_game:TicTacToeGame`` and every process that loads it imports this module.)

A state is 10 int8s: the cells 0..8 row by row (0 empty, 1 = X of the first player, 2 = O of the
second), then the ply (moves made; player ``ply % 2`` is to move). Action k puts the mover's mark
on cell k, read the same from either side, so ``view_to_board`` is the identity. The network sees
two 3x3 planes from the mover's view: its own marks, then the opponent's.

The exact player (``perfect_player``) is a negamax over all positions, memoised (5478 reachable):
``make_agent("perfect", TicTacToeGame())`` plays a best move, random among ties, and
``evaluate.py --game examples.tictactoe_game:TicTacToeGame`` grades agents with its move values.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from agents.base import BestValueAgent
from agents.game import Game, GameError

LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]])
PLY = 9  # index of the ply in a state


def _dihedral() -> np.ndarray:
    """(8, 9) the board's symmetries as gathers: cell j of the transformed board is cell g[j]."""
    grid = np.arange(9).reshape(3, 3)
    return np.stack([np.rot90(g, k).reshape(-1) for g in (grid, grid.T) for k in range(4)])


class TicTacToeGame(Game):
    """Tic-tac-toe on 3x3: three in a row wins, a full board without one is a draw."""

    name = "tictactoe"
    title = "Tic-tac-toe"
    perfect_player = "examples.tictactoe_game:TicTacToePerfect.from_spec"
    num_actions = 9
    state_shape = (10,)
    obs_shape = (3, 3, 2)
    max_game_length = 9

    def __init__(self):
        cells = _dihedral()
        self._obs_gather = (2 * cells[:, :, None] + np.arange(2)).reshape(8, 18)  # obs flat index = 2 * cell + plane
        self._action_gather = cells

    def as_state(self, state) -> np.ndarray:
        """Also takes a board string such as ``"X.O/.X./..O"`` (``/`` optional)."""
        if isinstance(state, str):
            text = state.replace("/", "").upper()
            if len(text) != 9 or set(text) - set(".XO"):
                raise GameError(f"a tic-tac-toe board is 9 of '.', 'X', 'O', got {state!r}")
            cells = [".XO".index(c) for c in text]
            a = np.array([*cells, 9 - cells.count(0)], np.int8)
        else:
            a = super().as_state(state)
        x, o = int((a[:9] == 1).sum()), int((a[:9] == 2).sum())
        if ((a[:9] < 0) | (a[:9] > 2)).any() or x - o not in (0, 1) or a[PLY] != x + o:
            raise GameError(f"not a tic-tac-toe position: cells 0 (empty), 1 (X) or 2 (O), X first (as many "
                            f"Xs as Os, or one more) and the last entry the number of marks, got {a.tolist()}")
        return a

    def describe(self) -> str:
        return "3x3"

    # -- rules
    def initial_states(self, n):
        return np.zeros((n, 10), np.int8)

    def _wins(self, s, mark) -> np.ndarray:
        return (s[:, LINES] == mark).all(axis=2).any(axis=1)

    def terminal(self, states):
        s = self.checked_states(states)
        return self._wins(s, 1) | self._wins(s, 2) | (s[:, PLY] >= 9)

    def legal_masks(self, states):
        s = self.checked_states(states)
        return (s[:, :9] == 0) & ~self.terminal(s)[:, None]

    def apply(self, states, actions):
        s, a = self.checked_moves(states, actions)
        legal = self.legal_masks(s)
        ok = (a >= 0) & (a < 9)
        ok[ok] = legal[np.flatnonzero(ok), a[ok]]
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise GameError(f"state {i}: illegal move {int(a[i])} in {s[i].tolist()}")
        out = s.copy()
        out[np.arange(len(s)), a] = 1 + s[:, PLY] % 2
        out[:, PLY] += 1
        return out

    def to_play(self, states):
        return (self.checked_states(states)[:, PLY] % 2).astype(np.int8)

    def returns(self, states):
        s = self.checked_states(states)
        return (self._wins(s, 1).astype(np.float32) - self._wins(s, 2)).astype(np.float32)

    def plies(self, states):
        return self.checked_states(states)[:, PLY].astype(np.int64)

    # -- network view
    def observations(self, states):
        s = self.checked_states(states)
        mine = (1 + s[:, PLY] % 2)[:, None]
        theirs = 3 - mine
        return np.stack([s[:, :9] == mine, s[:, :9] == theirs], axis=-1).astype(np.int8).reshape(-1, 3, 3, 2)

    def symmetries(self):
        return self._obs_gather, self._action_gather

    def heuristic(self, states):
        """The exact result on finished games, 0 elsewhere (the greedy baseline takes a win in one)."""
        return self.returns(states).astype(np.float64)


# -- the exact solver ----------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _value(cells: tuple) -> int:
    """Value for the player to move (+1 win, 0 draw, -1 loss) with perfect play from ``cells``."""
    for line in LINES:
        if cells[line[0]] and cells[line[0]] == cells[line[1]] == cells[line[2]]:
            return -1  # the previous mover made a line
    mark = 1 + (9 - cells.count(0)) % 2
    children = [cells[:k] + (mark,) + cells[k + 1:] for k in range(9) if not cells[k]]
    return max((-_value(c) for c in children), default=0)  # no move left: a draw


def move_values(game, state) -> np.ndarray:
    """(9,) int64 each move's exact value for the mover (+1, 0, -1), -10**6 on illegal moves."""
    s = np.asarray(state, np.int64)
    legal = game.legal_masks(s[None].astype(np.int8))[0]
    out = np.full(9, -10**6, np.int64)
    mark = 1 + int(s[PLY]) % 2
    for k in np.flatnonzero(legal):
        child = tuple(int(v) for v in s[:9])
        out[k] = -_value(child[:k] + (mark,) + child[k + 1:])
    return out


class TicTacToePerfect(BestValueAgent):
    """A move of best exact value, random among ties (``make_agent("perfect", TicTacToeGame())``)."""

    move_values = staticmethod(move_values)
