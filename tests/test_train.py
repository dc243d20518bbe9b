"""Training: smoke run, exact resume, worker-count independence, config validation, train.py CLI."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agents.checkpoint import CheckpointError, load_checkpoint
from agents.config import TrainConfig
from agents.network import ConfigError
from agents.trainer import Trainer

ROOT = Path(__file__).resolve().parents[1]


def tiny(tmp_path, run="t", **kw):
    """A run of seconds. One learner thread and the evaluation in the loop keep it quick on a
    loaded machine; tests/test_train_scale.py covers more threads and the background evaluation."""
    base = dict(run=run, out_dir=str(tmp_path), iterations=4, minutes=0, games_per_iter=12,
                selfplay_batch=6, simulations=6, max_considered=4, min_replay=40, batch_size=32,
                hidden=32, layers=1, eval_every=2, eval_games=4, eval_opponents="random,mcts:10",
                eval_simulations=4, workers=0, progress=False, tensorboard=False, checkpoint_every=2,
                learner_threads=1, eval_background=False)
    base.update(kw)
    return TrainConfig(**base)


def _same(a, b):
    sa, sb = a.net.state_dict(), b.net.state_dict()
    return all(torch.equal(sa[k], sb[k]) for k in sa)


def test_smoke_and_files(tmp_path):
    t = Trainer(tiny(tmp_path))
    out = t.run()
    run = tmp_path / "t"
    assert out["counters"]["iteration"] == 4 and out["counters"]["steps"] > 0
    assert {"random", "mcts:10", "mean"} <= set(out["eval"])
    for f in ("latest.pt", "best.pt", "log.csv"):
        assert (run / f).exists()
    assert len(list(run.glob("replay_*.npz"))) == 1
    lines = (run / "log.csv").read_text().splitlines()
    assert len(lines) == 5 and "eval_mean" in lines[0]
    ck = load_checkpoint(run / "latest.pt")
    assert ck["counters"]["iteration"] == 4 and "optimizer" in ck and ck["config"]["run"] == "t"


def test_resume_matches_uninterrupted(tmp_path):
    a = Trainer(tiny(tmp_path, "a"))
    a.run()
    b = Trainer(tiny(tmp_path, "b"))
    b.run(stop_after=2)
    assert load_checkpoint(tmp_path / "b" / "latest.pt")["counters"]["iteration"] == 2
    b2 = Trainer(tiny(tmp_path, "b"), resume=True)
    assert b2.counters["iteration"] == 2 and len(b2.replay) > 0
    b2.run()
    assert b2.counters["iteration"] == 4 and b2.counters["steps"] == a.counters["steps"]
    assert _same(a, b2)
    assert len((tmp_path / "b" / "log.csv").read_text().splitlines()) == 5


def test_worker_process_gives_same_result(tmp_path):
    a = Trainer(tiny(tmp_path, "w0", iterations=2, eval_every=0))
    a.run()
    b = Trainer(tiny(tmp_path, "w1", iterations=2, eval_every=0, workers=1))
    b.run()
    assert _same(a, b)


def test_resume_of_corrupt_checkpoint_names_file(tmp_path):
    Trainer(tiny(tmp_path, iterations=2, eval_every=0)).run()
    p = tmp_path / "t" / "latest.pt"
    p.write_bytes(p.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="latest.pt"):
        Trainer(tiny(tmp_path), resume=True)


@pytest.mark.parametrize("field,value", [("lr", -1.0), ("simulations", 0), ("net", "cnn"),
                                         ("search", "alphabeta"), ("eval_opponents", "bogus:3"),
                                         ("min_replay", 10**9), ("game", "chess")])
def test_config_validation_names_bad_value(field, value):
    with pytest.raises(ConfigError, match=field if field != "net" else "cnn"):
        TrainConfig(**{field: value}).validate()


def test_config_json(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"hidden": 64, "lr": 1}))
    cfg = TrainConfig.from_json(p)
    assert cfg.hidden == 64 and cfg.lr == 1.0
    p.write_text(json.dumps({"hiden": 64}))
    with pytest.raises(ConfigError, match="hiden"):
        TrainConfig.from_json(p)
    p.write_text(json.dumps({"hidden": "big"}))
    with pytest.raises(ConfigError, match="hidden"):
        TrainConfig.from_json(p)


def _train_py(*args, timeout=120):
    return subprocess.run([sys.executable, str(ROOT / "train.py"), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_train_py_help():
    r = _train_py("--help")
    assert r.returncode == 0
    for flag in ("--minutes", "--workers", "--ray-address", "--resume", "--config", "--device",
                 "--simulations", "--eval-opponents", "--learner-threads", "--eval-background",
                 "--no-eval-background", "--ray-runtime-env"):
        assert flag in r.stdout


def test_train_py_bad_value_and_resume(tmp_path):
    r = _train_py("--lr", "-1")
    assert r.returncode == 2 and "lr" in r.stderr and "-1" in r.stderr
    cfg = tiny(tmp_path, iterations=2, eval_every=0).to_dict()
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    r = _train_py("--config", str(tmp_path / "c.json"))
    assert r.returncode == 0, r.stderr
    r = _train_py("--resume", "--out-dir", str(tmp_path), "--run", "t", "--iterations", "3")
    assert r.returncode == 0, r.stderr
    assert load_checkpoint(tmp_path / "t" / "latest.pt")["counters"]["iteration"] == 3
    r = _train_py("--resume", "--out-dir", str(tmp_path), "--run", "missing")
    assert r.returncode == 2 and "missing" in r.stderr


def test_ray_missing_is_a_clear_error(monkeypatch):
    """Without the ray package --ray-address says what to install (a run on local Ray, with a
    worker killed mid-chunk, is in tests/test_train_scale.py)."""
    from agents.parallel import RayPool

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(RuntimeError, match="pip install"):
        RayPool("local")


def test_fresh_run_moves_an_earlier_run_aside(tmp_path):
    from train import keep_previous_run

    run = tmp_path / "highway_az"
    assert keep_previous_run(run) is None  # nothing there yet
    run.mkdir()
    (run / "latest.pt").write_bytes(b"earlier run")
    aside = keep_previous_run(run)
    assert not run.exists() and (aside / "latest.pt").read_bytes() == b"earlier run"
    run.mkdir()
    (run / "latest.pt").write_bytes(b"second")
    assert keep_previous_run(run) != aside  # never clobbers the first one kept


def test_checkpoint_keeps_game_options_and_play_simulations(tmp_path):
    from agents.alphazero import AlphaZeroAgent

    Trainer(tiny(tmp_path, "f", iterations=1, eval_every=0, play_simulations=7)).run()
    ck = load_checkpoint(tmp_path / "f" / "best.pt")
    assert ck["game_config"] == {"obs": "features"} and ck["search_config"]["simulations"] == 7
    assert ck["search_config"]["kind"] == "puct" and ck["search_config"]["c_puct"] == 4.0
    agent = AlphaZeroAgent.from_checkpoint(tmp_path / "f" / "best.pt")
    assert agent.simulations == 7 and agent.game.config() == {"obs": "features"}
    assert agent.search.config.kind == "puct"
    assert TrainConfig(play_search="gumbel", c_puct=1.5).play_search_config().c_puct == 1.5
    with pytest.raises(ConfigError, match="play_search"):
        tiny(tmp_path, play_search="bogus").validate()
    Trainer(tiny(tmp_path, "p", iterations=1, eval_every=0, game_obs="planes")).run()
    agent = AlphaZeroAgent.from_checkpoint(tmp_path / "p" / "latest.pt", simulations=2)
    assert agent.game.config() == {"obs": "planes"} and agent.game.obs_shape == (4, 4, 16)
    with pytest.raises(ConfigError, match="game_obs"):
        tiny(tmp_path, game_obs="pixels").validate()


def test_resume_of_a_run_from_before_game_options(tmp_path):
    """A training checkpoint written before game_obs / random openings resumes as it was trained."""
    from agents.checkpoint import save_checkpoint
    from train import build_parser, config_from_args

    Trainer(tiny(tmp_path, "old", iterations=1, eval_every=0, game_obs="planes", random_opening=0)).run()
    path = tmp_path / "old" / "latest.pt"
    data = load_checkpoint(path)
    data.pop("format")
    data.pop("game_config")
    for k in ("game_obs", "random_opening", "random_opening_share", "play_search", "play_simulations",
              "play_c_puct"):
        data["config"].pop(k)
    save_checkpoint(path, data)
    cfg = config_from_args(build_parser().parse_args(
        ["--resume", "--out-dir", str(tmp_path), "--run", "old", "--iterations", "2"]))
    assert cfg.game_obs == "planes" and cfg.random_opening == 0
    t = Trainer(cfg, resume=True)
    assert t.game.obs_shape == (4, 4, 16)
    assert t.run()["counters"]["iteration"] == 2


@pytest.mark.parametrize("saved, argv, kept", [
    # trained on a cluster with a longer node wait, resumed on this machine
    ({"ray_address": "10.0.0.1:6379", "ray_node_wait": 600.0}, ["--ray-address", ""], {}),
    # trained here before a runtime_env without an address was refused (it was ignored then)
    ({"ray_runtime_env": "none"}, [], {}),
    # resumed on the cluster again: its settings stay
    ({"ray_address": "10.0.0.1:6379", "ray_node_wait": 600.0, "ray_runtime_env": "none"}, [],
     {"ray_address": "10.0.0.1:6379", "ray_node_wait": 600.0, "ray_runtime_env": "none"}),
])
def test_resume_on_this_machine_drops_the_runs_saved_ray_settings(tmp_path, capsys, saved, argv, kept):
    """A run's Ray settings say where its self-play ran, not what it computed: resumed without a Ray
    address, the saved ones are left out with a note (they were an error naming a flag the user
    never gave: "ray_node_wait 600.0 is for runs on Ray: add ray_address ..."), and an older
    checkpoint without ray_node_wait resumes with the default."""
    from agents.checkpoint import save_checkpoint
    from highway_env.ray_tasks import NODE_WAIT_SECONDS
    from train import build_parser, config_from_args

    config = TrainConfig(run="r", out_dir=str(tmp_path)).to_dict()
    config.pop("ray_node_wait")  # as a checkpoint written before the field
    config.update(saved)
    save_checkpoint(tmp_path / "r" / "latest.pt", {"game": "highway", "net_config": {}, "model": {}, "config": config})
    cfg = config_from_args(build_parser().parse_args(["--resume", "--out-dir", str(tmp_path), "--run", "r", *argv]))
    cfg.validate()
    expected = {"ray_address": "", "ray_node_wait": NODE_WAIT_SECONDS, "ray_runtime_env": "", **kept}
    assert {k: getattr(cfg, k) for k in expected} == expected
    err = capsys.readouterr().err
    if kept:
        assert err == ""
    else:
        assert "resumed on this machine" in err and all(f"{k} {v!r}" in err for k, v in saved.items()
                                                          if k != "ray_address")


def test_resume_keeps_ray_settings_given_without_an_address_an_error(tmp_path):
    """Given on the command line they are the user's: still the one-line error naming them."""
    from agents.checkpoint import save_checkpoint
    from train import build_parser, config_from_args

    config = {**TrainConfig(run="r", out_dir=str(tmp_path)).to_dict(), "ray_address": "10.0.0.1:6379"}
    save_checkpoint(tmp_path / "r" / "latest.pt", {"game": "highway", "net_config": {}, "model": {}, "config": config})
    cfg = config_from_args(build_parser().parse_args(["--resume", "--out-dir", str(tmp_path), "--run", "r",
                                                      "--ray-address", "", "--ray-node-wait", "600"]))
    with pytest.raises(ConfigError, match="ray_node_wait 600.0 is for runs on Ray: add ray_address"):
        cfg.validate()


