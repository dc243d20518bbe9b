"""The version of the solver's results, recorded with every stored entry.

Bump ``SOLVER_VERSION`` whenever a change could alter what the search returns (margins, bounds,
evaluation rules): position stores then ignore the entries an older solver wrote instead of trusting
them. Kept in its own module so that reading it imports nothing compiled.
"""

SOLVER_VERSION = 1
