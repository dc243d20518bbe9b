"""Any policy as an agent (``act_batch(states, rng)``): what the benchmark plays and grades.

:func:`as_agent` takes each kind of policy :func:`highway_env.benchmark.evaluate` lists; observations
are built for whole batches (:func:`observations`). An action that is not an integer, out of range or
illegal raises :class:`PolicyError` naming the position and the action: it is never replaced by a
legal one. So does a policy that raises (its traceback chained).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys

import numpy as np

from highway_env.cli_args import first_line
from highway_env.core import CELLS, NUM_ACTIONS, Board, action_str, parse_board
from highway_env.highway import batch_rules, highway
from highway_env.highway.batch_rules import FRAME_ACTIONS_INV, FRAMES, check_frame  # noqa: F401

# ``agents`` is imported only inside the functions that use it, so importing this module stays light
# (tests/test_benchmark.py checks that it loads no torch)


class PolicyError(ValueError):
    """A policy returned something that is not a legal action (the message names position and action)."""


def as_boards(states) -> np.ndarray:
    """(N, 16) int8 from a batch, one board array, a ``Board`` or a board string."""
    if isinstance(states, str):
        states = parse_board(states)
    if isinstance(states, Board):
        states = states.cells
    return np.ascontiguousarray(np.asarray(states).reshape(-1, CELLS), dtype=np.int8)


def legal_masks(boards: np.ndarray) -> np.ndarray:
    """(N, 256) bool, absolute frame: number unused and cell empty (all False on a full board)."""
    return batch_rules.masks(as_boards(boards))


def observations(boards: np.ndarray, frame: str = "absolute") -> dict[str, np.ndarray]:
    """The PettingZoo observation dicts of the movers of ``boards`` (N, 16), stacked:
    ``{"observation": (N, 4, 4, 16) int8, "action_mask": (N, 256) int8}`` in ``frame``."""
    return highway.observations(as_boards(boards), check_frame(frame))


def _describe(board, mover: int) -> str:
    return f"position {Board(tuple(int(v) for v in board)).to_string()!r} ({'AB'[mover]} to move)"


def _not_actions_hint(answer) -> str:
    """Why a policy's answer is not its actions: SB3's ``predict`` returns ``(actions, state)``."""
    if isinstance(answer, tuple) and len(answer) == 2:
        return "SB3's predict returns (actions, state): return its first element"
    return ("a batched policy returns one action per stacked observation; one that takes a single "
            "observation is not batched")


def _one_action_each(boards: np.ndarray, answers: list) -> None:
    """PolicyError unless each answer of a policy asked on one observation at a time is one action
    (flattened together, an answer of two would shift the actions onto the next positions)."""
    for board, a in zip(boards, answers):
        pair = isinstance(a, tuple) and len(a) == 2
        try:
            one = not pair and np.size(a) == 1
        except ValueError:  # ragged
            one = False
        if not one:
            hint = _not_actions_hint(a) if pair else (
                "a policy that takes stacked observations is batched: batched=True, --batched")
            raise PolicyError(f"the policy returned {first_line(repr(a))[:100]}, not one action, for the one "
                              f"observation of {_describe(board, int((board != 0).sum()) % 2)} ({hint})")


def to_absolute_actions(boards: np.ndarray, actions, frame: str) -> np.ndarray:
    """Check the policy's ``actions`` for ``boards`` and return them as absolute actions; raise
    :class:`PolicyError` naming the first bad one's position and value."""
    b = np.asarray(boards, np.int64).reshape(-1, CELLS)
    try:
        raw = np.asarray(actions).reshape(-1) if not np.isscalar(actions) else np.asarray([actions])
    except ValueError:  # ragged, as a tuple (actions, None)
        raw = None
    if raw is None or len(raw) != len(b):
        got = f"{len(raw)} actions" if raw is not None and raw.dtype != object else first_line(repr(actions))[:100]
        raise PolicyError(f"the policy returned {got} for {len(b)} positions ({_not_actions_hint(actions)})")
    mover = (b != 0).sum(axis=1) % 2
    if raw.dtype.kind not in "iu":  # floats, bools, strings, None: a programming error, never rounded
        for i, a in enumerate(raw.tolist()):
            if isinstance(a, bool) or not isinstance(a, int):
                raise PolicyError(f"the policy returned {a!r}, not an integer action, in "
                                  f"{_describe(b[i], mover[i])}")
            if not 0 <= a < NUM_ACTIONS:  # here: astype(int64) overflows on 10**30
                raise PolicyError(f"the policy returned action {a}, outside 0..{NUM_ACTIONS - 1}, in "
                                  f"{_describe(b[i], mover[i])}")
    raw = raw.astype(np.int64)
    bad = np.flatnonzero((raw < 0) | (raw >= NUM_ACTIONS))
    if len(bad):
        i = int(bad[0])
        raise PolicyError(f"the policy returned action {int(raw[i])}, outside 0..{NUM_ACTIONS - 1}, in "
                          f"{_describe(b[i], mover[i])}")
    absolute = raw if frame == "absolute" else FRAME_ACTIONS_INV[mover, raw]
    legal = legal_masks(b)[np.arange(len(b)), absolute]
    if not legal.all():
        i = int(np.flatnonzero(~legal)[0])
        a = int(raw[i])
        where = action_str(a) if frame == "absolute" else (
            f"{action_str(a)} in the player frame = {action_str(int(absolute[i]))} on the board")
        raise PolicyError(f"the policy returned illegal action {a} ({where}) in {_describe(b[i], mover[i])}; "
                          "return an action whose action_mask entry is 1")
    return absolute


