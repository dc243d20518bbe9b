"""Grade any agent against perfect play: ``highway_env.benchmark.evaluate(policy, ...)``.

    from highway_env.benchmark import evaluate
    report = evaluate(lambda obs: int(obs["action_mask"].argmax()), positions=600, games=4)
    print(report.table()); report.save("results/my-agent")

- :mod:`~highway_env.benchmark.policy`: any policy (observation callable, batched callable,
  ``agents.Agent``, SB3 model, spec string) as an agent, observations in either frame, checked actions;
- :mod:`~highway_env.benchmark.run`: :func:`evaluate`, the measures of ``evaluate.py``;
- :mod:`~highway_env.benchmark.report`: :class:`BenchmarkReport` (table, dict, saved files).
"""

from highway_env.benchmark.policy import PolicyError, observations
from highway_env.benchmark.report import BenchmarkReport
from highway_env.benchmark.run import evaluate

__all__ = ["evaluate", "BenchmarkReport", "PolicyError", "observations"]
