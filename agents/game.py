"""The game protocol that everything in ``agents/`` is written against.

All methods work on *batches* of states, numpy arrays of shape (N, *state_shape); search,
self-play, training and the baseline agents use nothing else, so another two-player zero-sum game
trains by implementing this class.

Frames: the network sees the position from the side to move ("view frame"), so one network plays
both sides; ``view_to_board`` maps its view actions to the game's board actions, which search,
``apply`` and agents use. Training targets are stored in the view frame.

Values: ``returns`` is the result for player 0 in [-1, 1]; ``scores`` an optional auxiliary
target for player 0 (e.g. a scaled winning margin).
"""

from __future__ import annotations

import abc
from typing import NamedTuple

import numpy as np

from highway_env.cli_args import first_line
# the random player's draw, one function with Highway's rules kernel (batch_rules.random_legal)
from highway_env.legal_sampling import random_legal as sample_legal  # noqa: F401  (agents.game.sample_legal)


class GameError(ValueError):
    """Bad input to a game method (wrong shape, illegal action, non-terminal state for returns...)."""


class LabelledPositions(NamedTuple):
    """Positions with every move graded by an exact solver (what ``Game.graded_positions`` gives)."""

    states: np.ndarray  # (N, *state_shape)
    keeps: np.ndarray  # (N, num_actions) bool, board frame: the move keeps the position's value
    source: str  # where they come from, for logs and messages


