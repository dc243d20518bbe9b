"""sb3-contrib MaskablePPO trained by self-play: one shared policy plays both seats, then is graded
against perfect play.

    pip install -e ".[sb3]"
    python examples/sb3_maskable_ppo_selfplay.py --minutes 15 --out results/recipes/sb3_maskable_ppo
    python examples/sb3_maskable_ppo_selfplay.py --tiny          # seconds, as the tests run it

Every env is ``HighwayGymEnv(play_as=..., frame="player")``, half of them as A and half as B: in the
player frame both seats see the same problem (observation, mask and actions turned for B), so one
network learns both. The opponent inside each env is the learner itself: at every game it is either
the current policy (``--p-current``) or one of the last ``--pool`` snapshots of it taken every
``--snapshot-every`` rollouts, and it samples its moves from its masked distribution. There is no
fixed opponent and no solver in training; the solver only grades the result.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recipe_common  # noqa: E402

from highway_env.atomic_files import atomic_write, check_writable  # noqa: E402
from highway_env.cli_args import non_negative_int, positive_int  # noqa: E402


def _import_sb3():
    try:
        import gymnasium
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.monitor import Monitor
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ImportError as e:
        sys.exit(f'this recipe needs sb3-contrib and stable-baselines3: pip install -e ".[sb3]" ({e})')
    return gymnasium, MaskablePPO, BaseCallback, Monitor, DummyVecEnv


class OpponentPool:
    """The learner's current policy and its last ``size`` snapshots; ``pick`` draws one for a game."""

    def __init__(self, size: int, p_current: float):
        self.size, self.p_current = size, p_current
        self.current = None  # the model's live policy (updated in place by training)
        self.snapshots: list = []

    def snapshot(self) -> None:
        # a new policy loaded with the weights (deepcopy would also copy the last distribution's tensors)
        policy = self.current
        frozen = type(policy)(**policy._get_constructor_parameters()).to(policy.device)
        frozen.load_state_dict(policy.state_dict())
        frozen.set_training_mode(False)
        self.snapshots = (self.snapshots + [frozen])[-self.size:] if self.size else []

    def pick(self, rng: np.random.Generator):
        if not self.snapshots or rng.random() < self.p_current:
            return self.current
        return self.snapshots[rng.integers(len(self.snapshots))]


def policy_opponent(policy):
    """An opponent for ``HighwayGymEnv`` (absolute board in, absolute action out) that asks
    ``policy`` in the player frame and samples from its masked distribution."""
    from highway_env.benchmark.policy import observations, to_absolute_actions

    def opponent(board, mask, rng):
        boards = np.asarray(board.cells, np.int8)[None]
        obs = observations(boards, frame="player")
        action, _ = policy.predict(obs, action_masks=obs["action_mask"].astype(bool), deterministic=False)
        return int(to_absolute_actions(boards, action, "player")[0])  # raises on an illegal move

    return opponent


def make_env_class(gymnasium):
    from highway_env.gym_env import HighwayGymEnv

    class SelfPlayEnv(gymnasium.Wrapper):
        """``HighwayGymEnv(play_as, frame="player")`` whose opponent, drawn from ``pool`` at every
        reset, is the learner itself (current or a past snapshot)."""

        def __init__(self, play_as: str, pool: OpponentPool):
            super().__init__(HighwayGymEnv(play_as=play_as, frame="player"))
            self.pool = pool

        def reset(self, **kwargs):
            self.env.unwrapped.opponent = policy_opponent(self.pool.pick(self.env.unwrapped.np_random))
            return self.env.reset(**kwargs)

        def action_masks(self) -> np.ndarray:
            return self.env.unwrapped.action_masks()

    return SelfPlayEnv


