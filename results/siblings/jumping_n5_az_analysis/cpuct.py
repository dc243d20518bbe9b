# Checkpoints: copies of checkpoints/jumping_n5_az/latest.pt after 700 and 2000 iterations (/work/runs/j5_700, j5_2000)
# and of checkpoints/jumping_n5_az_big/latest.pt after 768 iterations (/work/runs/j5big_tmp). Run from the repo root.
import numpy as np
from agents.registry import get_game
from agents.alphazero import AlphaZeroAgent
from agents.config import SearchConfig
from agents.checkpoint import load_checkpoint
from highway_env.evaluation.siblings import sample_positions, label
game = get_game("jumping", {"n": 5})
states = sample_positions(game, 600, 0, 10)
values, legal = label(game, states)
best = values.max(1); crit = (legal & (values < best[:, None])).any(1)
p = "/work/runs/j5_2000/latest.pt"
base = load_checkpoint(p)["search_config"]
for cp, mw in [(0.5, 0.45), (1.0, 0.45), (2.0, 0.45), (4.0, 0.45), (1.0, 0.25)]:
    ag = AlphaZeroAgent.from_checkpoint(p, game=game, seed=0, search=SearchConfig(**{**base, "c_puct": cp, "margin_weight": mw}))
    acts = ag.act_batch(states, np.random.default_rng([0, 21, 0]))
    keeps = values[np.arange(len(states)), acts] == best
    print(cp, mw, round(float(keeps[crit].mean()), 4), flush=True)
