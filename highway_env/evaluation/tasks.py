"""Units of evaluation work, each cached as a JSON file so an interrupted run resumes where it stopped.

A task is a plain dict (picklable, sent to a worker process): ``kind`` is one of

- ``moves``: the agent's move on a chunk of the position set (``index`` = rows of the set);
- ``vs_perfect``: games ``g0 .. g1-1`` from the empty board against the perfect player (``seat`` 0:
  the agent is A, 1: B);
- ``conversion``: play-outs from won positions of the set (``index`` = rows), the agent moving for
  the winning side and the perfect player defending;
- ``match``: round-robin games between two agents (``a`` is A in even games, B in odd ones);
- ``reply_tree``: the agent's first move as A on the empty board (drawn with ``first_seed``, the
  same in every chunk of one tree), then one game per B reply ``r0 .. r1-1`` (rows of B's legal
  replies in action order) against the perfect B.

Every game has its own seed derived from (run seed, task key, game number), so results do not depend
on the number of workers. The perfect player's budgets are counted in solver nodes by default, so
its moves, and every figure, are the same on any machine under any load.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from highway_env.atomic_files import atomic_write_text

_CACHE: dict = {}


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", text).strip("_")[-60:]


def digest(obj) -> str:
    return hashlib.sha1(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:10]


def file_digest(path: str) -> str:
    """sha256 of a file's content."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def task_path(out_dir: Path, task: dict) -> Path:
    return Path(out_dir) / "tasks" / f"{task['id']}.json"


#: what a result of each kind of task holds besides its id (see :func:`execute`)
RESULT_FIELDS = {"moves": ("actions",), "match": ("margins_for_a",), "vs_perfect": ("margins",),
                 "conversion": ("index", "margins"), "reply_tree": ("first_move", "replies", "margins")}


def load_done(out_dir: Path, task: dict):
    """The task's cached result; None where it is missing or damaged, also where it parses but is
    not this task's result (an emptied or overwritten file): the task runs again."""
    try:
        result = json.loads(task_path(out_dir, task).read_text())
    except (FileNotFoundError, ValueError):
        return None
    if (not isinstance(result, dict) or result.get("id") != task["id"]
            or any(k not in result for k in RESULT_FIELDS[task["kind"]])):
        return None
    return result


# ----------------------------------------------------------------------------- in the worker

def worker_init(torch_now: bool = True) -> None:
    """Set-up of a worker: one torch thread (the workers share the cores). With ``torch_now`` False
    (the evaluation's tasks) torch is left unimported (about 2 s a process, most of a small
    evaluation's set-up) unless an agent needs it: :func:`execute` calls this again after building a
    task's agents, before it computes."""
    if torch_now or "torch" in sys.modules:
        try:
            import torch
        except ImportError:  # pragma: no cover
            return
        torch.set_num_threads(1)


def pool_worker_init(torch_now: bool = True):
    """Initializer of a pool worker process: it ends with its parent (no orphan left running its
    task after evaluate.py is killed), then is set up as ``worker_init(torch_now)``."""
    import threading

    from tqdm import tqdm

    from highway_env.parent_watch import exit_with_parent

    exit_with_parent()
    # tqdm's default lock is a named multiprocessing semaphore; the pool's terminate() kills this
    # worker before it unlinks one, and the parent's resource tracker then warns of "leaked
    # semaphore objects". A worker's bars need only a thread lock.
    tqdm.set_lock(threading.RLock())
    worker_init(torch_now)


@functools.cache
def _game():
    from agents.registry import get_game

    return get_game("highway")


