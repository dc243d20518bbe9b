"""Imports of the optional extras, failing with an error that names the extra to install."""

from __future__ import annotations

import importlib


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
