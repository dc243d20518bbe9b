"""Exact solver for Highway: ``Solver`` (compiled alpha-beta), the plain-Python reference, the CLI.

    from highway_env.solver import Solver
    result = Solver().solve(board, margin=True)   # value +1/0/-1 from A's side, margin, best move
"""

from highway_env.solver.solver import MoveValue, SolveResult, Solver  # noqa: F401
