"""highway_env.benchmark: grading any policy against perfect play."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from highway_env import highway_v0
from highway_env.benchmark import BenchmarkReport, PolicyError, evaluate, observations
from highway_env.benchmark.policy import as_agent, is_policy_spec, legal_masks
from highway_env.core import CELLS, Board, random_board
from optional_parts import require_modules


def random_boards(n, seed=0, max_filled=15):
    """Positions reached by random play (0..max_filled cells filled)."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, CELLS), np.int8)
    for i in range(n):
        k = rng.integers(0, max_filled + 1)
        out[i, rng.permutation(CELLS)[:k]] = rng.permutation(16)[:k] + 1
    return out


def board_from_observation(planes: np.ndarray) -> tuple[Board, int]:
    """The absolute board and the mover, read from an observation's planes only."""
    mover = int(planes.sum()) % 2
    cells = [0] * CELLS
    for c in range(CELLS):
        f = highway_v0.cell_to_player_frame(c, mover)
        hot = np.flatnonzero(planes.reshape(CELLS, 16)[f])
        cells[c] = int(hot[0]) + 1 if len(hot) else 0
    return Board(tuple(cells)), mover


class PerfectThroughObservations:
    """The perfect player, seeing only the observation (and answering in the policy's frame)."""

    def __init__(self, frame):
        from highway_env.solver.player import PerfectPlayer

        self.frame = frame
        self.player = PerfectPlayer(tiebreak="random", seed=0)

    def one(self, planes):
        board, mover = board_from_observation(planes)
        a = self.player.act(board)
        return highway_v0.to_player_frame(a, mover) if self.frame == "player" else a

    def __call__(self, obs):
        return self.one(obs["observation"])

    def batched(self, obs):
        return np.array([self.one(p) for p in obs["observation"]])


# ----------------------------------------------------------------------------- observations

def test_observations_match_the_env_in_the_absolute_frame():
    boards = random_boards(40, seed=1)
    obs = observations(boards, "absolute")
    env = highway_v0.raw_env()
    for i, b in enumerate(boards):
        env.reset(options={"board": Board(tuple(int(v) for v in b))})
        o = env.observe(env.agent_selection)
        assert np.array_equal(obs["observation"][i], o["observation"])
        assert np.array_equal(obs["action_mask"][i], o["action_mask"])
        assert obs["observation"].dtype == np.int8 and obs["action_mask"].dtype == np.int8


def test_player_frame_turns_mask_and_planes_for_b_only():
    boards = random_boards(40, seed=2)
    absolute = observations(boards, "absolute")
    player = observations(boards, "player")
    assert np.array_equal(absolute["observation"], player["observation"])
    for i, b in enumerate(boards):
        mover = int((b != 0).sum()) % 2
        assert np.array_equal(player["action_mask"][i],
                              highway_v0.mask_to_player_frame(absolute["action_mask"][i], mover))


def test_player_frame_matches_the_env_option():
    env = highway_v0.raw_env(frame="player")
    boards = random_boards(20, seed=3)
    obs = observations(boards, "player")
    for i, b in enumerate(boards):
        env.reset(options={"board": Board(tuple(int(v) for v in b))})
        o = env.observe(env.agent_selection)
        assert np.array_equal(obs["observation"][i], o["observation"])
        assert np.array_equal(obs["action_mask"][i], o["action_mask"])


def test_legal_masks_full_board_has_none():
    assert not legal_masks(np.arange(1, 17)[None]).any()
    assert legal_masks(np.zeros((1, 16))).all()


# ----------------------------------------------------------------------------- grading

def _random_policy(seed=0):
    rng = np.random.default_rng(seed)
    return lambda obs: int(rng.choice(np.flatnonzero(obs["action_mask"])))


@pytest.mark.parametrize("frame", ["absolute", "player"])
def test_random_masked_policy_keeps_the_value_about_a_third_of_the_time(frame):
    r = evaluate(_random_policy(), frame=frame, positions=600, games=2, conversion=4, margin_games=0,
                 progress=False)
    acc = r.measures["accuracy"]
    assert 0.2 < r.accuracy < 0.45, r.accuracy
    assert acc["ci95"][0] < r.accuracy < acc["ci95"][1]
    assert set(acc["by_side"]) == {"A", "B"} and acc["by_ply"]
    assert r.measures["as_A_vs_perfect"]["games"] == 2


