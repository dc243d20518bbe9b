# noqa: D212, D415
"""
# Jumping Farther & Farther

Two environments: the PettingZoo AEC env below (two players; ``from highway_env import
jumping_v0``) and :class:`SolitaireEnv`, a Gymnasium env where one player places every integer.

| Import             | `from highway_env import jumping_v0`             |
|--------------------|--------------------------------------------------|
| Actions            | Discrete                                         |
| Parallel API       | No                                               |
| Agents             | `agents= ['player_0', 'player_1']`               |
| Action Values      | Discrete(n*n): the target square `r * n + c`     |
| Observation Shape  | (n, n) plus a (n*n,) action mask                 |
| Observation Values | [0, n*n]                                         |

`player_0` places the odd integers (1, 3, ...), `player_1` the even ones; see
`highway_env.jumping.game` for the rules.

### Observation
A dict with `observation`: int16 (n, n) grid of the integers placed (0 = empty), the same for both
agents (it determines the whole state: the last square holds the largest integer), and
`action_mask`: int8 (n*n,), 1 on legal target squares for the agent to move (all zeros for the
other agent and at the end).

### Rewards
Only at the end: +1 to the player with the higher score, -1 to the other, 0 to both on a tie
(the sign of the score difference). Illegal moves through `env()` end the game with -1 for the
offender (PettingZoo's `TerminateIllegalWrapper`); `raw_env` raises `IllegalMoveError`.

### Infos
`infos[agent]` (same for both): `scores` [player_0, player_1], `ply`, `last` (square or -1),
`last_jump`, `points` (scored by the last move), `score_diff` (player_0 - player_1).

### Reset options
`options={"moves": [sq, ...]}` starts after placing 1, 2, ... on those squares. `n` is a
constructor argument (default 4).

### Rendering
`"human"` (prints), `"ansi"` (returns text), `"rgb_array"` (H x W x 3 uint8 image with the numbers,
the last one highlighted).
"""

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle

from highway_env.aec import TwoPlayerAEC, action_index, classic_wrappers, render_in_mode
from highway_env.jumping.game import IllegalMoveError, JumpingError, State, check_n, initial_state, play
from highway_env.render import A_COLOUR, B_COLOUR, BACKGROUND, EMPTY, GRID, RENDER_MODES, TEXT, font

AGENTS = ("player_0", "player_1")

_COLOURS = (A_COLOUR, B_COLOUR)  # odd (player_0) red, even (player_1) blue
_LAST = (255, 220, 120)


# ----------------------------------------------------------------------------- rendering

def render_ansi(state: State, numbers, solitaire: bool = False) -> str:
    n, (a, b) = state.n, state.scores

    def cell(sq: int) -> str:
        txt = str(numbers[sq] or ".").rjust(len(str(n * n)))
        return f"[{txt}]" if sq == state.last else f" {txt} "

    lines = ["".join(cell(r * n + c) for c in range(n)) for r in range(n)]
    status = f"score {a + b}" if solitaire else f"scores player_0 (odd) {a}, player_1 (even) {b}"
    if state.is_terminal():
        status += f"; game over after {state.ply}"
    else:
        who = "" if solitaire else f" by {AGENTS[state.to_move]}"
        status += f"; next {state.next_number}{who}, last jump {state.jump}"
    lines.append(status)
    return "\n".join(lines) + "\n"


