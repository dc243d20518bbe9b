"""Elo ratings from a round robin: a Bradley-Terry (logistic) fit with bootstrap confidence intervals.

A draw counts half a win for each side. Each pair gets ``prior`` virtual draws so that a clean sweep
gives a finite rating gap (the usual prior of BayesElo-style fits). Ratings are in Elo points
(400 * log10 odds), anchored so that ``anchor`` (default: the first player named ``random`` if
present, else the mean) is 0.
"""

from __future__ import annotations

import numpy as np

SCALE = 400.0 / np.log(10.0)  # natural-log strengths -> Elo points


def fit_bt(n_players: int, results, prior: float = 1.0, iters: int = 200) -> np.ndarray:
    """Strengths (Elo, mean 0) from results = [(i, j, wins_i, draws, wins_j), ...] by Newton's
    method on the logistic log-likelihood."""
    s = np.zeros((n_players, n_players))  # s[i, j] = score of i against j
    g = np.zeros((n_players, n_players))  # games between i and j
    for i, j, w, d, l in results:
        s[i, j] += w + 0.5 * d
        s[j, i] += l + 0.5 * d
        g[i, j] += w + d + l
    g = g + g.T
    played = g > 0
    s = s + 0.5 * prior * played
    g = g + prior * played
    r = np.zeros(n_players)
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(r[:, None] - r[None, :])))
        grad = (s - g * p).sum(axis=1)
        w = g * p * (1 - p)
        h = -np.diag(w.sum(axis=1)) + w
        h -= 1e-9 * np.eye(n_players)
        # fix the gauge: mean 0 (add the constraint as a rank-one term)
        h = h - np.ones((n_players, n_players)) / n_players
        step = np.linalg.solve(h, grad)
        r = r - step
        r -= r.mean()
        if np.abs(step).max() < 1e-10:
            break
    return r * SCALE


def elo_with_ci(names, results, anchor: str | None = "random", bootstrap: int = 500, seed: int = 0,
                prior: float = 1.0) -> dict:
    """name -> {"elo", "ci95": [lo, hi], "games"}; CIs by resampling each pair's games."""
    n = len(names)
    base = fit_bt(n, results, prior)
    rng = np.random.default_rng(seed)
    samples = np.empty((bootstrap, n))
    for b in range(bootstrap):
        res = []
        for i, j, w, d, l in results:
            tot = w + d + l
            if tot == 0:
                continue
            ww, dd, ll = rng.multinomial(tot, np.array([w, d, l]) / tot)
            res.append((i, j, ww, dd, ll))
        samples[b] = fit_bt(n, res, prior)
    if anchor in names:
        a = names.index(anchor)
        base, samples = base - base[a], samples - samples[:, a][:, None]
    games = np.zeros(n, int)
    for i, j, w, d, l in results:
        games[[i, j]] += w + d + l
    out = {}
    for k, name in enumerate(names):
        lo, hi = np.percentile(samples[:, k], [2.5, 97.5]) if bootstrap else (np.nan, np.nan)
        out[name] = {"elo": float(base[k]), "ci95": [float(lo), float(hi)], "games": int(games[k])}
    return out