def get_agent(spec: str, perfect: dict):
    """One agent object per spec per worker process (the perfect player keeps its caches)."""
    key = (spec, json.dumps(perfect, sort_keys=True) if spec.startswith("perfect") else "")
    if key not in _CACHE:
        game = _game()
        if spec.split(":")[0] == "perfect":  # plain "perfect": the task's tie-break
            from highway_env.solver.player import DEFAULT_TIEBREAK, PerfectPlayer

            args = spec.split(":")[1:] or [perfect.get("tiebreak", DEFAULT_TIEBREAK)]
            _CACHE[key] = PerfectPlayer.from_spec(
                args, game, seed=0, budget=perfect["budget"], exact_from_ply=perfect["exact_from_ply"],
                early_budget=perfect["early_budget"], store=perfect.get("store"),
                budget_nodes=perfect.get("budget_nodes") or None,  # 0 / absent: seconds
                early_budget_nodes=perfect.get("early_budget_nodes") or None,
                margin_book=perfect.get("margin_book", True))
        else:
            from agents.registry import make_agent

            _CACHE[key] = make_agent(spec, game, seed=0)
    return _CACHE[key]


@functools.cache
def _positions(path):
    from highway_env.evaluation.position_set import load_positions

    return load_positions(path)


def play(players, starts: np.ndarray, seeds: list) -> tuple[np.ndarray, int, int]:
    """Play games from ``starts`` to the end; players[0] moves for A, players[1] for B. Returns final
    margins (A's side), and the perfect players' (moves, unproven moves) in these games. The perfect
    player moves in one game at a time with that game's generator (seeded from ``seeds``), the others
    in a batch with one generator."""
    from agents.arena import play_out
    from highway_env.solver.player import PerfectPlayer

    game = _game()
    states = np.array(starts, np.int8).reshape(-1, 16)
    rngs = [np.random.default_rng(s) for s in seeds]
    batch_rng = np.random.default_rng([*(int(x) for x in seeds[0]), 7919])
    perfect = [p for p in dict.fromkeys(players) if isinstance(p, PerfectPlayer)]
    before = [(p.moves, p.unproven_moves) for p in perfect]
    states = play_out(game, states, players, np.zeros(len(states), np.int64), (batch_rng, batch_rng),
                      game_rngs=rngs, per_game=tuple(isinstance(p, PerfectPlayer) for p in players))
    moves = sum(p.moves - m0 for p, (m0, _) in zip(perfect, before))
    unproven = sum(p.unproven_moves - u0 for p, (_, u0) in zip(perfect, before))
    return game.margins(states), moves, unproven


def play_seats(agent, opponent, boards, seats, seeds) -> tuple[np.ndarray, int, int]:
    """Games from ``boards`` with the agent on ``seats[i]`` (0 = A), the seat-0 games first; final
    margins from the agent's side, and the perfect players' (moves, unproven moves)."""
    boards = np.asarray(boards, np.int8).reshape(-1, 16)
    seats = np.asarray(seats)
    out = np.zeros(len(boards), np.int64)
    moves = unproven = 0
    for seat in (0, 1):
        sel = np.flatnonzero(seats == seat)
        if not len(sel):
            continue
        players = (agent, opponent) if seat == 0 else (opponent, agent)
        m, mv, un = play(players, boards[sel], [seeds[i] for i in sel])
        out[sel] = m if seat == 0 else -m
        moves += mv
        unproven += un
    return out, moves, unproven


def reply_starts(game, agent, first_seed, r0: int, r1: int) -> tuple[int, np.ndarray, np.ndarray]:
    """The agent's first move as A on the empty board (its generator seeded with ``first_seed``), B's
    legal replies ``r0 .. r1-1`` (in action order) and the ply-2 positions they lead to."""
    empty = game.initial_states(1)
    first = int(agent.act_batch(empty, np.random.default_rng(first_seed))[0])
    after = game.apply(empty, np.array([first], np.int64))
    replies = np.flatnonzero(game.legal_masks(after)[0])[r0:r1]
    return first, replies, game.apply(np.repeat(after, len(replies), 0), replies)


def save_done(out_dir: Path, task: dict, result: dict) -> None:
    atomic_write_text(task_path(out_dir, task), json.dumps(result))


def run_task(args) -> dict:
    """Worker entry: run one task, write its result file, return the result."""
    task, out_dir = args
    res = execute(task)
    save_done(out_dir, task, res)
    return res


# the task's fields that name agents (an az: spec names a checkpoint file)
_AGENT_KEYS = ("agent", "a", "b")


