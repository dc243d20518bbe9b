#!/usr/bin/env python
"""Benchmark Highway agents against the perfect player (the exact solver).

    python evaluate.py --agent az:checkpoints/highway_az/latest.pt --agent greedy --agent random --games 20
    python evaluate.py --agent az:agents/pretrained/highway_az.pt --agent mcts:200 --games 100 --out results/x
    python evaluate.py ... --json          # also print one JSON object (per agent: accuracy,
                                           # as_A_vs_perfect, as_B_vs_perfect, elo, ...)

Agents are specs for ``agents.make_agent``: random, greedy, mcts:N, az:PATH[:SIMS], perfect[:TIEBREAK];
or your own policy: ``module:attr`` (an importable callable on PettingZoo observation dicts, an
``agents.Agent``, an SB3 model, an OpenSpiel bot, or a zero-argument factory returning one; --frame
and --batched say how it takes observations) or ``sb3:PATH.zip`` (a saved sb3-contrib MaskablePPO or
SB3 PPO model).
Those are graded in this process by ``highway_env.benchmark.evaluate`` (same measures but set v2's
accuracy, 'acc v2': '-'; not in the round robin).
Per agent it measures:

- move accuracy (share of value-keeping moves) on the critical positions of the held-out position
  set (highway_env/data/positions_v1.npz, solver-labelled; its report part, disjoint from the
  selection part the trainer grades checkpoints on), by ply and side; margin given away; and on
  every critical position of set v2 (highway_env/data/positions_v2.npz, from strong play) as 'acc v2';
- full games from the empty board as A against the perfect B and as B against the perfect A;
- conversion: from set positions its side wins, the share it wins against perfect defence;
- margin: the margin-optimal rate (share of moves keeping the exact margin, on the set's positions
  labelled with margins) and, in games as B against ``perfect:margin``, the share held to the game
  value (A wins by 2);
- a round robin between the agents: Elo with bootstrap 95 % confidence intervals;
- with --reply-tree: the whole tree after the agent's first move as A, one game per B reply at ply 1
  (225) against the perfect B with each tie-break of --reply-tree-tiebreaks: W/D/L and mean margin.

Output in --out (default results/eval-<NAME or time>, NAME from --name): report.md, summary.json,
agents.csv, accuracy_by_ply.csv, PNG plots, and tasks/ (per-task results: rerun the same command
after an interrupt and finished tasks are skipped). Work runs on --workers processes, or as tasks on a Ray
cluster with --ray-address, with a progress bar, and is reproducible with --seed:

    python evaluate.py --agent az:agents/pretrained/highway_az.pt --reply-tree --ray-address HEAD:6379

The two-player sibling games are measured against their own exact solvers with --game:

    python evaluate.py --game blackpath --agent random --agent greedy --agent mcts:50 --json
    python evaluate.py --game jumping --agent az:checkpoints/jumping_az/latest.pt --agent random

    python evaluate.py --game blackpath --game-config '{"rows": 5, "cols": 5}' --agent mcts:50
    python evaluate.py --game examples.tictactoe_game:TicTacToeGame --agent az:checkpoints/tictactoe_az/best.pt

There (default boards: Black Path 4x4 from A1:top, Jumping n = 4; another with --game-config, or
the board of the az: agents' checkpoints) each agent gets move accuracy on
--positions positions sampled from varied play and labelled by the solver on the fly, --games games
per side against the perfect player (a best-value move, random among ties) and the round robin Elo;
the same outputs (no conversion, no position set, no task cache; runs in this process). Your own
game (``--game package.module:Class``) is graded the same way when its ``perfect_player`` gives
move values (see examples/tictactoe_game.py). See highway_env/evaluation/siblings.py.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from highway_env.atomic_files import check_writable
from highway_env.cli_args import (OneLineErrorParser, check_run_name, non_negative_int, number, path_arg,
                                  positive_float, positive_int)
from highway_env.ray_tasks import add_ray_task_flags

QUICK = {"games": 10, "positions": 600, "conversion": 20}
# The defaults of the flags that --quick or a note depends on: their parser default is None, so that
# a flag given (also abbreviated, --fra A) is told from one left out
DEFAULTS = {"games": 20, "positions": 1500, "conversion": 40, "frame": "absolute", "batched": False}
REPLIES = 225  # B's legal replies to any first move of A on the empty board (15 numbers x 15 cells)
TREE_CHUNK = 15  # ply-1 tree games per task
# The flags' caps (argparse types from highway_env.cli_args, as in every command): above them a run
# would take years (building the task list alone) or overflow
MAX_GAMES = 100_000  # per side and agent, or per round-robin pair: more would take years
MAX_WORKERS = 1024
MAX_POSITIONS = 1_000_000  # a sibling game draws from up to 20 games per position asked for


def build_parser() -> argparse.ArgumentParser:
    from agents.games import GAMES
    from highway_env.solver.player import EVALUATION_OPPONENT as PERFECT
    from highway_env.solver.player import TIEBREAKS

    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", default="highway", metavar="GAME",
                   help=f"highway (default) or another of {', '.join(g for g in GAMES if g != 'highway')} (the "
                        "two-player sibling games, measured against their exact solvers; the Highway-only "
                        "options are then ignored), or your own "
                        "game as 'package.module:Class' (an agents.game.Game whose perfect_player gives "
                        "move values, graded as the sibling games)")
    p.add_argument("--game-config", default="", metavar="JSON",
                   help="options of the sibling game as a JSON object, e.g. '{\"rows\": 5, \"cols\": 5}' "
                        "(blackpath: rows, cols, start; jumping: n). Default: the board of the first az: "
                        "agent's checkpoint, else the game's default (Black Path 4x4 from A1:top, Jumping n = 4); "
                        "an az: agent trained on another board is an error naming both")
    p.add_argument("--label-from-ply", type=non_negative_int, default=0, metavar="K",
                   help="sibling games: grade only positions at ply K or later (the moves before K random), "
                        "and skip the value from the start: for boards the solver labels late but cannot solve "
                        "from the start (Jumping n >= 6 needs K >= n*n - 17 and --games 0, see the README) "
                        "(default: %(default)s)")
    p.add_argument("--agent", action="append", metavar="SPEC", default=[],
                   help="an agent to evaluate (repeat the flag for several): random, greedy, mcts:N, "
                        f"az:PATH[:SIMS], perfect[:{'|'.join(TIEBREAKS)}]; or your own policy, graded in this "
                        "process: module:attr (an importable policy, model, bot or zero-argument factory; "
                        "see --frame, --batched) or sb3:PATH.zip (a saved MaskablePPO or PPO model)")
    p.add_argument("--frame", default=None, choices=("absolute", "player"),
                   help=f"observation/action frame of module:attr policies (default: {DEFAULTS['frame']}; see "
                        "highway_env.benchmark; OpenSpiel bots always play python_highway states)")
    p.add_argument("--batched", action="store_true", default=None,
                   help="module:attr policies take stacked observations and return N actions")
    p.add_argument("--games", type=number(int, 0, MAX_GAMES), default=None,
                   help="games from the empty board against the perfect player, per side (as A and as B) "
                        f"and per agent (default: {DEFAULTS['games']})")
    p.add_argument("--rr-games", type=number(int, 0, 2 * MAX_GAMES), default=None,
                   help="round-robin games per pair of agents, colours alternating (default: 2 x --games)")
    p.add_argument("--positions", type=number(int, 0, MAX_POSITIONS), default=None,
                   help="positions sampled from the set's report part (the part training never looks at; "
                        "see highway_env/evaluation/position_set.py) for move accuracy and margin loss; 0 = all "
                        f"(default: {DEFAULTS['positions']})")
    p.add_argument("--conversion", type=number(int, 0, MAX_POSITIONS), default=None,
                   help="won positions (for the side to move) sampled from the set and played out "
                        f"against perfect defence, per agent (default: {DEFAULTS['conversion']})")
    p.add_argument("--quick", action="store_true",
                   help=f"small smoke-test sizes ({', '.join(f'--{k} {v}' for k, v in QUICK.items())}) "
                        "unless given explicitly")
    p.add_argument("--workers", type=number(int, 1, MAX_WORKERS), default=os.cpu_count() or 1,
                   help="worker processes (default: all cores, %(default)s); 1 = in this process. With "
                        "--ray-address: the CPUs of the Ray instance 'local' starts, else unused (the cluster's "
                        "CPUs decide how many tasks run at once)")
    p.add_argument("--ray-address", default="", metavar="ADDR",
                   help="run the tasks on this Ray cluster instead of local processes: host:port of the head "
                        "(ray start --head prints it), 'auto' (the cluster this machine belongs to) or 'local' "
                        "(a Ray instance started here); needs pip install ray. Results, task cache and resume "
                        "are as without Ray: the same seed gives the same summary. The position sets and az: "
                        "checkpoints go to the nodes through Ray's object store (no shared filesystem needed); "
                        "--store opens on each node (there 'default' is that node's own store: it caches "
                        "solved positions, and results do not depend on it); module:attr and sb3: policies "
                        "are still graded in this process. A task lost with its worker or node is run again "
                        "elsewhere; a cluster left without any node that can run a task for --ray-node-wait "
                        "seconds stops with an error (rerun the command to resume). Highway only")
    add_ray_task_flags(p)
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of every sample and game (default: %(default)s)")
    p.add_argument("--out", default=None, help="output directory (default: results/eval-<NAME or time>, for "
                                               "another --game results/eval-<its Game.name>-<NAME or time>); "
                                               "reuse it to resume an interrupted run")
    p.add_argument("--name", default=None, help="run name for the default --out and the report title: one "
                                                "folder name (no '/')")
    p.add_argument("--positions-file", default=None, type=path_arg(),
                   help="position set .npz (default: highway_env/data/positions_v1.npz)")
    p.add_argument("--positions-v2", default="default", metavar="FILE", type=path_arg("'default' or 'none'"),
                   help="second position set, critical positions from strong play (set v2, "
                        "python -m highway_env.evaluation.positions build --strong): every position graded, "
                        "accuracy reported beside v1's as 'acc v2'; 'default' = highway_env/data/positions_v2.npz "
                        "if present, 'none' = skip (default: %(default)s)")
    p.add_argument("--perfect-tiebreak", default=PERFECT["tiebreak"], choices=TIEBREAKS,
                   help="tie-break of the perfect opponent among value-keeping moves (default: %(default)s)")
    p.add_argument("--perfect-budget-nodes", type=non_negative_int, default=PERFECT["budget_nodes"],
                   help="solver nodes per move for the perfect player's exact tie-break before it falls "
                        "back to another value-keeping move; counted in nodes so that the figures are the "
                        "same on any machine under any load; 0 = --perfect-budget seconds instead "
                        "(default: %(default)s)")
    p.add_argument("--perfect-budget", type=positive_float, default=PERFECT["budget"],
                   help="seconds per move for the tie-break when --perfect-budget-nodes is 0 (default: %(default)s)")
    p.add_argument("--perfect-exact-from-ply", type=non_negative_int, default=PERFECT["exact_from_ply"],
                   help="from this ply on the perfect player's moves are always proven value-keeping, "
                        "however long the solver takes; earlier, positions not in the opening book get "
                        "--perfect-early-budget-nodes solver nodes. The shipped book answers every early position of "
                        "games from the empty board within seconds, so the default is 0: every move exact; "
                        "raise it for games from other starts (default: %(default)s)")
    p.add_argument("--perfect-early-budget-nodes", type=non_negative_int, default=PERFECT["early_budget_nodes"],
                   help="solver nodes per early move (see --perfect-exact-from-ply); 0 = "
                        "--perfect-early-budget seconds instead (default: %(default)s)")
    p.add_argument("--perfect-early-budget", type=positive_float, default=PERFECT["early_budget"],
                   help="seconds per early move when --perfect-early-budget-nodes is 0 (default: %(default)s)")
    p.add_argument("--store", default="default", type=path_arg("'default' or 'none'"),
                   help="solver position store shared by the workers and kept between runs: a path, "
                        "'default' (the solver's default store) or 'none' (default: %(default)s)")
    p.add_argument("--reply-tree", action="store_true",
                   help="also play the ply-1 tree: the agent picks its first move as A on the empty board, then "
                        "one game per legal B reply (225) is played out against the perfect B, per tie-break of "
                        "--reply-tree-tiebreaks; reported as 'tree W/D/L' (all games won = no B reply refutes it)")
    p.add_argument("--reply-tree-tiebreaks", default="hardest,margin", metavar="TB[,TB...]",
                   help=f"tie-breaks of the perfect B in the ply-1 tree, comma-separated, from "
                        f"{', '.join(TIEBREAKS)} (default: %(default)s)")
    p.add_argument("--reply-tree-max", type=non_negative_int, default=0, metavar="N",
                   help="play only the first N of B's replies (in action order), for smoke tests; 0 = all "
                        "(default: %(default)s)")
    p.add_argument("--rr-perfect", action="store_true", help="also put the perfect player in the round robin")
    p.add_argument("--chunk", type=positive_int, default=5, help="games per task (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on stdout "
                                                       "(the table and messages go to stderr)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


class UsageError(Exception):
    pass


def validate(args) -> None:
    unused = [f"--{k}" for k in ("batched", "frame") if getattr(args, k) is not None]  # given, maybe abbreviated
    for k, v in DEFAULTS.items():  # what was not given: --quick's size, else the default
        if getattr(args, k) is None:
            setattr(args, k, QUICK[k] if args.quick and k in QUICK else v)
    from agents.games import game_key

    try:  # a shipped name, a registered one or 'module:Class'; refs to shipped games become their names
        args.game = game_key(args.game)
    except ValueError as e:
        raise UsageError(f"unknown --game {args.game!r}: {e}") from None
    if args.out == "":  # Path('') is '.': the files would land here, not where the default puts them
        raise UsageError("--out '' is empty: give a folder (leave --out out for results/eval-NAME)")
    if args.name is not None:  # it names the default --out's folder: '../x' would write elsewhere
        try:
            check_run_name(args.name, "--name")
        except ValueError as e:
            raise UsageError(str(e)) from None
    if not args.agent:
        raise UsageError("give at least one --agent SPEC (e.g. --agent greedy)")
    if args.rr_games is None:
        args.rr_games = 2 * args.games
    from highway_env.solver.player import TIEBREAKS

    tbs = [t.strip() for t in args.reply_tree_tiebreaks.split(",")]
    bad = [t for t in tbs if t not in TIEBREAKS] or ([] if len(set(tbs)) == len(tbs) else tbs)
    if bad or not tbs:
        raise UsageError(f"bad --reply-tree-tiebreaks {args.reply_tree_tiebreaks!r}: give distinct tie-breaks "
                         f"from {', '.join(TIEBREAKS)}, comma-separated")
    args.reply_tree_tiebreaks = tbs
    validate_ray(args)
    if len(set(args.agent)) != len(args.agent):
        raise UsageError(f"an agent is given twice: {args.agent}")
    # build every agent once here: a bad spec or a missing checkpoint fails now, naming it
    from agents.checkpoint import CheckpointError
    from agents.registry import AgentSpecError, get_game, make_agent
    from highway_env.benchmark.policy import as_agent, is_policy_spec, load_spec_object

    built = {}  # spec -> the agent game_options loaded already (a checkpoint is loaded once)
    options = game_options(args, built)
    try:
        game = get_game(args.game, options)
    except ValueError as e:  # a user's game whose constructor raises
        raise UsageError(f"--game: {e}") from None
    args.game_name = game.name  # for the default --out ('module:Class' is no folder name)
    if args.game != "highway":
        check_perfect_reach(args, game)
    args.policies = {}  # spec -> loaded policy object, graded by highway_env.benchmark
    for spec in args.agent:
        try:
            if is_policy_spec(spec):
                if args.game != "highway":
                    raise ValueError("module:attr and sb3: policies are graded on highway only")
                args.policies[spec] = load_spec_object(spec)
                as_agent(args.policies[spec], frame=args.frame, batched=args.batched)  # TypeError: not a policy
            elif spec.split(":")[0] == "perfect" and args.game == "highway":
                from highway_env.solver.player import PerfectPlayer

                PerfectPlayer.from_spec(spec.split(":")[1:], game, 0)  # validates the tie-break (cheap)
            elif spec not in built:
                make_agent(spec, game, seed=0)
        except (AgentSpecError, CheckpointError, OSError, ValueError, TypeError, ImportError) as e:
            # ImportError: an OpenSpiel bot without the openspiel extra
            raise bad_spec(spec, e) from None
    ignored = unused if not args.policies else []
    if ignored:  # a user who meant their policy to be graded should learn it was not one
        print(f"note: {' and '.join(ignored)} only apply to module:attr and sb3: policies, and no --agent is one",
              file=sys.stderr)


def bad_spec(spec: str, e: Exception) -> UsageError:
    """The usage error for agent ``spec`` that failed with ``e``, named once (make_agent's own
    errors already start with "bad agent spec 'SPEC'")."""
    from agents.registry import spec_error_message

    return UsageError(spec_error_message(spec, e))


def validate_ray(args) -> None:
    """``args.ray``: None without --ray-address, else the address, the extra runtime_env and the
    node wait (:func:`run_on_ray`); a bad runtime_env, a Ray option without --ray-address or an
    address where no head answers fails now."""
    from highway_env.core import HighwayError
    from highway_env.ray_address import check_reachable
    from highway_env.ray_tasks import ray_task_settings

    try:
        env, node_wait = ray_task_settings(args)
        if args.ray_address:
            check_reachable(args.ray_address)  # now, not after the tasks are built
    except HighwayError as e:
        raise UsageError(str(e)) from None
    if args.ray_address and args.game != "highway":
        raise UsageError(f"--ray-address is for --game highway (--game {args.game} runs in this process)")
    args.ray = {"address": args.ray_address, "runtime_env": env, "node_wait": node_wait} if args.ray_address else None


def game_options(args, built: dict) -> dict:
    """The game's options: --game-config, else those of the first az: agent's checkpoint (so
    ``--game blackpath --agent az:5x5.pt`` plays 5x5; that agent is put in ``built``), else the
    defaults; set as ``args.game_options``. A checkpoint gives only its rules options: its view
    options (a margin-valued target) are its agent's own and must not change the baselines' game."""
    from agents.checkpoint import CheckpointError
    from agents.games import class_ref, game_key
    from agents.games import game_options as parse
    from agents.registry import AgentSpecError, make_agent

    if args.game == "highway":
        if args.game_config.strip():
            raise UsageError("--game-config is for --game blackpath|jumping (a Highway az: checkpoint "
                             "carries its own observation options)")
        args.game_options = {}
        return {}
    try:
        opts = parse(args.game, args.game_config)
    except ValueError as e:
        raise UsageError(f"bad --game-config: {e}") from None
    if not args.game_config.strip():
        for spec in args.agent:
            if spec.split(":")[0] == "az":
                try:
                    built[spec] = make_agent(spec, None, seed=0)
                except (AgentSpecError, CheckpointError, OSError, ValueError) as e:
                    raise bad_spec(spec, e) from None
                trained = built[spec].game
                if game_key(class_ref(type(trained))) != args.game:
                    raise UsageError(f"bad agent spec {spec!r}: an agent of {trained.name!r}, not of {args.game!r}")
                opts = trained.rules_config()
                break
    args.game_options = opts
    return opts


def check_perfect_reach(args, game) -> None:
    """A sibling game must name a perfect player that labels moves (its ``move_values``). It may be
    exact only from some ply on (a board too large to solve from the start): then only positions
    from that ply can be graded, and no game against it or with it can be played."""
    from agents.registry import AgentSpecError, perfect_first_exact_ply
    from highway_env.evaluation.siblings import move_values_fn

    try:
        move_values_fn(game)
        first = perfect_first_exact_ply(game)
    except (AgentSpecError, ValueError) as e:
        raise UsageError(f"--game {args.game}: {e}; evaluate.py grades a game against its perfect player") from None
    if args.label_from_ply and game.plies(game.initial_states(1)) is None:
        raise UsageError(f"--label-from-ply needs a game that counts plies ({game.name!r} has no Game.plies)")
    bad = [f"--label-from-ply {args.label_from_ply}" if args.label_from_ply < first else "",
           f"--games {args.games}" if args.games else "", "--rr-perfect" if args.rr_perfect else ""]
    if first and any(bad):
        raise UsageError(f"{args.game} {game.config()}: the perfect player is exact only from ply {first} on "
                         f"here (it cannot solve the start), got {', '.join(b for b in bad if b)}: give "
                         f"--label-from-ply {first} or more, --games 0 and no --rr-perfect")


def perfect_options(args) -> dict:
    """The perfect opponent's options from the command line (``highway_env.evaluation.tasks.get_agent``)."""
    return {"budget": args.perfect_budget, "budget_nodes": args.perfect_budget_nodes,
            "exact_from_ply": args.perfect_exact_from_ply, "early_budget": args.perfect_early_budget,
            "early_budget_nodes": args.perfect_early_budget_nodes,
            "store": {"default": True, "none": None}.get(args.store, args.store)}


