"""Argument types and the parser shared by the command lines: usage errors are one line on stderr
with exit code 2, and numeric limits are finite and in range (no traceback from a later overflow)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal

# Limits beyond these are meaningless (a year of search; more nodes than an int64 counter holds)
# and overflow the compiled search's clock and counters, so they are refused up front.
MAX_TIME_LIMIT = 365 * 24 * 3600.0
MAX_NODE_LIMIT = 2 ** 62
# The solver's transposition table: 2**N two-entry buckets of 21 bytes an entry. Below 10 it is too
# small to help; 30 takes 45 GB. One range for Solver and every --tt-bits flag. It lives here, not in
# the solver package, because importing any module of highway_env.solver loads the compiled solver
# (its __init__ imports Solver), and every command, train.py included, parses its flags with this module.
TT_BITS_MIN, TT_BITS_MAX = 10, 30
#: most simulations a search may be asked for (mcts:N, az:PATH:SIMS, train.py's --simulations, the
#: play server's --max-mcts-sims): a search keeps every node and its edges (up to ~6 KB a simulation
#: on an early Highway board), so a million take gigabytes; far more would fail deep in numpy ("Maximum
#: allowed dimension exceeded", an unallocatable array)
MAX_SIMULATIONS = 1_000_000


def number(kind: type = int, lo=None, hi=None, *, lo_open: bool = False, hi_name: str | None = None):
    """An argparse ``type``: ``kind`` (int or float) read from the text, finite and within the bounds
    (``lo`` excluded with ``lo_open``; ``hi_name`` names ``hi`` in the message); anything else is an
    ArgumentTypeError naming the text."""
    noun = "an integer" if kind is int else "a number"
    top = hi_name or f"{hi}"
    if lo is not None and hi is not None and not lo_open:
        allowed = f"in {lo}..{top}"
    elif lo_open and lo == 0:
        allowed = "positive" + (f" and at most {top}" if hi is not None else "")
    else:
        allowed = " and ".join(part for part in (lo is not None and f"{'above' if lo_open else 'at least'} {lo}",
                                                 hi is not None and f"at most {top}") if part)

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {noun}: {text[:40]!r}") from None
        ok = math.isfinite(value) and (lo is None or (value > lo if lo_open else value >= lo)) and (
            hi is None or value <= hi)
        if not ok:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text[:40]!r}")
        return value

    parse.allowed = allowed  # what --help may quote (see OneLineErrorParser.add_argument)
    parse.bounded = hi is not None and hi < min(MAX_NODE_LIMIT, MAX_TIME_LIMIT, MAX_SIMULATIONS)
    return parse


#: seconds: positive, at most a year
positive_float = number(float, 0, MAX_TIME_LIMIT, lo_open=True, hi_name=f"{MAX_TIME_LIMIT:.0f} seconds (a year)")
#: counts such as nodes or positions: positive, at most 2**62
positive_int = number(int, 0, MAX_NODE_LIMIT, lo_open=True, hi_name="2**62")
#: counts that may be zero: at most 2**62
non_negative_int = number(int, 0, MAX_NODE_LIMIT, hi_name="2**62")
#: the solver's transposition table size, ``Solver(tt_bits=...)``
tt_bits_arg = number(int, TT_BITS_MIN, TT_BITS_MAX)


def path_arg(instead: str = "leave the flag out for its default"):
    """An argparse ``type`` for a path flag: the text as given, refused when empty or blank (an
    ArgumentTypeError, which argparse prefixes with the flag's name). '' is no path: ``Path('')`` is
    '.', and a flag taking it for "none" or "the default" would hide an unset shell variable
    (``--work "$DIR"``). ``instead`` ends the message: what to give instead."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"path {text!r} is empty: give a path, or {instead}")
        return text

    return parse


def check_run_name(name, option: str) -> str:
    """``name`` if it can name a run: one folder name, made under the command's output folder
    (``--name`` under results/, ``--run`` under --out-dir), so that no name puts the run's files
    elsewhere; else ValueError naming ``option``, the value and what is allowed."""
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\") or any(
            ord(c) < 32 or ord(c) == 127 for c in name) or name != name.strip():
        # control characters: a newline split the report's path; spaces around it: 'x ' is another
        # folder than 'x', and ' ' one that looks like none
        raise ValueError(f"{option} must be a run name: one folder name, not empty, '.' or '..', "
                         f"without '/', '\\', control characters (NUL, newline, ...) or spaces around it, "
                         f"got {name!r}")
    return name


def first_line(e: BaseException) -> str:
    """The first line of ``e``'s message, for a one-line error about an exception from other code."""
    return (str(e).strip().splitlines() or [""])[0]


class OneLineErrorParser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit code 2 (argparse prints the whole usage first);
    ``bare_errors=True`` starts the line with "error:" instead of the program's name."""

    def __init__(self, *args, bare_errors: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.bare_errors = bare_errors

    def add_argument(self, *args, **kwargs):
        """As argparse's; the help of a value with a tight :func:`number` range (``--tt-bits``: in
        10..30) ends with that range unless it says it already, so --help gives every allowed range."""
        action = super().add_argument(*args, **kwargs)
        allowed = getattr(action.type, "allowed", "")
        if (getattr(action.type, "bounded", False) and action.help and action.help != argparse.SUPPRESS
                and allowed.removeprefix("in ") not in action.help):
            action.help = f"{action.help} ({allowed})"
        return action

    def error(self, message):
        self.exit(2, f"{'' if self.bare_errors else self.prog + ': '}error: {message} (see --help)\n")


def json_object(text: str, what: str, example: str) -> dict:
    """The JSON object ``text`` (a config given on a command line); ValueError naming ``what`` and
    the text when it is not JSON or not an object (``example`` shows one)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{what} {text[:60]!r} is not JSON ({e}); give a JSON object such as {example}") from None
    except RecursionError:  # '[' * 100000: nested deeper than the parser goes
        raise ValueError(f"{what} {text[:60]!r}... is nested too deeply; give a JSON object such as "
                         f"{example}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{what} must be a JSON object such as {example}, got {text[:60]!r}")
    return obj


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: the command stops its workers, keeps what it has written and
    says so in one line (exit 143, the shell's 128 + 15, where Ctrl-C gives 130)."""


def _raise_terminated(signum, frame):
    # a second SIGTERM must not cut the first one's cleanup short (stopping the workers: seconds)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated()


@contextlib.contextmanager
def sigterm_as_interrupt():
    """SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) inside the block: a batch system's
    stop reaches the command's Ctrl-C handling instead of killing it with its pool half torn down."""
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
