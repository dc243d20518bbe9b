#!/usr/bin/env python
"""Benchmark the AlphaZero pieces on one core: network positions/s, search simulations/s, self-play
games/s. The search is compared with OpenSpiel's Python ``MCTSBot`` on connect_four measured in the
same run when ``open_spiel`` is importable (pip install open-spiel), otherwise with a plain-Python
UCT on Highway. For a like-for-like comparison the batched search also runs connect_four, through a
small numpy implementation of the game protocol defined here (benchmark only).

    python bench/bench_agents.py            # ~1 minute
    python bench/bench_agents.py --quick    # a few seconds, smaller sizes
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.game import Game
from agents.mcts import BatchedMCTS, NetworkEvaluator, RolloutEvaluator, SearchConfig, UniformEvaluator
from agents.network import NetConfig, build_network
from agents.selfplay import play_games
from highway_env import core
from highway_env.az_game import HighwayGame
from highway_env.cli_args import OneLineErrorParser, positive_int


# ----------------------------------------------------------------------------- connect four

def _c4_lines() -> np.ndarray:
    lines = []
    for r in range(6):
        for c in range(7):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < 6 and 0 <= cc < 7 for rr, cc in cells):
                    lines.append([rr * 7 + cc for rr, cc in cells])
    return np.array(lines)


class ConnectFour(Game):
    """Connect four as a Game (numpy, vectorised): state = 42 cells (row 0 on top), 0 empty, 1/2
    the players' stones; player 0 moves first."""

    name = "connect_four"
    num_actions = 7
    state_shape = (42,)
    obs_shape = (6, 7, 2)
    max_game_length = 42
    LINES = _c4_lines()

    def initial_states(self, n):
        return np.zeros((n, 42), np.int8)

    def _winner(self, s):
        v = s[:, self.LINES]  # (N, 69, 4)
        w1 = (v == 1).all(2).any(1)
        w2 = (v == 2).all(2).any(1)
        return np.where(w1, 1, np.where(w2, 2, 0))

    def terminal(self, s):
        return (self._winner(s) > 0) | (s != 0).all(1)

    def legal_masks(self, s):
        return (s[:, :7] == 0) & ~self.terminal(s)[:, None]

    def to_play(self, s):
        return ((s != 0).sum(1) % 2).astype(np.int8)

    def apply(self, s, actions):
        out = s.copy()
        cols = out.reshape(-1, 6, 7)[np.arange(len(s)), :, actions]  # (N, 6) the column, top first
        row = 5 - np.argmax(cols[:, ::-1] == 0, axis=1)  # lowest empty row
        out[np.arange(len(s)), row * 7 + actions] = self.to_play(s) + 1
        return out

    def returns(self, s):
        w = self._winner(s)
        return np.where(w == 1, 1.0, np.where(w == 2, -1.0, 0.0)).astype(np.float32)

    def observations(self, s):
        me = self.to_play(s)[:, None] + 1
        return np.stack([s == me, (s != 0) & (s != me)], -1).reshape(-1, 6, 7, 2).astype(np.int8)

    def view_to_board(self, s):
        return np.broadcast_to(np.arange(7), (len(s), 7))

    def symmetries(self):
        return np.arange(84)[None], np.arange(7)[None]


# ----------------------------------------------------------------------------- measurements

def bench_network(seconds: float) -> dict:
    out = {}
    for name, cfg in (("mlp 3x256", NetConfig(kind="mlp", hidden=256, layers=3)),
                      ("resnet 4x64", NetConfig(kind="resnet", channels=64, blocks=4))):
        g = HighwayGame()
        cfg.obs_shape, cfg.num_actions = g.obs_shape, g.num_actions
        net = build_network(cfg).eval()
        x = torch.from_numpy(g.observations(np.zeros((64, 16), np.int8)))
        with torch.inference_mode():
            for _ in range(3):
                net(x)
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                net(x)
                n += 1
        out[name] = 64 * n / (time.perf_counter() - t0)
    return out


def bench_search(game: Game, roots: int, sims: int, states=None, rollout=False) -> float:
    ev = RolloutEvaluator(game, np.random.default_rng(0)) if rollout else UniformEvaluator(game)
    search = BatchedMCTS(game, ev, SearchConfig(kind="uct" if rollout else "puct", simulations=sims))
    s = game.initial_states(roots) if states is None else states
    rng = np.random.default_rng(0)
    search.run(s[:2], rng)  # compile
    t0 = time.perf_counter()
    search.run(s, rng)
    return roots * sims / (time.perf_counter() - t0)


def bench_openspiel(sims: int, moves: int, rollout=False) -> float | None:
    try:
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        return None

    class Uniform(mcts.Evaluator):  # the same "uniform prior, value 0" network as ours
        def evaluate(self, state):
            return np.zeros(2)

        def prior(self, state):
            legal = state.legal_actions()
            return [(a, 1.0 / len(legal)) for a in legal]

    game = pyspiel.load_game("connect_four")
    ev = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)) if rollout else Uniform()
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=sims, evaluator=ev, solve=False,
                       random_state=np.random.RandomState(0))
    state = game.new_initial_state()
    t0 = time.perf_counter()
    for _ in range(moves):
        state.apply_action(bot.step(state))
    return sims * moves / (time.perf_counter() - t0)