# Opponent options a task's seed leaves out (its cache key keeps them): the node budgets, so that the
# games are those of time budgets (the shipped runs'), and the margin floor, so that the games are those
# against the A that kept only 2 (a floor changes A's moves only after B gave a point: the held games of
# the two As compare one by one).
_UNSEEDED = ("budget_nodes", "early_budget_nodes", "margin_floor")


def make_tasks(args, ps, out_dir: Path, ps2=None) -> tuple[list, dict]:
    from highway_env.evaluation.tasks import digest, file_digest, slug, task_files

    perfect = dict(perfect_options(args), tiebreak=args.perfect_tiebreak)
    from highway_env.benchmark.run import sample_plan
    from highway_env.solver.player import MARGIN_FLOOR

    pfile = str(args.positions_file) if args.positions_file else None
    plan = sample_plan(ps, args.positions, args.conversion, args.seed)
    sample, conv = plan["sample"], plan["conversion"]
    v2_seed = v2_seed_name(args.positions_v2) if ps2 is not None else None  # hashes the file: once
    tasks = []
    content_digest = functools.cache(file_digest)  # each file read once

    def add(kind, name, opponent=perfect, seed_kw=None, **kw):
        pkey = {k: v for k, v in opponent.items() if k != "store"}
        key = digest({"kind": kind, "seed_root": args.seed, "perfect": pkey, **kw})
        seed_key = digest({"kind": kind, "seed_root": args.seed, **kw, **(seed_kw or {}),
                           "perfect": {k: v for k, v in pkey.items() if k not in _UNSEEDED}})
        t = {"kind": kind, "perfect": opponent, "positions_file": pfile, **kw}
        # the id also covers the content of the files the task reads (az: checkpoints, position sets):
        # a checkpoint trained further under the same path is a new task, not the old one's cached result
        files = {f: content_digest(f) for f in task_files(t)}
        t["id"] = f"{kind}-{slug(name)}-{digest({'key': key, 'files': files}) if files else key}"
        t["seed"] = [args.seed, int(seed_key, 16) % (2**31)]
        tasks.append(t)

    chunk_pos = 500
    for spec in registry_agents(args):
        for i in range(0, len(sample), chunk_pos):
            add("moves", spec, agent=spec, index=[int(x) for x in sample[i:i + chunk_pos]],
                set_version=ps.meta.get("version"))
        if ps2 is not None:  # set v2: every position, a yardstick beside v1
            for i in range(0, len(ps2), chunk_pos):
                add("moves", f"{spec}-v2", agent=spec, index=list(range(i, min(len(ps2), i + chunk_pos))),
                    set_version=ps2.meta.get("version"), positions_file=str(args.positions_v2), yardstick="v2",
                    seed_kw={"positions_file": v2_seed})
        for seat in (0, 1):
            for g0 in range(0, args.games, args.chunk):
                add("vs_perfect", f"{spec}-{'AB'[seat]}", agent=spec, seat=seat, g0=g0,
                    g1=min(args.games, g0 + args.chunk))
        for g0 in range(0, args.games, args.chunk):  # as B against the margin-maximising A
            # margin_book and margin_floor in the key: results cached before A's first moves came from
            # the margin book, or before A's fallback kept a point above the game's margin where it could,
            # are not reused (margin_floor says which A played; the player does not read it)
            add("vs_perfect", f"{spec}-B-margin", opponent=dict(perfect, tiebreak="margin", margin_book=True,
                                                                 margin_floor=MARGIN_FLOOR),
                agent=spec, seat=1, g0=g0, g1=min(args.games, g0 + args.chunk), purpose="held_to_value")
        if args.reply_tree:  # every chunk draws the same first move: the seed leaves the chunk out
            first_seed = int(digest({"kind": "reply_tree_first", "seed_root": args.seed, "agent": spec}), 16) % (2**31)
            n = REPLIES if not args.reply_tree_max else min(REPLIES, args.reply_tree_max)
            for tb in args.reply_tree_tiebreaks:
                for r0 in range(0, n, TREE_CHUNK):
                    add("reply_tree", f"{spec}-{tb}", opponent=dict(perfect, tiebreak=tb), agent=spec,
                        first_seed=first_seed, r0=r0, r1=min(n, r0 + TREE_CHUNK))
        for i in range(0, len(conv), args.chunk):
            add("conversion", spec, agent=spec, index=[int(x) for x in conv[i:i + args.chunk]],
                set_version=ps.meta.get("version"))
    rr = registry_agents(args) + ([f"perfect:{args.perfect_tiebreak}"] if args.rr_perfect else [])
    if len(rr) > 1:
        for i in range(len(rr)):
            for j in range(i + 1, len(rr)):
                step = 2 * args.chunk
                for g0 in range(0, args.rr_games, step):
                    add("match", f"{rr[i]}-vs-{rr[j]}", a=rr[i], b=rr[j], g0=g0, g1=min(args.rr_games, g0 + step))
    return tasks, {"plan": plan, "rr_agents": rr}


