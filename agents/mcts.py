"""Batched tree search: PUCT (AlphaZero), Gumbel AlphaZero root, and UCT with random rollouts.

``BatchedMCTS(game, evaluator, config).run(states, rng)`` searches B positions at once: each round
descends every tree once (:mod:`agents.mcts_kernels`), evaluates all new leaves in ONE evaluator
call, then expands and backs up. Each node stores its state (16 bytes for Highway), so no action
sequence is replayed from the root.

Evaluators map states to ``(logits, values[, scores])``: logits (N, A) over *board* actions,
values (N,) and the optional predicted score (``Game.scores``), both for the player to move.

Margin-aware search (``SearchConfig.margin_weight`` = w > 0) maximises the utility
``(1 - w) * value + w * tanh(score)``, at the leaves and at terminal positions. As w < 0.5 and
tanh < 1, every win still ranks above every draw and every draw above every loss; among wins (or
losses) a larger margin for the mover ranks higher.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np

from agents import mcts_kernels as K
from agents.game import Game, GameError


class ConfigError(ValueError):
    """A configuration value (search, network or training) is invalid; the message names the field
    and the value."""


@dataclass
class SearchConfig:
    kind: str = "gumbel"  # "gumbel", "puct" or "uct" (uct = random-rollout MCTS)
    simulations: int = 32
    c_puct: float = 1.25  # PUCT exploration; for UCT the UCB1 constant
    dirichlet_alpha: float = 0.3  # PUCT root noise (self-play only)
    dirichlet_eps: float = 0.25
    max_considered: int = 16  # Gumbel: actions sampled at the root
    gumbel_scale: float = 1.0  # Gumbel: 0 = no noise (deterministic play)
    c_visit: float = 50.0  # Gumbel sigma(q) = (c_visit + max N) * c_scale * q
    c_scale: float = 1.0
    margin_weight: float = 0.0  # weight of the score head in the searched utility (see the module doc)

    def validate(self) -> "SearchConfig":
        if self.kind not in ("gumbel", "puct", "uct"):
            raise ConfigError(f"search kind must be 'gumbel', 'puct' or 'uct', got {self.kind!r}")
        for name in ("simulations", "max_considered"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        for name in ("c_puct", "dirichlet_alpha", "c_visit", "c_scale"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if not 0 <= self.dirichlet_eps <= 1:
            raise ConfigError(f"dirichlet_eps must be in [0, 1], got {self.dirichlet_eps!r}")
        if not 0 <= self.margin_weight < 0.5:
            raise ConfigError(f"margin_weight must be in [0, 0.5), got {self.margin_weight!r}")
        if not self.gumbel_scale >= 0:
            raise ConfigError(f"gumbel_scale must be >= 0, got {self.gumbel_scale!r}")
        return self

    def to_dict(self) -> dict:
        return asdict(self)


class SearchResult(NamedTuple):
    actions: np.ndarray  # (B,) chosen board actions
    policy: np.ndarray  # (B, A) policy target in the board frame (visits or Gumbel improved policy)
    visits: np.ndarray  # (B, A) root visit counts
    root_value: np.ndarray  # (B,) search value for the player to move at the root


# ----------------------------------------------------------------------------- evaluators

class UniformEvaluator:
    """Flat prior, value 0: search guided by nothing but the tree (used to benchmark the search)."""

    def __init__(self, game: Game):
        self.game = game

    def __call__(self, states):
        n = len(states)
        return np.zeros((n, self.game.num_actions), np.float32), np.zeros(n, np.float32)


class RolloutEvaluator:
    """Value = result of one uniformly random playout; prior = random logits, which only breaks ties
    (UCT visits unvisited edges in prior order, so this visits them in random order)."""

    def __init__(self, game: Game, rng: np.random.Generator):
        self.game = game
        self.rng = rng

    def __call__(self, states):
        r0 = self.game.rollout(states, self.rng)
        sign = np.where(self.game.to_play(states) == 0, 1.0, -1.0)
        logits = self.rng.random((len(states), self.game.num_actions), dtype=np.float32)
        return logits, (r0 * sign).astype(np.float32)


class NetworkEvaluator:
    """Runs the policy/value net on the states' observations; view-frame logits -> board frame.
    Returns ``(logits, values, scores)``."""

    def __init__(self, game: Game, net, device: str = "cpu"):
        import torch  # here, not at the top: the other evaluators (mcts:N, benchmarks) run without it

        self.game = game
        self.net = net
        self.device = torch.device(device)

    def __call__(self, states):
        import torch

        with torch.inference_mode():
            obs = torch.from_numpy(self.game.observations(states)).to(self.device)
            # eval() walks every submodule: a search calls this once per simulation, so only a net
            # left in training mode (a trainer's) is switched, and switched back
            was_training = self.net.training
            if was_training:
                self.net.eval()
            logits_v, value, score = self.net(obs)
            if was_training:
                self.net.train()
            # view frame -> board frame: torch's scatter moves the same floats ~7x faster than
            # numpy's fancy-index assignment (a search calls this once per simulation)
            logits_v = logits_v.float().cpu()
            # a game may give a read-only broadcast or another integer type: scatter_ takes neither
            to_board = torch.from_numpy(np.ascontiguousarray(self.game.view_to_board(states), np.int64))
            logits = torch.empty_like(logits_v).scatter_(1, to_board, logits_v)
        return logits.numpy(), value.float().cpu().numpy(), score.float().cpu().numpy()

    def policy_moves(self, states) -> np.ndarray:
        """(N,) int64: the raw policy's move in each state, its legal board action of highest logit."""
        logits = np.nan_to_num(self(states)[0], nan=0.0)
        return np.where(self.game.legal_masks(states), logits, -np.inf).argmax(axis=1).astype(np.int64)


