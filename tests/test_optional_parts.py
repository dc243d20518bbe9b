"""The rule for optional parts: a test whose part is missing skips, but fails under CI=true."""

import sys

import pytest

from optional_parts import needs_ray, require_ray


@needs_ray
def _a_ray_test(x):
    return x


@pytest.mark.parametrize("call", [require_ray, lambda: _a_ray_test(1)], ids=["require_ray", "needs_ray"])
def test_missing_ray_fails_under_ci_and_skips_otherwise(monkeypatch, call):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but the Ray tests cannot run"):
        call()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="Ray not installed"):
        call()


def test_needs_ray_runs_the_test_where_ray_imports():
    pytest.importorskip("ray")  # this checks the decorator, not the installation
    assert _a_ray_test(7) == 7
