"""Metrics from solver labels and game results: move accuracy, margin given away, W/D/L tallies.

Conventions: values and margins are from A's side (+1 A wins); an agent's move *keeps the value*
when the position after it has the value of the position (the best the mover can get). Accuracy
counts only *critical* positions, where at least one legal move does not keep the value.
"""

from __future__ import annotations

import math

import numpy as np

from highway_env.evaluation.position_set import ILLEGAL, UNKNOWN, PositionSet


def wilson(k: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n (95 % by default); (0, 1) when n == 0."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def move_keeps(ps: PositionSet, actions: np.ndarray) -> np.ndarray:
    """(N,) bool: the action keeps the position's value. Raises on an illegal action."""
    actions = np.asarray(actions, np.int64)
    v = ps.values[np.arange(len(ps)), actions]
    if (v == ILLEGAL).any():
        i = int(np.flatnonzero(v == ILLEGAL)[0])
        raise ValueError(f"illegal action {int(actions[i])} in position {i} ({ps.boards[i].tolist()})")
    return v == ps.value


def _rate(k: int, n: int) -> dict:
    lo, hi = wilson(k, n)
    return {"correct": int(k), "n": int(n), "rate": (k / n) if n else None, "ci95": [lo, hi]}


def accuracy(ps: PositionSet, actions: np.ndarray) -> dict:
    """Share of value-keeping moves on the critical positions: overall, by ply, by side to move."""
    return keep_rates(move_keeps(ps, actions), ps.critical(), ps.ply, ps.mover)


def keep_rates(keeps, critical, ply, mover) -> dict:
    """The accuracy dict from per-position arrays: the share of ``keeps`` on the ``critical``
    positions, by ``ply`` and by ``mover`` (0 = A), and on all positions."""
    out = _rate(int((keeps & critical).sum()), int(critical.sum()))
    out["by_ply"] = {}
    for p in sorted(set(ply[critical].tolist())):
        m = critical & (ply == p)
        out["by_ply"][int(p)] = _rate(int((keeps & m).sum()), int(m.sum()))
    out["by_side"] = {}
    for side, name in ((0, "A"), (1, "B")):
        m = critical & (mover == side)
        out["by_side"][name] = _rate(int((keeps & m).sum()), int(m.sum()))
    out["all_positions"] = _rate(int(keeps.sum()), len(keeps))
    return out


def margin_loss(ps: PositionSet, actions: np.ndarray) -> dict:
    """Margin given away, from the mover's side: best exact margin among the moves minus the chosen
    move's margin, on the positions whose move margins are known (0 = a margin-optimal move)."""
    actions = np.asarray(actions, np.int64)
    idx = np.flatnonzero(ps.margin != UNKNOWN)
    chosen = ps.margins[idx, actions[idx]].astype(np.int64)
    best = ps.margin[idx].astype(np.int64)
    sign = np.where(ps.mover[idx] == 0, 1, -1)
    return loss_summary((best - chosen) * sign, ps.ply[idx])


def loss_summary(loss, ply) -> dict:
    """The margin-loss dict: mean of ``loss`` (0 = an optimal move), the share of 0s, mean by ``ply``."""
    if not len(loss):
        return {"n": 0, "mean": None, "optimal_rate": None, "by_ply": {}}
    out = {"n": int(len(loss)), "mean": float(loss.mean()), "optimal_rate": float((loss == 0).mean()),
           "by_ply": {}}
    for p in sorted(set(ply.tolist())):
        m = ply == p
        out["by_ply"][int(p)] = {"n": int(m.sum()), "mean": float(loss[m].mean())}
    return out


def wdl(outcomes) -> dict:
    """Tally of results from the agent's side (+1 win, 0 draw, -1 loss)."""
    o = np.sign(np.asarray(list(outcomes), np.int64))
    w, d, l = int((o > 0).sum()), int((o == 0).sum()), int((o < 0).sum())
    n = w + d + l
    lo, hi = wilson(w + 0.5 * d, n)
    return {"win": w, "draw": d, "loss": l, "games": n, "score": ((w + 0.5 * d) / n) if n else None,
            "score_ci95": [lo, hi]}


def games_vs_perfect(margins) -> dict:
    """The W/D/L tally of games against the perfect player (margins from the agent's side) and
    their mean margin."""
    m = np.asarray(list(margins), np.int64)
    return {**wdl(m), "mean_margin": float(m.mean()) if len(m) else None}


def conversion(outcomes) -> dict:
    """From positions the agent's side wins: the share it actually won against perfect defence."""
    w = wdl(outcomes)
    r = _rate(w["win"], w["games"])
    return {"positions": w["games"], "won": w["win"], "drawn": w["draw"], "lost": w["loss"],
            "rate": r["rate"], "ci95": r["ci95"]}


#: The games whose perfect-player moves a report counts ("perfect_moves" and "perfect_unproven_moves"
#: in summary.json, the line under the table of report.md): every game an agent plays against the
#: perfect opponent to be graded by it: from the empty board on each side and as B against the
#: margin-maximising A ("vs_perfect"), the ply-1 tree ("reply_tree") and the won positions played out
#: against perfect defence ("conversion"). Not the round robin, where a perfect player (--rr-perfect)
#: is a contestant rather than the yardstick.
GRADING_GAMES = ("vs_perfect", "reply_tree", "conversion")


def perfect_moves(played) -> dict:
    """``{"perfect_moves": n, "perfect_unproven_moves": u}`` over ``played``, (game kind, the perfect
    players' moves, of which unproven) for each batch of games; only the :data:`GRADING_GAMES` count.
    One definition for ``evaluate.py`` and :func:`highway_env.benchmark.evaluate`: the report's claim
    that every move of the perfect player was proven covers every game that graded an agent."""
    counted = [(moves, unproven) for kind, moves, unproven in played if kind in GRADING_GAMES]
    return {"perfect_moves": sum(m for m, _ in counted), "perfect_unproven_moves": sum(u for _, u in counted)}
