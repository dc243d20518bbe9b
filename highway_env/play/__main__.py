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
import ipaddress
import os
import socket
import sys
import webbrowser

from highway_env.cli_args import MAX_SIMULATIONS, OneLineErrorParser, number
from highway_env.play.limits import MAX_AZ_SIMULATIONS, MAX_ENGINES, MAX_MCTS_SIMULATIONS
from highway_env.play.opponents import ISOLATED_KINDS


def _has_display() -> bool:
    """Whether a graphical browser can be expected (a desktop session, macOS or Windows)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


_positive_int = number(int, 1, 10**9)
_simulations = number(int, 1, MAX_SIMULATIONS)  # what mcts:N and az:PATH:N accept
_seconds = number(float, 0, 3600, lo_open=True, hi_name="3600 seconds")


def _host_name(text: str) -> str:
    if not text.strip() or any(c.isspace() or c in "/@?#" for c in text):
        raise argparse.ArgumentTypeError(f"must be a host name or address, got {text!r}")
    return text.strip()


def _listen_address(text: str) -> str:
    host = _host_name(text)
    if host not in ("0.0.0.0", "::") and _is_every_interface(host):
        raise argparse.ArgumentTypeError(f"{text!r} means every interface, and the server has no authentication: "
                                         "write 0.0.0.0 (or ::) if you mean it")
    return host


def _is_every_interface(text: str) -> bool:
    """Whether ``text`` is a short or odd spelling of 0.0.0.0 or :: ('0', '0.0', '::0'), which a
    socket binds to every interface, or 0.0.0.0 mapped into IPv6 ('::ffff:0.0.0.0': every IPv4 one)."""
    try:
        return socket.inet_aton(text) == bytes(4)  # takes '0', '0.0', '0x0', ...
    except OSError:
        pass
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_unspecified or mapped is not None and mapped.is_unspecified


def _checkpoint(text: str) -> str:
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"no checkpoint file {text!r}")
    from agents.checkpoint import CheckpointError, load_checkpoint

    try:  # a corrupt file is refused at the start, not offered to the players
        data = load_checkpoint(text)
    except (CheckpointError, ImportError) as e:  # ImportError: no PyTorch, the message names the extra
        raise argparse.ArgumentTypeError(str(e)) from None
    game = data.get("game", "highway") if isinstance(data, dict) else "highway"
    if game != "highway":  # offered on the page, it would fail only when a player picks it
        raise argparse.ArgumentTypeError(f"{text!r} is an agent of game {game!r}; the page plays Highway: "
                                         "give a checkpoint trained with train.py --game highway")
    return text


def build_parser() -> argparse.ArgumentParser:
    prog = "highway-play" if os.path.basename(sys.argv[0]) == "highway-play" else "python -m highway_env.play"
    parser = OneLineErrorParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                bare_errors=True)
    parser.add_argument("--host", default="127.0.0.1", type=_listen_address,
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
    parser.add_argument("--hint-seconds", type=_seconds, default=5.0,
                        help="time limit of the solver for one hint request (default: %(default)s); "
                             "a hint not finished in time is continued by the next request")
    parser.add_argument("--allow-host", action="append", default=[], type=_host_name, metavar="NAME",
                        help="also answer requests addressed to NAME (repeatable; localhost, 127.0.0.1, "
                             "::1 and the --host address always work; others get 403, which stops "
                             "DNS-rebinding pages)")
    parser.add_argument("--checkpoint", action="append", default=[], type=_checkpoint, metavar="PATH",
                        help="an AlphaZero checkpoint the page may choose (repeatable; without it only "
                             "the shipped network can be loaded)")
    parser.add_argument("--max-mcts-sims", type=_simulations, default=MAX_MCTS_SIMULATIONS, metavar="N",
                        help="most simulations an mcts:N opponent may ask for (default: %(default)s)")
    parser.add_argument("--max-az-sims", type=_simulations, default=MAX_AZ_SIMULATIONS, metavar="N",
                        help="most simulations an az:PATH:N opponent may ask for (default: %(default)s)")
    parser.add_argument("--max-engines", type=_positive_int, default=MAX_ENGINES, metavar="N",
                        help=f"most opponent processes at once ({', '.join(ISOLATED_KINDS)}; a perfect player "
                             "takes ~340 MB): beyond it the least recently used idle one is closed, "
                             "and a new game gets 429 while all are thinking (default: %(default)s)")
    parser.add_argument("--verbose", action="store_true", help="log every HTTP request to stderr")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"error: --port must be in 0..65535, got {args.port}", file=sys.stderr)
        return 2
    from highway_env.play.limits import ServerLimits
    from highway_env.play.server import PlayServer

    limits = ServerLimits(max_mcts_simulations=args.max_mcts_sims, max_az_simulations=args.max_az_sims,
                          max_engines=args.max_engines, checkpoints=tuple(args.checkpoint))
    try:
        server = PlayServer(args.host, args.port, hint_seconds=args.hint_seconds, verbose=args.verbose,
                            allow_hosts=args.allow_host, limits=limits)
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
