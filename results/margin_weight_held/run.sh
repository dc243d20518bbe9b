# agents/README.md, "Margin-aware search": the shipped network played with play margin_weight 0, 0.1
# (as shipped) and 0.25, as B against perfect:margin (30 games each); run from the repo root.
# Reports: results/margin_weight_held/wW/ (report.md, summary.json, agents.csv).
set -e
for w in 0 0.1 0.25; do
  python - "$w" <<'PY'
import sys
from agents.checkpoint import load_checkpoint, save_checkpoint
ck = load_checkpoint("agents/pretrained/highway_az.pt")
ck["search_config"] = dict(ck["search_config"], margin_weight=float(sys.argv[1]))
save_checkpoint(f"/tmp/highway_az_w{sys.argv[1]}.pt", ck)
PY
  python evaluate.py --agent az:/tmp/highway_az_w$w.pt --positions 1 --positions-v2 none --games 30 --conversion 0 \
    --rr-games 0 --workers 2 --no-plots --name margin_weight_$w --out results/margin_weight_held/w$w
done
