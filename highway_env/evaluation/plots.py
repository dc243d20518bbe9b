"""PNG plots of an evaluation: accuracy by ply, W/D/L against the perfect player, the Elo ladder."""

from __future__ import annotations

import io
from pathlib import Path

from highway_env.atomic_files import atomic_write_bytes


def _save(fig, out_dir: Path, name: str) -> str:
    """Write ``fig`` to ``out_dir / name`` and close it; its name."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    atomic_write_bytes(out_dir / name, buf.getvalue())
    return name


def plot_all(summary: dict, out_dir: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    written = []
    agents = summary["agents"]
    names = list(agents)

    # accuracy by ply
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in names:
        acc = agents[name].get("accuracy")
        if not acc or not acc.get("by_ply"):
            continue
        plies = sorted(int(p) for p in acc["by_ply"])
        rates = [acc["by_ply"][p if p in acc["by_ply"] else str(p)]["rate"] for p in plies]
        ax.plot(plies, rates, marker="o", label=name)
    ax.set_xlabel("ply (filled cells)")
    ax.set_ylabel("value-keeping moves (critical positions)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Move accuracy by ply")
    written.append(_save(fig, out_dir, "accuracy_by_ply.png"))

    # W/D/L against the perfect player
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.5 + 0.5 * len(names) + 1), sharey=True)
    for ax, key, title in ((axes[0], "as_A_vs_perfect", "as A vs perfect B"),
                           (axes[1], "as_B_vs_perfect", "as B vs perfect A")):
        for k, name in enumerate(names):
            r = agents[name].get(key) or {}
            n = max(r.get("games", 0), 1)
            left = 0.0
            for part, color in (("win", "#2a9d8f"), ("draw", "#bbbbbb"), ("loss", "#e76f51")):
                w = r.get(part, 0) / n
                ax.barh(k, w, left=left, color=color, label=part if k == 0 else None)
                if w > 0.08:
                    ax.text(left + w / 2, k, str(r.get(part, 0)), ha="center", va="center", fontsize=8)
                left += w
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_title(title)
        ax.set_xlabel("share of games")
    axes[0].legend(loc="lower right", fontsize=8)
    written.append(_save(fig, out_dir, "wdl_vs_perfect.png"))

    # Elo ladder
    elo = summary.get("elo") or {}
    if elo:
        order = sorted(elo, key=lambda n: elo[n]["elo"])
        fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * len(order) + 1))
        for k, name in enumerate(order):
            e = elo[name]
            ax.errorbar(e["elo"], k, xerr=[[e["elo"] - e["ci95"][0]], [e["ci95"][1] - e["elo"]]], fmt="o",
                        capsize=4, color="#264653")
            ax.text(e["elo"], k + 0.18, f"{e['elo']:.0f}", ha="center", fontsize=8)
        ax.set_yticks(range(len(order)), order, fontsize=8)
        ax.set_xlabel(f"Elo (anchor: {summary.get('elo_anchor')} = 0; 95 % bootstrap CI)")
        ax.grid(axis="x", alpha=0.3)
        ax.set_title("Round robin Elo ladder")
        written.append(_save(fig, out_dir, "elo_ladder.png"))
    return written
