"""Highway as the OpenSpiel game ``python_highway`` (extra ``openspiel``): the same game as
``highway_v0`` move by move, OpenSpiel's MCTSBot on it, the perfect player as an OpenSpiel bot,
OpenSpiel bots graded by ``highway_env.benchmark.evaluate``, and Shimmy's PettingZoo wrapper over it.

Skipped when pyspiel or shimmy is missing, except under CI=true, where that is a failure (CI installs
the extra and must really run these)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from highway_env import core, highway_v0
from highway_env.core import Board, HighwayError, IllegalMoveError, encode_action, random_board
from optional_parts import skip_or_fail


try:
    import pyspiel
    import shimmy  # noqa: F401

    import highway_env.openspiel as hos  # registers python_highway
    from open_spiel.python.algorithms import evaluate_bots, mcts
    from open_spiel.python.bots.uniform_random import UniformRandomBot
except ImportError as e:
    MISSING = e
else:
    MISSING = None

#: the tests that run without the extra (they check what happens when the extra is missing)
_RUN_WITHOUT_EXTRA = {"test_missing_extra_fails_under_ci_and_skips_otherwise",
                      "test_missing_extra_in_a_fresh_pytest_run"}


def _require_extra() -> None:
    """Skip without the extra; fail instead under CI=true."""
    if MISSING is not None:
        skip_or_fail("OpenSpiel", "OpenSpiel extra", str(MISSING), 'pip install -e ".[openspiel]"')


@pytest.fixture(autouse=True)
def _needs_the_extra(request):
    if request.function.__name__ not in _RUN_WITHOUT_EXTRA:
        _require_extra()


def test_missing_extra_fails_under_ci_and_skips_otherwise(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "MISSING", ImportError("No module named 'pyspiel'"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but the OpenSpiel"):
        _require_extra()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="OpenSpiel extra not installed"):
        _require_extra()


@pytest.mark.slow
def test_missing_extra_in_a_fresh_pytest_run(tmp_path):
    # a pyspiel that cannot be imported, first on the path, stands for a missing extra
    (tmp_path / "pyspiel.py").write_text("raise ImportError('No module named pyspiel (test stand-in)')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    outcomes = {}
    for ci in ("true", ""):
        env["CI"] = ci
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "declared_game_type",
             __file__], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        outcomes[ci] = (run.returncode, run.stdout + run.stderr)
    rc, out = outcomes["true"]
    assert rc == 1 and "CI=true but the OpenSpiel tests cannot run" in out, out
    rc, out = outcomes[""]
    assert rc == 0 and "1 skipped" in out and "OpenSpiel extra not installed" in out, out


AGENTS = ("player_0", "player_1")


@pytest.fixture(scope="module")
def game():
    _require_extra()  # module fixtures are set up before the function-scoped check
    return pyspiel.load_game("python_highway")


def test_registered_with_the_declared_game_type(game):
    hos.register()  # a second registration is a no-op, not an error
    assert "python_highway" in pyspiel.registered_names()
    t = game.get_type()
    assert t.short_name == "python_highway"
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert t.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert t.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert t.provides_observation_tensor
    assert game.num_players() == 2
    assert game.num_distinct_actions() == core.NUM_ACTIONS
    assert game.max_game_length() == core.CELLS
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    assert list(game.observation_tensor_shape()) == [4, 4, 16]


def test_load_game_forms_as_tic_tac_toe():
    """No parameters: the string and dict forms load the same game, an unknown parameter is refused."""
    for loaded in (pyspiel.load_game("python_highway()"), pyspiel.load_game("python_highway", {}),
                   pyspiel.load_game_from_json('{"game_name": "python_highway"}')):
        assert str(loaded) == "python_highway()" and isinstance(loaded, hos.HighwayGame)
    assert pyspiel.load_game("python_highway").get_parameters() == {}
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'depth'"):
        pyspiel.load_game("python_highway(depth=3)")


def test_action_strings_are_number_at_row_column(game):
    state = game.new_initial_state()
    assert state.action_to_string(0, encode_action(16, 3)) == "16@r0c3"
    assert state.action_to_string(0, encode_action(1, 14)) == "1@r3c2"
    for action in state.legal_actions():
        assert state.string_to_action(state.action_to_string(0, action)) == action


@pytest.mark.parametrize("seed", range(6))
def test_random_games_agree_move_by_move_with_highway_v0(game, seed):
    rng = np.random.default_rng(seed)
    start = random_board(rng, int(rng.integers(0, 6))) if seed % 2 else None
    env = highway_v0.env()
    env.reset(options={"board": start} if start is not None else None)
    state = game.new_initial_state(start)
    while True:
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        player = AGENTS.index(agent)
        assert state.current_player() == player
        legal = state.legal_actions()
        assert legal == np.flatnonzero(obs["action_mask"]).tolist()
        assert state.legal_actions_mask() == state.legal_actions_mask(player) == obs["action_mask"].tolist()
        assert not any(state.legal_actions_mask(1 - player))
        assert legal == state.legal_actions(player)
        assert state.legal_actions(1 - player) == []  # OpenSpiel: the waiting player has no moves
        for p in (0, 1):
            tensor = np.asarray(state.observation_tensor(p)).reshape(4, 4, 16)
            np.testing.assert_array_equal(tensor, env.observe(AGENTS[p])["observation"])
        assert state.returns() == [0.0, 0.0]
        action = int(rng.choice(legal))
        env.step(action)
        state.apply_action(action)
        assert state.board == env.unwrapped.board
    assert state.is_terminal()
    assert state.current_player() == pyspiel.PlayerId.TERMINAL
    assert state.legal_actions() == [] and not any(state.legal_actions_mask(0) + state.legal_actions_mask(1))
    assert state.returns() == [float(env._cumulative_rewards[a]) for a in AGENTS]
    value = state.board.outcome().value
    assert state.returns() == [value, -value]
    assert state.rewards() == state.returns()  # terminal rewards only
    assert [state.player_return(p) for p in (0, 1)] == state.returns()  # what alpha_beta_search reads
    assert f"winner {state.board.outcome().winner or 'none'}" in state.observation_string(0)


def test_quarter_turn_view_for_b(game):
    state = game.new_initial_state("5,0,0,0,0,0,0,0,0,0,0,0,0,0,0,7")
    seen_by_b = np.asarray(state.observation_tensor(1)).reshape(4, 4, 16)
    turned = Board(state.board.cells).transform(core.QUARTER_TURN)
    expected = np.zeros((4, 4, 16))
    for cell, number in enumerate(turned.cells):
        if number:
            expected[cell // 4, cell % 4, number - 1] = 1
    np.testing.assert_array_equal(seen_by_b, expected)
    assert seen_by_b[0, 3, 4] == 1  # 5 at top-left, seen by B at top-right


def test_bad_input_raises_naming_it(game):
    with pytest.raises(HighwayError, match="expected 16 comma-separated numbers"):
        game.new_initial_state("1,2")
    state = game.new_initial_state("16,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0")
    with pytest.raises(IllegalMoveError, match="number 16 is already on the board"):
        state.apply_action(encode_action(16, 1))
    with pytest.raises(IllegalMoveError, match="cell 0 already holds 16"):
        state.apply_action(encode_action(1, 0))
    with pytest.raises(HighwayError, match="action 999 out of range"):
        state.apply_action(999)
    assert state.board.ply == 1  # nothing was applied


def test_clone_is_independent(game):
    state = game.new_initial_state()
    state.apply_action(encode_action(16, 0))
    child = state.clone()
    child.apply_action(encode_action(1, 1))
    assert (state.board.ply, child.board.ply) == (1, 2)
    assert state.history() == [encode_action(16, 0)]


def test_openspiel_random_sim_test(game):
    """OpenSpiel's own conformance simulator, as its python games' tests run it
    (python/games/tic_tac_toe_test.py, test_game_from_cc), with serialization checked too."""
    pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)


def test_openspiel_api_test_on_sampled_states(game):
    """OpenSpiel's integration_tests/api_test.py checks that need no full tree (sequence lengths,
    observations raising on invalid players, legal_actions empty for the opponent and at the end,
    public and private observations), on 400 sampled states."""
    import io
    import unittest

    from open_spiel.integration_tests import api_test

    case = type("HighwayAPITest", (api_test.EnforceAPIOnPartialTreeBase,),
                {"game_name": "python_highway", "game": game})
    result = unittest.TextTestRunner(stream=io.StringIO()).run(
        unittest.TestLoader().loadTestsFromTestCase(case))
    assert result.testsRun == 5 and result.wasSuccessful(), result.failures + result.errors


@pytest.mark.parametrize("start", [None, "1,2,3,0,0,0,0,0,0,0,0,0,0,0,0,0"])
def test_pickle_and_serialize_round_trips(game, start):
    """As tic_tac_toe_test.py's test_pickle: the game pickles, a state survives
    serialize_game_and_state / deserialize and pickle with its board, history and info state."""
    import pickle

    assert str(pickle.loads(pickle.dumps(game))) == str(game) == "python_highway()"
    state = game.new_initial_state(start)
    for _ in range(3):
        state.apply_action(state.legal_actions()[-1])
    new_game, new_state = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    for copy in (new_state, pickle.loads(pickle.dumps(state)), state.clone()):
        assert str(copy) == str(state) and copy.board == state.board
        assert copy.history() == state.history() and copy.current_player() == state.current_player()
        for p in (0, 1):
            assert copy.information_state_string(p) == state.information_state_string(p)
            assert copy.observation_tensor(p) == state.observation_tensor(p)


def test_information_states_of_different_positions_differ(game):
    """spiel.h (InformationStateString): states that differ in what the player observes have
    different information states. A state made from a position has an empty history; its
    information state names the position (before, it was the empty board's, '')."""
    empty = game.new_initial_state()
    started = game.new_initial_state("1,2,3,0,0,0,0,0,0,0,0,0,0,0,0,0")
    assert empty.information_state_string(0) == ""  # a game from the start: its history, as before
    assert started.observation_string(0) != empty.observation_string(0)
    assert started.information_state_string(0) != empty.information_state_string(0)
    started.apply_action(encode_action(16, 15))
    empty.apply_action(encode_action(16, 15))
    assert empty.information_state_string(1) == str(encode_action(16, 15))
    assert started.information_state_string(1) != empty.information_state_string(1)


def test_struct_api_as_tic_tac_toe(game):
    """OpenSpiel's SpielStruct API, as tic_tac_toe_test.py's test_struct_api and round trips (before,
    to_struct / action_to_struct raised 'ToStruct is not implemented')."""
    import json

    state = game.new_initial_state()
    assert json.loads(state.to_json()) == state.to_dict() == {"current_player": "A", "board": [0] * 16}
    action = state.action_to_struct(0, encode_action(16, 3))
    assert json.loads(action.to_json()) == {"number": 16, "row": 0, "col": 3}
    assert state.struct_to_actions(action) == [encode_action(16, 3)]
    assert state.validate_action_struct(action).ok()
    assert state.apply_action_struct(action).ok()
    assert state.history() == [encode_action(16, 3)] and state.current_player() == 1
    assert state.to_dict() == {"current_player": "B", "board": [0, 0, 0, 16] + [0] * 12}
    again = state.validate_action_struct(action)  # 16 is on the board now
    assert not again.ok() and "not legal" in again.to_string()
    assert json.loads(state.to_observation_struct(0).to_json()) == state.to_dict()
    # state -> struct -> new_initial_state at every ply of a game, the terminal state included
    rng = np.random.default_rng(0)
    while True:
        for struct in (state.to_struct(), json.loads(state.to_json())):
            rebuilt = game.new_initial_state(struct)
            assert rebuilt.board == state.board and str(rebuilt) == str(state)
            assert rebuilt.current_player() == state.current_player()
            assert rebuilt.legal_actions() == state.legal_actions() and rebuilt.returns() == state.returns()
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert state.to_dict()["current_player"] == "Terminal"


def test_bad_structs_raise_naming_the_field(game):
    with pytest.raises(HighwayError, match=r"needs 'board'.*got keys \['cells'\]"):
        game.new_initial_state({"cells": [0] * 16})
    with pytest.raises(HighwayError, match="current_player 'B' does not match the board, whose current player is 'A'"):
        game.new_initial_state({"current_player": "B", "board": [0] * 16})
    with pytest.raises(HighwayError, match="a board has 16 cells, got 2"):
        game.new_initial_state({"board": [1, 2]})
    state = game.new_initial_state()  # the hook pyspiel calls for struct_to_actions / apply_action_struct
    with pytest.raises(HighwayError, match="col 4 out of range 0..3"):
        state._struct_to_actions({"number": 1, "row": 0, "col": 4})
    with pytest.raises(HighwayError, match="number 17 out of range"):
        state._struct_to_actions({"number": 17, "row": 0, "col": 0})
    with pytest.raises(HighwayError, match=r"\['col'\] missing"):
        state._struct_to_actions({"number": 1, "row": 0})


def test_states_start_where_pyspiel_has_no_state_struct(game, monkeypatch):
    """The extra accepts OpenSpiel >= 1.2; pyspiel.StateStruct came in 1.6.1 (the struct hooks of
    Python games in 2.0): before it, new_initial_state must still start games, dict structs too."""
    monkeypatch.delattr(pyspiel, "StateStruct", raising=False)  # absent already on OpenSpiel < 1.6.1
    assert game.new_initial_state().board == Board()
    assert game.new_initial_state("5" + ",0" * 15).board.cells[0] == 5
    assert game.new_initial_state({"board": [0, 16] + [0] * 14}).board.cells[1] == 16


def test_observation_layout_is_the_tensors_channels_last(game):
    """The declared shape and layout read the tensor right: number n at (row, col) is channel n - 1
    of pixel (row, col). Before, the layout was C++'s default CHW, which reads the same (4, 4, 16)
    buffer as 4 channels of 4x16 images."""
    assert game.observation_tensor_layout() == pyspiel.TensorLayout.HWC
    # what C++ code sees: its default, which a Python game cannot override (the README says so)
    assert pyspiel.Game.observation_tensor_layout(game) == pyspiel.TensorLayout.CHW
    state = game.new_initial_state("5,0,0,0,0,0,0,0,0,0,0,16,0,0,0,0")
    height, width, channels = game.observation_tensor_shape()
    tensor = np.asarray(state.observation_tensor(0)).reshape(height, width, channels)
    assert tensor.sum() == 2 and tensor[0, 0, 4] == 1 and tensor[2, 3, 15] == 1


def test_openspiel_playthrough_generator_runs_and_is_reproducible():
    """OpenSpiel's generate_playthrough walks the whole API (game type and info, every observation
    and string, serialization) through a random game, as OpenSpiel's own playthrough tests do."""
    from open_spiel.python.algorithms import generate_playthrough

    text = generate_playthrough.playthrough("python_highway", None, seed=0)
    assert text == generate_playthrough.playthrough("python_highway", None, seed=0)
    assert "ObservationTensorLayout() = TensorLayout.HWC" in text
    assert text.count("# Apply action") == 16 and "IsTerminal() = True" in text


def _alpha_beta_against_the_solver(game, boards):
    """OpenSpiel's alpha_beta_search on each board: its value (the side to move's return under
    perfect play, +1 / 0 / -1) is the solver's game value seen from that side, and its move keeps
    the value."""
    from open_spiel.python.algorithms import minimax

    from highway_env.solver import Solver

    solver, values = Solver(), []
    for board in boards:
        value, action = minimax.alpha_beta_search(game, game.new_initial_state(board))
        exact = solver.solve(board).value  # A's side
        side = 1 if board.to_move == 0 else -1
        assert value == side * exact, board.to_string()
        assert solver.solve(board.apply(action)).value == exact, (board.to_string(), action)
        values.append(exact)
    return values


def test_openspiel_alpha_beta_search_agrees_with_the_solver(game):
    from open_spiel.python.algorithms import minimax

    from highway_env.solver import Solver

    rng = np.random.default_rng(28)
    boards = [random_board(rng, 10) for _ in range(4)]  # 6 empty cells: about half a second each
    assert sorted(_alpha_beta_against_the_solver(game, boards)) == [-1, -1, 0, 1]
    # maximizing_player_id fixed: that player's value, whoever moves
    state = game.new_initial_state(random_board(rng, 12))
    a_value = minimax.alpha_beta_search(game, state, maximizing_player_id=0)[0]
    assert minimax.alpha_beta_search(game, state, maximizing_player_id=1)[0] == -a_value
    assert a_value == Solver().solve(state.board).value


def test_openspiel_expectiminimax_agrees_with_the_solver(game):
    """expectiminimax (no chance nodes here: plain minimax without pruning) searched to the end."""
    from open_spiel.python.algorithms import minimax

    from highway_env.solver import Solver

    rng, solver = np.random.default_rng(7), Solver()  # B wins, A wins, B wins
    for _ in range(3):
        board = random_board(rng, 12)  # 4 empty cells, A to move
        never = lambda state: pytest.fail("the value function is for cut-off nodes; none at full depth")  # noqa: E731
        value, action = minimax.expectiminimax(game.new_initial_state(board), 4, never, 0)
        assert value == solver.solve(board).value == solver.solve(board.apply(action)).value, board.to_string()


@pytest.mark.slow
def test_openspiel_alpha_beta_search_agrees_with_the_solver_on_30_more_positions(game):
    rng = np.random.default_rng(2)
    boards = [random_board(rng, 16 - empty) for empty in (6, 7) for _ in range(15)]  # 8 empty: up to minutes each
    assert len(_alpha_beta_against_the_solver(game, boards)) == 30


def test_openspiel_mcts_solver_proves_late_positions(game):
    """MCTSBot(solve=True) proves a position from the game's returns: its outcome is the solver's."""
    from highway_env.solver import Solver

    rng, solver = np.random.default_rng(3), Solver()  # B wins, A wins, B wins
    for _ in range(3):
        board = random_board(rng, 12)  # 4 empty cells
        bot = _mcts_bot(game, 20000, 0, solve=True)
        root = bot.mcts_search(game.new_initial_state(board))
        value = solver.solve(board).value
        assert root.outcome == [value, -value], board.to_string()


def test_openspiel_rl_environment_with_qlearner_random_and_mcts_agents():
    """rl_environment.Environment("python_highway"): its TimeStep carries each player's observation
    tensor as info_state and legal actions, the rules' returns at the end; OpenSpiel's tabular
    Q-learner (A) plays whole episodes on it against its random agent and its MCTSAgent (B, which
    searches a state deserialized from the TimeStep's serialized_state); no TensorFlow or JAX."""
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import mcts_agent, random_agent, tabular_qlearner

    env = rl_environment.Environment("python_highway", include_full_state=True)
    env.seed(0)
    assert env.observation_spec()["info_state"] == (256,) and env.action_spec()["num_actions"] == 256
    learner = tabular_qlearner.QLearner(0, 256)
    opponents = [random_agent.RandomAgent(1, 256), mcts_agent.MCTSAgent(1, 256, _mcts_bot(env.game, 5, 0))]
    for episode in range(4):
        agents = [learner, opponents[episode % 2]]
        time_step = env.reset()
        while not time_step.last():
            obs = time_step.observations
            _, state = pyspiel.deserialize_game_and_state(obs["serialized_state"])
            player = obs["current_player"]
            assert player == state.current_player() == state.board.to_move
            assert state.board == env.get_state.board
            assert obs["legal_actions"][player] == state.legal_actions() and obs["legal_actions"][1 - player] == []
            for p in (0, 1):
                assert list(obs["info_state"][p]) == state.observation_tensor(p)
            assert time_step.rewards in (None, [0.0, 0.0])
            time_step = env.step([agents[player].step(time_step).action])
        for agent in agents:
            agent.step(time_step)
        value = env.get_state.board.outcome().value
        assert time_step.rewards == [value, -value] and len(env.get_state.history()) == 16
    assert learner._q_values  # it learned something


def test_openspiel_random_sim_test_from_a_position(game):
    """OpenSpiel's conformance simulator from a state made by new_initial_state(board), serialized."""
    state = game.new_initial_state("1,2,3,4,5,0,0,0,0,0,0,0,0,0,0,0")
    pyspiel.random_sim_test_with_specific_initial_state(game, 3, state, True)


def test_cpp_evaluate_bots_plays_cpp_bots(game):
    assert set(pyspiel.bots_that_can_play_game(game)) >= {"uniform_random"}
    bots = [pyspiel.make_uniform_random_bot(0, 1), pyspiel.make_uniform_random_bot(1, 2)]
    returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 0)
    assert returns in ([1.0, -1.0], [-1.0, 1.0], [0.0, 0.0])


