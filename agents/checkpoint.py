"""Checkpoint files: atomic writes and loads that fail with a clear error naming the file.

A checkpoint is a ``torch.save``d dict of plain values and tensors (loadable with
``weights_only=True``): ``format``, ``game``, ``net_config``, ``search_config``, ``model`` (the
state dict) and, for training checkpoints, the optimizer, counters, RNG states and config.
"""

from __future__ import annotations

from pathlib import Path

import torch

from highway_env.atomic_files import atomic_write

FORMAT = "alphazero-checkpoint-v1"


class CheckpointError(RuntimeError):
    """A checkpoint file is missing, unreadable, corrupt or of the wrong kind."""


def save_checkpoint(path, data: dict) -> None:
    data = {"format": FORMAT, **data}
    atomic_write(path, lambda tmp: torch.save(data, tmp))


def load_checkpoint(path) -> dict:
    """Load and sanity-check a checkpoint; raises CheckpointError naming ``path`` on any problem."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds (pickle, zip, runtime) for a damaged file
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a checkpoint "
                              f"({type(e).__name__}: {e})") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint {str(path)!r} is not an {FORMAT} file")
    for key in ("game", "net_config", "model"):
        if key not in data:
            raise CheckpointError(f"checkpoint {str(path)!r} lacks the {key!r} entry")
    return data
