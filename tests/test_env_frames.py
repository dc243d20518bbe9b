"""``frame="player"``: observation, action mask and actions all in the mover's frame, so one policy
acts for both seats; the default ``frame="absolute"`` is unchanged; and every observation option of
the AEC env reaches the other Highway envs and the benchmark."""

from __future__ import annotations

import importlib
import warnings

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import highway_env  # noqa: F401  (registers the Gymnasium id)
from highway_env import core, highway_v0
from highway_env.gym_env import HighwayGymEnv
from highway_env.registration import PETTINGZOO_AEC_ENVS

FRAMES = ("absolute", "player")


@pytest.mark.parametrize("frame", FRAMES)
def test_api_test(frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(highway_v0.env(frame=frame), num_cycles=40)


@pytest.mark.parametrize("frame", FRAMES)
def test_seed_test(frame):
    seed_test(lambda: highway_v0.env(frame=frame), num_cycles=40)


@pytest.mark.parametrize("frame", FRAMES)
def test_render_test(frame, capsys):
    render_test(lambda render_mode: highway_v0.raw_env(render_mode=render_mode, frame=frame))


@pytest.mark.parametrize("bad", ["Player", "", None, 1, "absolute "])
def test_bad_frame_is_a_value_error_naming_it(bad):
    for make in (highway_v0.env, highway_v0.raw_env, HighwayGymEnv):
        with pytest.raises(ValueError, match=f"frame must be one of.*{bad!r}"):
            make(frame=bad)


def test_default_frame_is_absolute_and_unchanged():
    env = highway_v0.raw_env()
    assert env.frame == "absolute"
    env.reset()
    env.step(core.encode_action(1, 0))  # A: 1 at the top-left
    mask_b = env.observe("player_1")["action_mask"]
    np.testing.assert_array_equal(mask_b, env.board.legal_mask())  # absolute mask for B too


def shared_policy(obs, rng):
    """One policy for both seats: a random legal action of the observation's own mask, preferring
    small numbers on the observer's top-left-to-bottom-right diagonal."""
    legal = np.flatnonzero(obs["action_mask"])
    diagonal = [a for a in legal if (a % 16) in (0, 5, 10, 15)]
    pool = diagonal or list(legal)
    return int(pool[rng.integers(len(pool))])


def test_one_policy_plays_both_seats_and_moves_land_where_the_absolute_env_puts_them():
    rng = np.random.default_rng(7)
    player = highway_v0.env(frame="player")
    absolute = highway_v0.env()
    own_diagonal = (0, 5, 10, 15)
    real_cells = {"player_0": set(own_diagonal), "player_1": {12, 9, 6, 3}}  # B's diagonal, turned back
    for game in range(6):
        player.reset()
        absolute.reset()
        for agent in player.agent_iter():
            obs, reward, term, trunc, info = player.last()
            expected = absolute.last()
            assert (reward, term, trunc, info) == expected[1:]
            if term or trunc:
                player.step(None)
                absolute.step(None)
                continue
            # the observation is the same; the mask is the absolute one turned into the player's frame
            np.testing.assert_array_equal(obs["observation"], expected[0]["observation"])
            np.testing.assert_array_equal(
                obs["action_mask"], highway_v0.mask_to_player_frame(expected[0]["action_mask"], agent))
            a = shared_policy(obs, rng)
            absolute_action = highway_v0.from_player_frame(a, agent)
            player.step(a)
            absolute.step(absolute_action)
            assert player.unwrapped.board == absolute.unwrapped.board
            assert player.unwrapped.board.cells[absolute_action % 16] == absolute_action // 16 + 1
            if a % 16 in own_diagonal:  # the policy's own diagonal is each seat's own diagonal
                assert absolute_action % 16 in real_cells[agent]
        assert player.unwrapped.board.is_terminal()
        assert not player.agents and not absolute.agents


def test_player_frame_b_move_goes_through_the_quarter_turn():
    env = highway_v0.raw_env(frame="player")
    env.reset()
    env.step(core.encode_action(1, 0))  # A's frame is the real board
    assert env.board.cells[0] == 1
    # B plays 2 on its own top-left cell, which is the real bottom-left cell (3, 0)
    obs = env.observe("player_1")
    assert obs["action_mask"][core.encode_action(2, 0)] == 1
    env.step(core.encode_action(2, 0))
    assert env.board.cells[core.cell_index(3, 0)] == 2
    assert core.QUARTER_TURN[core.cell_index(3, 0)] == 0


def test_player_frame_illegal_moves_lose_through_env_and_raise_in_raw_env():
    env = highway_v0.env(frame="player")
    env.reset()
    env.step(core.encode_action(1, 12))  # A: 1 at real (3, 0), which is B's own cell 0
    env.last()
    env.step(core.encode_action(2, 0))  # B's cell 0 is taken
    assert env.rewards["player_1"] == -1 and all(env.terminations.values())

    raw = highway_v0.raw_env(frame="player")
    raw.reset()
    raw.step(core.encode_action(1, 12))
    with pytest.raises(core.IllegalMoveError, match="player_1's frame"):
        raw.step(core.encode_action(2, 0))


def test_gym_env_player_frame_mask_and_actions():
    env = gymnasium.make("highway_env/Highway-v0", play_as="B", frame="player").unwrapped
    obs, info = env.reset(seed=3)
    real = env.board
    np.testing.assert_array_equal(obs["action_mask"], highway_v0.mask_to_player_frame(real.legal_mask(), 1))
    np.testing.assert_array_equal(env.action_masks(), obs["action_mask"].astype(bool))
    a = int(np.flatnonzero(obs["action_mask"])[0])
    env.step(a)
    number, cell = core.decode_action(highway_v0.from_player_frame(a, 1))
    assert env.board.cells[cell] == number


@pytest.mark.parametrize("play_as", ["A", "B"])
def test_gym_env_both_frames_play_the_same_games(play_as):
    """Same seed, same opponent: translating the actions between frames gives the same episode."""
    envs = {f: HighwayGymEnv(play_as=play_as, frame=f) for f in FRAMES}
    obs = {f: envs[f].reset(seed=11)[0] for f in FRAMES}
    rng = np.random.default_rng(0)
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(obs["player"]["action_mask"])))
        results = {"player": envs["player"].step(a),
                   "absolute": envs["absolute"].step(highway_v0.from_player_frame(a, play_as == "B"))}
        obs = {f: r[0] for f, r in results.items()}
        assert envs["player"].board == envs["absolute"].board
        assert results["player"][1:4] == results["absolute"][1:4]
        done = results["player"][2]


