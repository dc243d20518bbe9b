"""The evaluation's perfect opponent: :meth:`highway_env.solver.player.PerfectPlayer.from_spec`
(``make_agent("perfect[:TIEBREAK]")``), whose options (time caps on the first plies, values inherited
after its own moves) are documented in :mod:`highway_env.solver.player`."""

from highway_env.solver.player import PerfectPlayer

perfect_factory = PerfectPlayer.from_spec
