"""Exact answers about Highway positions: bounds on the margin from a cache, the opening book, a
position store and the solver, and the value-keeping moves they imply (the perfect player's and the
hints' source of truth)."""

from __future__ import annotations

import time
from typing import Sequence

from highway_env.core import CELLS, Board, HighwayError
from highway_env.solver.opening_book import Book
from highway_env.solver.solver import Solver, ordered_actions
from highway_env.solver.store import (UNKNOWN_HI, UNKNOWN_LO, PositionStore, canonical_key, intersect, key_ply,
                                      value_from_bounds)


class Deadline:
    """A wall-clock search budget: searches stop at ``at`` (a ``time.monotonic()`` value; None:
    never). They use the oracle's cache, book, store and solver."""

    fresh = False  # answers may come from what the oracle already knows
    solver = None  # the oracle's own solver

    def __init__(self, at: float | None = None):
        self.at = at

    @property
    def limited(self) -> bool:
        return self.at is not None

    def limits(self) -> dict | None:
        """The solver's limit for the next search, or None when the budget is spent."""
        if self.at is None:
            return {}
        left = self.at - time.monotonic()
        return None if left <= 0 else {"time_limit": left}

    def spend(self, nodes: int, done: bool) -> None:
        pass

    def extend(self, seconds: float) -> None:
        """Do not count ``seconds`` spent on other work."""
        if self.at is not None:
            self.at += seconds


class NodeBudget:
    """A search budget in solver nodes, from :meth:`Oracle.node_budget`. Searches under it ignore
    the cache, book and store and use a solver of their own whose table is emptied for each new
    budget, so whether the budget suffices depends on the position and the questions asked alone,
    not on what was searched before nor on the machine's load: moves chosen under it are
    reproducible."""

    fresh = True
    limited = True

    def __init__(self, nodes: int, solver: Solver):
        self.left = nodes
        self.solver = solver

    def limits(self) -> dict | None:
        return None if self.left <= 0 else {"node_limit": self.left}

    def spend(self, nodes: int, done: bool) -> None:
        self.left = self.left - nodes if done else 0

    def extend(self, seconds: float) -> None:
        pass


NO_LIMIT = Deadline()

#: bounds the oracle keeps in memory before it forgets them all
CACHE_LIMIT = 2_000_000
#: transposition table of the node-budgeted searches (2**18 buckets, cleared for every budget)
SCRATCH_TT_BITS = 18

#: the canonical board string of a position: the key of the book, the store and the caches
position_key = canonical_key


def _ply(cells: Sequence[int]) -> int:
    return CELLS - tuple(cells).count(0)  # tuple() of a tuple is itself: no copy


