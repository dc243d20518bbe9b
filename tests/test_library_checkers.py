"""The checkers PettingZoo, Gymnasium and Stable-Baselines3 ship, run on every env we expose where
the env's own test file does not run them already (those run ``api_test``, ``seed_test`` and
``render_test`` on ``highway_v0`` in both frames, ``blackpath_v0``'s defaults, ``api_test`` on
``jumping_v0``, and Gymnasium's ``check_env`` on the three Gymnasium envs).

Left out, on purpose: PettingZoo's ``max_cycles_test`` (for envs with a ``max_cycles`` argument;
ours end by themselves), ``bombardment_test`` (it treats ``step()``'s return as the observation and
calls ``.shape`` on it, which no env with Dict observations passes, PettingZoo's own classic envs
included), ``aec_to_parallel`` (refused by PettingZoo for ``is_parallelizable: False``; a
turn-based env goes through ``turn_based_aec_to_parallel``, checked here), and api_test on the RLlib
glue ``RLlibObservations``: its float32 action mask is RLlib's convention (its
``ActionMaskingTorchRLModule`` and example ``ActionMaskEnv`` use ``Box(0.0, 1.0)``), which
api_test's ``Discrete.sample(mask)`` refuses (it wants int8). The OpenSpiel, RLlib and TorchRL
checkers run in ``test_openspiel.py`` and ``test_examples.py`` with their extras."""

from __future__ import annotations

import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test
from pettingzoo.test.state_test import test_state as state_test_on
from pettingzoo.test.state_test import test_state_space as state_space_test_on
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from highway_env import blackpath_v0, highway_v0, jumping_v0
from highway_env.gym_env import HighwayGymEnv
from highway_env.integrations.torchrl import TensorInfos
from highway_env.jumping.env import SolitaireEnv
from highway_env.rushhour.env import RushHourEnv
from optional_parts import require_modules

#: every AEC env we expose, through env() (PettingZoo's classic wrappers), with the options that
#: change its spaces or its frame
AEC_ENVS = {
    "highway": highway_v0.env,
    "highway_player_frame": lambda **kw: highway_v0.env(frame="player", **kw),
    "blackpath": blackpath_v0.env,
    "blackpath_3x5": lambda **kw: blackpath_v0.env(rows=3, cols=5, start="E2:right", **kw),
    "jumping_3": lambda **kw: jumping_v0.env(n=3, **kw),
    "jumping_4": lambda **kw: jumping_v0.env(n=4, **kw),
}
RAW_ENVS = {"highway": highway_v0.raw_env, "blackpath": blackpath_v0.raw_env,
            "jumping": lambda **kw: jumping_v0.raw_env(n=3, **kw)}


def warnings_of(check) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check()
    return sorted({str(w.message) for w in caught})


# ----------------------------------------------------------------------------- PettingZoo

@pytest.mark.parametrize("name", list(AEC_ENVS))
def test_pettingzoo_state_test(name):
    """``state_test``'s AEC half: ``state_space`` a bounded Box and ``state()`` inside it after
    every step (its parallel half needs a parallel env, below)."""
    make = AEC_ENVS[name]
    assert warnings_of(lambda: state_space_test_on(make())) == []
    said = warnings_of(lambda: state_test_on(make(), num_cycles=20))
    assert [m for m in said if "all zeros" not in m] == []  # the empty board is all zeros


def samples(space, seed: int, count: int = 3) -> list:
    """``count`` samples of ``space`` seeded with ``seed``, flattened (comparable with ==)."""
    space.seed(seed)
    return [gymnasium.spaces.flatten(space, space.sample()).tolist() for _ in range(count)]


@pytest.mark.parametrize("name", list(AEC_ENVS))
def test_each_agents_spaces_and_the_state_space_draw_from_generators_of_their_own(name):
    """As in PettingZoo's classic envs, each agent has spaces of its own: seeding one agent's
    observation space (or the state space) leaves another's samples as its own seed makes them.
    Both agents' Dict spaces and ``state_space`` held one Box, so seeding player_1's space after
    player_0's changed player_0's samples."""
    env = AEC_ENVS[name]()
    env.reset(seed=0)
    raw = env.unwrapped
    first, second = raw.possible_agents
    alone = samples(env.observation_space(first), 0)
    env.observation_space(first).seed(0)
    env.observation_space(second).seed(1)
    raw.state_space.seed(2)
    space = env.observation_space(first)
    assert [gymnasium.spaces.flatten(space, space.sample()).tolist() for _ in range(3)] == alone
    parts = [env.observation_space(a)[k] for a in raw.possible_agents for k in ("observation", "action_mask")]
    parts += [env.action_space(a) for a in raw.possible_agents] + [raw.state_space]
    assert len({id(p) for p in parts}) == len(parts)


