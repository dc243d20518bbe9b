"""The solver's command line contract and the proof machinery on small roots."""

import json
import subprocess
import sys

import numpy as np
import pytest

from highway_env.core import Board, HighwayError, random_board
from highway_env.solver import kernel
from highway_env.solver.__main__ import main
from highway_env.solver.prove import ProofConfig, distinct_moves, first_move_values, prove
from optional_parts import require_ray

POSITION = "6,8,3,0,5,11,10,0,15,0,13,12,1,7,4,0"


def run_cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_solve_json_contract(capsys):
    rc, out, _ = run_cli(capsys, "solve", POSITION, "--json")
    assert rc == 0
    obj = json.loads(out)
    assert set(obj) == {"value", "margin", "best", "nodes", "seconds"}
    assert obj["value"] == 1 and obj["margin"] is None
    assert obj["best"]["action"] == (obj["best"]["number"] - 1) * 16 + obj["best"]["cell"]
    assert isinstance(obj["nodes"], int) and isinstance(obj["seconds"], float)


def test_solve_margin_and_moves_match_brute_force(capsys):
    rc, out, _ = run_cli(capsys, "solve", POSITION, "--json", "--margin", "--moves")
    obj = json.loads(out)
    board = Board.from_string(POSITION)
    assert obj["margin"] == kernel.brute_force_margin(np.array(board.cells))
    assert len(obj["moves"]) == len(board.legal_actions())
    for m in obj["moves"]:
        child = board.apply(m["action"])
        truth = kernel.brute_force_margin(np.array(child.cells))
        assert m["margin"] == truth and m["value"] == (truth > 0) - (truth < 0)
        assert set(m) == {"number", "cell", "action", "value", "margin"}


def test_several_positions_and_file_give_one_line_each_in_order(capsys, tmp_path):
    rng = np.random.default_rng(5)
    boards = [random_board(rng, int(k)) for k in (10, 12, 16, 11)]
    path = tmp_path / "positions.txt"
    path.write_text("# a comment\n" + "\n\n".join(b.to_string() for b in boards[2:]) + "\n")
    rc, out, _ = run_cli(capsys, "solve", boards[0].to_string(), boards[1].to_string(), "--file", str(path),
                         "--json", "--margin")
    lines = out.strip().splitlines()
    assert rc == 0 and len(lines) == 4
    for board, line in zip(boards, lines):
        obj = json.loads(line)
        assert obj["margin"] == kernel.brute_force_margin(np.array(board.cells))
    assert json.loads(lines[2])["best"] is None  # the full board


@pytest.mark.parametrize("bad, message", [
    ("1,2,3", "expected 16 comma-separated numbers, got 3"),
    ("1,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0", "number 1 appears twice"),
    ("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,99", "cell 15 holds 99, out of range"),
    ("a,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", "cell 0 is 'a', not a number"),
])
def test_bad_input_exits_2_with_message(capsys, bad, message):
    rc, out, err = run_cli(capsys, "solve", POSITION, bad, "--json")
    assert rc == 2 and out == ""  # nothing is solved when any position is bad
    assert message in err and "position 2" in err


def test_missing_file_and_bad_flags(capsys, tmp_path):
    rc, _, err = run_cli(capsys, "solve", "--file", str(tmp_path / "nope.txt"))
    assert rc == 2 and "nope.txt" in err
    with pytest.raises(SystemExit) as exc:
        main(["solve", POSITION, "--time-limit", "-3"])
    assert exc.value.code == 2
    assert "must be positive" in capsys.readouterr().err


def test_time_limit_reports_unknown(capsys):
    rc, out, _ = run_cli(capsys, "solve", ",".join(["0"] * 16), "--json", "--time-limit", "0.3")
    obj = json.loads(out)
    assert rc == 0 and obj["value"] is None and obj["status"] == "unknown"


