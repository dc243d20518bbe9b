"""Shipped results (``proof/``, ``highway_env/data/`` and every committed folder under ``results/``) are
never overwritten by a command's default output: only a path the user names (``--out``) or ``--force``
may replace them.

Commands call :func:`refuse_shipped` before writing; their defaults point under ``results/`` instead.
The data-building commands read ``proof/`` relative to the current directory (a pip-installed
package has no ``proof/``): :func:`note_missing_input` says when such an input is absent.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from highway_env.atomic_files import check_writable
from highway_env.core import HighwayError

_REPO = Path(__file__).resolve().parent.parent
#: the folders under ``results/`` that git tracks (``tests/test_hostile_cli.py`` checks none is missing)
SHIPPED_RESULTS = ("ablations", "default3_seeds", "main3_seeds", "margin_weight_held", "openspiel_mcts", "recipes",
                   "reply_tree", "shipped", "siblings", "zoo")
SHIPPED_DIRS = (_REPO / "proof", _REPO / "highway_env" / "data", *(_REPO / "results" / d for d in SHIPPED_RESULTS))


def is_shipped(path: str | os.PathLike) -> bool:
    """Does ``path`` lie inside one of the folders of shipped results of this checkout?"""
    target = Path(path).expanduser().resolve()
    return any(target == d or d in target.parents for d in SHIPPED_DIRS)


def refuse_shipped(path: str | os.PathLike, allowed: bool, option: str = "--out") -> None:
    """Raise a one-line :class:`HighwayError` if ``path`` is a shipped result and writing it was not
    asked for by name (``allowed``: the user gave the path or ``--force``)."""
    if not allowed and is_shipped(path):
        raise HighwayError(f"refusing to overwrite the shipped result {os.fspath(path)!r}: name it with "
                           f"{option} PATH or pass --force to replace it, or write elsewhere")


def check_output(path: str | os.PathLike, allowed: bool, option: str = "--out") -> None:
    """:func:`refuse_shipped`, then a one-line :class:`HighwayError` if ``path`` cannot be written:
    before hours of work, not after them."""
    refuse_shipped(path, allowed, option)
    try:
        check_writable(path, option)
    except OSError as e:
        raise HighwayError(str(e)) from None


def note_missing_input(path: str | os.PathLike | None, option: str, consequence: str) -> None:
    """One line on stderr when ``path``, an input the command can do without (such as
    ``proof/first_moves.json``), is absent: run from elsewhere than the checkout's root, the command
    would otherwise give a different result without a word."""
    if path and not os.path.exists(path):
        print(f"note: {option} {os.fspath(path)!r} not found (run from the checkout's root, or name the file): "
              f"{consequence}", file=sys.stderr)
