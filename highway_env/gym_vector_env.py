"""Highway as a Gymnasium vector env: ``num_envs`` games of :class:`~highway_env.gym_env.HighwayGymEnv`
stepped together on the rules kernel (:mod:`highway_env.highway.batch_rules`), with no Python loop
over the games, for learners that train on many games at once (PPO, DQN, ...).

    envs = gymnasium.make_vec("highway_env/Highway-v0", num_envs=1024)   # this class
    obs, infos = envs.reset(seed=0)
    obs, rewards, terminations, truncations, infos = envs.step(actions)  # (1024,) each

Each game is the single env's (seat ``play_as``, ``opponent``, ``frame``, rewards); observations
``{"observation": (N, 4, 4, 16) int8, "action_mask": (N, 256) int8}``; rewards are float64 and ends
bool, as SyncVectorEnv's, whose steps this env gives for the same opponent moves (tested;
``make_vec(..., vectorization_mode="sync")`` still builds that one).

* Autoreset: ``NEXT_STEP`` (Gymnasium's default) starts an ended game again on the next step (its
  action ignored, reward 0). The full board's mask is all zeros, so a masked policy must not sample
  from it (that step's action is ignored anyway). ``AutoresetMode.DISABLED`` (what TorchRL's
  ``GymWrapper`` drives) leaves it ended, and stepping it raises ``HighwayError`` until
  ``reset(options={"reset_mask": mask})`` restarts it (a partial reset works in either mode).
* ``max_episode_steps`` (as ``gymnasium.make``'s): truncate a game after that many agent steps (None
  or -1: never). ``disable_env_checker`` is accepted and ignored.
* ``opponent``: None, a uniformly random legal move per game drawn for the whole batch from the
  env's ``np_random`` (``batch_rules.random_legal``); the single env's ``policy(board, mask, rng)``,
  called per game with that game's own generator (seeded as SyncVectorEnv seeds each single env, so
  a stochastic policy plays the games it plays there); or, with ``batched_opponent=True``,
  ``policy(boards (K, 16) int8, masks (K, 256) bool, rng) -> (K,)`` absolute actions with the env's
  ``np_random``. An illegal reply raises ``IllegalMoveError``.
* ``reset(seed=...)`` as SyncVectorEnv: None; an int ``s`` (game i gets ``s + i``); or one int or
  None per game (None: that game's generator goes on; with ``reset_mask`` only the named games are
  seeded). The shared ``np_random`` is seeded by ``s`` (also for the list ``s, s + 1, ...``), by any
  other list of ints as a whole (``np_random_seed`` -1), and not by a list holding a None. So the
  default opponent's games differ from the sync env's, whose ``random_policy`` draws per game.
* A step or reset is whole or nothing: if it raises, every game, counter and generator is as before.
* ``illegal_action="raise"`` (default) raises ``IllegalMoveError`` naming the game, the action and
  why; ``"lose"`` ends that game with reward -1 (info ``illegal_action``). Non-integer actions or
  actions outside 0..255 always raise ``HighwayError``.
* Infos (arrays with Gymnasium's ``_key`` masks, as SyncVectorEnv's): ``ply`` (numbers on each
  board), ``opponent_action`` (absolute; -1 where it made none) and, for games that ended this step,
  ``min_a``, ``min_b`` and ``margin`` (min_b - min_a: positive when A won). The single env's
  ``bounds``, ``winner`` and ``illegal_reason`` cost more than the step and are left out; the
  cheapest paths are ``envs.get_attr("board")[g].outcome()``'s.
* ``reset(options={"board": ...})`` starts every game from that position; autoresets start empty.
* ``render()`` gives one frame per game in ``render_mode`` ("ansi", "rgb_array", "human"), so
  Gymnasium's ``RecordVideo`` and ``HumanRendering`` vector wrappers work; ``metadata`` is
  SyncVectorEnv's (``render_modes``, ``render_fps``, ``autoreset_mode``).
* ``call`` / ``get_attr`` / ``set_attr`` as SyncVectorEnv's, one value per game (see
  :meth:`HighwayVectorEnv.call`): ``envs.call("action_masks")``, ``envs.get_attr("board")``,
  ``envs.set_attr("opponent", policy)``.
* Gymnasium's vector wrappers work as over SyncVectorEnv (tested: RecordEpisodeStatistics,
  DictInfoToList, ClipReward, TransformReward, NormalizeReward, Flatten-, Filter-, Transform- and
  VectorizeTransformObservation, TransformAction). The observation is a Dict of int8 Boxes, so
  DtypeObservation and NormalizeObservation need ``FlattenObservation`` under them, over either env.
"""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from highway_env.aec import check_render_mode, render_in_mode
from highway_env.core import (CELLS, NUM_ACTIONS, Board, HighwayError, IllegalMoveError, illegal_move_error,
                              integral)
