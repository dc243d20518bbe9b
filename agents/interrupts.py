"""Holding Ctrl-C and SIGTERM back while a training iteration changes the trainer's state.

An interrupt in the middle of an iteration (its positions already in the replay, half its SGD steps
taken, its games counted) would save a state that no uninterrupted run passes through: the resumed
run plays that iteration's games again and learns from them twice. Inside :class:`InterruptsDeferred`
the first SIGINT or SIGTERM is only noted, and raised (through the handler it replaced) when the
block ends, where the state is whole again. A second Ctrl-C stops at once (the block's owner must
then not save the half-changed state); further SIGTERMs wait, as a service manager follows its TERM
with a KILL anyway.
"""

from __future__ import annotations

import signal
import sys
import threading

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class InterruptsDeferred:
    """``with InterruptsDeferred("finishing iteration 3"):`` runs the block with SIGINT and SIGTERM
    held back; ``what`` says what the block finishes (printed when a signal comes). Only in the
    main thread, and only signals whose handler is Python code (the default SIGTERM, which ends
    the process without any saving, stays as it is)."""

    def __init__(self, what: str):
        self.what = what
        self.pending: int | None = None
        self._previous: dict = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in _SIGNALS:
                handler = signal.getsignal(signum)
                if callable(handler):
                    self._previous[signum] = handler
                    signal.signal(signum, self._hold)
        return self

    def _hold(self, signum, frame):
        if self.pending is None:
            self.pending = signum
            again = " (Ctrl-C again stops at once, without saving it)" if signum == signal.SIGINT else ""
            print(f"\n{signal.Signals(signum).name}: {self.what}, then saving{again}", file=sys.stderr, flush=True)
        elif signum == signal.SIGINT:
            self._previous[signum](signum, frame)

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        previous, self._previous = self._previous, {}
        pending, self.pending = self.pending, None
        if pending is not None and exc[0] is None:
            previous[pending](pending, None)  # raises as the signal itself would have (KeyboardInterrupt)
        return False
