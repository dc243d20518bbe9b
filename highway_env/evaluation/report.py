"""Terminal table, JSON, CSV and the markdown report of an evaluation (all written atomically)."""

from __future__ import annotations

import json
from pathlib import Path

from highway_env.atomic_files import atomic_write_csv, atomic_write_text
from highway_env.evaluation.provenance import provenance_line


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _wdl(r) -> str:
    return "-" if not r else f"{r['win']}/{r['draw']}/{r['loss']}"


def _short_note(summary: dict) -> str:
    """How many of each agent's held games A won by less than 2 (0 since A keeps margin 2 from the
    first move; summaries from before lack it)."""
    short = {spec: a["as_B_vs_perfect_margin"]["a_short"] for spec, a in summary["agents"].items()
             if (a.get("as_B_vs_perfect_margin") or {}).get("a_short") is not None}
    if not short:
        return ""
    return " (such games: " + ", ".join(f"`{spec}` {n}" for spec, n in short.items()) + ")"


def _budget(c: dict, early: str = "") -> str:
    """The perfect player's tie-break (or, with ``early="early_"``, early-move) budget, in its unit."""
    nodes = c.get(f"perfect_{early}budget_nodes")
    return f"{nodes:,} solver nodes" if nodes else f"{c.get(f'perfect_{early}budget')} s"


def rows(summary: dict) -> list[dict]:
    out = []
    for name, a in summary["agents"].items():
        acc = a.get("accuracy") or {}
        acc2 = a.get("accuracy_v2") or {}
        ml = a.get("margin_loss") or {}
        conv = a.get("conversion") or {}
        e = a.get("elo") or {}
        ra, rb = a.get("as_A_vs_perfect") or {}, a.get("as_B_vs_perfect") or {}
        held = a.get("as_B_vs_perfect_margin") or {}
        out.append({
            "agent": name,
            "accuracy": acc.get("rate"), "accuracy_n": acc.get("n"),
            "accuracy_A": (acc.get("by_side") or {}).get("A", {}).get("rate"),
            "accuracy_B": (acc.get("by_side") or {}).get("B", {}).get("rate"),
            "accuracy_v2": acc2.get("rate"), "accuracy_v2_n": acc2.get("n"),
            "margin_loss": ml.get("mean"), "margin_optimal_rate": ml.get("optimal_rate"),
            "asA_win": ra.get("win"), "asA_draw": ra.get("draw"), "asA_loss": ra.get("loss"),
            "asB_win": rb.get("win"), "asB_draw": rb.get("draw"), "asB_loss": rb.get("loss"),
            "asB_held_to_value": held.get("rate"), "asB_held_games": held.get("games"),
            "conversion": conv.get("rate"), "conversion_n": conv.get("positions"),
            "elo": e.get("elo"), "elo_lo": (e.get("ci95") or [None, None])[0],
            "elo_hi": (e.get("ci95") or [None, None])[1],
            **{f"tree_{tb}_{k}": (a.get("reply_tree") or {}).get(tb, {}).get(k)
               for tb in summary["config"].get("reply_tree_tiebreaks", [])
               for k in ("first_move", "win", "draw", "loss", "mean_margin")},
        })
    return out


def table(summary: dict) -> str:
    head = ["agent", "accuracy", "acc A", "acc B", "acc v2", "margin lost", "margin-opt", "as A W/D/L", "as B W/D/L",
            "B held to 2", "conversion", "Elo [95% CI]"]
    tbs = summary["config"].get("reply_tree_tiebreaks", [])
    head += [f"tree vs {tb} W/D/L" for tb in tbs]
    lines = []
    for r in rows(summary):
        elo = "-" if r["elo"] is None else f"{r['elo']:.0f} [{r['elo_lo']:.0f}, {r['elo_hi']:.0f}]"
        a = summary["agents"][r["agent"]]
        lines.append([r["agent"], _pct(r["accuracy"]), _pct(r["accuracy_A"]), _pct(r["accuracy_B"]),
                      _pct(r["accuracy_v2"]),
                      "-" if r["margin_loss"] is None else f"{r['margin_loss']:.2f}", _pct(r["margin_optimal_rate"]),
                      _wdl(a.get("as_A_vs_perfect")), _wdl(a.get("as_B_vs_perfect")),
                      _pct(r["asB_held_to_value"]), _pct(r["conversion"]), elo]
                     + [_wdl((a.get("reply_tree") or {}).get(tb)) for tb in tbs])
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(head)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(l) for l in lines])


def write_csv(path: Path, summary: dict) -> None:
    rs = rows(summary)
    atomic_write_csv(path, rs, list(rs[0]) if rs else ["agent"])


def write_accuracy_csv(path: Path, summary: dict) -> None:
    out = [{"agent": name, "ply": p, "side": "AB"[int(p) % 2], "correct": r["correct"], "n": r["n"], "rate": r["rate"]}
           for name, a in summary["agents"].items()
           for p, r in sorted((a.get("accuracy") or {}).get("by_ply", {}).items(), key=lambda kv: int(kv[0]))]
    atomic_write_csv(path, out, ["agent", "ply", "side", "correct", "n", "rate"])


