"""The held-out position set: positions from varied play, each labelled by the exact solver
(the reader; the CLI that builds the sets is :mod:`highway_env.evaluation.positions`).

File ``highway_env/data/positions_v1.npz`` (numpy ``savez_compressed``), arrays:

==============  ============  ==================================================================
``boards``      (N, 16) int8  the position (0 = empty), a canonical representative (``Board.canonical()``)
``ply``         (N,) int8     filled cells = moves made; A is to move on even plies
``values``      (N, 256) int8 value (+1 A wins, 0 draw, -1 B wins; A's side) of the position after
                              each action; ``ILLEGAL`` (-128) for illegal actions
``margins``     (N, 256) int8 exact margin minB - minA after each action where labelled (plies
                              >= ``margin_min_ply`` of ``meta``), else ``UNKNOWN`` (-127); -128 illegal
``value``       (N,) int8     value of the position (best move value for the side to move)
``margin``      (N,) int8     exact margin of the position where the move margins are known, else -127
``source``      (N,) int8     index into ``sources`` (how the position was reached)
``sources``     (S,) str      source names
``meta``        () str        JSON: version, seed, per-ply targets and counts, timings, how drawn
==============  ============  ==================================================================

Two disjoint parts, fixed by a hash of each board (:func:`selection_mask`): about one position in
``SELECTION_SHARE`` is the *selection* part, which training may look at (the trainer grades its
network there and can pick ``best.pt`` by it, ``agents/grading.py``); the rest is the *report*
part, the only one ``evaluate.py`` and ``highway_env.benchmark`` grade agents on. So no figure
that is reported was used to choose the checkpoint it reports on.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from highway_env.atomic_files import atomic_write_bytes
from highway_env.core import CELLS, NUM_ACTIONS, HighwayError

VERSION = 1
DEFAULT_PATH = Path(__file__).resolve().parent.parent / "data" / f"positions_v{VERSION}.npz"
#: set v2: critical positions from strong play (``python -m highway_env.evaluation.positions build
#: --strong``), the same format; a second yardstick beside v1, reported by evaluate.py, never used in training
V2_PATH = DEFAULT_PATH.with_name("positions_v2.npz")
ILLEGAL = -128
UNKNOWN = -127
#: one position in SELECTION_SHARE (by board hash) belongs to the selection part
SELECTION_SHARE = 8


#: the per-position arrays of a set, in file and constructor order (all int8)
ARRAYS = ("boards", "ply", "values", "margins", "value", "margin", "source")


class PositionSetError(HighwayError):
    """A position set file that cannot be read (the message names the file)."""


# ----------------------------------------------------------------------------- loading

@dataclass
class PositionSet:
    boards: np.ndarray
    ply: np.ndarray
    values: np.ndarray
    margins: np.ndarray
    value: np.ndarray
    margin: np.ndarray
    source: np.ndarray
    sources: tuple
    meta: dict

    def __len__(self) -> int:
        return len(self.boards)

    @property
    def mover(self) -> np.ndarray:
        """0 = A to move, 1 = B."""
        return (self.ply % 2).astype(np.int8)

    def critical(self) -> np.ndarray:
        """Positions where at least one legal move does not keep the value."""
        legal = self.values != ILLEGAL
        lo = np.where(legal, self.values, 9).min(axis=1)
        hi = np.where(legal, self.values, -9).max(axis=1)
        return lo != hi

    def subset(self, idx) -> "PositionSet":
        idx = np.asarray(idx)
        return PositionSet(*(getattr(self, f)[idx] for f in ARRAYS), self.sources, self.meta)

    def counts(self) -> dict:
        crit = self.critical()
        out = {}
        for p in sorted(set(self.ply.tolist())):
            m = self.ply == p
            out[int(p)] = {"positions": int(m.sum()), "critical": int((m & crit).sum()),
                           "with_margins": int((m & (self.margin != UNKNOWN)).sum()),
                           **{s: int((m & (self.source == i)).sum()) for i, s in enumerate(self.sources)}}
        return out


def position_keys(boards) -> np.ndarray:
    """(N,) uint64 key of each board: the first 8 bytes of its BLAKE2b hash (stable across runs,
    machines and numpy versions, unlike Python's ``hash``)."""
    b = np.ascontiguousarray(boards, dtype=np.int8)
    return np.array([int.from_bytes(hashlib.blake2b(row.tobytes(), digest_size=8).digest(), "little")
                     for row in b], np.uint64)


def selection_mask(boards) -> np.ndarray:
    """(N,) bool: the board belongs to the selection part (training may use it), not the report part."""
    return position_keys(boards) % np.uint64(SELECTION_SHARE) == 0


def load_positions(path: str | os.PathLike | None = None) -> PositionSet:
    """The position set at ``path`` (default: the shipped one); PositionSetError naming the file
    if it is missing or unreadable."""
    if path is not None and not str(path):  # Path('') is '.', and an error would name that
        raise PositionSetError("position set path '' is empty: give a .npz file (leave the option out for "
                               "the shipped set)")
    path = Path(DEFAULT_PATH if path is None else path)
    if path.is_dir():
        raise PositionSetError(f"position set {str(path)!r} is a directory: give a .npz file")
    try:
        with np.load(path, allow_pickle=False) as z:
            d = {k: z[k] for k in z.files}
        ps = PositionSet(*(d[f].astype(np.int8) for f in ARRAYS), tuple(str(s) for s in d["sources"]),
                         json.loads(str(d["meta"])))
    except FileNotFoundError:
        raise PositionSetError(f"position set {str(path)!r} not found (build it with "
                               f"'python -m highway_env.evaluation.positions build --out {path}')") from None
    except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as e:  # damaged: cut, garbage
        raise PositionSetError(f"position set {str(path)!r} is unreadable ({type(e).__name__}: {e})") from e
    n = len(ps.boards)
    if ps.boards.shape != (n, CELLS) or ps.values.shape != (n, NUM_ACTIONS):
        raise PositionSetError(f"position set {str(path)!r} has bad array shapes")
    return ps


def save_positions(path, ps: PositionSet) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, **{f: getattr(ps, f) for f in ARRAYS}, sources=np.array(ps.sources),
                        meta=np.array(json.dumps(ps.meta, sort_keys=True)))
    atomic_write_bytes(path, buf.getvalue())