from highway_env.gym_env import HighwayGymEnv, _side, check_seat_settings
from highway_env.highway import batch_rules
from highway_env.highway.batch_rules import FRAME_ACTIONS_INV, check_frame
from highway_env.highway.highway import board_from_option, observation_space, observations
from highway_env.render import RENDER_MODES, board_to_ansi, board_to_rgb

#: the most games one env holds (a (N, 256) mask is built each step)
MAX_NUM_ENVS = 1 << 20
#: the autoreset modes the env implements (Gymnasium's SAME_STEP is not one)
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED)
#: the single env's settings every game shares: get_attr / call give one per game
SHARED_SETTINGS = ("play_as", "frame", "illegal_action", "opponent", "render_mode")
#: the shared settings set_attr changes (the next move on reads them)
SETTABLE = ("opponent", "illegal_action")


def check_autoreset_mode(mode) -> AutoresetMode:
    """``mode`` (an AutoresetMode or its value, "NextStep" / "Disabled") as an AUTORESET_MODES member."""
    try:
        found = AutoresetMode(mode)
    except (ValueError, TypeError):
        found = None
    if found not in AUTORESET_MODES:
        raise HighwayError(f"autoreset_mode must be AutoresetMode.NEXT_STEP or AutoresetMode.DISABLED, got {mode!r}")
    return found


def check_max_episode_steps(value) -> int | None:
    """None (no limit; -1 too, as gymnasium.make) or a positive int."""
    if value is None:
        return None
    steps = integral(value, "max_episode_steps")
    if steps == -1:
        return None
    if steps < 1:
        raise HighwayError(f"max_episode_steps must be None, -1 or a positive integer, got {value!r}")
    return steps


def check_seeds(seed, num_envs: int) -> tuple[np.ndarray | None, int | None]:
    """SyncVectorEnv's ``reset(seed=...)``: None, an int (game i gets ``seed + i``) or a list of one
    int or None per game. Returns (an object array of each game's seed, int or None; or None) and the
    int ``s`` when the seeds are ``s, s + 1, ...`` (else None)."""
    if seed is None:
        return None, None
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise HighwayError(f"seed must be a non-negative int, got {seed!r}")
        return np.arange(num_envs, dtype=object) + int(seed), int(seed)
    # not np.ndim(seed): numpy raises its own ValueError on a ragged list; each item is checked below
    if not isinstance(seed, (list, tuple, np.ndarray)) or isinstance(seed, np.ndarray) and seed.ndim != 1:
        raise HighwayError(f"seed must be None, an int or a list of {num_envs} ints or None (one per game), "
                           f"got {reprlib.repr(seed)}")
    if len(seed) != num_envs:
        raise HighwayError(f"seed: a list needs one seed per game ({num_envs}), got {len(seed)}: {reprlib.repr(seed)}")
    seeds = np.empty(num_envs, dtype=object)
    for i, s in enumerate(seed):
        if s is not None:
            try:
                s = integral(s, "seed")
            except HighwayError:
                s = -1
            if s < 0:
                raise HighwayError(f"seed[{i}] must be None or a non-negative int, got {seed[i]!r}")
        seeds[i] = s
    first = seeds[0]
    consecutive = first is not None and all(s is not None and s == first + i for i, s in enumerate(seeds))
    return seeds, first if consecutive else None


