"""Randomized differential checks of the sibling games: each game's rules module is the reference,
its PettingZoo / Gymnasium env and its AlphaZero adapter must play the same random games the same
way (masks, results, rewards, infos, symmetries), and its solver must agree with brute force on
late positions. ``HIGHWAY_PROPS_SCALE=N`` multiplies the number of games (see test_props_highway.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from highway_env.blackpath import game as bp
from highway_env.jumping import game as jg

SCALE = int(os.environ.get("HIGHWAY_PROPS_SCALE", "1"))


# ----------------------------------------------------------------------------- Black Path


def blackpath_games(n: int, seed: int):
    """``n * SCALE`` random (rows, cols, start, tiles played) games to the end."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n * SCALE):
        rows, cols = (int(x) for x in rng.integers(1, 6, 2))
        starts = bp.boundary_starts(rows, cols)
        sq, side = starts[rng.integers(len(starts))]
        state, tiles = bp.new_game(rows, cols, (sq, side)), []
        while not state.is_over:
            tiles.append(int(rng.integers(1, 4)))
            state = state.play(tiles[-1])
        out.append((rows, cols, bp.start_name(sq, side, cols), tiles))
    return out


def test_blackpath_env_and_adapter_play_the_rules_games():
    from highway_env.blackpath import env as bpenv
    from highway_env.blackpath.az_game import BlackPathGame

    for rows, cols, start, tiles in blackpath_games(40, seed=20):
        game = BlackPathGame(rows, cols, start)
        env = bpenv.raw_env(rows=rows, cols=cols, start=start)
        env.reset()
        state, s = bp.new_game(rows, cols, start), game.initial_states(1)
        for t in [None, *tiles]:
            if t is not None:
                mover = bpenv.AGENTS[state.ply % 2]
                assert env.agent_selection == mover
                env.step(t - 1)
                state, s = state.play(t), game.apply(s, [t - 1])
            assert env.game_state == state and game.to_rules_state(s[0]) == state
            assert np.array_equal(game.as_state(state), s[0])
            assert game.terminal(s)[0] == state.is_over
            assert np.array_equal(game.legal_masks(s)[0], [not state.is_over] * 3)
            assert np.array_equal(game.observations(s)[0], env.state())
            for agent in bpenv.AGENTS:
                assert env.terminations[agent] == state.is_over
                obs = env.observe(agent)
                live = not state.is_over and agent == bpenv.AGENTS[state.ply % 2]
                assert np.array_equal(obs["action_mask"], [int(live)] * 3)
            if state.is_over:
                winner = bpenv.AGENTS[state.winner - 1]
                assert env.rewards[winner] == 1 and env.rewards[bpenv.AGENTS[state.loser - 1]] == -1
                assert env.infos[winner]["winner"] == winner
                assert game.returns(s)[0] == (1 if state.winner == 1 else -1)
                # the last mover ran the path into the edge
                assert state.loser == 1 + (state.ply - 1) % 2
                assert bp.is_boundary(state.path()[-1].square, state.path()[-1].exit, rows, cols)


def check_symmetries_along(game, actions) -> None:
    """Play ``actions`` in ``game``; at each position every symmetry (row k of ``game.symmetries()``,
    ``transform_states``) maps the observation, the mask and each move as the gathers say: the
    image of a move played on the image of a position is the image of the position after it."""
    obs_gather, action_gather = game.symmetries()
    s = game.initial_states(1)
    for a in actions:
        for k in range(len(obs_gather)):
            image = game.transform_states(s, k)
            assert np.array_equal(game.observations(image).reshape(-1), game.observations(s).reshape(-1)[obs_gather[k]])
            assert np.array_equal(game.legal_masks(image)[0], game.legal_masks(s)[0][action_gather[k]])
            moved = game.apply(image, [int(np.flatnonzero(action_gather[k] == a)[0])])
            assert np.array_equal(moved, game.transform_states(game.apply(s, [a]), k)), (k, s)
        s = game.apply(s, [a])


def test_blackpath_symmetries_map_games_onto_games():
    from highway_env.blackpath.az_game import BlackPathGame

    for rows, cols, start, tiles in blackpath_games(15, seed=21):
        check_symmetries_along(BlackPathGame(rows, cols, start), [t - 1 for t in tiles])


def test_blackpath_solver_agrees_with_brute_force_on_late_positions():
    from highway_env.blackpath.solver import brute_force_winner, solve_state

    rng = np.random.default_rng(22)
    checked = 0
    for rows, cols, start, tiles in blackpath_games(60, seed=23):
        state = bp.new_game(rows, cols, start)
        cut = int(rng.integers(max(0, len(tiles) - 9), len(tiles)))
        for t in tiles[:cut]:
            state = state.play(t)
        result = solve_state(state)
        assert result.winner == brute_force_winner(state), state
        if not state.is_over:
            winning = [t for t in (1, 2, 3) if brute_force_winner(state.play(t)) == state.to_move]
            assert result.winning_tiles == winning, state
        checked += 1
    assert checked == 60 * SCALE


