# noqa: D212, D415
"""
# Black Path

The Black Path Game (Larry Black, 1960) on an R x C board (default 4x4), as a PettingZoo AEC env.

| Import             | `from highway_env import blackpath_v0`           |
|--------------------|--------------------------------------------------|
| Actions            | Discrete                                         |
| Parallel API       | No                                               |
| Manual Control     | No                                               |
| Agents             | `agents= ['player_0', 'player_1']`               |
| Agents             | 2                                                |
| Action Shape       | (1,)                                             |
| Action Values      | Discrete(3)                                      |
| Observation Shape  | (R, C, 7) plus a (3,) action mask                |
| Observation Values | [0,1]                                            |

`player_0` (player 1 of ``highway_env.blackpath.game``, the rules) moves first; whoever runs the
path into the edge loses.

### Observation Space

A dict with `'observation'` and `'action_mask'`. `observation` is an int8 array (R, C, 7), the
same for both agents (the game is symmetric between them: the position is all that matters):
channels 0..2 are one-hot the tile T1..T3 on each square; channels 3..6 are one-hot, on the
square at the end of the path only, the side the path enters it by (top, right, bottom, left).

`action_mask` (3,) int8: all ones for the agent to move while the game is on (every tile is
legal), all zeros otherwise (as in the classic PettingZoo games).

### Action Space

`action` = tile - 1: 0 = T1 (top-left, bottom-right), 1 = T2 (top-right, bottom-left),
2 = T3 (top-bottom, left-right), placed on the square at the end of the path.

### Rewards

At the end only: -1 to the player whose tile ran the path into the edge, +1 to the other.

### Infos

`ply`, `square` (e.g. `"B4"`, `""` at the end), `entry` (side name, `""` at the end),
`winner` (`"player_0"`/`"player_1"`, `""` while the game is on). Empty strings, not None: Tianshou 2
takes a None in its replay buffer for a NaN (see `highway_env.highway.highway`'s infos).

### Arguments / reset options

`env(rows=4, cols=4, start="A1:top", render_mode=None)`. `reset(options={"moves": "A1-T2 B1-T2"})`
starts from the position after those moves (refused if the game is over after them).

### Rendering

`"human"` prints the text picture, `"ansi"` returns it (``game.to_ansi``), `"rgb_array"` returns an
H x W x 3 uint8 image (Pillow): tiles as grey arcs / lines, the path in red, the start side in
green, the square to fill in yellow.

### Version History

* v0: Initial version
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle

from highway_env.aec import TwoPlayerAEC, action_index, classic_wrappers
from highway_env.blackpath import game
from highway_env.blackpath.game import BlackPathError, State, to_ansi
from highway_env.render import A_COLOUR, BACKGROUND, RENDER_MODES, TEXT

AGENTS = ("player_0", "player_1")
NUM_ACTIONS = 3
CHANNELS = 7


def env(**kwargs):
    return classic_wrappers(raw_env(**kwargs))


# ----------------------------------------------------------------------------- image

_GRID = (90, 90, 90)
_TILE = (150, 150, 150)
_START = (30, 150, 60)
_CURRENT = (255, 236, 150)


def to_rgb(state: State, cell_px: int = 64) -> np.ndarray:
    """An H x W x 3 uint8 picture of the board (Pillow)."""
    from PIL import Image, ImageDraw, ImageFont

    rows, cols = state.rows, state.cols
    m = cell_px // 2  # margin
    caption_h = 20
    w, h = cols * cell_px + 2 * m, rows * cell_px + 2 * m + caption_h
    img = Image.new("RGB", (w, h), BACKGROUND)
    d = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    half = cell_px // 2
    thin, thick = max(2, cell_px // 20), max(4, cell_px // 9)

    def corner(sq):
        r, c = divmod(sq, cols)
        return m + c * cell_px, m + r * cell_px

    if not state.is_over:
        x0, y0 = corner(state.square)
        d.rectangle((x0, y0, x0 + cell_px, y0 + cell_px), fill=_CURRENT)
    for r in range(rows + 1):
        d.line((m, m + r * cell_px, m + cols * cell_px, m + r * cell_px), fill=_GRID, width=1)
    for c in range(cols + 1):
        d.line((m + c * cell_px, m, m + c * cell_px, m + rows * cell_px), fill=_GRID, width=1)
    for c in range(cols):
        d.text((m + c * cell_px + half - 3, 4), chr(ord("A") + c), fill=TEXT, font=font)
    for r in range(rows):
        d.text((6, m + r * cell_px + half - 5), str(r + 1), fill=TEXT, font=font)

    on_path = {(s.square, frozenset((s.enter, s.exit))) for s in state.path()}

    def draw_segment(sq, pair, colour, width):
        x0, y0 = corner(sq)
        x1, y1 = x0 + cell_px, y0 + cell_px
        if pair == {game.TOP, game.BOTTOM}:
            d.line((x0 + half, y0, x0 + half, y1), fill=colour, width=width)
        elif pair == {game.LEFT, game.RIGHT}:
            d.line((x0, y0 + half, x1, y0 + half), fill=colour, width=width)
        else:
            cx, cy, a0, a1 = {
                frozenset((game.TOP, game.LEFT)): (x0, y0, 0, 90),
                frozenset((game.BOTTOM, game.RIGHT)): (x1, y1, 180, 270),
                frozenset((game.TOP, game.RIGHT)): (x1, y0, 90, 180),
                frozenset((game.BOTTOM, game.LEFT)): (x0, y1, 270, 360),
            }[pair]
            d.arc((cx - half, cy - half, cx + half, cy + half), a0, a1, fill=colour, width=width)

    for sq, t in enumerate(state.tiles):
        if not t:
            continue
        pairs = {frozenset((a, game.EXIT[t][a])) for a in range(4)}
        # draw the off-path segment first so the path stays on top at a crossing
        for pair in sorted(pairs, key=lambda p: (sq, p) in on_path):
            path = (sq, pair) in on_path
            draw_segment(sq, pair, A_COLOUR if path else _TILE, thick if path else thin)
    # the start side
    x0, y0 = corner(state.start_square)
    sx, sy = {game.TOP: (half, 0), game.RIGHT: (cell_px, half), game.BOTTOM: (half, cell_px),
              game.LEFT: (0, half)}[state.start_side]
    rad = max(3, cell_px // 10)
    d.ellipse((x0 + sx - rad, y0 + sy - rad, x0 + sx + rad, y0 + sy + rad), fill=_START)
    d.text((m, h - caption_h), state.status(), fill=TEXT, font=font)
    return np.asarray(img, dtype=np.uint8).copy()


# ----------------------------------------------------------------------------- the env

class raw_env(TwoPlayerAEC, EzPickle):
    action_error = BlackPathError  # raised by env()'s wrappers for an action of the wrong type
    metadata = {"render_modes": list(RENDER_MODES), "name": "blackpath_v0", "is_parallelizable": False,
                "render_fps": 2}

    def __init__(self, rows: int = 4, cols: int = 4, start: str = "A1:top", render_mode: str | None = None):
        EzPickle.__init__(self, rows, cols, start, render_mode)
        super().__init__()
        self._initial = game.new_game(rows, cols, start)  # validates the size and the start
        self.rows, self.cols, self.start = rows, cols, start
        self._state = self._initial
        self._setup(AGENTS, render_mode, RENDER_MODES,
                    spaces.Box(low=0, high=1, shape=(rows, cols, CHANNELS), dtype=np.int8), NUM_ACTIONS)

    @property
    def game_state(self) -> State:
        """The current position (an immutable ``game.State``)."""
        return self._state

    def state(self) -> np.ndarray:
        s = self._state
        obs = np.zeros((s.rows * s.cols, CHANNELS), dtype=np.int8)
        for sq, t in enumerate(s.tiles):
            if t:
                obs[sq, t - 1] = 1
        if not s.is_over:
            obs[s.square, 3 + s.entry] = 1
        return obs.reshape(s.rows, s.cols, CHANNELS)

    def observe(self, agent):
        on = agent == self.agent_selection and not self._state.is_over
        mask = np.full(NUM_ACTIONS, 1 if on else 0, dtype=np.int8)
        return {"observation": self.state(), "action_mask": mask}

    def _set_infos(self) -> None:
        s = self._state
        winner = "" if s.winner is None else AGENTS[s.winner - 1]
        info = {"ply": s.ply, "square": "" if s.is_over else s.square_name(),
                "entry": "" if s.is_over else game.SIDES[s.entry], "winner": winner}
        self.infos = {a: dict(info) for a in self.agents}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        a = action_index(agent, action, NUM_ACTIONS, BlackPathError)
        self._begin_move(agent)
        self._state = self._state.play(a + 1)
        other = AGENTS[1 - AGENTS.index(agent)]
        self._end_move(other, {agent: -1, other: 1} if self._state.is_over else None)

    def reset(self, seed=None, options=None):
        state = self._initial
        if options and options.get("moves"):
            state = game.replay(options["moves"], self.rows, self.cols, self.start)
            if state.is_over:
                raise BlackPathError("options['moves'] end the game: there is no move left to play")
        self._state = state
        self._start(AGENTS[state.ply % 2])

    def _text(self) -> str:
        return to_ansi(self._state)

    def _image(self) -> np.ndarray:
        return to_rgb(self._state)
