"""Play Highway in your web browser against any agent of the project.

    python -m highway_env.play                  # http://127.0.0.1:8000/
    python -m highway_env.play --port 0 --no-browser

The page shows the board and the numbers 1..16 (pick a number, then a cell), both players'
cheapest paths as they form, whose turn it is and the result. Choose your side and the opponent
(perfect player, the shipped AlphaZero network or a checkpoint, MCTS, greedy, random); undo, new
game, and hints from the exact solver (the verdict and the value of every move).
"""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser


def _has_display() -> bool:
    """Whether a graphical browser can be expected (a desktop session, macOS or Windows)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def build_parser() -> argparse.ArgumentParser:
    prog = "highway-play" if os.path.basename(sys.argv[0]) == "highway-play" else "python -m highway_env.play"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: %(default)s, this machine only; 0.0.0.0 "
                             "lets other machines in; the server has no authentication)")
    parser.add_argument("--port", type=int, default=8000,
                        help="TCP port (default: %(default)s; 0 picks any free port, printed at start)")
    browser = parser.add_mutually_exclusive_group()
    browser.add_argument("--open", dest="browser", action="store_const", const=True, default=None,
                         help="open the page in the default web browser (default: only when a "
                              "graphical desktop is detected)")
    browser.add_argument("--no-browser", dest="browser", action="store_const", const=False,
                         help="do not open a browser; just print the address")
    parser.add_argument("--hint-seconds", type=float, default=5.0,
                        help="time limit of the solver for one hint request (default: %(default)s); "
                             "a hint not finished in time is continued by the next request")
    parser.add_argument("--verbose", action="store_true", help="log every HTTP request to stderr")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"error: --port must be in 0..65535, got {args.port}", file=sys.stderr)
        return 2
    if args.hint_seconds <= 0:
        print(f"error: --hint-seconds must be positive, got {args.hint_seconds}", file=sys.stderr)
        return 2
    from highway_env.play.server import PlayServer

    try:
        server = PlayServer(args.host, args.port, hint_seconds=args.hint_seconds, verbose=args.verbose)
    except OSError as e:
        print(f"error: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 2
    print(f"Highway: play at {server.url}  (Ctrl+C to stop)", flush=True)
    if args.browser or (args.browser is None and _has_display()):
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopped", flush=True)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
