"""Training configuration: one flat dataclass, its help texts, JSON loading and validation.

train.py builds its command line from ``TrainConfig``'s fields (``--hidden 256`` sets ``hidden``),
so every option has exactly one definition and one help text, here.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from agents.games import GAMES
from agents.mcts import ConfigError, SearchConfig
from agents.net_config import NetConfig
from highway_env.cli_args import MAX_NODE_LIMIT, MAX_SIMULATIONS, MAX_TIME_LIMIT, check_run_name
from highway_env.core import HighwayError
from highway_env.ray_tasks import (NODE_WAIT_HELP, NODE_WAIT_SECONDS, RUNTIME_ENV_HELP, check_ray_only,
                                   runtime_env_from_text)

MAX_THREADS = 256
MAX_LOCAL_WORKERS = 1024
# An iteration's chunks are planned on the driver, one task each, at most one per game (more workers
# than games give one game a chunk): 100000 tasks take ~100 MB and seconds to build. Far more games
# (10**9, or 10**9 Ray workers with as many games) would fill the driver's memory before any self-play.
MAX_GAMES_PER_ITER = 100_000
# Games an evaluation plays against each opponent, at once in one arena: as evaluate.py's --games.
# 10**20 would fail deep in numpy ("Maximum allowed size exceeded") after the first iteration.
MAX_EVAL_GAMES = 100_000


def _f(default, help: str):
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    # -- run and budget
    run: str = _f("", "run name, one folder name (no '/'): files go to OUT_DIR/RUN/ (latest.pt, best.pt, "
                         "log.csv, tb/); '' = the game's name and '_az' (highway_az, jumping_az; for "
                         "'package.module:Class', class_az in lower case); --resume finds the run by the "
                         "same name, so give it the same --game or --run")
    out_dir: str = _f("checkpoints", "parent directory of the run directories")
    game: str = _f("highway", f"game to train: {', '.join(GAMES)}, a name added with "
                              "agents.register_game, or your own agents.game.Game subclass as "
                              "'package.module:Class' (imported on use; checkpoints store the reference)")
    game_obs: str = _f("", "the game's observation variant ('' = its default; highway: 'features' "
                           "(one-hot planes + path-bound features, the default) or 'planes' (one-hot "
                           "numbers only, as checkpoints before the features))")
    game_config: str = _f("", "the game's options as a JSON object, e.g. '{\"rows\": 5, \"cols\": 5}' "
                              "(blackpath: rows, cols, start such as \"A1:top\"; jumping: n, value, "
                              "lookahead; highway: obs); stored in the checkpoints, so az:PATH, --resume and "
                              "evaluate.py rebuild the same game ('' = the game's defaults: blackpath 4x4 from "
                              "A1:top, jumping n = 4)")
    seed: int = _f(0, "master seed, 0..2**62: same seed and config (and a fixed --iterations) -> same result")
    minutes: float = _f(25.0, "wall-clock budget in minutes for the whole run, resumed parts included "
                              "(0 = no limit; then --iterations must be set)")
    iterations: int = _f(0, "stop after this many iterations (0 = until the time budget is spent); "
                            "also drives the LR schedule when set, which makes runs reproducible")
    # -- hardware
    workers: int = _f(1, "self-play worker processes besides the trainer (0 = all in-process); "
                         "the trainer also plays pending chunks while it waits")
    ray_address: str = _f("", "run the self-play workers on this Ray cluster ('auto' or host:port; "
                              "needs pip install '.[ray]')")
    ray_runtime_env: str = _f("", RUNTIME_ENV_HELP)
    ray_node_wait: float = _f(NODE_WAIT_SECONDS, NODE_WAIT_HELP)
    device: str = _f("cpu", "torch device of the learner ('cpu', 'cuda' or 'cuda:N'; self-play and "
                            "the background evaluation stay on CPU)")
    learner_threads: int = _f(0, "torch threads of the learner (0 = the cores not used by local "
                                 "self-play workers and the background evaluation, 1 to 8); "
                                 "self-play and evaluation always use 1 thread each")
    # -- network
    net: str = _f("mlp", "network kind: 'mlp' (fast on CPU) or 'resnet'")
    hidden: int = _f(256, "MLP width")
    layers: int = _f(3, "MLP hidden layers")
    channels: int = _f(64, "ResNet channels")
    blocks: int = _f(4, "ResNet residual blocks")
    # -- search and self-play
    search: str = _f("gumbel", "self-play search: 'gumbel' (Gumbel AlphaZero root, good with few "
                               "simulations) or 'puct' (AlphaZero with Dirichlet noise)")
    simulations: int = _f(32, "search simulations per move in self-play")
    max_considered: int = _f(16, "Gumbel: actions sampled at the root (sequential halving)")
    c_puct: float = _f(1.25, "PUCT exploration constant")
    dirichlet_alpha: float = _f(0.3, "PUCT: Dirichlet noise alpha at the root")
    dirichlet_eps: float = _f(0.25, "PUCT: weight of the root noise")
    temperature_moves: int = _f(4, "PUCT: moves of each game played with temperature 1 (then 0)")
    margin_weight: float = _f(0.1, "margin-aware search, in self-play and in the checkpoints' play search: "
                                   "it maximises (1 - w) * value + w * tanh(score head) with this w "
                                   "(in [0, 0.5); 0 = the value alone): a lost side loses by as little "
                                   "as it can, a winning side wins by as much as it can, the result first "
                                   "(0.1: measured in agents/README.md)")
    random_opening: int = _f(8, "self-play: games of the random-opening share start after 1..N "
                                "uniformly random moves (not recorded), so the replay keeps varied, "
                                "also lost and drawn, positions (0 = all games from the start)")
    random_opening_share: float = _f(0.5, "self-play: share of the games with a random opening, 0 to 1")
    games_per_iter: int = _f(256, f"self-play games per iteration (at most {MAX_GAMES_PER_ITER})")
    selfplay_batch: int = _f(128, "games played concurrently by one worker task (one chunk); "
                                  "games_per_iter is split into chunks of this size, or into one "
                                  "equal chunk per worker when that gives more chunks (so every "
                                  "worker is busy; set --workers to the Ray cluster's CPUs too)")
    # -- learning
    replay_size: int = _f(150_000, "replay buffer capacity in positions (oldest dropped first)")
    min_replay: int = _f(4000, "positions in the buffer before training starts")
    batch_size: int = _f(256, "training batch size, in positions (at most --replay-size)")
    replay_ratio: float = _f(4.0, "training samples drawn per new self-play position")
    lr: float = _f(2e-3, "initial learning rate (AdamW)")
    lr_final: float = _f(2e-4, "final learning rate (cosine decay over the run)")
    weight_decay: float = _f(1e-4, "AdamW weight decay")
    value_weight: float = _f(1.0, "weight of the value loss (MSE on the game result)")
    score_weight: float = _f(0.25, "weight of the auxiliary score (margin) loss; 0 disables it")
    augment: bool = _f(True, "augment training samples with the game's symmetries")
    # -- evaluation, checkpoints, logs
    eval_every: int = _f(10, "evaluate against the baselines every N iterations (0 = never)")
    eval_games: int = _f(64, f"games against each evaluation opponent (half with each side; at most {MAX_EVAL_GAMES})")
    eval_opponents: str = _f("random,greedy,mcts:300", "comma-separated agent specs to evaluate against "
                                                          "(add 'perfect' for the exact player: slower)")
    eval_simulations: int = _f(32, "search simulations of the trained agent in evaluations")
    eval_background: bool = _f(True, "evaluate in a process beside training, on a snapshot of the "
                                      "weights (the learner does not wait; the results fill the "
                                      "evaluated iteration's log row when ready); "
                                      "--no-eval-background evaluates in the loop")
    play_search: str = _f("puct", "search stored in the checkpoints' search config, what the agent "
                                  "plays with by default: 'puct' (measured better than Gumbel at a few "
                                  "hundred simulations) or 'gumbel' (as in self-play)")
    play_simulations: int = _f(400, "simulations of that search (az:PATH; az:PATH:SIMS overrides)")
    play_c_puct: float = _f(4.0, "PUCT exploration constant of that search")
    grade_every: int = _f(5, "grade the network every N iterations (and at the end) by its move accuracy "
                             "on solver-labelled critical positions the evaluation never reports on "
                             "(agents/grading.py; games without such a set skip it with a note; 0 = never)")
    grade_positions: int = _f(512, "critical positions in that fixed sample (at most the set's selection "
                                   "part: 998 for Highway)")
    grade_simulations: int = _f(32, "simulations of the self-play search (without noise) whose moves are "
                                    "graded, one batched network call per simulation for all positions "
                                    "(0 = the raw policy: one network call; it trails the search by ~25 "
                                    "points early in training)")
    best_by: str = _f("accuracy", "what picks best.pt: 'accuracy' (the solver grading; the evaluation "
                                  "score for games without a position set) or 'score' (the evaluation)")
    checkpoint_every: int = _f(5, "write latest.pt every N iterations (and at the end)")
    snapshot_minutes: str = _f("", "comma-separated training times in minutes (e.g. '1,5') at which to keep "
                                   "the network as RUN/snapshot_<M>min.pt (written at the end of the first "
                                   "iteration past that time; weights and play config only, as best.pt), "
                                   "for learning-curve research ('' = none)")
    save_replay: bool = _f(True, "store the replay buffer next to latest.pt so --resume is exact")
    tensorboard: bool = _f(True, "write TensorBoard logs to RUN/tb (skipped with a note if the "
                                 "tensorboard package is missing)")
    progress: bool = _f(True, "show a tqdm progress bar")

    # ------------------------------------------------------------------------------------------
    def validate(self) -> "TrainConfig":
        def check(name, ok, what):
            if not ok:
                raise ConfigError(f"{name} must be {what}, got {getattr(self, name)!r}")

        zero_ok = ("seed", "iterations", "workers", "min_replay", "temperature_moves", "eval_every",
                   "random_opening", "grade_every", "grade_simulations", "learner_threads")
        for f in fields(self):  # an int option is a count (>= 1 unless 0 means "none"), a float one >= 0
            v = getattr(self, f.name)
            if f.type in (int, "int"):  # a string under `from __future__ import annotations`
                minimum = 0 if f.name in zero_ok else 1
                check(f.name, isinstance(v, int) and not isinstance(v, bool) and v >= minimum,
                      f"an integer >= {minimum}")
            elif f.type in (float, "float"):
                check(f.name, isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                      and v >= 0, "a finite number >= 0")
        for name in ("simulations", "eval_simulations", "play_simulations", "grade_simulations"):
            check(name, getattr(self, name) <= MAX_SIMULATIONS,
                  f"at most {MAX_SIMULATIONS} (as mcts:N and az:PATH:SIMS)")
        check("lr", self.lr > 0, "> 0")
        # far more threads or local processes than any machine has cores would exhaust the process
        # table (a run hanging while it spawns workers)
        check("learner_threads", self.learner_threads <= MAX_THREADS, f"at most {MAX_THREADS}")
        check("workers", self.workers <= MAX_LOCAL_WORKERS or self.ray_address not in ("", "local"),
              f"at most {MAX_LOCAL_WORKERS} on this machine (more only on a Ray cluster: "
              "--ray-address auto or HOST:PORT)")
        check("games_per_iter", self.games_per_iter <= MAX_GAMES_PER_ITER,
              f"at most {MAX_GAMES_PER_ITER} (each game may be a self-play task of its own, planned on this machine)")
        check("eval_games", self.eval_games <= MAX_EVAL_GAMES, f"at most {MAX_EVAL_GAMES} (as evaluate.py's --games)")
        # beyond int64 the seed and the opening length overflow in torch and numpy (a traceback)
        check("seed", self.seed <= MAX_NODE_LIMIT, "at most 2**62 (as evaluate.py's --seed)")
        check("random_opening", self.random_opening <= MAX_NODE_LIMIT, "at most 2**62")
        check("batch_size", self.batch_size <= self.replay_size,
              f"<= replay_size ({self.replay_size}), the buffer it is drawn from")
        check("random_opening_share", self.random_opening_share <= 1, "in [0, 1]")
        check("replay_ratio", self.replay_ratio > 0, "> 0")
        check("minutes", self.minutes > 0 or self.iterations > 0,
              "> 0 unless --iterations is set (otherwise the run never ends)")
        self.checked_run()
        check("out_dir", self.out_dir != "", "a folder, not empty ('.' for this one)")  # '' would put the run elsewhere
        check("device", self.device == "cpu" or self.device.startswith("cuda"), "'cpu' or 'cuda[:N]'")
        self.ray_runtime_env_dict()
        check("ray_node_wait", 0 < self.ray_node_wait <= MAX_TIME_LIMIT, f"in (0, {MAX_TIME_LIMIT:.0f}] seconds")
        if self.ray_node_wait != NODE_WAIT_SECONDS:
            try:
                check_ray_only("ray_node_wait", self.ray_node_wait, self.ray_address, "ray_address")
            except HighwayError as e:
                raise ConfigError(str(e)) from None
        check("min_replay", self.min_replay <= self.replay_size, f"<= replay_size ({self.replay_size})")
        from agents.games import game_key
        from agents.registry import agent_kinds, get_game

        try:  # a name registered in this process becomes its reference: workers and checkpoints import it
            self.game = game_key(self.game)
        except ValueError as e:
            raise ConfigError(f"game: {e}") from None

        options = self.game_options()  # ConfigError naming a bad game_config key or value
        try:  # the game with its options once: game_obs must fit it
            get_game(self.game, options)
        except (TypeError, ValueError) as e:
            what = f"game_obs {self.game_obs!r} does not fit game {self.game!r}" if self.game_obs else "game"
            raise ConfigError(f"{what}: {e}") from e
        self.net_config(obs_shape=(1, 1, 1), num_actions=1)
        self.search_config()
        check("play_search", self.play_search in ("puct", "gumbel"), "'puct' or 'gumbel'")
        check("best_by", self.best_by in ("accuracy", "score"), "'accuracy' or 'score'")
        self.snapshot_times()
        check("best_by", self.best_by != "accuracy" or self.grade_every > 0,
              "'score' when grade_every is 0 ('accuracy' needs the grading)")
        self.play_search_config()
        check("eval_opponents", self.opponents() or not self.eval_every,
              "non-empty when eval_every > 0")
        for spec in self.opponents():
            if spec.partition(":")[0] not in agent_kinds():
                raise ConfigError(f"eval_opponents: unknown agent kind in {spec!r}; known: {agent_kinds()}")
        if self.eval_every:
            self.eval_agents()  # a bad spec fails now, not at the first evaluation after training
        return self

    def snapshot_times(self) -> list[float]:
        """The ``snapshot_minutes`` as sorted minutes; ConfigError naming a value that is not a
        finite number > 0."""
        if not isinstance(self.snapshot_minutes, str):
            raise ConfigError(f"snapshot_minutes must be a comma-separated string of minutes, "
                              f"got {self.snapshot_minutes!r}")
        times = []
        for part in filter(None, (p.strip() for p in self.snapshot_minutes.split(","))):
            try:
                m = float(part)
            except ValueError:
                m = math.nan
            if not (math.isfinite(m) and m > 0):
                raise ConfigError(f"snapshot_minutes: {part!r} is not a number of minutes > 0 "
                                  f"(in {self.snapshot_minutes!r})")
            times.append(m)
        return sorted(set(times))

    def eval_agents(self) -> list:
        """``[(spec, agent)]`` of the evaluation opponents; raises ConfigError naming a spec that
        cannot be built (bad argument, missing or corrupt checkpoint, a checkpoint of another game)."""
        from agents.checkpoint import CheckpointError
        from agents.registry import AgentSpecError, get_game, make_agent, spec_error_message

        game = get_game(self.game, self.game_options())
        out = []
        for spec in self.opponents():
            try:
                out.append((spec, make_agent(spec, game, seed=self.seed)))
            except (AgentSpecError, CheckpointError, ConfigError, ValueError, OSError) as e:
                raise ConfigError(f"eval_opponents: {spec_error_message(spec, e)}") from e
        return out

    def learner_thread_count(self) -> int:
        """``learner_threads``, or with 0 the cores this process may use less one per local
        self-play worker and one for the background evaluation, between 1 and 8 (a small network
        gains little from more, and threads that share a core with busy processes wait on each
        other: on a loaded 2-core machine 2 threads made the learner many times slower)."""
        if self.learner_threads:
            return self.learner_threads
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        local_workers = self.workers if self.ray_address in ("", "local") else 0
        evaluator = 1 if self.eval_every and self.eval_background else 0
        return max(1, min(8, cores - local_workers - evaluator))

    def ray_runtime_env_dict(self) -> dict | None:
        """The extra runtime_env given by ``ray_runtime_env`` ({} for '', None for 'none');
        ConfigError names a value that is not a JSON object."""
        try:
            return runtime_env_from_text(self.ray_runtime_env, "ray_runtime_env", address=self.ray_address,
                                         address_option="ray_address")
        except HighwayError as e:
            raise ConfigError(str(e)) from None

    def run_name(self) -> str:
        """``run``, or when it is '' the game's default: its short name (a class reference's class
        name, in lower case) and '_az', so that runs of different games do not share a folder."""
        if self.run:
            return self.run
        return self.game.rsplit(":", 1)[-1].rsplit(".", 1)[-1].lower() + "_az"

    def checked_run(self) -> str:
        """:meth:`run_name` if it is one folder name (the run's files go to OUT_DIR/RUN, never
        elsewhere), else ConfigError."""
        try:
            return check_run_name(self.run_name(), "run")
        except ValueError as e:
            raise ConfigError(str(e)) from None

    def game_options(self) -> dict:
        """Keyword options of the game (``agents.registry.get_game(game, options)``): ``game_config``
        with ``game_obs``; ConfigError names a key or value the game does not take."""
        from agents.games import game_options

        try:
            opts = game_options(self.game, self.game_config)
        except ValueError as e:
            raise ConfigError(f"game_config: {e}") from None
        if self.game_obs:
            if opts.get("obs", self.game_obs) != self.game_obs:
                raise ConfigError(f"game_obs {self.game_obs!r} and game_config's obs {opts['obs']!r} disagree")
            opts["obs"] = self.game_obs
        return opts

    def opponents(self) -> list[str]:
        return [s.strip() for s in self.eval_opponents.split(",") if s.strip()]

    def net_config(self, obs_shape, num_actions) -> NetConfig:
        return NetConfig(kind=self.net, hidden=self.hidden, layers=self.layers, channels=self.channels,
                         blocks=self.blocks, obs_shape=tuple(obs_shape),
                         num_actions=num_actions).validate()

    def search_config(self, simulations: int | None = None) -> SearchConfig:
        return SearchConfig(kind=self.search, simulations=simulations or self.simulations,
                            c_puct=self.c_puct, dirichlet_alpha=self.dirichlet_alpha,
                            dirichlet_eps=self.dirichlet_eps,
                            max_considered=self.max_considered,
                            margin_weight=self.margin_weight).validate()

    def play_search_config(self) -> SearchConfig:
        """The search a trained agent plays with by default (stored in its checkpoints)."""
        return SearchConfig(kind=self.play_search, simulations=self.play_simulations,
                            c_puct=self.play_c_puct if self.play_search == "puct" else self.c_puct,
                            max_considered=self.max_considered,
                            margin_weight=self.margin_weight).validate()

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict, source: str = "config") -> "TrainConfig":
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {unknown}; known: {sorted(known)}")
        cfg = cls()
        for k, v in d.items():
            if k == "game_config" and isinstance(v, dict):  # a --config file may give the object itself
                v = json.dumps(v)
            default = getattr(cfg, k)
            if isinstance(default, bool) and not isinstance(v, bool):
                raise ConfigError(f"{source}: {k} must be true or false, got {v!r}")
            if isinstance(default, float) and isinstance(v, int) and not isinstance(v, bool):
                v = float(v)
            if type(v) is not type(default):
                raise ConfigError(f"{source}: {k} must be {type(default).__name__}, got {v!r}")
            setattr(cfg, k, v)
        return cfg

    @classmethod
    def from_json(cls, path) -> "TrainConfig":
        try:
            d = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:  # ValueError: not JSON, or not UTF-8 text
            raise ConfigError(f"cannot read config file {str(path)!r}: {e}") from e
        except RecursionError:  # '[' * 100000: nested deeper than the parser goes
            raise ConfigError(f"config file {str(path)!r} is nested too deeply to be a config") from None
        if not isinstance(d, dict):
            raise ConfigError(f"config file {str(path)!r} must hold a JSON object")
        return cls.from_dict(d, source=str(path))
