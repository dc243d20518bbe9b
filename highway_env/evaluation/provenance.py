"""Where a result came from: the package's version and git commit, Python, the machine and the
versions of the libraries that can change a figure, recorded in every evaluation report so that a
cited number can be traced and rerun. No timestamp: two runs of the same command on the same code
give the same record (the reports' own tests compare whole summaries)."""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

#: distributions whose versions a report records where installed (numba and numpy run the rules and
#: the solver; torch the AlphaZero networks; the others the envs, Ray runs and OpenSpiel bots)
LIBRARIES = ("numpy", "numba", "gymnasium", "pettingzoo", "torch", "ray", "open_spiel")


def git_commit(folder: Path) -> tuple[str | None, bool | None]:
    """(HEAD's commit, whether tracked files outside ``results/`` differ from it) of the git checkout
    holding ``folder``; (None, None) outside a checkout or without git (an installed package).
    ``results/`` holds outputs, not code: rerunning the shipped commands one after another rewrites
    it, which must not mark the next run's code as changed."""
    if not (folder / ".git").exists():
        return None, None
    try:
        run = functools.partial(subprocess.run, cwd=folder, capture_output=True, text=True, timeout=10, check=True)
        commit = run(["git", "rev-parse", "HEAD"]).stdout.strip()
        dirty = bool(run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                          ":(exclude)results"]).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit, dirty


def provenance() -> dict:
    """The record (JSON-ready): ``highway_env`` (version), ``git_commit`` / ``git_dirty`` (None for
    an installed copy), ``python``, ``platform``, ``cpus`` and ``libraries`` (name -> version, the
    installed ones of :data:`LIBRARIES`)."""
    import highway_env

    commit, dirty = git_commit(Path(highway_env.__file__).resolve().parent.parent)
    libraries = {}
    for name in LIBRARIES:
        try:
            libraries[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return {"highway_env": highway_env.__version__, "git_commit": commit, "git_dirty": dirty,
            "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "libraries": libraries}


def provenance_line(record: dict | None) -> str:
    """One markdown line of ``record`` for a report ('' without one: a summary from before it)."""
    if not record:
        return ""
    commit = record.get("git_commit")
    code = (f"git {commit[:12]}{' with local changes' if record.get('git_dirty') else ''}" if commit
            else "an installed copy")
    libs = ", ".join(f"{k} {v}" for k, v in record.get("libraries", {}).items())
    return (f"Produced by highway_env {record.get('highway_env')} ({code}) on Python {record.get('python')}, "
            f"{record.get('platform')}, {record.get('cpus')} CPUs; {libs}.")
