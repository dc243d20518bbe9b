"""What the play server lets a request ask for: search sizes, engine processes and checkpoints.

A page (or anything that reaches the port) picks the opponent by a spec string, so without limits
one request could start a search that grows the server by gigabytes (``mcts:2000000``), or load
any ``.pt`` file on the machine. :class:`ServerLimits` is checked before an opponent is built; its
errors name the bad value and the flag that raises the limit, and say the same thing whether or
not a checkpoint path exists (no file-existence oracle).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from highway_env.cli_args import MAX_SIMULATIONS
from highway_env.play.opponents import SHIPPED_ALIASES, SHIPPED_AZ

#: Defaults: mcts:20000 is ~6 s a move on one core; the shipped network searches 400 simulations.
MAX_MCTS_SIMULATIONS = 20_000
MAX_AZ_SIMULATIONS = 2_000
#: Opponents in processes of their own (perfect player ~340 MB each, mcts, az).
MAX_ENGINES = 4


class LimitError(ValueError):
    """A spec the server's limits refuse; the message names the value and the flag to change."""


def _canonical(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


@dataclass(frozen=True)
class ServerLimits:
    max_mcts_simulations: int = MAX_MCTS_SIMULATIONS
    max_az_simulations: int = MAX_AZ_SIMULATIONS
    max_engines: int = MAX_ENGINES
    #: Checkpoints a request may name besides the shipped one (``--checkpoint``).
    checkpoints: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        for name in ("max_mcts_simulations", "max_az_simulations", "max_engines"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
            if name != "max_engines" and v > MAX_SIMULATIONS:  # beyond it the registry refuses the spec anyway
                raise ValueError(f"{name} must be at most {MAX_SIMULATIONS} (as mcts:N and az:PATH:N), got {v!r}")
        object.__setattr__(self, "checkpoints", tuple(_canonical(str(p)) for p in self.checkpoints))

    def check(self, spec) -> None:
        """Raise :class:`LimitError` when ``spec`` asks for more than this server allows. Specs
        that are malformed in other ways pass, so the agent registry names their fault."""
        if not isinstance(spec, str):
            return
        name, _, rest = spec.strip().partition(":")
        if name == "mcts" and rest and ":" not in rest:
            self._simulations(spec, rest, self.max_mcts_simulations, "--max-mcts-sims")
        elif name == "az":
            import agents
            from agents.registry import split_az_args

            path, sims = split_az_args(rest)
            if sims is not None:
                self._simulations(spec, sims, self.max_az_simulations, "--max-az-sims")
            if path in (*SHIPPED_ALIASES, SHIPPED_AZ):  # the shipped checkpoint's names
                return
            if _canonical(path) not in (_canonical(str(agents.PRETRAINED)), *self.checkpoints):
                # the same words whether or not the file exists
                raise LimitError(f"checkpoint {path!r} is not one this server loads: it loads the shipped "
                                 f"network (az or az:{SHIPPED_AZ}) and the files given to it with --checkpoint")

    @staticmethod
    def _simulations(spec: str, text: str, cap: int, flag: str) -> None:
        # compared as text first: int() of thousands of digits is refused (and slow); isdecimal, as
        # int() reads: isdigit also takes '\xb9' (a superscript one)
        if text.isdecimal() and (len(text.lstrip("0")) > len(str(cap)) or int(text) > cap):
            shown = text if len(text) <= 20 else f"{text[:8]}...({len(text)} digits)"
            raise LimitError(f"opponent {spec[:40]!r} asks for {shown} simulations, more than this server's "
                             f"limit of {cap} (start it with {flag} N to raise it)")
