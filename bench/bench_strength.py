"""Strength curve over training time, drawn from a training run's own log.

The trainer grades its network every ``--grade-every`` iterations on a fixed sample of critical
positions of the position set's selection part (``agents/grading.py``: the share of moves that keep
the solver's game value, with the self-play search by default) and logs it in ``log.csv`` (``grade_accuracy``),
next to the evaluation's score against greedy (``eval_greedy``, with search). This script reads
that log; it evaluates nothing again. The baseline, measured here on the same positions: greedy's
accuracy; the table prints each graded point's accuracy and its ratio to greedy's.

With ``--log`` it draws the curve of a finished run; without, it first trains one (``train.py``
into OUT/checkpoints/strength, resumed with ``--resume`` if it was interrupted). Writes
OUT/strength.csv and OUT/strength.png.

    python bench/bench_strength.py                                   # the default 25-minute run
    python bench/bench_strength.py --minutes 3 --train-args "--grade-every 2"           # quick
    python bench/bench_strength.py --log checkpoints/highway_az/log.csv --out results/x  # no training
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
from pathlib import Path

import numpy as np

from highway_env.cli_args import OneLineErrorParser, non_negative_int, positive_float

ROOT = Path(__file__).resolve().parent.parent
FIELDS = ["iteration", "train_minutes", "games", "accuracy", "accuracy_ci_lo", "accuracy_ci_hi",
          "greedy_accuracy", "ratio_to_greedy", "score_vs_greedy"]


def train(args) -> Path:
    """Train (or finish) the run OUT/checkpoints/strength; its log.csv."""
    run = Path(args.out) / "checkpoints" / "strength"
    cmd = [sys.executable, str(ROOT / "train.py"), "--out-dir", str(run.parent), "--run", "strength",
           "--minutes", str(args.minutes), "--seed", str(args.seed), "--no-progress"]
    if (run / "latest.pt").exists():
        cmd.append("--resume")
    subprocess.run(cmd + args.train_args.split(), check=True, cwd=ROOT)
    return run / "log.csv"


def read_log(path: Path) -> list[dict]:
    """The rows of a training log that carry a graded accuracy."""
    try:
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, ValueError, csv.Error) as e:  # ValueError: not UTF-8
        raise ValueError(f"cannot read the training log {str(path)!r}: {e}") from None
    graded = [r for r in rows if r.get("grade_accuracy")]
    if not graded:
        raise ValueError(f"{str(path)!r} has no grade_accuracy values (a run with --grade-every 0, "
                         "a game without a position set, or a log from before solver grading)")
    return graded


def greedy_accuracy(run_dir: Path, seed: int) -> tuple[float, int]:
    """Greedy's accuracy on the positions the run was graded on, and their number."""
    from agents.checkpoint import load_checkpoint
    from agents.grading import kept_share
    from agents.registry import get_game, make_agent

    path = run_dir / "latest.pt"
    cfg = load_checkpoint(path).get("config")
    if cfg is None:  # e.g. a model-zoo file: the network without the training state
        raise ValueError(f"{str(path)!r} holds no training config: --log needs its run's own latest.pt beside it")
    game = get_game(cfg["game"])
    lp = game.graded_positions(cfg["grade_positions"])
    actions = make_agent("greedy", game, seed=seed).act_batch(lp.states, np.random.default_rng(seed))
    return kept_share(lp, actions), len(actions)


def curve(graded: list[dict], greedy: float, n: int) -> list[dict]:
    from highway_env.evaluation.metrics import wilson

    out = []
    for r in graded:
        acc = float(r["grade_accuracy"])
        lo, hi = wilson(acc * n, n)
        out.append({"iteration": int(r["iteration"]), "train_minutes": round(float(r["elapsed_s"]) / 60, 2),
                    "games": int(r["games"]), "accuracy": round(acc, 4), "accuracy_ci_lo": round(lo, 4),
                    "accuracy_ci_hi": round(hi, 4), "greedy_accuracy": round(greedy, 4),
                    "ratio_to_greedy": round(acc / greedy, 3), "score_vs_greedy": r.get("eval_greedy", "")})
    return out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [float(r["train_minutes"]) for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(x, [100 * float(r["accuracy"]) for r in rows], "o-", label="AlphaZero: accuracy on critical positions")
    scored = [(xi, float(r["score_vs_greedy"])) for xi, r in zip(x, rows) if r["score_vs_greedy"] not in ("", None)]
    if scored:
        ax.plot(*zip(*[(xi, 100 * s) for xi, s in scored]), "s--", label="AlphaZero: score vs greedy")
    ax.axhline(100 * float(rows[0]["greedy_accuracy"]), color="gray", ls=":", label="greedy: accuracy")
    ax.set_xlabel("training time (minutes)")
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("Strength over training time")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    from highway_env.atomic_files import atomic_write_bytes

    atomic_write_bytes(path, buf.getvalue())


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log", default=None, help="log.csv of a finished training run (its latest.pt beside it): "
                                               "draw its curve without training")
    p.add_argument("--minutes", type=positive_float, default=25.0, help="training minutes of the run to train "
                                                               "(without --log; default 25)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the training run and greedy's tie-breaks (default 0)")
    p.add_argument("--train-args", default="", help="extra train.py flags, quoted (e.g. \"--workers 2\"; default: none)")
    p.add_argument("--out", default="results/strength", help="output folder (default results/strength)")
    args = p.parse_args(argv)

    from highway_env.atomic_files import atomic_write_text, check_writable

    from agents.checkpoint import CheckpointError

    out = Path(args.out).resolve()  # train.py runs in the checkout's root: the same folder to it as here
    args.out = str(out)
    try:  # the output is checked before any training
        check_writable(out / "strength.csv", "--out")
        log = Path(args.log) if args.log else train(args)
        graded = read_log(log)
        greedy, n = greedy_accuracy(log.parent, args.seed)
    except (OSError, ValueError, CheckpointError, subprocess.CalledProcessError) as e:  # train.py said why itself
        p.error(str(e))
    rows = curve(graded, greedy, n)
    text = io.StringIO()
    w = csv.DictWriter(text, FIELDS)
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(out / "strength.csv", text.getvalue())
    plot(rows, out / "strength.png")
    print(f"{log}: graded on {n} critical positions; greedy's accuracy on them (baseline, this run): "
          f"{100 * greedy:.1f}%")
    print(f"{'iter':>5} {'minutes':>7} {'games':>7} {'accuracy':>9} {'95% CI':>15} {'x greedy':>8} {'vs greedy':>9}")
    for r in rows:
        vs = f"{100 * float(r['score_vs_greedy']):8.1f}%" if r["score_vs_greedy"] not in ("", None) else f"{'':>9}"
        print(f"{r['iteration']:>5} {r['train_minutes']:7.1f} {r['games']:>7} {100 * r['accuracy']:8.1f}% "
              f"[{100 * r['accuracy_ci_lo']:5.1f}, {100 * r['accuracy_ci_hi']:5.1f}] "
              f"{r['ratio_to_greedy']:8.2f} {vs}")
    print(f"wrote {out / 'strength.csv'} and {out / 'strength.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
