"""Games and agents by name: ``get_game("highway")`` and ``make_agent("mcts:200")``; more games plug
in with ``register_game(name, "module:Class")`` or are named by their reference directly.

Agent specs: ``random``, ``greedy``, ``mcts:N`` (UCT + random rollouts, N simulations),
``az:PATH[:SIMS]`` (AlphaZero checkpoint; SIMS=0 plays the raw policy; N and SIMS at most
:data:`MAX_SIMULATIONS`), ``perfect[:ARGS]`` (the exact player the game names in
``Game.perfect_player``, imported on first use; for Highway ``perfect[:tiebreak]``). More kinds
plug in with ``register_agent(name, factory)``: the factory gets the spec's arguments after the
name (a list of strings), the game and the seed.
"""

from __future__ import annotations

import os
import re
from typing import Callable

from agents.base import Agent, GreedyAgent, MCTSAgent, RandomAgent
from agents.checkpoint import CheckpointError
from agents.game import Game
from agents.games import GAMES, get_game, register_game, resolve  # noqa: F401  (the first three: public here too)
from highway_env.cli_args import MAX_SIMULATIONS  # noqa: F401  (the range of every simulation count; public here too)

AgentFactory = Callable[[list, "Game | None", "int | None"], Agent]  # (spec args, game or None, seed)
_AGENTS: dict[str, AgentFactory] = {}


class AgentSpecError(ValueError):
    """An agent spec that cannot be parsed; the message names the spec."""


def spec_prefix(spec) -> str:
    """``bad agent spec 'SPEC'``, how every error about a spec begins (a spec past 100 characters cut)."""
    shown = spec if not isinstance(spec, str) or len(spec) <= 100 else spec[:100] + "..."
    return f"bad agent spec {shown!r}"


def spec_error_message(spec: str, error: BaseException | str) -> str:
    """``error`` (an exception or its message) led by :func:`spec_prefix` once, so that it names what
    the user typed and not only the argument a factory checked."""
    prefix = spec_prefix(spec)
    return str(error) if str(error).startswith(prefix) else f"{prefix}: {error}"


def register_agent(name: str, factory: AgentFactory, *, replace: bool = False) -> None:
    """Make ``make_agent("name[:arg...]")`` call ``factory(args, game, seed)``; ``factory`` raises
    :class:`AgentSpecError` for arguments it cannot take (``make_agent`` puts the whole spec in front of
    its message, and of a ``CheckpointError``'s). A kind registered from outside this module
    exists in this process only: the processes that build agents from specs on their own
    (``evaluate.py``'s workers, the play server's opponents) know the kinds registered below."""
    if name in _AGENTS and not replace:
        raise ValueError(f"agent kind {name!r} is already registered")
    _AGENTS[name] = factory


def agent_kinds() -> list[str]:
    return sorted(_AGENTS)


def make_agent(spec: str, game: Game | None = None, seed: int | None = None) -> Agent:
    """Build an agent from a spec string: ``random``, ``greedy``, ``mcts:N``, ``az:PATH[:SIMS]``,
    ``perfect[:ARGS]`` or a kind added with :func:`register_agent` (the module docstring says what
    each takes). ``game`` defaults to Highway, except that an ``az:`` agent plays its checkpoint's game;
    ``seed`` seeds the agent's generator, so the same seed gives the same moves. A bad spec raises
    :class:`AgentSpecError` naming it, a checkpoint that does not load ``CheckpointError`` naming
    the spec and the file."""
    if not isinstance(spec, str) or not spec:
        raise AgentSpecError(f"an agent spec must be a non-empty string, got {spec!r}")
    name, colon, rest = spec.partition(":")
    if name not in _AGENTS:
        policy = (" (sb3:PATH and module:attr name policies, which highway_env.benchmark.evaluate and "
                  "evaluate.py grade, not agents)" if ":" in spec else "")
        raise AgentSpecError(f"{spec_prefix(spec)}: unknown agent kind {name!r}; known: {agent_kinds()}{policy}")
    args = rest.split(":") if colon else []  # "greedy:" is an empty argument, refused as any other
    try:  # the game may stay None: an az checkpoint knows its own game; the others default to Highway
        return _AGENTS[name](args, game, seed)
    except (AgentSpecError, CheckpointError) as e:  # a factory names only the argument it checked
        kind = CheckpointError if isinstance(e, CheckpointError) else AgentSpecError
        raise kind(spec_error_message(spec, e)) from e
    except (ValueError, TypeError) as e:
        raise AgentSpecError(spec_error_message(spec, e)) from e


