"""Wrong-typed actions and board options are refused with an error naming the value, never
truncated (3.7 -> 3, True -> 1, "5" -> 5, 0.5 -> empty), in every env; integral actions of any
integer type keep working."""

from __future__ import annotations

import re

import numpy as np
import pytest

from highway_env import blackpath_v0, core, highway_v0, jumping_v0
from highway_env.blackpath.game import BlackPathError
from highway_env.core import HighwayError
from highway_env.gym_env import HighwayGymEnv
from highway_env.jumping.env import SolitaireEnv
from highway_env.jumping.game import JumpingError
from highway_env.rushhour.env import RushHourEnv
from highway_env.rushhour.game import RushHourError

BAD_ACTIONS = [3.7, 3.0, np.float64(2.0), True, np.bool_(True), "5", np.array(3.0), np.array([3]), None]
GOOD_ACTIONS = [3, np.int64(3), np.int8(3), np.uint16(3), np.array(3)]


def _err_names(value):
    return r"action must be an integer.*" if not isinstance(value, (bool, np.bool_)) else "bool"


@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=repr)
def test_raw_env_refuses_non_integral_actions(bad):
    env = highway_v0.raw_env()
    env.reset()
    with pytest.raises(HighwayError, match=_err_names(bad)):
        env.step(bad)
    assert env.board == core.Board()  # nothing was placed


def test_raw_env_step_3_7_was_truncated_before():
    env = highway_v0.raw_env()
    env.reset()
    with pytest.raises(HighwayError, match=r"3\.7"):
        env.step(3.7)
    assert env.board.cells[3] == 0


@pytest.mark.parametrize("bad", [3.7, True, "5", np.float32(1.0)], ids=repr)
def test_wrapped_env_raises_on_wrong_type_instead_of_playing_or_losing(bad):
    env = highway_v0.env()
    env.reset()
    with pytest.raises(HighwayError, match="player_0"):
        env.step(bad)
    assert env.unwrapped.board == core.Board()
    assert not any(env.terminations.values())  # a wrong type is not an illegal move


def test_wrapped_env_illegal_but_well_typed_move_still_loses():
    env = highway_v0.env()
    env.reset()
    env.step(core.encode_action(1, 0))
    env.last()
    env.step(np.int64(core.encode_action(2, 0)))  # the cell is taken: PettingZoo's convention
    assert env.terminations["player_1"] and env.rewards["player_1"] == -1


@pytest.mark.parametrize("good", GOOD_ACTIONS, ids=repr)
def test_integral_actions_of_any_integer_type_work(good):
    for make in (highway_v0.raw_env, highway_v0.env):
        env = make()
        env.reset()
        env.step(good)
        assert env.unwrapped.board.cells[3] == 1


@pytest.mark.parametrize("bad", [2.9, True, "2", np.float64(2.0)], ids=repr)
def test_gym_env_refuses_non_integral_actions(bad):
    env = HighwayGymEnv()
    env.reset(seed=0)
    with pytest.raises(HighwayError, match="action must be an integer|bool"):
        env.step(bad)
    assert env.board.ply == 0


def test_gym_env_accepts_numpy_integer_actions():
    env = HighwayGymEnv()
    env.reset(seed=0)
    env.step(np.array(2))
    assert env.board.cells[2] == 1


def test_gym_opponent_returning_a_float_is_refused():
    env = HighwayGymEnv(play_as="B", opponent=lambda board, mask, rng: float(np.flatnonzero(mask)[0]))
    with pytest.raises(core.IllegalMoveError, match="not an action int"):
        env.reset(seed=0)


@pytest.mark.parametrize("board, match", [
    ([0.5] + [0] * 15, r"cell 0.*0\.5"),
    ([True] + [0] * 15, r"cell 0.*bool"),
    (["5"] + [0] * 15, r"cell 0.*'5'"),
    ([0] * 15, r"16 cells, got 15"),
    ([0] * 17, r"16 cells, got 17"),
    ([17] + [0] * 15, r"out of range"),
    ([3, 3] + [0] * 14, r"appears twice"),
    (np.zeros(16), r"cell 0.*0\.0"),
    (5, r"16 integers, got 5"),
], ids=["half", "bool", "str", "15", "17", "17-number", "dup", "float-array", "int"])
def test_board_options_are_strict(board, match):
    for env in (highway_v0.raw_env(), HighwayGymEnv()):
        with pytest.raises(HighwayError, match=r"options\['board'\].*" + match):
            env.reset(options={"board": board})


def test_board_options_accept_numpy_integers():
    env = highway_v0.raw_env()
    cells = np.zeros(16, dtype=np.int16)
    cells[5] = 7
    env.reset(options={"board": cells})
    assert env.board.cells[5] == 7 and type(env.board.cells[5]) is int


@pytest.mark.parametrize("make, err", [(blackpath_v0.raw_env, BlackPathError), (blackpath_v0.env, BlackPathError),
                                       (jumping_v0.raw_env, JumpingError), (jumping_v0.env, JumpingError)])
@pytest.mark.parametrize("bad", [0.0, True, "0"], ids=repr)
def test_sibling_aec_envs_refuse_non_integral_actions(make, err, bad):
    env = make()
    env.reset()
    before = env.unwrapped.observe(env.agent_selection)["observation"].copy()
    with pytest.raises(err, match="action must be an integer|bool"):
        env.step(bad)
    assert (env.unwrapped.observe(env.agent_selection)["observation"] == before).all()


@pytest.mark.parametrize("bad", [0.0, True, "0"], ids=repr)
def test_solitaire_refuses_non_integral_actions_instead_of_ending(bad):
    env = SolitaireEnv()
    env.reset(seed=0)
    with pytest.raises(JumpingError, match="action must be an integer|bool"):
        env.step(bad)
    obs, reward, terminated, truncated, info = env.step(0)  # the episode is still alive
    assert not info["illegal"]


@pytest.mark.parametrize("bad", [0.0, True, "0"], ids=repr)
def test_rush_hour_refuses_non_integral_actions(bad):
    env = RushHourEnv()
    env.reset(seed=0)
    with pytest.raises(RushHourError, match="action must be an integer|bool"):
        env.step(bad)


@pytest.mark.parametrize("game, text, named", [
    ("jumping", '{"n": true}', "True"), ("jumping", '{"n": 4.0}', "4.0"), ("jumping", '{"n": "4"}', "'4'"),
    ("blackpath", '{"rows": true}', "True"), ("blackpath", '{"cols": 4.0}', "4.0")])
def test_game_config_sizes_of_the_wrong_type_are_refused(game, text, named):
    """{"n": true} built a 1x1 Jumping board (train.py then trained on it) and 4.0 passed as 4."""
    from agents.games import game_options

    with pytest.raises(ValueError, match=re.escape(named)):
        game_options(game, text)


@pytest.mark.parametrize("n", [4, np.int64(4), np.int8(5)], ids=repr)
def test_jumping_sizes_of_any_integer_type_work(n):
    assert SolitaireEnv(n=n).n == int(n)


@pytest.mark.parametrize("start", [5, ["a", 1], (0.0, 0), (True, 0), (0,), None], ids=repr)
def test_black_path_start_of_the_wrong_shape_is_named(start):
    """{"start": 5} in a --game-config was "cannot unpack non-iterable int object"."""
    from highway_env.blackpath.game import new_game

    with pytest.raises(BlackPathError, match=re.escape(f"bad start {start!r}")):
        new_game(4, 4, start)
    assert new_game(4, 4, [0, 0]) == new_game(4, 4, (np.int64(0), np.int8(0))) == new_game(4, 4, "A1:top")