def test_perfect_player_is_a_valid_evaluation_opponent():
    """"perfect" (registered by agents/registry.py, built as the game's Game.perfect_player) is a
    known agent kind when the config is checked; a misspelt kind is a ConfigError naming it."""
    cfg = TrainConfig(eval_opponents="greedy,perfect").validate()
    assert cfg.opponents() == ["greedy", "perfect"]
    with pytest.raises(ConfigError, match="perfecto"):
        TrainConfig(eval_opponents="perfecto").validate()


def test_snapshots_at_training_times(tmp_path):
    """--snapshot-minutes keeps the network at those training times, small and playable as az:PATH;
    a time the run never reaches writes nothing."""
    from agents import make_agent

    Trainer(tiny(tmp_path, snapshot_minutes="0.0001, 1000")).run()
    run = tmp_path / "t"
    assert sorted(p.name for p in run.glob("snapshot_*.pt")) == ["snapshot_0.0001min.pt"]
    ck = load_checkpoint(run / "snapshot_0.0001min.pt")
    assert "optimizer" not in ck and "replay_file" not in ck
    assert {"net_config", "search_config", "model"} <= set(ck)
    make_agent(f"az:{run / 'snapshot_0.0001min.pt'}:4")


@pytest.mark.parametrize("value", ["1,x", "0", "-5", "nan", "1,,inf"])
def test_snapshot_minutes_names_bad_value(tmp_path, value):
    with pytest.raises(ConfigError, match="snapshot_minutes"):
        tiny(tmp_path, snapshot_minutes=value).validate()


