"""Checkpoint files: atomic writes and loads that fail with a clear error naming the file.

A checkpoint is a ``torch.save``d dict of plain values and tensors (loadable with
``weights_only=True``): ``format``, ``game``, ``net_config``, ``search_config``, ``model`` and, for
training checkpoints, the optimizer, counters, RNG states and config, plus ``sha256``, a digest of
the rest checked on load (a flipped bit in the weights loads fine with torch). Older files without
it (e.g. the shipped agent) load unchecked.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from highway_env.atomic_files import atomic_write
from highway_env.cli_args import first_line
from highway_env.extras import require_torch

FORMAT = "alphazero-checkpoint-v1"


class CheckpointError(RuntimeError):
    """A checkpoint file is missing, unreadable, corrupt or of the wrong kind."""


#: what the message about a damaged checkpoint suggests
_RESTORE = "restore it from a backup or use another checkpoint (e.g. best.pt, or start a fresh run)"


def _torch():
    # imported on use: CheckpointError, which every command catches, must import without torch
    return require_torch("reading or writing an AlphaZero checkpoint")


def content_digest(data) -> str:
    """sha256 over a nested structure of dicts, lists/tuples, tensors, arrays and plain values, in
    a canonical order (dict keys sorted), so the same content gives the same digest after a
    save/load round trip whatever the file's byte layout."""
    h = hashlib.sha256()
    torch = _torch()

    def feed(x):
        if isinstance(x, dict):
            h.update(b"{%d" % len(x))
            for k in sorted(x, key=repr):
                h.update(repr(k).encode())
                feed(x[k])
            h.update(b"}")
        elif isinstance(x, (list, tuple)):  # the same tag: a round trip may turn one into the other
            h.update(b"[%d" % len(x))
            for v in x:
                feed(v)
            h.update(b"]")
        elif isinstance(x, (torch.Tensor, np.ndarray)):
            a = x.detach().cpu().contiguous() if isinstance(x, torch.Tensor) else np.ascontiguousarray(x)
            h.update(f"T{a.dtype}{tuple(a.shape)}".encode())
            h.update(a.reshape(-1).view(torch.uint8).numpy().tobytes() if isinstance(a, torch.Tensor)
                     else a.tobytes())
        else:
            h.update(f"{type(x).__name__}:{x!r};".encode())

    feed(data)
    return h.hexdigest()


def save_checkpoint(path, data: dict) -> None:
    data = {"format": FORMAT, **{k: v for k, v in data.items() if k != "sha256"}}
    data["sha256"] = content_digest(data)
    atomic_write(path, lambda tmp: _torch().save(data, tmp))


def load_checkpoint(path) -> dict:
    """Load and sanity-check a checkpoint; raises CheckpointError naming ``path`` on any problem."""
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a directory, not a checkpoint file")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    torch = _torch()
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds (pickle, zip, runtime) for a damaged file
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a checkpoint "  # torch's run to pages
                              f"({type(e).__name__}: {first_line(e)[:200]}); {_RESTORE}") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {str(path)!r} is not an {FORMAT} file")
    if "sha256" in data:
        body = {k: v for k, v in data.items() if k != "sha256"}
        if content_digest(body) != data["sha256"]:
            raise CheckpointError(f"checkpoint {str(path)!r} is damaged: its content does not match "
                                  f"its sha256 checksum; {_RESTORE}")
    for key in ("game", "net_config", "model"):
        if key not in data:
            raise CheckpointError(f"checkpoint {str(path)!r} lacks the {key!r} entry")
    for key, kind in (("game", str), ("net_config", dict), ("model", dict), ("game_config", (dict, type(None))),
                      ("search_config", dict)):
        if key in data and not isinstance(data[key], kind):  # a wrong type would fail later, far from here
            raise CheckpointError(f"checkpoint {str(path)!r} is damaged: its {key!r} entry is a "
                                  f"{type(data[key]).__name__}")
    return data
