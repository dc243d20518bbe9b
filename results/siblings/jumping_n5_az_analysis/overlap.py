# Run from the repo root. The .out files were made with copies of checkpoints/jumping_n5_az/latest.pt taken after 700
# and 2000 iterations (/work/runs/j5_700, /work/runs/j5_2000) and of checkpoints/jumping_n5_az_big/latest.pt after its
# 768 iterations (/work/runs/j5big_tmp), the names overlap.out prints. Here they are: the shipped
# agents/pretrained/jumping_n5_az.pt (the 2000-iteration network: it gives jumping_n5_az_p10's 467/495 again),
# checkpoints/jumping_n5_az_it700/latest.pt (a copy you take after the second training leg of
# ../jumping_n5_az/command.txt) and checkpoints/jumping_n5_az_big/latest.pt (../jumping_n5_az_big_p10/command.txt).
import numpy as np, sys
from agents.registry import get_game, make_agent
from highway_env.evaluation.siblings import sample_positions, label
game = get_game("jumping", {"n": 5})
states = sample_positions(game, 600, 0, 10)
values, legal = label(game, states)
best = values.max(1); crit = (legal & (values < best[:, None])).any(1)
errs = {}
for spec in ["az:checkpoints/jumping_n5_az_it700/latest.pt", "az:agents/pretrained/jumping_n5_az.pt", "az:checkpoints/jumping_n5_az_big/latest.pt"]:
    ag = make_agent(spec, game, seed=0)
    acts = ag.act_batch(states, np.random.default_rng([0, 21, 0]))
    keeps = values[np.arange(len(states)), acts] == best
    errs[spec] = set(np.flatnonzero(crit & ~keeps).tolist())
    print(spec, len(errs[spec]), int(crit.sum()))
sets = list(errs.values())
common = sets[0] & sets[1] & sets[2]
print("common to all three:", len(common), sorted(common))
np.save("/tmp/j5_common.npy", states[sorted(common)])
np.save("/tmp/j5_common_vals.npy", values[sorted(common)])
