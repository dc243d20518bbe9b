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


def test_a_symlinked_path_is_written_through_to_its_target(tmp_path):
    """Renaming over a symlink made it a separate file: the target kept the old content, and a run
    given the target's own name wrote another file than one given the link."""
    target = tmp_path / "runs" / "run7.json"
    atomic_write_text(target, "old")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["run7.json"]  # the temp file was made there
    dangling = tmp_path / "next.json"  # a link to a file not written yet
    dangling.symlink_to(tmp_path / "runs" / "run8.json")
    atomic_write_text(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "runs" / "run8.json").read_text() == "made"


def test_check_writable_checks_the_folder_a_symlink_leads_to(tmp_path):
    """The write goes beside the target, so that folder is the one that must take a new file (it
    checked the link's own folder, and the output failed only at the end of the work)."""
    from highway_env.atomic_files import check_writable

    blocker = tmp_path / "a_file"
    blocker.write_text("")
    link = tmp_path / "out.json"
    link.symlink_to(blocker / "out.json")  # its folder cannot be made: a file is in the way
    with pytest.raises(OSError, match=f"--out {str(link)!r}: cannot write there"):
        check_writable(link, "--out")
    check_writable(tmp_path / "plain.json", "--out")  # the link's own folder is fine


def test_atomic_write_csv_writes_the_header_and_leaves_missing_cells_empty(tmp_path):
    import csv

    from highway_env.atomic_files import atomic_write_csv

    path = tmp_path / "log.csv"
    atomic_write_csv(path, [{"a": 1, "b": 2}, {"a": 3}], ["a", "b"])
    with open(path, newline="") as f:
        assert list(csv.reader(f)) == [["a", "b"], ["1", "2"], ["3", ""]]
    assert [p.name for p in tmp_path.iterdir()] == ["log.csv"]  # no temporary file left
