"""evaluate.py --game blackpath|jumping and the solver-backed perfect players of the sibling games."""

import json

import numpy as np
import pytest

import evaluate
from agents.base import RandomAgent
from agents.registry import make_agent
from highway_env.blackpath.az_game import BlackPathGame
from highway_env.blackpath.perfect import BlackPathPerfect
from highway_env.blackpath.solver import solve as bp_solve
from highway_env.evaluation.siblings import play_games
from highway_env.jumping import game as jg
from highway_env.jumping import solver as jsolver
from highway_env.jumping.az_game import JumpingGame
from highway_env.jumping.perfect import JumpingPerfect, Oracle


def test_perfect_spec_resolves_per_game():
    assert isinstance(make_agent("perfect", BlackPathGame(), seed=0), BlackPathPerfect)
    assert isinstance(make_agent("perfect", JumpingGame(3), seed=0), JumpingPerfect)
    assert isinstance(make_agent("perfect:random", JumpingGame(3), seed=0), JumpingPerfect)
    with pytest.raises(ValueError):
        make_agent("perfect:hardest", BlackPathGame(), seed=0)


@pytest.mark.parametrize("rows,cols", [(3, 3), (4, 4), (3, 4)])
def test_blackpath_perfect_never_loses_a_won_game(rows, cols):
    game = BlackPathGame(rows, cols)
    winner = bp_solve(rows, cols).winner  # 1 or 2
    perfect, rand = BlackPathPerfect(game, seed=1), RandomAgent(game, seed=2)
    if winner == 1:
        m = play_games(game, perfect, rand, 30, 5)
    else:
        m = -play_games(game, rand, perfect, 30, 5)
    assert (m > 0).all()
    # perfect against perfect: the winner of the solve
    m = play_games(game, perfect, BlackPathPerfect(game, seed=3), 10, 6)
    assert (m == (1 if winner == 1 else -1)).all()


def test_jumping_oracle_matches_reference_move_values():
    rng = np.random.default_rng(0)
    o = Oracle.get(3)
    for _ in range(20):
        s = jg.initial_state(3)
        while not s.is_terminal():
            assert o.move_values(s) == jsolver.move_values(s)
            mv = s.legal_moves()
            s, _ = s.apply(mv[rng.integers(len(mv))][0])


def test_jumping_oracle_labels_late_n5_positions_lazily():
    """Above n = 4 nothing is solved up front: each position asked about is searched from, into one
    shared memo that is grown before it is half full (so lookups stay short)."""
    from highway_env.jumping import perfect

    o = perfect.Oracle(5)
    rng = np.random.default_rng(1)
    for _ in range(6):
        s = jg.initial_state(5)
        while not s.is_terminal():
            mv = s.legal_moves()
            if s.ply >= 15:
                assert o.move_values(s) == jsolver.move_values(s)
            s, _ = s.apply(mv[rng.integers(len(mv))][0])
    entries = int(np.count_nonzero(o.table))
    assert entries == o.stats[0] > 0 and entries <= len(o.table) // 2


@pytest.mark.parametrize("n", [3, 4])
def test_jumping_perfect_keeps_the_value(n):
    game = JumpingGame(n)
    v = jsolver.solve(n).value  # first player's margin with perfect play (n=3: +3, n=4: -3)
    assert v != 0
    perfect = JumpingPerfect(game, seed=1)
    m = play_games(game, perfect, JumpingPerfect(game, seed=2), 6, 7)
    assert (m == v).all()
    rand = RandomAgent(game, seed=3)
    if v > 0:  # perfect as the winning side never does worse than the value
        m = play_games(game, perfect, rand, 20, 8)
        assert (m >= v).all()
    else:
        m = -play_games(game, rand, perfect, 20, 8)
        assert (m >= -v).all()


@pytest.mark.parametrize("game", ["blackpath", "jumping"])
def test_evaluate_sibling_json_schema(game, tmp_path, capsys):
    out = tmp_path / "ev"
    argv = ["--game", game, "--agent", "random", "--agent", "greedy", "--games", "2", "--rr-games", "2",
            "--positions", "20", "--out", str(out), "--no-progress", "--no-plots", "--json"]
    assert evaluate.main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["game"] == game and set(doc["agents"]) == {"random", "greedy"}
    for a in doc["agents"].values():
        assert 0 <= a["accuracy"]["rate"] <= 1 and a["accuracy"]["n"] > 0
        for key in ("as_A_vs_perfect", "as_B_vs_perfect"):
            assert a[key]["games"] == 2 and a[key]["win"] + a[key]["draw"] + a[key]["loss"] == 2
        assert "elo" in a["elo"] and len(a["elo"]["ci95"]) == 2
    assert doc["elo"]["random"]["elo"] == 0.0
    for f in ("report.md", "summary.json", "agents.csv", "accuracy_by_ply.csv"):
        assert (out / f).exists()
    # the perfect player as an agent: full accuracy, never loses as the winning side
    assert evaluate.main(["--game", game, "--agent", "perfect", "--games", "2", "--positions", "20",
                          "--out", str(out / "p"), "--no-progress", "--no-plots", "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["agents"]["perfect"]
    assert p["accuracy"]["rate"] == 1.0
    winning_side = "as_A_vs_perfect" if game == "blackpath" else "as_B_vs_perfect"  # 4x4 / n=4
    assert p[winning_side]["win"] == 2


def test_bad_game_exits_2(capsys):
    assert evaluate.main(["--game", "chess", "--agent", "random", "--no-progress"]) == 2
    assert "unknown --game" in capsys.readouterr().err


def test_perfect_players_say_from_which_ply_they_are_exact():
    """evaluate.py asks the game's perfect player (without building it) whether it plays from the
    start: Jumping up to n = 5 and Black Path do; Jumping n = 6 labels from ply 19 (17 empty squares)."""
    from agents.registry import perfect_first_exact_ply

    assert perfect_first_exact_ply(BlackPathGame()) == 0
    assert [perfect_first_exact_ply(JumpingGame(n)) for n in (3, 4, 5, 6, 7)] == [0, 0, 0, 19, 32]
