"""Highway as a Python OpenSpiel game, ``python_highway``, built like OpenSpiel's
``python/games/tic_tac_toe.py`` with the rules of :mod:`highway_env.core`.

The conventions are ``highway_v0``'s default frame, so an agent moves between the two unchanged:
players 0 (A, first) and 1 (B); action ``(number - 1) * 16 + cell`` on the real board
(``action_to_string``: ``16@r0c3``); returns +1 / -1 / 0 at the end only; observation tensor
(4, 4, 16) one-hot in the observing player's frame, observation string the grid and the side to
move, information state string the move history. ``game.new_initial_state(board)`` also starts
from a position (a Board, a string, 16 ints, or a state struct); its information state begins with
that position.

Like tic_tac_toe.py it gives OpenSpiel's SpielStruct API (from OpenSpiel 2.0, whose pyspiel calls
the hooks below; ``state.to_struct()``, ``to_json()``,
``to_dict()``, ``action_to_struct``, ``apply_action_struct``, ``to_observation_struct``): a state is
``{"current_player": "A" | "B" | "Terminal", "board": [16 ints, 0 empty]}``, an action
``{"number": 16, "row": 0, "col": 3}``.
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from highway_env import core
from highway_env.core import CELLS, NUM_ACTIONS, NUMBERS, PLAYER_NAMES, SIZE, Board, HighwayError
from highway_env.highway.batch_rules import PLANES_SHAPE, observe_planes
from highway_env.highway.highway import board_from_option

GAME_NAME = "python_highway"

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Highway",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=NUM_ACTIONS,
    max_chance_outcomes=0,
    num_players=2,
    min_utility=-1.0,
    max_utility=1.0,
    utility_sum=0.0,
    max_game_length=CELLS,
)


class HighwayGame(pyspiel.Game):
    """The game object: makes states and observers."""

    def __init__(self, params=None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self, board=None):
        """The empty board, or the position ``board``: a Board, a board string, 16 ints, or a state
        struct (``state.to_struct()``, or its dict ``state.to_dict()``), as tic_tac_toe.py takes."""
        struct_class = getattr(pyspiel, "StateStruct", None)  # OpenSpiel >= 1.6.1; the extra takes 1.2
        if isinstance(board, dict) or struct_class is not None and isinstance(board, struct_class):
            board = _board_from_struct(board)
        return HighwayState(self, board)

    def observation_tensor_layout(self):
        # The tensor is (row, column, number): channels last, as highway_v0's observation (and as
        # OpenSpiel's JAX AlphaZero reads a shape). The C++ default, CHW, would misplace them; a
        # Python game cannot change what C++ code sees, only what Python callers see.
        return pyspiel.TensorLayout.HWC

    def make_py_observer(self, iig_obs_type=None, params=None):
        # Default observation (and perfect-recall-free public views): the board; the information
        # state of a perfect-information game is its public history, as in tic_tac_toe.py.
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return HighwayObserver(params)
        return HistoryObserver(iig_obs_type, params)


class HighwayState(pyspiel.State):
    """A position: an immutable ``core.Board`` (copying the state copies one reference)."""

    def __init__(self, game: HighwayGame, board=None):
        super().__init__(game)
        self.board = Board() if board is None else board_from_option(board)
        #: the position a state made by ``new_initial_state(board)`` started from (its history
        #: begins there); None for the empty board
        self.start: Board | None = self.board if self.board.ply else None

    def current_player(self):
        return pyspiel.PlayerId.TERMINAL if self.board.is_terminal() else self.board.to_move

    def _legal_actions(self, player):
        return self.board.legal_actions()  # ascending, as OpenSpiel requires

    def _apply_action(self, action):
        self.board = self.board.apply(action)  # raises core.IllegalMoveError naming the reason

    def _action_to_string(self, player, action):
        return core.action_str(action)

    def is_terminal(self):
        return self.board.is_terminal()

    def returns(self):
        if not self.board.is_terminal():
            return [0.0, 0.0]
        value = float(self.board.outcome().value)  # +1: A won
        return [value, -value]

    def __str__(self):
        return self.board.to_grid()

    # SpielStruct API: plain dicts that pyspiel wraps as its Dict*Struct objects (JSON and all)
    def _to_struct(self):
        return {"current_player": _player_name(self.current_player()), "board": list(self.board.cells)}

    def _to_observation_struct(self, player):
        return self._to_struct()  # perfect information: a player observes the whole state

    def _action_to_struct(self, player, action):
        number, cell = core.decode_action(action)
        row, col = core.cell_rc(cell)
        return {"number": number, "row": row, "col": col}

    def _struct_to_actions(self, action_struct):
        return [_action_from_struct(action_struct)]


class HistoryObserver(IIGObserverForPublicInfoGame):
    """The information state: the public history (``history_str``), as tic_tac_toe.py's, after the
    starting position when a state did not start from the empty board. Without it a state made by
    ``new_initial_state(board)`` would have the empty board's information state: spiel.h asks that states
    differing in what a player observes have different information states, and here the player
    observes the whole board."""

    def string_from(self, state, player):
        history = super().string_from(state, player)
        if state.start is None or not self._iig_obs_type.public_info:
            return history
        return f"from {state.start.to_string()}: {history}"


class HighwayObserver:
    """The board one-hot in the observing player's frame; conforms to OpenSpiel's PyObserver."""

    def __init__(self, params):
        if params:
            raise ValueError(f"python_highway observations take no parameters; got {params}")
        self.tensor = np.zeros(CELLS * NUMBERS, np.float32)
        self.dict = {"observation": self.tensor.reshape(PLANES_SHAPE)}  # a view of self.tensor
        self._board = np.zeros((1, CELLS), np.int8)  # the kernel's batch of one, reused

    def set_from(self, state, player):
        self.tensor.fill(0)
        self._board[0] = state.board.cells
        observe_planes(self._board, self.dict["observation"], player)  # highway_v0's planes, as float32

    def string_from(self, state, player):
        board = state.board
        if board.is_terminal():
            tail = f"over, winner {board.outcome().winner or 'none (draw)'}"
        else:
            tail = f"{PLAYER_NAMES[board.to_move]} to move"
        return f"{board.to_grid()}\n{tail}"


def _player_name(player) -> str:
    return "Terminal" if player == pyspiel.PlayerId.TERMINAL else PLAYER_NAMES[player]


def _board_from_struct(struct) -> Board:
    """The board of a state struct; its ``current_player``, when given, must be the board's."""
    data = struct if isinstance(struct, dict) else struct.to_dict()
    if "board" not in data:
        raise HighwayError(
            f"a python_highway state struct needs 'board' (16 numbers, 0 empty); got keys {sorted(data)}")
    board = board_from_option(data["board"])
    expected = _player_name(pyspiel.PlayerId.TERMINAL if board.is_terminal() else board.to_move)
    if "current_player" in data and data["current_player"] != expected:
        raise HighwayError(f"state struct: current_player {data['current_player']!r} does not match the board, "
                           f"whose current player is {expected!r} ({board.ply} cells filled)")
    return board


def _action_from_struct(action_struct) -> int:
    """``{"number": n, "row": r, "col": c}`` -> the action; raises HighwayError naming a bad field."""
    missing = [k for k in ("number", "row", "col") if k not in action_struct]
    if missing:
        raise HighwayError(f"a python_highway action struct needs number, row and col; {missing} missing "
                           f"in {dict(action_struct)}")
    row, col = (core.integral(action_struct[k], k) for k in ("row", "col"))
    for name, value in (("row", row), ("col", col)):
        if not 0 <= value < SIZE:
            raise HighwayError(f"action struct: {name} {value} out of range 0..{SIZE - 1}")
    return core.encode_action(core.integral(action_struct["number"], "number"), core.cell_index(row, col))


def register() -> None:
    """Register ``python_highway`` with pyspiel (once per process; importing the package does it)."""
    if GAME_NAME not in pyspiel.registered_names():
        pyspiel.register_game(_GAME_TYPE, HighwayGame)
