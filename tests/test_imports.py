"""How the packages load: the perfect player needs no side-effect import, the runtime paths do not
load torch, and ``agents`` imports its parts on first use. Each check runs in a fresh interpreter
(an import already made by another test would hide the fault)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_make_agent_perfect_works_in_a_fresh_process():
    # no module has to be imported first for the "perfect" kind to exist
    r = _run("import agents; print(agents.make_agent('perfect').act('16,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0'))")
    assert r.returncode == 0, r.stderr
    assert 0 <= int(r.stdout.strip()) < 256


@pytest.mark.parametrize("module", ["highway_env", "highway_env.solver.player", "highway_env.solver.book",
                                    "highway_env.play.hints", "highway_env.evaluation.tasks", "agents"])
def test_runtime_modules_do_not_import_torch(module):
    r = _run(f"import sys, {module}; assert 'torch' not in sys.modules, 'torch was imported'")
    assert r.returncode == 0, r.stderr


def test_perfect_player_and_hints_do_not_import_torch_when_used():
    r = _run("import sys, agents\n"
             "from highway_env.core import Board\n"
             "from highway_env.play.hints import HintService\n"
             "agents.make_agent('perfect', seed=0)\n"
             "h = HintService(time_limit=0.5).hint(Board())\n"
             "assert h['status'], h\n"
             "assert 'torch' not in sys.modules, 'torch was imported'")
    assert r.returncode == 0, r.stderr


def test_evaluation_workers_load_torch_only_for_an_agent_that_uses_it():
    """A worker grading random, greedy and perfect agents does not import torch (2 s a process);
    for a task of any other agent it does, and runs it with one thread, as every worker did before."""
    r = _run("import sys\n"
             "from highway_env.evaluation.tasks import execute, worker_init\n"
             "worker_init(torch_now=False)\n"
             "def moves(spec):\n"
             "    return execute({'id': spec, 'kind': 'moves', 'agent': spec, 'positions_file': None,\n"
             "                    'index': [0, 1], 'seed': 0, 'perfect': {}})\n"
             "for spec in ('random', 'greedy'):\n"
             "    moves(spec)\n"
             "assert 'torch' not in sys.modules, 'torch was imported'\n"
             "moves('az:agents/pretrained/highway_az.pt:8')\n"
             "import torch\n"
             "assert torch.get_num_threads() == 1, torch.get_num_threads()")
    assert r.returncode == 0, r.stderr


def test_grading_a_spec_in_the_callers_process_leaves_its_torch_threads():
    """highway_env.benchmark.evaluate / as_agent build agents by spec in the caller's process (through
    the evaluation's get_agent): only the evaluation's task runners limit torch to one thread, not a
    user's process that trains with torch and grades a spec between its updates."""
    r = _run("import torch\n"
             "torch.set_num_threads(3)\n"
             "from highway_env.benchmark.policy import as_agent\n"
             "for spec in ('greedy', 'az:agents/pretrained/highway_az.pt:8'):\n"
             "    as_agent(spec)\n"
             "    assert torch.get_num_threads() == 3, (spec, torch.get_num_threads())")
    assert r.returncode == 0, r.stderr


def test_agents_package_imports_its_parts_on_first_use():
    r = _run("import sys, agents\n"
             "assert 'agents.registry' not in sys.modules and 'agents.base' not in sys.modules\n"
             "from agents import make_agent, get_game, Game, CheckpointError\n"
             "assert 'agents.registry' in sys.modules\n"
             "assert agents.get_game is get_game\n"
             "try:\n    agents.no_such_name\nexcept AttributeError as e:\n    assert 'no_such_name' in str(e)\n"
             "else:\n    raise SystemExit('no AttributeError')\n"
             "print(sorted(set(agents.__all__) - set(dir(agents))))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_benchmark_imports_openspiel_only_for_a_bot():
    # grading a callable needs no pyspiel (the openspiel extra): only an OpenSpiel bot loads it
    r = _run("import sys\n"
             "from highway_env.benchmark.policy import as_agent, is_openspiel_bot\n"
             "agent = as_agent(lambda obs: 0)\n"
             "assert not is_openspiel_bot(agent) and not is_openspiel_bot(print)\n"
             "bad = [m for m in sys.modules if m == 'pyspiel' or m.startswith(('open_spiel', 'highway_env.openspiel'))]\n"
             "assert not bad, bad")
    assert r.returncode == 0, r.stderr
