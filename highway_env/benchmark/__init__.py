"""Grade any agent against perfect play: ``highway_env.benchmark.evaluate(policy, ...)``.

    from highway_env.benchmark import evaluate
    report = evaluate(lambda obs: int(obs["action_mask"].argmax()), positions=600, games=4)
    print(report.table()); report.save("results/my-agent")
"""

from highway_env.benchmark.policy import PolicyError, observations
from highway_env.benchmark.report import BenchmarkReport
from highway_env.benchmark.run import evaluate

__all__ = ["evaluate", "BenchmarkReport", "PolicyError", "observations"]
