"""Benchmarking Highway agents against the exact solver (``python evaluate.py``).

Modules, each small:

- :mod:`~highway_env.evaluation.position_set`: the held-out position set's file and its reader
  (the versioned ``highway_env/data/positions_v1.npz``, its selection / report split, and set v2
  ``positions_v2.npz`` from strong play).
- :mod:`~highway_env.evaluation.positions`: the build tool of the sets (``python -m
  highway_env.evaluation.positions``), drawing them (``positions_draw``) and labelling them
  (``positions_label``).
- :mod:`~highway_env.evaluation.metrics`: move accuracy, margin given away, win/draw/loss tallies.
- :mod:`~highway_env.evaluation.elo`: Bradley-Terry / Elo fit with bootstrap confidence intervals.
- :mod:`~highway_env.evaluation.tasks`: the units of work (games, position chunks), cached on disk,
  and their perfect opponent (the solver's :class:`~highway_env.solver.player.PerfectPlayer` with
  :data:`~highway_env.solver.player.EVALUATION_OPPONENT`'s options).
- :mod:`~highway_env.evaluation.siblings`: ``evaluate.py --game blackpath|jumping``, the two-player
  sibling games against their exact solvers (same metrics, report and plots where they apply).
- :mod:`~highway_env.evaluation.plots` and :mod:`~highway_env.evaluation.report`: PNGs, table,
  JSON, CSV and the markdown report.
"""