def test_the_trainer_hands_its_node_wait_to_the_ray_pool(tmp_path, monkeypatch):
    """ray_node_wait reaches the pool the run builds (the pool's own wait is tested in test_ray_tasks.py)."""
    from agents import trainer as trainer_module

    seen = []

    class Stop(Exception):
        pass

    def make_pool(workers, address, runtime_env, modules, node_wait, kept):
        seen.append((address, node_wait, kept()))
        raise Stop

    monkeypatch.setattr(trainer_module, "make_pool", make_pool)
    with pytest.raises(Stop):
        Trainer(tiny(tmp_path, ray_address="auto", ray_node_wait=7.5)).run()
    # and what the run keeps, should this machine's Ray node be lost (nothing yet: no checkpoint)
    assert seen == [("auto", 7.5, "no checkpoint was written yet: start the run again")]


def test_the_default_run_name_is_the_games_so_two_games_never_share_a_run(tmp_path):
    assert TrainConfig().run_name() == "highway_az"  # the README's checkpoints/highway_az/latest.pt
    assert TrainConfig(game="jumping").run_name() == "jumping_az"
    assert TrainConfig(game="examples.tictactoe_game:TicTacToeGame").run_name() == "tictactoegame_az"
    assert TrainConfig(game="jumping", run="mine").run_name() == "mine"
    cfg = TrainConfig(game="jumping", out_dir=str(tmp_path), iterations=1).validate()
    assert Trainer(cfg).run_dir == tmp_path / "jumping_az"
