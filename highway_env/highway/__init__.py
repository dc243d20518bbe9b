"""Highway's batched rules and its PettingZoo AEC environment: ``batch_rules`` (the stateless numba
rules kernel every fast engine wraps) and ``highway`` (the env; import it as
``from highway_env import highway_v0``)."""