def _check_perfect(frame, batched, **sizes):
    p = PerfectThroughObservations(frame)
    r = evaluate(p.batched if batched else p, frame=frame, batched=batched, progress=False, **sizes)
    m = r.measures
    assert m["accuracy"]["n"] >= 10
    assert r.accuracy == 1.0
    assert m["as_A_vs_perfect"]["win"] == m["as_A_vs_perfect"]["games"] == sizes["games"]
    assert m["conversion"]["rate"] == 1.0
    return r


@pytest.mark.parametrize("frame", ["absolute", "player"])
@pytest.mark.parametrize("batched", [False, True])
def test_perfect_player_through_observations_is_perfect(frame, batched):
    _check_perfect(frame, batched, positions=40, games=1, conversion=2, margin_games=0)


@pytest.mark.slow
@pytest.mark.parametrize("frame", ["absolute", "player"])
@pytest.mark.parametrize("batched", [False, True])
def test_perfect_player_through_observations_is_perfect_full(frame, batched):
    r = _check_perfect(frame, batched, positions=600, games=4, conversion=10, margin_games=4)
    assert r.margin_optimal_rate < 1.0 or r.measures["margin_loss"]["n"] == 0  # random tie-break
    assert r.measures["as_B_vs_perfect"]["loss"] == 4  # A wins Highway


def test_batched_policy_gets_all_positions_in_few_calls_and_games_in_lock_step():
    calls = []

    def policy(obs):
        calls.append(len(obs["action_mask"]))
        assert obs["observation"].shape == (len(obs["action_mask"]), 4, 4, 16)
        return np.argmax(obs["action_mask"], axis=1)

    evaluate(policy, batched=True, positions=2000, games=3, conversion=0, margin_games=0, progress=False)
    assert calls[:2] == [1024, 2000 - 1024]
    # then 3 games as A (8 policy moves, one call each) and 3 as B (8 more)
    assert calls[2:] == [3] * 16


def test_illegal_action_is_a_clear_error_naming_position_and_action():
    def bad(obs):
        return int(np.flatnonzero(obs["action_mask"] == 0)[0]) if (obs["action_mask"] == 0).any() else 0

    with pytest.raises(PolicyError, match=r"illegal action \d+ \(\d+@r\dc\d\) in position '[0-9,]+' \([AB] to move\)"):
        evaluate(bad, positions=50, games=0, conversion=0, margin_games=0, progress=False)
    with pytest.raises(PolicyError, match="outside 0..255"):
        evaluate(lambda obs: 300, positions=5, games=0, conversion=0, margin_games=0, progress=False)
    with pytest.raises(PolicyError, match="not an integer action"):
        evaluate(lambda obs: 3.0, positions=5, games=0, conversion=0, margin_games=0, progress=False)
    with pytest.raises(PolicyError, match="returned 2 actions for 5 positions"):
        evaluate(lambda obs: [0, 1], batched=True, positions=5, games=0, conversion=0, margin_games=0,
                 progress=False)


def test_player_frame_illegal_action_names_both_frames():
    agent = as_agent(lambda obs: 15, frame="player")  # 1@r3c3 in B's frame
    board = np.zeros((1, 16), np.int8)
    board[0, highway_v0.cell_from_player_frame(15, 1)] = 5  # B's view: cell 15 is taken
    with pytest.raises(PolicyError, match=r"1@r3c3 in the player frame = 1@r\dc\d on the board"):
        agent.act_batch(board)


class FakeSB3:
    """Looks like an sb3-contrib MaskablePPO: predict(obs, action_masks=..., deterministic=...)."""

    def __init__(self):
        self.seen = []

    def predict(self, observation, state=None, episode_start=None, deterministic=False, action_masks=None):
        assert deterministic is True
        assert isinstance(observation, dict) and action_masks.dtype == bool
        assert action_masks.shape == (len(observation["observation"]), 256)
        self.seen.append(len(action_masks))
        return np.argmax(action_masks, axis=1), None


