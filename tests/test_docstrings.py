"""The public API documents itself: every function and class that ``highway_env``, ``agents`` and
``highway_env.benchmark`` export, and each public method of those classes, has a docstring (inherited
from the method it overrides counts, as ``help()`` shows it), and the ``name=value`` defaults that a
docstring quotes are the signature's."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

PACKAGES = ["highway_env", "agents", "highway_env.benchmark"]


def _exports(package):
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield f"{package}.{name}", obj


def _documented(package):
    for qual, obj in _exports(package):
        yield qual, obj, obj
        if inspect.isclass(obj):
            for name, attr in vars(obj).items():
                if name.startswith("_"):
                    continue
                func = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
                if inspect.isfunction(func):
                    yield f"{qual}.{name}", func, getattr(obj, name) if not isinstance(attr, property) else attr


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_has_a_docstring(package):
    missing = [qual for qual, _, looked_up in _documented(package) if not (inspect.getdoc(looked_up) or "").strip()]
    assert not missing, f"no docstring: {missing}"


@pytest.mark.parametrize("package", PACKAGES)
def test_defaults_quoted_in_docstrings_are_the_signatures(package):
    wrong = []
    for qual, func, _ in _documented(package):
        target = func.__init__ if inspect.isclass(func) else func
        try:
            params = inspect.signature(target).parameters
        except (TypeError, ValueError):
            continue
        doc = inspect.getdoc(func) or ""
        # "``name`` (default X)" or "``name``, default X": a default stated for a parameter
        for m in re.finditer(r"``(\w+)``[ ,(]*default:? (-?[\d.]+\d|\d|True|False|None|'[^']*'|\"[^\"]*\")(?!\w)", doc):
            name, said = m.group(1), m.group(2).strip("'\"")
            if name in params and params[name].default is not inspect.Parameter.empty:
                if said != str(params[name].default):
                    wrong.append(f"{qual}: docstring says {name} defaults to {said}, the signature {params[name].default!r}")
    assert not wrong, wrong