def test_module_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "highway_env.solver", "solve", POSITION, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["value"] == 1
    proc = subprocess.run([sys.executable, "-m", "highway_env.solver", "solve", "nonsense"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "error:" in proc.stderr


def test_distinct_moves_cover_all_moves_once():
    board = Board().apply(16 * 16 - 16 + 3)  # 16 at cell 3
    moves = distinct_moves(board)
    assert sum(orbit for _, orbit in moves) == len(board.legal_actions())
    assert len(distinct_moves(Board())) == 96


def _small_root(seed):
    rng = np.random.default_rng(seed)
    while True:
        board = random_board(rng, 10)
        margin = kernel.brute_force_margin(np.array(board.cells))
        if margin >= 1:
            return board, margin


def test_prove_on_a_small_root_matches_brute_force(tmp_path):
    root, margin = _small_root(1)
    config = ProofConfig(workers=2, tt_bits=12, root=root)
    cert = prove(config, progress=False, threshold=margin)
    first = root.apply(cert["first_move"]["action"])
    assert kernel.brute_force_margin(np.array(first.cells)) >= margin
    assert cert["replies_total"] == len(first.legal_actions())
    for row in cert["replies"]:
        after = first.apply(row["action"]).apply(row["a_answer"]["action"])
        assert kernel.brute_force_margin(np.array(after.cells)) >= margin
    with pytest.raises(RuntimeError, match=f"margin >= {margin + 1}"):
        prove(config, progress=False, threshold=margin + 1)


def test_prove_refuses_a_bad_root_before_it_starts_workers_or_ray(monkeypatch):
    """A root with B to move is a ValueError at once, with no pool left behind (a Ray instance that
    'local' started stayed up, and the next RayCluster in the process took it over as it was)."""
    import highway_env.solver.prove as prove_module

    def no_pool(config):
        raise AssertionError("a pool was made for a root that is refused")

    monkeypatch.setattr(prove_module, "_make_pool", no_pool)
    for root in (Board().apply(0), random_board(np.random.default_rng(0), 16)):
        with pytest.raises(ValueError, match="the root must have A to move"):
            prove(ProofConfig(workers=1, tt_bits=12, root=root), progress=False)


def test_first_move_values_on_a_small_root_and_resume(tmp_path):
    root, _ = _small_root(2)
    out = tmp_path / "first.json"
    config = ProofConfig(workers=1, tt_bits=12, root=root)
    result = first_move_values(config, str(out), progress=False)
    assert result["complete"]
    for m in result["moves"]:
        truth = kernel.brute_force_margin(np.array(root.apply(m["action"]).cells))
        assert m["value"] == (truth > 0) - (truth < 0)
    again = first_move_values(config, str(out), progress=False)  # resumes: nothing left to do
    assert again == result
    out.write_text("{broken")
    with pytest.raises(HighwayError, match="cannot resume"):  # a clear error the CLI turns into exit 2
        first_move_values(config, str(out), progress=False)


def test_prove_runs_on_a_local_ray_instance():
    require_ray()
    rng = np.random.default_rng(4)
    while True:
        root = random_board(rng, 12)
        margin = kernel.brute_force_margin(np.array(root.cells))
        if margin >= 1:
            break
    cert = prove(ProofConfig(ray_address="local", tt_bits=10, root=root), progress=False, threshold=margin)
    assert cert["workers"] == "ray:local"
    import ray

    assert not ray.is_initialized()  # the Ray instance the proof started is shut down with it
    first = root.apply(cert["first_move"]["action"])
    assert kernel.brute_force_margin(np.array(first.cells)) >= margin
    assert cert["replies_total"] == len(first.legal_actions())


def test_first_move_values_take_the_certificate_move_without_reproving(tmp_path):
    root, _ = _small_root(2)
    config = ProofConfig(workers=1, tt_bits=12, root=root)
    cert = prove(config, progress=False)
    result = first_move_values(config, str(tmp_path / "first.json"), progress=False, certificate=cert)
    seeded = [m for m in result["moves"] if m.get("from_certificate")]
    assert [m["action"] for m in seeded] == [cert["first_move"]["action"]] and seeded[0]["value"] == 1
    for m in result["moves"]:
        truth = kernel.brute_force_margin(np.array(root.apply(m["action"]).cells))
        assert m["value"] == (truth > 0) - (truth < 0)
