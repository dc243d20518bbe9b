"""OpenSpiel bots graded by :func:`highway_env.benchmark.evaluate`: a bot as a policy on boards.

A bot is a ``pyspiel.Bot`` (OpenSpiel's Python or C++ bots, AlphaZero bots) or any object with
``step(state)`` and ``restart_at(state)``. Each position the benchmark asks about becomes a fresh
``python_highway`` state built from the board, so the bot sees no history (the state is the
board); ``restart_at(state)`` comes first, so a bot that keeps a tree or a game record starts over
on each position. The actions of ``python_highway`` are the absolute actions the benchmark checks
(an illegal one raises its PolicyError naming the position and the action).
The bot draws from its own generators: graded twice from the same seeds (a fresh
``MCTSBot(..., random_state=np.random.RandomState(0))`` with a seeded evaluator) it gives the same
report, since the benchmark asks the same positions in the same order and its perfect opponent
counts its budgets in solver nodes.

    from open_spiel.python.algorithms import mcts
    bot = mcts.MCTSBot(game, 2.0, 200, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)),
                       random_state=np.random.RandomState(0))
    report = highway_env.benchmark.evaluate(bot)            # or evaluate((bot_for_a, bot_for_b))
"""

from __future__ import annotations

import pyspiel

from highway_env.cli_args import first_line
from highway_env.core import PLAYER_NAMES, Board
from highway_env.openspiel.game import GAME_NAME


class BotPolicy:
    """One bot for both seats, or ``(bot_for_a, bot_for_b)`` (bots bound to one ``player_id``, as
    ``UniformRandomBot``): called on (N, 16) boards, it asks the bot of each position's side to
    move for one action on a fresh ``python_highway`` state of that board, and returns them
    unchecked (the benchmark checks them). A bot that raises, or returns INVALID_ACTION, is an
    ``error`` (the benchmark passes its PolicyError) naming the bot and the position."""

    def __init__(self, bots, error: type[Exception] = ValueError):
        bots = tuple(bots) if isinstance(bots, (list, tuple)) else (bots, bots)
        if len(bots) != 2:
            raise TypeError(f"give one OpenSpiel bot or one per seat (bot_for_a, bot_for_b), got {len(bots)} bots")
        for bot in bots:
            if isinstance(bot, pyspiel.MCTSBot):
                # open_spiel 2.0.2: its step() kills the process (segfault) on any Python game,
                # OpenSpiel's own python_tic_tac_toe too; tests/test_openspiel.py checks it still does
                raise TypeError("OpenSpiel's C++ pyspiel.MCTSBot crashes on Python games such as python_highway; "
                                "use the Python open_spiel.python.algorithms.mcts.MCTSBot (same arguments)")
        self.bots, self.error = bots, error
        self.game = pyspiel.load_game(GAME_NAME)
        self.name = "/".join(dict.fromkeys(type(b).__name__ for b in bots))

    def __call__(self, boards) -> list:
        # a list, not an int array: a float or None from the bot must reach the benchmark's check
        return [self.step(Board(tuple(int(v) for v in cells))) for cells in boards]

    def step(self, board: Board) -> int:
        """The action of the bot of ``board``'s side to move, asked on a fresh state of ``board``."""
        state = self.game.new_initial_state(board)
        bot = self.bots[state.current_player()]
        try:
            bot.restart_at(state)
            action = bot.step(state)
        except Exception as e:  # the bot's own code failing: one line naming it and the position
            raise self.error(f"{type(bot).__name__} raised {type(e).__name__}: {first_line(e)} in position "
                              f"{board.to_string()!r} ({PLAYER_NAMES[board.to_move]} to move)") from e
        if action == pyspiel.INVALID_ACTION:
            raise self.error(f"{type(bot).__name__} returned INVALID_ACTION ({action}) in position "
                             f"{board.to_string()!r} ({PLAYER_NAMES[board.to_move]} to move): a bot bound to one "
                             "player_id plays only that seat; give one bot per seat, (bot_for_a, bot_for_b)")
        return action

    def __repr__(self) -> str:
        return f"BotPolicy({self.name!r})"