class Game(abc.ABC):
    """Batched two-player zero-sum game. Subclasses set the class attributes and the methods."""

    name: str = "game"
    #: the game's name in reports (e.g. "Black Path"); None: ``name``
    title: str | None = None
    num_actions: int  # size of the action space (board frame = view frame size)
    state_shape: tuple[int, ...]  # one state
    state_dtype = np.int8
    obs_shape: tuple[int, ...]  # network input of one state, (H, W, C) for image-like games
    max_game_length: int  # upper bound on moves in a game (sizes search paths)
    #: game options a checkpoint without a ``game_config`` entry was trained with (e.g. an older
    #: observation); ``{}`` = the defaults
    legacy_config: dict = {}
    #: the game's exact player as ``"module:factory"``, imported on first use: ``make_agent("perfect[:ARGS]")``
    #: calls ``factory(args, game, seed)`` (None: the game has none)
    perfect_player: str | None = None
    #: the options of :meth:`config` that change only the network's input or training target, not the
    #: rules (Highway's ``obs``, Jumping's ``value``): a checkpoint's agent may be handed a game
    #: differing in these, never in the others
    view_options: tuple[str, ...] = ()

    def config(self) -> dict:
        """Keyword arguments that rebuild this game (``type(game)(**game.config())``), e.g. the
        board size or the observation variant; stored in checkpoints so an agent plays the game it
        was trained on and sees the input it was trained with."""
        return {}

    def rules_config(self) -> dict:
        """The options of :meth:`config` that change the rules (board size, start, ...)."""
        return {k: v for k, v in self.config().items() if k not in self.view_options}

    # -- core rules, all batched ------------------------------------------------------------
    @abc.abstractmethod
    def initial_states(self, n: int) -> np.ndarray:
        """(n, *state_shape) start positions."""

    @abc.abstractmethod
    def legal_masks(self, states: np.ndarray) -> np.ndarray:
        """(N, num_actions) bool in the board frame; all False for terminal states."""

    @abc.abstractmethod
    def apply(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """New (N, *state_shape) array after playing actions[i] in states[i] (inputs unchanged).
        Must raise GameError if an action is illegal."""

    @abc.abstractmethod
    def terminal(self, states: np.ndarray) -> np.ndarray:
        """(N,) bool."""

    @abc.abstractmethod
    def to_play(self, states: np.ndarray) -> np.ndarray:
        """(N,) int8 player to move, 0 or 1 (any value for terminal states)."""

    @abc.abstractmethod
    def returns(self, states: np.ndarray) -> np.ndarray:
        """(N,) float32 result for player 0 in [-1, 1]; only meaningful for terminal states."""

    def scores(self, states: np.ndarray) -> np.ndarray:
        """(N,) float32 auxiliary target for player 0 on terminal states (default: the result)."""
        return self.returns(states)

    # -- network view -------------------------------------------------------------------------
    @abc.abstractmethod
    def observations(self, states: np.ndarray) -> np.ndarray:
        """(N, *obs_shape) network input, from the side to move's view."""

    def view_to_board(self, states: np.ndarray) -> np.ndarray:
        """(N, num_actions) int64: entry j is the board action of view action j (default: the
        identity, for games whose actions read the same from either side)."""
        return np.broadcast_to(np.arange(self.num_actions, dtype=np.int64), (len(states), self.num_actions)).copy()

    @abc.abstractmethod
    def symmetries(self) -> tuple[np.ndarray, np.ndarray]:
        """Symmetries of the view frame for augmentation, as gather indices:
        ``obs_gather`` (S, prod(obs_shape)) and ``action_gather`` (S, num_actions), with
        ``obs_flat[:, obs_gather[k]]`` and ``policy[:, action_gather[k]]`` the k-th transformed
        sample. Row 0 must be the identity. Return 1-row identities if the game has none."""

    # -- optional helpers ----------------------------------------------------------------------
    def graded_positions(self, n: int) -> LabelledPositions | None:
        """A fixed sample of up to ``n`` critical positions (some legal move gives the value away),
        solver-labelled, that evaluation reports never grade on: the trainer measures its network
        there while it trains and may pick ``best.pt`` by it. None: the game has no such set."""
        return None

    def plies(self, states: np.ndarray) -> np.ndarray | None:
        """(N,) int64 moves made in each position, for reports by ply (the evaluation's accuracy
        by ply, ``evaluate.py --label-from-ply``). None: the game does not count them."""
        return None

    def describe(self) -> str:
        """This game's board and options in a few words, for report titles (e.g. "n = 4")."""
        return ", ".join(f"{k} = {v}" for k, v in self.config().items()) or "default options"

    def heuristic(self, states: np.ndarray) -> np.ndarray:
        """(N,) float static evaluation for player 0 (higher = better for player 0); used by the
        greedy baseline. Terminal states should give the exact result (e.g. the margin)."""
        raise NotImplementedError(f"{self.name} has no heuristic; the greedy agent needs one")

    def rollout(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(N,) returns for player 0 after uniformly random play to the end. Generic (slow) version:
        games may override it with a fast kernel."""
        s = np.array(states, copy=True)
        while True:
            live = ~self.terminal(s)
            if not live.any():
                return self.returns(s)
            masks = self.legal_masks(s[live])
            s[live] = self.apply(s[live], sample_legal(masks, rng))

    def as_state(self, state) -> np.ndarray:
        """Convert a user-facing position (e.g. a board object) to one state array; GameError naming
        it when it has another shape, or values that are not integers ``state_dtype`` holds."""
        a = np.asarray(state) if state is not None else np.asarray([])
        if a.shape != tuple(self.state_shape):
            raise GameError(f"a {self.name} state has shape {self.state_shape}, got {a.shape}")
        if np.issubdtype(self.state_dtype, np.integer):
            info = np.iinfo(self.state_dtype)
            if a.dtype.kind not in "iub" or (a.size and not info.min <= a.min() <= a.max() <= info.max):
                raise GameError(f"a {self.name} state holds integers in {info.min}..{info.max}, "
                                f"got {a.tolist()!r}"[:300])
        return a.astype(self.state_dtype)

    def checked_states(self, states) -> np.ndarray:
        """A (N, *state_shape) batch as a contiguous ``state_dtype`` array; GameError naming the
        shape otherwise (for the batched methods, which take batches only)."""
        s = np.ascontiguousarray(states, dtype=self.state_dtype)
        if s.ndim != 1 + len(self.state_shape) or s.shape[1:] != tuple(self.state_shape):
            raise GameError(f"{self.name} states must have shape (N, {', '.join(map(str, self.state_shape))}), "
                            f"got {s.shape}")
        return s

    def checked_moves(self, states, actions) -> tuple[np.ndarray, np.ndarray]:
        """``checked_states(states)`` and the actions as an (N,) int64 array; GameError if the
        counts differ (the start of every ``apply``)."""
        s = self.checked_states(states)
        a = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
        if a.shape != (len(s),):
            raise GameError(f"{len(s)} states but {a.shape[0]} actions")
        return s, a

    def as_states(self, states) -> np.ndarray:
        """(N, *state_shape) from a batch array, a list of positions, or one position (a state
        array or anything ``as_state`` takes, e.g. a board object or string)."""
        shape = tuple(self.state_shape)
        if isinstance(states, np.ndarray) and states.shape[1:] == shape:
            return np.ascontiguousarray(states, dtype=self.state_dtype)
        if not isinstance(states, (list, tuple)) and not (isinstance(states, np.ndarray) and states.ndim > len(shape)):
            return self.as_state(states)[None]
        if _is_one_state_of_ints(states, shape):  # [0] * 16: one position, not 16 of them
            return self.as_state(np.asarray(states))[None]
        return np.stack([self.as_state(s) for s in states])


def _is_one_state_of_ints(states: list | tuple, shape: tuple[int, ...]) -> bool:
    """Whether a list or tuple is one flat state written as integers (``as_state`` then checks its
    length): a state is never a scalar, so such a list cannot be a batch."""
    return (len(shape) == 1 and len(states) > 0
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in states))


def check_contract(game: Game, games: int = 2, seed: int = 0) -> None:
    """Play ``games`` random games of ``game`` to the end and check what its methods return
    against the protocol (shapes, a legal move in every running state, the mover 0 or 1, results in
    [-1, 1], an end within ``max_game_length`` moves); GameError naming the game, the method and
    what it returned. A game plugged in by reference is checked so before training or evaluation."""
    label = f"game {type(game).__module__}:{type(game).__qualname__}"

    def call(method, *args, shape=None):
        try:
            out = np.asarray(getattr(game, method)(*args))
        except GameError:
            raise
        except Exception as e:
            raise GameError(f"{label}: {method}() raised {type(e).__name__}: {first_line(e)}") from e
        if shape is not None and out.shape != shape:
            raise GameError(f"{label}: {method}() returned shape {out.shape}, expected {shape} (see agents/game.py)")
        return out

    rng = np.random.default_rng(seed)
    states = call("initial_states", games, shape=(games, *game.state_shape))
    for _ in range(int(game.max_game_length) + 1):
        n = len(states)
        done = call("terminal", states, shape=(n,)).astype(bool)
        if done.any():  # only meaningful there: a game may refuse running states
            returns = call("returns", states[done], shape=(int(done.sum()),))
            if returns.dtype.kind not in "biuf":  # None, strings, ...: numpy's isfinite would raise
                raise GameError(f"{label}: returns() gave {returns.reshape(-1)[0]!r} for a finished game, not a "
                                f"number (dtype {returns.dtype}): {states[done][0].tolist()}")
            bad = ~(np.isfinite(returns) & (np.abs(returns) <= 1))  # the value head's tanh reaches no more
            if bad.any():
                raise GameError(f"{label}: returns() gave {returns[bad][0].item()!r} for a finished game, "
                                f"outside [-1, 1]: {states[done][bad][0].tolist()}")
        states = states[~done]
        if not len(states):
            return
        n = len(states)
        masks = call("legal_masks", states, shape=(n, game.num_actions)).astype(bool)
        to_play = call("to_play", states, shape=(n,))
        bad = ~np.isin(to_play, (0, 1))
        if bad.any():
            raise GameError(f"{label}: to_play() gave {to_play[bad][0].item()!r}, not player 0 or 1: "
                            f"{states[bad][0].tolist()}")
        call("observations", states, shape=(n, *game.obs_shape))
        if not masks.any(axis=1).all():
            raise GameError(f"{label}: legal_masks() gives no legal move in a state that terminal() calls running: "
                            f"{states[~masks.any(axis=1)][0].tolist()}")
        states = call("apply", states, sample_legal(masks, rng), shape=(n, *game.state_shape))
    raise GameError(f"{label}: a random game runs past max_game_length = {game.max_game_length} moves")
