"""Command line: ``python -m highway_env.rushhour solve <36-char board> [--json]`` or ``--level N``.

Exit codes: 0 solved (or proven unsolvable: ``moves``/``solution`` null), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from highway_env.cli_args import OneLineErrorParser
from highway_env.rushhour.game import NUM_LEVELS, RushHourError, level, parse_board, solve


def _parser() -> argparse.ArgumentParser:
    p = OneLineErrorParser(
        prog="python -m highway_env.rushhour",
        description="Rush Hour / Traffic! (Nob Yoshigahara) puzzle tools.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    s = sub.add_parser(
        "solve", help="find a minimal solution by breadth-first search",
        description="Solve a Rush Hour board by breadth-first search: a minimal solution "
        "(moves: one vehicle slid any distance in one direction, written e.g. 'B+2' = B two "
        "cells right/down, 'A-1' = A one cell left/up) and the number of reachable states.")
    s.add_argument(
        "board", nargs="?",
        help="the board as 36 characters, row-major, top row first: 'o' or '.' empty, 'x' wall, "
        "'A' the target car (horizontal, third row), 'B'..'Z' other vehicles (length 2 or 3)")
    s.add_argument("--level", type=int, metavar="N",
                   help=f"solve original card / Traffic! level N (1..{NUM_LEVELS}) instead of a "
                   "board")
    s.add_argument("--json", action="store_true",
                   help='print one JSON object {"moves": n, "solution": [...], "states": s} '
                   "(moves and solution are null when unsolvable)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if (args.board is None) == (args.level is None):
            raise RushHourError("give exactly one of BOARD or --level N")
        board = level(args.level).board if args.level is not None else parse_board(args.board)
    except RushHourError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sol = solve(board)
    moves = None if sol.moves is None else [str(m) for m in sol.moves]
    if args.json:
        print(json.dumps({"moves": sol.num_moves, "solution": moves, "states": sol.states}))
    elif moves is None:
        print(f"{board}\nno solution ({sol.states} reachable states)")
    else:
        print(f"{board}\n{len(moves)} moves: {' '.join(moves)}\n{sol.states} reachable states")
    return 0


if __name__ == "__main__":
    sys.exit(main())
