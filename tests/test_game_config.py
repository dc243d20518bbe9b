"""--game-config: a sibling game's board chosen in train.py and evaluate.py, kept in the checkpoint."""

import json

import numpy as np

import pytest

import evaluate
import train
from agents.config import TrainConfig
from agents.checkpoint import CheckpointError, load_checkpoint
from agents.game import sample_legal
from agents.network import ConfigError
from agents.registry import get_game, make_agent
from highway_env.blackpath.az_game import BlackPathGame

TINY = ["--iterations", "1", "--minutes", "0", "--games-per-iter", "8", "--selfplay-batch", "8",
        "--simulations", "4", "--max-considered", "3", "--min-replay", "20", "--batch-size", "16",
        "--hidden", "16", "--layers", "1", "--eval-every", "0", "--workers", "0", "--no-progress",
        "--no-tensorboard", "--grade-every", "0", "--best-by", "score", "--play-simulations", "4"]


@pytest.mark.parametrize("game,text,match", [
    ("blackpath", '{"rowz": 5}', r"no option\(s\) \['rowz'\].*known: \['rows', 'cols', 'start'\]"),
    ("blackpath", '{"rows": "5"}', r"rejects .*'5'"),
    ("blackpath", '{"rows": 5, "start": "B2:top"}', r"rejects .*B2:top"),
    ("blackpath", '{"rows": 11, "cols": 11}', r"at most 120 squares, got 11 x 11 = 121"),
    ("blackpath", '{"rows": 100, "cols": 1}', r"1\.\.99 rows x 1\.\.26 cols, got 100 x 1"),
    ("jumping", '{"n": 9}', r"rejects .*9"),
    ("jumping", "[4]", "must be a JSON object"),
    ("jumping", "{n: 4}", "is not JSON"),
    ("highway", '{"obs": "planes"}', "disagree"),
])
def test_bad_game_config_names_the_key_or_value(game, text, match):
    extra = {"game_obs": "features"} if game == "highway" else {}
    with pytest.raises(ConfigError, match=match):
        TrainConfig(game=game, game_config=text, eval_every=0, **extra).validate()


def test_config_file_may_hold_the_options_object():
    cfg = TrainConfig.from_dict({"game": "jumping", "game_config": {"n": 5}, "eval_every": 0}).validate()
    assert cfg.game_options() == {"n": 5}


def test_board_travels_with_the_checkpoint(tmp_path, capsys):
    out = str(tmp_path)
    assert train.main(["--game", "blackpath", "--game-config", '{"rows": 3, "cols": 5}', "--run", "bp",
                       "--out-dir", out, *TINY]) == 0
    latest = tmp_path / "bp" / "latest.pt"
    assert load_checkpoint(latest)["game_config"] == {"rows": 3, "cols": 5, "start": "A1:top"}
    agent = make_agent(f"az:{latest}", seed=0)  # no game given: the checkpoint's board
    assert (agent.game.rows, agent.game.cols) == (3, 5)
    with pytest.raises(CheckpointError, match=r"'rows': 3, 'cols': 5.*'rows': 4, 'cols': 4"):
        make_agent(f"az:{latest}", BlackPathGame(4, 4), seed=0)
    # --resume keeps the board; resuming it as another board is an error naming both
    assert train.main(["--run", "bp", "--out-dir", out, "--resume", "--iterations", "2"]) == 0
    assert load_checkpoint(latest)["counters"]["iteration"] == 2
    assert train.main(["--run", "bp", "--out-dir", out, "--resume", "--iterations", "3",
                       "--game-config", '{"rows": 4, "cols": 4}']) == 2
    assert "'rows': 3, 'cols': 5" in capsys.readouterr().err
    # evaluate.py plays the checkpoint's board, and refuses a baseline board that differs
    argv = ["--game", "blackpath", "--agent", f"az:{latest}:4", "--agent", "random", "--games", "1",
            "--rr-games", "0", "--positions", "10", "--out", str(tmp_path / "ev"), "--no-progress",
            "--no-plots", "--json"]
    assert evaluate.main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["board"].startswith("3x5") and doc["config"]["game_config"]["cols"] == 5
    assert evaluate.main([*argv, "--game-config", '{"rows": 4, "cols": 4}']) == 2
    assert "not on this game" in capsys.readouterr().err


