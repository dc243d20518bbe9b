"""Tianshou: DQN with action masking against a random opponent on the PettingZoo env, set up as
Tianshou's own tic-tac-toe example (``test/pettingzoo/tic_tac_toe.py``), then graded against perfect play.

    pip install -e ".[tianshou]"
    python examples/tianshou_dqn_vs_random.py --minutes 5 --out results/recipes/tianshou_dqn
    python examples/tianshou_dqn_vs_random.py --tiny          # seconds, as the tests run it

The env is Tianshou's ``PettingZooEnv(highway_v0.env(frame="player"))``, nothing in between: Tianshou
reads the observation's ``action_mask`` into its ``mask``, and stacks the infos into its replay buffer
(they keep one shape from game to game for that). The learner, a ``DQN`` over an MLP Q-network, holds
one seat (``--seat``) and ``MARLRandomDiscreteMaskedOffPolicyAlgorithm`` the other;
``MultiAgentOffPolicyAlgorithm`` hands each move to its seat's algorithm, and both pick legal moves
only (the greedy action and the epsilon-greedy exploration alike). In the player frame B's positions
look like A's, so the benchmark grades the one network on both seats.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recipe_common  # noqa: E402

from highway_env.cli_args import number, positive_int  # noqa: E402

PLIES = 16  # every legal game lasts 16 moves; an illegal one ends it sooner
#: the learner's n-step return: its own move and the opponent's reply, so the bootstrap is taken on a
#: position where the learner moves again (Tianshou's buffer holds both seats' moves, alternating)
N_STEP = 2
#: env steps per collection and gradient steps per env step: 16 updates a collection, under the 20 from
#: which Tianshou 2.0.1's trainer shows a bar for the updates even with show_progress=False
COLLECT_STEPS = 64
UPDATES_PER_STEP = 0.25


def _require_tianshou() -> None:
    """Exit with the extra to install unless Tianshou 2.x imports."""
    try:
        import tianshou.algorithm  # noqa: F401  (2.x; 1.x had tianshou.policy)
    except ImportError as e:
        sys.exit(f'this recipe needs tianshou 2.x: pip install -e ".[tianshou]" ({e})')


def make_env():
    """Tianshou's PettingZoo env over ``highway_v0.env(frame="player")``."""
    from tianshou.env.pettingzoo_env import PettingZooEnv

    from highway_env import highway_v0

    return PettingZooEnv(highway_v0.env(frame="player"))


def game_counter(Collector):
    """A Tianshou ``Collector`` class that also counts the games it finished and those an illegal
    move ended (shorter than :data:`PLIES`)."""

    class GameCounter(Collector):
        games = 0
        illegal = 0

        def collect(self, *args, **kwargs):
            stats = super().collect(*args, **kwargs)
            self.games += len(stats.lens)
            self.illegal += int((stats.lens != PLIES).sum())
            return stats

    return GameCounter


def build_algorithm(args, env):
    """The learner's DQN and the two-seat algorithm (the learner on ``args.seat``, random masked on the other)."""
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.utils.net.common import Net

    from highway_env.core import NUM_ACTIONS
    from highway_env.highway_v0 import PLANES_SHAPE

    net = Net(state_shape=PLANES_SHAPE, action_shape=NUM_ACTIONS, hidden_sizes=[args.width] * args.layers)
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=args.eps,
                                     eps_inference=0.0)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=args.lr), n_step_return_horizon=N_STEP, gamma=1.0,
                  target_update_freq=args.target_update)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [learner, opponent] if args.seat == "A" else [opponent, learner]
    return learner, MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


