"""What every recipe in ``examples/`` ends with: grade its policy against perfect play with
``highway_env.benchmark.evaluate``, print the table and optionally save the report.

The recipes import this as a sibling module (``python examples/NAME.py`` puts ``examples/`` on the path).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from importlib.metadata import PackageNotFoundError, version

from highway_env.atomic_files import check_writable
from highway_env.cli_args import OneLineErrorParser, non_negative_int, number, positive_float, positive_int

#: the benchmark's size at full size and with --tiny (the tests' size)
FULL = {"positions": 3000, "games": 24, "conversion": 60}
TINY = {"positions": 200, "games": 2, "conversion": 2}


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a flag's default unless it is None (sized by --tiny, said in the help) or a switch."""

    def _get_help_string(self, action):
        if action.default is None or isinstance(action.default, bool):
            return action.help
        return super()._get_help_string(action)


def parser(description: str) -> argparse.ArgumentParser:
    """The recipe's parser with the flags every recipe shares (seed, tiny, benchmark size, output)."""
    p = OneLineErrorParser(description=description, formatter_class=_DefaultsFormatter)
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of training and of the benchmark")
    p.add_argument("--tiny", action="store_true",
                   help="a seconds-long run (tiny training and benchmark), as the tests run it")
    p.add_argument("--positions", type=non_negative_int, default=None,
                   help=f"benchmark: positions sampled from the position set, 0 = all "
                        f"(default {FULL['positions']}, {TINY['positions']} with --tiny)")
    p.add_argument("--games", type=non_negative_int, default=None,
                   help=f"benchmark: games against the perfect player on each side "
                        f"(default {FULL['games']}, {TINY['games']} with --tiny)")
    p.add_argument("--conversion", type=non_negative_int, default=None,
                   help=f"benchmark: won positions played out against perfect defence "
                        f"(default {FULL['conversion']}, {TINY['conversion']} with --tiny)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="save the benchmark report there (summary.json, report.md, CSVs, plots)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def add_budget_args(p: argparse.ArgumentParser, minutes: float, count_flag: str, count_help: str,
                    work: str = "training") -> None:
    """``--minutes`` (wall time) and ``count_flag`` (a fixed amount of work: the same result from the
    same seed), the two bounds of every recipe's run; the first one reached stops it."""
    p.add_argument("--minutes", type=positive_float, default=minutes,
                   help=f"stop {work} after this many minutes of wall time (bound a run by {count_flag} instead "
                        "for the same result from the same seed)")
    p.add_argument(count_flag, type=positive_int, default=None, help=count_help)


def add_model_args(p: argparse.ArgumentParser, lr: float, entropy: bool = True) -> None:
    """The network and optimiser flags the recipes share (``--entropy`` for the policy-gradient ones)."""
    p.add_argument("--lr", type=positive_float, default=lr, help="learning rate (Adam)")
    if entropy:
        p.add_argument("--entropy", type=number(float, 0), default=0.01, help="entropy bonus coefficient")
    p.add_argument("--width", type=positive_int, default=256, help="hidden units per layer")
    p.add_argument("--layers", type=positive_int, default=2, help="hidden layers")
    p.add_argument("--threads", type=number(int, 1, 256), default=1,
                   help="torch threads (small networks run fastest on one)")


def parse_args(p: argparse.ArgumentParser, argv, tiny: dict, full: dict) -> argparse.Namespace:
    """Parse ``argv``, fill the training sizes left unset from ``tiny`` (with --tiny) or ``full``,
    and set torch's thread count."""
    import torch

    args = p.parse_args(argv)
    if args.out is not None:  # checked now, not after the training
        try:
            check_writable(os.path.join(args.out, "summary.json"), "--out")
        except OSError as e:
            p.error(str(e))
    for key, value in (tiny if args.tiny else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    torch.set_num_threads(args.threads)
    return args


def benchmark_size(args) -> dict:
    base = TINY if args.tiny else FULL
    return {k: base[k] if getattr(args, k) is None else getattr(args, k) for k in FULL}


def versions(*packages: str) -> dict:
    """Installed versions of ``packages`` (and Python), for the report."""
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def grade(policy, args, *, name: str, frame: str, batched: bool, training: dict):
    """Grade ``policy`` with ``highway_env.benchmark.evaluate``, print the table and the training
    figures, save the report under ``args.out`` (with ``training`` in summary.json) and return it."""
    from highway_env.benchmark import evaluate

    report = evaluate(policy, frame=frame, batched=batched, seed=args.seed, name=name,
                      progress=not args.no_progress, **benchmark_size(args))
    report.summary["training"] = training
    print(report.table())
    print(f"training: {training['seconds']:.0f} s wall, {training.get('steps', 0):,} env steps; "
          f"benchmark: {report.summary['wall_seconds']:.0f} s")
    if args.out:
        print(f"report saved to {report.save(args.out)}")
    return report


class Stopwatch:
    """Wall seconds since creation (training time for the report)."""

    def __init__(self):
        self.t0 = time.monotonic()

    def seconds(self) -> float:
        return time.monotonic() - self.t0
