"""bench/bench_train.py: its flags, and a tiny run against this checkout as its own baseline, which
must report bit-identical results (the check the speed work relies on)."""

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TINY = ("--iterations 2 --seed 3 --workers 0 --learner-threads 1 --no-eval-background --eval-every 0 "
        "--games-per-iter 8 --selfplay-batch 8 --simulations 4 --min-replay 8 --batch-size 8 "
        "--replay-size 1000 --hidden 16 --layers 1 --grade-every 1 --grade-positions 16 --grade-simulations 2 "
        "--no-tensorboard --no-progress")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_train", REPO / "bench" / "bench_train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv, named", [(["--train-args", "--out-dir x"], "sets --out-dir"),
                                         (["--train-args", "--run r"], "sets --run"),
                                         (["--baseline", "{tmp}"], "has no train.py")])
def test_bench_train_refuses_its_own_folders_and_a_baseline_that_is_no_checkout(capsys, tmp_path, argv, named):
    with pytest.raises(SystemExit) as exc:
        _bench().parse_args([a.format(tmp=tmp_path) for a in argv])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert named in err and len(err.splitlines()) == 1, err


@pytest.mark.slow
def test_bench_train_finds_this_checkout_identical_to_itself(capsys):
    assert _bench().main(["--train-args", TINY, "--baseline", str(REPO), "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "identical results in every run: yes" in out and "baseline" in out, out
