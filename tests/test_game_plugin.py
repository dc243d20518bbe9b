"""A researcher's own game plugs in without editing the package: ``agents.register_game`` and
``--game module:Class`` (train.py, TrainConfig, checkpoints, evaluate.py), shown on the example
``examples/tictactoe_game.py`` with its exact perfect player."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.arena import play_match
from agents.config import TrainConfig
from agents.game import Game
from agents.games import GAMES, game_key, get_game, register_game
from agents.network import ConfigError
from agents.registry import make_agent
from examples.tictactoe_game import TicTacToeGame, move_values

ROOT = Path(__file__).resolve().parents[1]
REF = "examples.tictactoe_game:TicTacToeGame"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}  # the fresh processes import the example from the repository


class NotAGame:
    pass


class AbstractGame(Game):  # lacks the rules
    pass


class NoPerfectPlayer(TicTacToeGame):
    perfect_player = None


@pytest.fixture
def registry():
    """GAMES restored after the test (registrations are process-wide)."""
    saved = dict(GAMES)
    yield
    GAMES.clear()
    GAMES.update(saved)


@pytest.mark.parametrize("ref, message", [
    ("tictactoe_game.TicTacToeGame", "'package.module:"),  # no colon
    ("no_such_module_xyz:Game", "cannot import module 'no_such_module_xyz'"),
    ("examples.tictactoe_game:NoSuchClass", "has no attribute 'NoSuchClass'"),
    ("examples.tictactoe_game:move_values", "is not an agents.game.Game subclass"),
    ("tests.test_game_plugin:NotAGame", "is not an agents.game.Game subclass"),
    ("tests.test_game_plugin:AbstractGame", "is an abstract Game: it lacks apply"),
])
def test_bad_references_are_one_line_errors_naming_them(registry, ref, message):
    for call in (lambda: register_game("mine", ref), lambda: get_game(ref)):
        with pytest.raises(ValueError) as e:
            call()
        assert message in str(e.value) and ref in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ConfigError, match=f"game: .*{ref[:12]}"):
        TrainConfig(game=ref).validate()


def test_register_game_mirrors_register_agent(registry):
    register_game("ttt", REF)
    assert isinstance(get_game("ttt"), TicTacToeGame) and isinstance(agents.get_game("ttt"), TicTacToeGame)
    with pytest.raises(ValueError, match="game 'ttt' is already registered"):
        register_game("ttt", TicTacToeGame)
    register_game("ttt", TicTacToeGame, replace=True)  # a class registers by its importable reference
    assert GAMES["ttt"] == REF
    with pytest.raises(ValueError, match="'blackpath' is a shipped game"):
        register_game("blackpath", REF, replace=True)
    with pytest.raises(ValueError, match="must be an identifier"):
        register_game("a:b", REF)

    class Local(TicTacToeGame):
        pass

    for bad in (Local, "__main__:Local"):
        with pytest.raises(ValueError, match="cannot be imported by another process"):
            register_game("local", bad)
    with pytest.raises(ValueError, match=r"unknown game 'nope'; known: .*'ttt'.*'package\.module:GameClass'"):
        get_game("nope")
    assert agents.register_game is register_game


def test_a_registered_name_travels_as_its_reference(registry):
    """A name registered in this process does not exist in spawned workers or a later process:
    the config (hence workers, the evaluator and checkpoints) carries the class's reference."""
    register_game("ttt", REF)
    assert game_key("ttt") == REF and game_key(REF) == REF
    assert game_key("highway_env.blackpath.az_game:BlackPathGame") == "blackpath" == game_key("blackpath")
    cfg = TrainConfig(game="ttt", eval_every=0, grade_every=0, best_by="score").validate()
    assert cfg.game == REF


def test_the_example_game_and_its_perfect_player():
    g = TicTacToeGame()
    s0 = g.initial_states(1)
    assert move_values(g, s0[0]).tolist() == [0] * 9  # every first move keeps the draw
    # X to move wins at once on cell 2; a move elsewhere than 2 or 5 lets O complete the middle row
    s = g.as_states("XX./OO./...")
    v = move_values(g, s[0])
    assert v[2] == 1 and v[[6, 7, 8]].tolist() == [-1] * 3 and (v[[0, 1, 3, 4]] == -10**6).all()
    perfect = make_agent("perfect", g, seed=0)
    assert perfect.act(s[0]) == 2
    r = play_match(perfect, make_agent("random", g, seed=1), g, 40, seed=0)
    assert r.losses == 0 and r.wins > 30
    r = play_match(perfect, make_agent("perfect", g, seed=2), g, 10, seed=0)
    assert r.draws == 10
    og, ag = g.symmetries()
    assert og.shape == (8, 18) and (ag[0] == np.arange(9)).all()
    for k in range(8):  # the gathers agree with the board transformed
        t = s.copy()
        t[:, :9] = s[:, ag[k]]
        assert (g.observations(s).reshape(1, -1)[:, og[k]] == g.observations(t).reshape(1, -1)).all()
        assert (g.legal_masks(s)[:, ag[k]] == g.legal_masks(t)).all()