def test_evaluate_game_config_for_baselines(tmp_path, capsys):
    argv = ["--game", "jumping", "--game-config", '{"n": 3}', "--agent", "greedy", "--games", "1",
            "--rr-games", "0", "--positions", "10", "--out", str(tmp_path), "--no-progress", "--no-plots", "--json"]
    assert evaluate.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["board"] == "n = 3"
    assert evaluate.main(["--game", "jumping", "--game-config", '{"m": 3}', "--agent", "greedy"]) == 2
    assert "no option(s) ['m']" in capsys.readouterr().err
    assert evaluate.main(["--game-config", '{"n": 3}', "--agent", "greedy"]) == 2  # highway
    assert "--game blackpath|jumping" in capsys.readouterr().err


def test_help_explains_the_flag(capsys):
    for parser in (train.build_parser(), evaluate.build_parser()):
        text = parser.format_help()
        assert "--game-config" in text and "rows" in text and "n" in text
    assert get_game("jumping", {"n": 5}).config() == {"n": 5}


def test_label_from_ply_grades_late_positions_only(tmp_path, capsys):
    argv = ["--game", "jumping", "--game-config", '{"n": 3}', "--agent", "greedy", "--label-from-ply", "4",
            "--games", "0", "--rr-games", "0", "--positions", "10", "--out", str(tmp_path), "--no-progress",
            "--no-plots", "--json"]
    assert evaluate.main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["start_value"] is None and doc["config"]["label_from_ply"] == 4
    plies = [int(line.split(",")[1]) for line in (tmp_path / "accuracy_by_ply.csv").read_text().splitlines()[1:]]
    assert plies and min(plies) >= 4
    # n = 6 cannot be solved from the start: the evaluation says what to give instead of hanging
    assert evaluate.main(["--game", "jumping", "--game-config", '{"n": 6}', "--agent", "greedy"]) == 2
    assert "--label-from-ply 19 or more" in capsys.readouterr().err


def test_jumping_margin_value_target_keeps_the_result_and_orders_margins():
    from highway_env.jumping.az_game import JumpingGame

    plain, margin = JumpingGame(4), JumpingGame(4, value="margin")
    assert plain.config() == {"n": 4} and margin.config() == {"n": 4, "value": "margin"}
    assert margin.rules_config() == plain.rules_config()  # an agent of either plays the other's game
    rng = np.random.default_rng(0)
    s = margin.initial_states(64)
    while not margin.terminal(s).all():
        live = ~margin.terminal(s)
        s[live] = margin.apply(s[live], sample_legal(margin.legal_masks(s[live]), rng))
    m, r = margin.margins(s), margin.returns(s)
    assert np.array_equal(np.sign(r), plain.returns(s)) and len(set(m.tolist())) > 2
    order = np.argsort(m, kind="stable")
    assert np.all(np.diff(r[order]) >= 0) and np.all(np.abs(r) < 1)
    with pytest.raises(ConfigError, match="value must be .*'sign'"):
        TrainConfig(game="jumping", game_config='{"value": "sign"}', eval_every=0).validate()


def test_margin_valued_checkpoint_leaves_the_baselines_game_alone(tmp_path, capsys):
    """A checkpoint trained with Jumping's margin value target gives evaluate.py its board only: the
    baselines play the plain game, exactly as when the board is given with --game-config."""
    out = str(tmp_path)
    assert train.main(["--game", "jumping", "--game-config", '{"n": 3, "value": "margin"}', "--run", "jm",
                       "--out-dir", out, *TINY]) == 0
    latest = tmp_path / "jm" / "latest.pt"
    capsys.readouterr()
    assert make_agent(f"az:{latest}", seed=0).game.config() == {"n": 3, "value": "margin"}
    argv = ["--game", "jumping", "--agent", f"az:{latest}:4", "--agent", "mcts:8", "--games", "2",
            "--rr-games", "2", "--positions", "20", "--no-progress", "--no-plots", "--json"]
    docs = []
    for extra in ([], ["--game-config", '{"n": 3}']):
        assert evaluate.main([*argv, *extra, "--out", str(tmp_path / f"ev{len(docs)}")]) == 0
        docs.append(json.loads(capsys.readouterr().out))
        docs[-1].pop("wall_seconds")
    assert docs[0]["config"]["game_config"] == {"n": 3}
    assert docs[0]["agents"] == docs[1]["agents"] and docs[0]["round_robin"] == docs[1]["round_robin"]
