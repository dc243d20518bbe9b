"""What the three PettingZoo AEC envs (highway, blackpath, jumping) share: the classic wrappers, the
masked-observation spaces and the turn bookkeeping. Each env stays one readable file per game, as
PettingZoo's classic envs are; only this boilerplate lives here."""

from __future__ import annotations

import copy
import operator

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from highway_env.core import HighwayError, integral


def classic_wrappers(raw):
    """The wrappers PettingZoo's classic envs apply in ``env()``: an illegal move ends the game with
    -1 for the offender, out-of-range actions assert, and the API order is enforced.

    They are PettingZoo's own wrapper classes (``isinstance`` holds), subclassed only to read the
    attributes every step touches (``agent_selection``, ``terminations``, ...) straight from the raw
    env: through ``BaseWrapper.__getattr__`` at each of the three layers that lookup was most of the
    cost of a step. An action of the wrong type (a float, bool or string) raises the raw env's
    error before the wrappers index the mask with it."""
    env = _TerminateIllegal(raw, illegal_reward=-1)
    env = _AssertOutOfBounds(env)
    return _OrderEnforcing(env)


# attributes read on every step, forwarded straight to the raw env
_HOT = ("agent_selection", "agents", "possible_agents", "rewards", "terminations", "truncations",
        "infos", "_cumulative_rewards")
# those that OrderEnforcingWrapper refuses before reset() (its own list)
_NEED_RESET = {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}


def _raw_reader(name: str, source: str = "_raw"):
    """A property giving ``self.<source>.<name>``: an ``operator.attrgetter``, so a read is one
    C-level call (the loop reads these about eighteen times a step, through three layers)."""
    return property(operator.attrgetter(f"{source}.{name}"))


class _HotAttributes:
    """Mixin: the ``_HOT`` attributes read from the raw env directly (no layer overrides them)."""

    def __init__(self, env, *args, **kwargs):
        super().__init__(env, *args, **kwargs)
        self._raw = env.unwrapped

    def __str__(self):
        return str(self.env)


for _name in _HOT:
    setattr(_HotAttributes, _name, _raw_reader(_name))


class _TerminateIllegal(_HotAttributes, wrappers.TerminateIllegalWrapper):
    pass


class _AssertOutOfBounds(_HotAttributes, wrappers.AssertOutOfBoundsWrapper):
    def step(self, action):
        raw = self._raw
        agent = raw.agent_selection
        if action is None and (raw.terminations[agent] or raw.truncations[agent]):
            return self.env.step(action)
        try:  # a wrong type is a programming error, not an illegal move: raise, naming the value
            a = action if type(action) is int else integral(action, "action")
        except HighwayError as e:
            raise getattr(raw, "action_error", HighwayError)(f"{agent}: {e}") from None
        # Discrete(n, start).contains for an integral action, with AssertOutOfBoundsWrapper's message
        space = raw.action_space(agent)
        assert space.start <= a < space.start + space.n, "action is not in action space"
        self.env.step(action)


class _OrderEnforcing(_HotAttributes, wrappers.OrderEnforcingWrapper):
    """The outer layer: the ``_NEED_RESET`` attributes come from ``_raw_after_reset``, None until
    the first ``reset()``; reading one before fails, and the lookup falls to
    ``OrderEnforcingWrapper.__getattr__``, which raises its "cannot be accessed before reset"."""

    def __init__(self, env):
        self._raw_after_reset = None
        super().__init__(env)

    def reset(self, seed=None, options=None):
        self._raw_after_reset = self._raw  # with _has_reset, which the base class sets first
        super().reset(seed=seed, options=options)


for _name in _HOT:
    setattr(_OrderEnforcing, _name, _raw_reader(_name, "_raw_after_reset" if _name in _NEED_RESET else "_raw"))


def masked_space(observation: spaces.Box, num_actions: int) -> spaces.Dict:
    """An agent's observation space: ``{"observation": observation, "action_mask": int8 (num_actions,)}``."""
    mask = spaces.Box(low=0, high=1, shape=(num_actions,), dtype=np.int8)
    return spaces.Dict({"observation": observation, "action_mask": mask})


class TwoPlayerAEC(AECEnv):
    """A two-player AEC env's bookkeeping: spaces by agent, the start of a game, the end of a move
    (rewards at the end of the game), rendering. A subclass defines ``_set_infos()`` (fresh info
    dicts for the current position), ``_text()`` and ``_image()`` (the ansi / rgb_array pictures) and
    ``action_error`` (its error class)."""

    action_error: type[Exception] = HighwayError
    observation_spaces: dict
    action_spaces: dict

    def _setup(self, agents, render_mode, render_modes, observation: spaces.Box, num_actions: int) -> None:
        self.render_mode = check_render_mode(render_mode, render_modes, self.action_error)
        self.agents = list(agents)
        self.possible_agents = self.agents[:]
        # a space of its own for each agent and for the state, as PettingZoo's classic envs: a space
        # holds its generator, so seeding one agent's space must not change another's samples
        self.action_spaces = {a: spaces.Discrete(num_actions) for a in agents}
        self.observation_spaces = {a: masked_space(copy.deepcopy(observation), num_actions) for a in agents}
        self.state_space = copy.deepcopy(observation)  # state(): the position in the observation's space

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _start(self, first_agent: str) -> None:
        """A new game with ``first_agent`` to move (the end of ``reset``)."""
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.agent_selection = first_agent
        self._skip_agent_selection = None
        self._set_infos()

    def _begin_move(self, agent: str) -> None:
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()

    def _end_move(self, next_agent: str, final_rewards: dict | None = None) -> None:
        """The move is made: ``final_rewards`` (per agent) if it ended the game, then ``next_agent``."""
        if final_rewards is not None:
            self.rewards.update(final_rewards)
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = next_agent
        self._set_infos()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        return render_in_mode(self.render_mode, self._text, self._image)

    def close(self):  # PettingZoo's api_test wants close() defined wherever render() is
        pass


def check_render_mode(render_mode, render_modes, error: type[Exception] = HighwayError):
    """``render_mode`` if it is None or one of ``render_modes``, else ``error`` naming it."""
    if render_mode is not None and render_mode not in render_modes:
        raise error(f"unknown render_mode {render_mode!r}; expected None or one of {list(render_modes)}")
    return render_mode


def render_in_mode(render_mode: str | None, text, image):
    """What ``render()`` gives in ``render_mode``: ``image()`` for "rgb_array", ``text()`` for
    "ansi", ``text()`` printed (and None) for "human"; a Gymnasium warning and None without a mode."""
    if render_mode is None:
        gymnasium.logger.warn("You are calling render method without specifying any render mode.")
        return None
    if render_mode == "rgb_array":
        return image()
    out = text()
    if render_mode == "human":
        print(out, end="" if out.endswith("\n") else "\n", flush=True)
        return None
    return out


def action_index(agent: str, action, num_actions: int, error: type[Exception]) -> int:
    """``action`` as an int in 0..num_actions-1, else ``error`` naming the agent and the bad value.
    Only integral actions are accepted (``core.integral``): 3.7, True or "5" raise, never truncate."""
    if type(action) is int and 0 <= action < num_actions:  # the common case, checked cheaply
        return action
    try:
        a = integral(action, "action")
    except HighwayError as e:
        raise error(f"{agent}: {e}; expected an int in 0..{num_actions - 1}") from None
    if not 0 <= a < num_actions:
        raise error(f"{agent}: action {action!r} out of range 0..{num_actions - 1}")
    return a