class PolicyAgent:
    """An observation policy with the ``agents.Agent`` interface (``act``, ``act_batch``):
    ``act_batch`` builds the observations, calls the policy (once for the whole batch when
    ``batched``, else once per position) and checks the actions. ``on_boards``: the policy takes
    the (N, 16) boards instead and answers absolute actions (an OpenSpiel bot's adapter)."""

    def __init__(self, policy, frame: str = "absolute", batched: bool = False, name: str | None = None,
                 on_boards: bool = False):
        if not callable(policy):
            raise TypeError(f"a policy must be callable, got {policy!r}")
        self.policy = policy
        self.frame = "absolute" if on_boards else check_frame(frame)
        self.batched = bool(batched) or on_boards
        self.on_boards = on_boards
        self.name = name or getattr(policy, "__name__", type(policy).__name__)

    def act(self, state, rng=None) -> int:
        return int(self.act_batch(state, rng)[0])

    def act_batch(self, states, rng=None) -> np.ndarray:
        states = as_boards(states)
        if self.on_boards:
            return to_absolute_actions(states, self._ask(states), self.frame)
        obs = observations(states, self.frame)
        if self.batched:
            actions = self._ask(obs)
        else:
            actions = [self._ask({"observation": o, "action_mask": m})
                       for o, m in zip(obs["observation"], obs["action_mask"])]
            _one_action_each(states, actions)
        return to_absolute_actions(states, actions, self.frame)

    def _ask(self, *what):
        try:
            return self.policy(*what)
        except PolicyError:
            raise
        except Exception as e:  # the user's code failing: one line naming it, its traceback chained
            raise PolicyError(f"the policy {self.name!r} raised {type(e).__name__}: {first_line(e)}") from e

    def __repr__(self) -> str:
        return f"PolicyAgent({self.name!r}, frame={self.frame!r}, batched={self.batched})"


class CheckedAgent(PolicyAgent):
    """A user's ``agents.Agent`` whose moves are checked as a policy's: an action that is illegal or
    out of range, or an error it raises, is a :class:`PolicyError` naming the position and the action
    (or the agent and its error), as the README promises for every kind of policy."""

    def __init__(self, agent):
        super().__init__(agent.act_batch, name=getattr(agent, "name", None) or type(agent).__name__, on_boards=True)
        self.agent = agent

    def act_batch(self, states, rng=None) -> np.ndarray:
        states = as_boards(states)
        return to_absolute_actions(states, self._ask(states, rng), self.frame)

    def __repr__(self) -> str:
        return f"CheckedAgent({self.agent!r})"


def _predict_parameters(obj):
    """The parameters of ``obj.predict``; False without such a method, None when its signature
    cannot be read."""
    predict = getattr(obj, "predict", None)
    if not callable(predict):
        return False
    try:
        return inspect.signature(predict).parameters
    except (TypeError, ValueError):
        return None


def _takes_masks(params) -> bool:
    """``predict`` takes ``action_masks`` (assumed when its signature cannot be read)."""
    return params is None or "action_masks" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def is_sb3_model(obj) -> bool:
    """An SB3 / sb3-contrib model (not imported): a ``predict`` taking ``deterministic``, as SB3's
    ``BaseAlgorithm.predict(observation, state, episode_start, deterministic)``, or
    ``action_masks``, as sb3-contrib's MaskablePPO. A class is not a model (its instances are)."""
    if inspect.isclass(obj):
        return False
    params = _predict_parameters(obj)
    return params is not False and (_takes_masks(params) or "deterministic" in params)