def bench_python_uct(sims: int) -> float:
    """A plain-Python UCT (dict nodes, core.Board states, value-0 leaves) on Highway: the baseline
    when OpenSpiel is not installed."""
    import math

    root = core.Board()
    stats = {}  # board cells -> [N, {action: [n, w]}]

    t0 = time.perf_counter()
    for _ in range(sims):
        b, path = root, []
        while True:
            node = stats.get(b.cells)
            if node is None:
                stats[b.cells] = [0, {a: [0, 0.0] for a in b.legal_actions()}]
                break
            n_parent = node[0]
            a = max(node[1], key=lambda a: (node[1][a][1] / node[1][a][0] + 1.4 * math.sqrt(
                math.log(n_parent) / node[1][a][0])) if node[1][a][0] else math.inf)
            path.append((node, a))
            b = b.apply(a)
        for node, a in path:  # value 0 leaves: only the counts change
            node[0] += 1
            node[1][a][0] += 1
    return sims / (time.perf_counter() - t0)


def bench_selfplay(games: int, sims: int) -> float:
    g = HighwayGame()
    net = build_network(NetConfig(kind="mlp", obs_shape=g.obs_shape, num_actions=g.num_actions)).eval()
    search = BatchedMCTS(g, NetworkEvaluator(g, net), SearchConfig(kind="gumbel", simulations=sims))
    play_games(g, search, 4, np.random.default_rng(0))
    t0 = time.perf_counter()
    play_games(g, search, games, np.random.default_rng(1))
    return games / (time.perf_counter() - t0)


def main(argv=None) -> int:
    p = OneLineErrorParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    p.add_argument("--roots", type=positive_int, default=256, help="concurrent searches (batch) (default 256)")
    p.add_argument("--sims", type=positive_int, default=200, help="simulations per search (default 200)")
    p.add_argument("--selfplay-games", type=positive_int, default=256,
                   help="games for the self-play rate (default 256)")
    p.add_argument("--selfplay-sims", type=positive_int, default=32,
                   help="simulations per move in self-play (default 32)")
    p.add_argument("--openspiel-sims", type=positive_int, default=1000,
                   help="MCTSBot simulations per move (default 1000)")
    a = p.parse_args(argv)
    if a.quick:
        a.roots, a.sims, a.selfplay_games, a.openspiel_sims = 64, 50, 32, 200
    torch.set_num_threads(1)
    print("1 thread, batch 64 network evaluations:")
    for name, r in bench_network(0.5 if a.quick else 2.0).items():
        print(f"  {name:<12} {r:>10,.0f} positions/s")

    hw = bench_search(HighwayGame(), a.roots, a.sims)
    rng = np.random.default_rng(0)
    mid = HighwayGame().as_states([core.random_board(rng, 8) for _ in range(a.roots)])
    hw_mid = bench_search(HighwayGame(), a.roots, a.sims, mid)
    c4 = bench_search(ConnectFour(), a.roots, a.sims)
    print(f"batched PUCT search, uniform prior, {a.roots} roots x {a.sims} simulations:")
    print(f"  highway (empty board, 256 actions)   {hw:>10,.0f} sims/s")
    print(f"  highway (8 filled, 64 actions)       {hw_mid:>10,.0f} sims/s")
    print(f"  connect_four                          {c4:>10,.0f} sims/s")
    c4_roll = bench_search(ConnectFour(), a.roots, a.sims, rollout=True)
    print(f"  connect_four, UCT + 1 random rollout  {c4_roll:>10,.0f} sims/s")
    moves = 3 if a.quick else 5
    osp = bench_openspiel(a.openspiel_sims, moves)
    if osp is not None:
        osp_roll = bench_openspiel(a.openspiel_sims, moves, rollout=True)
        print("OpenSpiel Python MCTSBot, connect_four (same process, same core):")
        print(f"  uniform prior, value 0   {osp:>10,.0f} sims/s   ratio ours/OpenSpiel {c4 / osp:.1f}x")
        print(f"  1 random rollout         {osp_roll:>10,.0f} sims/s   ratio ours/OpenSpiel {c4_roll / osp_roll:.1f}x")
    else:
        py = bench_python_uct(2000 if a.quick else 10000)
        print("open_spiel not importable (pip install open-spiel); baseline = plain-Python UCT on Highway:")
        print(f"  python UCT {py:,.0f} sims/s; ratio (ours / python) on highway: {hw / py:.1f}x")
    gps = bench_selfplay(a.selfplay_games, a.selfplay_sims)
    print(f"self-play, Gumbel {a.selfplay_sims} sims/move, MLP 3x256, 1 process: {gps:,.1f} games/s "
          f"({gps * 16:,.0f} positions/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