def document(summary: dict, title: str, intro: str, notes: list[str], plots: list[str], files: str) -> str:
    """A report.md: ``title``, the agents and ``intro``, the table and the ``notes`` on it, the plots,
    the ``files`` written and where the figures came from."""
    agents = ", ".join(f"`{a}`" for a in summary["agents"])
    lines = [f"# {title}", "", f"Agents: {agents}. Seed {summary['config']['seed']}; {intro}", "",
             "```", table(summary), "```", "", *notes, ""]
    for p in plots:
        lines += [f"![{p}]({p})", ""]
    lines += [f"Files: {files}.", "", provenance_line(summary.get("provenance")), ""]
    return "\n".join(lines)


def markdown(summary: dict, plots: list[str]) -> str:
    c = summary["config"]
    ps = summary.get("position_set", {})
    un = summary.get("perfect_unproven_moves", 0)
    tot = summary.get("perfect_moves", 0)
    graded = f"The perfect player made {tot} moves in the games it graded (conversions included)"
    if un:
        moves = (f"{graded}; {un} of them (before ply {c['perfect_exact_from_ply']}, where the solver needs "
                 f"minutes and no book/first-move table answered within {_budget(c, 'early_')}) were its "
                 "solver's static first move, not proven value-keeping.")
    else:
        moves = f"{graded}, every one proven value-keeping (opening book, then the solver)."
    return document(
        summary, f"Evaluation against the perfect player: {c.get('name')}",
        f"{c['games']} games per side against the perfect player (`perfect:{c['perfect_tiebreak']}`), "
        f"{c['rr_games']} games per pair in the round robin, {c['positions']} positions sampled from "
        f"`{ps.get('file')}` (v{ps.get('version')}, {ps.get('size')} positions), "
        f"{c['conversion']} conversion play-outs. Wall time {summary.get('wall_seconds', 0):.0f} s "
        f"on {c['workers']} worker(s).",
        ["- **accuracy**: share of value-keeping moves (the position after the move has the game value "
        "the mover could get) on *critical* positions, where some legal move loses value; acc A / acc B "
        "by side to move. Solver labels: every legal move's exact value.",
        "- **acc v2**: the same on every critical position of the second set (positions reached by strong "
        + (f"play, `{summary['position_set_v2']['file']}`, {summary['position_set_v2']['critical']} critical)."
           if summary.get("position_set_v2") else "play; not graded in this run: `--positions-v2 none`)."),
        "- **margin lost**: mean of (best exact margin - chosen move's margin) from the mover's side, "
        "on positions whose move margins are labelled (late plies); **margin-opt**: the share of those "
        "moves that keep the exact margin.",
        "- **B held to 2**: games as B from the empty board against the margin-maximising perfect A "
        "(`perfect:margin`): the share where A won by at most 2, the margin of perfect play. That A "
        "keeps margin 2 from the first move (its first two moves come from the margin-2 proof) and "
        "maximises the margin exactly from ply 5 on, within its node budget; earlier or out of budget "
        "it keeps 3 wherever B gave a third point (else 2), so a game ends at 2 exactly when B held A "
        "to it: the share is exact. A game A won by less than 2 would be a defect of A"
        + _short_note(summary) + ".",
        "- **as A / as B W/D/L**: full games from the empty board against the perfect player "
        f"(tie-break `{c['perfect_tiebreak']}`: among value-keeping moves the one leaving the fewest "
        f"value-keeping replies, exact within {_budget(c)} a move). A wins Highway with perfect play, so as B the best possible is a loss "
        "in every game, and as A a win needs every move to keep the win.",
        *([f"- **tree vs TB W/D/L**: the ply-1 tree (`--reply-tree`): the agent's first move as A on the "
           "empty board, then one game per legal B reply (225) played out against `perfect:TB` (exact "
           f"within {_budget(c)} a move); every game won = no reply refutes the agent's play. First move "
           "(action id), replies and mean margin in `summary.json` (`reply_tree`) and `agents.csv` (`tree_*`)."]
         if c.get("reply_tree_tiebreaks") else []),
        "- **conversion**: from set positions the agent's side wins, the share it actually wins when "
        "the perfect player defends.",
        "- **Elo**: Bradley-Terry fit of the round robin (draw = half a win, one virtual draw per pair), "
        f"anchored at `{summary.get('elo_anchor')}` = 0, 95 % CI from 500 bootstrap resamples of the games.",
        "", moves], plots,
        "`summary.json` (everything), `agents.csv` (one row per agent), `accuracy_by_ply.csv`, "
        "`tasks/` (per-task cache; rerun the same command to resume)")


def write_all(out_dir: Path, summary: dict, plots: list[str], markdown=markdown) -> None:
    """summary.json, agents.csv, accuracy_by_ply.csv and report.md (``markdown(summary, plots)``)."""
    out_dir = Path(out_dir)
    atomic_write_text(out_dir / "summary.json", json.dumps(summary, indent=1, sort_keys=False))
    write_csv(out_dir / "agents.csv", summary)
    write_accuracy_csv(out_dir / "accuracy_by_ply.csv", summary)
    atomic_write_text(out_dir / "report.md", markdown(summary, plots))