def test_sb3_like_model_is_called_batched_with_masks():
    model = FakeSB3()
    r = evaluate(model, positions=300, games=1, conversion=0, margin_games=0, progress=False)
    assert model.seen[0] == 300 and r.accuracy is not None
    assert (r.summary["config"]["frame"], r.summary["config"]["batched"]) == ("absolute", True)  # batched: its own
    # the first legal action, every time: its accuracy is what that deterministic rule scores
    from highway_env.evaluation.positions import load_positions
    from highway_env.evaluation import metrics
    from highway_env.benchmark.run import sample_plan

    ps = load_positions()
    sub = ps.subset(sample_plan(ps, 300, 0, 0)["sample"])
    first = np.argmax(legal_masks(sub.boards), axis=1)
    assert r.accuracy == metrics.accuracy(sub, first)["rate"]


class FakePlainSB3:
    """Looks like Stable-Baselines3's own PPO / DQN: ``predict(observation, state=None,
    episode_start=None, deterministic=False)`` (SB3's BaseAlgorithm.predict), no action_masks."""

    def __init__(self, pick):
        self.pick = pick

    def predict(self, observation, state=None, episode_start=None, deterministic=False):
        assert deterministic is True and isinstance(observation, dict)
        return self.pick(observation["action_mask"]), None


def test_plain_sb3_model_is_called_without_masks_and_its_illegal_actions_are_errors():
    """A model of SB3 itself is graded as SB3 documents its predict: the mask reaches it only as
    part of the Dict observation (HighwayGymEnv's), and an illegal answer is a PolicyError, never
    replaced. Before, such a model was refused ("cannot evaluate") and ``sb3:PATH`` with only
    stable-baselines3 installed failed the same way."""
    boards = np.array([random_board(np.random.default_rng(i), i % 15).cells for i in range(20)], np.int8)
    first_legal = as_agent(FakePlainSB3(lambda masks: np.argmax(masks, axis=1)))
    np.testing.assert_array_equal(first_legal.act_batch(boards), np.argmax(legal_masks(boards), axis=1))
    always_zero = as_agent(FakePlainSB3(lambda masks: np.zeros(len(masks), np.int64)))
    with pytest.raises(PolicyError, match="illegal action 0"):
        always_zero.act_batch(boards)


