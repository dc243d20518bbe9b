"""PPO in plain PyTorch on the native Gymnasium vector env, by self-play: one masked policy plays
both seats, then is graded against perfect play. Needs PyTorch only (the extra ``torch``).

    python examples/vector_ppo_selfplay.py --minutes 15 --out results/recipes/vector_ppo
    python examples/vector_ppo_selfplay.py --tiny          # seconds, as the tests run it

Two ``gymnasium.make_vec("highway_env/Highway-v0", num_envs=N, frame="player")`` envs, one playing
A and one B: in the player frame both seats see the same problem, so one network learns both. Each
env's opponent (``batched_opponent=True``: asked once for all its games) is the learner itself,
sampling from its masked distribution: per rollout the current policy (``--p-current``) or one of
its last ``--pool`` snapshots, taken every ``--snapshot-every`` updates. The env steps all games on
the rules kernel, so the network, not the env, sets the pace. Rewards come at the ends of games
(gamma 1); advantages are GAE over each game; the observation that ends a game (empty mask) and the
autoreset step after it are left out of the loss. No fixed opponent and no solver in training.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recipe_common  # noqa: E402

from highway_env import highway_v0  # noqa: E402
from highway_env.cli_args import non_negative_int, number, positive_int  # noqa: E402
from highway_env.core import NUM_ACTIONS  # noqa: E402


def make_net(width: int, layers: int):
    """An MLP from the (4, 4, 16) planes to 256 action logits and a value."""
    import torch

    class PolicyValueNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            sizes = [math.prod(highway_v0.PLANES_SHAPE)] + [width] * layers
            self.body = torch.nn.Sequential(*[m for a, b in zip(sizes, sizes[1:])
                                              for m in (torch.nn.Linear(a, b), torch.nn.ReLU())])
            self.policy = torch.nn.Linear(width, NUM_ACTIONS)
            self.value = torch.nn.Linear(width, 1)

        def forward(self, planes, mask):
            """Masked logits (illegal moves at -1e9) and values of a batch."""
            h = self.body(planes.reshape(len(planes), -1).float())
            return self.policy(h).masked_fill(~mask, -1e9), self.value(h).squeeze(-1)

    return PolicyValueNet()


def sample(net, obs: dict, generator):
    """Actions sampled from ``net``'s masked distribution, their log-probabilities and the values;
    a row without a legal move (a game just ended) gets action 0."""
    import torch

    mask = torch.as_tensor(obs["action_mask"]).bool()
    live = mask.any(dim=1)
    with torch.no_grad():
        logits, values = net(torch.as_tensor(obs["observation"]), mask | ~live[:, None])
        dist = torch.distributions.Categorical(logits=logits)
        actions = torch.multinomial(dist.probs, 1, generator=generator).squeeze(1)
        return actions.where(live, 0), dist.log_prob(actions), values, live


def batched_opponent(pool, frame_inv, generator):
    """The env's opponent: the pool's policy of this rollout, asked on the movers' player-frame
    observations, its actions turned back to the board."""
    from highway_env.benchmark.policy import observations

    def opponent(boards, masks, rng):
        obs = observations(boards, frame="player")
        actions = sample(pool.playing, obs, generator)[0].numpy()
        movers = (boards != 0).sum(axis=1) % 2
        return frame_inv[movers, actions]

    return opponent


class OpponentPool:
    """The learner and its last ``size`` snapshots; ``pick`` sets the one playing this rollout."""

    def __init__(self, learner, size: int, p_current: float):
        self.learner, self.size, self.p_current = learner, size, p_current
        self.snapshots: list = []
        self.playing = learner

    def snapshot(self) -> None:
        import copy

        self.snapshots = (self.snapshots + [copy.deepcopy(self.learner)])[-self.size:] if self.size else []

    def pick(self, rng: np.random.Generator) -> None:
        use_current = not self.snapshots or rng.random() < self.p_current
        self.playing = self.learner if use_current else self.snapshots[rng.integers(len(self.snapshots))]


def advantages(rewards, values, dones, last_values, lam: float):
    """GAE with gamma 1 over (T, N) arrays: a game's end cuts the recursion, so the rows after it
    (the ended observation, the autoreset step) never reach the rows of the game before."""
    adv = np.zeros_like(rewards)
    next_adv, next_value = 0.0, last_values
    for t in range(len(rewards) - 1, -1, -1):
        go_on = 1.0 - dones[t]
        delta = rewards[t] + go_on * next_value - values[t]
        next_adv = delta + lam * go_on * next_adv
        adv[t], next_value = next_adv, values[t]
    return adv


def train(args, progress: bool):
    import gymnasium
    import torch
    from tqdm import tqdm

    from highway_env.highway.batch_rules import FRAME_ACTIONS_INV

    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    net = make_net(args.width, args.layers)
    optimiser = torch.optim.Adam(net.parameters(), lr=args.lr)
    pool = OpponentPool(net, args.pool, args.p_current)
    opponent = batched_opponent(pool, FRAME_ACTIONS_INV, generator)
    envs = [gymnasium.make_vec("highway_env/Highway-v0", num_envs=args.num_envs, play_as=seat, frame="player",
                               opponent=opponent, batched_opponent=True) for seat in "AB"]
    obs = [env.reset(seed=args.seed + k)[0] for k, env in enumerate(envs)]
    clock = recipe_common.Stopwatch()
    stats = {"updates": 0, "steps": 0, "games": 0, "wins": 0}
    bar = tqdm(total=args.updates, unit="update", desc="self-play", disable=not progress, file=sys.stderr)
    while stats["updates"] < args.updates and clock.seconds() < args.minutes * 60:
        pool.pick(rng)
        rollout = {k: [] for k in ("obs", "mask", "actions", "logp", "values", "live", "rewards", "dones")}
        for _ in range(args.rollout):
            step = [sample(net, o, generator) for o in obs]
            for key, i in (("actions", 0), ("logp", 1), ("values", 2), ("live", 3)):
                rollout[key].append(torch.cat([s[i] for s in step]))
            rollout["obs"].append(np.concatenate([o["observation"] for o in obs]))
            rollout["mask"].append(np.concatenate([o["action_mask"] for o in obs]))
            results = [env.step(s[0].numpy()) for env, s in zip(envs, step)]
            obs = [r[0] for r in results]
            rewards = np.concatenate([r[1] for r in results])
            dones = np.concatenate([r[2] | r[3] for r in results])
            rollout["rewards"].append(rewards)
            rollout["dones"].append(dones.astype(np.float64))
            stats["steps"] += int(rollout["live"][-1].sum())
            stats["games"] += int(dones.sum())
            stats["wins"] += int((rewards > 0).sum())
        last_values = torch.cat([sample(net, o, generator)[2] for o in obs]).numpy()
        values = torch.stack(rollout["values"]).numpy()
        adv = advantages(np.stack(rollout["rewards"]), values, np.stack(rollout["dones"]), last_values, args.gae_lambda)
        live = torch.stack(rollout["live"]).reshape(-1)
        data = {"obs": torch.as_tensor(np.stack(rollout["obs"])).reshape(-1, *obs[0]["observation"].shape[1:]),
                "mask": torch.as_tensor(np.stack(rollout["mask"])).reshape(-1, NUM_ACTIONS).bool(),
                "actions": torch.stack(rollout["actions"]).reshape(-1),
                "logp": torch.stack(rollout["logp"]).reshape(-1),
                "returns": torch.as_tensor(adv + values, dtype=torch.float32).reshape(-1),
                "adv": torch.as_tensor(adv, dtype=torch.float32).reshape(-1)}
        data = {k: v[live] for k, v in data.items()}
        ppo_update(net, optimiser, data, args, generator)
        stats["updates"] += 1
        if stats["updates"] % args.snapshot_every == 0:
            pool.snapshot()
        bar.update(1)
        bar.set_postfix(games=stats["games"], pool=len(pool.snapshots))
    bar.close()
    training = {"library": "PyTorch PPO on HighwayVectorEnv", "seconds": round(clock.seconds(), 3), **stats,
                "versions": recipe_common.versions("torch", "gymnasium")}
    return net, training


def ppo_update(net, optimiser, data: dict, args, generator) -> None:
    """``args.epochs`` passes of clipped-PPO minibatch steps over one rollout's live rows."""
    import torch

    n = len(data["actions"])
    for _ in range(args.epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, args.minibatch):
            idx = order[start:start + args.minibatch]
            logits, values = net(data["obs"][idx], data["mask"][idx])
            dist = torch.distributions.Categorical(logits=logits)
            ratio = (dist.log_prob(data["actions"][idx]) - data["logp"][idx]).exp()
            adv = data["adv"][idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(idx) > 1 else adv
            policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - args.clip, 1 + args.clip) * adv).mean()
            value_loss = (values - data["returns"][idx]).pow(2).mean()
            loss = policy_loss + 0.5 * value_loss - args.entropy * dist.entropy().mean()
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            optimiser.step()


