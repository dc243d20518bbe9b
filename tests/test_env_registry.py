"""Registries: the Gymnasium ids and PettingZoo's AEC registry (pettingzoo >= 1.27), guarded for
PettingZoo versions without one; registration imports no torch."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import gymnasium
import pettingzoo
import pytest
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

import highway_env
from highway_env import registration

ROOT = Path(__file__).resolve().parents[1]


def run_fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter with this checkout first on the path; its stdout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


#: every registered AEC id and the name its env's metadata gives (its face module's, e.g. ``highway_v0``)
AEC_IDS = [(env_id, ref.partition(":")[0].rpartition(".")[2]) for env_id, ref in registration.PETTINGZOO_AEC_ENVS.items()]


@pytest.mark.parametrize("env_id, name", AEC_IDS)
def test_pettingzoo_make_gives_the_wrapped_env(env_id, name):
    env = pettingzoo.make("aec", env_id)
    assert isinstance(env, OrderEnforcingWrapper)
    assert env.metadata["name"] == name
    env.reset(seed=0)
    obs, *_ = env.last()
    assert obs["action_mask"].any()


def test_pettingzoo_make_passes_kwargs():
    env = pettingzoo.make("aec", "highway_env/highway-v0", frame="player", render_mode="ansi")
    assert env.unwrapped.frame == "player" and env.unwrapped.render_mode == "ansi"


def test_registering_twice_registers_nothing_new_and_warns_nothing(recwarn):
    assert registration.register_pettingzoo() == []
    assert registration.register_gymnasium(gymnasium) == []
    assert not [w for w in recwarn if "Overriding" in str(w.message)]


def test_pettingzoo_without_a_registry_is_left_alone():
    old = types.ModuleType("pettingzoo")  # a PettingZoo < 1.27: no register, no aec_registry
    assert registration.register_pettingzoo(old) == []


def test_pettingzoo_with_a_registry_gets_the_three_ids():
    calls = []
    fake = types.SimpleNamespace(aec_registry={}, register=lambda kind, env_id, entry: calls.append((kind, env_id, entry)))
    assert registration.register_pettingzoo(fake) == list(registration.PETTINGZOO_AEC_ENVS)
    assert calls == [("aec", i, e) for i, e in registration.PETTINGZOO_AEC_ENVS.items()]


def test_import_works_when_pettingzoo_has_no_registry():
    """A fresh process where pettingzoo lacks ``register`` (as before 1.27): the import succeeds,
    the Gymnasium ids and ``highway_v0.env()`` still work."""
    out = run_fresh(
        "import pettingzoo\n"
        "del pettingzoo.register\n"
        "import gymnasium, highway_env\n"
        "from highway_env import highway_v0\n"
        "e = highway_v0.env(); e.reset()\n"
        "print('highway_env/highway-v0' in pettingzoo.aec_registry, 'highway_env/Highway-v0' in gymnasium.registry)\n")
    assert out.split() == ["False", "True"]


def test_gymnasium_make_with_module_prefix_needs_no_prior_import():
    out = run_fresh(
        "import sys, gymnasium\n"
        "assert 'highway_env' not in sys.modules\n"
        "env = gymnasium.make('highway_env:highway_env/Highway-v0', play_as='B')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, obs['action_mask'].sum(), 'torch' in sys.modules)\n")
    assert out.split() == ["HighwayGymEnv", str(15 * 15), "False"]


def test_pettingzoo_make_in_fresh_process_and_no_torch():
    out = run_fresh(
        "import sys, highway_env, pettingzoo\n"
        "env = pettingzoo.make('aec', 'highway_env/highway-v0')\n"
        "env.reset()\n"
        "print(sorted(k for k in pettingzoo.aec_registry if k.startswith('highway_env/')), 'torch' in sys.modules)\n")
    assert out.strip() == ("['highway_env/blackpath-v0', 'highway_env/highway-v0', 'highway_env/jumping-v0'] False")


def test_gymnasium_ids_still_registered():
    assert highway_env.GYM_ENV_ID in gymnasium.registry
    assert highway_env.RUSH_HOUR_ENV_ID in gymnasium.registry
    assert {highway_env.GYM_ENV_ID, highway_env.RUSH_HOUR_ENV_ID} == set(registration.GYM_ENVS)  # one list of ids


def test_no_pettingzoo_at_all_registers_nothing(monkeypatch):
    monkeypatch.setitem(sys.modules, "pettingzoo", None)  # import pettingzoo -> ImportError
    assert registration.register_pettingzoo() == []
