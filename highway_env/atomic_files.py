"""Writing files so that an interrupt never leaves a half-written one.

Write to a temp file in the same folder, fsync it, rename it over the target (atomic on POSIX), then
fsync the folder so the rename itself survives a power loss. Readers see the old file or the whole
new one, never half a file. A path that is a symlink is written through: the file it points to is
replaced and the link stays, as ``> link`` in a shell or ``cp new link`` do (renaming over the link
would turn it into a separate file beside its target, which another run given the target's own
name would then write: two outputs for one).
"""

from __future__ import annotations

import csv
import errno
import io
import os
import tempfile
from pathlib import Path
from typing import Callable


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some platforms cannot open a directory; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` to fill a temp file, then move it over ``path`` atomically (over the
    file a symlink ``path`` points to: see the module docstring)."""
    path = Path(os.path.realpath(path))  # the temp file beside the target: a rename stays on one filesystem
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def remove_stale_temp_files(folder: str | os.PathLike) -> None:
    """Delete the temp files (``.NAME.*.tmp``) that :func:`atomic_write` left in ``folder`` when its
    process was killed mid-write (kill -9, out of memory: no cleanup runs); a checkpoint's replay
    leaves one as large as itself each time. Only for a folder no other process writes to now."""
    for tmp in Path(folder).glob(".*.*.tmp"):
        try:
            tmp.unlink()
        except OSError:  # gone meanwhile, or not ours to delete: leave it
            pass


def check_writable(path: str | os.PathLike, option: str = "output") -> None:
    """Make the folder that will hold the file ``path`` and check that a file can be created there
    and ``path`` is not a folder: commands call it before their work, so a bad output path fails at
    once instead of after hours. Raises OSError with a one-line message naming ``option`` (the
    flag that gave the path), the path and why."""
    text = os.fspath(path)
    if not text:  # Path('') is '.', the current folder
        raise OSError(f"{option} '' is empty: give a file path")
    if text.endswith(("/", os.sep)):  # Path('sub/') is 'sub': a folder's name would be written as a file
        raise OSError(f"{option} {text!r} ends with {text[-1]!r}, a folder: give a file path")
    path = Path(path)
    real = Path(os.path.realpath(path))  # where atomic_write puts it (through a symlink)
    try:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
        real.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(prefix=f".{real.name}.", dir=real.parent):
            pass
    except OSError as e:  # the reason, naming what stands in the way (the folder, not a temp file)
        where = path if isinstance(e, IsADirectoryError) else e.filename
        if where is not None and Path(where).name.startswith(f".{real.name}."):
            where = real.parent
        reason = f"{e.strerror}: {str(where)!r}" if e.strerror and where is not None else str(e)
        raise OSError(f"{option} {str(path)!r}: cannot write there ({reason})") from None


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"atomic_write_bytes needs bytes, got {type(data).__name__}")

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    atomic_write(path, write)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_csv(path: str | os.PathLike, rows: list[dict], fieldnames: list[str]) -> None:
    """``rows`` under a header of ``fieldnames`` (a row's missing keys are empty cells)."""
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=fieldnames)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(path, buf.getvalue())
