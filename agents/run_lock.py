"""One training process per run folder: a lock held while ``train.py`` runs.

Two processes on one run (a fresh run started while another trains there, or a ``--resume`` of a
run still going) overwrite each other's ``latest.pt`` and ``log.csv``; a fresh run moves the folder
aside while the other still writes by its name, so that run's last checkpoints land in the new run's
folder and are overwritten. The lock is an ``flock`` on ``OUT_DIR/.RUN.lock``, beside the folder
(it stays put when the folder is moved aside); the system drops it when its process ends, however
it ends (kill -9 too), so no stale lock is left. Where ``fcntl`` is missing (Windows) runs are not
locked.
"""

from __future__ import annotations

import os
from pathlib import Path


class RunInUseError(RuntimeError):
    """Another process holds the run's lock."""


def lock_run(out_dir: str | os.PathLike, run: str):
    """Hold the lock of run ``run`` in ``out_dir`` for the rest of this process (the returned file
    object keeps it: close it to let go); RunInUseError naming the run and the process holding it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    path = Path(out_dir) / f".{run}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    f = open(path, "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "?"
        f.close()
        raise RunInUseError(f"run {run!r} in {str(out_dir)!r} is in use by another training process (pid {holder}): "
                            "wait for it to end or stop it, or give another --run") from None
    f.seek(0)
    f.truncate()
    f.write(str(os.getpid()))
    f.flush()
    return f
