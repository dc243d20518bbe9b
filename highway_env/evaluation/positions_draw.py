"""Drawing the candidates of a position set: games from the empty board by varied players (set v1:
SOURCES, set v2: STRONG_SOURCES; see :mod:`.positions`), every position of which is a candidate,
then :func:`select` per ply. A build tool: the reader is :mod:`.position_set`."""

from __future__ import annotations

import numpy as np

from highway_env.core import CELLS, Board
from highway_env.evaluation.positions_label import worker_solver

SOURCES = ("random", "mcts", "az", "perfect")
#: The noisy-perfect games use the solver from this ply on (before: the AlphaZero policy + noise).
PERFECT_SOLVER_FROM = 7

#: Set v2: positions from strong play (v1's critical positions are easier than a strong opponent's):
#: the shipped AlphaZero with search against itself (``az_self``) and against the perfect player
#: (``az_perfect``, on each side in half the games); lines diverge by STRONG_NOISE random moves.
STRONG_SOURCES = ("az_self", "az_perfect")
STRONG_NOISE = 0.1
STRONG_SIMULATIONS = 100
#: games per worker task
GAMES_CHUNK = 25


def _eps_mix(actions, states, game, rng, eps):
    from agents.game import sample_legal

    rand = sample_legal(game.legal_masks(states), rng)
    flip = rng.random(len(states)) < eps
    return np.where(flip, rand, actions)


class _Policy:
    """``policy(states, ply, rng)`` as the one player of both sides in :func:`agents.arena.play_out`:
    the games start together, so every call gets all of them at the same ply."""

    def __init__(self, policy):
        self.policy = policy

    def act_batch(self, states, rng):
        return self.policy(states, int(np.count_nonzero(states[0])), rng)


def _play(game, n, policy, rng) -> np.ndarray:
    """(n, 17, 16) every position of n games (ply 0..16) with ``policy(states, ply, rng)``, one call
    per ply for all games: a policy that mixes both sides' moves with noise drawn over the whole
    batch (the v2 games) draws its randomness in the order the shipped sets were built with."""
    from agents.arena import play_out

    hist = []
    player = _Policy(policy)
    play_out(game, game.initial_states(n), (player, player), np.zeros(n, np.int64), (rng, rng), history=hist)
    return np.stack(hist, axis=1)


def _perfect_games(args):
    """Worker: ``n`` noisy-perfect games, the AlphaZero policy with 30 % random moves before ply
    ``solver_from``, then the solver's move with 20 % random moves; returns (n, 17, 16)."""
    n, seed, solver_from = args
    import agents
    from agents.game import sample_legal
    from agents.registry import get_game

    game = get_game("highway")
    rng = np.random.default_rng(seed)
    az = agents.load_pretrained(simulations=0, seed=seed)

    def policy(states, ply, rng):
        if ply < solver_from:
            return _eps_mix(az.act_batch(states, rng), states, game, rng, 0.3)
        out = sample_legal(game.legal_masks(states), rng)
        for i in range(len(states)):
            if rng.random() >= 0.2:
                out[i] = worker_solver().solve(Board(tuple(int(v) for v in states[i]))).best
        return out

    return _play(game, n, policy, rng)


def _strong_games(args):
    """Worker: ``n`` games of the shipped AlphaZero (PUCT, ``sims`` simulations) against ``opponent``
    ("az": itself; "perfect": the perfect player, on B in even games, on A in odd ones), each move
    random with probability STRONG_NOISE; returns (n, 17, 16)."""
    n, seed, opponent, sims = args
    import agents
    from agents.registry import get_game, make_agent

    game = get_game("highway")
    rng = np.random.default_rng(seed)
    az = agents.load_pretrained(simulations=sims, seed=seed)
    opp = az if opponent == "az" else make_agent("perfect:random", game, seed=seed)
    az_seat = np.arange(n) % 2  # az is A in even games

    def policy(states, ply, rng):
        out = np.empty(len(states), np.int64)
        for who, rows in ((az, az_seat == ply % 2), (opp, az_seat != ply % 2)):
            if rows.any():
                out[rows] = who.act_batch(states[rows], rng)
        return _eps_mix(out, states, game, rng, STRONG_NOISE)

    return _play(game, n, policy, rng)


