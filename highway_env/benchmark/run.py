"""Grade one policy against perfect play: the measures of ``evaluate.py``, in this process.

The policy runs here (so lambdas, closures and loaded models work); the perfect opponent is the
evaluation's (:data:`~highway_env.solver.player.EVALUATION_OPPONENT`), games go through the
evaluation's game loop (:func:`highway_env.evaluation.tasks.play`, lock-step: one policy call per ply
for all games), and the numbers through :mod:`highway_env.evaluation.metrics`.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from highway_env.benchmark.policy import as_agent, check_frame, observation_settings
from highway_env.benchmark.report import BenchmarkReport
from highway_env.evaluation.tasks import play_seats  # noqa: F401  (benchmark.run.play_seats)
from highway_env.evaluation.provenance import provenance
from highway_env.solver.player import EVALUATION_OPPONENT as PERFECT  # PERFECT: evaluate.py's defaults
from highway_env.solver.player import GAME_VALUE_MARGIN, TIEBREAKS

#: positions per policy call for the position set (a batched policy sees this many at once)
POSITION_BATCH = 1024


def sample_plan(ps, positions: int, conversion: int, seed: int) -> dict:
    """Rows of the position set to grade moves on (``positions``, 0 = all) and won positions (for the
    side to move) to play out for conversion; the same draw as ``evaluate.py`` for the same seed.
    Both come from the set's report part only: the selection part is the trainer's, which may pick
    checkpoints by it (:func:`~highway_env.evaluation.position_set.selection_mask`)."""
    from highway_env.evaluation.position_set import selection_mask

    report = np.flatnonzero(~selection_mask(ps.boards))
    n = len(report)
    rng = np.random.default_rng([seed, 1])
    sample = np.sort(report[rng.permutation(n)[: (positions or n)]]) if n else np.zeros(0, int)
    won = report[ps.value[report] == np.where(ps.mover[report] == 0, 1, -1)]
    conv = np.sort(np.random.default_rng([seed, 2]).permutation(won)[:conversion])
    return {"sample": sample, "conversion": conv}


def held_to_value(margins_for_a) -> dict:
    """Games as B against a margin-maximising perfect A: the share B held to the game value (A won
    by at most 2, the margin of perfect play). ``a_short``: the games among them that A won by less
    than 2, a check: the margin tie-break's A keeps margin 2 from the empty board (its first two
    moves from the margin-2 proof, and margin 2 kept when a move runs out of budget), so any is a
    defect. Its margin is exact from ply 5 on, within a node budget; earlier or out of budget it keeps
    3 wherever B gave a third point (else 2), so a game ends at 2 exactly when B held A to it: the share
    is exact (the margins of the other games can be below a margin-exact A's)."""
    from highway_env.evaluation.metrics import _rate

    m = np.asarray(list(margins_for_a), np.int64)
    r = _rate(int((m <= GAME_VALUE_MARGIN).sum()), len(m))
    return {"games": len(m), "held": r["correct"], "rate": r["rate"], "ci95": r["ci95"],
            "a_short": int((m < GAME_VALUE_MARGIN).sum()),
            "mean_margin": float(m.mean()) if len(m) else None}


def evaluate(policy, *, frame: str = "absolute", batched: bool = False, positions: int = 3000,
             games: int = 24, conversion: int = 60, seed: int = 0, workers: int = 1, name: str | None = None,
             progress: bool = True, margin_games: int | None = None, positions_file=None,
             perfect_tiebreak: str = PERFECT["tiebreak"], perfect_options: dict | None = None) -> BenchmarkReport:
    """Grade ``policy`` against the exact solver and the perfect player.

    ``policy``: a callable on a PettingZoo observation dict returning an action (``batched=True``:
    on stacked observations, returning N actions), an ``agents.Agent``, an SB3 / sb3-contrib model,
    an OpenSpiel bot (``pyspiel.Bot`` or anything with ``step`` and ``restart_at``, or a pair
    ``(bot_for_a, bot_for_b)``; it plays ``python_highway`` states, whatever ``frame``), or an agent
    spec string (``agents.make_agent`` specs, ``module:attr``, ``sb3:PATH.zip``). ``frame``:
    ``"absolute"`` (``highway_v0.env()``'s observations) or ``"player"`` (``env(frame="player")``'s,
    actions in the mover's frame too). An illegal action raises :class:`PolicyError` naming the
    position and the action.

    Measures (as ``evaluate.py``): move accuracy on the critical positions among ``positions``
    rows sampled from the report part of the position set (``positions_file``, default set v1; 0 =
    all), by ply and side; margin given away and the margin-optimal rate; ``games`` games from the
    empty board against the perfect player on each side; ``conversion`` won positions played out
    against perfect defence; ``margin_games`` (default ``games``) games as B against a
    margin-maximising perfect A, and the share held to the game value (margin 2).

    ``perfect_tiebreak`` and ``perfect_options`` (keys of :data:`PERFECT`) set the perfect opponent
    as ``evaluate.py``'s ``--perfect-*`` options do. ``workers`` must be 1: the policy, the solver
    and the perfect player all run in this process. ``seed`` seeds the samples, the games and the
    ``rng`` handed to an ``agents.Agent``: the same seed and a reproducible policy give the same
    report. ``name`` titles the report (default: the spec string, the agent's name, or
    ``"policy"``); ``progress`` shows a tqdm bar on stderr. Set v2 is not graded here.
    """
    from highway_env.evaluation import metrics
    from highway_env.evaluation.position_set import load_positions
    from highway_env.evaluation.tasks import get_agent

    check_frame(frame)
    margin_games = games if margin_games is None else margin_games
    for arg, value, lo in (("positions", positions, 0), ("games", games, 0), ("conversion", conversion, 0),
                           ("workers", workers, 1), ("margin_games", margin_games, 0), ("seed", seed, 0)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < lo:
            raise ValueError(f"{arg} must be an integer >= {lo}, got {value!r}")
    if workers != 1:
        raise ValueError(f"workers must be 1 (the benchmark runs in this process), got {workers}")
    if perfect_tiebreak not in TIEBREAKS:
        raise ValueError(f"perfect_tiebreak must be one of {list(TIEBREAKS)}, got {perfect_tiebreak!r}")
    unknown = set(perfect_options or {}) - set(PERFECT)
    if unknown:
        raise ValueError(f"unknown perfect_options {sorted(unknown)}; known: {sorted(PERFECT)}")
    perfect = dict(PERFECT, **(perfect_options or {}), tiebreak=perfect_tiebreak)

    t0 = time.monotonic()
    # the opponent first: a bad perfect option is its error, never blamed on a perfect[:TIEBREAK] policy spec
    opponent = get_agent(f"perfect:{perfect_tiebreak}", perfect)
    agent = as_agent(policy, frame=frame, batched=batched, perfect=perfect)
    name = name or (policy if isinstance(policy, str) else getattr(agent, "name", None) or "policy")
    ps = load_positions(positions_file)
    plan = sample_plan(ps, positions, conversion, seed)
    sample, conv = plan["sample"], plan["conversion"]

    from tqdm import tqdm

    chunks = [sample[i:i + POSITION_BATCH] for i in range(0, len(sample), POSITION_BATCH)]
    bar = tqdm(total=len(chunks) + 4, desc=f"benchmark {name}", unit="step", disable=not progress,
               file=sys.stderr)
    a: dict = {}
    if len(sample):
        rng = np.random.default_rng([seed, 3])
        actions = []
        for idx in chunks:
            actions.append(agent.act_batch(ps.boards[idx], rng))
            bar.update(1)
        sub = ps.subset(sample)
        actions = np.concatenate(actions)
        a["accuracy"] = metrics.accuracy(sub, actions)
        a["margin_loss"] = metrics.margin_loss(sub, actions)
    played = []  # (kind, the perfect player's moves, unproven), as evaluate.py's tasks count them
    empty = np.zeros((games, 16), np.int8)
    for seat, key in ((0, "as_A_vs_perfect"), (1, "as_B_vs_perfect")):
        seeds = [[seed, 10 + seat, g] for g in range(games)]
        m, mv, un = play_seats(agent, opponent, empty, np.full(games, seat), seeds)
        played.append(("vs_perfect", mv, un))
        a[key] = metrics.games_vs_perfect(m)
        bar.update(1)
    m, mv, un = play_seats(agent, opponent, ps.boards[conv], ps.ply[conv] % 2, [[seed, 12, int(i)] for i in conv])
    played.append(("conversion", mv, un))
    a["conversion"] = metrics.conversion(m)
    bar.update(1)
    margin_opponent = get_agent("perfect:margin", perfect)
    m, mv, un = play_seats(agent, margin_opponent, np.zeros((margin_games, 16), np.int8),
                           np.ones(margin_games, int), [[seed, 13, g] for g in range(margin_games)])
    played.append(("vs_perfect", mv, un))
    a["as_B_vs_perfect_margin"] = held_to_value(-m)
    bar.update(1)
    bar.close()
    a["elo"] = None
    summary = {
        "config": {"agents": [name], "games": games, "rr_games": 0, "positions": int(len(sample)),
                   "conversion": int(len(conv)), "margin_games": margin_games, "seed": seed, "workers": workers,
                   "name": name, **observation_settings(agent),
                   "perfect_tiebreak": perfect_tiebreak,
                   **{f"perfect_{k}": v for k, v in perfect.items() if k not in ("store", "tiebreak")}},
        "position_set": {"file": str(positions_file or "highway_env/data/positions_v1.npz"),
                         "version": ps.meta.get("version"), "size": len(ps)},
        "agents": {name: a}, "round_robin": {}, "elo": {}, "elo_anchor": None,
        **metrics.perfect_moves(played), "wall_seconds": round(time.monotonic() - t0, 1),
        "provenance": provenance(),
    }
    return BenchmarkReport(summary)