def is_openspiel_bot(obj) -> bool:
    """A ``pyspiel.Bot``, or anything with OpenSpiel's bot methods ``step(state)`` and
    ``restart_at(state)`` (an instance: a bot class is a factory). pyspiel is not imported: a
    ``pyspiel.Bot`` exists only once it is."""
    pyspiel = sys.modules.get("pyspiel")
    if pyspiel is not None and isinstance(obj, pyspiel.Bot):
        return True
    return (not inspect.isclass(obj) and callable(getattr(obj, "step", None))
            and callable(getattr(obj, "restart_at", None)))


def is_bot_pair(obj) -> bool:
    """``(bot_for_a, bot_for_b)``: two OpenSpiel bots, one per seat."""
    return isinstance(obj, (list, tuple)) and len(obj) == 2 and all(is_openspiel_bot(b) for b in obj)


def sb3_policy(model):
    """A batched policy calling ``model.predict(obs, action_masks=masks, deterministic=True)``, or
    without ``action_masks`` for a model whose ``predict`` has none (SB3's own PPO, DQN, ...: its
    illegal actions are PolicyErrors, never replaced). The model gets the observation dict when
    its observation space is a Dict (as the Gymnasium env's is) or has none, else just the planes."""
    space = getattr(model, "observation_space", None)
    planes_only = space is not None and not hasattr(space, "spaces")
    masked = _takes_masks(_predict_parameters(model))

    def policy(obs):
        x = obs["observation"] if planes_only else obs
        masks = {"action_masks": obs["action_mask"].astype(bool)} if masked else {}
        actions, _ = model.predict(x, deterministic=True, **masks)
        return actions

    policy.__name__ = type(model).__name__
    return policy


def load_sb3(path: str):
    """A saved SB3 model: sb3-contrib's MaskablePPO where its saved policy is a maskable one, else
    SB3's PPO (each refuses the other's file). ValueError naming ``sb3:PATH`` where it does not load."""
    spec = f"sb3:{path}"
    if not path:
        raise _bad_spec(spec, "give the saved model's file, e.g. sb3:model.zip")
    try:
        from stable_baselines3 import PPO
        from stable_baselines3.common.save_util import load_from_zip_file
    except ImportError:
        raise _bad_spec(spec, "needs sb3-contrib or stable-baselines3: pip install sb3-contrib") from None
    try:
        data, _, _ = load_from_zip_file(path, device="cpu")
        cls = PPO
        if getattr((data or {}).get("policy_class"), "__module__", "").startswith("sb3_contrib"):
            from sb3_contrib import MaskablePPO as cls
        return cls.load(path, device="cpu")
    except FileNotFoundError:
        raise _bad_spec(spec, "no such model file") from None
    except IsADirectoryError:
        raise _bad_spec(spec, f"{path!r} is a directory, not a saved model file") from None
    except Exception as e:  # a file of another kind or algorithm: SB3 fails in many ways
        raise _bad_spec(spec, f"cannot load a MaskablePPO or PPO model from it ({type(e).__name__}: "
                        f"{first_line(e)}); load another algorithm's model in a module:attr factory") from e


def _bad_spec(spec: str, detail) -> ValueError:
    from agents.registry import spec_error_message

    return ValueError(spec_error_message(spec, detail))


def load_spec_object(spec: str):
    """``sb3:PATH.zip`` -> the loaded model; ``module:attr`` -> the attribute, called first when it
    is a zero-argument factory (a class or function with no required parameters)."""
    kind, _, rest = spec.partition(":")
    if kind == "sb3":
        return load_sb3(rest)
    if not rest:
        raise _bad_spec(spec, "a policy spec is module:attr or sb3:PATH.zip")
    try:
        module = importlib.import_module(kind)
    except Exception as e:  # not found, or the module's own code failing
        from agents.registry import agent_kinds

        kinds = ", ".join(dict.fromkeys(agent_kinds() + ["perfect", "sb3"]))
        raise _bad_spec(spec, f"cannot import module {kind!r} ({type(e).__name__}: {first_line(e)}); nor is "
                              f"{kind!r} an agent kind ({kinds}){_path_hint(kind, e)}") from None
    obj, parts = module, rest.split(".")
    for i, part in enumerate(parts):
        if not hasattr(obj, part):
            owner = ".".join([kind, *parts[:i]]) if i else kind
            raise _bad_spec(spec, f"{owner!r} has no attribute {part!r}")
        obj = getattr(obj, part)
    if _zero_arg_factory(obj):
        try:
            obj = obj()
        except Exception as e:
            raise _bad_spec(spec, f"calling {rest!r}() raised {type(e).__name__}: {first_line(e)}") from e
    return obj


