"""The optional extras: a missing library is an ImportError that names the extra to install."""

import importlib
import sys

import pytest

from highway_env.extras import require


def _hide(monkeypatch, *names):
    # None in sys.modules makes an import fail as if the library were not installed (in CI it is)
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def _forget(monkeypatch, *modules):
    for name in modules:
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_require_returns_the_module():
    assert require("json", "test", "this test") is importlib.import_module("json")


def test_openspiel_package_without_pyspiel_names_the_extra(monkeypatch):
    _hide(monkeypatch, "pyspiel")
    _forget(monkeypatch, "highway_env.openspiel", "highway_env.openspiel.game", "highway_env.openspiel.bot")
    with pytest.raises(ImportError, match=r"highway_env\.openspiel needs the optional extra 'openspiel'.*\[openspiel\]"):
        importlib.import_module("highway_env.openspiel")


def test_rllib_glue_without_rllib_names_the_extra(monkeypatch):
    _hide(monkeypatch, "ray.rllib")
    _forget(monkeypatch, "highway_env.integrations.rllib")
    with pytest.raises(ImportError, match=r"needs the optional extra 'rllib'.*import 'ray\.rllib' failed"):
        importlib.import_module("highway_env.integrations.rllib")


def test_torchrl_glue_without_torchrl_names_the_extra(monkeypatch):
    _hide(monkeypatch, "torchrl")
    from highway_env.integrations.torchrl import make_env

    with pytest.raises(ImportError, match=r"needs the optional extra 'torchrl'"):
        make_env(seed=0)


def test_openspiel_bot_without_pyspiel_names_the_extra(monkeypatch):
    from highway_env.benchmark.policy import as_agent

    class DuckBot:  # OpenSpiel's bot interface, without pyspiel
        def restart_at(self, state):
            pass

        def step(self, state):
            return 0

    _hide(monkeypatch, "pyspiel")
    _forget(monkeypatch, "highway_env.openspiel", "highway_env.openspiel.game", "highway_env.openspiel.bot",
            "highway_env.openspiel.grading")
    with pytest.raises(ImportError, match=r"highway_env\.openspiel needs the optional extra 'openspiel'"):
        as_agent(DuckBot())
