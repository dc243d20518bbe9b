# noqa: D212, D415
"""
# Highway

A two-player board game (Cabannes, 1998) on a 4x4 board, as a PettingZoo AEC environment.

| Import             | `from highway_env import highway_v0`             |
|--------------------|--------------------------------------------------|
| Actions            | Discrete                                         |
| Parallel API       | No                                               |
| Manual Control     | No                                               |
| Agents             | `agents= ['player_0', 'player_1']`               |
| Agents             | 2                                                |
| Action Shape       | (1,)                                             |
| Action Values      | Discrete(256)                                    |
| Observation Shape  | (4, 4, 16) plus a (256,) action mask             |
| Observation Values | [0,1]                                            |


The pieces are the numbers 1..16, each used once. Player A (`player_0`) moves first and the players
alternate; a move writes one unused number into one empty cell, so every game lasts exactly 16
moves. On the full board, `min A` is the cheapest sum along a path of 7 cells from the top-left to
the bottom-right corner moving right/down, `min B` the cheapest from the bottom-left to the
top-right moving up/right. A wins if `min A < min B`, B wins if `min B < min A`, else it is a draw.
The rules live in `highway_env.core` (the plain reference) and `highway_env.highway.batch_rules`
(the batched kernel this env steps through).

### Observation Space

A dict: `observation`, int8 (4, 4, 16), `observation[r, c, k] == 1` iff number `k + 1` is in cell
`(r, c)` of the board **as seen by the observing player**: `player_0` (A) sees the board as it is,
`player_1` (B) sees it turned a quarter clockwise, `(r, c) -> (c, 3 - r)` (`core.QUARTER_TURN`), so
that its paths run like A's and one network can play both sides; and `action_mask`, int8 (256,), 1
where the action is legal, all zeros for the agent whose turn it is not (and at the end).

### Action Space

`action = (number - 1) * 16 + cell`, `cell = r * 4 + c` (`core.encode_action` / `decode_action`).
Only integral actions are accepted (an int, a numpy integer or a 0-d integer array): a float (even
`3.0`), a bool or a string raises `core.HighwayError` naming the value. Through `env()` an illegal
move ends the game with -1 for the offender and 0 for the other agent, and an integer out of range
raises `AssertionError`; `raw_env` raises `core.IllegalMoveError` / `core.HighwayError`.

### Frames

`frame="absolute"` (the default): the mask and the actions are on the real board for both agents.
`frame="player"`: the observation, the mask **and** the actions are all in the mover's frame (for
`player_1` the quarter turn is applied to all three, as PettingZoo's chess flips the board and the
moves for black), so one shared policy can act for both seats. Infos, `state()`, `board` and
rendering stay absolute. To convert: `to_player_frame(action, player)`, `from_player_frame`,
`cell_to_player_frame`, `cell_from_player_frame`, `mask_to_player_frame` from this module.

### Rewards

Only at the end of the game: +1 to the winner and -1 to the loser; 0 to both for a draw.

### Infos

The same plain-Python dict for both agents, in absolute terms: `ply`, `bounds = {"min_a": [lo, hi],
"min_b": [lo, hi], "margin": [lo, hi]}` (what the board still allows, `core.Board.bounds`; exact
when full), `winner` (`"A"` or `"B"` once the game is won; `""` while it is on and for a draw);
on the full board also `min_a`, `min_b` and `margin` (= `min_b - min_a`, positive if A won).
Libraries that stack the infos of many games (Tianshou's replay buffers) need every value to keep
one shape, none to be `None` (Tianshou 2 takes it for a NaN), and a key that appears only at the end
to be a number (earlier rows are filled with 0). So the cheapest paths, of which a board can have
several, are not in the infos but in `env.unwrapped.board.outcome()` (`a_paths`, `b_paths`: every
cheapest path, 7 cells each; there `winner` is `None` for a draw).

### Reset options

`options={"board": ...}` starts from a position: a board string (16 comma-separated numbers or the
4-line grid, 0 = empty), a `core.Board` or 16 integers in 0..16, each number at most once; anything
else (0.5, True, "5" as a cell, a full board) raises `HighwayError` naming it. The side to move
follows from the filled cells. The game is deterministic; `seed` is accepted for the API's sake.

### Rendering

`render_mode` `"human"` (prints the text), `"ansi"` (returns it) or `"rgb_array"` (an image); see
`highway_env.render`.

### Version History

* v0: Initial version (0.1.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle

from highway_env import core
from highway_env.aec import TwoPlayerAEC, action_index, classic_wrappers, masked_space
from highway_env.core import CELLS, NUM_ACTIONS, Board, HighwayError, IllegalMoveError, illegal_move_error
from highway_env.highway import batch_rules
from highway_env.highway.batch_rules import (FRAME_ACTIONS, FRAME_ACTIONS_INV, FRAMES, PLANES_DTYPE,  # noqa: F401
                                             PLANES_SHAPE, PLAYER_FRAME, PLAYER_FRAME_INV, check_frame)
from highway_env.render import RENDER_MODES, board_to_ansi, board_to_rgb

AGENTS = ("player_0", "player_1")

# ----------------------------------------------------------------------------- player frames
# The maps themselves are the rules kernel's (batch_rules.PLAYER_FRAME, FRAME_ACTIONS); these are
# their plain-Python views for per-step lookups.

#: PLAYER_FRAMES[p][cell] = where an absolute cell appears in player p's observation.
PLAYER_FRAMES: tuple[tuple[int, ...], tuple[int, ...]] = tuple(tuple(f.tolist()) for f in PLAYER_FRAME)
_ACTION_TO = tuple(t.tolist() for t in FRAME_ACTIONS)
_ACTION_FROM = tuple(t.tolist() for t in FRAME_ACTIONS_INV)


def observation_space() -> spaces.Dict:
    """What an agent observes in every Highway env (AEC, Gymnasium, vector): its planes (``state()``'s
    space too) and its action mask. A fresh space each call (a space holds its own generator)."""
    return masked_space(spaces.Box(low=0, high=1, shape=PLANES_SHAPE, dtype=PLANES_DTYPE), NUM_ACTIONS)


def observations(boards: np.ndarray, frame: str = "absolute", seat: int = -1) -> dict[str, np.ndarray]:
    """Stacked observations of ``boards`` (N, 16) int8, the vector env's and the benchmark's: ``seat``'s
    planes (-1: each mover's, as ``batch_rules.observe_planes``) and the mover's mask in ``frame``."""
    mask = batch_rules.masks(boards, frame == "player")
    return {"observation": batch_rules.planes(boards, seat), "action_mask": mask.view(np.int8)}


def _player(player: int | str) -> int:
    if isinstance(player, str):
        if player not in AGENTS:
            raise HighwayError(f"unknown agent {player!r}; expected one of {AGENTS}")
        return AGENTS.index(player)
    if player not in (0, 1):
        raise HighwayError(f"player must be 0 (A), 1 (B) or an agent name, got {player!r}")
    return int(player)


def _cell(cell: int) -> int:
    if not 0 <= cell < CELLS:
        raise HighwayError(f"cell {cell!r} out of range 0..{CELLS - 1}")
    return cell


def _action(action: int) -> int:
    number, cell = core.decode_action(action)  # raises HighwayError naming a bad action
    return (number - 1) * CELLS + cell


def cell_to_player_frame(cell: int, player: int | str) -> int:
    """The cell of ``player``'s observation that shows absolute ``cell``."""
    return PLAYER_FRAMES[_player(player)][_cell(cell)]


def cell_from_player_frame(cell: int, player: int | str) -> int:
    """The absolute cell shown at ``cell`` of ``player``'s observation."""
    return int(PLAYER_FRAME_INV[_player(player), _cell(cell)])


def to_player_frame(action: int, player: int | str) -> int:
    """An absolute action -> the same move in ``player``'s frame (identity for player 0)."""
    return _ACTION_TO[_player(player)][_action(action)]


def from_player_frame(action: int, player: int | str) -> int:
    """An action in ``player``'s frame -> the absolute action to pass to ``step``."""
    return _ACTION_FROM[_player(player)][_action(action)]


def mask_to_player_frame(mask: np.ndarray, player: int | str) -> np.ndarray:
    """An absolute action mask (256,) -> the same mask indexed by actions in ``player``'s frame."""
    mask = np.asarray(mask)
    if mask.shape != (NUM_ACTIONS,):
        raise HighwayError(f"mask must have shape ({NUM_ACTIONS},), got {mask.shape}")
    return mask[FRAME_ACTIONS_INV[_player(player)]]


def board_from_option(value: Any) -> Board:
    """``options["board"]`` -> Board: a string (``core.parse_board``), a Board, or a sequence of 16
    integers (ints or numpy integers) in 0..16, each number at most once. Anything else (0.5, True,
    "5" as a cell, 15 or 17 cells) raises HighwayError naming the bad value; nothing is truncated."""
    try:
        if isinstance(value, Board):
            return value
        if isinstance(value, str):
            return core.parse_board(value)
        try:
            items = list(value)
        except TypeError:
            raise HighwayError(f"must be a board string, a Board or 16 integers, got {value!r}") from None
        return Board(tuple(core.integral(v, f"cell {i}") for i, v in enumerate(items)))
    except HighwayError as e:
        raise HighwayError(f"options['board']: {e}") from None


def env(**kwargs):
    return classic_wrappers(raw_env(**kwargs))


class raw_env(TwoPlayerAEC, EzPickle):
    metadata = {"render_modes": list(RENDER_MODES), "name": "highway_v0", "is_parallelizable": False, "render_fps": 2}

    def __init__(self, render_mode: str | None = None, frame: str = "absolute"):
        EzPickle.__init__(self, render_mode=render_mode, frame=frame)
        super().__init__()
        self.frame = check_frame(frame)
        self._player_frame = frame == "player"
        self._setup(AGENTS, render_mode, RENDER_MODES, observation_space()["observation"], NUM_ACTIONS)

        # game state: the board as a batch of one for the rules kernel (batch_rules), and the legal
        # mask and bounds it derives after each move (observations are built when asked for)
        self._boards = np.zeros((1, CELLS), dtype=np.int8)
        self._legal = np.zeros((1, NUM_ACTIONS), dtype=np.bool_)
        self._mask = self._legal[0].view(np.int8)  # the same memory, as the int8 mask
        self._bounds = np.zeros((1, 4), dtype=np.int64)  # min_a lo, hi, min_b lo, hi
        self._zero_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._ply = 0
        self._outcome: core.Outcome | None = None

    # -- a copy that goes on from the same position (HighwayGymEnv's pickling and deepcopy)
    def _live_state(self) -> dict:
        """Everything this env holds but the view of its legal mask (a pickle would copy it apart).
        ``raw_env`` itself pickles as EzPickle's fresh env, as PettingZoo's classic envs do."""
        return {k: v for k, v in self.__dict__.items() if k != "_mask"}

    @classmethod
    def _from_live_state(cls, state: dict) -> "raw_env":
        env = cls.__new__(cls)
        env.__dict__.update(state)
        env._mask = env._legal[0].view(np.int8)
        return env

    # -- views of the state
    @property
    def board(self) -> Board:
        """The current position as a ``core.Board`` (absolute frame)."""
        return Board(tuple(self._boards[0].tolist()))

    def observe(self, agent):
        p = AGENTS.index(agent)
        if agent != self.agent_selection or self._ply == CELLS:
            mask = self._zero_mask.copy()
        elif self._player_frame:
            mask = self._mask[FRAME_ACTIONS_INV[p]]  # a gather: a fresh array
        else:
            mask = self._mask.copy()
        # rebuilt: no slower a step than kept move by move
        return {"observation": batch_rules.planes(self._boards, p)[0], "action_mask": mask}

    def action_mask(self, agent) -> np.ndarray:
        """``agent``'s legal actions now, int8 (256,), in the env's frame (all zeros when it is not
        ``agent``'s turn); the same as ``observe(agent)["action_mask"]``."""
        return self.observe(agent)["action_mask"]

    def to_absolute(self, agent, action) -> int:
        """An action of ``agent`` in the env's frame -> the action on the real board."""
        a = action_index(agent, action, NUM_ACTIONS, HighwayError)
        return _ACTION_FROM[AGENTS.index(agent)][a] if self._player_frame else a

    def from_absolute(self, agent, action: int) -> int:
        """An action on the real board -> the same move as ``agent`` plays it in the env's frame."""
        a = action_index(agent, action, NUM_ACTIONS, HighwayError)
        return _ACTION_TO[AGENTS.index(agent)][a] if self._player_frame else a

    def state(self) -> np.ndarray:
        """The board one-hot in the absolute frame, shape (4, 4, 16) (= player_0's observation)."""
        return batch_rules.planes(self._boards, 0)[0]

    def _set_infos(self) -> None:
        """Fresh info dicts (one per agent, sharing no objects) for the current position."""
        a_lo, a_hi, b_lo, b_hi = self._bounds[0].tolist()  # exact on a full board
        o = self._outcome
        self.infos = {}
        for agent in self.agents:
            # no paths (their number varies), no None, a string from the start: see the module doc
            info = {"ply": self._ply,
                    "bounds": {"min_a": [a_lo, a_hi], "min_b": [b_lo, b_hi], "margin": [b_lo - a_hi, b_hi - a_lo]},
                    "winner": "" if o is None else o.winner or ""}
            if o is not None:
                info.update(min_a=o.min_a, min_b=o.min_b, margin=o.margin)
            self.infos[agent] = info

    # -- moves
    def _derive(self) -> None:
        """Legal mask and path bounds of the current board, from the rules kernel."""
        batch_rules.legal_masks(self._boards, False, self._legal)
        batch_rules.bounds(self._boards, self._bounds)

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        a = action_index(agent, action, NUM_ACTIONS, HighwayError)
        me = AGENTS.index(agent)
        if self._player_frame:
            a = _ACTION_FROM[me][a]
        if not self._mask[a]:
            frame = f" (action {action!r} in {agent}'s frame)" if self._player_frame else ""
            raise IllegalMoveError(f"{agent}: {illegal_move_error(self._boards[0], a)}{frame}")

        number, cell = divmod(a, CELLS)
        self._begin_move(agent)
        self._boards[0, cell] = number + 1
        self._ply += 1
        self._derive()
        final = None
        if self._ply == CELLS:
            self._outcome = self.board.outcome()
            value = self._outcome.value  # +1 A wins
            final = {AGENTS[0]: value, AGENTS[1]: -value}
        self._end_move(AGENTS[1 - me], final)

    def reset(self, seed=None, options=None):
        board = Board()
        if options and options.get("board") is not None:
            board = board_from_option(options["board"])
            if board.is_terminal():
                raise HighwayError("options['board'] is full: there is no move left to play")
        self._boards[0] = board.cells
        self._ply = board.ply
        self._outcome = None
        self._derive()

        self._start(AGENTS[self._ply % 2])

    def _text(self) -> str:
        return board_to_ansi(self.board)

    def _image(self) -> np.ndarray:
        return board_to_rgb(self.board)
