"""Imports of the optional extras, failing with an error that names the extra to install; and
whether a path is an installed copy of a package."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path


def require(module: str, extra: str, user: str):
    """Import ``module`` (a library of the optional extra ``extra``) for ``user``, or raise an
    ImportError saying which extra to install.

    >>> require("numpy", "test", "this doctest").__name__
    'numpy'
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"{user} needs the optional extra {extra!r}: pip install -e \".[{extra}]\" from a "
                          f"checkout, or pip install \"highway-boardgame[{extra}]\" (import {module!r} failed: "
                          f"{e})") from e


def require_torch(user: str):
    """PyTorch, which the AlphaZero agents (training and play) need and nothing else does: the
    envs, the solver, the perfect player and the evaluation of other agents run without it."""
    return require("torch", "torch", user)


def torch_installed() -> bool:
    """Whether PyTorch can be imported, found without importing it (that takes seconds)."""
    return importlib.util.find_spec("torch") is not None


def is_installed(path) -> bool:
    """Whether ``path`` lies in a folder of installed packages (site-packages, or Debian's
    dist-packages), where every process of the environment finds a package without help: no
    PYTHONPATH entry for a child process, nothing to ship to a Ray node."""
    return any(part in ("site-packages", "dist-packages") for part in Path(path).parts)