#: What seeds the tasks on the shipped set v2 in place of its path, so that every checkout and install
#: draws the same numbers: the path it had where the published figures were measured (a seed
#: constant now, never opened).
V2_SEED_NAME = "/work/main/highway_env/data/positions_v2.npz"


def v2_seed_name(path) -> str:
    """The name that seeds the tasks on set v2 ``path``: :data:`V2_SEED_NAME` for the shipped file
    (wherever it lies), else the file's content digest (a copy of a file seeds as the file does)."""
    from highway_env.evaluation.position_set import V2_PATH
    from highway_env.evaluation.tasks import file_digest

    digest = file_digest(path)
    return V2_SEED_NAME if digest == file_digest(V2_PATH) else "sha256:" + digest


def shown_path(path) -> str:
    """``path`` as a summary records it: a file of this package relative to the checkout (as v1's
    default is), so that a summary does not depend on where the package lies."""
    root = Path(__file__).resolve().parent
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return str(path)


def registry_agents(args) -> list[str]:
    """The agent specs run as tasks (the others are policies graded by highway_env.benchmark)."""
    return [a for a in args.agent if a not in getattr(args, "policies", {})]


def run_tasks(tasks, out_dir: Path, workers: int, progress: bool, ray: dict | None = None) -> dict:
    """Every task's result: from its cache file, else run on ``workers`` local processes, or as Ray
    tasks when ``ray`` is given (``{"address": ..., "runtime_env": ...}``, see :func:`run_on_ray`)."""
    import multiprocessing as mp

    from tqdm import tqdm

    from highway_env.evaluation.tasks import load_done, pool_worker_init, run_task, worker_init
    from highway_env.retrying_pool import RetryingPool

    results = {}
    todo = []
    for t in tasks:
        r = load_done(out_dir, t)
        if r is not None:
            results[t["id"]] = r
        else:
            todo.append(t)
    todo.sort(key=lambda t: -task_weight(t))
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc="evaluation tasks", unit="task",
               disable=not progress, file=sys.stderr)
    if todo:
        if ray is not None:
            run_on_ray(todo, out_dir, ray, workers, results, bar)
        elif workers > 1 and len(todo) > 1:
            # a RetryingPool, not multiprocessing.Pool, which waited for ever on a task whose worker was
            # killed (out of memory): the pool is rebuilt and the task runs again (seeded: same result)
            pool = RetryingPool(min(workers, len(todo)), pool_worker_init, (False,), mp_context=mp.get_context("spawn"),
                                what=lambda args: f"running evaluation task {args[0][0]['id']}",
                                hint="out of memory? try fewer --workers")
            try:
                for r in pool.imap_unordered(run_task, [(t, str(out_dir)) for t in todo]):
                    results[r["id"]] = r
                    bar.update(1)
            finally:
                pool.close(kill=True)  # at once, also on Ctrl-C (finished tasks are in their files)
        else:
            worker_init(torch_now=False)
            for t in todo:
                r = run_task((t, str(out_dir)))
                results[r["id"]] = r
                bar.update(1)
    bar.close()
    return results