def _mcts_bot(game, simulations, seed, **kwargs):
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
    return mcts.MCTSBot(game, 2.0, simulations, evaluator, random_state=np.random.RandomState(seed), **kwargs)


def test_mcts_bot_plays_full_games(game):
    bots = [_mcts_bot(game, 20, 1), _mcts_bot(game, 20, 2)]
    state = game.new_initial_state()
    returns = evaluate_bots.evaluate_bots(state, bots, np.random.RandomState(0))
    assert returns in ([1.0, -1.0], [-1.0, 1.0], [0.0, 0.0])


def test_mcts_bot_beats_random(game):
    # a search that plays real games on the rules: random play scores about 0 on average
    scores = []
    for seed in range(4):
        seat = seed % 2
        bots = [_mcts_bot(game, 100, seed), UniformRandomBot(1 - seat, np.random.RandomState(seed))]
        if seat:
            bots.reverse()
        state = game.new_initial_state()
        scores.append(evaluate_bots.evaluate_bots(state, bots, np.random.RandomState(seed))[seat])
    assert sum(scores) >= 3, scores


@pytest.fixture(scope="module")
def perfect():
    _require_extra()
    bot = hos.perfect_bot(0, seed=0, budget=0.2, progress=False)
    bot.agent.warm_up()
    return bot