def greedy_policy(net):
    """The trained network as a batched player-frame policy: its most likely legal move."""
    import torch

    def policy(obs):
        with torch.no_grad():
            logits, _ = net(torch.as_tensor(obs["observation"]), torch.as_tensor(obs["action_mask"]).bool())
        return logits.argmax(dim=1).numpy()

    return policy


def build_parser():
    p = recipe_common.parser(__doc__.split("\n\n")[0])
    recipe_common.add_budget_args(p, 15.0, "--updates", "PPO updates (default 1,000,000; 2 with --tiny)")
    p.add_argument("--num-envs", type=number(int, 1, 1 << 16), default=None,
                   help="games in each of the two vector envs, one per seat (default 256; 4 with --tiny)")
    p.add_argument("--rollout", type=positive_int, default=None,
                   help="steps of every game per rollout (a game is 8 agent moves; default 16; 8 with --tiny)")
    p.add_argument("--epochs", type=positive_int, default=None,
                   help="PPO epochs per rollout (default 4; 1 with --tiny)")
    p.add_argument("--minibatch", type=positive_int, default=1024, help="minibatch size")
    p.add_argument("--clip", type=number(float, 0, 1, lo_open=True), default=0.2, help="PPO ratio clip")
    p.add_argument("--gae-lambda", type=number(float, 0, 1), default=0.95, help="GAE lambda (gamma is 1)")
    p.add_argument("--pool", type=non_negative_int, default=8,
                   help="past snapshots kept as opponents (0: always the current policy)")
    p.add_argument("--p-current", type=number(float, 0, 1), default=0.5,
                   help="probability that a rollout's opponent is the current policy, not a snapshot")
    p.add_argument("--snapshot-every", type=positive_int, default=10, help="updates between snapshots")
    recipe_common.add_model_args(p, lr=3e-4)
    return p


TINY_TRAINING = {"updates": 2, "num_envs": 4, "rollout": 8, "epochs": 1}
FULL_TRAINING = {"updates": 1_000_000, "num_envs": 256, "rollout": 16, "epochs": 4}


def main(argv=None):
    args = recipe_common.parse_args(build_parser(), argv, TINY_TRAINING, FULL_TRAINING)
    net, training = train(args, progress=not args.no_progress)
    report = recipe_common.grade(greedy_policy(net), args, name="vector-env PPO self-play", frame="player",
                                 batched=True, training=training)
    return net, report


if __name__ == "__main__":
    main()