def task_weight(task: dict) -> int:
    """A rough rank of a task's cost: the pool takes the heaviest first, so that the last tasks
    left, while the other workers idle, are short ones. A searching agent's (az:, mcts:) moves
    chunk searches hundreds of positions at once, the longest task of a run; the same chunk of a
    greedy or random agent is the shortest. The order decides nothing else: every task is seeded."""
    if task["kind"] == "moves":
        return 4 if task["agent"].split(":")[0] in ("az", "mcts") else 1
    return {"vs_perfect": 3, "conversion": 3, "match": 2, "reply_tree": 3}[task["kind"]]


# What one evaluation task may use at most, declared to Ray so that a node runs no more tasks than fit
# its memory: grading the shipped az: network (moves, games and conversions against the perfect
# player, its solver tables, a ply-1 tree chunk) in one process peaked at ~0.95 GB RSS (ru_maxrss).
EVAL_TASK_MEMORY = 1536 * 2**20


def run_on_ray(todo: list, out_dir: Path, ray: dict, workers: int, results: dict, bar) -> None:
    """The tasks ``todo`` as Ray tasks on the cluster at ``ray["address"]``, each retried when its
    worker or node is lost (a task is seeded: the same result anywhere); the files they read here
    (position sets, az: checkpoints) travel through the object store to a per-node cache, and each
    result is written here, atomically, as it arrives (an interrupted run resumes). ``workers``:
    the CPUs of the Ray instance that address 'local' starts."""
    from highway_env.evaluation.tasks import run_shipped, save_done, task_files
    from highway_env.ray_tasks import RayCluster, shipped_runtime_env

    # Ray prints its messages (a node lost, the workers' output) on stdout, where --json prints the
    # summary alone: they go to stderr
    with contextlib.redirect_stdout(sys.stderr):
        cluster = RayCluster(ray["address"], shipped_runtime_env(ray["runtime_env"]), noun="evaluation tasks",
                             fallback="evaluate without --ray-address", local_cpus=workers,
                             no_cpu_timeout=ray["node_wait"], kept=_kept_note(out_dir),
                             less_memory="fewer --workers (with --ray-address local)")
        pending: dict = {}  # Ray task -> task
        try:
            needs = [task_files(t) for t in todo]
            files = cluster.ship_files(f for paths in needs for f in paths)
            remote = cluster.task(run_shipped, memory=EVAL_TASK_MEMORY)
            for t, paths in zip(todo, needs):
                pending[remote.remote(t, {f: files[f] for f in paths})] = t
            while pending:
                for ref in cluster.wait(list(pending)):
                    t = pending.pop(ref)
                    r = cluster.get(ref, f"evaluation task {t['id']}", name_failures=True)
                    save_done(out_dir, t, r)
                    results[r["id"]] = r
                    bar.update(1)
        finally:
            # interrupted, the tasks still running are dropped, not cancelled (a cancel that races a
            # task's end aborts the driver in Ray 2.60, ray-project/ray#54846): they end with this job
            cluster.close()


