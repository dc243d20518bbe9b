"""RLlib (new API stack) PPO with action masking on the PettingZoo env, one module shared by both
seats, then graded against perfect play.

    pip install -e ".[rllib]"
    python examples/rllib_ppo_masked.py --minutes 5 --out results/recipes/rllib_ppo
    python examples/rllib_ppo_masked.py --tiny          # a few seconds after Ray starts, as the tests run it

The env is ``highway_v0.env(frame="player")`` through ``highway_env.integrations.rllib.make_env``:
RLlib's ``PettingZooEnv`` with the observation renamed to ``{"observations", "action_mask"}`` floats,
the form RLlib's ``ActionMaskingTorchRLModule`` takes. Both agents map to the one module ``shared``,
so every game trains it from both sides (self-play with the current policy on both seats).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recipe_common  # noqa: E402

from highway_env.cli_args import non_negative_int, positive_int  # noqa: E402


def _import_rllib():
    try:
        import ray
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.tune.registry import register_env

        from highway_env.integrations import rllib as glue
    except ImportError as e:
        sys.exit(f'this recipe needs ray[rllib]: pip install -e ".[rllib]" ({e})')
    return ray, PPOConfig, register_env, glue


def build_config(args):
    """PPO on the Highway multi-agent env with one shared masked module, sampling in this process."""
    _, PPOConfig, register_env, glue = _import_rllib()
    register_env(glue.ENV_NAME, glue.make_env)
    return (PPOConfig()
            .environment(glue.ENV_NAME)
            .multi_agent(**glue.shared_policy())
            .rl_module(rl_module_spec=glue.masked_module_spec([args.width] * args.layers))
            .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner)
            .learners(num_learners=0)
            .training(train_batch_size_per_learner=args.batch, minibatch_size=args.minibatch,
                      num_epochs=args.epochs, lr=args.lr, gamma=1.0, entropy_coeff=args.entropy)
            .debugging(seed=args.seed, log_level="ERROR"))


def train(args, progress: bool):
    ray, _, _, glue = _import_rllib()
    from tqdm import tqdm

    if args.ray_address == "local":  # a fresh instance, never a cluster some other run started here
        ray.init(address="local", num_cpus=args.env_runners + 1, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=args.ray_address, log_to_driver=False)
    algo = build_config(args).build_algo()
    clock = recipe_common.Stopwatch()
    result = {}
    bar = tqdm(total=args.iterations, unit="iter", desc="RLlib PPO", disable=not progress, file=sys.stderr)
    iterations = 0
    while iterations < args.iterations:
        result = algo.train()
        iterations += 1
        bar.update(1)
        bar.set_postfix(steps=result["env_runners"].get("num_env_steps_sampled_lifetime"))
        if clock.seconds() > args.minutes * 60:
            break
    bar.close()
    runners = result.get("env_runners", {})
    training = {"library": "RLlib PPO (new API stack), ActionMaskingTorchRLModule shared by both seats",
                "seconds": round(clock.seconds(), 1), "iterations": iterations,
                "steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
                "games": int(runners.get("num_episodes_lifetime", 0)),
                "versions": recipe_common.versions("ray", "torch", "gymnasium", "pettingzoo")}
    return algo, algo.get_module(glue.SHARED), training


def build_parser():
    p = recipe_common.parser(__doc__.split("\n\n")[0])
    recipe_common.add_budget_args(p, 5.0, "--iterations", "PPO iterations (default 10,000; 1 with --tiny)")
    p.add_argument("--batch", type=positive_int, default=None,
                   help="env steps per iteration (default 4000; 64 with --tiny)")
    p.add_argument("--minibatch", type=positive_int, default=None, help="SGD minibatch (default 256; 32 with --tiny)")
    p.add_argument("--epochs", type=positive_int, default=None, help="epochs per iteration (default 4; 1 with --tiny)")
    p.add_argument("--env-runners", type=non_negative_int, default=0,
                   help="remote EnvRunner actors (0: sample in this process)")
    p.add_argument("--ray-address", default="local",
                   help="Ray cluster to run on (e.g. auto or HOST:PORT); local starts a private instance")
    p.add_argument("--envs-per-runner", type=positive_int, default=None,
                   help="envs per EnvRunner (default 8; 1 with --tiny)")
    recipe_common.add_model_args(p, lr=3e-4)
    return p


TINY_TRAINING = {"iterations": 1, "batch": 64, "minibatch": 32, "epochs": 1, "envs_per_runner": 1}
FULL_TRAINING = {"iterations": 10_000, "batch": 4000, "minibatch": 256, "epochs": 4, "envs_per_runner": 8}


def main(argv=None):
    args = recipe_common.parse_args(build_parser(), argv, TINY_TRAINING, FULL_TRAINING)
    ray, _, _, glue = _import_rllib()
    try:
        algo, module, training = train(args, progress=not args.no_progress)
        report = recipe_common.grade(glue.batched_policy(module), args, name="RLlib PPO masked", frame="player",
                                     batched=True, training=training)
        algo.stop()
    finally:
        ray.shutdown()
    return report


if __name__ == "__main__":
    main()
