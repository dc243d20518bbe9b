"""Jumping Farther & Farther: rules, solvers vs brute force, envs, CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from highway_env import jumping_v0
from highway_env.jumping import game, solver
from highway_env.jumping.env import SolitaireEnv, raw_env, render_ansi
from highway_env.jumping.game import IllegalMoveError, JumpingError, initial_state, play


def sq(r, c, n=4):
    return r * n + c


# ----------------------------------------------------------------------------- rules

def test_first_move_anywhere_and_mask():
    s = initial_state(4)
    assert s.action_mask().tolist() == [1] * 16
    assert s.to_move == 0 and s.last == -1 and s.jump == 0 and not s.is_terminal()


def test_hand_sequence_scores_and_jumps_over_filled():
    s = initial_state(4)
    s, p = s.apply(sq(0, 1))  # 1
    assert p == 0 and s.jump == 0
    s, p = s.apply(sq(0, 2))  # 2: jump 1, placing 2 never scores
    assert p == 0 and s.jump == 1 and s.scores == (0, 0)
    s, p = s.apply(sq(0, 0))  # 3: jump 2 (over the 1) > 1 -> player 1 scores
    assert p == 1 and s.jump == 2 and s.scores == (1, 0)
    s, p = s.apply(sq(0, 3))  # 4: jump 3 over 1 and 2 > 2 -> player 2 scores
    assert p == 1 and s.jump == 3 and s.scores == (1, 1)
    with pytest.raises(IllegalMoveError):
        s.apply(sq(0, 2))  # filled
    s, p = s.apply(sq(1, 2))  # 5: diagonal, jump 1
    assert p == 0 and s.jump == 1 and s.scores == (1, 1) and s.ply == 5
    with pytest.raises(IllegalMoveError):
        s.apply(sq(3, 3))  # (1,2)->(3,3) is a knight-like move, not a queen line
    assert s.to_move == 1 and s.next_number == 6


def test_equal_jump_does_not_score():
    s = play(4, [sq(0, 0), sq(0, 2), sq(2, 2)])  # jumps 2 then 2
    assert s.scores == (0, 0) and s.jump == 2
    s2, p = s.apply(sq(2, 1))  # shorter
    assert p == 0
    s3, p = s.apply(sq(2, 0))  # equal (2)
    assert p == 0
    s4, p = play(4, [sq(0, 0), sq(0, 1), sq(0, 2)]).apply(sq(3, 2))  # jumps 1, 1, then 3
    assert p == 1 and s4.scores == (0, 1)


def test_legal_moves_include_squares_beyond_filled_ones():
    s = play(4, [sq(0, 0), sq(0, 1), sq(1, 1)])  # last at (1,1)
    targets = dict(s.legal_moves())
    assert targets[sq(3, 3)] == 2 and targets[sq(2, 2)] == 1
    assert sq(0, 0) not in targets and sq(0, 1) not in targets
    assert sq(3, 2) not in targets  # not on a line
    s = play(4, [sq(0, 0), sq(0, 1), sq(0, 2)])
    assert dict(s.legal_moves())[sq(0, 3)] == 1
    s = play(4, [sq(0, 1), sq(0, 2), sq(0, 3)])
    assert dict(s.legal_moves())[sq(0, 0)] == 3  # over 1 and 2


def test_end_condition_with_empty_squares():
    seq = [0, 1, 2, 4, 3, 7, 8, 5]  # n = 3: last at (1,2), the empty (2,0) is off its lines
    s = play(3, seq)
    assert s.is_terminal() and s.legal_moves() == [] and s.action_mask().sum() == 0
    assert s.ply == 8 and not s.filled(6)
    with pytest.raises(IllegalMoveError):
        s.apply(6)
    with pytest.raises(IllegalMoveError):
        play(3, seq + [6])
    full = play(2, [0, 1, 2, 3])
    assert full.is_terminal() and full.ply == 4


def test_bad_input():
    with pytest.raises(JumpingError):
        initial_state(0)
    with pytest.raises(JumpingError):
        initial_state(8)
    with pytest.raises(IllegalMoveError):
        initial_state(3).apply(9)
    assert game.jump_length(4, 0, 15) == 3 and game.jump_length(4, 0, 6) is None


# ----------------------------------------------------------------------------- solvers

def _brute(state, solitaire):
    """No memo: the whole tree."""
    moves = state.legal_moves()
    if not moves:
        return 0
    best = None
    for t, _ in moves:
        child, pts = state.apply(t)
        v = pts + _brute(child, solitaire) if solitaire else pts - _brute(child, solitaire)
        best = v if best is None else max(best, v)
    return best


def _brute_minimax_scores(state):
    """Two-player value as player_0 score - player_1 score at the end, by explicit min/max."""
    moves = state.legal_moves()
    if not moves:
        return state.scores[0] - state.scores[1]
    vals = [_brute_minimax_scores(state.apply(t)[0]) for t, _ in moves]
    return max(vals) if state.to_move == 0 else min(vals)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_solvers_match_brute_force(n):
    s0 = initial_state(n)
    for solitaire in (False, True):
        res = solver.solve(n, solitaire)
        ref, _ = solver.solve_reference(n, solitaire)
        assert res.value == ref == _brute(s0, solitaire)
        assert not res.aborted and res.best_first_move is not None
        mv = solver.move_values(s0, solitaire)
        assert mv[res.best_first_move] == res.value == max(mv.values())
    assert solver.solve(n).value == _brute_minimax_scores(s0)


def test_known_values():
    assert solver.solve(3).value == 3
    assert solver.solve(3, solitaire=True).value == 4
    r4 = solver.solve(4)
    assert r4.value == -3
    assert solver.solve(4, solitaire=True).value == 10


def _is_over(n, occ, last, jump):
    return not any(not occ >> q & 1 for line in game.rays(n)[last] for q in line)


def _canonical_value(n, table, occ, last, jump, tables):
    got = solver._lookup(table, solver._canon_key(n, occ, last, jump, *tables))
    return None if got == solver._ABSENT else int(got)


@pytest.mark.parametrize("solitaire", [False, True])
def test_canonical_memo_holds_every_states_exact_value(solitaire):
    """The full search's memo is keyed on the symmetry-canonical state: every live state of the
    plain-Python reference (n = 3, all first moves, no symmetry) finds its exact value there, and
    on n = 4 so does every sampled state of the memo keyed on the state itself, which is over 5x larger."""
    _, memo = solver.solve_reference(3, solitaire)
    _, _, table, _ = solver.full_search(3, solitaire)
    live = [(k, v) for k, v in memo.items() if not _is_over(3, *k)]
    assert len(live) > 100
    tables = solver.symmetry_tables(3)
    for (occ, last, jump), v in live:
        assert _canonical_value(3, table, occ, last, jump, tables) == v
    ref_first = solver.move_values(initial_state(3), solitaire)
    firsts = solver.solve(3, solitaire, exhaustive=True).first_move_values
    assert firsts == {sq: ref_first[sq] for sq in game.orbit_representatives(3)}
    v_plain, best_plain, plain, st_plain = solver.full_search(4, solitaire, canonical=False)
    v_canon, best_canon, canon, st_canon = solver.full_search(4, solitaire)
    assert (v_plain, best_plain) == (v_canon, best_canon) and st_plain[0] > 5 * st_canon[0]
    entries = plain[plain != 0]
    entries = entries[np.random.default_rng(0).choice(len(entries), 20000, replace=False)]
    tables = solver.symmetry_tables(4)
    for e in entries.tolist():
        occ, last, jump, v = solver._unpack(4, e)
        assert _canonical_value(4, canon, occ, last, jump, tables) == v


def test_two_player_n4_matches_reference_from_midgame():
    # the pure-Python reference on a few n=4 positions after 3 moves (fast) vs numba values via
    # move_values consistency: playing the best move keeps the value
    s = play(4, [sq(1, 1), sq(1, 2), sq(3, 0)])
    mv = solver.move_values(s)
    best = max(mv, key=mv.get)
    child, pts = s.apply(best)
    assert mv[best] == pts - max(solver.move_values(child).values())


def test_max_states_aborts():
    r = solver.solve(4, True, max_states=10)
    assert r.aborted and r.value is None


# ----------------------------------------------------------------------------- envs

@pytest.mark.parametrize("n", [3, 4])
def test_pettingzoo_api(n):
    from pettingzoo.test import api_test

    api_test(jumping_v0.env(n=n), num_cycles=200)
    api_test(raw_env(n=n), num_cycles=200)


def test_aec_optimal_game_rewards_and_infos():
    env = jumping_v0.env(n=3, render_mode="ansi")
    env.reset()
    value = solver.solve(3).value
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        st = env.unwrapped.game_state
        mv = solver.move_values(st)
        env.step(max(mv, key=mv.get))
    u = env.unwrapped
    diff = u.game_state.scores[0] - u.game_state.scores[1]
    assert diff == value
    # a fresh game to check the final rewards and infos explicitly
    e = raw_env(n=3, render_mode="ansi")
    e.reset()
    total = {"player_0": 0, "player_1": 0}
    for t in [0, 1, 2, 4, 3, 7, 8, 5]:
        e.step(t)
        for a in e.agents:
            total[a] += e.rewards[a]
    st = e.game_state
    sign = np.sign(st.scores[0] - st.scores[1])
    assert all(e.terminations.values())
    assert total == {"player_0": sign, "player_1": -sign}
    assert e.infos["player_0"]["scores"] == list(st.scores)
    text = e.render()
    assert "[6]" not in text and "8" in text and "game over" in text
    img = raw_env(n=3, render_mode="rgb_array")
    img.reset(options={"moves": [0, 1]})
    arr = img.render()
    assert arr.dtype == np.uint8 and arr.ndim == 3 and arr.shape[2] == 3
    assert img.observe("player_0")["observation"].tolist() == [[1, 2, 0], [0, 0, 0], [0, 0, 0]]
    assert img.observe("player_1")["action_mask"].sum() == 0
    with pytest.raises(IllegalMoveError):
        img.step(1)


def test_illegal_move_through_env_terminates():
    env = jumping_v0.env(n=3)
    env.reset(options={"moves": [0, 1, 2, 4, 3, 7, 8]})
    # player_0 to move? 7 placed -> next is 8, player_1; an off-line square ends the game
    agent = env.agent_selection
    last = env.unwrapped.game_state.last
    bad = next(i for i in range(9) if not env.observe(agent)["action_mask"][i])
    env.step(bad)
    assert env.rewards[agent] == -1 and last >= 0


def test_gymnasium_check_env_and_solitaire():
    from gymnasium.utils.env_checker import check_env

    for n in (3, 4):
        check_env(SolitaireEnv(n=n), skip_render_check=True)
    env = SolitaireEnv(n=3, render_mode="ansi")
    obs, info = env.reset(seed=0)
    total = 0.0
    done = False
    while not done:
        mv = solver.move_values(env.game_state, solitaire=True)
        assert set(np.flatnonzero(env.action_masks())) == set(mv)
        obs, r, done, trunc, info = env.step(max(mv, key=mv.get))
        total += r
    assert total == solver.solve(3, solitaire=True).value == info["score"]
    assert "score 4" in env.render()
    env = SolitaireEnv(n=3, render_mode="rgb_array")
    env.reset(options={"moves": [4]})
    assert env.render().shape[2] == 3
    obs, r, term, trunc, info = env.step(4)  # filled: illegal
    assert term and r == -1 and info["illegal"]


# ----------------------------------------------------------------------------- CLI

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "highway_env.jumping", *args], capture_output=True, text=True, timeout=120)


def test_cli_json_and_errors():
    p = _cli("solve", "--n", "3", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["value"] == 3 and d["best_first_move"] == 4 and d["states"] > 0 and "seconds" in d
    p = _cli("solve", "--n", "3", "--solitaire", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["value"] == 4
    for bad in (["solve", "--n", "0"], ["solve", "--n", "x"], ["solve", "--bogus"], [], ["solve", "--n", "9"]):
        p = _cli(*bad)
        assert p.returncode == 2 and p.stderr and not p.stdout, bad
    p = _cli("solve", "--help")
    assert p.returncode == 0 and "--solitaire" in p.stdout and "--json" in p.stdout


def test_solitaire_bounded_matches_exhaustive_and_n5():
    for n in (1, 2, 3, 4):
        a = solver.solve(n, solitaire=True)
        b = solver.solve(n, solitaire=True, exhaustive=True)
        assert a.value == b.value and not a.aborted
        if n >= 3:
            assert solver.move_values(initial_state(n), True)[a.best_first_move] == a.value
    # n = 5: the bounded search proves 18 (the static bound); replay a witness line
    v, line = solver.solitaire_line(5)
    assert v == 18 == solver.solve(5, solitaire=True).value
    st, tot = initial_state(5), 0
    for q in line:
        assert q in [t for t, _ in st.legal_moves()]
        st, pts = st.apply(q)
        tot += pts
    assert tot == 18 and st.is_terminal()


def test_solitaire_human_mode_draws_the_first_frame_at_reset(capsys):
    """"human": the env draws itself, the start included, as Gymnasium's own envs do in reset()
    (cartpole.py, frozen_lake.py), and as HighwayGymEnv and RushHourEnv here."""
    env = SolitaireEnv(n=3, render_mode="human")
    env.reset(seed=0)
    assert capsys.readouterr().out == render_ansi(env.game_state, [0] * 9, solitaire=True)
    env.step(4)
    assert "[1]" in capsys.readouterr().out
    assert env.render() is None
