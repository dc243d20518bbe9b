"""The proof's units of work: positions small enough for one search, split further where large.

A goal is a position with A to move and the question "can A force margin >= t?". It is one unit
(one search with a node limit) unless it is too large: a search that runs out of nodes, or a goal
an earlier run measured above the limit, is split into A's answers, tried one after the other in
the solver's order (A needs one that holds: an OR node), each with every B reply modulo symmetry as
a goal of its own (all must hold: an AND node). So no unit is bigger than the limit, and the work
spreads over any number of workers; an answer refuted by one reply has its other units cancelled.

The tree of goals becomes the certificate's rows: one per B reply, with the split recorded under
``split`` (A's answer, the answers refuted first, a row per B reply after it).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from highway_env.core import SYMMETRIES, Board, parse_board, transform_action
from highway_env.solver.solver import action_dict, ordered_actions


def distinct_moves(board: Board) -> list[tuple[int, int]]:
    """(representative action, orbit size) for the legal moves of ``board`` modulo the symmetries
    that fix it; representatives in the solver's move order."""
    stabiliser = [p for p in SYMMETRIES.values() if board.transform(p) == board]
    seen: dict[int, int] = {}
    order: list[int] = []
    for action in ordered_actions(board):
        orbit = {transform_action(action, p) for p in stabiliser}
        rep = min(orbit)
        if rep not in seen:
            seen[rep] = 0
            order.append(action)
            seen[action] = len(orbit)
    return [(a, seen[a]) for a in order]


@dataclass(eq=False)
class Goal:
    """Can A (to move in ``board``) force margin >= the threshold? ``action``/``orbit``: the B reply
    that led here (None for the root)."""

    board: Board
    parent: "Goal | None" = None
    action: int | None = None
    orbit: int = 1
    holds: bool | None = None
    answer: int | None = None  # A's answer: the unit's own, or the split's current candidate
    settled: bool = False  # decided by the static bounds, no search
    task: object = None  # the pool's handle while a unit runs
    probe_nodes: int = 0  # nodes of a search that ran out and was split
    nodes: int = 0  # every unit's nodes in this subtree
    seconds: float = 0.0  # every unit's seconds in this subtree
    own_seconds: float = 0.0  # this goal's own units (probe or whole search)
    split: bool = False
    candidates: list = field(default_factory=list)
    children: list = field(default_factory=list)  # goals after the current candidate
    open: int = 0  # children not yet proven
    refuted: list = field(default_factory=list)  # answers tried first: {"answer", "by", "seconds"}

    def critical_seconds(self) -> float:
        """Seconds along the longest chain of units that must run one after the other."""
        after = max((c.critical_seconds() for c in self.children), default=0.0)
        return self.own_seconds + sum(r["seconds"] for r in self.refuted) + after