def test_perfect_bot_wins_as_a_against_random(game, perfect):
    for seed in range(4):
        state = game.new_initial_state()
        random_b = UniformRandomBot(1, np.random.RandomState(seed))
        returns = evaluate_bots.evaluate_bots(state, [perfect, random_b], np.random.RandomState(seed))
        assert returns == [1.0, -1.0], seed


def test_perfect_bot_plays_value_keeping_moves(game, perfect):
    # from positions near the end, where the value is quick to check, any move it picks keeps it
    rng = np.random.default_rng(3)
    for _ in range(5):
        board = random_board(rng, 10)
        if board.to_move != 0:
            board = board.apply(int(rng.choice(board.legal_actions())))
        value = perfect.agent.value_of(board)
        action = perfect.step(game.new_initial_state(board))
        assert action in board.legal_actions()
        assert perfect.agent.value_of(board.apply(action)) == value


def test_agent_bot_refuses_what_it_cannot_play(game, perfect):
    with pytest.raises(HighwayError, match="asked to move for player 1"):
        perfect.step(game.new_initial_state("16,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"))
    with pytest.raises(HighwayError, match="plays python_highway states"):
        perfect.step(pyspiel.load_game("tic_tac_toe").new_initial_state())
    full = ",".join(str(n) for n in range(1, 17))
    with pytest.raises(HighwayError, match="the game is over"):
        perfect.step(game.new_initial_state(full))