def _kept_note(out_dir: Path) -> str:
    return f"finished tasks are kept in {out_dir}/tasks: rerun the same command to resume"


def summarize(args, ps, tasks, results, info, wall, ps2=None) -> dict:
    from highway_env.benchmark.run import held_to_value
    from highway_env.evaluation import metrics
    from highway_env.evaluation.elo import elo_with_ci
    from highway_env.evaluation.provenance import provenance

    plan = info["plan"]
    agents = {}
    played = []  # (kind, the perfect player's moves, unproven) of every task that played games
    for spec in registry_agents(args):
        a: dict = {}
        mine = [t for t in tasks if t.get("agent") == spec]
        done = [(t, results[t["id"]]) for t in mine]
        acts, acts2 = {}, {}
        for t, r in done:
            if t["kind"] == "moves":
                (acts2 if t.get("yardstick") == "v2" else acts).update(zip(t["index"], r["actions"]))
        if ps2 is not None:
            a["accuracy_v2"] = metrics.accuracy(ps2, np.array([acts2[i] for i in range(len(ps2))], np.int64))
        if len(plan["sample"]):
            sub = ps.subset(plan["sample"])
            actions = np.array([acts[int(i)] for i in plan["sample"]], np.int64)
            a["accuracy"] = metrics.accuracy(sub, actions)
            a["margin_loss"] = metrics.margin_loss(sub, actions)
        vs_perfect = [(t, r) for t, r in done if t["kind"] == "vs_perfect"]
        for seat, key in ((0, "as_A_vs_perfect"), (1, "as_B_vs_perfect")):
            games = [r["margins"] for t, r in vs_perfect if t["seat"] == seat and "purpose" not in t]
            a[key] = metrics.games_vs_perfect([m if seat == 0 else -m for ms in games for m in ms])
        held = [r["margins"] for t, r in vs_perfect if t.get("purpose") == "held_to_value"]
        a["as_B_vs_perfect_margin"] = held_to_value([m for ms in held for m in ms])
        conv = [(i, m) for t, r in done if t["kind"] == "conversion" for i, m in zip(r["index"], r["margins"])]
        a["conversion"] = metrics.conversion([m if ps.ply[i] % 2 == 0 else -m for i, m in conv])
        if args.reply_tree:
            a["reply_tree"] = reply_tree_summary(args, mine, results)
        played += [(t["kind"], r["perfect_moves"], r["unproven_perfect_moves"]) for t, r in done if "perfect_moves" in r]
        agents[spec] = a
    names = info["rr_agents"]
    pairs = []
    rr = {}
    for i, j in itertools.combinations(range(len(names)), 2):
        pair = [t for t in tasks if t["kind"] == "match" and (t["a"], t["b"]) == (names[i], names[j])]
        w = metrics.wdl([m for t in pair for m in results[t["id"]]["margins_for_a"]])
        rr[f"{names[i]} vs {names[j]}"] = w
        pairs.append((i, j, w["win"], w["draw"], w["loss"]))
    anchor = "random" if "random" in names else (names[0] if names else None)
    elo = elo_with_ci(names, pairs, anchor=anchor, seed=args.seed) if len(names) > 1 and args.rr_games else {}
    for spec in registry_agents(args):
        agents[spec]["elo"] = elo.get(spec)
    return {
        "config": {"agents": args.agent, "games": args.games, "rr_games": args.rr_games,
                   "positions": int(len(plan["sample"])), "conversion": int(len(plan["conversion"])),
                   "seed": args.seed, "workers": args.workers, "name": args.name,
                   "perfect_tiebreak": args.perfect_tiebreak,
                   "reply_tree_tiebreaks": args.reply_tree_tiebreaks if args.reply_tree else [],
                   **{f"perfect_{k}": v for k, v in perfect_options(args).items() if k != "store"}},
        "position_set": {"file": shown_path(args.positions_file or "highway_env/data/positions_v1.npz"),
                         "version": ps.meta.get("version"), "size": len(ps)},
        "position_set_v2": None if ps2 is None else {"file": shown_path(args.positions_v2),
                                                     "version": ps2.meta.get("version"), "size": len(ps2),
                                                     "critical": int(ps2.critical().sum())},
        "agents": agents, "round_robin": rr, "elo": elo, "elo_anchor": anchor,
        **metrics.perfect_moves(played), "wall_seconds": round(wall, 1),
        "provenance": provenance(),
    }


