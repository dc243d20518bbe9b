"""Rush Hour / Traffic!: parsing, moves, BFS solver on the 40 original cards, Gymnasium env, CLI."""

import json
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import highway_env  # noqa: F401  (registers the envs)
from highway_env.rushhour import (
    Board,
    IllegalMoveError,
    Move,
    RushHourError,
    level,
    load_cards,
    load_puzzles,
    parse_board,
    parse_line,
    parse_move,
    solve,
)
from highway_env.rushhour.__main__ import main as cli_main
from highway_env.rushhour.env import (
    NUM_ACTIONS,
    RushHourEnv,
    decode_action,
    encode_action,
)

CARD1 = "BBoooCDooEoCDAAEoCDooEooFoooGGFoHHHo"


# -- parsing ----------------------------------------------------------------------------------
def test_parse_card1():
    b = parse_board(CARD1)
    assert b.to_string() == CARD1
    assert [v.letter for v in b.vehicles] == list("ABCDEFGH")
    a = b["A"]
    assert (a.horizontal, a.length, a.line, a.pos) == (True, 2, 2, 1)
    c = b["C"]
    assert (c.horizontal, c.length, c.line, c.pos) == (False, 3, 5, 0)
    h = b["H"]
    assert (h.horizontal, h.length, h.line, h.pos) == (True, 3, 5, 2)
    assert not b.is_solved()


def test_parse_dots_walls_and_whitespace():
    dotted = CARD1.replace("o", ".")
    assert parse_board(dotted) == parse_board(CARD1)
    rows = "\n".join(CARD1[i:i + 6] for i in range(0, 36, 6))
    assert parse_board(rows) == parse_board(CARD1)
    w = parse_board("xooooo" "oooooo" "AAoooo" "oooooo" "oooooo" "ooooox")
    assert w.walls == {0, 35}
    assert w.to_string().startswith("x")


def test_parse_line_and_puzzles():
    p = parse_line(f"8 {CARD1} 1247")
    assert p.moves == 8 and p.cluster_size == 1247 and p.board == parse_board(CARD1)
    ps = load_puzzles(["# comment", "", f"8 {CARD1} 1247", f"3 {CARD1}"])
    assert [p.moves for p in ps] == [8, 3] and ps[1].cluster_size is None
    with pytest.raises(RushHourError, match="bad puzzle line"):
        parse_line(f"eight {CARD1} 1247")
    with pytest.raises(RushHourError, match="bad puzzle line"):
        parse_line(CARD1)


@pytest.mark.parametrize("board, pattern", [
    (CARD1[:-1], "36 cells, got 35"),
    (CARD1 + "o", "36 cells, got 37"),
    (CARD1[:-1] + "?", "bad character"),
    (CARD1[:-1] + "b", "bad character"),
    ("o" * 36, "no target car 'A'"),
    ("AAoooo" + "o" * 30, "target car 'A' must lie horizontally on the third row"),
    ("oooooo" "oooooo" "Aooooo" "Aooooo" + "o" * 12, "target car 'A' must lie horizontally"),
    ("Booooo" "oooooo" "AAoooo" + "o" * 18, "vehicle B has length 1"),
    ("BoBooo" "oooooo" "AAoooo" + "o" * 18, "vehicle B is not a straight contiguous run"),
    ("BBoooo" "Booooo" "AAoooo" + "o" * 18, "vehicle B is not a straight contiguous run"),
    ("BBBBoo" "oooooo" "AAoooo" + "o" * 18, "vehicle B has length 4"),
    ("oooooo" "oooooo" "AAAAoo" + "o" * 18, "vehicle A has length 4"),
    ("oooooo" "oooooo" "AoAooo" + "o" * 18, "vehicle A is not a straight"),
])
def test_malformed_boards(board, pattern):
    with pytest.raises(RushHourError, match=pattern):
        parse_board(board)
    assert issubclass(RushHourError, ValueError)


def test_overlap_detected_when_building_from_vehicles():
    b = parse_board("oooooo" "oooooo" "AAoooo" "Booooo" "Booooo" "oooooo")
    a, bv = b["A"], b["B"]
    moved = bv.__class__(bv.letter, bv.horizontal, bv.length, bv.line, 1)  # rows 1-2, col 0
    with pytest.raises(RushHourError, match="overlaps"):
        Board([a, moved])


# -- moves ------------------------------------------------------------------------------------
def test_moves_legality():
    b = parse_board(CARD1)
    ranges = {v.letter: b.move_range(v.letter) for v in b.vehicles}
    assert ranges == {"A": (0, 0), "B": (0, 3), "C": (0, 1), "D": (0, 0), "E": (-1, 1),
                      "F": (0, 0), "G": (-3, 0), "H": (-1, 1)}
    moves = b.legal_moves()
    assert len(moves) == 3 + 1 + 2 + 3 + 2
    assert Move("B", 3) in moves and Move("G", -3) in moves and Move("A", 1) not in moves
    assert all(b.is_legal(m) for m in moves)
    assert b.is_legal("B+3") and not b.is_legal("B+4") and not b.is_legal("Z+1")
    assert not b.is_legal("E-2") and b.is_legal("E+1") and not b.is_legal("D-1")
    b2 = b.move("B+2")
    assert b2["B"].pos == 2 and b["B"].pos == 0  # immutable
    assert b.move(("G", -3))["G"].pos == 1
    with pytest.raises(IllegalMoveError, match="can move by"):
        b.move("A+1")
    with pytest.raises(IllegalMoveError, match="no vehicle"):
        b.move("Z+1")
    with pytest.raises(RushHourError, match="bad move"):
        parse_move("B+0")
    assert str(Move("A", -1)) == "A-1" and parse_move("C+3") == Move("C", 3)


