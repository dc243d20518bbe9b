"""The model zoo: agents.load_pretrained(name) for each shipped checkpoint, clear errors, packaging."""

import fnmatch
import tomllib
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.checkpoint import load_checkpoint
from highway_env import core
from highway_env.az_game import HighwayGame

ROOT = Path(__file__).resolve().parents[1]
G = HighwayGame()


def test_names_list_the_shipped_agent_first_and_the_learning_curve():
    names = agents.pretrained_names()
    assert names[0] == "highway_az"
    assert {"highway_az_1min", "highway_az_5min", "highway_az_25min"} <= set(names)


@pytest.mark.parametrize("name", [n for n in agents.pretrained_names() if n not in agents.SIBLINGS])
def test_each_zoo_agent_loads_small_and_plays_legal_moves(name):  # the sibling games': test_sibling_agents.py
    path = agents.ZOO[name]
    assert path.stat().st_size < 5_000_000
    assert "optimizer" not in load_checkpoint(path)  # only what playing needs
    ag = agents.load_pretrained(name, simulations=8, seed=0)
    rng = np.random.default_rng(0)
    s = G.as_states([core.random_board(rng, 5) for _ in range(4)])
    assert G.legal_masks(s)[np.arange(4), ag.act_batch(s)].all()


def test_default_is_the_shipped_agent():
    a = agents.load_pretrained(simulations=0, seed=0)
    b = agents.load_pretrained("highway_az", simulations=0, seed=0)
    s = G.as_states([core.random_board(np.random.default_rng(1), 6) for _ in range(6)])
    assert (a.act_batch(s) == b.act_batch(s)).all()


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="highway_az_7min.*highway_az_1min"):
        agents.load_pretrained("highway_az_7min")
    with pytest.raises(TypeError, match="simulations is a keyword"):
        agents.load_pretrained(100)


def test_package_data_ships_every_zoo_file():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["agents"]
    pkg = ROOT / "agents"
    for path in agents.ZOO.values():
        rel = path.relative_to(pkg).as_posix()
        assert any(fnmatch.fnmatch(rel, g) and rel.count("/") == g.count("/") for g in globs), rel