def render_rgb(state: State, numbers, solitaire: bool = False, cell_px: int = 64) -> np.ndarray:
    from PIL import Image, ImageDraw

    n = state.n
    margin, caption = 8, 28
    size = n * cell_px + 2 * margin
    img = Image.new("RGB", (size, size + caption), BACKGROUND)
    draw = ImageDraw.Draw(img)
    big = font(cell_px // 2)
    small = font(14)
    for sq in range(n * n):
        r, c = divmod(sq, n)
        x0, y0 = margin + c * cell_px, margin + r * cell_px
        v = numbers[sq]
        fill = _LAST if sq == state.last else (EMPTY if v == 0 else (255, 255, 255))
        draw.rectangle([x0, y0, x0 + cell_px, y0 + cell_px], fill=fill, outline=GRID, width=2)
        if v:
            colour = TEXT if solitaire else _COLOURS[(v - 1) % 2]
            draw.text((x0 + cell_px / 2, y0 + cell_px / 2), str(v), fill=colour, font=big, anchor="mm")
    text = render_ansi(state, numbers, solitaire).strip().splitlines()[-1]
    draw.text((margin, size + 4), text, fill=TEXT, font=small)
    return np.asarray(img, dtype=np.uint8).copy()


def _replay(n: int, moves) -> tuple[State, list[int]]:
    """A reset's ``options["moves"]``: the position after them and its grid of numbers."""
    moves = list(moves)
    s = play(n, moves)
    if s.is_terminal():
        raise JumpingError("options['moves'] ends the game: there is no move left to play")
    numbers = [0] * (n * n)
    for i, sq in enumerate(moves, 1):
        numbers[int(sq)] = i
    return s, numbers


# ----------------------------------------------------------------------------- PettingZoo AEC

def env(**kwargs):
    return classic_wrappers(raw_env(**kwargs))


class raw_env(TwoPlayerAEC, EzPickle):
    action_error = JumpingError  # raised by env()'s wrappers for an action of the wrong type
    metadata = {"render_modes": list(RENDER_MODES), "name": "jumping_v0", "is_parallelizable": False,
                "render_fps": 2}

    def __init__(self, n: int = 4, render_mode: str | None = None):
        EzPickle.__init__(self, n, render_mode)
        super().__init__()
        self.n = check_n(n)
        cells = self.n * self.n
        self._setup(AGENTS, render_mode, RENDER_MODES,
                    spaces.Box(low=0, high=cells, shape=(self.n, self.n), dtype=np.int16), cells)
        self._state = initial_state(self.n)
        self._numbers = [0] * cells
        self._points = 0

    @property
    def game_state(self) -> State:
        return self._state

    def observe(self, agent):
        on = agent == self.agent_selection and not self._state.is_terminal()
        mask = self._state.action_mask() if on else np.zeros(self.n * self.n, dtype=np.int8)
        return {"observation": self.state(), "action_mask": mask}

    def state(self) -> np.ndarray:
        return np.array(self._numbers, dtype=np.int16).reshape(self.n, self.n)

    def _set_infos(self) -> None:
        s = self._state
        self.infos = {a: {"scores": list(s.scores), "score_diff": s.scores[0] - s.scores[1], "ply": s.ply,
                          "last": s.last, "last_jump": s.jump, "points": self._points} for a in self.agents}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        a = action_index(agent, action, self.n * self.n, JumpingError)  # strict: 2.0 or True raise
        try:
            new, pts = self._state.apply(a)
        except IllegalMoveError as e:
            raise IllegalMoveError(f"{agent}: {e}") from None
        self._begin_move(agent)
        self._state = new
        self._numbers[new.last] = new.ply
        self._points = pts
        s0, s1 = new.scores
        sign = (s0 > s1) - (s0 < s1)  # player_0's reward at the end
        final = {AGENTS[0]: sign, AGENTS[1]: -sign} if new.is_terminal() else None
        self._end_move(AGENTS[new.to_move], final)

    def reset(self, seed=None, options=None):
        self._state, self._numbers = _replay(self.n, (options or {}).get("moves") or [])
        self._points = 0
        self._start(AGENTS[self._state.to_move])

    def _text(self) -> str:
        return render_ansi(self._state, self._numbers)

    def _image(self) -> np.ndarray:
        return render_rgb(self._state, self._numbers)


# ----------------------------------------------------------------------------- Gymnasium solitaire

class SolitaireEnv(gymnasium.Env):
    """Solitaire: one player places every integer; reward = points scored by each move.

    Observation: int16 (n, n) grid of the integers placed (0 = empty). Action: target square.
    Legal moves: ``action_masks()`` (sb3-contrib's MaskablePPO convention) and
    ``info["action_mask"]``. An illegal action ends the episode with reward ``illegal_reward``
    (default -1) and ``info["illegal"] = True``. ``reset(options={"moves": [...]})`` starts after
    the given squares.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}

    def __init__(self, n: int = 4, render_mode: str | None = None, illegal_reward: float = -1.0):
        self.n = check_n(n)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise JumpingError(f"unknown render_mode {render_mode!r}; expected None or one of {RENDER_MODES}")
        self.render_mode = render_mode
        self.illegal_reward = float(illegal_reward)
        cells = self.n * self.n
        self.action_space = spaces.Discrete(cells)
        self.observation_space = spaces.Box(low=0, high=cells, shape=(self.n, self.n), dtype=np.int16)
        self._state = initial_state(self.n)
        self._numbers = [0] * cells
        self._over = False

    @property
    def game_state(self) -> State:
        return self._state

    @property
    def score(self) -> int:
        return self._state.scores[0] + self._state.scores[1]

    def _obs(self) -> np.ndarray:
        return np.array(self._numbers, dtype=np.int16).reshape(self.n, self.n)

    def action_masks(self) -> np.ndarray:
        if self._over or self._state.is_terminal():
            return np.zeros(self.n * self.n, dtype=bool)
        return self._state.action_mask().astype(bool)

    def _info(self, points: int = 0, illegal: bool = False) -> dict[str, Any]:
        s = self._state
        return {"score": self.score, "points": points, "ply": s.ply, "last": s.last, "last_jump": s.jump,
                "action_mask": self.action_masks().astype(np.int8), "illegal": illegal}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._state, self._numbers = _replay(self.n, (options or {}).get("moves") or [])
        self._over = False
        if self.render_mode == "human":  # the first frame too, as Gymnasium's own envs draw it
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        if self._over:
            raise JumpingError("step() after the episode ended; call reset()")
        # a wrong type or range is a programming error, not an illegal move: raise
        a = action_index("solitaire", action, self.n * self.n, JumpingError)
        try:
            new, pts = self._state.apply(a)
        except IllegalMoveError:
            self._over = True
            return self._obs(), self.illegal_reward, True, False, self._info(illegal=True)
        self._state = new
        self._numbers[new.last] = new.ply
        terminated = new.is_terminal()
        self._over = terminated
        if self.render_mode == "human":
            self.render()
        return self._obs(), float(pts), terminated, False, self._info(points=pts)

    def render(self):
        return render_in_mode(self.render_mode, lambda: render_ansi(self._state, self._numbers, solitaire=True),
                              lambda: render_rgb(self._state, self._numbers, solitaire=True))