def _run(args, cwd, timeout=180):
    p = subprocess.run([sys.executable, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr[-2000:]
    return p


TINY = ["--iterations", "2", "--minutes", "0", "--games-per-iter", "8", "--selfplay-batch", "4",
        "--simulations", "6", "--max-considered", "4", "--min-replay", "20", "--batch-size", "16",
        "--hidden", "16", "--layers", "1", "--eval-every", "1", "--eval-games", "2",
        "--eval-opponents", "random,perfect", "--eval-simulations", "2", "--no-progress",
        "--no-tensorboard", "--checkpoint-every", "1", "--learner-threads", "1", "--grade-every", "0",
        "--best-by", "score", "--play-simulations", "8"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """train.py on the example game by reference, with a self-play worker and the background
    evaluation (both spawned processes that import the game), run from another directory."""
    tmp = tmp_path_factory.mktemp("plugin")
    _run([str(ROOT / "train.py"), "--game", REF, "--run", "ttt", "--out-dir", str(tmp), "--workers", "1", *TINY], tmp)
    return tmp


def test_train_by_reference_writes_a_checkpoint_a_fresh_process_plays(trained):
    ckpt = trained / "ttt" / "latest.pt"
    import torch

    data = torch.load(ckpt, weights_only=True)
    assert data["game"] == REF and data["config"]["game"] == REF
    code = ("import agents, json\n"
            f"a = agents.make_agent('az:{ckpt}', seed=0)\n"
            "g = a.game; s = g.initial_states(4)\n"
            "while not g.terminal(s).all():\n"
            "    live = ~g.terminal(s); acts = a.act_batch(s[live])\n"
            "    assert g.legal_masks(s[live])[range(len(acts)), acts].all()\n"
            "    s[live] = g.apply(s[live], acts)\n"
            "print(json.dumps([type(g).__module__, g.name, s[:, -1].tolist()]))\n")
    out = json.loads(_run(["-c", code], trained).stdout.strip().splitlines()[-1])
    assert out[0] == "examples.tictactoe_game" and out[1] == "tictactoe"
    assert all(5 <= ply <= 9 for ply in out[2])  # games finished (a line needs 5 moves)


def test_evaluate_grades_the_checkpoint_against_its_perfect_player(trained):
    out = trained / "eval"
    p = _run([str(ROOT / "evaluate.py"), "--game", REF, "--agent", f"az:{trained / 'ttt' / 'best.pt'}:4",
              "--agent", "random", "--games", "3", "--positions", "40", "--out", str(out), "--json",
              "--no-plots", "--no-progress"], trained)
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    assert summary["game"] == REF and summary["title"] == "Tic-tac-toe" and summary["start_value"] == 0
    assert summary["config"]["critical_positions"] > 0
    for a in summary["agents"].values():
        assert a["accuracy"]["n"] == summary["config"]["critical_positions"] and 0 <= a["accuracy"]["rate"] <= 1
        assert a["as_A_vs_perfect"]["games"] == 3 and a["as_A_vs_perfect"]["win"] == 0  # nobody beats perfect
    assert "# Tic-tac-toe (3x3): evaluation against the exact solver" in (out / "report.md").read_text()


def test_evaluate_refuses_games_it_cannot_grade(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "evaluate.py"), "--game", "examples.tictactoe_game:Nope",
                        "--agent", "random"], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "unknown --game 'examples.tictactoe_game:Nope'" in p.stderr
    assert "has no attribute 'Nope'" in p.stderr and len(p.stderr.strip().splitlines()) == 1



def test_evaluate_needs_a_perfect_player_that_labels_moves(capsys):
    import evaluate

    assert evaluate.main(["--game", "tests.test_game_plugin:NoPerfectPlayer", "--agent", "random"]) == 2
    err = capsys.readouterr().err
    assert "--game tests.test_game_plugin:NoPerfectPlayer: game 'tictactoe' names no perfect player" in err


def test_a_spawned_worker_rebuilds_a_game_registered_only_in_the_parent(registry, tmp_path):
    from agents.parallel import ProcessPool
    from agents.trainer import Trainer

    register_game("ttt_parent_only", TicTacToeGame)
    cfg = TrainConfig(game="ttt_parent_only", run="w", out_dir=str(tmp_path), iterations=1, minutes=0,
                      games_per_iter=4, selfplay_batch=4, simulations=4, max_considered=4, hidden=16,
                      layers=1, workers=1, eval_every=0, grade_every=0, best_by="score", progress=False,
                      tensorboard=False, learner_threads=1)
    t = Trainer(cfg)
    tasks = t._tasks(1, {k: v.detach().numpy() for k, v in t.net.state_dict().items()})
    assert {task.game for task in tasks} == {REF}
    pool = ProcessPool(1, helps=False)  # the worker alone plays the chunk
    try:
        pool.submit(tasks)
        (res,) = pool.collect()
    finally:
        pool.close()
    assert res.games == 4


def test_a_checkpoint_names_its_game_by_reference(trained, tmp_path):
    from agents.alphazero import AlphaZeroAgent
    from agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

    data = load_checkpoint(trained / "ttt" / "best.pt")
    with pytest.raises(CheckpointError, match=r"is an agent of '.*:TicTacToeGame', not of 'blackpath'"):
        AlphaZeroAgent.from_checkpoint(trained / "ttt" / "best.pt", game=get_game("blackpath"))
    assert AlphaZeroAgent.from_checkpoint(trained / "ttt" / "best.pt", game=TicTacToeGame()).game.name == "tictactoe"
    save_checkpoint(tmp_path / "moved.pt", {**data, "game": "no_such_module_xyz:TicTacToeGame"})
    with pytest.raises(CheckpointError, match=r"cannot rebuild its game: 'no_such_module_xyz:TicTacToeGame': "
                                              r"cannot import module 'no_such_module_xyz'"):
        AlphaZeroAgent.from_checkpoint(tmp_path / "moved.pt")
