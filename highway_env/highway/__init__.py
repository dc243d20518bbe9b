"""The PettingZoo AEC environment for Highway; import it as ``from highway_env import highway_v0``."""