# ----------------------------------------------------------------------------- Jumping


def jumping_games(count: int, seed: int, sizes=(1, 2, 3, 4, 5)):
    """``count * SCALE`` random (n, squares) games to the end."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count * SCALE):
        n = int(rng.choice(sizes))
        state, squares = jg.initial_state(n), []
        while not state.is_terminal():
            moves = state.legal_moves()
            squares.append(moves[rng.integers(len(moves))][0])
            state, _ = state.apply(squares[-1])
        out.append((n, squares))
    return out


def test_jumping_env_and_adapter_play_the_rules_games():
    from highway_env.jumping import env as jenv
    from highway_env.jumping.az_game import JumpingGame

    for n, squares in jumping_games(40, seed=24):
        game = JumpingGame(n)
        env = jenv.raw_env(n=n)
        env.reset()
        solo = jenv.SolitaireEnv(n=n)
        solo.reset()
        state, s, total = jg.initial_state(n), game.initial_states(1), 0
        for sq in [None, *squares]:
            if sq is not None:
                assert env.agent_selection == jenv.AGENTS[state.to_move]
                env.step(sq)
                _, reward, terminated, _, info = solo.step(sq)
                state, pts = state.apply(sq)
                s = game.apply(s, [sq])
                total += pts
                assert reward == pts and terminated == state.is_terminal() and info["score"] == total
            assert game.to_rules_state(s[0]) == state and np.array_equal(game.as_state(state), s[0])
            mask = state.action_mask().astype(bool) if not state.is_terminal() else np.zeros(n * n, bool)
            assert np.array_equal(game.legal_masks(s)[0], mask)
            assert np.array_equal(solo.action_masks(), mask)
            assert game.terminal(s)[0] == state.is_terminal() and game.to_play(s)[0] == state.to_move
            assert game.margins(s)[0] == state.scores[0] - state.scores[1]
            for agent in jenv.AGENTS:
                live = not state.is_terminal() and agent == jenv.AGENTS[state.to_move]
                assert np.array_equal(env.observe(agent)["action_mask"], mask * live)
                assert env.infos[agent]["scores"] == list(state.scores)
                assert env.terminations[agent] == state.is_terminal()
            if state.is_terminal():
                sign = int(np.sign(state.scores[0] - state.scores[1]))
                assert (env.rewards["player_0"], env.rewards["player_1"]) == (sign, -sign)
                assert game.returns(s)[0] == sign


def test_jumping_symmetries_map_games_onto_games():
    from highway_env.jumping.az_game import JumpingGame

    for n, squares in jumping_games(15, seed=25, sizes=(3, 4, 5)):
        check_symmetries_along(JumpingGame(n), squares)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_jumping_perfect_values_match_the_plain_solver_on_late_positions(n):
    from highway_env.jumping.az_game import JumpingGame
    from highway_env.jumping.perfect import move_values
    from highway_env.jumping.solver import move_values as reference_values

    game = JumpingGame(n)
    rng = np.random.default_rng(26 + n)
    for _, squares in jumping_games(12, seed=27 + n, sizes=(n,)):
        cut = int(rng.integers(max(0, len(squares) - 9), len(squares)))
        state = jg.play(n, squares[:cut])
        want = reference_values(state)
        got = move_values(game, game.as_state(state))
        assert {sq: int(got[sq]) for sq in want} == want, (n, squares[:cut])
        assert (got > -10**6).sum() == len(want)


def test_blackpath_winner_of_every_small_board_and_start_is_the_readmes_rule():
    """The README's rule, from brute force: the first player wins when the board has an even number
    of squares, the second when both sides are odd, but for the middle start of 1x3 (and 3x1)."""
    from highway_env.blackpath.solver import brute_force_winner, solve

    for rows in range(1, 5):
        for cols in range(1, 5):
            if rows * cols > 12:
                continue
            for square, side in bp.boundary_starts(rows, cols):
                start = bp.start_name(square, side, cols)
                winner = solve(rows, cols, start).winner
                assert winner == brute_force_winner(bp.new_game(rows, cols, start)), (rows, cols, start)
                middle_of_three = sorted((rows, cols)) == [1, 3] and square == 1
                rule = 1 if rows * cols % 2 == 0 or middle_of_three else 2
                assert winner == rule, (rows, cols, start)
