"""Hints: the solver's verdict for a position and the value of each candidate move.

One :class:`~highway_env.solver.player.PerfectPlayer` (its oracle: cache, opening book, exact
solver) answers for every game, one request at a time. From ply :data:`COMPUTE_FROM_PLY` on the solver
runs, within ``time_limit`` seconds a request; what it learns is cached, so asking again goes on
where the last request stopped. Before that ply a cold position can take the solver minutes, so
only what is already known (book, cache) is used, and the hint says from which move on it is
computed.
"""

from __future__ import annotations

import threading
import time

from highway_env.core import PLAYER_NAMES, VERDICTS, Board, decode_action

#: Positions with this many numbers placed or more are solved on demand (a second or a few).
COMPUTE_FROM_PLY = 4


class HintService:
    def __init__(self, time_limit: float = 5.0):
        self.time_limit = time_limit
        self._player = None
        self._lock = threading.Lock()  # one solver, one search at a time

    @property
    def player(self):
        if self._player is None:
            from highway_env.solver.player import PerfectPlayer

            self._player = PerfectPlayer(progress=False, store=None)
        return self._player

    def warm_up(self) -> None:
        """Load the book and the solver now (the server does it in the background at start)."""
        with self._lock:
            self.player.warm_up()

    def hint(self, board: Board, first: int | None = None) -> dict:
        """A JSON-ready dict; ``status``: ok (complete), partial (time ran out: ask again),
        unavailable (too early for the solver and not in the book), busy (another hint is
        running: ask again), over (full board). ``first``: a number whose moves go first.

        Each entry of ``moves``: number, cell, action, ``keeps`` (whether the move keeps the
        position's value) and ``value`` of the position after it (None until solved)."""
        out = {"cells": list(board.cells), "ply": board.ply, "value": None, "verdict": None,
               "moves": [], "known": 0, "total": 0, "computed": board.ply >= COMPUTE_FROM_PLY,
               "available_from_move": COMPUTE_FROM_PLY + 1}
        if board.is_terminal():
            v = board.outcome().value
            return {**out, "status": "over", "value": v, "verdict": VERDICTS[v], "message": "game over"}
        if not self._lock.acquire(timeout=self.time_limit):
            return {**out, "status": "busy", "message": "the solver is busy with another hint"}
        try:
            start = time.monotonic()
            self._fill(board, out, start + self.time_limit, first)
            out["seconds"] = round(time.monotonic() - start, 3)
        finally:
            self._lock.release()
        return out

    # -- the work, under the lock
    def _fill(self, board: Board, out: dict, deadline: float, first: int | None) -> None:
        from highway_env.solver.player import Deadline, cells_after, position_key
        from highway_env.solver.store import value_from_bounds

        player = self.player
        oracle = player.oracle
        computed = out["computed"]
        budget = Deadline(deadline)
        if computed:
            player.warm_up()

        def in_time() -> bool:
            return not computed or time.monotonic() < deadline

        def value_of(cells, key=None):
            if computed:
                return oracle.value(cells, budget, key)  # None when the deadline passed
            return value_from_bounds(*oracle.known(cells, key))  # book and cache only: no search

        value = value_of(board.cells)
        out["value"], out["verdict"] = value, VERDICTS.get(value)
        # the moves of the number the player is looking at first
        actions = sorted(board.legal_actions(), key=lambda a: decode_action(a)[0] != first)
        out["total"] = len(actions)
        a_moves = board.to_move == 0
        keys = {a: position_key(cells_after(board.cells, a)) for a in actions}
        cells_of = {keys[a]: cells_after(board.cells, a) for a in actions}
        values: dict[str, int | None] = {}  # child key -> value
        keeps: dict[str, bool | None] = {}  # child key -> keeps the value?
        if value is not None:
            if value == (-1 if a_moves else 1):  # the mover is lost: every move keeps the value
                values = dict.fromkeys(keys.values(), value)
            elif player.book is not None and (book := player.book.moves(board)) is not None:
                values.update((keys[a], value) for a in book[0])  # the book's value-keeping moves
        if value is not None and computed:
            # pass 1, one null-window search a move: does it keep the value?
            for key in cells_of:
                if key in values or not in_time():
                    continue
                keeps[key] = oracle.keeps(cells_of[key], value, a_moves, budget, key)
                if keeps[key]:
                    values[key] = value
        # pass 2: the exact value of the others (before COMPUTE_FROM_PLY: what the book and cache know)
        for key in cells_of:
            if key not in values and keeps.get(key) is not True and in_time():
                values[key] = value_of(cells_of[key], key)
        moves = []
        for a in sorted(actions):
            v = values.get(keys[a])
            keep = (v == value) if v is not None and value is not None else keeps.get(keys[a])
            if v is not None or keep is not None:
                number, cell = decode_action(a)
                moves.append({"action": a, "number": number, "cell": cell, "keeps": keep, "value": v})
        out["moves"] = moves
        out["known"] = sum(1 for m in moves if m["value"] is not None)
        self._summarise(board, out, value, len(actions), sum(1 for m in moves if m["keeps"] is not None))

    def _summarise(self, board: Board, out: dict, value, total: int, judged: int) -> None:
        mover = PLAYER_NAMES[board.to_move]
        later = f"move {COMPUTE_FROM_PLY + 1}"
        if value is None and not out["computed"]:
            out["status"] = "unavailable"
            out["message"] = f"this position is not in the opening book; the solver's hint is available from {later}"
        elif value is None or (out["computed"] and out["known"] < total):
            out["status"] = "partial"
            out["message"] = f"still solving: {judged} of {total} moves judged so far"
        else:
            out["status"] = "ok"
            keeping = sum(1 for m in out["moves"] if m["keeps"])
            keeps = "1 move keeps" if keeping == 1 else f"{keeping} moves keep"
            if out["known"] == total:
                out["message"] = f"{mover} to move: {keeps} '{VERDICTS[value]}' (of {total})"
            else:
                out["message"] = (f"from the opening book: {keeps} '{VERDICTS[value]}'; the other moves "
                                  f"are solved from {later} on")
