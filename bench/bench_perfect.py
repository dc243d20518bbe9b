"""Perfect-player benchmark: seconds per move by ply, outcomes, and a plain-solver baseline.

Plays seeded games: perfect vs an opponent (perfect is A), the opponent vs perfect (perfect is B),
and perfect vs perfect. For every move the perfect player makes it records the time of ``act``, the
ply, whether the tie-break was applied exactly and where the move came from (book / tiebreak /
fallback). On the same positions, in the same run, it times a plain ``Solver().solve(board)`` (one
fresh solver per game, positions in game order, so its table persists across a game as the
player's does): the cost of "the value and one value-keeping move" without book, store or tie-break.
Plain solves are skipped below --baseline-min-ply (the empty board would take hours) and cut at
--baseline-limit seconds (counted as "cut").

    python bench/bench_perfect.py --games 4
    python bench/bench_perfect.py --games 10 --tiebreak margin --opponent greedy --json
    python bench/bench_perfect.py --as-opponent --games 6 --no-baseline --store :memory:  # the play server's
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter, defaultdict

import numpy as np

from agents.checkpoint import CheckpointError
from agents.registry import get_game, make_agent, spec_error_message
from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_float, positive_int
from highway_env.core import Board, HighwayError
from highway_env.solver import Solver
from highway_env.solver.player import OPPONENT_OPTIONS, TIEBREAKS, PerfectPlayer


def _stats(xs):
    if not xs:
        return None
    xs = sorted(xs)
    return {"n": len(xs), "median": statistics.median(xs), "p95": xs[min(len(xs) - 1, int(0.95 * len(xs)))],
            "max": xs[-1]}


def play(a, b, board: Board, rng, record):
    """Play to the end; ``record(board, agent, seconds, info)`` for each perfect-player move."""
    agents = (a, b)
    while not board.is_terminal():
        agent = agents[board.to_move]
        t = time.perf_counter()
        action = agent.act(board, rng)
        dt = time.perf_counter() - t
        if isinstance(agent, PerfectPlayer):
            record(board, agent, dt, dict(agent.last_info))
        board = board.apply(action)
    return board.outcome()


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=positive_int, default=4, help="games per matchup (default 4)")
    p.add_argument("--matchups", nargs="+", default=["pa", "pb", "pp"], choices=["pa", "pb", "pp"],
                   help="pa: perfect (A) vs opponent; pb: opponent (A) vs perfect (B); pp: perfect vs perfect "
                        "(default: all three)")
    p.add_argument("--opponent", default="random", help="agent spec of the opponent (random, greedy, mcts:N, az:PATH[:SIMS]; default: %(default)s)")
    p.add_argument("--tiebreak", default="random", choices=TIEBREAKS, help="the perfect "
                   "player's tie-break (default random)")
    p.add_argument("--budget", type=positive_float, default=2.0,
                   help="perfect player's per-move tie-break budget in seconds (default 2.0; timing the player "
                        "needs seconds, not node budgets)")
    p.add_argument("--as-opponent", action="store_true",
                   help="the player as make_agent('perfect[:TIEBREAK]') builds it (the play server's opponent: "
                        "OPPONENT_OPTIONS, budgets in solver nodes; --budget is unused)")
    p.add_argument("--book", default="shipped", help="'shipped' (default), 'none', or a book file")
    p.add_argument("--store", default=None, help="position store file for the player (default: none)")
    p.add_argument("--opening-plies", type=non_negative_int, default=0,
                   help="play this many random moves first (both sides), e.g. to skip book plies a book lacks "
                        "(default: %(default)s)")
    p.add_argument("--baseline-min-ply", type=non_negative_int, default=2,
                   help="time the plain solver only on positions with at least this many filled cells (default 2)")
    p.add_argument("--baseline-limit", type=positive_float, default=60.0, help="seconds per plain solve (default 60)")
    p.add_argument("--no-baseline", action="store_true", help="skip the plain-solver baseline")
    p.add_argument("--tt-bits", type=number(int, 10, 30), default=22,
                   help="solver table size for player and baseline (default 22)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of games, agents and openings (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.add_argument("--verbose", action="store_true", help="print each perfect-player move")
    args = p.parse_args(argv)

    game = get_game("highway")
    book = {"shipped": True, "none": False}.get(args.book, args.book)
    baseline_solver = None if args.no_baseline else Solver(tt_bits=args.tt_bits)
    times = defaultdict(list)  # (matchup, ply) -> seconds
    base_times = defaultdict(list)
    base_cut = Counter()
    exact = defaultdict(Counter)  # ply -> Counter(exact/inexact)
    sources = Counter()
    outcomes = {}
    positions = []
    start = time.perf_counter()
    shared = Solver(tt_bits=args.tt_bits)

    def make_perfect(seed):
        budgets = OPPONENT_OPTIONS if args.as_opponent else {"budget": args.budget, "inherit_max_ply": 0,
                                                             "progress": False}
        player = PerfectPlayer(game, tiebreak=args.tiebreak, seed=seed, book=book, store=args.store, solver=shared,
                               **budgets)
        player.warm_up()  # kernel loading is not a move
        return player

    try:  # a bad --opponent, --book or --store fails now, in one line, not as a traceback at the first game
        make_agent(args.opponent, game, seed=0)
    except (ValueError, CheckpointError, OSError) as e:
        p.error(spec_error_message(args.opponent, e))
    try:
        make_perfect(0)
    except HighwayError as e:  # BookError, StoreError
        p.error(str(e))
    for mi, matchup in enumerate(args.matchups):
        res = Counter()
        for g in range(args.games):
            seed = args.seed * 1000 + mi * 100 + g
            rng = np.random.default_rng(seed)
            opp = make_agent(args.opponent, game, seed=seed + 7)
            perfect = make_perfect(seed)
            if matchup == "pa":
                a, b = perfect, opp
            elif matchup == "pb":
                a, b = opp, perfect
            else:
                a, b = perfect, make_perfect(seed + 50)
            board = Board()
            for _ in range(args.opening_plies):
                board = board.apply(int(rng.choice(board.legal_actions())))
            game_positions = []

            def record(bd, agent, dt, info, matchup=matchup, game_positions=game_positions):
                times[(matchup, bd.ply)].append(dt)
                exact[bd.ply][info.get("exact")] += 1
                sources[info.get("move_source")] += 1
                game_positions.append(bd)
                if args.verbose:
                    print(f"{matchup} g{g} ply {bd.ply:2d} {info['mover']} value {info['value']:+d} "
                          f"{dt:7.3f}s exact={info['exact']} src={info['source']}/{info['move_source']} "
                          f"cand={info['candidates']} value {info.get('value_seconds', 0):.3f}s "
                          f"fallback {info.get('fallback_seconds', 0):.3f}s", flush=True)

            out = play(a, b, board, rng, record)
            res[{1: "A", 0: "draw", -1: "B"}[out.value]] += 1
            if baseline_solver is not None:
                baseline_solver.clear()
                for bd in game_positions:
                    if bd.ply < args.baseline_min_ply:
                        continue
                    r = baseline_solver.solve(bd, time_limit=args.baseline_limit)
                    if r.value is None:
                        base_cut[bd.ply] += 1
                    else:
                        base_times[bd.ply].append(r.seconds)
            positions.extend(game_positions)
        outcomes[matchup] = dict(res)

    by_ply = {}
    for ply in sorted({ply for (_, ply) in times}):
        allt = [t for (m, pl), ts in times.items() if pl == ply for t in ts]
        by_ply[ply] = {"perfect": _stats(allt), "baseline": _stats(base_times.get(ply, [])),
                       "baseline_cut": base_cut.get(ply, 0),
                       "exact": exact[ply].get(True, 0), "inexact": exact[ply].get(False, 0)}
    all_moves = [t for ts in times.values() for t in ts]
    late_moves = [t for (_, ply), ts in times.items() if ply >= 3 for t in ts]
    all_base = [t for ts in base_times.values() for t in ts]
    report = {"args": vars(args), "outcomes": outcomes, "moves": _stats(all_moves), "moves_ply3_on": _stats(late_moves),
              "baseline": _stats(all_base), "move_sources": dict(sources), "by_ply": by_ply,
              "wall_seconds": round(time.perf_counter() - start, 1)}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    budget = "make_agent's node budgets" if args.as_opponent else f"budget={args.budget}s"
    print(f"perfect player (tiebreak={args.tiebreak}, {budget}, book={args.book}) vs {args.opponent}; "
          f"{args.games} games per matchup, seed {args.seed}")
    print("outcomes (pa: perfect is A, pb: perfect is B, pp: both):", outcomes)
    print("move sources:", dict(sources))
    fmt = lambda s: "        -" if s is None else f"{s['median']:9.4f}"  # noqa: E731
    print(f"{'ply':>3} {'moves':>5} {'median s':>9} {'p95 s':>9} {'max s':>9} {'exact':>5} | "
          f"{'plain solve: n':>14} {'median s':>9} {'p95 s':>9} {'max s':>9} {'cut':>4}")
    for ply, row in by_ply.items():
        s, b = row["perfect"], row["baseline"]
        bcols = (f"{b['n']:>14} {b['median']:9.4f} {b['p95']:9.4f} {b['max']:9.4f}" if b
                 else f"{'-':>14} {'-':>9} {'-':>9} {'-':>9}")
        print(f"{ply:>3} {s['n']:>5} {s['median']:9.4f} {s['p95']:9.4f} {s['max']:9.4f} "
              f"{row['exact']:>2}/{s['n']:<2} | {bcols} {row['baseline_cut']:>4}")
    m = report["moves"]
    print(f"all perfect moves: n={m['n']} median {m['median']:.4f}s p95 {m['p95']:.4f}s max {m['max']:.3f}s"
          + (f"; plain solve: median {report['baseline']['median']:.4f}s max {report['baseline']['max']:.3f}s"
             if report["baseline"] else ""))
    late = report["moves_ply3_on"]
    if late:
        print(f"perfect moves from ply 3 on (what a book of plies 0-2 leaves to the solver): n={late['n']} "
              f"median {late['median']:.4f}s p95 {late['p95']:.4f}s max {late['max']:.3f}s")
    print(f"wall {report['wall_seconds']}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