def _games_in_chunks(worker, jobs: list, desc: str, pool, progress: bool) -> np.ndarray:
    """(games, 17, 16): the games of ``worker`` over ``jobs`` (in ``pool`` if given), in job order."""
    from tqdm import tqdm

    mapper = pool.imap if pool is not None else map
    return np.concatenate(list(tqdm(mapper(worker, jobs), total=len(jobs), desc=desc, disable=not progress)))


def draw_strong_candidates(games_per_source: int, seed: int, pool=None, progress=True) -> dict[str, np.ndarray]:
    """source -> (games, 17, 16) positions of the strong-play games of set v2 (STRONG_SOURCES)."""
    out = {}
    for name, opponent in zip(STRONG_SOURCES, ("az", "perfect")):
        jobs = [(min(GAMES_CHUNK, games_per_source - i), [seed, len(out), i], opponent, STRONG_SIMULATIONS)
                for i in range(0, games_per_source, GAMES_CHUNK)]
        out[name] = _games_in_chunks(_strong_games, jobs, f"{name} games", pool, progress)
    return out


def draw_candidates(games_per_source: int, seed: int, pool=None, progress=True,
                    perfect_games: int | None = None) -> dict[str, np.ndarray]:
    """source -> (games, 17, 16) positions of the games played by that source (SOURCES)."""
    import agents
    from agents.game import sample_legal
    from agents.registry import get_game, make_agent

    game = get_game("highway")
    out = {}
    rng = np.random.default_rng([seed, 0])
    out["random"] = _play(game, games_per_source, lambda s, p, r: sample_legal(game.legal_masks(s), r), rng)
    rng = np.random.default_rng([seed, 1])
    mcts = make_agent("mcts:64", game, seed=seed)
    out["mcts"] = _play(game, games_per_source, lambda s, p, r: _eps_mix(mcts.act_batch(s, r), s, game, r, 0.1), rng)
    rng = np.random.default_rng([seed, 2])
    az = agents.load_pretrained(simulations=0, seed=seed)
    out["az"] = _play(game, games_per_source, lambda s, p, r: _eps_mix(az.act_batch(s, r), s, game, r, 0.15), rng)
    ng = games_per_source if perfect_games is None else perfect_games
    jobs = [(min(GAMES_CHUNK, ng - i), seed * 100_003 + i, PERFECT_SOLVER_FROM) for i in range(0, ng, GAMES_CHUNK)]
    out["perfect"] = _games_in_chunks(_perfect_games, jobs, "perfect-with-noise games", pool, progress)
    return out


def canonical_array(boards: np.ndarray) -> np.ndarray:
    """(N, 16) -> (N, 16) each board's canonical representative (the position key's cells)."""
    from highway_env.solver.store import canonical_cells

    return np.array([canonical_cells(b)[0] for b in np.asarray(boards)], np.int8).reshape(-1, CELLS)


def select(candidates: dict[str, np.ndarray], per_ply: dict[int, int], seed: int, sources=SOURCES,
           exclude=()):
    """Deduplicate modulo symmetry and pick up to per_ply[p] positions per ply, balanced across sources,
    none of the canonical boards in ``exclude`` (bytes). Returns (boards, ply, source) sorted by ply."""
    rng = np.random.default_rng([seed, 9])
    seen = set(exclude)
    pools: dict[int, dict[int, np.ndarray]] = {p: {} for p in per_ply}  # ply -> source -> shuffled boards
    for s, name in enumerate(sources):
        for p in per_ply:
            canon = canonical_array(candidates[name][:, p])
            pools[p][s] = canon[rng.permutation(len(canon))]
    boards, plies, picked_from = [], [], []
    for p in sorted(per_ply):
        queues = {s: iter(pools[p][s]) for s in pools[p]}  # each source's turn in order, while it has boards
        got = 0
        while got < per_ply[p] and queues:
            for s, queue in list(queues.items()):
                b = next((b for b in queue if b.tobytes() not in seen), None)
                if b is None:
                    del queues[s]
                    continue
                seen.add(b.tobytes())
                boards.append(b)
                plies.append(p)
                picked_from.append(s)
                got += 1
                if got >= per_ply[p]:
                    break
    return np.array(boards, np.int8).reshape(-1, CELLS), np.array(plies, np.int8), np.array(picked_from, np.int8)
