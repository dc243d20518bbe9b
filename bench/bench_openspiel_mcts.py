#!/usr/bin/env python
"""OpenSpiel's Python MCTSBot (random-rollout evaluator) graded against perfect play by
``highway_env.benchmark.evaluate``: one row per simulation budget, one saved report.

    python bench/bench_openspiel_mcts.py --out results/openspiel_mcts     # the committed table
    python bench/bench_openspiel_mcts.py --simulations 50 --positions 600 --games 4 --conversion 10

Each bot is built fresh from ``--seed`` (its own ``np.random.RandomState`` and its evaluator's), so
the same command gives the same figures. Needs the openspiel extra.
"""

from __future__ import annotations

import argparse
import time

from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_int


def mcts_bot(game, simulations: int, uct_c: float, seed: int):
    """``open_spiel.python.algorithms.mcts.MCTSBot`` with one random rollout per leaf, seeded."""
    import numpy as np
    from open_spiel.python.algorithms import mcts

    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
    return mcts.MCTSBot(game, uct_c, simulations, evaluator, random_state=np.random.RandomState(seed))


def merge(reports) -> dict:
    """One summary with every report's agent (same positions, games and perfect opponent)."""
    summary = reports[0].to_dict()
    for r in reports[1:]:
        d = r.to_dict()
        summary["agents"].update(d["agents"])
        summary["config"]["agents"] += d["config"]["agents"]
        for key in ("perfect_moves", "perfect_unproven_moves", "wall_seconds"):
            summary[key] += d[key]
    summary["config"]["name"] = "openspiel_mcts"
    return summary


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--simulations", type=positive_int, nargs="+", default=[200, 1000],
                   help="MCTS simulations per move, one bot each (default: %(default)s)")
    p.add_argument("--uct-c", type=number(float, 0, lo_open=True), default=2.0, help="UCT exploration constant (default: %(default)s)")
    p.add_argument("--positions", type=non_negative_int, default=3000, help="positions graded (0 = all; default: %(default)s)")
    p.add_argument("--games", type=non_negative_int, default=24, help="games a side against the perfect player (default: %(default)s)")
    p.add_argument("--conversion", type=non_negative_int, default=60, help="won positions played out against perfect defence (default: %(default)s)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="the benchmark's and the bots' seed (default: %(default)s)")
    p.add_argument("--out", default="results/openspiel_mcts-run",
                   help="folder for the report (default: %(default)s; the committed one is results/openspiel_mcts)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = p.parse_args(argv)
    from highway_env.atomic_files import check_writable

    try:
        check_writable(f"{args.out}/summary.json", "--out")  # before the work, not after it
    except OSError as e:
        p.error(str(e))

    import pyspiel

    import highway_env.openspiel  # noqa: F401  (registers python_highway)
    from highway_env.benchmark import BenchmarkReport, evaluate

    game = pyspiel.load_game("python_highway")
    reports = []
    for sims in args.simulations:
        t0 = time.perf_counter()
        reports.append(evaluate(mcts_bot(game, sims, args.uct_c, args.seed), name=f"openspiel-mcts:{sims}",
                                positions=args.positions, games=args.games, conversion=args.conversion,
                                seed=args.seed, progress=not args.no_progress))
        print(f"openspiel-mcts:{sims}: {time.perf_counter() - t0:.0f} s", flush=True)
    report = BenchmarkReport(merge(reports))
    print(report.table())
    print(f"saved in {report.save(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