def test_shimmy_wrapper_passes_pettingzoo_api_test():
    from pettingzoo.test import api_test
    from shimmy import OpenSpielCompatibilityV0

    with warnings.catch_warnings():
        # Shimmy declares every OpenSpiel tensor as Box(-inf, inf); api_test warns about that
        warnings.simplefilter("ignore")
        api_test(OpenSpielCompatibilityV0(game_name="python_highway"), num_cycles=100)


def test_shimmy_wrapper_plays_a_whole_game_with_the_rules_rewards():
    from shimmy import OpenSpielCompatibilityV0

    env = OpenSpielCompatibilityV0(game_name="python_highway")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    moves, rewards_at_end = 0, None
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            # Read the step rewards when the game ends: Shimmy 2.0.1 adds them once more to
            # the last agent's cumulative reward during its dead step (tic_tac_toe too).
            rewards_at_end = rewards_at_end or dict(env.rewards)
            env.step(None)
            continue
        np.testing.assert_array_equal(obs.reshape(4, 4, 16), np.asarray(
            env.game_state.observation_tensor(int(agent[-1]))).reshape(4, 4, 16))
        env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        moves += 1
    assert moves == 16
    value = env.game_state.board.outcome().value
    assert rewards_at_end == {"player_0": value, "player_1": -value}


