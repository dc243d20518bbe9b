"""Argument types and the parser shared by the command lines: usage errors are one line on stderr
with exit code 2, and numeric limits are finite and in range (no traceback from a later overflow)."""

from __future__ import annotations

import argparse

# Limits beyond these are meaningless (a year of search; more nodes than an int64 counter holds)
# and overflow the compiled search's clock and counters, so they are refused up front.
MAX_TIME_LIMIT = 365 * 24 * 3600.0
MAX_NODE_LIMIT = 2 ** 62


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text[:40]!r}") from None
    if not 0 < value <= MAX_TIME_LIMIT:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"must be positive and at most {MAX_TIME_LIMIT:.0f} seconds (a year), "
                                         f"got {text[:40]!r}")
    return value


def positive_int(text: str) -> int:
    return _int_in_range(text, 1)


def non_negative_int(text: str) -> int:
    return _int_in_range(text, 0)


def _int_in_range(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text[:40]!r}") from None
    if not least <= value <= MAX_NODE_LIMIT:
        raise argparse.ArgumentTypeError(f"must be {'positive' if least else 'non-negative'} and at most 2**62, "
                                         f"got {text[:40]!r}")
    return value


class OneLineErrorParser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit code 2 (argparse prints the whole usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
