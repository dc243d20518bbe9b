#!/usr/bin/env python
"""Random-play throughput: PettingZoo's connect_four_v3 and tictactoe_v3 (baselines) vs the Highway
AEC env, the Gymnasium env and the batched engine.

All play uniformly random legal moves, resets included, for about ``--seconds`` each:

* ``c4``:      ``pettingzoo.classic.connect_four_v3.env()`` (default wrappers), a random legal action
               from ``obs["action_mask"]`` each turn, ``env.step(None)`` for finished agents.
* ``ttt``:     ``pettingzoo.classic.tictactoe_v3.env()``, the same loop.
* ``aec``:     ``highway_env.highway_v0.env()``, the same loop.
* ``gym``:     ``gymnasium.make("highway_env/Highway-v0")`` (play as A against the default random
               opponent), a random legal action from ``obs["action_mask"]`` per ``env.step``; each
               step places the agent's piece and the opponent's reply.
* ``batched``: ``highway_env.batched.BatchedHighway(batch, autoreset=True)``,
               ``env.step(env.random_actions())`` in a loop (numba compile time is excluded).

"moves" are actions that place a piece (the AEC loops' ``step(None)`` calls for finished agents are
counted as steps but not as moves; the Gymnasium env's opponent replies are moves); the ratio column
is moves/s relative to connect_four. Numbers depend on the machine and on what else is running on
it; the loops are single-threaded. On a shared machine the load changes during a run, so the loops
are measured in ``--rounds`` alternating rounds (c4, ttt, aec, gym, c4, ...) of ``--seconds /
--rounds`` each, and each reports its best round (the one least slowed by other work); ``--json``
lists every round.

Run ``python bench/bench_env.py`` (about 5 x --seconds plus start-up), ``--json`` for a machine
readable result, ``--skip batched`` etc. to leave parts out, ``--clock cpu`` to time the loops in
CPU time (on a loaded machine the time other jobs take the core is then not counted; the batched
part is always timed by the wall clock). To compare with an older checkout, run this script with
``PYTHONPATH`` set to it: each run's ratio to connect_four is measured in that run.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np

from highway_env.cli_args import OneLineErrorParser, non_negative_int, positive_float, positive_int

PARTS = ("c4", "ttt", "aec", "gym", "batched")
#: --clock: wall time, or this process's CPU time (less moved by other jobs on a shared machine)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def rates(steps: int, moves: int, games: int, seconds: float) -> dict:
    """One loop's counts and per-second rates, the row every env's loop reports."""
    return {"steps": steps, "moves": moves, "games": games, "seconds": seconds,
            "steps_per_s": steps / seconds, "moves_per_s": moves / seconds}


def bench_aec(make_env, seconds: float, seed: int, clock=time.perf_counter) -> dict:
    """Random play in a PettingZoo AEC env for ~seconds of ``clock``; counts env.step calls, moves
    and games."""
    rng = np.random.default_rng(seed)
    env = make_env()
    steps = moves = games = 0
    env.reset(seed=seed)
    t0 = clock()
    deadline = t0 + seconds
    while True:
        for agent in env.agent_iter():
            obs, _rew, term, trunc, _info = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
                moves += 1
            env.step(action)
            steps += 1
        games += 1
        if clock() >= deadline:
            break
        env.reset()
    elapsed = clock() - t0
    env.close()
    return rates(steps, moves, games, elapsed)


def import_classic(name: str):
    """``pettingzoo.classic.<name>``; its module imports pygame at the top but only uses it to
    render, so where pygame is not installed a placeholder module stands in during the import (and
    is removed again, so nothing else sees it). Returns (module, note)."""
    import importlib

    try:
        import pygame  # noqa: F401
    except ImportError:
        import types

        sys.modules["pygame"] = types.ModuleType("pygame")
        try:
            module = importlib.import_module(f"pettingzoo.classic.{name}")
        finally:
            del sys.modules["pygame"]
        return module, "pygame not installed: placeholder used for the import (no rendering)"
    return importlib.import_module(f"pettingzoo.classic.{name}"), None


def bench_classic(name: str, seconds: float, seed: int, clock) -> dict:
    module, note = import_classic(name)
    result = bench_aec(module.env, seconds, seed, clock)
    if note:
        result["note"] = note
    return result


def bench_c4(seconds: float, seed: int, clock) -> dict:
    return bench_classic("connect_four_v3", seconds, seed, clock)


def bench_ttt(seconds: float, seed: int, clock) -> dict:
    return bench_classic("tictactoe_v3", seconds, seed, clock)


def bench_highway_aec(seconds: float, seed: int, clock) -> dict:
    from highway_env import highway_v0

    return bench_aec(highway_v0.env, seconds, seed, clock)


def bench_gym(seconds: float, seed: int, clock) -> dict:
    """Random play as A in ``gymnasium.make("highway_env/Highway-v0")`` against its default random
    opponent for ~seconds; counts env.step calls, moves (the agent's and the replies) and games."""
    import gymnasium

    import highway_env  # noqa: F401  (registers the id)

    rng = np.random.default_rng(seed)
    env = gymnasium.make("highway_env/Highway-v0")
    steps = moves = games = 0
    obs, _info = env.reset(seed=seed)
    t0 = clock()
    deadline = t0 + seconds
    while True:
        done = False
        while not done:
            legal = np.flatnonzero(obs["action_mask"])
            obs, _rew, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
            moves += 1 + (info["opponent_action"] >= 0)
            done = term or trunc
        games += 1
        if clock() >= deadline:
            break
        obs, _info = env.reset()
    elapsed = clock() - t0
    env.close()
    return rates(steps, moves, games, elapsed)


def bench_batched(seconds: float, seed: int, batch: int, parallel: bool) -> dict:
    from highway_env.batched import BatchedHighway

    env = BatchedHighway(batch, seed=seed, autoreset=True, parallel=parallel)
    for _ in range(32):  # compile / load the kernels, warm the caches
        env.step(env.random_actions())
    env.reset()
    moves = games = calls = 0
    chunk = max(1, 65536 // batch)  # check the clock every ~64k moves
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        for _ in range(chunk):
            res = env.step(env.random_actions())
            games += int(np.count_nonzero(res.done))
        calls += chunk
        moves += chunk * batch  # with autoreset no game is ever terminal: every game moves
    elapsed = time.perf_counter() - t0
    return {**rates(calls, moves, games, elapsed), "batch": batch, "parallel": env.parallel}


def parse_args(argv=None) -> argparse.Namespace:
    p = OneLineErrorParser(
        description="Random-play throughput of PettingZoo connect_four_v3 and tictactoe_v3 "
                    "(baselines), the Highway AEC env, the Highway Gymnasium env and the batched "
                    "Highway engine, measured in the same run.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--seconds", type=positive_float, default=3.0,
                   help="seconds to run each measurement (each batch size of the batched part separately)")
    p.add_argument("--rounds", type=positive_int, default=3,
                   help="alternating rounds of the single-env loops (c4, ttt, aec, gym, c4, ...), "
                        "each reporting its best round, so that a change of load hits all of them")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="what the single-env loops time: wall time, or the process's CPU time (on a "
                        "loaded machine the time other jobs take the core is then not counted)")
    p.add_argument("--batch", type=positive_int, nargs="+", default=[256, 4096], metavar="N",
                   help="number of games held by the batched engine; give several to measure each")
    p.add_argument("--parallel", action="store_true",
                   help="batched engine: split each batch over numba's threads (BatchedHighway("
                        "parallel=True); off by default, as in the engine)")
    p.add_argument("--skip", choices=PARTS, nargs="+", default=[], metavar="PART",
                   help=f"parts to leave out, any of {', '.join(PARTS)} (c4 = connect_four baseline, "
                        "ttt = tictactoe baseline, aec = highway_v0 AEC env, gym = Highway-v0 "
                        "Gymnasium env against its random opponent, batched = BatchedHighway)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the random players and envs")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = p.parse_args(argv)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    parallel = args.parallel
    rows = []  # (name, result dict or None, error or None)

    def run(name, fn, *a):
        try:
            rows.append((name, fn(*a), None))
        except Exception as e:  # a part that cannot run (e.g. env not written yet) is reported, not fatal
            rows.append((name, None, f"{type(e).__name__}: {e}"))

    aec_parts = [(name, fn) for part, name, fn in (("c4", "connect_four_v3 (AEC)", bench_c4),
                                                    ("ttt", "tictactoe_v3 (AEC)", bench_ttt),
                                                    ("aec", "highway_v0 (AEC)", bench_highway_aec),
                                                    ("gym", "Highway-v0 (Gymnasium)", bench_gym))
                 if part not in args.skip]
    rounds = {name: [] for name, _fn in aec_parts}
    errors = {}
    for _ in range(args.rounds):
        for name, fn in aec_parts:
            if name in errors:
                continue
            try:
                rounds[name].append(fn(args.seconds / args.rounds, args.seed, CLOCKS[args.clock]))
            except Exception as e:  # a part that cannot run is reported, not fatal
                errors[name] = f"{type(e).__name__}: {e}"
    for name, _fn in aec_parts:
        if name in errors:
            rows.append((name, None, errors[name]))
            continue
        best = max(rounds[name], key=lambda r: r["moves_per_s"])
        rows.append((name, {**best, "rounds_moves_per_s": [r["moves_per_s"] for r in rounds[name]]}, None))
    if "batched" not in args.skip:
        for b in args.batch:
            run(f"BatchedHighway batch={b}", bench_batched, args.seconds, args.seed, b, parallel)

    base = rows[0][1]["moves_per_s"] if rows and rows[0][0].startswith("connect_four") and rows[0][1] else None
    for _name, r, _err in rows:
        if r is not None:
            r["ratio_vs_connect_four"] = r["moves_per_s"] / base if base else None

    if args.json:
        import numba

        print(json.dumps({
            "python": platform.python_version(), "machine": platform.machine(),
            "numba_threads": numba.get_num_threads(), "seconds": args.seconds, "clock": args.clock,
            "results": [{"name": n, **(r or {}), **({"error": e} if e else {})} for n, r, e in rows],
        }, indent=2))
        return 0

    head = f"{'env':<28} {'moves/s':>14} {'steps/s':>14} {'games':>10} {'x connect_four':>15}"
    print(head)
    print("-" * len(head))
    for name, r, err in rows:
        if r is None:
            print(f"{name:<28} unavailable: {err}")
            continue
        ratio = f"{r['ratio_vs_connect_four']:.1f}x" if r["ratio_vs_connect_four"] else "-"
        print(f"{name:<28} {r['moves_per_s']:>14,.0f} {r['steps_per_s']:>14,.0f} {r['games']:>10,} {ratio:>15}")
    for name, r, _err in rows:
        if r is not None and r.get("note"):
            print(f"note ({name}): {r['note']}")
    print("\nmoves = pieces placed; steps = env.step calls (AEC: incl. step(None) for finished agents; "
          "Gymnasium: each places the agent's piece and the reply; batched: calls, each moving every game)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