# ----------------------------------------------------------------------------- grading a bot (highway_env.benchmark)

#: small and fast: the perfect opponent with a seeded random tie-break (reproducible under load)
GRADE = dict(positions=200, games=2, conversion=2, margin_games=0, progress=False, perfect_tiebreak="random")


class RecordingBot(pyspiel.Bot if MISSING is None else object):
    """Passes ``step`` to ``bot`` and records what the benchmark hands it."""

    def __init__(self, bot):
        pyspiel.Bot.__init__(self)
        self.bot = bot
        self.restarted = None
        self.steps = []  # (state, action, restarted at that state)

    def restart_at(self, state):
        self.restarted = state
        self.bot.restart_at(state)

    def step(self, state):
        action = self.bot.step(state)
        self.steps.append((state.clone(), action, self.restarted is state))
        return action


def _measures(report):
    return report.to_dict()["agents"][report.name]


def test_seeded_mcts_bot_graded_twice_gives_the_same_report_with_legal_moves_on_fresh_states(game):
    from highway_env.benchmark import evaluate

    reports, bots = [], []
    for _ in range(2):
        bots.append(RecordingBot(_mcts_bot(game, 10, 7)))
        reports.append(evaluate(bots[-1], **GRADE))
    assert _measures(reports[0]) == _measures(reports[1])
    assert reports[0].accuracy is not None and reports[0].measures["as_A_vs_perfect"]["games"] == 2
    steps = bots[0].steps
    assert len(steps) > 200  # every sampled position, then its plies of the games
    for state, action, restarted in steps:
        assert restarted, "restart_at(state) comes before step(state)"
        assert state.history() == []  # a fresh state of the board: no history
        assert action in state.legal_actions()
    assert [(str(s), a) for s, a, _ in steps] == [(str(s), a) for s, a, _ in bots[1].steps]


