# Checkpoints: copies of checkpoints/jumping_n5_az/latest.pt after 700 and 2000 iterations (/work/runs/j5_700, j5_2000)
# and of checkpoints/jumping_n5_az_big/latest.pt after 768 iterations (/work/runs/j5big_tmp). Run from the repo root.
import numpy as np
from agents.registry import get_game, make_agent
from highway_env.evaluation.siblings import sample_positions, label
game = get_game("jumping", {"n": 5})
states = sample_positions(game, 600, 0, 10)
values, legal = label(game, states)
best = values.max(1); crit = (legal & (values < best[:, None])).any(1)
ag = make_agent("az:/work/runs/j5_2000/latest.pt", game, seed=0)
acts = ag.act_batch(states, np.random.default_rng([0, 21, 0]))
n = len(states); chosen = values[np.arange(n), acts]
lead = game.margins(states) * np.where(game.to_play(states) == 0, 1, -1)
err = crit & (chosen < best)
res_change = np.sign(lead + chosen) != np.sign(lead + best)
marg_only_pos = crit & np.array([len(set(np.sign(lead[i] + values[i][legal[i]]))) == 1 for i in range(n)])
print("errors", err.sum(), "result-changing", (err & res_change).sum(), "margin-only errors", (err & ~res_change).sum())
print("critical", crit.sum(), "margin-only critical positions", marg_only_pos.sum())
print("points lost per error", (best - chosen)[err].tolist())
