"""The PettingZoo AEC env ``highway_v0``: API conformance, rules, frames, infos, rendering."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from highway_env import core, highway_v0
from highway_env.core import (
    A_PATHS,
    B_PATHS,
    QUARTER_TURN,
    Board,
    HighwayError,
    IllegalMoveError,
    encode_action,
    random_board,
)
from highway_env.render import A_COLOUR, B_COLOUR
from boards import one_hot

AGENTS = ("player_0", "player_1")


def play_random(env, rng):
    """Play one game to the end with uniformly random legal moves; return the moves and movers."""
    moves, movers = [], []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        moves.append(action)
        movers.append(agent)
        env.step(action)
    return moves, movers


# ----------------------------------------------------------------------------- PettingZoo tests

def test_api_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(highway_v0.env(), num_cycles=40)


def test_seed_test():
    seed_test(highway_v0.env, num_cycles=40)


def test_render_test(capsys):
    render_test(highway_v0.raw_env)
    assert "to move" in capsys.readouterr().out  # human mode printed the board


# ----------------------------------------------------------------------------- whole games

@pytest.mark.parametrize("wrapped", [True, False])
def test_random_games_last_16_moves_and_rewards_match_core(wrapped):
    rng = np.random.default_rng(1)
    make = highway_v0.env if wrapped else highway_v0.raw_env
    env = make()
    results = set()
    for game in range(30):
        env.reset(seed=game)
        unwrapped = env.unwrapped
        board = Board()
        finals = {}
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                assert term and not trunc
                finals[agent] = (reward, info)
                env.step(None)
                continue
            assert agent == AGENTS[board.ply % 2]  # A moves first, then they alternate
            assert reward == 0
            np.testing.assert_array_equal(obs["action_mask"], board.legal_mask())
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            board = board.apply(action)
            env.step(action)
            assert unwrapped.board == board
        assert board.ply == 16 and board.is_terminal()
        out = board.outcome()
        assert set(finals) == set(AGENTS)
        assert finals["player_0"][0] == out.value
        assert finals["player_1"][0] == -out.value
        results.add(out.value)
        for agent in AGENTS:
            info = finals[agent][1]
            assert info["min_a"] == out.min_a and info["min_b"] == out.min_b
            assert info["margin"] == out.margin == out.min_b - out.min_a
            assert info["winner"] == (out.winner or "")  # "" for a draw: no None in infos
            # the paths (their number varies) are in board.outcome(), not in the infos
            assert set(info) == {"ply", "bounds", "min_a", "min_b", "margin", "winner"}, (
                "the info keys changed: a new key needs the vector env and the docs too (CONTRIBUTING.md, 'A new info key for the Highway envs')")
            paths = unwrapped.board.outcome()  # where the module doc sends a reader for the paths
            assert paths.a_paths and all(sum(board.cells[c] for c in p) == info["min_a"] for p in paths.a_paths)
            assert paths.b_paths and all(sum(board.cells[c] for c in p) == info["min_b"] for p in paths.b_paths)
            json.dumps(info)
        assert env.agents == []
    assert {1, -1} <= results  # both sides win sometimes in 30 random games


def test_terminal_state_of_raw_env():
    env = highway_v0.raw_env()
    env.reset()
    moves, movers = play_random_until_last_move(env)
    assert len(moves) == 16
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert sum(env.rewards.values()) == 0
    # at the end both masks are empty
    for agent in AGENTS:
        assert env.observe(agent)["action_mask"].sum() == 0


def play_random_until_last_move(env):
    rng = np.random.default_rng(7)
    moves, movers = [], []
    while not all(env.terminations.values()):
        agent = env.agent_selection
        mask = env.observe(agent)["action_mask"]
        a = int(rng.choice(np.flatnonzero(mask)))
        moves.append(a)
        movers.append(agent)
        env.step(a)
    return moves, movers


# ----------------------------------------------------------------------------- observations and frames

def test_observation_frames():
    rng = np.random.default_rng(3)
    env = highway_v0.raw_env()
    for filled in range(0, 16):
        board = random_board(rng, filled)
        env.reset(options={"board": board.to_string()})
        obs0 = env.observe("player_0")
        obs1 = env.observe("player_1")
        for obs in (obs0, obs1):
            assert obs["observation"].dtype == np.int8 and obs["observation"].shape == (4, 4, 16)
            assert env.observation_space("player_0").contains(obs)
        np.testing.assert_array_equal(obs0["observation"], one_hot(board))
        np.testing.assert_array_equal(obs1["observation"], one_hot(board.transform(QUARTER_TURN)))
        np.testing.assert_array_equal(env.state(), one_hot(board))
        mover, other = AGENTS[board.to_move], AGENTS[1 - board.to_move]
        assert env.agent_selection == mover
        np.testing.assert_array_equal(env.observe(mover)["action_mask"], board.legal_mask())
        assert env.observe(other)["action_mask"].sum() == 0


def test_observations_are_fresh_copies():
    env = highway_v0.raw_env()
    env.reset()
    obs = env.observe("player_0")
    env.step(encode_action(5, 0))
    assert obs["observation"].sum() == 0 and obs["action_mask"].all()


def test_quarter_turn_makes_b_paths_run_like_a_paths():
    a_sets = {frozenset(p) for p in A_PATHS}
    assert {frozenset(highway_v0.cell_to_player_frame(c, 1) for c in p) for p in B_PATHS} == a_sets
    assert {frozenset(highway_v0.cell_to_player_frame(c, 0) for c in p) for p in A_PATHS} == a_sets
    # (3,0), where B's paths start, shows at the top-left of player_1's view; (0,3) at the bottom-right
    assert highway_v0.cell_to_player_frame(12, "player_1") == 0
    assert highway_v0.cell_to_player_frame(3, "player_1") == 15


def test_frame_helpers_round_trip_and_agree_with_observation():
    rng = np.random.default_rng(5)
    board = random_board(rng, 7)
    turned = board.transform(QUARTER_TURN)
    mask = board.legal_mask()
    for player in (0, 1):
        for a in range(256):
            b = highway_v0.to_player_frame(a, player)
            assert highway_v0.from_player_frame(b, player) == a
            if player == 0:
                assert b == a
            else:
                assert turned.is_legal(b) == board.is_legal(a)
                assert core.decode_action(b)[0] == core.decode_action(a)[0]  # same number
        for cell in range(16):
            assert highway_v0.cell_from_player_frame(highway_v0.cell_to_player_frame(cell, player), player) == cell
    np.testing.assert_array_equal(highway_v0.mask_to_player_frame(mask, 1), turned.legal_mask())
    np.testing.assert_array_equal(highway_v0.mask_to_player_frame(mask, "player_0"), mask)

    # a move by player_1 in its own frame lands where its observation said
    env = highway_v0.raw_env()
    env.reset(options={"board": "0,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,9"})
    assert env.agent_selection == "player_1"
    own = encode_action(4, 0)  # 4 in the top-left of player_1's view
    env.step(highway_v0.from_player_frame(own, 1))
    assert env.board.cells[12] == 4  # = absolute (3, 0), the start of B's paths
    assert env.observe("player_1")["observation"][0, 0, 3] == 1
    with pytest.raises(HighwayError):
        highway_v0.to_player_frame(0, 2)
    with pytest.raises(HighwayError):
        highway_v0.cell_to_player_frame(16, 0)


# ----------------------------------------------------------------------------- infos

def test_infos_give_bounds_on_partial_boards():
    rng = np.random.default_rng(11)
    env = highway_v0.raw_env()
    env.reset()
    for agent in AGENTS:
        assert env.infos[agent] == {"ply": 0, "bounds": {"min_a": [28, 91], "min_b": [28, 91], "margin": [-63, 63]},
                                    "winner": ""}
    for _ in range(60):
        board = random_board(rng, int(rng.integers(0, 16)))
        env.reset(options={"board": board})
        expect = board.bounds()
        for agent in AGENTS:
            info = env.infos[agent]
            assert info["ply"] == board.ply
            assert info["bounds"] == {
                "min_a": list(expect.min_a), "min_b": list(expect.min_b), "margin": list(expect.margin)
            }
            assert "min_a" not in info
            json.dumps(info)
        # and after one more move (the incremental path sums)
        a = int(rng.choice(np.flatnonzero(board.legal_mask())))
        env.step(a)
        board = board.apply(a)
        if not board.is_terminal():
            b = board.bounds()
            assert env.infos["player_0"]["bounds"]["min_b"] == list(b.min_b)
            assert env.infos["player_1"]["bounds"]["margin"] == list(b.margin)
    assert env.infos["player_0"] is not env.infos["player_1"]
    assert env.infos["player_0"]["bounds"] is not env.infos["player_1"]["bounds"]


# ----------------------------------------------------------------------------- illegal moves

def test_illegal_move_through_env_loses():
    env = highway_v0.env()
    env.reset()
    env.step(encode_action(3, 5))  # player_0
    assert env.agent_selection == "player_1"
    env.step(encode_action(7, 5))  # player_1: cell 5 is taken
    rewards = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        assert term
        rewards[agent] = reward
        env.step(None)
    assert rewards == {"player_0": 0, "player_1": -1}
    assert env.agents == []


def test_used_number_through_env_loses():
    env = highway_v0.env()
    env.reset()
    env.step(encode_action(3, 5))
    env.step(encode_action(3, 6))  # number 3 already used
    obs, reward, term, trunc, info = env.last()
    assert term and env.rewards[env.agent_selection] in (0, -1.0)
    assert env.unwrapped._cumulative_rewards == {"player_0": 0, "player_1": -1.0}


def test_raw_env_raises_clear_illegal_move_error():
    env = highway_v0.raw_env()
    env.reset()
    env.step(encode_action(3, 5))
    with pytest.raises(IllegalMoveError, match=r"player_1.*action 117 \(8 at cell 5\).*cell 5 already holds 3"):
        env.step(encode_action(8, 5))
    with pytest.raises(IllegalMoveError, match=r"action 38 \(3 at cell 6\).*number 3 is already on the board"):
        env.step(encode_action(3, 6))
    assert env.board.ply == 1 and env.agent_selection == "player_1"  # nothing changed
    for bad in (256, -1, "x", None):
        with pytest.raises(HighwayError) as excinfo:
            env.step(bad)
        assert not isinstance(excinfo.value, IllegalMoveError)
    env.step(np.int64(encode_action(8, 6)))  # numpy ints are fine
    assert env.board.cells[6] == 8


def test_out_of_range_through_env_asserts():
    env = highway_v0.env()
    env.reset()
    with pytest.raises(AssertionError, match="action space"):
        env.step(256)


# ----------------------------------------------------------------------------- reset options

def test_reset_with_board_option():
    env = highway_v0.env()
    text = "1,0,0,0, 0,2,0,0, 0,0,3,0, 0,0,0,4"  # 4 filled: A to move
    env.reset(options={"board": text})
    assert env.agent_selection == "player_0"
    assert env.unwrapped.board == core.parse_board(text)
    env.reset(options={"board": "1,0,0,0, 0,2,0,0, 0,0,3,0, 0,0,0,0"})  # 3 filled: B to move
    assert env.agent_selection == "player_1"
    obs, *_ = env.last()
    np.testing.assert_array_equal(obs["action_mask"], env.unwrapped.board.legal_mask())
    moves, movers = play_random(env, np.random.default_rng(0))
    assert len(moves) == 13 and movers[0] == "player_1" and movers[-1] == "player_1"

    raw = highway_v0.raw_env()
    raw.reset(options={"board": Board((0,) * 15 + (16,))})
    assert raw.agent_selection == "player_1"
    raw.reset(options={"board": [5] + [0] * 15, "other": 1})  # other keys are ignored
    assert raw.board.cells[0] == 5
    raw.reset(options={"board": " 1 . . .\n . . . .\n . . . .\n . . . 2"})
    assert raw.board.cells[15] == 2
    raw.reset()  # back to the empty board
    assert raw.board == Board() and raw.agent_selection == "player_0"
    with pytest.raises(HighwayError, match="full"):
        raw.reset(options={"board": ",".join(str(i) for i in range(1, 17))})
    with pytest.raises(HighwayError, match="twice"):
        raw.reset(options={"board": "1,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0"})
    with pytest.raises(HighwayError):
        raw.reset(options={"board": 42})


# ----------------------------------------------------------------------------- rendering

FULL = "1,2,3,4, 5,6,7,8, 9,10,11,12, 13,14,15,16"


def colour_pixels(img, colour):
    return int(np.all(img == np.array(colour, dtype=np.uint8), axis=-1).sum())


def test_rgb_array_draws_both_paths_on_full_board():
    env = highway_v0.raw_env(render_mode="rgb_array")
    cells = [int(v) for v in FULL.split(",")]
    env.reset(options={"board": ",".join(map(str, cells[:-1] + [0]))})
    partial = env.render()
    env.step(encode_action(16, 15))
    full = env.render()
    for img in (partial, full):
        assert isinstance(img, np.ndarray) and img.dtype == np.uint8
        assert img.ndim == 3 and img.shape[2] == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert partial.shape == full.shape
    # only the corner labels use the path colours on a partial board; the polylines add many pixels
    assert colour_pixels(partial, A_COLOUR) < 50 and colour_pixels(partial, B_COLOUR) < 50
    assert colour_pixels(full, A_COLOUR) > colour_pixels(partial, A_COLOUR) + 300
    assert colour_pixels(full, B_COLOUR) > colour_pixels(partial, B_COLOUR) + 300
    assert (partial != full).any(axis=-1).sum() > 1000


def test_ansi_marks_cheapest_paths():
    env = highway_v0.raw_env(render_mode="ansi")
    env.reset()
    text = env.render()
    assert isinstance(text, str) and "player_0 (A) to move" in text and "min A in [28, 91]" in text
    env.reset(options={"board": FULL.replace("16", "0")})
    env.step(encode_action(16, 15))
    text = env.render()
    lines = text.splitlines()
    # cheapest A-path: the top row then down the right column; cheapest B-path: up the left, along the top
    assert lines[0].split() == ["{", "1}", "{", "2}", "{", "3}", "{", "4}"]
    assert "< 5>" in lines[1] and "[ 8]" in lines[1] and "[16]" in lines[3] and "<13>" in lines[3]
    assert "B wins: min A 46 > min B 37 (margin -9)" in text
    assert "[n] cheapest A-path" in text


def test_human_render_prints_and_none_warns(capsys):
    env = highway_v0.raw_env(render_mode="human")
    env.reset()
    env.step(encode_action(1, 0))  # human mode renders on each step
    assert "player_1 (B) to move" in capsys.readouterr().out
    assert env.render() is None
    env.close()
    quiet = highway_v0.raw_env()
    quiet.reset()
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert quiet.render() is None
    with pytest.raises(HighwayError, match="render_mode"):
        highway_v0.raw_env(render_mode="video")


def test_metadata():
    env = highway_v0.env()
    assert env.metadata == {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "highway_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }
    env.reset()
    assert env.possible_agents == ["player_0", "player_1"]
    for agent in AGENTS:
        assert env.action_space(agent).n == 256
        assert env.observation_space(agent)["observation"].shape == (4, 4, 16)
        assert env.observation_space(agent)["action_mask"].shape == (256,)


def test_classic_wrappers_are_pettingzoo_wrappers_and_still_enforce_order():
    """env() keeps PettingZoo's wrapper stack (its classes, its checks) while reading the per-step
    attributes straight from the raw env."""
    from pettingzoo.utils import wrappers

    env = highway_v0.env()
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert isinstance(env.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, wrappers.TerminateIllegalWrapper)
    assert str(env) == "highway_v0"
    for name in ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(env, name)
    with pytest.raises(AttributeError, match="private attribute"):
        env._unknown_private
    env.reset()
    raw = env.unwrapped
    assert env.agent_selection == raw.agent_selection == "player_0"
    assert env.env.infos is raw.infos and env._cumulative_rewards is raw._cumulative_rewards
    env.step(0)
    assert env.agent_selection == "player_1"  # not a stale copy