def test_uniform_random_bots_one_per_seat_score_like_random_play():
    from highway_env.benchmark import evaluate

    bots = (UniformRandomBot(0, np.random.RandomState(0)), UniformRandomBot(1, np.random.RandomState(1)))
    r = evaluate(bots, **dict(GRADE, positions=600))
    assert 0.2 < r.accuracy < 0.45, r.accuracy
    assert r.name == "UniformRandomBot"
    assert (r.summary["config"]["frame"], r.summary["config"]["batched"]) == (None, None)  # asked on states


def test_cpp_bots_are_graded_too():
    from highway_env.benchmark import evaluate

    bots = (pyspiel.make_uniform_random_bot(0, 3), pyspiel.make_uniform_random_bot(1, 4))
    r = evaluate(bots, **dict(GRADE, positions=100, games=1, conversion=0))
    assert 0 <= r.accuracy <= 1 and r.measures["as_A_vs_perfect"]["games"] == 1


def test_our_perfect_player_as_a_bot_grades_perfect(game):
    # the round trip agent -> OpenSpiel bot -> benchmark catches any mistake in the action encoding
    from highway_env.benchmark import evaluate

    r = evaluate(hos.perfect_bot(seed=0, tiebreak="random", progress=False), **dict(GRADE, conversion=4))
    assert r.accuracy == 1.0 and r.measures["accuracy"]["n"] >= 50
    a = r.measures["as_A_vs_perfect"]
    assert a["win"] == a["games"] == 2
    assert r.measures["conversion"]["rate"] == 1.0


