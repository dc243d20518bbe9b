"""Rush Hour / "Traffic!" (Nob Yoshigahara): boards, BFS solver, Gymnasium env and CLI.

``from highway_env.rushhour import Board, solve, level``; the env:
``gymnasium.make("highway_env/RushHour-v0", level=1)`` (``highway_env.rushhour.env.RushHourEnv``);
the CLI: ``python -m highway_env.rushhour solve <board> --json`` (or ``--level N``).
"""

from highway_env.rushhour.game import (NUM_LEVELS, Board, Card, IllegalMoveError, Move, Puzzle,  # noqa: F401
                                       RushHourError, Solution, Vehicle, level, load_cards, load_puzzles,
                                       parse_board, parse_line, parse_move, solve)
