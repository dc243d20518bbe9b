"""Tests of optional parts (an extra, Ray, a headless browser) skip where the part is missing, except
under CI=true: CI installs every part, so there a missing one is a failure, not a silent skip."""

from __future__ import annotations

import functools
import importlib
import os

import pytest


def skip_or_fail(tests: str, part: str, missing: str, install: str) -> None:
    """Skip the running test because ``part`` is ``missing``; fail instead under CI=true."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the {tests} tests cannot run: {missing} ({install})", pytrace=False)
    pytest.skip(f"{part} not installed ({install}): {missing}")


def require_modules(tests: str, part: str, modules: tuple[str, ...], install: str) -> None:
    """:func:`skip_or_fail` unless every one of ``modules`` imports."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            skip_or_fail(tests, part, str(e), install)


def require_ray() -> None:
    """Ray is in the ``test`` extra."""
    require_modules("Ray", "Ray", ("ray",), "pip install -e \".[test]\"")


def needs_ray(test):
    """Decorator: the test runs only where :func:`require_ray` passes."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        require_ray()
        return test(*args, **kwargs)
    return run
