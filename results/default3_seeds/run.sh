# The default run (python train.py: 25 minutes of self-play) for seeds 0, 1, 2, each graded on every
# critical position of both position sets and over the whole ply-1 tree; run from the repo root.
# Reports: results/default3_seeds/seedK/ (report.md, summary.json, agents.csv).
set -e
for s in 0 1 2; do
  python train.py --seed $s --run default_seed$s --no-progress
  python evaluate.py --agent az:checkpoints/default_seed$s/latest.pt --agent az:checkpoints/default_seed$s/best.pt \
    --positions 0 --reply-tree --games 10 --rr-games 0 --conversion 0 --workers 2 --no-progress --no-plots \
    --name default_seed$s --out results/default3_seeds/seed$s
done