def _checkpoints(task: dict) -> dict:
    """Field -> (checkpoint file, rest of the spec) of the task's az: agents."""
    from agents.registry import az_checkpoint

    return {k: ckpt for k in _AGENT_KEYS if k in task and (ckpt := az_checkpoint(task[k]))}


def task_files(task: dict) -> list[str]:
    """The files on this machine that ``task`` reads: its position set (None: the packaged one)
    and the checkpoints of its az: agents."""
    files = [task["positions_file"]] if task.get("positions_file") else []
    return files + [path for path, _ in _checkpoints(task).values()]


def run_shipped(task: dict, files: dict) -> dict:
    """Ray task entry: ``task`` with its files (:func:`task_files`, shipped by
    :meth:`highway_env.ray_tasks.RayCluster.ship_files`) read from copies on this node; returns the
    result, which the driver writes (the node may not see the output folder)."""
    from highway_env.ray_tasks import node_local_copy

    worker_init(torch_now=False)
    local = dict(task)
    if task.get("positions_file"):
        local["positions_file"] = node_local_copy(files[task["positions_file"]])
    for k, (path, rest) in _checkpoints(task).items():
        local[k] = f"az:{node_local_copy(files[path])}{rest}"
    return execute(local)


def execute(task: dict) -> dict:
    """Run one task; its result (a JSON-able dict)."""
    t0 = time.monotonic()
    perfect = task["perfect"]
    agents = {k: get_agent(task[k], perfect) for k in _AGENT_KEYS if k in task}
    # one torch thread if an agent imported torch: here, in the task runners, and not in get_agent,
    # which also serves highway_env.benchmark in a user's process (whose threads are the user's)
    worker_init(torch_now=False)
    res: dict = {"id": task["id"], "kind": task["kind"]}
    if task["kind"] == "moves":
        ps = _positions(task["positions_file"])
        agent = agents["agent"]
        idx = np.asarray(task["index"])
        rng = np.random.default_rng(task["seed"])
        res["actions"] = [int(a) for a in agent.act_batch(ps.boards[idx], rng)]
    elif task["kind"] == "match":
        a, b = agents["a"], agents["b"]
        games = np.arange(task["g0"], task["g1"])
        margins, _, _ = play_seats(a, b, np.zeros((len(games), 16), np.int8), games % 2,
                                   [[*task["seed"], int(g)] for g in games])  # from a's side
        res["margins_for_a"] = [int(x) for x in margins]
    else:  # games against the perfect player
        agent = agents["agent"]
        opp = get_agent("perfect:" + perfect["tiebreak"], perfect)
        if task["kind"] == "vs_perfect":
            players = (agent, opp) if task["seat"] == 0 else (opp, agent)
            n = task["g1"] - task["g0"]
            seeds = [[*task["seed"], g] for g in range(task["g0"], task["g1"])]
            m, moves, unproven = play(players, np.zeros((n, 16), np.int8), seeds)
            res["margins"] = [int(x) for x in m]
        elif task["kind"] == "conversion":
            ps = _positions(task["positions_file"])
            idx = np.asarray(task["index"])
            seats = ps.ply[idx] % 2
            m, moves, unproven = play_seats(agent, opp, ps.boards[idx], seats,
                                            [[*task["seed"], int(i)] for i in idx])
            margins = np.where(seats == 0, m, -m)  # from A's side
            res.update(index=[int(i) for i in idx], margins=[int(x) for x in margins])
        else:  # reply_tree
            first, replies, starts = reply_starts(_game(), agent, task["first_seed"], task["r0"], task["r1"])
            m, moves, unproven = play((agent, opp), starts, [[*task["seed"], int(r)] for r in replies])
            res.update(first_move=first, replies=[int(r) for r in replies], margins=[int(x) for x in m])
        res.update(perfect_moves=moves, unproven_perfect_moves=unproven)
    res["seconds"] = round(time.monotonic() - t0, 3)
    res["pid"] = os.getpid()
    return res