def test_bot_mistakes_are_errors_naming_position_and_action(game):
    from highway_env.benchmark import PolicyError, evaluate

    class AlwaysZero:  # OpenSpiel's bot interface, duck-typed (no pyspiel.Bot base)
        def restart_at(self, state):
            pass

        def step(self, state):
            return 0  # 1@r0c0: illegal once 1 or cell 0 is taken

    with pytest.raises(PolicyError, match=r"illegal action 0 \(1@r0c0\) in position '[0-9,]+' \([AB] to move\)"):
        evaluate(AlwaysZero(), **dict(GRADE, games=0, conversion=0))
    AlwaysZero.step = lambda self, state: 3.0
    with pytest.raises(PolicyError, match=r"returned 3.0, not an integer action, in position"):
        evaluate(AlwaysZero(), **dict(GRADE, games=0, conversion=0))
    with pytest.raises(ValueError, match=r"INVALID_ACTION \(-1\) in position '[0-9,]+' \(B to move\).*one bot per seat"):
        evaluate(UniformRandomBot(0, np.random.RandomState(0)), **GRADE)
    with pytest.raises(PolicyError, match=r"AgentBot raised HighwayError: .*asked to move for player 1 in position "
                                          r"'[0-9,]+' \(B to move\)"):  # AgentBot bound to A
        evaluate(hos.perfect_bot(0, progress=False), **GRADE)


