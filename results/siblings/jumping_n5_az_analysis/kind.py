# Run from the repo root. The .out files were made with copies of checkpoints/jumping_n5_az/latest.pt taken after 700
# and 2000 iterations (/work/runs/j5_700, /work/runs/j5_2000) and of checkpoints/jumping_n5_az_big/latest.pt after its
# 768 iterations (/work/runs/j5big_tmp), the names overlap.out prints. Here they are: the shipped
# agents/pretrained/jumping_n5_az.pt (the 2000-iteration network: it gives jumping_n5_az_p10's 467/495 again),
# checkpoints/jumping_n5_az_it700/latest.pt (a copy you take after the second training leg of
# ../jumping_n5_az/command.txt) and checkpoints/jumping_n5_az_big/latest.pt (../jumping_n5_az_big_p10/command.txt).
import numpy as np
from agents.registry import get_game, make_agent
from highway_env.evaluation.siblings import sample_positions, label
game = get_game("jumping", {"n": 5})
states = sample_positions(game, 600, 0, 10)
values, legal = label(game, states)
best = values.max(1); crit = (legal & (values < best[:, None])).any(1)
ag = make_agent("az:agents/pretrained/jumping_n5_az.pt", game, seed=0)
acts = ag.act_batch(states, np.random.default_rng([0, 21, 0]))
n = len(states); chosen = values[np.arange(n), acts]
lead = game.margins(states) * np.where(game.to_play(states) == 0, 1, -1)
err = crit & (chosen < best)
res_change = np.sign(lead + chosen) != np.sign(lead + best)
marg_only_pos = crit & np.array([len(set(np.sign(lead[i] + values[i][legal[i]]))) == 1 for i in range(n)])
print("errors", err.sum(), "result-changing", (err & res_change).sum(), "margin-only errors", (err & ~res_change).sum())
print("critical", crit.sum(), "margin-only critical positions", marg_only_pos.sum())
print("points lost per error", (best - chosen)[err].tolist())