def test_gym_env_lose_mode_in_player_frame():
    env = HighwayGymEnv(play_as="B", frame="player", illegal_action="lose")
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _obs, reward, terminated, _t, info = env.step(illegal)
    assert reward == -1.0 and terminated and info["illegal_action"] == illegal


def test_every_observation_option_reaches_every_highway_env():
    """``frame`` is today's one option of what the agent sees; a new one (say, an extra plane) given
    to the AEC env alone would be missing from the Gymnasium env, its vector env and the benchmark's
    observations (what a graded policy sees). CONTRIBUTING.md, "A new observation option", lists them."""
    import inspect

    from highway_env import benchmark
    from highway_env.gym_vector_env import HighwayVectorEnv
    from highway_env.highway.highway import raw_env

    def params(f):
        return set(inspect.signature(f).parameters) - {"self"}

    options = params(raw_env.__init__) - {"render_mode"}
    assert "frame" in options
    takers = {"HighwayGymEnv": HighwayGymEnv.__init__, "HighwayVectorEnv": HighwayVectorEnv.__init__,
              "highway_env.benchmark.observations": benchmark.observations,
              "highway_env.benchmark.evaluate": benchmark.evaluate}
    missing = {name: sorted(options - params(f)) for name, f in takers.items() if options - params(f)}
    assert not missing, (f"observation option(s) of highway_v0.raw_env not taken by {missing}: give each the "
                         "option (see CONTRIBUTING.md, 'A new observation option for the Highway envs')")



#: A value other than the default for each observation option of ``highway_v0.raw_env``: with it,
#: the test below checks that every Highway env and the benchmark show what the AEC env shows.
OPTION_EXAMPLES = {"frame": "player"}


def _first_legal(board, mask, rng):
    """An opponent (the single and the vector env's signature) that plays the same whatever the seed."""
    return int(np.flatnonzero(mask)[0])