# -- solver -----------------------------------------------------------------------------------
def test_solved_and_unsolvable():
    s = solve("oooooo" "oooooo" "ooooAA" + "o" * 18)
    assert s.moves == [] and s.states == 5
    s = solve("oooooo" "oooooo" "AAoooo" + "o" * 18)
    assert s.moves == [Move("A", 4)]
    blocked = solve("oooooo" "oooooo" "AAooox" + "o" * 18)
    assert blocked.moves is None and blocked.num_moves is None and blocked.states == 4


def test_all_40_cards_minimal_and_replay():
    cards = load_cards()
    assert [c.number for c in cards] == list(range(1, 41))
    t0 = time.perf_counter()
    results = [solve(c.board) for c in cards]
    elapsed = time.perf_counter() - t0
    assert [r.num_moves for r in results] == [c.moves for c in cards]
    for c, r in zip(cards, results):
        assert c.board.play(r.moves).is_solved()
        assert r.states >= len(r.moves) + 1
    assert elapsed < 20, f"solving the 40 cards took {elapsed:.1f} s"
    assert level(40) == cards[39]
    with pytest.raises(RushHourError, match="1..40"):
        level(41)


# -- env --------------------------------------------------------------------------------------
def test_action_encoding_roundtrip():
    for a in range(NUM_ACTIONS):
        assert encode_action(decode_action(a)) == a
    assert decode_action(encode_action(("B", -3))) == Move("B", -3)


@pytest.mark.filterwarnings("ignore:.*Not able to test alternative render modes")
def test_env_check_env():
    check_env(RushHourEnv(level=1))
    check_env(RushHourEnv(board=CARD1.replace("o", ".")))
    env = gym.make("highway_env/RushHour-v0", level=2)
    check_env(env.unwrapped)
    env.close()


def test_env_optimal_episode_and_masks():
    env = RushHourEnv(level=5)
    obs, info = env.reset(seed=0)
    assert obs["observation"].shape == (6, 6) and obs["observation"].dtype == np.int8
    assert obs["observation"][2].tolist().count(1) == 2  # target car id 1 on row 3
    assert (info["action_mask"] == obs["action_mask"]).all()
    assert env.action_masks().dtype == bool
    sol = solve(env.board)
    total = 0.0
    for i, m in enumerate(sol.moves):
        a = encode_action(m)
        assert env.action_masks()[a]
        obs, r, term, trunc, info = env.step(a)
        total += r
        assert term == (i == len(sol.moves) - 1) and not trunc
    assert total == -level(5).moves and info["solved"] and not obs["action_mask"].any()


def test_env_illegal_and_truncation_and_reset_options():
    env = RushHourEnv(level=1, max_steps=3)
    obs, _ = env.reset()
    bad = encode_action(("A", 1))
    assert not env.action_masks()[bad]
    obs2, r, term, trunc, info = env.step(bad)
    assert info["illegal_action"] and r == -1.0 and (obs2["observation"] == obs["observation"]).all()
    env.step(bad)
    *_, term, trunc, _ = env.step(bad)
    assert trunc and not term
    with pytest.raises(RushHourError, match="illegal action"):
        RushHourEnv(level=1, illegal_action="raise").step(bad)
    obs, info = env.reset(options={"board": "oooooo" "oooooo" "AAoooo" + "o" * 18})
    *_, term, _, _ = env.step(encode_action(("A", 4)))
    assert term and info["min_moves"] is None
    obs, info = env.reset(options={"level": 40})
    assert info["min_moves"] == 51
    with pytest.raises(RushHourError):
        RushHourEnv(level=1, board=CARD1)


# -- CLI --------------------------------------------------------------------------------------
def test_cli_json(capsys):
    assert cli_main(["solve", CARD1, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["moves"] == 8 and len(out["solution"]) == 8 and out["states"] > 0
    assert parse_board(CARD1).play(out["solution"]).is_solved()
    assert cli_main(["solve", "--level", "40", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["moves"] == 51


@pytest.mark.parametrize("args", [["solve", "BBooo"], ["solve", "--level", "41"], ["solve"],
                                  ["solve", CARD1, "--level", "1"]])
def test_cli_bad_input(args, capsys):
    assert cli_main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "error" in captured.err


def test_cli_subprocess():
    ok = subprocess.run([sys.executable, "-m", "highway_env.rushhour", "solve", "--level", "1",
                         "--json"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and json.loads(ok.stdout)["moves"] == 8
    bad = subprocess.run([sys.executable, "-m", "highway_env.rushhour", "solve", CARD1[:-1] + "?",
                          "--json"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "bad character" in bad.stderr and bad.stdout == ""
    h = subprocess.run([sys.executable, "-m", "highway_env.rushhour", "solve", "--help"],
                       capture_output=True, text=True, timeout=60)
    assert h.returncode == 0 and "--level" in h.stdout and "--json" in h.stdout


def test_env_render_follows_the_render_mode(capsys):
    """Gymnasium's Env.render: "None (default): no render is computed" (gymnasium/core.py); as the
    other envs here, a warning and None. "ansi" returns the board, "human" prints it."""
    quiet = RushHourEnv(level=1)
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert quiet.render() is None
    assert capsys.readouterr().out == ""
    ansi = RushHourEnv(level=1, render_mode="ansi")
    ansi.reset(seed=0)
    assert ansi.render() == str(ansi.board)
    human = RushHourEnv(level=1, render_mode="human")
    human.reset(seed=0)
    assert capsys.readouterr().out == str(human.board) + "\n\n"  # drawn at reset
    assert human.render() is None