def _int_arg(spec_name, value, what, minimum=0, maximum=MAX_SIMULATIONS):
    """The spec argument ``value`` (text) as an int in ``minimum..maximum``, for a factory registered
    below; else :class:`AgentSpecError` naming the kind ``spec_name``, the argument ``what`` and the value.
    The default maximum suits simulation counts: give a search depth its own."""
    shown = value if len(value) <= 40 else value[:40] + "..."
    # plain digits only: int() also reads ' 5', '+5' and '5_000', which the play server's caps
    # (limits.py, by the digits) would let through, and '\xb9' passes isdigit but not int()
    if not re.fullmatch(r"-?[0-9]+", value):
        raise AgentSpecError(f"{spec_name}: {what} must be an integer, got {shown!r}")
    try:
        v = int(value)
    except ValueError:  # more digits than int() reads: out of range
        v = minimum - 1 if value.startswith("-") else maximum + 1
    if not minimum <= v <= maximum:
        raise AgentSpecError(f"{spec_name}: {what} must be >= {minimum} and <= {maximum}, got {shown}")
    return v


def _no_args(kind, cls):
    def factory(args, game, seed):
        if args:
            raise AgentSpecError(f"agent {kind!r} takes no arguments, got {':'.join(args)!r}")
        return cls(game or get_game(), seed=seed)
    return factory


def _mcts(args, game, seed):
    if len(args) != 1:
        raise AgentSpecError(f"mcts spec is mcts:N (N simulations), got args {args}")
    n = _int_arg("mcts", args[0], "N", minimum=1)
    return MCTSAgent(game or get_game(), simulations=n, seed=seed)


def split_az_args(rest: str) -> tuple[str, str | None]:
    """(PATH, SIMS or None) from what follows ``az:`` in an ``az:PATH[:SIMS]`` spec (PATH may
    contain ':'; SIMS is the text of the last part if it is all digits, checked by the caller)."""
    args = rest.split(":") if rest else []
    if len(args) > 1 and args[-1].isdecimal():  # what int() reads (isdigit also takes '\xb9')
        return ":".join(args[:-1]), args[-1]
    return ":".join(args), None


def az_checkpoint(spec: str) -> tuple[str, str] | None:
    """(PATH, ':SIMS' or '') of an ``az:PATH[:SIMS]`` spec; None for other specs. The same agent
    from a copy of the checkpoint (on a Ray node) is ``f"az:{copy}{suffix}"``."""
    name, _, rest = spec.partition(":")
    if name != "az" or not rest:
        return None
    path, sims = split_az_args(rest)
    return path, "" if sims is None else f":{sims}"


def _az(args, game, seed):
    from agents.alphazero import AlphaZeroAgent

    if not any(args):  # "az" or "az:": no PATH
        raise AgentSpecError("az spec is az:PATH[:SIMS]")
    path, sims = split_az_args(":".join(args))
    head, _, tail = path.rpartition(":")
    if sims is None and head and os.path.isfile(head) and not os.path.exists(path):
        _int_arg("az", tail, "SIMS")  # az:x.pt:abc, az:x.pt:-1: a bad SIMS, not a missing file "x.pt:abc"
    sims = None if sims is None else _int_arg("az", sims, "SIMS")
    return AlphaZeroAgent.from_checkpoint(path, simulations=sims, game=game, seed=seed)


def _perfect(args, game, seed):
    game = game or get_game()
    return _perfect_factory(game)(args, game, seed)


def perfect_first_exact_ply(game: Game) -> int:
    """The earliest ply from which ``game``'s perfect player gives exact moves here (0: from the
    start, so it plays whole games), as its class answers ``exact_from_ply(game)`` (0 when it does
    not ask). The player is not built: building one may solve the game."""
    ask = getattr(perfect_player_class(game), "exact_from_ply", None)
    return 0 if ask is None else int(ask(game))


def perfect_player_class(game: Game):
    """The class whose factory ``game``'s ``perfect_player`` names (``Class.from_spec``), None for a
    plain function; AgentSpecError if the game names none or the reference does not import. Its
    ``move_values`` (see ``agents.base.BestValueAgent``) labels positions for the evaluation."""
    return getattr(_perfect_factory(game), "__self__", None)


def _perfect_factory(game: Game):
    ref = type(game).perfect_player
    if ref is None:
        raise AgentSpecError(f"game {game.name!r} names no perfect player (Game.perfect_player)")
    try:
        return resolve(ref)
    except ValueError as e:
        raise AgentSpecError(f"game {game.name!r}: its perfect_player {e}") from None


register_agent("random", _no_args("random", RandomAgent))
register_agent("greedy", _no_args("greedy", GreedyAgent))
register_agent("mcts", _mcts)
register_agent("az", _az)
register_agent("perfect", _perfect)
