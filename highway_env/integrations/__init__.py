"""Glue for RL libraries that do not take the Highway envs unchanged (each module imports its library)."""