def test_every_observation_option_shows_every_highway_env_the_same(monkeypatch):
    """Taking an option (the test above checks the signatures) is not passing it on: an env that
    accepts it and builds its observations without it passed every other test. With each option at
    a value other than its default, the Gymnasium env, its vector env and the benchmark's graded
    policy see, as B after A's first move, what ``highway_v0.raw_env`` shows B; and
    ``benchmark.evaluate`` hands the option to the policy it grades."""
    import inspect

    from highway_env import benchmark
    from highway_env.benchmark import policy as bench_policy
    from highway_env.benchmark import run as bench_run
    from highway_env.gym_vector_env import HighwayVectorEnv

    options = set(inspect.signature(highway_v0.raw_env.__init__).parameters) - {"self", "render_mode"}
    unexampled = sorted(options - set(OPTION_EXAMPLES))
    assert not unexampled, (f"observation option(s) {unexampled} of highway_v0.raw_env have no example: add a "
                            "value other than the default to OPTION_EXAMPLES in tests/test_env_frames.py")
    for name, value in OPTION_EXAMPLES.items():
        kw = {name: value}
        single = HighwayGymEnv(play_as="B", opponent=_first_legal, **kw)
        shown_single, _ = single.reset(seed=0)  # A has moved: B's first observation
        aec, plain = highway_v0.raw_env(**kw), highway_v0.raw_env()
        for env in (aec, plain):
            env.reset(options={"board": single.board})
        want = aec.observe("player_1")
        assert any(not np.array_equal(want[k], plain.observe("player_1")[k]) for k in want), (
            f"{name}={value!r} changes nothing B sees in highway_v0.raw_env: pick an example in OPTION_EXAMPLES that does")
        vector_obs, _ = HighwayVectorEnv(1, play_as="B", opponent=_first_legal, **kw).reset(seed=0)
        graded = []
        policy = bench_policy.as_agent(lambda o: graded.append(o) or int(np.flatnonzero(o["action_mask"])[0]), **kw)
        policy.act_batch(np.array([single.board.cells], np.int8))
        shown = {"HighwayGymEnv": shown_single, "HighwayVectorEnv": {k: v[0] for k, v in vector_obs.items()},
                 "highway_env.benchmark's as_agent": graded[0]}
        for where, obs in shown.items():
            for key in want:
                np.testing.assert_array_equal(obs[key], want[key], err_msg=(
                    f"{where} with {name}={value!r}: its {key!r} is not highway_v0.raw_env's; pass the option on "
                    "(CONTRIBUTING.md, 'A new observation option for the Highway envs')"))

        handed = {}

        class Handed(Exception):
            pass

        def spy(policy, **kwargs):
            handed.update(kwargs)
            raise Handed

        monkeypatch.setattr(bench_run, "as_agent", spy)
        with pytest.raises(Handed):
            benchmark.evaluate(lambda o: 0, positions=1, games=0, conversion=0, progress=False, **kw)
        assert handed.get(name) == value, f"highway_env.benchmark.evaluate does not hand {name}={value!r} to as_agent"

def test_every_highway_env_declares_the_one_observation_space():
    from highway_env.gym_vector_env import HighwayVectorEnv

    space = highway_v0.observation_space()
    assert space["observation"].shape == highway_v0.PLANES_SHAPE == (4, 4, 16)
    assert space["observation"].dtype == space["action_mask"].dtype == np.int8
    assert space["action_mask"].shape == (core.NUM_ACTIONS,)
    for frame in FRAMES:
        assert highway_v0.raw_env(frame=frame).observation_space("player_1") == space
        assert HighwayGymEnv(play_as="B", frame=frame).observation_space == space
        assert HighwayVectorEnv(2, play_as="B", frame=frame).single_observation_space == space


#: the raw AEC env of every PettingZoo id the package registers (a new game's env is checked too)
AEC_RAW_ENVS = {env_id: importlib.import_module(ref.partition(":")[0]).raw_env
                for env_id, ref in PETTINGZOO_AEC_ENVS.items()}


@pytest.mark.parametrize("make", list(AEC_RAW_ENVS.values()), ids=list(AEC_RAW_ENVS))
def test_pickling_an_aec_env_keeps_every_constructor_option(make):
    """The AEC envs pickle as a fresh env from the arguments given to ``EzPickle.__init__`` (as
    PettingZoo's classic envs): an option left out of that call comes back at its default, silently."""
    import inspect
    import pickle

    env = make()
    options = [p for p in inspect.signature(type(env).__init__).parameters if p != "self"]
    given = len(env._ezpickle_args) + len(env._ezpickle_kwargs)
    assert given == len(options), (f"{type(env).__module__}.raw_env gives EzPickle.__init__ {given} of its "
                                   f"options {options}: give it every one")
    if make is highway_v0.raw_env:
        assert pickle.loads(pickle.dumps(make(frame="player"))).frame == "player"