class HighwayVectorEnv(VectorEnv):
    """``num_envs`` Highway games against ``opponent``, stepped together; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": HighwayGymEnv.metadata["render_fps"],
                "autoreset_mode": AutoresetMode.NEXT_STEP}  # as SyncVectorEnv's: the single env's and its mode

    def __init__(self, num_envs: int = 1, play_as: str | int = "A", opponent=None, batched_opponent: bool = False,
                 illegal_action: str = "raise", frame: str = "absolute", render_mode: str | None = None,
                 max_episode_steps: int | None = None, autoreset_mode=AutoresetMode.NEXT_STEP,
                 disable_env_checker: bool | None = None):
        n = integral(num_envs, "num_envs")
        if not 1 <= n <= MAX_NUM_ENVS:
            raise HighwayError(f"num_envs must be in 1..{MAX_NUM_ENVS}, got {num_envs!r}")
        check_render_mode(render_mode, RENDER_MODES)
        check_seat_settings(play_as, opponent, illegal_action)
        self.num_envs = n
        self._me = _side(play_as)
        self.play_as = "AB"[self._me]
        self.frame = check_frame(frame)
        self.opponent, self.batched_opponent = opponent, bool(batched_opponent)
        self.illegal_action = illegal_action
        self.max_episode_steps = check_max_episode_steps(max_episode_steps)
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)  # read by TorchRL
        self.metadata = {**self.metadata, "render_modes": list(RENDER_MODES), "autoreset_mode": self.autoreset_mode}
        self.render_mode = render_mode
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.boards = np.zeros((n, CELLS), np.int8)  # absolute frame, as core.Board.cells
        self._over = np.zeros(n, np.bool_)  # games that ended (terminated): no move is left to the agent
        self._ends_next = np.zeros(n, np.bool_)  # terminated or truncated: the next step starts them again
        self._elapsed = np.zeros(n, np.int64)  # agent steps in each game, for max_episode_steps
        self._started = False
        # each game's generator for a per-game opponent policy, as the single env's np_random: made
        # on first use from the game's seed (None: fresh entropy)
        self._game_rngs = np.full(n, None, dtype=object)
        self._game_seeds = np.full(n, None, dtype=object)
        self._rng_undo: list = []  # (generator, state) before each per-game policy's draws this step

    # -- the API
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        return self._whole_or_nothing(self._reset, seed, options)

    def step(self, actions):
        if not self._started:
            raise HighwayError("call reset() before step()")
        return self._whole_or_nothing(self._step, actions)

    def action_masks(self) -> np.ndarray:
        """Bool (N, 256): the agent's legal actions now in ``frame`` (all False in a game that ended,
        as the single env's), as sb3-contrib's MaskablePPO asks an env."""
        masks = batch_rules.masks(self.boards, self.frame == "player")  # the agent moves wherever a move is left
        masks[self._over] = False
        return masks

    def render(self) -> tuple:
        """Each game's frame in ``render_mode``, as SyncVectorEnv's: a tuple of ``num_envs`` texts
        ("ansi") or RGB images ("rgb_array"); in "human" the boards are printed (and every reset
        and step prints them), Nones returned; without a mode Gymnasium's warning and Nones."""
        if not self._started:
            raise HighwayError("call reset() before render()")
        return self._render_games(np.ones(self.num_envs, np.bool_))

    def call(self, name: str, *args, **kwargs) -> tuple:
        """SyncVectorEnv's ``call``: one result per game of the single env's attribute ``name``,
        called with the arguments where it is callable. The names a game has: ``action_masks`` and
        ``render`` (the batch's, split by game), ``board`` (each game's ``core.Board``),
        ``np_random`` / ``np_random_seed`` (the generator each game's opponent draws from: its own
        for a per-game policy, else the env's one), ``observation_space`` / ``action_space`` (the
        single ones) and the settings in SHARED_SETTINGS. Any other name raises AttributeError."""
        if name in ("action_masks", "render"):
            return tuple(getattr(self, name)(*args, **kwargs))
        return tuple(v(*args, **kwargs) if callable(v) else v for v in self._per_game(name))

    def get_attr(self, name: str) -> tuple:
        """SyncVectorEnv's ``get_attr``: ``call(name)`` (a callable attribute is called)."""
        return self.call(name)

    def set_attr(self, name: str, values) -> None:
        """SyncVectorEnv's ``set_attr`` for the settings in SETTABLE (``opponent``: a policy of the kind
        ``batched_opponent`` says; ``illegal_action``), from the next move on. A list or tuple gives one
        value per game, and the games share their settings, so its values must be one value."""
        if name not in SETTABLE:
            raise AttributeError(f"set_attr: {name!r} cannot be set on {type(self).__name__}; settable: "
                                 f"{', '.join(SETTABLE)}")
        value = values
        if isinstance(values, (list, tuple)):
            if len(values) != self.num_envs:
                raise HighwayError(f"set_attr({name!r}): one value per game ({self.num_envs}), got {len(values)}")
            value = values[0]
            different = [g for g, v in enumerate(values) if not (v is value or v == value)]
            if different:
                raise HighwayError(f"set_attr({name!r}): the games share one {name}, but game {different[0]} "
                                   f"got {values[different[0]]!r} and game 0 {value!r}")
        settings = {"opponent": self.opponent, "illegal_action": self.illegal_action, name: value}
        check_seat_settings(self.play_as, **settings)
        setattr(self, name, value)

    # -- a step and a reset, whole or not at all
    def _whole_or_nothing(self, body, *args):
        """``body(*args)``, restoring every game, the counters and the generator if it raises (an
        illegal action, an opponent policy that fails in some game, an interrupt)."""
        state = (self.boards, self._over, self._ends_next, self._elapsed)
        saved = [a.copy() for a in state]
        rng, rng_seed, started = self._np_random, self._np_random_seed, self._started
        # the random opponent's draw too (about 1 us): an interrupt can land after it, while the step ends
        rng_state = rng.bit_generator.state if rng is not None else None
        game_rngs = (self._game_rngs.copy(), self._game_seeds.copy()) if body == self._reset else None
        self._rng_undo = []
        try:
            return body(*args)
        except BaseException:
            for live, old in zip(state, saved):
                live[:] = old
            self._np_random, self._np_random_seed, self._started = rng, rng_seed, started
            if rng_state is not None:
                rng.bit_generator.state = rng_state
            for generator, old_state in reversed(self._rng_undo):
                generator.bit_generator.state = old_state
            if game_rngs is not None:
                self._game_rngs[:], self._game_seeds[:] = game_rngs
            raise

    def _reset(self, seed, options):
        games = self._games_to_reset(options)
        self._seed(*check_seeds(seed, self.num_envs), games)
        self.boards[games] = self._start_board(options)
        for flags in (self._over, self._ends_next, self._elapsed):
            flags[games] = 0
        replies = self._opponent_moves(games & (self._plies() % 2 != self._me))
        self._started = True
        if self.render_mode == "human":  # as the single env: each game shown after its reset
            self._render_games(games)
        return self._observations(), self._infos(self._plies(), replies, games, np.zeros(self.num_envs, np.bool_))

    def _seed(self, seeds: np.ndarray | None, first: int | None, games: np.ndarray) -> None:
        """Seeds the games' generators (the ``games`` that have a seed) and the shared ``np_random``:
        from ``first`` when the seeds are ``first + i`` (as an int seed), from them all when each game
        has one, and not at all when some has none."""
        if seeds is None:
            return
        has_seed = np.array([s is not None for s in seeds]) if first is None else np.ones(self.num_envs, np.bool_)
        given = games & has_seed
        self._game_seeds[given], self._game_rngs[given] = seeds[given], None
        if first is not None:
            super().reset(seed=first)
        elif has_seed.all():
            self._np_random = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seeds.tolist())))
            self._np_random_seed = -1  # VectorEnv's "not seeded by one int"

    def _step(self, actions):
        restart = self._ends_next.copy()
        if restart.any() and self.autoreset_mode == AutoresetMode.DISABLED:
            raise HighwayError(f"game {int(np.flatnonzero(restart)[0])} has ended: with autoreset_mode DISABLED "
                               "reset it (reset(options={'reset_mask': mask})) before the next step")
        playing = ~restart
        absolute = self._absolute(actions)
        legal = self._legal_now(absolute)
        illegal = playing & ~legal
        if illegal.any() and self.illegal_action == "raise":
            g = int(np.flatnonzero(illegal)[0])
            self._raise_illegal(g, int(np.asarray(actions).reshape(-1)[g]), int(absolute[g]), "the agent's")
        plies = np.where(restart, 0, self._plies())  # counted once, then kept up to date
        self.boards[restart] = 0
        moving = playing & legal
        self._play(moving, absolute)
        plies += moving
        replies = self._opponent_moves(restart & (plies % 2 != self._me) | moving & (plies < CELLS))
        plies += replies >= 0
        ended = moving & (plies == CELLS)
        min_a, min_b = self._final_paths(ended)
        rewards = np.zeros(self.num_envs, np.float64)
        rewards[ended] = np.sign(min_b - min_a)[ended] * (1 if self._me == 0 else -1)
        lost = illegal if self.illegal_action == "lose" else np.zeros(self.num_envs, np.bool_)
        rewards[lost] = -1.0
        terminations = ended | lost
        truncations = np.zeros(self.num_envs, np.bool_)
        if self.max_episode_steps is not None:  # as gymnasium.make's TimeLimit: the restart step is not counted
            self._elapsed[restart] = 0
            self._elapsed[playing] += 1
            truncations = playing & (self._elapsed >= self.max_episode_steps)
        self._over[:] = terminations
        self._ends_next[:] = terminations | truncations
        infos = self._infos(plies, replies, np.ones(self.num_envs, np.bool_), ended, min_a, min_b)
        if lost.any():
            infos["illegal_action"] = np.where(lost, np.asarray(actions).reshape(-1).astype(np.int64), -1)
            infos["_illegal_action"] = lost
        if self.render_mode == "human":
            self._render_games(np.ones(self.num_envs, np.bool_))
        return self._observations(), rewards, terminations, truncations, infos

    def _games_to_reset(self, options) -> np.ndarray:
        """(N,) bool: every game, or those ``options["reset_mask"]`` names (SyncVectorEnv's partial reset)."""
        mask = (options or {}).get("reset_mask")
        if mask is None:
            return np.ones(self.num_envs, np.bool_)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise HighwayError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), "
                               f"got {mask!r}")
        if not mask.any():
            raise HighwayError("options['reset_mask'] names no game")
        if not self._started:
            raise HighwayError("options['reset_mask']: reset() every game once before resetting some")
        return mask.copy()

    def _start_board(self, options) -> np.ndarray:
        """(16,) int8: ``options["board"]`` if given (the agent must have a move there), else empty."""
        if not options or options.get("board") is None:
            return np.zeros(CELLS, np.int8)
        board = board_from_option(options["board"])
        if board.is_terminal() or board.ply == CELLS - 1 and board.to_move != self._me:
            raise HighwayError("options['board'] leaves the agent no move to play")
        return np.asarray(board.cells, np.int8)

    # -- the games
    def _board(self, g) -> Board:
        return Board(tuple(self.boards[g].tolist()))

    def _game_rng(self, g: int) -> np.random.Generator:
        """Game ``g``'s generator, made on first use from its seed as the single env's ``np_random``."""
        rng = self._game_rngs[g]
        if rng is None:
            rng, self._game_seeds[g] = seeding.np_random(self._game_seeds[g])
            self._game_rngs[g] = rng
        return rng

    def _per_game(self, name: str) -> tuple:
        """The values of the single env's attribute ``name`` in each game (see :meth:`call`)."""
        n = self.num_envs
        per_game_rng = self.opponent is not None and not self.batched_opponent
        if name == "board":
            return tuple(self._board(g) for g in range(n))
        if name == "np_random":
            return tuple(self._game_rng(g) for g in range(n)) if per_game_rng else (self.np_random,) * n
        if name == "np_random_seed":
            if not per_game_rng:
                return (self.np_random_seed,) * n
            for g in range(n):
                self._game_rng(g)  # its seed is known once it is made
            return tuple(self._game_seeds)
        single = {"observation_space": self.single_observation_space, "action_space": self.single_action_space}
        if name in single:
            return (single[name],) * n
        if name in SHARED_SETTINGS:
            return (getattr(self, name),) * n
        known = ["action_masks", "render", "board", "np_random", "np_random_seed", *single, *SHARED_SETTINGS]
        raise AttributeError(f"a game of {type(self).__name__} has no attribute {name!r} for call/get_attr; "
                             f"known: {', '.join(known)}")

    def _render_games(self, games: np.ndarray) -> tuple:
        """The frames of ``games`` (bool (N,)) in ``render_mode``, in game order."""
        return tuple(render_in_mode(self.render_mode, lambda b=board: board_to_ansi(b),
                                    lambda b=board: board_to_rgb(b))
                     for board in map(self._board, np.flatnonzero(games)))

    def _plies(self) -> np.ndarray:
        """(N,) int64: how many numbers each board holds (odd: B to move; 16: the game is over)."""
        return (self.boards != 0).sum(axis=1)

    def _absolute(self, actions) -> np.ndarray:
        """The agent's actions, checked (integers in range, one per game), on the real board."""
        raw = np.asarray(actions)
        if raw.shape != (self.num_envs,):
            raise HighwayError(f"step() takes one action per game, shape ({self.num_envs},), got shape {raw.shape}")
        if raw.dtype.kind not in "iu":
            raise HighwayError(f"actions must be integers, got dtype {raw.dtype}")
        if isinstance(actions, (list, tuple)):  # numpy reads [3, True] as [3, 1]: a bool is never an action
            flags = [g for g, a in enumerate(actions) if isinstance(a, (bool, np.bool_))]
            if flags:
                raise HighwayError(f"game {flags[0]}: actions must be integers, got the bool {actions[flags[0]]!r}")
        bad = np.flatnonzero((raw < 0) | (raw >= NUM_ACTIONS))
        if len(bad):
            raise HighwayError(f"game {int(bad[0])}: action {int(raw[bad[0]])} outside 0..{NUM_ACTIONS - 1}")
        raw = raw.astype(np.int64)
        return FRAME_ACTIONS_INV[self._me, raw] if self.frame == "player" else raw

    def _legal_now(self, absolute: np.ndarray) -> np.ndarray:
        legal = np.empty(self.num_envs, np.bool_)
        batch_rules.are_legal(self.boards, absolute, legal)
        return legal

    def _raise_illegal(self, g: int, given: int, absolute: int, whose: str):
        frame = f" ({given} in the player frame)" if self.frame == "player" and whose == "the agent's" else ""
        reason = illegal_move_error(self.boards[g], absolute)
        raise IllegalMoveError(f"game {g}: {whose} action{frame}: {reason}")

    def _play(self, games: np.ndarray, absolute: np.ndarray) -> None:
        g = np.flatnonzero(games)
        self.boards[g, absolute[g] % CELLS] = absolute[g] // CELLS + 1

    def _opponent_moves(self, games: np.ndarray) -> np.ndarray:
        """The opponent moves in ``games``; returns (N,) its actions (-1 where it did not move)."""
        replies = np.full(self.num_envs, -1, np.int64)
        g = np.flatnonzero(games)
        if not len(g):
            return replies
        masks = batch_rules.masks(self.boards[g])  # absolute frame
        if self.opponent is None:  # one draw per game, not per action
            replies[g] = batch_rules.random_legal(masks, self.np_random)
        else:
            replies[g] = self._checked_replies(g, masks)
        self._play(replies >= 0, replies)
        return replies

    def _checked_replies(self, g: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The opponent policy's actions for the games ``g`` (legal ``masks``), each an integer
        action legal in its game, else IllegalMoveError naming the first bad one's game."""
        if self.batched_opponent:
            reply = self.opponent(self.boards[g].copy(), masks.copy(), self.np_random)
            chosen = np.asarray(reply, dtype=object if isinstance(reply, (list, tuple)) else None)
            if chosen.shape != (len(g),):
                raise IllegalMoveError(f"the batched opponent returned shape {chosen.shape} for {len(g)} games")
            if chosen.dtype.kind not in "iu":  # floats, bools, a list's items (numpy reads True as 1): each checked
                chosen = chosen.tolist()
        else:
            chosen = []
            for i, m in zip(g, masks):
                rng = self._game_rng(int(i))
                self._rng_undo.append((rng, rng.bit_generator.state))
                chosen.append(self.opponent(self._board(i), m.view(np.int8).copy(), rng))
        if isinstance(chosen, list):
            for k, a in enumerate(chosen):
                try:
                    a = integral(a, "action")
                except HighwayError:
                    raise IllegalMoveError(f"game {int(g[k])}: the opponent policy returned {a!r}, not an action "
                                           "int") from None
                chosen[k] = a if 0 <= a < NUM_ACTIONS else -1  # -1: named below, as out of range
            chosen = np.asarray(chosen)
        out = np.flatnonzero((chosen < 0) | (chosen >= NUM_ACTIONS))
        if len(out):
            raise IllegalMoveError(f"game {int(g[out[0]])}: the opponent policy returned an action outside "
                                   f"0..{NUM_ACTIONS - 1}")
        actions = chosen.astype(np.int64)
        illegal = np.flatnonzero(~masks[np.arange(len(g)), actions])
        if len(illegal):
            k = int(illegal[0])
            self._raise_illegal(int(g[k]), int(actions[k]), int(actions[k]), "the opponent policy's")
        return actions

    def _final_paths(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N,) cheapest A- and B-paths of the full boards in ``games`` (0 elsewhere)."""
        min_a = np.zeros(self.num_envs, np.int64)
        min_b = np.zeros(self.num_envs, np.int64)
        g = np.flatnonzero(games)
        if len(g):
            a, b = np.zeros(len(g), np.int64), np.zeros(len(g), np.int64)
            batch_rules.final_min_paths(self.boards[g], a, b)
            min_a[g], min_b[g] = a, b
        return min_a, min_b

    # -- what the agent sees
    def _observations(self) -> dict[str, np.ndarray]:
        """The agent's planes (its frame, as highway_v0's) and mask in ``frame`` (zero once ended)."""
        return observations(self.boards, self.frame, self._me)  # the agent moves wherever a move is left

    def _infos(self, plies: np.ndarray, replies: np.ndarray, games: np.ndarray, ended: np.ndarray, min_a=None,
               min_b=None) -> dict:
        """The infos of ``games`` (every game after a step, the reset ones after a reset)."""
        infos = {"ply": plies, "_ply": games.copy(),
                 "opponent_action": replies, "_opponent_action": games.copy()}
        if ended.any():
            for key, values in (("min_a", min_a), ("min_b", min_b), ("margin", min_b - min_a)):
                infos[key], infos[f"_{key}"] = values, ended.copy()
        return infos