def test_module_attr_spec_naming_an_sb3_like_class_grades_an_instance(tmp_path, monkeypatch):
    """``module:Class`` of a model class with a zero-argument constructor is built first, as any
    factory: the class itself has a ``predict`` taking ``deterministic`` too, and was taken for
    the model (its unbound predict then failed on the first batch)."""
    (tmp_path / "my_sb3_models.py").write_text(textwrap.dedent("""
        import numpy as np
        class FirstLegal:
            def predict(self, observation, state=None, episode_start=None, deterministic=False):
                return np.argmax(observation["action_mask"], axis=1), None
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    r = evaluate("my_sb3_models:FirstLegal", positions=50, games=0, conversion=0, margin_games=0, progress=False)
    assert r.accuracy is not None and r.summary["config"]["batched"] is True


def test_agent_and_spec_string_give_the_same_report():
    from agents.registry import make_agent

    a = evaluate("greedy", positions=200, games=1, conversion=2, margin_games=0, progress=False)
    b = evaluate(make_agent("greedy", seed=0), positions=200, games=1, conversion=2, margin_games=0,
                 progress=False)
    assert a.name == "greedy"
    assert a.measures["accuracy"] == b.measures["accuracy"]
    # an agent reads no observations: the report names no frame or batching it was not asked in
    c = evaluate("greedy", frame="player", batched=True, positions=20, games=0, conversion=0, margin_games=0,
                 progress=False)
    assert (c.summary["config"]["frame"], c.summary["config"]["batched"]) == (None, None)


def test_report_table_dict_and_saved_files(tmp_path):
    r = evaluate(_random_policy(), name="rnd", positions=200, games=1, conversion=2, margin_games=1,
                 progress=False)
    assert isinstance(r, BenchmarkReport)
    assert "rnd" in r.table() and "accuracy" in r.table()
    d = r.to_dict()
    json.dumps(d)
    assert d["agents"]["rnd"]["as_B_vs_perfect_margin"]["games"] == 1
    assert 0 <= r.margin_optimal_rate <= 1
    out = r.save(tmp_path / "rep")
    for f in ("summary.json", "agents.csv", "accuracy_by_ply.csv", "report.md", "accuracy_by_ply.png",
              "wdl_vs_perfect.png"):
        assert (out / f).exists(), f
    assert json.loads((out / "summary.json").read_text())["agents"]["rnd"]["accuracy"] == d["agents"]["rnd"]["accuracy"]


def test_same_seed_same_report():
    # tie-break "random" (seeded): "hardest" is exact only within a time budget per move
    kw = dict(positions=300, games=1, conversion=2, margin_games=0, progress=False, seed=3, perfect_tiebreak="random")
    a = evaluate(_random_policy(1), **kw)
    b = evaluate(_random_policy(1), **kw)
    assert a.measures["accuracy"] == b.measures["accuracy"]
    assert a.measures["as_A_vs_perfect"] == b.measures["as_A_vs_perfect"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(frame="mover"), "frame must be one of"),
    (dict(positions=-1), "positions must be an integer >= 0, got -1"),
    (dict(games=1.5), "games must be an integer"),
    (dict(workers=0), "workers must be an integer >= 1"),
    (dict(seed=-1), "seed must be an integer >= 0, got -1"),  # numpy's "expected non-negative integer"
    (dict(seed=None), "seed must be an integer >= 0, got None"),  # "object of type 'NoneType' has no len()"
    (dict(perfect_tiebreak="best"), "perfect_tiebreak must be one of .'random', 'margin', 'hardest'., got 'best'"),
])
def test_bad_arguments_name_the_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        evaluate(lambda obs: 0, progress=False, **kwargs)


def test_margin_games_true_is_refused_like_games():
    """margin_games=True passed the integer check (a bool is an int) and failed later with a bare
    'TypeError: an integer is required'."""
    with pytest.raises(ValueError, match="margin_games must be an integer >= 0, got True"):
        evaluate(lambda obs: 0, margin_games=True, progress=False)


def test_one_observation_policy_answering_several_actions_names_the_position():
    """A policy that takes one observation and answers with two actions (or none) is asked once per
    position; its answers were flattened together (numpy's 'inhomogeneous shape' ValueError, or
    actions shifted onto other positions when every answer was an array)."""
    def two(obs):
        legal = np.flatnonzero(obs["action_mask"])
        return legal[:2]

    with pytest.raises(PolicyError, match=r"returned array\(\[\d+, \d+\]\), not one action, for the one "
                                          r"observation of position '[0-9,]+' \([AB] to move\).*batched=True"):
        evaluate(two, positions=5, games=0, conversion=0, margin_games=0, progress=False)
    # one action as a list or a 1-element array is still one action
    assert as_agent(lambda obs: [int(np.argmax(obs["action_mask"]))]).act(np.zeros(16, np.int8)) == 0
    with pytest.raises(PolicyError, match="returned 1 actions for 5 positions .a batched policy returns one"):
        evaluate(lambda obs: 0, batched=True, positions=5, games=0, conversion=0, margin_games=0, progress=False)


def test_a_policy_returning_sb3_predicts_pair_is_told_to_return_its_first_element():
    """``return model.predict(obs, ...)`` hands back (actions, state): batched, numpy's "inhomogeneous
    shape" ValueError came out; a batched policy returning None was "1 actions for 5 positions"."""
    kw = dict(positions=5, games=0, conversion=0, margin_games=0, progress=False)
    hint = r"SB3's predict returns \(actions, state\): return its first element"
    with pytest.raises(PolicyError, match=r"returned \(array\(\[.*\]\), None\) for 5 positions \(" + hint):
        evaluate(lambda obs: (np.argmax(obs["action_mask"], axis=1), None), batched=True, **kw)
    with pytest.raises(PolicyError, match=r"returned \(array\(\[\d+\]\), None\), not one action, .*" + hint):
        evaluate(lambda obs: (np.array([np.argmax(obs["action_mask"])]), None), **kw)
    with pytest.raises(PolicyError, match="returned None for 5 positions"):
        evaluate(lambda obs: None, batched=True, **kw)


def test_an_agents_agent_is_checked_like_a_policy():
    """An ``agents.Agent`` was graded unchecked: its illegal move on the position set was a bare
    ValueError from the metrics, an out-of-range one an IndexError traceback, an error it raised a
    traceback, and in games an illegal move a GameError naming the batch row ("state 0"), not the
    position."""
    from agents.base import Agent
    from agents.registry import get_game, make_agent
    from highway_env.benchmark.run import play_seats

    class Answers(Agent):
        name = "answers"

        def __init__(self, answer):
            super().__init__(get_game("highway"), seed=0)
            self.answer = answer

        def act_batch(self, states, rng=None):
            return self.answer(self.game.as_states(states))

    def first_legal(states):
        return np.argmax(legal_masks(states), axis=1)

    def illegal_after_two_plies(states):  # first legal, then 1 at cell 0 whatever the board
        return np.where((states != 0).sum(axis=1) >= 2, 0, first_legal(states))

    def boom(states):
        raise RuntimeError("agent boom")

    opponent = make_agent("random", seed=0)
    with pytest.raises(PolicyError, match=r"illegal action 0 \(1@r0c0\) in position '[0-9,]+' \(A to move\)"):
        play_seats(as_agent(Answers(illegal_after_two_plies)), opponent, np.zeros((2, 16), np.int8), [0, 0],
                   [[0, g] for g in range(2)])
    with pytest.raises(PolicyError, match="returned action 999, outside 0..255"):
        as_agent(Answers(lambda s: np.full(len(s), 999))).act_batch(random_boards(3))
    with pytest.raises(PolicyError, match="the policy 'answers' raised RuntimeError: agent boom"):
        evaluate(Answers(boom), positions=5, games=0, conversion=0, margin_games=0, progress=False)
    # a legal agent plays as before, with the generator it is handed
    boards = random_boards(20, max_filled=14)
    greedy = make_agent("greedy", seed=0)
    np.testing.assert_array_equal(as_agent(greedy).act_batch(boards, np.random.default_rng(5)),
                                  greedy.act_batch(boards, np.random.default_rng(5)))


def test_not_a_policy_is_a_type_error():
    with pytest.raises(TypeError, match="cannot evaluate 42"):
        evaluate(42, progress=False)


def test_policy_specs_are_told_from_agent_kinds():
    assert is_policy_spec("mymodule:policy") and is_policy_spec("sb3:model.zip")
    assert not is_policy_spec("mcts:200") and not is_policy_spec("az:x.pt") and not is_policy_spec("greedy")
    assert not is_policy_spec("perfect:margin")


def test_module_attr_spec_factory_and_callable(tmp_path, monkeypatch):
    (tmp_path / "my_policies.py").write_text(textwrap.dedent("""
        import numpy as np
        def first_legal(obs):
            return int(np.argmax(obs["action_mask"]))
        def make():
            return first_legal
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    a = evaluate("my_policies:first_legal", positions=100, games=0, conversion=0, margin_games=0, progress=False)
    b = evaluate("my_policies:make", positions=100, games=0, conversion=0, margin_games=0, progress=False)
    assert a.name == "my_policies:first_legal"
    assert a.measures["accuracy"] == b.measures["accuracy"]
    with pytest.raises(ValueError, match="cannot import module 'no_such_mod'"):
        evaluate("no_such_mod:x", progress=False)
    with pytest.raises(ValueError, match="has no attribute 'nope'"):
        evaluate("my_policies:nope", progress=False)


def test_spec_errors_name_the_whole_spec(tmp_path, monkeypatch):
    """Errors of the benchmark's own spec handling named a part, or nothing: evaluate("perfect:x")
    (built here, not by make_agent) said only "perfect: tie-break ...", "sb3:" said "[Errno 21] Is a
    directory: '.'", "mod:f.x" said "'x' has no attribute 'x'", and "mod:NOT_A_POLICY" "cannot
    evaluate 42"."""
    from agents.registry import AgentSpecError

    (tmp_path / "my_spec_policies.py").write_text("def first(obs):\n    return 0\nNOT_A_POLICY = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cases = [("perfect:nosuch", AgentSpecError, "tie-break must be one of"),
             ("mcts:abc", AgentSpecError, "N must be an integer"),
             ("sb3:", ValueError, "give the saved model's file"),
             (f"sb3:{tmp_path}", ValueError, "is a directory, not a saved model file"),
             ("my_spec_policies:first.x", ValueError, "'my_spec_policies.first' has no attribute 'x'"),
             ("my_spec_policies:NOT_A_POLICY", TypeError, "cannot evaluate 42"),
             ("my_spec_policies:", ValueError, "a policy spec is module:attr or sb3:PATH.zip")]
    for spec, error, detail in cases:
        with pytest.raises(error) as e:
            evaluate(spec, positions=5, games=0, conversion=0, margin_games=0, progress=False)
        assert str(e.value).startswith(f"bad agent spec {spec!r}: ") and detail in str(e.value), str(e.value)
        assert str(e.value).count("bad agent spec") == 1, str(e.value)


def test_bad_perfect_option_is_not_blamed_on_a_perfect_spec():
    with pytest.raises(ValueError, match="^budget_nodes must be a positive number"):
        evaluate("perfect", perfect_options={"budget_nodes": -5}, positions=5, games=0, conversion=0,
                 margin_games=0, progress=False)


def test_module_in_the_current_directory_but_not_on_the_path_gets_a_hint(tmp_path, monkeypatch):
    """``python path/to/evaluate.py --agent mine:policy`` run beside mine.py: Python puts the
    script's folder on its path, not the directory it runs from."""
    (tmp_path / "mine_not_on_path.py").write_text("def policy(obs):\n    return 0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    with pytest.raises(ValueError, match="'mine_not_on_path' is in the current directory, which is not on "
                                         "Python's path: run with PYTHONPATH=."):
        evaluate("mine_not_on_path:policy", progress=False)
    with pytest.raises(ValueError) as e:
        evaluate("not_here_either:policy", progress=False)
    assert "PYTHONPATH" not in str(e.value)


def test_sb3_spec_loads_plain_ppo_and_maskable_ppo_models(tmp_path):
    """A saved SB3 PPO model is documented to load from ``sb3:PATH``; with sb3-contrib installed
    (the ``sb3`` extra) it was loaded as MaskablePPO and refused: "Policy must subclass
    MaskableActorCriticPolicy"."""
    require_modules("sb3 spec", "sb3 extra", ("sb3_contrib", "stable_baselines3"), 'pip install -e ".[sb3]"')
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from highway_env.benchmark.policy import load_sb3
    from highway_env.gym_env import HighwayGymEnv

    for cls in (PPO, MaskablePPO):
        path = tmp_path / f"{cls.__name__}.zip"
        cls("MultiInputPolicy", HighwayGymEnv(illegal_action="lose"), n_steps=16, batch_size=16, seed=0).save(path)
        loaded = load_sb3(str(path))
        assert type(loaded) is cls
        if cls is MaskablePPO:  # masked, so legal (a plain PPO may move illegally: a PolicyError)
            boards = random_boards(8, max_filled=14)
            assert legal_masks(boards)[np.arange(8), as_agent(loaded).act_batch(boards)].all()
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"bad agent spec 'sb3:.*junk.zip': cannot load a MaskablePPO or PPO model"):
        load_sb3(str(tmp_path / "junk.zip"))


def test_sb3_spec_without_sb3_is_a_clear_error(monkeypatch):
    # None in sys.modules makes the import fail, as if the libraries were not installed (they are in CI)
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)
    with pytest.raises(ValueError, match="needs sb3-contrib or stable-baselines3"):
        evaluate("sb3:model.zip", progress=False)


def test_import_benchmark_does_not_import_torch():
    code = "import sys, highway_env.benchmark; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------- evaluate.py --agent module:attr

@pytest.fixture
def policy_module(tmp_path, monkeypatch):
    (tmp_path / "my_cli_policies.py").write_text(textwrap.dedent("""
        import numpy as np
        def first_legal(obs):
            return int(np.argmax(obs["action_mask"]))
        def first_legal_batched(obs):
            return np.argmax(obs["action_mask"], axis=1)
        def illegal(obs):
            return int(np.argmin(obs["action_mask"]))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_cli_policies"


def _cli(tmp_path, *agents, extra=("--games", "1", "--conversion", "2")):
    args = ["--rr-games", "0", "--positions", "150", "--workers", "1", "--perfect-tiebreak", "random",
            "--out", str(tmp_path / "ev"), "--no-progress", "--no-plots", "--json", *extra]
    for a in agents:
        args += ["--agent", a]
    return args


def test_evaluate_cli_grades_a_module_attr_policy_with_the_registry_agents(tmp_path, policy_module, capsys):
    import evaluate as evaluate_cli

    spec = f"{policy_module}:first_legal"
    assert evaluate_cli.main(_cli(tmp_path, spec, "random")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc["agents"]) == [spec, "random"]
    mine = doc["agents"][spec]
    direct = evaluate(spec, positions=150, games=0, conversion=0, margin_games=0, progress=False)
    assert mine["accuracy"] == direct.to_dict()["agents"][spec]["accuracy"]  # same sample, same code
    assert mine["as_A_vs_perfect"]["games"] == 1 and mine["elo"] is None
    # one table: a measure evaluate.py's summarize gives registry agents, the benchmark gives policies
    # too, but set v2's accuracy (the benchmark does not grade set v2, as evaluate.py --help says)
    assert set(mine) == set(doc["agents"]["random"]) - {"accuracy_v2"}, (
        f"measures of evaluate.py's registry agents {sorted(doc['agents']['random'])} and of the policies "
        f"highway_env.benchmark grades {sorted(mine)} differ: compute each in both (evaluate.py's summarize, "
        "highway_env/benchmark/run.py's evaluate)")
    for a in doc["agents"].values():  # the margin measures, for every agent
        assert a["as_B_vs_perfect_margin"]["games"] == 1
        assert 0 <= a["margin_loss"]["optimal_rate"] <= 1
    # the batched form of the same rule, through --batched, gives the same figures
    assert evaluate_cli.main(_cli(tmp_path / "b", f"{policy_module}:first_legal_batched",
                                  extra=["--batched", "--games", "0", "--conversion", "0"])) == 0
    doc_b = json.loads(capsys.readouterr().out)
    assert doc_b["agents"][f"{policy_module}:first_legal_batched"]["accuracy"]["rate"] == mine["accuracy"]["rate"]


def test_evaluate_cli_illegal_policy_action_is_one_line_exit_2(tmp_path, policy_module, capsys):
    import evaluate as evaluate_cli

    assert evaluate_cli.main(_cli(tmp_path, f"{policy_module}:illegal")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "illegal action" in err[0] and "position '" in err[0]


def test_evaluate_cli_bad_policy_spec_exit_2(tmp_path, capsys):
    import evaluate as evaluate_cli

    assert evaluate_cli.main(_cli(tmp_path, "no_such_module_xyz:policy")) == 2
    assert "cannot import module 'no_such_module_xyz'" in capsys.readouterr().err


def test_evaluate_cli_agent_flag_help_names_the_policy_specs():
    """``--agent``'s help listed only the registry's kinds: module:attr and sb3: were in the
    description alone."""
    import evaluate as evaluate_cli

    (agent_help,) = [a.help for a in evaluate_cli.build_parser()._actions if "--agent" in a.option_strings]
    assert "module:attr" in agent_help and "sb3:PATH.zip" in agent_help


def test_held_to_value_names_the_games_perfect_a_won_by_less_than_the_value():
    """A perfect A never wins by less than 2; a game it did (a defect of A, or a summary from before
    A kept margin 2 from the first move) counts as held and is named apart, in the summary and the
    report."""
    from highway_env.benchmark.run import held_to_value
    from highway_env.evaluation.report import _short_note

    held = held_to_value([1, 2, 3, 1, 6])
    assert (held["games"], held["held"], held["a_short"]) == (5, 3, 2)
    assert held["rate"] == 0.6 and held["mean_margin"] == 2.6
    summary = {"agents": {"az:x.pt": {"as_B_vs_perfect_margin": held}, "old": {"as_B_vs_perfect_margin": {}}}}
    assert _short_note(summary) == " (such games: `az:x.pt` 2)"