class UnitTree:
    """Drives the goals under ``root`` on a pool (``submit(cells, threshold, node_limit)``,
    ``wait_any(tasks)``, ``cancel(tasks)``) until the root is decided or ``stop`` says so."""

    def __init__(self, pool, threshold: int, unit_nodes: int = 0, estimates: dict | None = None):
        self.pool, self.threshold, self.unit_nodes = pool, threshold, unit_nodes
        self.estimates = estimates or {}
        self.pending: dict = {}  # task -> goal
        self.units: list[tuple[int, float]] = []  # (nodes, seconds) of every unit that finished

    # ------------------------------------------------------------------ starting work
    def start(self, goal: Goal) -> None:
        estimate = self.estimates.get(goal.board.canonical())
        if self.unit_nodes and estimate is not None and estimate > self.unit_nodes:
            self._split(goal)  # measured too large before: no point in a search that will run out
            return
        goal.task = self.pool.submit(goal.board.cells, self.threshold, self.unit_nodes)
        self.pending[goal.task] = goal

    def try_answers(self, goal: Goal, answers: list[int]) -> None:
        """Prove ``goal`` through these answers of A, in turn (the root: the first move checked)."""
        goal.split = True
        goal.candidates = list(answers)
        self._next_candidate(goal)

    def _split(self, goal: Goal) -> None:
        self.try_answers(goal, [a for a, _ in distinct_moves(goal.board)
                                if goal.board.apply(a).bounds().margin[1] >= self.threshold])

    def _next_candidate(self, goal: Goal) -> None:
        if not goal.candidates:
            goal.answer = None
            self._resolve(goal, False)
            return
        answer = goal.candidates.pop(0)
        goal.answer = answer
        after = goal.board.apply(answer)
        goal.children = [Goal(after.apply(r), goal, r, o) for r, o in distinct_moves(after)]
        goal.open = len(goal.children)
        by_size = sorted(goal.children, key=lambda c: -self.estimates.get(c.board.canonical(), 0))
        for child in by_size:  # largest first, so the long units do not come last
            if goal.answer != answer or goal.holds is not None:
                break  # a child decided synchronously and moved this goal on
            if goal.parent is not None and child.board.bounds().margin[0] >= self.threshold:
                child.settled = True  # not for the root's replies: the certificate names an answer for each
                self._resolve(child, True)
            else:
                self.start(child)

    # ------------------------------------------------------------------ results
    def finished(self, task, result: dict) -> Goal | None:
        """Record a unit's result; returns its goal (None for a unit cancelled meanwhile)."""
        goal = self.pending.pop(task, None)
        if goal is None:
            return None
        goal.task = None
        self.units.append((result["nodes"], result["seconds"]))
        goal.own_seconds += result["seconds"]
        g = goal
        while g is not None:
            g.nodes += result["nodes"]
            g.seconds += result["seconds"]
            g = g.parent
        if result["holds"] is None:  # ran out of nodes: split it
            goal.probe_nodes = result["nodes"]
            self._split(goal)
        else:
            goal.answer = result["answer"]
            self._resolve(goal, result["holds"])
        return goal

    def _resolve(self, goal: Goal, holds: bool) -> None:
        goal.holds = holds
        parent = goal.parent
        if parent is None or parent.holds is not None or goal not in parent.children:
            return
        if holds:
            parent.open -= 1
            if parent.open == 0:
                self._resolve(parent, True)
            return
        # the parent's current answer is refuted by this reply: drop its other units, try the next
        spent = sum(c.seconds for c in parent.children)
        critical = max((c.critical_seconds() for c in parent.children), default=0.0)
        self._cancel(parent.children)
        parent.refuted.append({"answer": parent.answer, "by": goal.action, "children": parent.children,
                               "nodes": sum(c.nodes for c in parent.children), "seconds": critical,
                               "unit_seconds": spent})
        parent.children = []
        self._next_candidate(parent)

    def _cancel(self, goals) -> None:
        for g in goals:
            if g.task is not None:
                self.pool.cancel([g.task])
                self.pending.pop(g.task, None)
                g.task = None
            self._cancel(g.children)

    def cancel_all(self) -> None:
        self.pool.cancel(list(self.pending))
        self.pending.clear()

    def run_until(self, done) -> None:
        """Wait for units until ``done()`` or nothing is left to wait for; ``on_goal`` hooks progress."""
        while self.pending and not done():
            for task, result in self.pool.wait_any(list(self.pending)):
                goal = self.finished(task, result)
                if goal is not None:
                    self.on_goal(goal)
                if done():
                    break

    def on_goal(self, goal: Goal) -> None:  # replaced by callers that show progress
        pass


def goal_row(goal: Goal, top: bool = True) -> dict:
    """The certificate row of one B reply, with its split recorded under ``split``; the rows inside a
    split name moves by action alone (there are thousands of them)."""
    row = {"action": goal.action, "orbit": goal.orbit, "holds": goal.holds, "nodes": goal.nodes,
           "seconds": round(goal.seconds, 3)}
    if top:
        row = {**action_dict(goal.action), **row}
    if goal.settled:
        row["settled"] = "static bounds"
    if goal.holds and goal.answer is not None:
        row["a_answer"] = action_dict(goal.answer) if top else {"action": goal.answer}
    if goal.split:
        row["split"] = {"probe_nodes": goal.probe_nodes,
                        "refuted_answers": [{"action": r["answer"], "by_reply": r["by"], "nodes": r["nodes"]}
                                            for r in goal.refuted],
                        "replies": sorted((goal_row(ch, top=False) for ch in goal.children if ch.holds is not None),
                                          key=lambda r: r["action"])}
    return row


def estimates_from(certificate: dict) -> dict:
    """canonical Board -> nodes of every goal in a certificate (its rows and their splits): where an
    earlier run found a goal too large, the next splits it at once instead of searching first."""
    out: dict = {}

    def walk(rows, before: Board):
        for row in rows:
            board = before.apply(row["action"])
            out[board.canonical()] = row["nodes"]
            split = row.get("split")
            if split and row.get("a_answer"):
                walk(split["replies"], board.apply(row["a_answer"]["action"]))

    root = parse_board(certificate["root"]) if certificate.get("root") else Board()
    walk(certificate["replies"], root.apply(certificate["first_move"]["action"]))
    return out


def predicted_wall(unit_seconds: list[float], workers: int, critical_seconds: float = 0.0) -> float:
    """Wall time on ``workers`` workers: longest-processing-time-first list scheduling of the
    measured unit times, and no less than the longest chain of units that must run in turn."""
    loads = [0.0] * workers
    for t in sorted(unit_seconds, reverse=True):
        heapq.heapreplace(loads, loads[0] + t)
    return max(max(loads), critical_seconds)