def test_cpp_mcts_bot_is_refused_naming_the_python_one(game):
    from highway_env.benchmark import evaluate

    bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 10, 100, False, 0, False)
    with pytest.raises(TypeError, match="C\\+\\+ pyspiel.MCTSBot crashes on Python games.*mcts.MCTSBot"):
        evaluate(bot, **GRADE)


def test_cpp_mcts_bot_still_crashes_on_python_games():
    # why the refusal above: if this fails, OpenSpiel fixed it; lift the refusal in openspiel/grading.py
    code = ("import pyspiel\nfrom open_spiel.python.games import tic_tac_toe\n"
            "g = pyspiel.load_game('python_tic_tac_toe')\n"
            "bot = pyspiel.MCTSBot(g, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 2, 100, False, 0, False)\n"
            "print('built', flush=True)\n"
            "print(bot.step(g.new_initial_state()))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    # built, then killed by a signal in step()
    assert run.stdout == "built\n" and run.returncode < 0, (run.returncode, run.stdout, run.stderr)


def test_evaluate_cli_grades_a_bot_factory(tmp_path, monkeypatch, capsys):
    import json
    import textwrap

    import evaluate as evaluate_cli
    from highway_env.benchmark import evaluate

    (tmp_path / "my_bots.py").write_text(textwrap.dedent("""
        import numpy as np
        import pyspiel
        import highway_env.openspiel  # registers python_highway
        from open_spiel.python.algorithms import mcts

        def make_bot():
            game = pyspiel.load_game("python_highway")
            evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
            return mcts.MCTSBot(game, 2.0, 10, evaluator, random_state=np.random.RandomState(0))

        class FirstLegalBot(pyspiel.Bot):  # a bot class with no arguments: built by the spec
            def __init__(self):
                pyspiel.Bot.__init__(self)

            def restart_at(self, state):
                pass

            def step(self, state):
                return state.legal_actions()[0]
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["--agent", "my_bots:make_bot", "--rr-games", "0", "--positions", "150", "--games", "1",
            "--conversion", "2", "--workers", "1", "--perfect-tiebreak", "random", "--out", str(tmp_path / "ev"),
            "--no-progress", "--no-plots", "--json"]
    assert evaluate_cli.main(args) == 0
    mine = json.loads(capsys.readouterr().out)["agents"]["my_bots:make_bot"]
    assert mine["as_A_vs_perfect"]["games"] == 1
    direct = evaluate("my_bots:make_bot", **dict(GRADE, positions=150, games=0, conversion=0))
    assert mine["accuracy"] == direct.to_dict()["agents"]["my_bots:make_bot"]["accuracy"]  # a fresh seeded bot
    # the first legal action of each state is the observation policy's first mask entry: same figures
    first = evaluate("my_bots:FirstLegalBot", **dict(GRADE, games=1))
    same = evaluate(lambda obs: int(np.argmax(obs["action_mask"])), **dict(GRADE, games=1))
    assert first.name == "my_bots:FirstLegalBot"
    for key in ("accuracy", "as_A_vs_perfect", "as_B_vs_perfect", "conversion"):
        assert first.measures[key] == same.measures[key], key
