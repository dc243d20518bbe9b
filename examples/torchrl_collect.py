"""TorchRL: collect Highway games from ``PettingZooWrapper(use_mask=True)`` with a masked shared
policy, improve it by REINFORCE on the collected games, then grade it against perfect play.

    pip install -e ".[torchrl]"
    python examples/torchrl_collect.py --minutes 5 --out results/recipes/torchrl_reinforce
    python examples/torchrl_collect.py --tiny          # seconds, as the tests run it

The env (``highway_env.integrations.torchrl.make_env``) is ``highway_v0.env(frame="player")`` with both
seats in one group ``players``: TorchRL's ``mask`` says which seat moves, ``action_mask`` which
actions are legal. One MLP (planes in, 256 logits out) acts for both seats through TorchRL's
``ProbabilisticActor`` with a ``MaskedCategorical``; the collector's batches are whole games
(16 frames each, since every game lasts 16 moves), and each move is reinforced by its mover's
final result (+1 / 0 / -1, minus the batch mean).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import recipe_common  # noqa: E402

from highway_env.cli_args import positive_int  # noqa: E402

PLIES = 16  # every game lasts 16 moves, so batches of 16 * k frames hold k whole games


def _import_torchrl():
    try:
        import torch
        from tensordict.nn import TensorDictModule
        from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

        try:
            from torchrl.collectors import Collector
        except ImportError:  # torchrl < 0.14
            from torchrl.collectors import SyncDataCollector as Collector
    except ImportError as e:
        sys.exit(f'this recipe needs torchrl and tensordict: pip install -e ".[torchrl]" ({e})')
    return torch, TensorDictModule, MLP, MaskedCategorical, ProbabilisticActor, Collector


def build_policy(width: int, layers: int):
    """The shared MLP and the masked TorchRL actor around it (acting for both seats of ``players``)."""
    torch, TensorDictModule, MLP, MaskedCategorical, ProbabilisticActor, _ = _import_torchrl()
    from highway_env import highway_v0
    from highway_env.core import NUM_ACTIONS
    from highway_env.integrations.torchrl import GROUP

    class Logits(torch.nn.Module):
        """(..., 4, 4, 16) int8 planes -> (..., 256) logits."""

        def __init__(self):
            super().__init__()
            self.mlp = MLP(in_features=math.prod(highway_v0.PLANES_SHAPE), out_features=NUM_ACTIONS,
                           num_cells=[width] * layers, activation_class=torch.nn.ReLU)

        def forward(self, planes):
            return self.mlp(planes.flatten(-3).float())

    net = Logits()
    module = TensorDictModule(net, in_keys=[(GROUP, "observation", "observation")], out_keys=[(GROUP, "logits")])
    actor = ProbabilisticActor(module, in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
                               out_keys=[(GROUP, "action")], distribution_class=MaskedCategorical,
                               return_log_prob=False)
    return net, actor


def illegal_moves(batch) -> int:
    """Moves in a collected batch whose action is not legal for the seat that moved."""
    from highway_env.integrations.torchrl import GROUP

    group = batch[GROUP]
    movers = group["mask"]  # (frames, 2): which seat moved
    chosen = group["action_mask"].gather(-1, group["action"].unsqueeze(-1)).squeeze(-1)
    return int((movers & ~chosen).sum())


def reinforce_loss(net, batch, entropy_coef: float):
    """REINFORCE on whole games: every move's log-probability times its mover's final result
    (minus the batch mean), plus an entropy bonus."""
    import torch
    from torchrl.modules import MaskedCategorical

    from highway_env.integrations.torchrl import GROUP

    group = batch[GROUP]
    frames = group.batch_size[0]
    reward = batch["next", GROUP, "reward"].reshape(frames // PLIES, PLIES, 2)
    result = reward.sum(dim=1)  # (games, 2): each seat's final reward
    mover = group["mask"].float().argmax(-1)  # (frames,)
    rows = torch.arange(frames)
    ret = result.repeat_interleave(PLIES, dim=0)[rows, mover]
    advantage = ret - ret.mean()
    planes = group["observation", "observation"][rows, mover]
    legal = group["action_mask"][rows, mover]
    dist = MaskedCategorical(logits=net(planes), mask=legal)
    logp = dist.log_prob(group["action"][rows, mover])
    return -(logp * advantage).mean() - entropy_coef * dist.entropy().mean()


def batched_policy(net):
    """The greedy (highest legal logit) policy of ``net``, batched, for ``evaluate(frame="player")``."""
    import torch

    def policy(obs):
        with torch.no_grad():
            logits = net(torch.as_tensor(obs["observation"]))
        logits[~torch.as_tensor(obs["action_mask"].astype(bool))] = -torch.inf
        return logits.argmax(dim=1).numpy()

    policy.__name__ = "torchrl_reinforce"
    return policy


def train(args, progress: bool):
    torch, _, _, _, _, Collector = _import_torchrl()
    from tqdm import tqdm

    from highway_env.integrations.torchrl import make_env

    torch.manual_seed(args.seed)
    net, actor = build_policy(args.width, args.layers)
    frames_per_batch = args.games_per_batch * PLIES
    total = args.batches * frames_per_batch
    collector = Collector(make_env(seed=args.seed), actor, frames_per_batch=frames_per_batch, total_frames=total)
    optim = torch.optim.Adam(net.parameters(), lr=args.lr)
    clock = recipe_common.Stopwatch()
    stats = {"games": 0, "illegal": 0, "batches": 0}
    bar = tqdm(total=args.batches, unit="batch", desc="collect + REINFORCE", disable=not progress, file=sys.stderr)
    for batch in collector:
        stats["illegal"] += illegal_moves(batch)
        stats["games"] += int(batch["next", "done"].sum())
        stats["batches"] += 1
        if args.learn:
            loss = reinforce_loss(net, batch, args.entropy)
            optim.zero_grad()
            loss.backward()
            optim.step()
        bar.update(1)
        bar.set_postfix(games=stats["games"], illegal=stats["illegal"])
        if clock.seconds() > args.minutes * 60:
            break
    bar.close()
    collector.shutdown()
    training = {"library": "TorchRL PettingZooWrapper(use_mask=True) + REINFORCE" if args.learn else
                "TorchRL PettingZooWrapper(use_mask=True), untrained", "seconds": round(clock.seconds(), 1),
                "steps": stats["batches"] * frames_per_batch, **stats,
                "versions": recipe_common.versions("torchrl", "tensordict", "torch", "pettingzoo")}
    return net, training


def build_parser():
    p = recipe_common.parser(__doc__.split("\n\n")[0])
    recipe_common.add_budget_args(p, 5.0, "--batches", "collector batches (default 100,000; 2 with --tiny)",
                                  work="collecting")
    p.add_argument("--games-per-batch", type=positive_int, default=None,
                   help="whole games per collected batch (16 frames each; default 64, 2 with --tiny)")
    p.add_argument("--no-learn", dest="learn", action="store_false",
                   help="only collect (grade the untrained masked policy)")
    recipe_common.add_model_args(p, lr=1e-3)
    return p


TINY_TRAINING = {"batches": 2, "games_per_batch": 2}
FULL_TRAINING = {"batches": 100_000, "games_per_batch": 64}


def main(argv=None):
    args = recipe_common.parse_args(build_parser(), argv, TINY_TRAINING, FULL_TRAINING)
    net, training = train(args, progress=not args.no_progress)
    report = recipe_common.grade(batched_policy(net), args, name="TorchRL REINFORCE" if args.learn else
                                 "TorchRL masked (untrained)", frame="player", batched=True, training=training)
    return net, report


if __name__ == "__main__":
    main()
