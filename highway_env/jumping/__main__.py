"""CLI: ``python -m highway_env.jumping solve --n N [--solitaire] [--json]``."""

from __future__ import annotations

import argparse
import json
import sys

from highway_env.cli_args import OneLineErrorParser, non_negative_int, number
from highway_env.jumping.game import MAX_N, MIN_N


_size = number(int, MIN_N, MAX_N)


def build_parser() -> argparse.ArgumentParser:
    p = OneLineErrorParser(
        prog="python -m highway_env.jumping",
        description="Jumping Farther & Farther (Leroy Quet): exact solver.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "solve",
        help="solve the game from the empty board",
        description=(
            "Solve the game exactly from the empty n x n board. Two-player (default): the value is "
            "player 1's score minus player 2's under optimal play. --solitaire: the maximum total score."
        ),
    )
    s.add_argument("--n", type=_size, default=4, help=f"board size n (grid n x n), {MIN_N}..{MAX_N}; default 4")
    s.add_argument("--solitaire", action="store_true", help="one player makes every move; value = max score")
    s.add_argument("--json", action="store_true",
                   help='print one JSON object {"value", "best_first_move", "first_move_values", "states", '
                        '"seconds", ...}')
    s.add_argument("--max-states", type=non_negative_int, default=0,  # 2**62 at most: the compiled search counts in int64
                   help="abort after storing this many memo states (default 0: no limit); value is null then")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from highway_env.jumping.solver import solve

    res = solve(args.n, solitaire=args.solitaire, max_states=args.max_states)
    d = res.to_dict()
    if args.json:
        print(json.dumps(d))
    else:
        what = "max solitaire score" if args.solitaire else "value (player 1 - player 2)"
        print(f"n={args.n} {what}: {d['value']}" + ("  [aborted at --max-states]" if res.aborted else ""))
        print(f"best first move: {d['best_first_move']} (row, col) = {d['best_first_move_rc']}")
        if res.first_move_values:
            print("first moves (one per symmetry orbit), square (row, col): value  "
                  + ", ".join(f"{sq} {divmod(sq, args.n)}: {v:+d}" for sq, v in res.first_move_values.items()))
        print(f"states: {d['states']}  seconds: {d['seconds']}")
    return 3 if res.aborted else 0


if __name__ == "__main__":
    sys.exit(main())
