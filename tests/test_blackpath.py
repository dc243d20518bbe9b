"""The Black Path Game: rules, notation, replay, solver, PettingZoo env, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from highway_env import blackpath_v0
from highway_env.blackpath import __main__ as cli
from highway_env.blackpath.game import (
    MAX_COLS,
    MAX_ROWS,
    BlackPathError,
    IllegalMoveError,
    boundary_starts,
    new_game,
    parse_start,
    replay,
    start_name,
    to_ansi,
)
from highway_env.blackpath.solver import brute_force_winner, solve, solve_all_starts, solve_state

GAME_1 = "A1-T2 B1-T2 B2-T3 B3-T2 C3-T1 C2-T2 A2-T1 A3-T2"
GAME_2 = "A1-T3 A2-T2 B2-T3 C2-T1 C1-T2 B1-T1 B3-T2 C3-T1 D2-T1"


# ----------------------------------------------------------------------------- rules & replay

def test_first_moves_from_default_start():
    s = new_game()
    assert (s.square_name(), s.entry, s.to_move) == ("A1", 0, 1)
    assert s.play(1).is_over and s.play(1).winner == 2  # T1: top -> left, the edge
    assert s.play(2).square_name() == "B1" and s.play(2).entry == 3  # enters B1 by its left side
    assert s.play(3).square_name() == "A2" and s.play(3).entry == 0


def test_recorded_game_1():
    s = replay(GAME_1)
    assert not s.is_over and s.square_name() == "B4" and s.to_move == 1 and s.ply == 8
    assert s.entry == 0  # from the top
    # the path re-entered B2 (a crossing) and B3 and used the other segment each time
    squares = [seg.square for seg in s.path()]
    assert squares.count(5) == 2 and squares.count(9) == 2
    assert "player 1 to move at B4" in to_ansi(s)


def test_recorded_game_2():
    s = replay(GAME_2)
    assert not s.is_over and s.ply == 9 and s.to_move == 2
    assert s.square_name() == "D1" and s.entry == 2  # enters D1 from below
    names = []
    for seg in s.path():
        n = s.square_name(seg.square)
        if not names or names[-1] != n:
            names.append(n)
    assert names == "A1 A2 B2 C2 C1 B1 B2 B3 C3 C2 D2".split()


def test_replay_errors():
    with pytest.raises(BlackPathError, match="unknown square 'E1'"):
        replay("A1-T2 E1-T1")
    with pytest.raises(BlackPathError, match="unknown tile 'T4'"):
        replay("A1-T4")
    with pytest.raises(BlackPathError, match="bad move"):
        replay("A1T2")
    with pytest.raises(IllegalMoveError, match="path ends in B1, not in B2"):
        replay("A1-T2 B2-T1")
    with pytest.raises(IllegalMoveError, match="game is over"):
        replay("A1-T1 A2-T1")
    with pytest.raises(BlackPathError, match="not on the board's edge"):
        new_game(4, 4, "B2:top")
    with pytest.raises(BlackPathError, match="unknown side"):
        parse_start("A1:up", 4, 4)
    with pytest.raises(BlackPathError):
        new_game(0, 4)


def test_state_is_immutable_and_hashable():
    s = new_game()
    t = s.play(2)
    assert s.tiles == (0,) * 16 and s.ply == 0
    with pytest.raises(Exception):
        s.ply = 3  # frozen dataclass
    assert hash(t) == hash(replay("A1-T2"))


@pytest.mark.parametrize("rows, cols", [(MAX_ROWS, MAX_COLS), (MAX_ROWS, 1), (1, MAX_COLS)])
def test_every_start_of_the_largest_boards_reads_back(rows, cols):
    """The size limits are the notation's (one column letter A..Z, a row number of one or two
    digits): a larger limit would allow boards whose squares cannot be named or read back."""
    for square, side in boundary_starts(rows, cols):
        name = start_name(square, side, cols)
        assert parse_start(name, rows, cols) == (square, side), name
        assert new_game(rows, cols, name).start == name


@pytest.mark.parametrize("rows, cols", [(MAX_ROWS + 1, 4), (4, MAX_COLS + 1), (0, 4), (4, 0)])
def test_boards_beyond_the_limits_are_refused_naming_the_size(rows, cols):
    with pytest.raises(BlackPathError, match=f"got {rows} x {cols}"):
        new_game(rows, cols)


def test_random_games_end_at_the_edge():
    rng = np.random.default_rng(0)
    for rows, cols in [(1, 1), (2, 3), (4, 4), (5, 3)]:
        for sq, side in boundary_starts(rows, cols):
            s = new_game(rows, cols, (sq, side))
            while not s.is_over:
                s = s.play(int(rng.integers(1, 4)))
            assert s.ply <= rows * cols
            assert s.winner == 1 + s.ply % 2
            # the path is simple: no side of any square is used twice
            used = [(g.square, g.enter) for g in s.path()] + [(g.square, g.exit) for g in s.path()]
            assert len(used) == len(set(used))


# ----------------------------------------------------------------------------- solver

@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 3), (2, 4), (3, 4)])
def test_solver_matches_brute_force(rows, cols):
    for sq, side in boundary_starts(rows, cols):
        s = new_game(rows, cols, (sq, side))
        res = solve_state(s)
        assert res.winner == brute_force_winner(s)
        for t in (1, 2, 3):  # each first tile's value too
            assert (t in res.winning_tiles) == (brute_force_winner(s.play(t)) == 1)


def test_solver_midgame_positions():
    s = replay(GAME_1)
    assert solve_state(s).winner == brute_force_winner(s)
    s = replay(GAME_2)
    assert solve_state(s).winner == brute_force_winner(s)


@pytest.mark.parametrize("rows,cols", [(1, 1), (2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (3, 5), (4, 5), (5, 5)])
def test_parity_from_default_start(rows, cols):
    expected = 1 if (rows * cols) % 2 == 0 else 2
    assert solve(rows, cols).winner == expected


@pytest.mark.parametrize("rows,cols", [(1, 2), (2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (3, 5)])
def test_parity_every_start(rows, cols):
    expected = 1 if (rows * cols) % 2 == 0 else 2
    assert set(solve_all_starts(rows, cols).values()) == {expected}


def test_odd_board_with_off_colour_start():
    # 1x3 from the middle square: player 1 sends the path into an end square, which is lost
    table = solve_all_starts(1, 3)
    assert table["B1:top"] == table["B1:bottom"] == 1
    assert all(w == 2 for k, w in table.items() if not k.startswith("B1"))


def test_4x4_winning_first_tiles():
    res = solve(4, 4)
    assert res.winner == 1 and res.winning_tiles == [2, 3] and res.states > 0


# ----------------------------------------------------------------------------- env

def test_api_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(blackpath_v0.env(), num_cycles=40)
        api_test(blackpath_v0.env(rows=3, cols=5, start="E2:right"), num_cycles=40)


def test_seed_and_render_test(capsys):
    seed_test(blackpath_v0.env, num_cycles=40)
    render_test(blackpath_v0.raw_env)
    assert "to move at A1" in capsys.readouterr().out  # human mode printed the board


def test_env_game_and_rewards():
    e = blackpath_v0.env()
    e.reset(options={"moves": GAME_1})
    assert e.agent_selection == "player_0"
    obs, _, _, _, info = e.last()
    assert obs["action_mask"].tolist() == [1, 1, 1]
    assert obs["observation"].shape == (4, 4, 7)
    assert obs["observation"][3, 1, 3] == 1  # B4 entered from the top
    assert obs["observation"][0, 0, 1] == 1  # A1 holds T2
    assert info["square"] == "B4"
    assert e.observe("player_1")["action_mask"].tolist() == [0, 0, 0]
    e.step(0)  # B4-T1: top -> left, into A4
    assert e.agent_selection == "player_1"
    e.step(1)  # A4-T2: right -> top, back into A3 -> follows A3's T2 to the left edge
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": 1, "player_1": -1}
    assert e.infos["player_0"]["winner"] == "player_0"


def test_env_renders():
    e = blackpath_v0.env(render_mode="ansi")
    e.reset(options={"moves": GAME_1})
    text = e.render()
    assert "@" in text and "player 1 to move at B4" in text
    e = blackpath_v0.env(render_mode="rgb_array", rows=3, cols=2)
    e.reset()
    e.step(2)
    img = e.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert (img == [214, 48, 49]).all(axis=2).any()  # the path is drawn in red


def test_env_bad_arguments():
    with pytest.raises(BlackPathError):
        blackpath_v0.env(start="B2:left")
    with pytest.raises(BlackPathError):
        blackpath_v0.raw_env(render_mode="video")
    e = blackpath_v0.raw_env()
    with pytest.raises(BlackPathError, match="game is over|no move left"):
        e.reset(options={"moves": "A1-T1"})


# ----------------------------------------------------------------------------- CLI

def test_cli_solve_json(capsys):
    assert cli.main(["solve", "--rows", "3", "--cols", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["winner"] == 1 and out["winning_first_tiles"] == ["T2", "T3"]
    assert out["states_searched"] > 0 and "seconds" in out
    assert cli.main(["solve", "--rows", "3", "--cols", "3", "--start", "C3:right", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["winner"] == 2


def test_cli_errors(capsys):
    assert cli.main(["solve", "--rows", "3", "--cols", "3", "--start", "B2:top"]) == 2
    assert "not on the board's edge" in capsys.readouterr().err
    assert cli.main(["replay", "A1-T2 B2-T1"]) == 2
    assert "path ends in B1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["solve", "--rows", "zero"])
    assert exc.value.code == 2


def test_cli_subprocess():
    r = subprocess.run([sys.executable, "-m", "highway_env.blackpath", "solve", "--rows", "2", "--cols", "2", "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and json.loads(r.stdout)["winner"] == 1
    r = subprocess.run([sys.executable, "-m", "highway_env.blackpath", "solve", "--start", "Q7:top"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "unknown square" in r.stderr and not r.stdout
    r = subprocess.run([sys.executable, "-m", "highway_env.blackpath", "replay", GAME_1, "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and json.loads(r.stdout)["square"] == "B4"
    r = subprocess.run([sys.executable, "-m", "highway_env.blackpath", "solve", "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--start" in r.stdout and "--rows" in r.stdout
