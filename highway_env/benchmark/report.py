"""The result of :func:`highway_env.benchmark.evaluate`: one agent's measures against perfect play.

It holds the same summary dict ``evaluate.py`` writes (``summary.json``), so the table, the CSVs,
the plots and the markdown report come from :mod:`highway_env.evaluation.report` and
:mod:`~highway_env.evaluation.plots` unchanged.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path


class BenchmarkReport:
    """``table()`` (text), ``to_dict()`` (JSON-ready summary), ``save(dir)`` (summary.json,
    agents.csv, accuracy_by_ply.csv, report.md and PNG plots); the main figures as properties."""

    def __init__(self, summary: dict):
        # held as its JSON form (string keys, lists), so to_dict() is what save() writes
        self.summary = json.loads(json.dumps(summary))
        self.name = next(iter(summary["agents"]))

    @property
    def measures(self) -> dict:
        """The agent's measures (accuracy, margin_loss, as_A_vs_perfect, as_B_vs_perfect, conversion, ...)."""
        return self.summary["agents"][self.name]

    @property
    def accuracy(self) -> float | None:
        """Share of value-keeping moves on the sampled critical positions."""
        return (self.measures.get("accuracy") or {}).get("rate")

    @property
    def margin_optimal_rate(self) -> float | None:
        """Share of moves that keep the exact margin, on the sampled positions labelled with margins."""
        return (self.measures.get("margin_loss") or {}).get("optimal_rate")

    def table(self) -> str:
        """The one-row table evaluate.py prints (accuracy, margin, games against the perfect player,
        conversion), as text."""
        from highway_env.evaluation.report import table

        return table(self.summary)

    def to_dict(self) -> dict:
        """The summary, as ``summary.json`` holds it."""
        return copy.deepcopy(self.summary)

    def save(self, out_dir, plots: bool = True) -> Path:
        """Write the report files into ``out_dir`` (created; every file written atomically)."""
        from highway_env.evaluation.report import write_all

        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        if plots:
            from highway_env.evaluation.plots import plot_all

            written = plot_all(self.summary, out_dir)
        write_all(out_dir, self.summary, written)
        return out_dir

    def __repr__(self) -> str:
        return f"BenchmarkReport({self.name!r}, accuracy={self.accuracy})"

    def __str__(self) -> str:
        return self.table()