def train(args, progress: bool):
    """Train the learner with Tianshou's off-policy trainer; stop after ``args.epochs`` epochs or,
    at the end of an epoch, past ``args.minutes``."""
    import logging

    import numpy as np
    import torch
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams

    # every multi-agent collect warns that it summarises the (games, 2) rewards flattened; the trainer's
    # score is the learner's column (multi_agent_return_reduction)
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou's exploration and random opponent draw from numpy's global generator
    learner, algorithm = build_algorithm(args, make_env())
    training_envs = DummyVectorEnv([make_env] * args.envs)
    test_envs = DummyVectorEnv([make_env] * args.test_games)
    training_envs.seed(args.seed)
    test_envs.seed(args.seed + 1)
    GameCounter = game_counter(Collector)
    buffer = VectorReplayBuffer(args.buffer, args.envs)
    collector = GameCounter(algorithm, training_envs, buffer, exploration_noise=True)
    tester = Collector(algorithm, test_envs, exploration_noise=True)
    learner_index = 0 if args.seat == "A" else 1
    clock = recipe_common.Stopwatch()
    epochs = []  # the epochs tested (the trainer tests once before training, as epoch 0)
    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, test_collector=tester, max_epochs=args.epochs,
        epoch_num_steps=args.epoch_steps, collection_step_num_env_steps=COLLECT_STEPS, batch_size=args.batch,
        update_step_num_gradient_steps_per_sample=UPDATES_PER_STEP, test_step_num_episodes=args.test_games,
        test_fn=lambda epoch, _: epochs.append(epoch), stop_fn=lambda _: clock.seconds() > args.minutes * 60,
        multi_agent_return_reduction=lambda r: r[:, learner_index],
        show_progress=progress, verbose=False))
    training = {"library": f"Tianshou DQN (masked) as {args.seat} vs random masked",
                "seconds": round(clock.seconds(), 1),
                "epochs": max(epochs), "steps": int(result.train_step), "learner_moves": int(result.train_step) // 2,
                "games": collector.games, "illegal": collector.illegal,
                "best_mean_reward_vs_random": float(result.best_reward),
                "versions": recipe_common.versions("tianshou", "torch", "gymnasium", "pettingzoo")}
    return learner.policy.model, training


def batched_policy(net):
    """The greedy (highest legal Q-value) policy of ``net``, batched, for ``evaluate(frame="player")``."""
    import torch

    def policy(obs):
        with torch.no_grad():
            q, _ = net(torch.as_tensor(obs["observation"], dtype=torch.float32))
        q[~torch.as_tensor(obs["action_mask"].astype(bool))] = -torch.inf
        return q.argmax(dim=1).numpy()

    policy.__name__ = "tianshou_dqn"
    return policy


def build_parser():
    p = recipe_common.parser(__doc__.split("\n\n")[0])
    recipe_common.add_budget_args(p, 5.0, "--epochs", "training epochs (default 10,000; 1 with --tiny)")
    p.add_argument("--seat", choices=("A", "B"), default="A",
                   help="the learner's seat (the random opponent has the other)")
    p.add_argument("--epoch-steps", type=positive_int, default=None,
                   help="env steps (both seats' moves) per epoch (default 20,000; 256 with --tiny)")
    p.add_argument("--envs", type=positive_int, default=None, help="training envs (default 16; 4 with --tiny)")
    p.add_argument("--test-games", type=positive_int, default=None,
                   help="games against random after each epoch (default 32; 2 with --tiny)")
    p.add_argument("--batch", type=positive_int, default=None, help="DQN minibatch (default 128; 32 with --tiny)")
    p.add_argument("--buffer", type=positive_int, default=None,
                   help="replay buffer size in env steps (default 100,000; 2,000 with --tiny)")
    p.add_argument("--eps", type=number(float, 0, 1), default=0.1, help="epsilon of the legal-move exploration")
    p.add_argument("--target-update", type=positive_int, default=500,
                   help="gradient steps between target-network updates")
    recipe_common.add_model_args(p, lr=1e-3, entropy=False)
    return p


TINY_TRAINING = {"epochs": 1, "epoch_steps": 256, "envs": 4, "test_games": 2, "batch": 32, "buffer": 2_000}
FULL_TRAINING = {"epochs": 10_000, "epoch_steps": 20_000, "envs": 16, "test_games": 32, "batch": 128, "buffer": 100_000}


def main(argv=None):
    args = recipe_common.parse_args(build_parser(), argv, TINY_TRAINING, FULL_TRAINING)
    _require_tianshou()
    net, training = train(args, progress=not args.no_progress)
    return net, recipe_common.grade(batched_policy(net), args, name="Tianshou DQN vs random", frame="player",
                                    batched=True, training=training)


if __name__ == "__main__":
    main()
