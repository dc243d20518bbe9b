"""Registers the envs with Gymnasium's and (where it has one) PettingZoo's registry on import of
``highway_env``, so that ``gymnasium.make("highway_env/Highway-v0")`` and
``pettingzoo.make("aec", "highway_env/highway-v0")`` work. Entry points are strings: nothing is
imported until an env is made (and never torch)."""

from __future__ import annotations

import importlib
from types import ModuleType

#: the Gymnasium ids (``highway_env.GYM_ENV_ID``, ``highway_env.RUSH_HOUR_ENV_ID``)
GYM_ENV_ID = "highway_env/Highway-v0"
RUSH_HOUR_ENV_ID = "highway_env/RushHour-v0"
#: Gymnasium id -> entry point (single-agent envs)
GYM_ENVS = {
    GYM_ENV_ID: "highway_env.gym_env:HighwayGymEnv",
    RUSH_HOUR_ENV_ID: "highway_env.rushhour.env:RushHourEnv",
}

#: Gymnasium id -> its native vector env (``gymnasium.make_vec``'s default for the id)
GYM_VECTOR_ENVS = {GYM_ENV_ID: "highway_env.gym_vector_env:HighwayVectorEnv"}

#: PettingZoo AEC id -> entry point (``env()``: the classic wrappers, as PettingZoo's own games)
PETTINGZOO_AEC_ENVS = {
    "highway_env/highway-v0": "highway_env.highway_v0:env",
    "highway_env/blackpath-v0": "highway_env.blackpath_v0:env",
    "highway_env/jumping-v0": "highway_env.jumping_v0:env",
}


def register_gymnasium(gymnasium: ModuleType) -> list[str]:
    """Register GYM_ENVS not registered yet; returns the ids registered now."""
    new = [env_id for env_id in GYM_ENVS if env_id not in gymnasium.registry]
    for env_id in new:
        gymnasium.register(id=env_id, entry_point=GYM_ENVS[env_id], vector_entry_point=GYM_VECTOR_ENVS.get(env_id))
    return new


def register_pettingzoo(pettingzoo: ModuleType | None = None) -> list[str]:
    """Register PETTINGZOO_AEC_ENVS with PettingZoo's registry (pettingzoo >= 1.27:
    ``pettingzoo.register("aec", id, entry_point)``); returns the ids registered now. Older
    PettingZoo versions have no registry (and PettingZoo may be absent): nothing is registered and
    the envs stay reachable as ``highway_env.highway_v0.env()`` etc."""
    if pettingzoo is None:
        try:
            pettingzoo = importlib.import_module("pettingzoo")
        except ImportError:
            return []
    register = getattr(pettingzoo, "register", None)
    registry = getattr(pettingzoo, "aec_registry", None)
    if register is None or registry is None:
        return []
    new = [env_id for env_id in PETTINGZOO_AEC_ENVS if env_id not in registry]
    for env_id in new:
        register("aec", env_id, PETTINGZOO_AEC_ENVS[env_id])
    return new