@pytest.mark.parametrize("name", list(AEC_ENVS))
def test_pettingzoo_parallel_api_and_seed_tests_through_turn_based_conversion(name, capsys):
    """PettingZoo's conversion for turn-based AEC envs, ``turn_based_aec_to_parallel``."""
    make = AEC_ENVS[name]
    parallel_api_test(turn_based_aec_to_parallel(make()), num_cycles=40)
    parallel_seed_test(lambda: turn_based_aec_to_parallel(make()), num_cycles=40)
    assert "Passed Parallel API test" in capsys.readouterr().out


@pytest.mark.parametrize("name", list(RAW_ENVS))
def test_pettingzoo_api_test_on_raw_envs(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's notes on Dict observations, as for its own classic envs
        api_test(RAW_ENVS[name](), num_cycles=40)


@pytest.mark.parametrize("frame", ["absolute", "player"])
def test_pettingzoo_api_and_seed_tests_on_the_torchrl_glue(frame):
    """``integrations.torchrl.TensorInfos`` is an AEC env too (TorchRL itself is not needed to
    build it). Its infos held numpy arrays, and api_test's ``info == env.infos[agent]`` raised
    ValueError (the truth value of an array is ambiguous)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(TensorInfos(highway_v0.env(frame=frame)), num_cycles=40)
    seed_test(lambda: TensorInfos(highway_v0.env(frame=frame)), num_cycles=40)


def test_pettingzoo_seed_and_render_tests_on_jumping(capsys):
    for n in (3, 4):
        seed_test(lambda: jumping_v0.env(n=n), num_cycles=40)
        render_test(lambda render_mode=None: jumping_v0.raw_env(n=n, render_mode=render_mode))
    assert "next" in capsys.readouterr().out  # "human" printed the board


# ----------------------------------------------------------------------------- Gymnasium

@pytest.mark.parametrize("play_as", ["A", "B"])
def test_gymnasium_check_env_on_highway_in_the_player_frame(play_as, capsys):
    """``test_gym_env.py`` checks the default frame; here ``frame="player"``, through make() so
    that check_env also renders in every mode of the spec."""
    import gymnasium

    import highway_env

    env = gymnasium.make(highway_env.GYM_ENV_ID, play_as=play_as, frame="player", illegal_action="lose")
    said = warnings_of(lambda: check_env(env))
    assert [m for m in said if "different from the unwrapped version" not in m] == []


@pytest.mark.parametrize("render_mode", [None, "ansi", "human", "rgb_array"])
def test_gymnasium_check_env_on_solitaire_in_every_render_mode(render_mode, capsys):
    for n in (3, 4):
        said = warnings_of(lambda: check_env(SolitaireEnv(n=n, render_mode=render_mode)))
        assert [m for m in said if "not having a spec" not in m] == []


@pytest.mark.parametrize("render_mode", [None, "ansi", "human"])
def test_gymnasium_check_env_on_rush_hour_in_every_render_mode(render_mode, capsys):
    said = warnings_of(lambda: check_env(RushHourEnv(level=3, render_mode=render_mode)))
    assert [m for m in said if "not having a spec" not in m] == []


# ----------------------------------------------------------------------------- Stable-Baselines3

#: SB3's checker steps with unmasked random actions: HighwayGymEnv plays them with "lose"
SB3_ENVS = {
    "highway_A": lambda: HighwayGymEnv(play_as="A", illegal_action="lose"),
    "highway_B_player_frame": lambda: HighwayGymEnv(play_as="B", illegal_action="lose", frame="player"),
    "rush_hour": lambda: RushHourEnv(level=1),
    "solitaire": lambda: SolitaireEnv(n=4),
}


@pytest.mark.parametrize("name", list(SB3_ENVS))
def test_stable_baselines3_check_env(name):
    require_modules("Stable-Baselines3", "sb3 extra", ("stable_baselines3",), 'pip install -e ".[sb3]"')
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    said = warnings_of(lambda: sb3_check_env(SB3_ENVS[name](), warn=True))
    # SB3's advice for its default CNN/MLP policies (image dtype, 1-D shapes), not API problems
    advice = ("is an image", "minimal resolution", "unconventional shape")
    assert [m for m in said if not any(a in m for a in advice)] == []
