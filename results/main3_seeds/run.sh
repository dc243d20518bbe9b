# The README's main command (3 minutes of training, then evaluate.py) for seeds 0, 1, 2; run from the repo root.
# Reports: results/main3_seeds/seedK/ (report.md, summary.json, agents.csv).
set -e
for s in 0 1 2; do
  python train.py --minutes 3 --seed $s --run main3_seed$s
  python evaluate.py --agent az:checkpoints/main3_seed$s/latest.pt --games 10 --name main3_seed$s --out results/main3_seeds/seed$s
done
