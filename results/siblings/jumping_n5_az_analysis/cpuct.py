# Run from the repo root. The .out files were made with copies of checkpoints/jumping_n5_az/latest.pt taken after 700
# and 2000 iterations (/work/runs/j5_700, /work/runs/j5_2000) and of checkpoints/jumping_n5_az_big/latest.pt after its
# 768 iterations (/work/runs/j5big_tmp), the names overlap.out prints. Here they are: the shipped
# agents/pretrained/jumping_n5_az.pt (the 2000-iteration network: it gives jumping_n5_az_p10's 467/495 again),
# checkpoints/jumping_n5_az_it700/latest.pt (a copy you take after the second training leg of
# ../jumping_n5_az/command.txt) and checkpoints/jumping_n5_az_big/latest.pt (../jumping_n5_az_big_p10/command.txt).
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
p = "agents/pretrained/jumping_n5_az.pt"
base = load_checkpoint(p)["search_config"]
for cp, mw in [(0.5, 0.45), (1.0, 0.45), (2.0, 0.45), (4.0, 0.45), (1.0, 0.25)]:
    ag = AlphaZeroAgent.from_checkpoint(p, game=game, seed=0, search=SearchConfig(**{**base, "c_puct": cp, "margin_weight": mw}))
    acts = ag.act_batch(states, np.random.default_rng([0, 21, 0]))
    keeps = values[np.arange(len(states)), acts] == best
    print(cp, mw, round(float(keeps[crit].mean()), 4), flush=True)
