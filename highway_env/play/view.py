"""What the page shows about a board, as JSON-ready dicts: each player's cheapest path so far,
the bounds on both cheapest paths, and on a full board the result. All from highway_env.core."""

from __future__ import annotations

from highway_env.core import A_PATHS, B_PATHS, PLAYER_NAMES, Board


def _cheapest(paths, ranges, cells) -> dict:
    """The path that can still end cheapest (lowest reachable sum, then lowest worst case).
    On a full board lo == hi == the sum, so this is ``Board.outcome()``'s first cheapest path."""
    i = min(range(len(paths)), key=lambda j: (ranges[j][0], ranges[j][1], j))
    path = paths[i]
    return {
        "cells": list(path),
        "placed": sum(cells[c] for c in path),
        "empty": sum(1 for c in path if cells[c] == 0),
        "lo": ranges[i][0],
        "hi": ranges[i][1],
    }


def result_text(min_a: int, min_b: int) -> str:
    """'A wins: 47 vs 49' (the winner's cheapest path first), or 'Draw: 48 vs 48'."""
    if min_a < min_b:
        return f"A wins: {min_a} vs {min_b}"
    if min_b < min_a:
        return f"B wins: {min_b} vs {min_a}"
    return f"Draw: {min_a} vs {min_b}"


def board_view(board: Board) -> dict:
    cells = board.cells
    ranges_a, ranges_b = board.path_ranges()
    bounds = board.bounds()
    view = {
        "cells": list(cells),
        "ply": board.ply,
        "to_move": None if board.is_terminal() else PLAYER_NAMES[board.to_move],
        "used": sorted(v for v in cells if v),
        "paths": {"A": _cheapest(A_PATHS, ranges_a, cells), "B": _cheapest(B_PATHS, ranges_b, cells)},
        "bounds": {"min_a": list(bounds.min_a), "min_b": list(bounds.min_b), "margin": list(bounds.margin)},
        "result": None,
    }
    if board.is_terminal():
        out = board.outcome()
        view["result"] = {
            "winner": out.winner,
            "min_a": out.min_a,
            "min_b": out.min_b,
            "margin": out.margin,
            "text": result_text(out.min_a, out.min_b),
            "a_paths": [list(p) for p in out.a_paths],
            "b_paths": [list(p) for p in out.b_paths],
        }
    return view
