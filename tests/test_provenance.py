"""Every evaluation report records where its figures came from (highway_env.evaluation.provenance)."""

import importlib.metadata
import json
import subprocess
from pathlib import Path

import evaluate
import highway_env
from highway_env.evaluation.provenance import git_commit, provenance, provenance_line

ROOT = Path(highway_env.__file__).resolve().parent.parent


def git(folder, *args) -> str:
    return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True).stdout.strip()


def test_git_commit_and_local_changes_of_a_checkout(tmp_path):
    assert git_commit(tmp_path) == (None, None)  # not a checkout: an installed copy
    git(tmp_path, "init", "-q")
    (tmp_path / "f.txt").write_text("1\n")
    git(tmp_path, "add", "f.txt")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert git_commit(tmp_path) == (head, False)
    (tmp_path / "new.txt").write_text("untracked files do not count\n")
    assert git_commit(tmp_path) == (head, False)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "summary.json").write_text("{}\n")
    git(tmp_path, "add", "results")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a result")
    head = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "results" / "summary.json").write_text('{"rerun": 1}\n')
    assert git_commit(tmp_path) == (head, False)  # a result rewritten is an output, not a code change
    (tmp_path / "f.txt").write_text("2\n")
    assert git_commit(tmp_path) == (head, True)


def test_the_record_names_this_code_and_its_libraries():
    record = provenance()
    assert record["highway_env"] == highway_env.__version__
    assert record["libraries"]["numpy"] == importlib.metadata.version("numpy")
    assert record["libraries"]["numba"] == importlib.metadata.version("numba")
    assert record["git_commit"] == git_commit(ROOT)[0]
    assert record == provenance()  # no timestamp: the same code gives the same record
    line = provenance_line(record)
    assert f"highway_env {highway_env.__version__}" in line and f"numpy {record['libraries']['numpy']}" in line
    assert provenance_line(None) == ""


def test_evaluate_writes_the_record_into_summary_and_report(tmp_path, capsys):
    out = tmp_path / "ev"
    assert evaluate.main(["--agent", "greedy", "--games", "0", "--rr-games", "0", "--conversion", "0",
                          "--positions", "20", "--positions-v2", "none", "--store", "none", "--workers", "1",
                          "--no-progress", "--no-plots", "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads((out / "summary.json").read_text())
    assert printed["provenance"] == saved["provenance"] == provenance()
    assert provenance_line(saved["provenance"]) in (out / "report.md").read_text()
