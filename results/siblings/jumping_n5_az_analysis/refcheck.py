# Run from the repo root after overlap.py, which writes the positions it re-checks to /tmp/j5_common*.npy.
import numpy as np, time, signal
from agents.registry import get_game
from highway_env.jumping.solver import move_values
game = get_game("jumping", {"n": 5})
S = np.load("/tmp/j5_common.npy"); V = np.load("/tmp/j5_common_vals.npy")
order = np.argsort(-S[:, -1])
for i in order:
    st = game.to_rules_state(S[i]); t = time.time()
    ref = move_values(st)
    lab = {a: int(V[i, a]) for a in ref}
    print("ply", int(S[i, -1]), "match" if ref == lab else f"MISMATCH ref={ref} lab={lab}", f"{time.time()-t:.1f}s", flush=True)
    if time.time() - t > 60: break
