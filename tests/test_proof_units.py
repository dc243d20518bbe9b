"""Splitting the proof into units: every split still proves its goal, and the schedule prediction."""

import os
import signal
import sys

import numpy as np
import pytest

from highway_env.core import random_board
from highway_env.solver import Solver, kernel
from highway_env.solver.proof_units import estimates_from, predicted_wall
from highway_env.solver.prove import ProofConfig, prove
from optional_parts import require_ray

UNIT_NODES = 30


def _small_root(seed):
    """A root with 8 empty cells that A wins, its margin and a move of A that keeps it: big enough to split, small
    enough to check the leaves by brute force (5 empty cells after A's answer)."""
    rng = np.random.default_rng(seed)
    while True:
        board = random_board(rng, 8)
        result = Solver(tt_bits=14).solve(board, margin=True, moves=True)
        if result.value == 1:
            return board, result.margin, result.best  # best: a move that keeps the margin


def _check_rows(rows, before, threshold):
    """Every row holds, and its answer (or each reply under its split) keeps margin >= threshold."""
    splits = 0
    for row in rows:
        assert row["holds"] is True
        board = before.apply(row["action"])
        if row.get("settled"):
            assert board.bounds().margin[0] >= threshold
            continue
        after = board.apply(row["a_answer"]["action"])
        if "split" in row:
            splits += 1
            replies = row["split"]["replies"]
            assert sum(r["orbit"] for r in replies) == len(after.legal_actions())
            splits += _check_rows(replies, after, threshold)
        else:
            assert kernel.brute_force_margin(np.array(after.cells)) >= threshold
    return splits


@pytest.fixture(scope="module")
def split_proof():
    root, margin, first = _small_root(3)
    config = ProofConfig(workers=2, tt_bits=12, root=root, unit_nodes=UNIT_NODES, first_move=first)
    return root, margin, config, prove(config, progress=False, threshold=margin)


def test_large_goals_are_split_into_units_that_still_prove_them(split_proof):
    root, margin, _, cert = split_proof
    first = root.apply(cert["first_move"]["action"])
    assert cert["replies_total"] == len(first.legal_actions())  # one row per B reply, as before
    assert _check_rows(cert["replies"], first, margin) > 0
    units = cert["units"]
    assert units["split_replies"] > 0 and units["count"] > len(cert["replies"])
    assert units["largest_nodes"] <= UNIT_NODES + 32  # leaves finish their parent after the limit


def test_a_split_proof_of_a_false_claim_is_refuted(split_proof):
    root, margin, config, _ = split_proof
    with pytest.raises(RuntimeError, match=f"margin >= {margin + 1}"):
        prove(config, progress=False, threshold=margin + 1)


def test_estimates_split_at_once_without_a_search_that_runs_out(split_proof):
    root, margin, config, cert = split_proof
    estimates = estimates_from(cert)
    assert len(estimates) > len(cert["replies"])  # the split goals are there too
    config = ProofConfig(workers=2, tt_bits=12, root=root, unit_nodes=UNIT_NODES, first_move=config.first_move,
                         estimates=estimates)
    again = prove(config, progress=False, threshold=margin)
    first = root.apply(again["first_move"]["action"])
    large = [r for r in again["replies"] if estimates[first.apply(r["action"]).canonical()] > UNIT_NODES]
    assert large and all(r["split"]["probe_nodes"] == 0 for r in large)
    _check_rows(again["replies"], root.apply(again["first_move"]["action"]), margin)


def test_predicted_wall_is_a_longest_first_schedule_bounded_by_the_critical_path():
    assert predicted_wall([5, 4, 3, 3, 3], 2) == 10  # 5+3 | 4+3+3 would be 8|10: LPT gives 5,4 -> 7 -> 8 -> 10
    assert predicted_wall([5, 4, 3, 3, 3], 64) == 5
    assert predicted_wall([5, 4, 3, 3, 3], 64, critical_seconds=9.5) == 9.5
    assert predicted_wall([2.0] * 128, 64) == 4.0


def test_certificate_is_written_one_line_per_reply_and_reads_back(split_proof, tmp_path):
    import json

    from highway_env.solver.prove import write_certificate

    cert = split_proof[3]
    path = tmp_path / "cert.json"
    write_certificate(cert, str(path))
    assert json.loads(path.read_text()) == cert
    lines = path.read_text().splitlines()
    assert sum(line.startswith('  {"number":') for line in lines) == len(cert["replies"])


