"""Command line for the Black Path Game: ``solve`` (exact winner) and ``replay`` (show a game);
bad input prints a message on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from highway_env.blackpath.game import MAX_COLS, MAX_ROWS, BlackPathError, replay
from highway_env.blackpath.solver import DEFAULT_MAX_POSITIONS, solve_all_starts, solve_state
from highway_env.cli_args import OneLineErrorParser, number, positive_float, positive_int


_size = number(int, 1)


def _add_board_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rows", type=_size, default=4,
                   help=f"number of rows of squares, 1..{MAX_ROWS} (default 4); rows are numbered 1.. from the top")
    p.add_argument("--cols", type=_size, default=4,
                   help=f"number of columns of squares, 1..{MAX_COLS} (default 4); columns are lettered A.. from the left")
    p.add_argument("--start", default="A1:top",
                   help="where the path starts, as SQUARE:SIDE with SIDE one of top/right/bottom/left; the side "
                        "must be on the board's edge (default A1:top, the top side of the top-left square)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="python -m highway_env.blackpath",
        description="The Black Path Game (Larry Black, 1960): exact solver and game replay. Tiles: T1 joins "
                    "top-left and bottom-right, T2 top-right and bottom-left, T3 top-bottom and left-right; "
                    "whoever runs the path into the edge loses.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{solve,replay}")
    ps = sub.add_parser("solve", help="who wins with perfect play (player 1 moves first)",
                        description="Solve the empty board exactly (negamax with a memo). Prints the winner (1 or 2), "
                                    "the first player's winning first tiles (empty if player 2 wins), the positions "
                                    "searched and the seconds taken. Boards beyond about 36 squares may take long.")
    _add_board_args(ps)
    ps.add_argument("--moves", default="",
                    help="solve the position after these moves instead of the empty board, e.g. 'A1-T2 B1-T2' "
                         "(default: none, the empty board)")
    ps.add_argument("--all-starts", action="store_true",
                    help="solve every start side on the board's edge (ignores --start and --moves)")
    ps.add_argument("--max-positions", type=positive_int, default=DEFAULT_MAX_POSITIONS, metavar="N",
                    help="give up (exit 2) once the search holds N positions, about 100 bytes each "
                         "(default %(default)s, ~400 MB; 6x6 needs 1.1 million)")
    ps.add_argument("--time-limit", type=positive_float, metavar="S",
                    help="give up (exit 2) after S seconds (default: no limit)")
    pr = sub.add_parser("replay", help="replay a game given as square-tile moves and show the position",
                        description="Replay moves such as 'A1-T2 B1-T2 B2-T3' from the start and print the board.")
    pr.add_argument("moves", help="the moves, separated by spaces or commas, each SQUARE-TILE, e.g. 'B2-T3'")
    _add_board_args(pr)
    return parser


def _emit(args, out: dict, text: str) -> int:
    """Print ``out`` as one JSON object with --json, else ``text``; exit status 0."""
    print(json.dumps(out) if args.json else text)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "solve" and args.all_starts:
            table = solve_all_starts(args.rows, args.cols, args.max_positions, args.time_limit)
            winners = sorted(set(table.values()))
            out = {"winner": winners[0] if len(winners) == 1 else None, "rows": args.rows,
                   "cols": args.cols, "starts": table}
            return _emit(args, out, "\n".join(f"{start:>10}: player {w} wins" for start, w in table.items()))
        state = replay(args.moves, args.rows, args.cols, args.start)
        if args.command == "solve":
            out = solve_state(state, args.max_positions, args.time_limit).to_dict()
            if args.moves:
                out["moves"] = args.moves
            tiles = ", ".join(out["winning_first_tiles"]) or "none"
            return _emit(args, out, f"{args.rows}x{args.cols} from {out['start']}: player {out['winner']} wins "
                                    f"(winning tiles for player {out['to_move']}: {tiles}; "
                                    f"{out['states_searched']} positions, {out['seconds']:.3f} s)")
        out = {"rows": state.rows, "cols": state.cols, "start": state.start, "ply": state.ply,
               "over": state.is_over, "winner": state.winner,
               "to_move": None if state.is_over else state.to_move,
               "square": None if state.is_over else state.square_name()}
        return _emit(args, out, str(state))
    except BlackPathError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
