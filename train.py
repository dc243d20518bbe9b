#!/usr/bin/env python
"""Train an AlphaZero agent by self-play: Highway, a sibling game (--game blackpath|jumping) or your own
game (--game package.module:GameClass, an agents.game.Game subclass).

    python train.py --minutes 2            # quick run (smoke test / demo), ~2 minutes
    python train.py                        # default: ~25 minutes on 2 CPU cores, a strong agent
    python train.py --resume               # continue checkpoints/<run>/latest.pt where it stopped
    python train.py --config my.json       # options from a JSON object (flags override it)
    python train.py --game blackpath --game-config '{"rows": 5, "cols": 5}'   # a sibling game, its board
    python train.py --game examples.tictactoe_game:TicTacToeGame   # your own agents.game.Game, by reference

Writes checkpoints/<run>/latest.pt (resumable), best.pt (the best network by --best-by: the solver
grading, or the evaluation score), log.csv and, if the tensorboard package is installed, TensorBoard
logs in tb/. Play the result with
``agents.make_agent("az:checkpoints/<run>/best.pt")``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import signal
import sys
from pathlib import Path

from agents.config import ConfigError, TrainConfig  # torch-free: --help needs no torch
from highway_env.atomic_files import check_writable
from highway_env.cli_args import OneLineErrorParser, Terminated, path_arg, sigterm_as_interrupt
from highway_env.extras import require_torch
from highway_env.run_lock import RunInUseError, lock_run


def build_parser() -> argparse.ArgumentParser:
    p = OneLineErrorParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        argument_default=argparse.SUPPRESS)  # only flags given explicitly override the config
    p.add_argument("--config", metavar="FILE.json", type=path_arg(),
                   help="JSON object of options (keys are the flag names with '_' for '-'); "
                        "flags given on the command line override it")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in OUT_DIR/RUN from latest.pt, with its saved options "
                        "(flags given here override them, e.g. a longer --minutes; a Ray run resumed with "
                        "--ray-address '' leaves its saved Ray settings out)")
    defaults = TrainConfig()
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        default = getattr(defaults, f.name)
        help_text = f"{f.metadata['help']} (default: {default!r})"
        if isinstance(default, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, help=help_text)
        else:
            p.add_argument(flag, type=type(default), metavar=f.name.upper(), help=help_text)
    return p


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    from agents.checkpoint import CheckpointError, load_checkpoint

    given = {k: v for k, v in vars(args).items() if k not in ("config", "resume")}
    base = {}
    if getattr(args, "config", None) is not None:
        base = TrainConfig.from_json(args.config).to_dict()
    if getattr(args, "resume", False):
        probe = TrainConfig.from_dict({**base, **given})
        latest = Path(probe.out_dir) / probe.checked_run() / "latest.pt"  # no checkpoint read from elsewhere
        data = load_checkpoint(latest)
        saved = data.get("config")
        if not isinstance(saved, dict):  # a best.pt or snapshot copied there: it has no options to resume
            raise CheckpointError(f"{latest} is not a training checkpoint (it holds no training options); "
                                  "start a fresh run without --resume, or restore latest.pt")
        if "game_obs" not in saved:  # a run from before game options: its observation as saved
            from agents.registry import get_game

            game_cfg = data.get("game_config") or get_game(saved.get("game", "highway")).legacy_config
            saved = {**saved, "game_obs": game_cfg.get("obs", "")}
        if "random_opening" not in saved:  # nor random openings: resume it as it was played
            saved = {**saved, "random_opening": 0}
        saved = _without_unused_ray_settings(saved, {**base, **given})
        base = {**saved, **base}
    return TrainConfig.from_dict({**base, **given})


#: TrainConfig fields that say how a run's self-play uses Ray, not what it computes
RAY_ONLY = ("ray_runtime_env", "ray_node_wait")


def _without_unused_ray_settings(saved: dict, explicit: dict) -> dict:
    """A resumed run's saved options without its Ray settings where it resumes on this machine
    (no Ray address, saved or given): they would be refused as given without ray_address, though
    the user never gave them (a run trained on a cluster, or one from before they were checked).
    ``explicit``: the options of --config and the command line, which stay as given."""
    if explicit.get("ray_address", saved.get("ray_address")):
        return saved

    defaults = TrainConfig()
    unused = {k: saved[k] for k in RAY_ONLY if k in saved and k not in explicit and saved[k] != getattr(defaults, k)}
    if unused:
        listed = ", ".join(f"{k} {v!r}" for k, v in unused.items())
        print(f"note: resumed on this machine (no ray_address): the run's saved {listed} "
              f"{'is' if len(unused) == 1 else 'are'} for runs on Ray and left out", file=sys.stderr)
    return {k: v for k, v in saved.items() if k not in unused}


def keep_previous_run(run_dir: Path) -> Path | None:
    """A fresh run never overwrites an earlier one: its directory is renamed aside first. A folder
    holding only this run's lock (a read-only --out-dir: highway_env/run_lock.py) has no run in it."""
    if not run_dir.is_dir() or all(p.name == ".lock" for p in run_dir.iterdir()):
        return None
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    aside = run_dir.with_name(f"{run_dir.name}.previous-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = run_dir.with_name(f"{run_dir.name}.previous-{stamp}-{n}")
    run_dir.rename(aside)
    print(f"note: {run_dir} held an earlier run; moved it to {aside} (use --resume to continue a run)",
          file=sys.stderr)
    return aside


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)  # first: --help and an unknown flag need no torch
    try:
        require_torch("train.py (AlphaZero self-play)")
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from agents.checkpoint import CheckpointError

    try:
        cfg = config_from_args(args).validate()
        from agents.trainer import Trainer

        resume = getattr(args, "resume", False)
        trainer = Trainer(cfg, resume=resume)  # first: a device or network it refuses leaves the old run be
        run_lock = lock_run(cfg.out_dir, cfg.run_name())  # held while this process trains the run
        if not resume:
            keep_previous_run(trainer.run_dir)
        check_writable(trainer.run_dir / "latest.pt", "--out-dir/--run")  # now, not at the first checkpoint
    except (ConfigError, CheckpointError, OSError, RunInUseError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from agents.parallel import WorkersLostError
    from agents.trainer import TrainingDiverged
    from highway_env.ray_tasks import RayClusterError

    try:
        with sigterm_as_interrupt():  # SIGTERM stops as Ctrl-C does: save latest.pt, then exit
            out = trainer.run()
    except Terminated:
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        return 130
    # e.g. a Ray address that does not answer, local workers that keep dying
    except (TrainingDiverged, ConfigError, RayClusterError, WorkersLostError) as e:
        if not getattr(e, "reported", False):  # this machine's Ray node lost: said when it was seen
            print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        if run_lock is not None:
            run_lock.close()
    c = out["counters"]
    print(f"done: {c['iteration']} iterations, {c['games']} games, {c['steps']} steps in "
          f"{c['elapsed'] / 60:.1f} min; last eval {out['eval']}; checkpoints in {trainer.run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