def _path_hint(module: str, error: Exception) -> str:
    """Why ``module``, a file in the current directory, did not import: a script's folder is on
    Python's path, the directory it runs from is not (``python path/to/evaluate.py``)."""
    top = module.split(".")[0]
    here = os.path.exists(f"{top}.py") or os.path.isdir(top)
    missing = isinstance(error, ModuleNotFoundError) and error.name == top
    if not (here and missing):
        return ""
    return f"; {top!r} is in the current directory, which is not on Python's path: run with PYTHONPATH=."


def _zero_arg_factory(obj) -> bool:
    from agents.base import Agent

    if isinstance(obj, Agent) or is_sb3_model(obj) or is_openspiel_bot(obj) or not callable(obj):
        return False
    if inspect.isclass(obj):
        return True
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return False
    return not any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                   for p in params) and not any(p.kind == p.VAR_POSITIONAL for p in params)


def is_policy_spec(spec: str) -> bool:
    """A spec that names a policy object (``sb3:PATH`` or ``module:attr``), not an agent kind."""
    from agents.registry import agent_kinds

    kind = spec.partition(":")[0]
    return ":" in spec and (kind == "sb3" or kind not in set(agent_kinds()) | {"perfect"})


def observation_settings(agent) -> dict:
    """The frame and batching ``agent`` was asked in, for a report: None for both where it reads no
    observations (an OpenSpiel bot, an Agent, a spec), so a report never claims a setting that was
    not used; an SB3 model's batching is its own (always batched)."""
    observes = isinstance(agent, PolicyAgent) and not agent.on_boards
    return {"frame": agent.frame if observes else None, "batched": agent.batched if observes else None}


def as_agent(policy, *, frame: str = "absolute", batched: bool = False, perfect: dict | None = None,
             name: str | None = None):
    """``policy`` (any kind :func:`highway_env.benchmark.evaluate` takes) as an Agent."""
    check_frame(frame)
    if isinstance(policy, str):
        from agents.registry import AgentSpecError, spec_error_message

        if is_policy_spec(policy):
            obj = load_spec_object(policy)
            try:
                return as_agent(obj, frame=frame, batched=batched, name=policy)
            except TypeError as e:  # it names something that is not a policy
                raise TypeError(spec_error_message(policy, e)) from None
        from highway_env.evaluation.tasks import get_agent

        try:
            return get_agent(policy, perfect or {})
        except (ValueError, TypeError) as e:  # perfect[:TIEBREAK] is built here, not by make_agent
            raise AgentSpecError(spec_error_message(policy, e)) from e
    from agents.base import Agent
    from highway_env.solver.player import PerfectPlayer

    if isinstance(policy, (PolicyAgent, PerfectPlayer)):  # the perfect player moves game by game (tasks.play)
        return policy
    if isinstance(policy, Agent):
        return CheckedAgent(policy)
    if is_openspiel_bot(policy) or is_bot_pair(policy):
        # imported here: it needs the openspiel extra, which grading anything else does not
        from highway_env.openspiel.grading import BotPolicy

        bots = BotPolicy(policy, error=PolicyError)
        return PolicyAgent(bots, name=name or bots.name, on_boards=True)
    if inspect.isclass(policy) and hasattr(policy, "step") and hasattr(policy, "restart_at"):
        raise TypeError(f"cannot evaluate the class {policy.__name__!r}: give an OpenSpiel bot, an instance "
                        f"such as {policy.__name__}(game, ...)")
    if is_sb3_model(policy):
        return PolicyAgent(sb3_policy(policy), frame, batched=True, name=name)
    if callable(policy):
        return PolicyAgent(policy, frame, batched=batched, name=name)
    raise TypeError(f"cannot evaluate {policy!r}: give a callable on observations, an agents.Agent, an SB3 "
                    "model (with predict(obs, deterministic=...)), an OpenSpiel bot (or a pair, one per seat) "
                    "or an agent spec string")
