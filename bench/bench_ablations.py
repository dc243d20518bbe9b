"""What limits the Highway agent: one training run per ablation, each graded by the solver.

Each ablation is the default ``train.py`` configuration with one thing changed (network size,
self-play search, value target, replay mix, opening diversity), trained for the same fixed
number of iterations and seed (``--iterations``: the same work whatever the machine's load), then
graded by ``evaluate.py`` on the same positions: accuracy on the report part of set v1 (a
sample) and on every critical position of set v2. Play-time search is ablated on the baseline's
own checkpoint (``az:PATH:SIMS``), with no training of its own. The baseline is the default
configuration trained in the same run; the table prints each row's ratio to it.

    python bench/bench_ablations.py                             # 40 iterations per run (~3 min each, quiet machine)
    python bench/bench_ablations.py --iterations 10 --only baseline,no-margin   # quick
    python bench/bench_ablations.py --out results/ablations    # the committed table; rerun: finished runs are skipped

Writes OUT/ablations.csv and OUT/ablations.md; runs go to OUT/checkpoints/<name>, their grading
to OUT/eval/<name>.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from highway_env.cli_args import OneLineErrorParser, non_negative_int, positive_int

ROOT = Path(__file__).resolve().parent.parent

#: name -> (what changes, extra train.py flags); "" flags = the default configuration
TRAINED = {
    "baseline": ("defaults", ""),
    "small-net": ("network: MLP width 128 (default 256)", "--hidden 128"),
    "big-net": ("network: MLP width 512 (default 256)", "--hidden 512"),
    "sims-64": ("self-play search: 64 simulations (default 32)", "--simulations 64"),
    "no-margin": ("value target: win/draw/loss only (--margin-weight 0 --score-weight 0)",
                  "--margin-weight 0 --score-weight 0"),
    "replay-ratio-8": ("replay mix: 8 samples per new position (default 4)", "--replay-ratio 8"),
    "small-replay": ("replay mix: buffer of 40k positions (default 150k)", "--replay-size 40000"),
    "no-random-opening": ("opening diversity: every self-play game from the empty board",
                          "--random-opening 0"),
}
#: name -> (what changes, play-time simulations of the baseline's checkpoint)
PLAY_TIME = {"play-100": ("play-time search: 100 simulations (default 400)", 100),
             "play-1600": ("play-time search: 1600 simulations (default 400)", 1600)}
FIELDS = ["ablation", "change", "accuracy_v1", "v1_ci", "accuracy_v2", "v2_ci", "ratio_v1", "ratio_v2",
          "margin_optimal", "train_minutes"]


def train(name: str, flags: str, args) -> Path:
    """Train OUT/checkpoints/<name> (resumed if interrupted, skipped if finished); its directory."""
    run = Path(args.out) / "checkpoints" / name
    if (run / "log.csv").exists() and int(_last_log_row(run)["iteration"]) >= args.iterations:
        return run
    cmd = [sys.executable, str(ROOT / "train.py"), "--out-dir", str(run.parent), "--run", name,
           "--iterations", str(args.iterations), "--minutes", "0", "--seed", str(args.seed),
           "--no-progress", "--workers", str(args.workers)]
    if (run / "latest.pt").exists():
        cmd.append("--resume")
    subprocess.run(cmd + flags.split(), check=True, cwd=ROOT)
    return run


def _last_log_row(run: Path) -> dict:
    """The last row of the run's log.csv (iteration 0 when it has none)."""
    with (run / "log.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    return rows[-1] if rows else {"iteration": "0", "elapsed_s": "0"}


def grade(name: str, spec: str, args) -> dict:
    """evaluate.py's accuracy figures of agent ``spec`` (cached in OUT/eval/<name>)."""
    out = Path(args.out) / "eval" / name
    summary = out / "summary.json"
    if not summary.exists():
        cmd = [sys.executable, str(ROOT / "evaluate.py"), "--agent", spec, "--positions", str(args.positions),
               "--games", "0", "--rr-games", "0", "--conversion", "0", "--workers", str(args.workers),
               "--seed", str(args.seed), "--no-plots", "--no-progress", "--out", str(out)]
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    agent = json.loads(summary.read_text())["agents"][spec]
    return {"v1": agent["accuracy"], "v2": agent["accuracy_v2"], "margin": agent["margin_loss"]}


def row(name: str, change: str, graded: dict, base: dict | None, minutes: str) -> dict:
    def ci(a):
        return f"[{100 * a['ci95'][0]:.1f}, {100 * a['ci95'][1]:.1f}]"

    v1, v2 = graded["v1"]["rate"], graded["v2"]["rate"]
    ref = base or graded
    return {"ablation": name, "change": change, "accuracy_v1": round(v1, 4), "v1_ci": ci(graded["v1"]),
            "accuracy_v2": round(v2, 4), "v2_ci": ci(graded["v2"]),
            "ratio_v1": round(v1 / ref["v1"]["rate"], 3), "ratio_v2": round(v2 / ref["v2"]["rate"], 3),
            "margin_optimal": round(graded["margin"]["optimal_rate"], 4), "train_minutes": minutes}


def markdown(rows: list[dict], args) -> str:
    head = ("| ablation | change | acc v1 [95% CI] | acc v2 [95% CI] | ratio v1 | ratio v2 | margin-opt "
            "| train min |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
    body = "".join(f"| {r['ablation']} | {r['change']} | {100 * r['accuracy_v1']:.1f}% {r['v1_ci']} | "
                   f"{100 * r['accuracy_v2']:.1f}% {r['v2_ci']} | {r['ratio_v1']} | {r['ratio_v2']} | "
                   f"{100 * r['margin_optimal']:.1f}% | {r['train_minutes']} |\n" for r in rows)
    return (f"Each run: {args.iterations} iterations, seed {args.seed}, {args.workers} worker(s); graded on "
            f"{args.positions} sampled positions of v1's report part and all critical positions of v2.\n\n"
            + head + body)


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=positive_int, default=40, help="training iterations of every run (default 40)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of every run and of the grading (default 0)")
    p.add_argument("--workers", type=positive_int, default=1, help="self-play / evaluation workers (default 1)")
    p.add_argument("--positions", type=positive_int, default=1500,
                   help="positions sampled from v1's report part for the v1 accuracy (default 1500)")
    p.add_argument("--only", default="", help="comma-separated ablation names (default: all; 'baseline' "
                                               f"is always run): {', '.join([*TRAINED, *PLAY_TIME])}")
    p.add_argument("--out", default=None, help="output folder (default results/ablations-run; the committed "
                                               "results/ablations is replaced only when named here)")
    args = p.parse_args(argv)
    allowed = args.out is not None
    # absolute: train.py and evaluate.py run in the checkout's root, and a relative folder (or one
    # starting with '-', which they took for a flag) must mean the same folder to them as here
    args.out = str(Path(args.out or "results/ablations-run").resolve())
    names = [n.strip() for n in args.only.split(",") if n.strip()] or [*TRAINED, *PLAY_TIME]
    unknown = [n for n in names if n not in TRAINED and n not in PLAY_TIME]
    if unknown:
        p.error(f"unknown ablation(s) {unknown}; known: {', '.join([*TRAINED, *PLAY_TIME])}")

    from highway_env.atomic_files import atomic_write_text
    from highway_env.core import HighwayError
    from highway_env.shipped import check_output

    try:
        check_output(Path(args.out) / "ablations.csv", allowed=allowed)  # before hours of training, not after
    except HighwayError as e:
        p.error(str(e))
    names = ["baseline"] + [n for n in names if n != "baseline"]
    base_run = None
    base = None
    rows = []
    for name in names:
        try:
            if name in TRAINED:
                change, flags = TRAINED[name]
                run = train(name, flags, args)
                spec = f"az:{run / 'best.pt'}"
                minutes = f"{float(_last_log_row(run)['elapsed_s']) / 60:.1f}"
            else:
                change, sims = PLAY_TIME[name]
                spec, minutes = f"az:{base_run / 'best.pt'}:{sims}", "-"
            graded = grade(name, spec, args)
        except subprocess.CalledProcessError as e:  # train.py or evaluate.py said why itself, above
            p.error(f"{Path(e.cmd[1]).name} of ablation {name!r} exited with code {e.returncode}")
        if name == "baseline":
            base_run, base = run, graded
        rows.append(row(name, change, graded, base, minutes))
        print(f"{name:18s} v1 {100 * rows[-1]['accuracy_v1']:.1f}%  v2 {100 * rows[-1]['accuracy_v2']:.1f}%  "
              f"ratio {rows[-1]['ratio_v1']} / {rows[-1]['ratio_v2']}", flush=True)

    out = Path(args.out)
    text = io.StringIO()
    w = csv.DictWriter(text, FIELDS)
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(out / "ablations.csv", text.getvalue())
    atomic_write_text(out / "ablations.md", markdown(rows, args))
    print(markdown(rows, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