def train(args, progress: bool):
    gymnasium, MaskablePPO, BaseCallback, Monitor, DummyVecEnv = _import_sb3()
    SelfPlayEnv = make_env_class(gymnasium)
    pool = OpponentPool(args.pool, args.p_current)
    seats = ["A", "B"] * (args.envs // 2) + ["A"] * (args.envs % 2)
    venv = DummyVecEnv([lambda s=s: Monitor(SelfPlayEnv(s, pool)) for s in seats])
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=args.n_steps, batch_size=args.batch_size,
                        n_epochs=args.epochs, learning_rate=args.lr, gamma=1.0, gae_lambda=0.95,
                        ent_coef=args.entropy, policy_kwargs={"net_arch": [args.width] * args.layers},
                        seed=args.seed, device="cpu", verbose=0)
    pool.current = model.policy
    venv.seed(args.seed)
    clock = recipe_common.Stopwatch()
    stats = {"games": 0, "wins": 0}  # an illegal move raises (HighwayGymEnv's default), never counted

    class SelfPlay(BaseCallback):
        """Snapshots into the pool, the time limit, a progress bar, game counts."""

        def _on_training_start(self):
            from tqdm import tqdm

            self.bar = tqdm(total=args.timesteps, unit="step", desc="self-play", disable=not progress,
                            file=sys.stderr)
            self.rollouts = 0

        def _on_step(self) -> bool:
            self.bar.update(self.training_env.num_envs)
            for done, reward in zip(self.locals["dones"], self.locals["rewards"]):
                if done:
                    stats["games"] += 1
                    stats["wins"] += int(reward > 0)
            return clock.seconds() < args.minutes * 60

        def _on_rollout_end(self):
            self.rollouts += 1
            if self.rollouts % args.snapshot_every == 0:
                pool.snapshot()
            self.bar.set_postfix(games=stats["games"], pool=len(pool.snapshots))

        def _on_training_end(self):
            self.bar.close()

    model.learn(total_timesteps=args.timesteps, callback=SelfPlay())
    training = {"library": "sb3-contrib MaskablePPO", "seconds": round(clock.seconds(), 1),
                "steps": int(model.num_timesteps), **stats,
                "versions": recipe_common.versions("sb3-contrib", "stable-baselines3", "torch", "gymnasium")}
    return model, training


def save_model(model, path) -> None:
    """``model.save`` through a temp file, so an interrupted save leaves no half-written zip."""
    def write(tmp):
        with open(tmp, "wb") as f:
            model.save(f)

    atomic_write(path, write)


def build_parser():
    p = recipe_common.parser(__doc__.split("\n\n")[0])
    recipe_common.add_budget_args(p, 15.0, "--timesteps", "learner steps (default 10,000,000; 128 with --tiny)")
    p.add_argument("--envs", type=positive_int, default=None,
                   help="parallel games in the vector env, half as A, half as B (default 16; 2 with --tiny)")
    p.add_argument("--n-steps", type=positive_int, default=None,
                   help="steps per env per rollout (default 128; 32 with --tiny)")
    p.add_argument("--batch-size", type=positive_int, default=None, help="minibatch size (default 256; 32 with --tiny)")
    p.add_argument("--epochs", type=positive_int, default=None,
                   help="PPO epochs per rollout (default 4; 1 with --tiny)")
    p.add_argument("--pool", type=non_negative_int, default=8,
                   help="past snapshots kept as opponents (0: always the current policy)")
    p.add_argument("--p-current", type=float, default=0.5,
                   help="probability that a game's opponent is the current policy, not a snapshot")
    p.add_argument("--snapshot-every", type=positive_int, default=10, help="rollouts between snapshots")
    p.add_argument("--save", default=None, metavar="PATH.zip",
                   help="save the trained model there (load it with MaskablePPO.load, grade it with "
                        "python evaluate.py --agent sb3:PATH.zip --frame player)")
    recipe_common.add_model_args(p, lr=3e-4)
    return p


TINY_TRAINING = {"timesteps": 128, "envs": 2, "n_steps": 32, "batch_size": 32, "epochs": 1}
FULL_TRAINING = {"timesteps": 10_000_000, "envs": 16, "n_steps": 128, "batch_size": 256, "epochs": 4}


def main(argv=None):
    parser = build_parser()
    args = recipe_common.parse_args(parser, argv, TINY_TRAINING, FULL_TRAINING)
    if not 0.0 <= args.p_current <= 1.0:
        parser.error(f"--p-current must be in [0, 1], got {args.p_current}")
    if args.save:  # checked now, not after the training
        try:
            check_writable(args.save, "--save")
        except OSError as e:
            parser.error(str(e))
    model, training = train(args, progress=not args.no_progress)
    if args.save:
        save_model(model, args.save)
    report = recipe_common.grade(model, args, name="MaskablePPO self-play", frame="player", batched=True,
                                 training=training)
    return model, report


if __name__ == "__main__":
    main()