# ----------------------------------------------------------------------------- the search

_NODE_ARRAYS = {"n_first": np.int64, "n_nedges": np.int32, "n_toplay": np.int8, "n_terminal": np.bool_,
                "n_tvalue": np.float32, "n_value": np.float32, "n_visits": np.int32}
_EDGE_ARRAYS = {"e_action": np.int32, "e_logit": np.float32, "e_prior": np.float32, "e_visits": np.int32,
                "e_wsum": np.float32, "e_child": np.int32, "e_gumbel": np.float32}


class _Pools:
    """Flat node/edge arrays shared by the B trees of one search (see mcts_kernels); fresh (zeroed)
    for every search, which the expand kernel relies on."""

    def __init__(self, game: Game, max_nodes: int, max_edges: int):
        for k, dtype in _NODE_ARRAYS.items():
            setattr(self, k, np.zeros(max_nodes, dtype))
        for k, dtype in _EDGE_ARRAYS.items():
            setattr(self, k, np.zeros(max_edges, dtype))
        self.states = np.zeros((max_nodes, *game.state_shape), game.state_dtype)
        self.node_top = 0
        self.edge_top = 0

    def ensure_edges(self, extra: int):
        need = self.edge_top + extra
        if need <= len(self.e_action):
            return
        size = max(need, 2 * len(self.e_action))
        for k, dtype in _EDGE_ARRAYS.items():
            new = np.zeros(size, dtype)
            new[: self.edge_top] = getattr(self, k)[: self.edge_top]
            setattr(self, k, new)

    def expand(self, parent_edges, states, to_play, terminal, tvalue, values, logits, legal):
        k = len(states)
        nodes = np.arange(self.node_top, self.node_top + k, dtype=np.int64)
        self.node_top += k
        self.states[nodes] = states
        self.ensure_edges(int(np.count_nonzero(legal)))  # a bool array: far quicker than sum
        self.edge_top = K.expand(
            nodes, parent_edges, to_play, terminal, tvalue, values, logits, legal, self.edge_top,
            self.n_first, self.n_nedges, self.n_toplay, self.n_terminal, self.n_tvalue, self.n_value,
            self.n_visits, self.e_action, self.e_logit, self.e_prior, self.e_visits, self.e_wsum,
            self.e_child, self.e_gumbel)
        return nodes


