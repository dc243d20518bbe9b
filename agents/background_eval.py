"""The training run's evaluation against its baselines, in the loop or in a process beside it.

``evaluate_net`` is seeded by the run's seed and the iteration, so its result depends only on the
weights and the iteration; ``BackgroundEvaluator`` runs it on weight snapshots in one spawned
process, so the learner never waits. Training reads nothing from it either way.
"""

from __future__ import annotations

import collections
import multiprocessing as mp
import multiprocessing.connection as mp_connection
import sys
import traceback

import numpy as np

from agents.parallel import WorkersLostError, child_messages, child_setup, reap_child, signal_child, start_child
from highway_env.stall_watch import StallWatch


def evaluate_net(cfg, game, net, opponents, iteration: int, device: str = "cpu") -> dict[str, float]:
    """Score per opponent spec (wins + draws / 2 per game) and their ``mean``."""
    from agents.alphazero import AlphaZeroAgent
    from agents.arena import play_match
    from agents.selfplay import torch_threads

    agent = AlphaZeroAgent(game, net, cfg.search_config(cfg.eval_simulations), seed=cfg.seed, device=device)
    seed = cfg.seed * 1_000_003 + iteration
    with torch_threads(1):  # as in the background process, whatever the learner's threads
        out = {s: play_match(agent, opp, game, cfg.eval_games, seed=seed).score for s, opp in opponents}
    out["mean"] = float(np.mean(list(out.values())))
    return out


def _evaluator_main(conn, parent_pid: int, cfg_dict: dict) -> None:
    """The evaluation process: builds the game, network and opponents once, then evaluates the
    weight snapshots it is sent, one at a time, in order."""
    child_setup(parent_pid)
    import torch

    from agents.config import TrainConfig
    from agents.network import build_network
    from agents.registry import get_game

    cfg = TrainConfig.from_dict(cfg_dict)
    game = get_game(cfg.game, cfg.game_options())
    net = build_network(cfg.net_config(game.obs_shape, game.num_actions))
    opponents = cfg.eval_agents()
    for iteration, weights in child_messages(conn):
        try:
            net.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in weights.items()})
            conn.send((iteration, evaluate_net(cfg, game, net, opponents, iteration), None))
        except BaseException:
            conn.send((iteration, None, traceback.format_exc()))


def _say_stalled(proc) -> None:
    print(f"note: the evaluation process {proc.pid} stopped running (no CPU time while it had weights to "
          "evaluate): killed; a new one evaluates them", file=sys.stderr)


class BackgroundEvaluator:
    """One evaluation process fed weight snapshots: ``submit`` never blocks, ``poll`` returns the
    evaluations finished so far, ``wait`` all of them, each as ``(iteration, scores)`` in
    submission order. A process that dies (kill -9, out of memory) or stops running while it has
    snapshots (:mod:`highway_env.stall_watch`: killed after ``stall_seconds``) is restarted and its
    pending snapshots evaluated again; after ``MAX_RESTARTS`` deaths in a row without a result, or
    an error in the evaluation itself, the call raises WorkersLostError / RuntimeError."""

    MAX_RESTARTS = 3

    def __init__(self, cfg, stall_seconds: float | None = None):
        self._ctx = mp.get_context("spawn")
        self._cfg = cfg.to_dict()
        self._pending: collections.OrderedDict = collections.OrderedDict()  # iteration -> weights
        self._deaths = 0
        self.restarts = 0
        self._proc = None
        self._conn = None
        # a stopped process would also block submit(): its pipe fills; killed, the send fails and returns
        self._watch = StallWatch(self._busy, _say_stalled, stall_seconds, name="eval-stall-watch")

    def _start(self) -> None:
        self._conn, self._proc = start_child(self._ctx, _evaluator_main, (self._cfg,), "highway-eval")
        for item in self._pending.items():  # a restarted process starts over on what is pending
            self._conn.send(item)

    def submit(self, iteration: int, weights: dict) -> None:
        """Evaluate ``weights`` (numpy arrays, not changed afterwards) as of ``iteration``."""
        self._pending[iteration] = weights
        if self._proc is None:
            self._start()
        else:
            try:
                self._conn.send((iteration, weights))
            except OSError:  # it died: _restart sends every pending snapshot again
                pass

    def pending(self) -> dict:
        """Snapshots not evaluated yet, ``{iteration: weights}`` (a checkpoint keeps them)."""
        return dict(self._pending)

    def poll(self) -> list[tuple[int, dict]]:
        return self._receive(block=False)

    def wait(self) -> list[tuple[int, dict]]:
        return self._receive(block=True)

    def _receive(self, block: bool) -> list[tuple[int, dict]]:
        done = []
        while self._pending:
            if self._conn.poll(1.0 if block else 0):
                try:
                    iteration, scores, err = self._conn.recv()
                except (EOFError, OSError):
                    self._restart()
                    continue
                if err is not None:
                    raise RuntimeError(f"evaluation of iteration {iteration} failed:\n{err}")
                self._deaths = 0
                if self._pending.pop(iteration, None) is not None:
                    done.append((iteration, scores))
            elif not self._proc.is_alive():
                self._restart()
            elif not block:
                break
        return done

    def _restart(self) -> None:
        self._proc.join(timeout=1)
        self._conn.close()
        self._deaths += 1
        if self._deaths > self.MAX_RESTARTS:
            raise WorkersLostError(f"the evaluation process died {self._deaths} times in a row (last exit "
                               f"code {self._proc.exitcode}); check memory, or train with "
                               "--no-eval-background")
        self.restarts += 1
        self._start()

    def _busy(self) -> list:
        """The process while it owes an evaluation (the stall watch's question): not when an answer
        waits in the pipe, unread until the trainer's next poll (the process then idles, rightly)."""
        proc, conn = self._proc, self._conn
        if not self._pending or proc is None:
            return []
        try:
            return [] if mp_connection.wait([conn], timeout=0) else [proc]
        except (OSError, ValueError):  # restarted meanwhile: ask again
            return []

    @property
    def stalled(self) -> int:
        """Evaluation processes killed because they stopped running."""
        return self._watch.killed

    def close(self) -> None:
        self._watch.close()
        if self._proc is not None:
            signal_child(self._proc, self._conn, busy=bool(self._pending))
            reap_child(self._proc, self._conn)
            self._proc = None