def reply_tree_summary(args, mine: list, results: dict) -> dict:
    """Per tie-break: the agent's first move, the replies played and W/D/L with the mean margin (A's side)."""
    from highway_env.evaluation import metrics

    out = {}
    for tb in args.reply_tree_tiebreaks:
        rs = [results[t["id"]] for t in sorted(mine, key=lambda t: t.get("r0", 0))
              if t["kind"] == "reply_tree" and t["perfect"]["tiebreak"] == tb]
        firsts = {r["first_move"] for r in rs}
        assert len(firsts) == 1, f"chunks of one ply-1 tree drew different first moves: {firsts}"
        margins = [m for r in rs for m in r["margins"]]
        out[tb] = {"first_move": firsts.pop(), "replies": [x for r in rs for x in r["replies"]],
                   **metrics.games_vs_perfect(margins)}
    return out


def grade_policies(args, summary: dict) -> None:
    """Grade the ``module:attr`` / ``sb3:`` policies with highway_env.benchmark (same measures but
    set v2, which the benchmark does not grade; same position sample and perfect opponent) and put them into ``summary`` in the order given."""
    from highway_env.benchmark import evaluate

    graded = {}
    for spec, policy in args.policies.items():
        r = evaluate(policy, frame=args.frame, batched=args.batched, positions=args.positions, games=args.games,
                     conversion=args.conversion, seed=args.seed, name=spec, progress=not args.no_progress,
                     margin_games=args.games, positions_file=args.positions_file,
                     perfect_tiebreak=args.perfect_tiebreak,
                     perfect_options=perfect_options(args))
        d = r.to_dict()
        graded[spec] = d["agents"][spec]
        summary["perfect_moves"] += d["perfect_moves"]
        summary["perfect_unproven_moves"] += d["perfect_unproven_moves"]
    summary["agents"] = {a: graded[a] if a in graded else summary["agents"][a] for a in args.agent}


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    try:
        validate(args)
        args.name = args.name or time.strftime("%Y%m%d-%H%M%S")
        out_dir = Path(args.out or (f"results/eval-{args.name}" if args.game == "highway"
                                    else f"results/eval-{args.game_name}-{args.name}"))
        try:
            check_writable(out_dir / "summary.json", "--out")
        except OSError as e:
            raise UsageError(str(e)) from None
        if args.game != "highway":
            return _main_sibling(args, out_dir)
        from highway_env.evaluation.position_set import V2_PATH, PositionSetError, load_positions

        if args.positions_v2 == "default":
            args.positions_v2 = V2_PATH if V2_PATH.exists() else "none"
        try:
            ps = load_positions(args.positions_file)
            ps2 = None if args.positions_v2 == "none" else load_positions(args.positions_v2)
        except PositionSetError as e:
            raise UsageError(str(e)) from None
        if args.store != "none":  # a bad store path is a usage error here, not a traceback in a worker
            from highway_env.solver.store import PositionStore, StoreError

            try:
                PositionStore(None if args.store == "default" else args.store).close()
            except StoreError as e:
                raise UsageError(str(e)) from None
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    tasks, info = make_tasks(args, ps, out_dir, ps2)
    from highway_env.cli_args import Terminated, sigterm_as_interrupt
    from highway_env.ray_tasks import RayClusterError
    from highway_env.retrying_pool import WorkerLostError

    try:
        with sigterm_as_interrupt():
            results = run_tasks(tasks, out_dir, args.workers, not args.no_progress, args.ray)
    # the cluster lost every CPU node, a task lost or failed on its node, no ray; local workers that keep dying
    except (RayClusterError, WorkerLostError) as e:
        if not getattr(e, "reported", False):  # this machine's Ray node lost: said when it was seen
            print(f"error: {e}; {_kept_note(out_dir)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (a batch system's stop)
        print(f"\ninterrupted{' by SIGTERM' if isinstance(e, Terminated) else ''}: finished tasks are kept in "
              f"{out_dir}/tasks; rerun the same command to resume", file=sys.stderr)
        return 143 if isinstance(e, Terminated) else 130
    summary = summarize(args, ps, tasks, results, info, time.monotonic() - t0, ps2)
    try:
        grade_policies(args, summary)
    except KeyboardInterrupt:
        print("\ninterrupted while grading a module:attr / sb3: policy (those are not cached); the tasks of "
              f"the other agents are kept in {out_dir}/tasks", file=sys.stderr)
        return 130
    except ValueError as e:  # the policy returned a bad action (PolicyError) or failed to load
        print(f"error: {e}", file=sys.stderr)
        return 2
    summary["wall_seconds"] = round(time.monotonic() - t0, 1)
    return write_outputs(args, out_dir, summary)


def _main_sibling(args, out_dir: Path) -> int:
    """``--game blackpath|jumping|module:Class`` (see highway_env/evaluation/siblings.py)."""
    from highway_env.evaluation import siblings

    return write_outputs(args, out_dir, siblings.evaluate(args), siblings.markdown)


def write_outputs(args, out_dir: Path, summary: dict, markdown=None) -> int:
    """The report files (report.md by ``markdown``, default Highway's) and the table on stdout; with
    --json the table goes to stderr and the summary, as one JSON object, to stdout."""
    from highway_env.evaluation import report

    plots = []
    if not args.no_plots:
        from highway_env.evaluation.plots import plot_all

        plots = plot_all(summary, out_dir)
    report.write_all(out_dir, summary, plots, markdown=markdown or report.markdown)
    stream = sys.stderr if args.json else sys.stdout
    print(report.table(summary), file=stream)
    print(f"report: {out_dir / 'report.md'}", file=stream)
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
