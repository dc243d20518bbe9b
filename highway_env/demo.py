"""Play and render one game of Highway between two agents.

    python -m highway_env.demo                              # greedy (A) against random (B)
    python -m highway_env.demo --a az:checkpoints/highway_az/latest.pt --b greedy --png game.png
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from highway_env import highway_v0
from highway_env.atomic_files import atomic_write, check_writable
from highway_env.cli_args import OneLineErrorParser, non_negative_int
from highway_env.core import PLAYER_NAMES, HighwayError, action_str


def main(argv=None) -> int:
    parser = OneLineErrorParser(prog="python -m highway_env.demo", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", default="greedy",
                        help="agent spec for player A: random, greedy, mcts:N, az:PATH[:SIMS], "
                             "perfect[:TIEBREAK] (default: %(default)s)")
    parser.add_argument("--b", default="random", help="agent spec for player B (default: %(default)s)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed for both agents (default: %(default)s)")
    parser.add_argument("--png", metavar="PATH", help="also save the final board as a PNG image")
    args = parser.parse_args(argv)

    import agents

    try:
        players = [agents.make_agent(args.a, seed=args.seed), agents.make_agent(args.b, seed=args.seed + 1)]
    except (ValueError, OSError, RuntimeError, ImportError) as exc:  # CheckpointError; ImportError: no PyTorch
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"error: {first_line}", file=sys.stderr)
        return 2
    if args.png is not None:  # checked before the game, not after it
        if not args.png or os.path.isdir(args.png):
            print(f"error: --png {args.png!r} is not a file name (give e.g. game.png)", file=sys.stderr)
            return 2
        try:
            check_writable(args.png, "--png")
        except OSError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    env = highway_v0.env(render_mode="ansi")
    env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    for _ in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        board = env.unwrapped.board
        action = players[board.to_move].act(board, rng)
        print(f"move {board.ply + 1:2d}: {PLAYER_NAMES[board.to_move]} plays {action_str(action)}")
        env.step(action)
    print()
    print(env.render())
    if args.png:
        from PIL import Image

        from highway_env.render import board_to_rgb

        image = Image.fromarray(board_to_rgb(env.unwrapped.board))
        atomic_write(args.png, lambda tmp: image.save(tmp, format="PNG"))  # PNG whatever the name's suffix
        print(f"image: {args.png}")
    env.close()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except HighwayError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