class Oracle:
    """Exact answers about positions from a cache, a book, a store and a solver; every bound learned
    is cached. The store is read and written for plies <= ``store_max_ply`` only: deeper positions
    are quick to solve, so none is written, and a lookup would miss. ``budget`` arguments are a
    :class:`Deadline` or a :class:`NodeBudget` (default: no limit), asked only through their common
    interface (``fresh``, ``solver``, ``limited``, ``limits``, ``spend``, ``extend``); a search cut by
    one returns None."""

    def __init__(self, book: Book | None = None, store: PositionStore | None = None,
                 solver: Solver | None = None, tt_bits: int = 22, store_max_ply: int = 12):
        self.book = book
        self.store = store
        self.solver = solver if solver is not None else Solver(tt_bits=tt_bits)
        self.store_max_ply = store_max_ply
        self.cache: dict[str, tuple[int, int]] = {}
        self.origin: dict[str, str] = {}  # key -> where its first bounds came from
        self.searches = 0
        self._book_max_ply: int | None = None
        self._scratch: Solver | None = None  # the node-budgeted searches' solver

    def node_budget(self, nodes: int) -> NodeBudget:
        """A fresh :class:`NodeBudget` of ``nodes`` solver nodes (the searches under it start afresh)."""
        if self._scratch is None:
            self._scratch = Solver(tt_bits=SCRATCH_TT_BITS)
        else:
            self._scratch.clear()
        return NodeBudget(nodes, self._scratch)

    # -- bounds
    def known(self, cells: Sequence[int], key: str | None = None) -> tuple[int, int]:
        key = key or position_key(cells)
        b = self.cache.get(key)
        if b is not None:
            return b
        if len(self.cache) >= CACHE_LIMIT:
            self.cache.clear()
            self.origin.clear()
        if 0 not in cells:
            m = Board(tuple(cells)).outcome().margin
            b, src = (m, m), "rules"
        else:
            b, src = (UNKNOWN_LO, UNKNOWN_HI), None
            if self.book is not None:
                bb = self.book.bounds(key)
                if bb is not None:
                    b, src = intersect(b, bb), "book"
                pb = self._bounds_from_book_parents(cells)
                if pb != (UNKNOWN_LO, UNKNOWN_HI):
                    b, src = intersect(b, pb), src or "book"
            if self.store is not None and _ply(cells) <= self.store_max_ply:
                sb = self.store.get_key(key)
                if sb is not None:
                    b = intersect(b, sb)
                    src = src or "store"
            if b[0] > b[1]:
                raise HighwayError(f"book and store contradict each other on {key}")
        self.cache[key] = b
        if src:
            self.origin[key] = src
        return b

    def _bounds_from_book_parents(self, cells: Sequence[int]) -> tuple[int, int]:
        """Bounds implied by the book's entries for the positions one move earlier: a child of a
        position where A moved is worth at most the parent (A maximises the margin), a child of one
        where B moved at least the parent. Any filled cell may be taken back: each gives a true parent.
        This is what makes the ply after a book line cheap: e.g. after a first move that loses and B's
        book reply, every move of A still loses."""
        ply = _ply(cells)
        if self._book_max_ply is None:
            self._book_max_ply = max(map(key_ply, self.book.entries), default=-1)
        if ply == 0 or ply > self._book_max_ply + 1:
            return UNKNOWN_LO, UNKNOWN_HI
        lo, hi = UNKNOWN_LO, UNKNOWN_HI
        a_moved_last = ply % 2 == 1  # the parent has ply - 1 filled cells; A moves at even plies
        for parent in parent_keys(cells):
            pb = self.book.bounds(parent)
            if pb is None:
                continue
            if a_moved_last:
                hi = min(hi, pb[1])
            else:
                lo = max(lo, pb[0])
        return lo, hi

    def record(self, cells: Sequence[int], lo: int, hi: int, key: str | None = None) -> tuple[int, int]:
        key = key or position_key(cells)
        old = self.known(cells, key)
        new = intersect(old, (lo, hi))
        if new[0] > new[1]:
            raise HighwayError(f"solver result ({lo}, {hi}) contradicts known bounds {old} for {key} "
                               f"(source {self.origin.get(key, 'solver')}): a bad book or store?")
        if new != old:
            self.cache[key] = new
            self.origin.setdefault(key, "solver")
            if self.store is not None and _ply(cells) <= self.store_max_ply:
                self.store.put_key(key, *new)
        return new

    # -- questions
    def _search(self, budget, question, cells: Sequence[int], *args):
        """``question(solver, board, *args, **limits)`` -> (answer, nodes) under ``budget``; None
        once it is spent or the search was cut."""
        limits = budget.limits()
        if limits is None:
            return None
        self.searches += 1
        ans, nodes = question(budget.solver or self.solver, Board(tuple(cells)), *args, **limits)
        budget.spend(nodes, ans is not None)
        return ans

    def at_least(self, cells: Sequence[int], t: int, budget=NO_LIMIT, key: str | None = None) -> bool | None:
        """Can A force margin >= t?"""
        key = key or position_key(cells)
        if not budget.fresh:
            lo, hi = self.known(cells, key)
            if lo >= t:
                return True
            if hi < t:
                return False
        ans = self._search(budget, Solver.counted_at_least, cells, t)
        if ans is not None:
            self.record(cells, t, UNKNOWN_HI, key) if ans else self.record(cells, UNKNOWN_LO, t - 1, key)
        return ans

    def value(self, cells: Sequence[int], budget=NO_LIMIT, key: str | None = None) -> int | None:
        key = key or position_key(cells)
        if not budget.fresh:
            v = value_from_bounds(*self.known(cells, key))
            if v is not None:
                return v
        for t in (1, 0):  # value 1: A forces margin >= 1; value 0: >= 0 but not >= 1
            holds = self.at_least(cells, t, budget, key)
            if holds is None:
                return None
            if holds:
                return t
        return -1

    def margin(self, cells: Sequence[int], budget=NO_LIMIT, key: str | None = None) -> int | None:
        key = key or position_key(cells)
        if not budget.fresh:
            lo, hi = self.known(cells, key)
            if lo == hi:
                return lo
        m = self._search(budget, _counted_margin, cells)
        if m is not None:
            self.record(cells, m, m, key)
        return m

    def keeps(self, cells: Sequence[int], value: int, a_moved: bool, budget=NO_LIMIT,
              key: str | None = None) -> bool | None:
        """Does the child ``cells`` (after a move of A if ``a_moved``) keep the parent's ``value``?"""
        if value == (-1 if a_moved else 1):
            return True  # the mover was lost: every move keeps the value
        return self.reaches(cells, value, a_moved, budget, key)

    def reaches(self, cells: Sequence[int], t: int, a_moved: bool, budget=NO_LIMIT,
                key: str | None = None) -> bool | None:
        """Does the child ``cells`` still give the mover margin ``t``: at least t after a move of A
        (``a_moved``), at most t after one of B?"""
        if a_moved:
            return self.at_least(cells, t, budget, key)
        ans = self.at_least(cells, t + 1, budget, key)
        return None if ans is None else not ans

    def keeping_moves(self, board: Board, value: int, first_only: bool = False,
                      budget=NO_LIMIT) -> list[int] | None:
        """Value-keeping moves of ``board`` (of value ``value``): all of them, or the first in the
        solver's order; None if the budget ran out."""
        out = []
        for action, ok in self.keeps_each(board.cells, ordered_actions(board), value, budget):
            if ok is None:
                return None
            if ok:
                out.append(action)
                if first_only:
                    break
        return out

    def keeps_each(self, cells: Sequence[int], actions, value: int, budget=NO_LIMIT):
        """(action, does it keep ``value``: :meth:`keeps`) for each of ``actions`` of the position
        ``cells`` in turn, lazily; children equal up to symmetry are asked once."""
        a_moves = _ply(cells) % 2 == 0
        seen: dict[str, bool | None] = {}
        for action in actions:
            child = cells_after(cells, action)
            k = position_key(child)
            if k not in seen:
                seen[k] = self.keeps(child, value, a_moves, budget, k)
            yield action, seen[k]


def parent_keys(cells: Sequence[int]):
    """The keys of the positions one move before ``cells`` (each filled cell taken back in turn)."""
    for i, v in enumerate(cells):
        if v:
            parent = list(cells)
            parent[i] = 0
            yield position_key(parent)


def _counted_margin(solver: Solver, board: Board, **limits) -> tuple[int | None, int]:
    r = solver.solve(board, margin=True, **limits)
    return r.margin, r.nodes


def cells_after(cells: Sequence[int], action: int) -> tuple[int, ...]:
    """The cells after ``action`` (no legality check: for moves already known to be legal)."""
    c = list(cells)
    c[action % CELLS] = action // CELLS + 1
    return tuple(c)

