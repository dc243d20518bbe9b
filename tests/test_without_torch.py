"""PyTorch is an optional extra: everything but the AlphaZero agents runs without it, and the
AlphaZero paths say which extra to install.

Each check runs in a fresh process in which ``import torch`` fails as it does where torch is not
installed (``sys.modules["torch"] = None``), since CI installs it."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HIDE_TORCH = "import sys; sys.modules['torch'] = None\n"
EXTRA_HINT = 'pip install "highway-boardgame[torch]"'


def run_without_torch(code: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE_TORCH + code], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def run_script_without_torch(script: str, *args: str) -> subprocess.CompletedProcess:
    code = (f"import runpy; sys.argv = {[script, *args]!r}\n"
            f"runpy.run_path({script!r}, run_name='__main__')\n")
    return run_without_torch(code)


def extra_requirements(project: dict, extra: str) -> list[str]:
    """An extra's requirements, with the project's own extras it names (``NAME[torch]``) expanded."""
    own = project["name"] + "["
    out = []
    for req in project["optional-dependencies"][extra]:
        if req.startswith(own):
            for inner in req[len(own):].rstrip("]").split(","):
                out += extra_requirements(project, inner.strip())
        else:
            out.append(req)
    return out


def test_torch_is_an_extra_not_a_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.startswith("torch")]
    assert any(d.startswith("torch") for d in extra_requirements(project, "torch"))
    assert any(d.startswith("torch") for d in extra_requirements(project, "test"))
    # ray[rllib] installs no deep-learning framework; the RLlib recipe and its glue run on torch
    assert any(d.startswith("torch") for d in extra_requirements(project, "rllib"))


def test_envs_solver_perfect_player_and_searches_play_without_torch():
    code = """
import gymnasium as gym
import numpy as np
import agents
from highway_env import highway_v0
from highway_env.core import Board

env = highway_v0.env()
env.reset(seed=0)
a, b = env.possible_agents
players = {a: agents.make_agent("perfect:margin"), b: agents.make_agent("mcts:20", seed=0)}
final = {}
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    if termination or truncation:
        final[agent] = reward
        env.step(None)
        continue
    move = players[agent].act(Board(tuple(int(v) for v in env.unwrapped.board.cells)))
    assert obs["action_mask"][move], move
    env.step(move)
assert final == {a: 1, b: -1}, final  # A wins with perfect play, whatever B does
gym_env = gym.make("highway_env/Highway-v0")
gym_env.reset(seed=0)
gym_env.step(int(np.flatnonzero(gym_env.unwrapped.action_masks())[0]))
print("played")
"""
    out = run_without_torch(code)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("played")


def test_evaluate_grades_agents_without_torch(tmp_path):
    out = run_script_without_torch("evaluate.py", "--agent", "greedy", "--games", "2", "--positions", "50",
                                   "--rr-games", "0", "--conversion", "0", "--no-plots", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    assert (tmp_path / "summary.json").is_file() and (tmp_path / "report.md").is_file()


def test_train_py_explains_its_flags_and_refuses_an_unknown_one_without_torch():
    """--help and an unknown flag need no torch: a user reads the options before installing the extra."""
    out = run_script_without_torch("train.py", "--help")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "--simulations" in out.stdout and "--minutes" in out.stdout
    out = run_script_without_torch("train.py", "--no-such-flag")
    assert out.returncode == 2 and "--no-such-flag" in out.stderr and EXTRA_HINT not in out.stderr, out.stderr[-3000:]


def test_alphazero_paths_name_the_torch_extra(tmp_path):
    code = f"""
import agents
from highway_env.play.opponents import offered_presets

for call in (lambda: agents.make_agent("az:agents/pretrained/highway_az.pt"), agents.load_pretrained):
    try:
        call()
    except ImportError as e:
        assert {EXTRA_HINT!r} in str(e), e
    else:
        raise AssertionError("an AlphaZero agent was built without torch")
specs = [p["spec"] for p in offered_presets()]
assert "greedy" in specs and not [s for s in specs if s.startswith("az")], specs
print("named")
"""
    out = run_without_torch(code)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("named")
    for script, args in (("train.py", ["--minutes", "1", "--out-dir", str(tmp_path)]),
                         ("evaluate.py", ["--agent", "az:agents/pretrained/highway_az.pt", "--out", str(tmp_path)]),
                         ("highway_env/demo.py", ["--a", "az:agents/pretrained/highway_az.pt"])):
        out = run_script_without_torch(script, *args)
        assert out.returncode == 2, (script, out.returncode, out.stderr[-3000:])
        lines = out.stderr.strip().splitlines()
        assert lines and lines[-1].startswith("error: ") and EXTRA_HINT in lines[-1], (script, out.stderr[-3000:])
    assert not list(tmp_path.iterdir())  # nothing written by the runs that could not start