@pytest.mark.slow
def test_split_proof_on_a_local_ray_instance(split_proof):
    require_ray()
    root, margin, config, cert = split_proof
    on_ray = ProofConfig(ray_address="local", tt_bits=12, root=root, unit_nodes=UNIT_NODES,
                         first_move=config.first_move)
    again = prove(on_ray, progress=False, threshold=margin)
    assert again["workers"] == "ray:local" and again["units"]["split_replies"] > 0
    assert _check_rows(again["replies"], root.apply(again["first_move"]["action"]), margin) > 0
    with pytest.raises(RuntimeError, match=f"margin >= {margin + 1}"):  # refuted: cancels Ray tasks
        prove(on_ray, progress=False, threshold=margin + 1)


@pytest.mark.skipif(not hasattr(os, "kill") or sys.platform == "win32", reason="SIGKILL")
def test_a_worker_killed_mid_proof_has_its_units_rerun(split_proof, monkeypatch):
    from highway_env.solver import prove as prove_module

    root, margin, config, _ = split_proof
    killed = []

    class KillingPool(prove_module._LocalPool):
        def wait_any(self, pending):
            # some units done, others still running or queued (a kill while every unit is done breaks nothing)
            if len(killed) == 0 and self.next_id > 20 and sum(not self.futures[t].done() for t in pending) > 1:
                victim = next(iter(self.executor._processes))
                os.kill(victim, signal.SIGKILL)
                killed.append(self)
            return super().wait_any(pending)

    monkeypatch.setattr(prove_module, "_LocalPool", KillingPool)
    cert = prove(config, progress=False, threshold=margin)
    assert killed and killed[0].lost  # the pool saw the death and re-ran the units it broke
    first = root.apply(cert["first_move"]["action"])
    assert cert["replies_total"] == len(first.legal_actions())
    _check_rows(cert["replies"], first, margin)


class _FakeRay:
    def __init__(self, cpus: int):
        self.cpus = cpus

    def cluster_resources(self) -> dict:
        return {"CPU": self.cpus}


class _FakeCluster:
    """What _RayPool uses of RayCluster; a unit ends when waited for, the oldest first."""

    def __init__(self, cpus: int):
        self.ray = _FakeRay(cpus)
        self.started = []  # (ref, cells) in the order units went to "Ray"
        self.in_flight, self.peak = set(), 0  # units on "Ray" not yet ended; the most at once

    def task(self, fn, **options):
        cluster = self

        class Remote:
            def remote(self, cells, threshold, tt_bits, node_limit):
                ref = f"ref{len(cluster.started)}"
                cluster.started.append((ref, cells))
                cluster.in_flight.add(ref)
                cluster.peak = max(cluster.peak, len(cluster.in_flight))
                return ref
        return Remote()

    def wait(self, refs, num_returns=1):
        order = [ref for ref, _ in self.started]
        ended = min(refs, key=order.index)
        self.in_flight.discard(ended)
        return [ended]

    def get(self, ref, name, **kw):
        return {"ref": ref, "name": name}

    def cancel(self, refs, force=False):
        raise AssertionError("ray.cancel can abort the driver (ray-project/ray#54846)")

    def close(self):
        pass


def test_ray_pool_gives_ray_no_more_units_than_it_runs_and_never_cancels_on_ray():
    from types import SimpleNamespace

    from highway_env.solver.prove import RAY_QUEUE_MARGIN, _RayPool

    cluster = _FakeCluster(cpus=2)
    pool = _RayPool(SimpleNamespace(tt_bits=10, retries=0), cluster)
    slots = 2 + RAY_QUEUE_MARGIN
    tasks = [pool.submit((k,) * 16, 0) for k in range(slots + 2)]
    assert cluster.started == []  # nothing goes to Ray before the pool waits
    assert [t for t, _ in pool.wait_any(tasks)] == [tasks[0]]
    assert len(cluster.started) == slots
    running, waiting = tasks[1], tasks[-1]
    pool.cancel([running, waiting])  # one on Ray (it runs on), one still here (it never starts)
    rest = tasks[2:-1]
    assert pool.wait_any(rest) == []  # the cancelled unit ended first: its result is not given
    results = pool.wait_any(rest)
    assert [t for t, _ in results] == [tasks[2]] and results[0][1]["name"] == f"the unit {','.join(['2'] * 16)}"
    left = rest[1:]
    while left:
        done = {t for t, _ in pool.wait_any(left)}
        left = [t for t in left if t not in done]
    assert cluster.peak == slots  # the cancelled unit held its CPU until it ended
    started_cells = [cells for _, cells in cluster.started]
    assert (len(tasks) - 1,) * 16 not in started_cells and len(started_cells) == len(tasks) - 1
