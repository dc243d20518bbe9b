"""Numba kernels of the batched search: selection, expansion, backup and root statistics.

The B trees of one search (:class:`agents.mcts.BatchedMCTS`) live in flat preallocated pools (no
Python object per node):

nodes (index n):  n_first[n], n_nedges[n]   its edges are n_first .. n_first + n_nedges - 1
                  n_toplay[n]               player to move (0/1)
                  n_terminal[n], n_tvalue[n] terminal flag and result for player 0
                  n_value[n]                network value for the player to move (FPU, Gumbel v_mix)
                  n_visits[n]               sum of its edges' visits
edges (index e):  e_action, e_logit, e_prior, e_visits, e_wsum (value sum for the player to move at
                  the parent), e_child (-1 until expanded), e_gumbel (root noise, Gumbel search)

The kernels know nothing about the game: the caller computes child states, legality and values.
Selection modes: 0 = PUCT (AlphaZero), 1 = UCT (random-rollout MCTS; unvisited edges first, in
prior order), 2 = Gumbel (sequential halving at the root, deterministic "pi' - N/(1+sum N)" below).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

PUCT, UCT, GUMBEL = 0, 1, 2


@nb.njit(cache=True)
def _completed_q(node, n_first, n_nedges, n_value, e_prior, e_visits, e_wsum, c_visit, c_scale, out):
    """Gumbel MuZero's completed, rescaled Q of the node's edges (qtransform_completed_by_mix_value):
    visited edges keep their mean value, unvisited ones get the mixed value estimate; the result is
    min-max rescaled to [0, 1] and scaled by (c_visit + max visits) * c_scale."""
    first = n_first[node]
    ne = n_nedges[node]
    sum_n = 0
    max_n = 0
    sum_p = 0.0
    wq = 0.0
    for i in range(ne):
        e = first + i
        n = e_visits[e]
        if n > 0:
            p = max(e_prior[e], 1e-30)
            sum_n += n
            max_n = max(max_n, n)
            sum_p += p
            wq += p * e_wsum[e] / n
    v_mix = n_value[node]
    if sum_n > 0:
        v_mix = (n_value[node] + sum_n * (wq / sum_p)) / (sum_n + 1)
    lo = 1e30
    hi = -1e30
    for i in range(ne):
        e = first + i
        q = e_wsum[e] / e_visits[e] if e_visits[e] > 0 else v_mix
        out[i] = q
        lo = min(lo, q)
        hi = max(hi, q)
    scale = (c_visit + max_n) * c_scale / max(hi - lo, 1e-8)
    for i in range(ne):
        out[i] = (out[i] - lo) * scale


@nb.njit(cache=True)
def select(roots, mode, c_puct, c_visit, c_scale, table, num_considered,
           n_first, n_nedges, n_terminal, n_value, n_visits,
           e_prior, e_logit, e_visits, e_wsum, e_child, e_gumbel,
           path_nodes, path_edges, path_len, leaf_edge):
    """Descend every tree from its root to an unexpanded edge (leaf_edge[b] >= 0) or to a terminal
    node (leaf_edge[b] = -1). path_nodes[b, :path_len[b] + 1] / path_edges[b, :path_len[b]] record
    the way down (the last node is the terminal node, or the parent of leaf_edge)."""
    max_edges = 0
    for b in range(roots.shape[0]):
        max_edges = max(max_edges, n_nedges[roots[b]])
    buf = np.empty(max(max_edges, 1) + 1024, np.float64)
    for b in range(roots.shape[0]):
        node = roots[b]
        depth = 0
        path_nodes[b, 0] = node
        leaf_edge[b] = -1
        while not n_terminal[node]:
            first = n_first[node]
            ne = n_nedges[node]
            if ne > buf.shape[0]:
                buf = np.empty(ne, np.float64)
            best = -1
            best_score = -math.inf
            if mode == GUMBEL:
                _completed_q(node, n_first, n_nedges, n_value, e_prior, e_visits, e_wsum,
                             c_visit, c_scale, buf)
                if depth == 0:
                    # sequential halving: only edges with the scheduled visit count compete
                    want = table[num_considered[b], n_visits[node]]
                    max_logit = -math.inf
                    for i in range(ne):
                        max_logit = max(max_logit, e_logit[first + i])
                    for pas in range(2):  # second pass (no edge at `want`) cannot normally happen
                        for i in range(ne):
                            e = first + i
                            if pas == 0 and e_visits[e] != want:
                                continue
                            s = max(-1e9, e_gumbel[e] + e_logit[e] - max_logit + buf[i])
                            if s > best_score:
                                best_score = s
                                best = e
                        if best >= 0:
                            break
                else:
                    # argmax of softmax(logits + completed q) - N / (1 + sum N)
                    mx = -math.inf
                    for i in range(ne):
                        buf[i] += e_logit[first + i]
                        mx = max(mx, buf[i])
                    z = 0.0
                    for i in range(ne):
                        buf[i] = math.exp(buf[i] - mx)
                        z += buf[i]
                    inv = 1.0 / (1.0 + n_visits[node])
                    for i in range(ne):
                        e = first + i
                        s = buf[i] / z - e_visits[e] * inv
                        if s > best_score:
                            best_score = s
                            best = e
            elif mode == UCT:
                log_n = math.log(max(n_visits[node], 1))
                for i in range(ne):
                    e = first + i
                    n = e_visits[e]
                    if n == 0:
                        s = 1e12 + e_prior[e]  # unvisited first, in prior order
                    else:
                        s = e_wsum[e] / n + c_puct * math.sqrt(log_n / n)
                    if s > best_score:
                        best_score = s
                        best = e
            else:  # PUCT
                sq = c_puct * math.sqrt(max(n_visits[node], 1))
                fpu = n_value[node]
                for i in range(ne):
                    e = first + i
                    n = e_visits[e]
                    q = e_wsum[e] / n if n > 0 else fpu
                    s = q + sq * e_prior[e] / (1 + n)
                    if s > best_score:
                        best_score = s
                        best = e
            path_edges[b, depth] = best
            depth += 1
            child = e_child[best]
            if child < 0:
                leaf_edge[b] = best
                break
            node = child
            path_nodes[b, depth] = node
        path_len[b] = depth


@nb.njit(cache=True)
def expand(nodes, parent_edges, to_play, terminal, tvalue, values, logits, legal, edge_top,
           n_first, n_nedges, n_toplay, n_terminal, n_tvalue, n_value, n_visits,
           e_action, e_logit, e_prior, e_visits, e_wsum, e_child, e_gumbel):
    """Create nodes[k] (child of parent_edges[k], or a root if -1) with one edge per legal action.

    Non-finite logits (NaN, +-inf) are treated as 0, so a broken network output gives a uniform
    prior over the *legal* actions; illegal actions never get an edge. Returns the new edge_top."""
    for k in range(nodes.shape[0]):
        n = nodes[k]
        if parent_edges[k] >= 0:
            e_child[parent_edges[k]] = n
        n_toplay[n] = to_play[k]
        n_terminal[n] = terminal[k]
        n_tvalue[n] = tvalue[k]
        n_value[n] = values[k]
        n_visits[n] = 0
        n_first[n] = edge_top
        n_nedges[n] = 0
        if terminal[k]:
            continue
        first = edge_top
        mx = np.float32(-1e4)
        for a in range(legal.shape[1]):
            if legal[k, a]:
                x = logits[k, a]
                if not np.isfinite(x):
                    x = np.float32(0.0)
                x = min(max(x, np.float32(-1e4)), np.float32(1e4))
                e_action[edge_top] = a
                e_logit[edge_top] = x
                e_child[edge_top] = -1  # visits, wsum and gumbel start at 0 (fresh pools)
                mx = max(mx, x)
                edge_top += 1
        z = np.float32(0.0)
        for e in range(first, edge_top):
            p = np.float32(math.exp(e_logit[e] - mx))
            e_prior[e] = p
            z += p
        inv = np.float32(1.0) / z
        for e in range(first, edge_top):
            e_prior[e] *= inv
        n_nedges[n] = edge_top - first
    return edge_top


@nb.njit(cache=True)
def backup(path_nodes, path_edges, path_len, values, n_toplay, n_visits, e_visits, e_wsum):
    """Add values[b] (the result for player 0) along each tree's path, from each mover's side."""
    for b in range(path_len.shape[0]):
        v = values[b]
        for d in range(path_len[b]):
            node = path_nodes[b, d]
            e = path_edges[b, d]
            e_visits[e] += 1
            e_wsum[e] += v if n_toplay[node] == 0 else -v
            n_visits[node] += 1


@nb.njit(cache=True)
def root_visits(roots, n_first, n_nedges, e_action, e_visits, e_wsum, visits_out, q_out):
    """visits_out (B, A) / q_out (B, A) <- root edge visit counts and mean values (0 if unvisited)."""
    for b in range(roots.shape[0]):
        r = roots[b]
        for e in range(n_first[r], n_first[r] + n_nedges[r]):
            a = e_action[e]
            visits_out[b, a] = e_visits[e]
            if e_visits[e] > 0:
                q_out[b, a] = e_wsum[e] / e_visits[e]


@nb.njit(cache=True)
def gumbel_root(roots, c_visit, c_scale, n_first, n_nedges, n_value, e_action, e_logit, e_prior,
                e_visits, e_wsum, e_gumbel, policy_out, action_out):
    """Gumbel search result per root: the action (the most visited edges compete on gumbel + logit +
    completed q) and the improved policy target softmax(logit + completed q) over the legal edges."""
    buf = np.empty(1, np.float64)
    for b in range(roots.shape[0]):
        r = roots[b]
        first = n_first[r]
        ne = n_nedges[r]
        if buf.shape[0] < ne:
            buf = np.empty(ne, np.float64)
        _completed_q(r, n_first, n_nedges, n_value, e_prior, e_visits, e_wsum, c_visit, c_scale, buf)
        max_n = 0
        mx = -math.inf
        for i in range(ne):
            max_n = max(max_n, e_visits[first + i])
            mx = max(mx, e_logit[first + i] + buf[i])
        best = -1
        best_s = -math.inf
        z = 0.0
        for i in range(ne):
            e = first + i
            p = math.exp(e_logit[e] + buf[i] - mx)
            policy_out[b, e_action[e]] = p
            z += p
            if e_visits[e] == max_n:
                s = e_gumbel[e] + e_logit[e] + buf[i]
                if s > best_s:
                    best_s = s
                    best = e
        for i in range(ne):
            policy_out[b, e_action[first + i]] /= z
        action_out[b] = e_action[best] if best >= 0 else -1


def considered_visits_table(max_considered: int, simulations: int) -> np.ndarray:
    """(max_considered + 1, simulations) int32: row m is the visit count an edge must have to be
    picked at each simulation when m actions are considered (sequential halving, as in mctx)."""
    table = np.zeros((max_considered + 1, max(simulations, 1)), np.int32)
    for m in range(max_considered + 1):
        if m <= 1:
            table[m] = np.arange(table.shape[1])
            continue
        log2max = int(math.ceil(math.log2(m)))
        seq, visits, considered = [], [0] * m, m
        while len(seq) < simulations:
            extra = max(1, int(simulations / (log2max * considered)))
            for _ in range(extra):
                seq.extend(visits[:considered])
                for i in range(considered):
                    visits[i] += 1
            considered = max(2, considered // 2)
        table[m] = seq[:simulations]
    return table
