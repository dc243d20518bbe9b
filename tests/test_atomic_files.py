"""Atomic writes: the file appears whole or not at all, with the usual permissions."""

import os
import stat

import pytest

from highway_env.atomic_files import atomic_write_bytes, atomic_write_text


def test_atomic_write_replaces_whole_file_with_normal_mode(tmp_path):
    path = tmp_path / "sub" / "out.json"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o044  # readable by others, not 0600
    assert [p.name for p in path.parent.iterdir()] == ["out.json"]  # no temp files left


def test_failed_write_leaves_old_file_and_no_temp(tmp_path):
    path = tmp_path / "out.bin"
    atomic_write_bytes(path, b"old")


    with pytest.raises(TypeError):
        atomic_write_bytes(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]
