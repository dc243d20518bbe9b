"""One process per run folder or output file: a lock held while the process writes there.

Two processes on one training run (a fresh run started while another trains there, or a
``--resume`` of a run still going) overwrite each other's ``latest.pt`` and ``log.csv``; a fresh
run moves the folder aside while the other still writes by its name, so that run's last
checkpoints land in the new run's folder and are overwritten. :func:`lock_run` takes an ``flock``
on ``OUT_DIR/.RUN.lock``, beside the folder (it stays put when the folder is moved aside). Where
that file cannot be created (a read-only ``OUT_DIR`` whose run folder is writable, as a
``--resume`` there needs) it locks ``OUT_DIR/RUN/.lock`` inside the folder instead: the other
process it must stop is then a resume of the same run, as a fresh run in a read-only ``OUT_DIR``
cannot move the folder aside. A run folder that is a symlink is locked under both names, its own
and that of the folder it names. Two solver commands given one ``--out`` overwrite each other's
results: :func:`lock_output` locks ``.NAME.lock`` beside the file, by its resolved path (a symlink
and its target are one output, as :func:`~highway_env.atomic_files.atomic_write` writes through the link).

The system drops a lock when its process ends, however it ends (kill -9 too), so no stale lock is
left. Where ``fcntl`` is missing (Windows) nothing is locked.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path


class RunInUseError(RuntimeError):
    """Another process holds the lock; the message names what and the process's pid."""


def hold_lock(path: str | os.PathLike, in_use: str):
    """Hold an ``flock`` on the file ``path`` (made if missing) for the rest of this process (the
    returned file object keeps it: close it to let go). RunInUseError(``in_use`` with ``{pid}``
    replaced by the holder's pid) if another process holds it; None where ``fcntl`` is missing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    f = open(path, "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        holder = f.read().strip() or "?"
        f.close()
        raise RunInUseError(in_use.replace("{pid}", holder)) from None
    f.seek(0)
    f.truncate()
    f.write(str(os.getpid()))
    f.flush()
    return f


def lock_run(out_dir: str | os.PathLike, run: str):
    """Hold the lock of training run ``run`` in ``out_dir`` (see the module docstring): an object
    whose close() lets go of it, or RunInUseError naming the run and the process holding it."""
    out_dir = Path(out_dir)
    in_use = (f"run {run!r} in {str(out_dir)!r} is in use by another training process (pid {{pid}}): "
              "wait for it to end or stop it, or give another --run")
    out_dir.mkdir(parents=True, exist_ok=True)
    names = [(out_dir, run)]
    if (out_dir / run).is_symlink() and (out_dir / run).is_dir():
        # the folder it names is locked under its own name too, which another process may train it by
        target = (out_dir / run).resolve()
        names.append((target.parent, target.name))
    locks = contextlib.ExitStack()  # close() lets go of each
    held: set[str] = set()  # lock files, resolved: both names may come to one (inside the folder)
    try:
        for where, name in names:
            lock = _hold_run_lock(where, name, in_use, held)
            if lock is not None:
                locks.callback(lock.close)
    except BaseException:
        locks.close()
        raise
    return locks


def _hold_run_lock(out_dir: Path, run: str, in_use: str, held: set[str]):
    beside, inside = out_dir / f".{run}.lock", out_dir / run / ".lock"
    if os.path.realpath(beside) not in held:
        try:
            lock = hold_lock(beside, in_use)
            held.add(os.path.realpath(beside))
            return lock
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS) or not (out_dir / run).is_dir():
                raise
    if os.path.realpath(inside) in held:
        return None
    lock = hold_lock(inside, in_use)  # a read-only out_dir: see the module docstring
    held.add(os.path.realpath(inside))
    return lock


def lock_output(path: str | os.PathLike, option: str = "--out"):
    """Hold the lock of the output file ``path`` (given by the flag ``option``): the file object
    that keeps it, or RunInUseError naming the file and the process writing it. The lock is taken
    beside the file the path resolves to: ``--out link`` and ``--out target`` (or a path through a
    symlinked folder) are one file, which two runs must not share."""
    real = Path(os.path.realpath(path))
    real.parent.mkdir(parents=True, exist_ok=True)
    return hold_lock(real.with_name(f".{real.name}.lock"),
                     f"{option} {str(path)!r} is being written by another process (pid {{pid}}): "
                     f"wait for it to end or stop it, or give another {option}")
