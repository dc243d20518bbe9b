"""Strength curve over training time.

Trains one run in steps (``train.py``, then ``train.py --resume`` with a growing ``--minutes``) and
after each step measures its latest checkpoint, with the search it plays with:

- move accuracy on a fixed, seeded sample of critical positions of the held-out set
  (``highway_env/data/positions_v1.npz``: the share of moves that keep the solver's game value);
- the score against greedy over ``--games`` games (half with each side; win 1, draw 0.5).

Greedy's accuracy on the same sample is the baseline measured in the same run; the table prints
each checkpoint's accuracy and its ratio to greedy's. Writes OUT/strength.csv and OUT/strength.png;
rerun the same command after an interrupt and the finished steps are kept.

    python bench/bench_strength.py                                  # 5 steps of 5 min: the default run
    python bench/bench_strength.py --steps 3 --step-minutes 1 --positions 300 --games 32   # quick
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FIELDS = ["step", "train_minutes", "iterations", "games", "accuracy", "accuracy_ci_lo", "accuracy_ci_hi",
          "greedy_accuracy", "ratio_to_greedy", "score_vs_greedy"]


def critical_sample(n: int, seed: int):
    from highway_env.evaluation.positions import load_positions

    ps = load_positions()
    idx = np.flatnonzero(ps.critical())
    rng = np.random.default_rng(seed)
    return ps.subset(np.sort(rng.choice(idx, size=min(n, len(idx)), replace=False)))


def accuracy_of(agent, ps, seed: int) -> dict:
    from highway_env.evaluation.metrics import accuracy

    actions = agent.act_batch(ps.boards.astype(np.int8), np.random.default_rng(seed))
    return accuracy(ps, actions)


def train_step(args, minutes: float, resume: bool) -> None:
    cmd = [sys.executable, str(ROOT / "train.py"), "--out-dir", str(Path(args.out) / "checkpoints"),
           "--run", "strength", "--minutes", str(minutes), "--seed", str(args.seed), "--no-progress"]
    if resume:
        cmd.append("--resume")
    cmd += args.train_args.split()
    subprocess.run(cmd, check=True, cwd=ROOT)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [float(r["train_minutes"]) for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(x, [100 * float(r["accuracy"]) for r in rows], "o-", label="AlphaZero: accuracy on critical positions")
    ax.plot(x, [100 * float(r["score_vs_greedy"]) for r in rows], "s--", label="AlphaZero: score vs greedy")
    ax.axhline(100 * float(rows[0]["greedy_accuracy"]), color="gray", ls=":", label="greedy: accuracy")
    ax.set_xlabel("training time (minutes, 2 CPU cores)")
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
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=5, help="measurement points (default 5)")
    p.add_argument("--step-minutes", type=float, default=5.0, help="training minutes between points (default 5)")
    p.add_argument("--positions", type=int, default=1000, help="critical positions in the sample (default 1000)")
    p.add_argument("--games", type=int, default=64, help="games against greedy per point (default 64)")
    p.add_argument("--seed", type=int, default=0, help="seed of the training run, the sample and the games")
    p.add_argument("--train-args", default="", help="extra train.py flags, quoted (e.g. \"--workers 2\")")
    p.add_argument("--out", default="results/strength", help="output folder (default results/strength)")
    args = p.parse_args(argv)
    for name in ("steps", "positions", "games"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.step_minutes <= 0:
        p.error(f"--step-minutes must be > 0, got {args.step_minutes}")

    from agents.alphazero import AlphaZeroAgent
    from agents.arena import play_match
    from agents.checkpoint import load_checkpoint
    from agents.registry import get_game, make_agent
    from highway_env.atomic_files import atomic_write_text

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "strength.csv"
    rows = list(csv.DictReader(csv_path.open())) if csv_path.exists() else []
    sample = critical_sample(args.positions, args.seed)
    game = get_game("highway")
    greedy_acc = accuracy_of(make_agent("greedy", game, seed=args.seed), sample, args.seed)["rate"]
    latest = out / "checkpoints" / "strength" / "latest.pt"
    for step in range(len(rows) + 1, args.steps + 1):
        train_step(args, step * args.step_minutes, resume=latest.exists())
        counters = load_checkpoint(latest).get("counters", {})
        agent = AlphaZeroAgent.from_checkpoint(latest, seed=args.seed)
        acc = accuracy_of(agent, sample, args.seed)
        m = play_match(agent, make_agent("greedy", agent.game, seed=args.seed), agent.game, args.games, seed=args.seed)
        score = (m.wins + 0.5 * m.draws) / args.games
        rows.append({"step": step, "train_minutes": round(counters.get("elapsed", 0.0) / 60, 2),
                     "iterations": counters.get("iteration"), "games": counters.get("games"),
                     "accuracy": round(acc["rate"], 4), "accuracy_ci_lo": round(acc["ci95"][0], 4),
                     "accuracy_ci_hi": round(acc["ci95"][1], 4), "greedy_accuracy": round(greedy_acc, 4),
                     "ratio_to_greedy": round(acc["rate"] / greedy_acc, 3), "score_vs_greedy": round(score, 4)})
        text = io.StringIO()
        w = csv.DictWriter(text, FIELDS)
        w.writeheader()
        w.writerows(rows)
        atomic_write_text(csv_path, text.getvalue())
        plot(rows, out / "strength.png")
    print(f"critical positions: {len(sample)} (seed {args.seed}); greedy's accuracy on them (baseline, this run): "
          f"{100 * greedy_acc:.1f}%")
    print(f"{'step':>4} {'minutes':>7} {'games':>7} {'accuracy':>9} {'95% CI':>15} {'x greedy':>8} {'vs greedy':>9}")
    for r in rows:
        print(f"{r['step']:>4} {float(r['train_minutes']):7.1f} {r['games']:>7} {100 * float(r['accuracy']):8.1f}% "
              f"[{100 * float(r['accuracy_ci_lo']):5.1f}, {100 * float(r['accuracy_ci_hi']):5.1f}] "
              f"{float(r['ratio_to_greedy']):8.2f} {100 * float(r['score_vs_greedy']):8.1f}%")
    print(f"wrote {csv_path} and {out / 'strength.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