def _scatter_rows(rows: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``rows`` placed at the True entries of ``where``, zeros elsewhere."""
    out = np.zeros((len(where), *rows.shape[1:]), rows.dtype)
    out[where] = rows
    return out


class BatchedMCTS:
    """Search B positions at once with one evaluator call per round. See the module docstring."""

    def __init__(self, game: Game, evaluator, config: SearchConfig | None = None):
        self.game = game
        self.evaluator = evaluator
        self.config = (config or SearchConfig()).validate()
        self.mode = {"puct": K.PUCT, "uct": K.UCT, "gumbel": K.GUMBEL}[self.config.kind]
        c = self.config
        # more considered actions than the game has are all of them (--max-considered 10**20 would
        # ask numpy for a table of that many rows)
        self._max_considered = min(c.max_considered, game.num_actions)
        self._table = K.considered_visits_table(self._max_considered, c.simulations)

    def _evaluate(self, states):
        """Logits (board frame), values for the mover, legal masks, to_play, terminal, result."""
        g = self.game
        n, w = len(states), self.config.margin_weight
        to_play = g.to_play(states).astype(np.int8)
        terminal = g.terminal(states)
        tvalue = np.zeros(n, np.float32)
        if terminal.any():
            t = states[terminal]
            tvalue[terminal] = g.returns(t) if not w else (1 - w) * g.returns(t) + w * np.tanh(g.scores(t))
        live = ~terminal
        if not live.any():
            return (np.zeros((n, g.num_actions), np.float32), np.zeros(n, np.float32),
                    np.zeros((n, g.num_actions), np.bool_), to_play, terminal, tvalue)
        s = states[live]
        out = self.evaluator(s)
        v = np.asarray(out[1], np.float32)
        v = np.where(np.isfinite(v), v, 0.0).clip(-1, 1)
        if w and len(out) > 2:  # an evaluator without a score searches the value alone
            sc = np.asarray(out[2], np.float32)
            v = (1 - w) * v + w * np.tanh(np.where(np.isfinite(sc), sc, 0.0))
        logits, values, legal = (np.asarray(out[0], np.float32), v.astype(np.float32),
                                 np.asarray(g.legal_masks(s), np.bool_))
        if len(s) < n:  # terminal states among them: zeros in their rows
            logits, values, legal = (_scatter_rows(x, live) for x in (logits, values, legal))
        return logits, values, legal, to_play, terminal, tvalue

    def run(self, states, rng: np.random.Generator, *, noise: bool = True,
            temperature=0.0) -> SearchResult:
        """Search each of the B states (none terminal). ``noise`` adds Dirichlet (PUCT) / Gumbel
        noise at the roots (self-play); ``temperature`` (scalar or (B,)) is used by PUCT/UCT to
        pick the move from the visit counts (0 = most visited, ties broken at random)."""
        g, c = self.game, self.config
        states = g.as_states(states)
        B = len(states)
        if B == 0:
            raise GameError("no states to search")
        if g.terminal(states).any():
            raise GameError(f"cannot search a terminal state (index {int(np.argmax(g.terminal(states)))})")
        logits, values, legal, to_play, terminal, tvalue = self._evaluate(states)
        nlegal = legal.sum(axis=1)
        if not nlegal.all():
            raise GameError("a non-terminal state has no legal action")
        nodes = B * (c.simulations + 1)
        # edges: room for every node to have as many as the roots' most (they grow where a game's
        # positions gain actions); zeroing room for all actions cost ~1 ms a search once most are illegal
        P = _Pools(g, nodes, min(nodes * int(nlegal.max()), 1 << 26))
        roots = P.expand(np.full(B, -1, np.int64), states, to_play, terminal, tvalue, values, logits, legal)
        root_edges = np.arange(P.edge_top)  # the roots' edges are the first ones, in order
        root_of_edge = np.repeat(np.arange(B), nlegal)
        if noise and c.kind == "puct":
            gam = rng.gamma(c.dirichlet_alpha, size=len(root_edges))
            tot = np.bincount(root_of_edge, weights=gam, minlength=B)
            dirichlet = gam / np.maximum(tot[root_of_edge], 1e-12)
            eps = c.dirichlet_eps
            P.e_prior[root_edges] = (1 - eps) * P.e_prior[root_edges] + eps * dirichlet
        if c.kind == "gumbel" and noise and c.gumbel_scale > 0:
            P.e_gumbel[root_edges] = c.gumbel_scale * rng.gumbel(size=len(root_edges))
        num_considered = np.minimum(self._max_considered, nlegal).astype(np.int64)

        L = g.max_game_length + 1
        path_nodes = np.zeros((B, L + 1), np.int64)
        path_edges = np.zeros((B, L), np.int64)
        path_len = np.zeros(B, np.int64)
        leaf_edge = np.zeros(B, np.int64)
        values0 = np.zeros(B, np.float32)
        trees = np.arange(B)
        for _ in range(c.simulations):
            K.select(roots, self.mode, c.c_puct, c.c_visit, c.c_scale, self._table, num_considered,
                     P.n_first, P.n_nedges, P.n_terminal, P.n_value, P.n_visits,
                     P.e_prior, P.e_logit, P.e_visits, P.e_wsum, P.e_child, P.e_gumbel,
                     path_nodes, path_edges, path_len, leaf_edge)
            new = leaf_edge >= 0
            # last node on the path: the parent of the new leaf, or the terminal node reached
            end_nodes = path_nodes[trees, path_len - new]
            values0[:] = P.n_tvalue[end_nodes]  # games that reached a known terminal node
            if new.any():
                edges = leaf_edge[new]
                child = g.apply(P.states[end_nodes[new]], P.e_action[edges])
                lg, v, lm, tp, term, tv = self._evaluate(child)
                P.expand(edges, child, tp, term, tv, v, lg, lm)
                values0[new] = np.where(term, tv, np.where(tp == 0, v, -v))
            K.backup(path_nodes, path_edges, path_len, values0, P.n_toplay, P.n_visits,
                     P.e_visits, P.e_wsum)
        return self._result(P, roots, rng, temperature)

    def _result(self, P: _Pools, roots, rng, temperature) -> SearchResult:
        g, c = self.game, self.config
        B = len(roots)
        visits = np.zeros((B, g.num_actions), np.float32)
        q = np.zeros((B, g.num_actions), np.float32)
        K.root_visits(roots, P.n_first, P.n_nedges, P.e_action, P.e_visits, P.e_wsum, visits, q)
        root_value = np.where(visits.sum(1) > 0, (visits * q).sum(1) / np.maximum(visits.sum(1), 1),
                              P.n_value[roots])
        if c.kind == "gumbel":
            policy = np.zeros((B, g.num_actions), np.float32)
            actions = np.zeros(B, np.int64)
            K.gumbel_root(roots, c.c_visit, c.c_scale, P.n_first, P.n_nedges, P.n_value, P.e_action,
                          P.e_logit, P.e_prior, P.e_visits, P.e_wsum, P.e_gumbel, policy, actions)
            return SearchResult(actions, policy, visits, root_value.astype(np.float32))
        policy = visits / visits.sum(axis=1, keepdims=True)
        return SearchResult(pick_from_visits(visits, temperature, rng, q if c.margin_weight else None),
                            policy, visits, root_value.astype(np.float32))


def pick_from_visits(visits: np.ndarray, temperature, rng: np.random.Generator,
                     q: np.ndarray | None = None) -> np.ndarray:
    """Sample actions with probability ~ visits^(1/T); T = 0 picks the most visited (random ties),
    or, given the root's ``q``, the best q among the actions with at least half the most visits
    (the margin-aware search: its utilities differ by a small margin term, which visit counts
    barely separate). Only actions with visits > 0 can be picked (all of them are legal)."""
    B = len(visits)
    t = np.broadcast_to(np.asarray(temperature, np.float64), (B,))
    out = np.empty(B, np.int64)
    noise = rng.random(visits.shape)  # tie-break / sampling draws, same count whatever T is
    for b in range(B):
        v = visits[b].astype(np.float64)
        if t[b] <= 0:
            best = v == v.max()
            if q is not None:
                well = v >= 0.5 * v.max()
                best = well & (q[b] == q[b][well].max())
            out[b] = int(np.argmax(np.where(best, noise[b], -1.0)))
        else:
            p = np.where(v > 0, v ** (1.0 / t[b]), 0.0)
            cdf = np.cumsum(p / p.sum())
            out[b] = int(min(np.searchsorted(cdf, noise[b, 0] * cdf[-1], side="right"), len(v) - 1))
            while v[out[b]] <= 0:  # guard against float edge cases
                out[b] -= 1
    return out
