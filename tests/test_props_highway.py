"""Randomized differential checks: Highway's faces (the AEC env in both frames and through ``env()``,
the Gymnasium env, the vector env, the batched engine, the AlphaZero adapter, OpenSpiel) play the
same random action sequences as the plain rules of :mod:`highway_env.core`, and everything they
show must agree with the rules: masks, observations, rewards, ends, infos, results, round trips.

Seeded numpy loops; ``HIGHWAY_PROPS_SCALE=20 pytest tests/test_props_highway.py`` runs each check
on 20 times as many games (the README, "Reliability", gives the figures of such a run).
"""

from __future__ import annotations

import copy
import os
import pickle

import numpy as np
import pytest

from highway_env import core
from highway_env.core import CELLS, NUM_ACTIONS, Board, HighwayError, IllegalMoveError
from highway_env.highway import batch_rules, highway

SCALE = int(os.environ.get("HIGHWAY_PROPS_SCALE", "1"))


def games(n: int, seed: int, start_plies=(0,)):
    """``n * SCALE`` (start board, actions to the end) pairs: random legal games, some from a random
    position of a ply drawn from ``start_plies``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n * SCALE):
        board = core.random_board(rng, int(rng.choice(start_plies)))
        actions, b = [], board
        while not b.is_terminal():
            legal = b.legal_actions()
            a = int(legal[rng.integers(len(legal))])
            actions.append(a)
            b = b.apply(a)
        out.append((board, actions))
    return out


def planes_of(board: Board, seat: int) -> np.ndarray:
    """(4, 4, 16) one-hot from ``seat``'s side, straight from core: B's board turned a quarter turn."""
    b = board.transform(core.QUARTER_TURN) if seat == 1 else board
    out = np.zeros((4, 4, 16), np.int8)
    for cell, v in enumerate(b.cells):
        if v:
            out[cell // 4, cell % 4, v - 1] = 1
    return out


def player_mask(board: Board, seat: int) -> np.ndarray:
    """The legal mask indexed by actions in ``seat``'s frame, from core."""
    mask = np.zeros(NUM_ACTIONS, np.int8)
    perm = core.QUARTER_TURN if seat == 1 else core.SYMMETRIES["identity"]
    for a in board.legal_actions():
        mask[core.transform_action(a, perm)] = 1
    return mask


def expected_info(board: Board) -> dict:
    bounds = board.bounds()
    info = {"ply": board.ply,
            "bounds": {"min_a": list(bounds.min_a), "min_b": list(bounds.min_b), "margin": list(bounds.margin)},
            "winner": ""}
    if board.is_terminal():
        o = board.outcome()
        info.update(winner=o.winner or "", min_a=o.min_a, min_b=o.min_b, margin=o.margin)
    return info


def an_illegal_action(board: Board, rng=None) -> int | None:
    """An action that is illegal on ``board`` (a random one with ``rng``), None on the empty board."""
    illegal = [x for x in range(NUM_ACTIONS) if not board.is_legal(x)]
    if not illegal:
        return None
    return illegal[rng.integers(len(illegal))] if rng is not None else illegal[0]


def to_frame(action: int, seat: int, frame: str) -> int:
    return core.transform_action(action, core.QUARTER_TURN) if frame == "player" and seat == 1 else action


# ----------------------------------------------------------------------------- the AEC env


@pytest.mark.parametrize("frame", batch_rules.FRAMES)
def test_aec_env_matches_core_move_by_move(frame):
    env = highway.raw_env(frame=frame)
    for board, actions in games(40, seed=1, start_plies=(0, 0, 3, 8, 13)):
        env.reset(options={"board": board.to_string()} if board.ply else None)
        b = board
        for a in [None, *actions]:
            if a is not None:
                seat = b.to_move
                env.step(to_frame(a, seat, frame))
                b = b.apply(a)
            assert env.board == b
            assert np.array_equal(env.state(), planes_of(b, 0))
            for seat, agent in enumerate(highway.AGENTS):
                obs = env.observe(agent)
                assert np.array_equal(obs["observation"], planes_of(b, seat)), (b, agent)
                mover = not b.is_terminal() and b.to_move == seat
                want = (player_mask(b, seat) if frame == "player" else b.legal_mask()) if mover else np.zeros(256)
                assert np.array_equal(obs["action_mask"], want), (b, agent, frame)
                assert env.infos[agent] == expected_info(b), (b, agent)
                done = b.is_terminal()
                assert env.terminations[agent] is done and env.truncations[agent] is False
                value = b.outcome().value if done else 0
                assert env.rewards[agent] == (value if seat == 0 else -value) * done
            if not b.is_terminal():
                assert env.agent_selection == highway.AGENTS[b.to_move]


def test_aec_env_refuses_every_illegal_action_and_changes_nothing():
    rng = np.random.default_rng(2)
    for frame in batch_rules.FRAMES:
        env = highway.raw_env(frame=frame)
        for board, actions in games(10, seed=3, start_plies=(0, 5, 12)):
            env.reset(options={"board": board} if board.ply else None)
            b = board
            for a in actions:
                seat = b.to_move
                illegal = [x for x in range(NUM_ACTIONS) if not b.is_legal(x)]
                for x in rng.choice(illegal, min(5, len(illegal)), replace=False) if illegal else []:
                    with pytest.raises(IllegalMoveError):
                        env.step(to_frame(int(x), seat, frame))
                    assert env.board == b and env.agent_selection == highway.AGENTS[seat]
                env.step(to_frame(a, seat, frame))
                b = b.apply(a)


def test_wrapped_env_illegal_move_ends_the_game_against_the_offender():
    for board, actions in games(20, seed=4, start_plies=(0, 4, 9, 14)):
        env = highway.env()
        env.reset(options={"board": board} if board.ply else None)
        b = board
        k = int(np.random.default_rng(len(actions)).integers(len(actions)))
        for a in actions[:k]:
            env.step(a)
            b = b.apply(a)
        offender = b.to_move
        bad = an_illegal_action(b) if b.ply else 256  # out of range on the empty board
        if bad == 256:
            with pytest.raises(AssertionError):
                env.step(bad)
            continue
        env.step(bad)
        for seat, agent in enumerate(highway.AGENTS):
            assert env.terminations[agent] or env.truncations[agent]
            assert env.rewards[agent] == (-1 if seat == offender else 0)
        assert env.unwrapped.board == b
        for agent in env.agent_iter():  # the dead steps end the game
            env.step(None)
        assert env.agents == []


# ----------------------------------------------------------------------------- Gymnasium envs


def scripted(actions):
    """An opponent playing the next of ``actions`` (absolute), checking that it is legal."""
    it = iter(actions)

    def policy(board, mask, rng):
        a = next(it)
        assert mask[a] == 1 and np.array_equal(mask, board.legal_mask())
        return a
    return policy


@pytest.mark.parametrize("frame", batch_rules.FRAMES)
def test_gym_env_matches_core_for_both_seats(frame):
    from highway_env.gym_env import HighwayGymEnv

    for board, actions in games(30, seed=5, start_plies=(0, 0, 2, 7, 12, 13)):
        for me in (0, 1):
            if board.ply == CELLS - 1 and board.to_move != me:
                continue  # refused: tested in test_gym_env.py
            theirs = [a for i, a in enumerate(actions) if (board.ply + i) % 2 != me]
            env = HighwayGymEnv(play_as="AB"[me], opponent=scripted(theirs), frame=frame)
            obs, info = env.reset(seed=0, options={"board": board} if board.ply else None)
            b, i = board, 0
            if b.to_move != me:
                b, i = b.apply(actions[0]), 1
            assert info["opponent_action"] == (actions[0] if i else -1)
            while True:
                assert np.array_equal(obs["observation"], planes_of(b, me))
                assert np.array_equal(obs["action_mask"], player_mask(b, me) if frame == "player" else b.legal_mask())
                assert np.array_equal(env.action_masks(), obs["action_mask"].astype(bool))
                obs, reward, terminated, truncated, info = env.step(to_frame(actions[i], me, frame))
                b, i = b.apply(actions[i]), i + 1
                reply = -1
                if not b.is_terminal():
                    reply, b, i = actions[i], b.apply(actions[i]), i + 1
                assert info["opponent_action"] == reply and env.board == b
                want = {k: v for k, v in expected_info(b).items()}
                assert {k: v for k, v in info.items() if k != "opponent_action"} == want
                assert truncated is False and terminated is b.is_terminal()
                if terminated:
                    value = b.outcome().value
                    assert reward == (value if me == 0 else -value)
                    assert not env.action_masks().any()
                    with pytest.raises(HighwayError):
                        env.step(0)
                    break
                assert reward == 0.0


def test_gym_env_lose_mode_ends_on_an_illegal_action_from_any_position():
    from highway_env.gym_env import HighwayGymEnv

    for frame in batch_rules.FRAMES:
        for board, actions in games(15, seed=6, start_plies=(0, 6)):
            env = HighwayGymEnv(play_as="A", opponent=scripted(actions[1::2]), illegal_action="lose", frame=frame)
            env.reset(options={"board": board} if board.ply else None)
            b = board
            k = int(np.random.default_rng(len(actions)).integers(len(actions) // 2))
            for j in range(k):
                env.step(to_frame(actions[2 * j], 0, frame))
                b = b.apply(actions[2 * j]).apply(actions[2 * j + 1])
            bad = an_illegal_action(b, np.random.default_rng(k))
            if bad is None:
                continue
            obs, reward, terminated, truncated, info = env.step(to_frame(bad, 0, frame))
            assert (reward, terminated, truncated) == (-1.0, True, False)
            assert env.board == b and info["illegal_action"] == to_frame(bad, 0, frame)
            assert info["illegal_reason"] and info["opponent_action"] == -1
            with pytest.raises(HighwayError):
                env.step(0)


def test_gym_env_copies_go_on_as_the_original():
    from highway_env.gym_env import HighwayGymEnv

    for board, actions in games(10, seed=7):
        env = HighwayGymEnv(play_as="B", frame="player")
        env.reset(seed=int(len(actions)))
        k = int(np.random.default_rng(len(actions)).integers(1, 7))
        for _ in range(k):
            env.step(int(np.flatnonzero(env.action_masks())[0]))
        copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
        while True:
            a = int(np.flatnonzero(env.action_masks())[-1])
            results = [e.step(a) for e in (env, *copies)]
            for r in results[1:]:
                assert np.array_equal(r[0]["observation"], results[0][0]["observation"])
                assert r[1:] == results[0][1:]
            if results[0][2]:
                break
        assert all(c.board == env.board for c in copies)


def test_vector_env_steps_follow_the_rules_through_autoresets():
    from highway_env.gym_vector_env import HighwayVectorEnv

    rng = np.random.default_rng(8)
    for me in (0, 1):
        for frame in batch_rules.FRAMES:
            envs = HighwayVectorEnv(num_envs=6, play_as="AB"[me], frame=frame, illegal_action="lose",
                                    max_episode_steps=7 if frame == "player" else None)
            obs, infos = envs.reset(seed=int(rng.integers(100)))
            boards = list(envs.get_attr("board"))
            restart = np.zeros(6, bool)
            for _ in range(30 * SCALE):
                for g, b in enumerate(boards):
                    assert np.array_equal(obs["observation"][g], planes_of(b, me))
                    if not restart[g]:
                        assert b.to_move == me and not b.is_terminal()
                        want = player_mask(b, me) if frame == "player" else b.legal_mask()
                        assert np.array_equal(obs["action_mask"][g], want)
                actions = np.array([int(rng.integers(256)) if rng.random() < 0.05 else
                                    int(rng.choice(np.flatnonzero(m))) if m.any() else 0
                                    for m in obs["action_mask"]])
                obs, rewards, terms, truncs, infos = envs.step(actions)
                now = envs.get_attr("board")
                for g, b in enumerate(boards):
                    if restart[g]:
                        assert rewards[g] == 0 and not terms[g] and not truncs[g]
                        reply = infos["opponent_action"][g]
                        assert now[g] == (Board() if reply < 0 else Board().apply(int(reply)))
                        assert (reply >= 0) == (me == 1)
                        continue
                    a = core.transform_action(int(actions[g]), core.inverse_perm(core.QUARTER_TURN)) \
                        if frame == "player" and me == 1 else int(actions[g])
                    if not b.is_legal(a):
                        assert (rewards[g], terms[g]) == (-1.0, True) and now[g] == b
                        assert infos["illegal_action"][g] == actions[g]
                        continue
                    after = b.apply(a)
                    reply = int(infos["opponent_action"][g])
                    if not after.is_terminal():
                        after = after.apply(reply)
                    else:
                        assert reply == -1
                    assert now[g] == after and infos["ply"][g] == after.ply
                    assert terms[g] == after.is_terminal()
                    if terms[g]:
                        o = after.outcome()
                        assert rewards[g] == (o.value if me == 0 else -o.value)
                        assert (infos["min_a"][g], infos["min_b"][g], infos["margin"][g]) == (o.min_a, o.min_b, o.margin)
                    else:
                        assert rewards[g] == 0
                boards = list(now)
                restart = terms | truncs


# ----------------------------------------------------------------------------- engines for agents


def test_batched_engine_plays_cores_games():
    from highway_env.batched import BatchedHighway

    for autoreset in (False, True):
        gs = games(12, seed=9, start_plies=(0, 1, 5, 11, 15))
        env = BatchedHighway.from_boards([b for b, _ in gs], seed=0, autoreset=autoreset)
        boards = [b for b, _ in gs]
        moves = [list(a) for _, a in gs]
        ended = [False] * len(gs)
        while not all(ended):
            for view in (False, True):
                masks = env.legal_mask(player_view=view)
                for g, b in enumerate(boards):
                    if ended[g]:
                        continue
                    want = player_mask(b, b.to_move) if view else b.legal_mask()
                    assert np.array_equal(masks[g], want.astype(bool))
            obs = env.observation()
            for g, b in enumerate(boards):
                if not ended[g]:
                    assert np.array_equal(obs[g], planes_of(b, b.to_move)) and env.board(g) == b
                    assert env.ply[g] == b.ply and env.to_play[g] == b.to_move
            r = env.random_actions()
            actions = np.array([moves[g].pop(0) if moves[g] else int(r[g]) for g in range(len(gs))])
            view = env.actions_to_player_view(actions)
            assert np.array_equal(env.actions_from_player_view(view), actions)
            res = env.step(actions)
            for g in range(len(gs)):
                if ended[g]:
                    continue
                boards[g] = boards[g].apply(int(actions[g]))
                assert res.done[g] == boards[g].is_terminal()
                if res.done[g]:
                    o = boards[g].outcome()
                    assert (res.min_a[g], res.min_b[g], res.margin[g], res.value[g]) == (o.min_a, o.min_b, o.margin, o.value)
                    ended[g] = True
                    assert env.board(g) == (Board() if autoreset else boards[g])
                    if not autoreset:
                        out = env.outcomes()
                        assert out.terminal[g] and (out.margin[g], out.value[g]) == (o.margin, o.value)


def view_board(board: Board) -> Board:
    """The board as the side to move sees it (a full board in A's frame)."""
    return board.transform(core.QUARTER_TURN) if board.to_move == 1 and not board.is_terminal() else board


@pytest.mark.parametrize("obs", ["planes", "features"])
def test_az_game_matches_core_and_its_symmetries_are_exact(obs):
    from highway_env.az_game import HighwayGame

    game = HighwayGame(obs=obs)
    rng = np.random.default_rng(10)
    boards = [core.random_board(rng, int(k)) for k in rng.integers(0, 17, 300 * SCALE)]
    states = np.array([b.cells for b in boards], np.int8)
    masks = game.legal_masks(states)
    observations = game.observations(states).reshape(len(boards), -1)
    view_to_board = game.view_to_board(states)
    obs_gather, action_gather = game.symmetries()
    margins = game.margins(states)
    lo, hi = game.margin_bounds(states)
    assert np.array_equal(game.terminal(states), [b.is_terminal() for b in boards])
    assert np.array_equal(game.to_play(states), [b.to_move for b in boards])
    inverse_quarter = core.inverse_perm(core.QUARTER_TURN)
    for i, b in enumerate(boards):
        assert np.array_equal(masks[i], b.legal_mask().astype(bool))
        assert (lo[i], hi[i]) == b.bounds().margin
        if b.is_terminal():
            o = b.outcome()
            assert margins[i] == o.margin and game.returns(states[i:i + 1])[0] == o.value
            assert game.heuristic(states[i:i + 1])[0] == o.margin
            assert game.rollout(states[i:i + 1], rng)[0] == o.value
            continue
        if obs == "planes":
            assert np.array_equal(observations[i].reshape(4, 4, 16), planes_of(b, b.to_move))
        # a view action j is board action view_to_board[j]: the view mask is the board mask gathered
        assert np.array_equal(masks[i][view_to_board[i]], view_board(b).legal_mask().astype(bool))
        legal = b.legal_actions()
        a = legal[rng.integers(len(legal))]
        assert game.apply(states[i:i + 1], [a])[0].tolist() == list(b.apply(a).cells)
        for k, perm in enumerate(core.SYMMETRIES.values()):
            # the view of the board whose view is the k-th image of this view
            image = view_board(b).transform(perm)
            moved = image.transform(inverse_quarter) if b.to_move == 1 else image
            assert np.array_equal(game.observations(np.array([moved.cells], np.int8)).reshape(-1),
                                  observations[i][obs_gather[k]]), (b, k)
            vmask = view_board(b).legal_mask()
            assert np.array_equal(image.legal_mask(), vmask[action_gather[k]]), (b, k)


# ----------------------------------------------------------------------------- OpenSpiel


def test_openspiel_game_matches_core_and_round_trips():
    pyspiel = pytest.importorskip("pyspiel")
    import highway_env.openspiel  # noqa: F401  (registers python_highway)

    game = pyspiel.load_game("python_highway")
    for board, actions in games(8, seed=11, start_plies=(0, 0, 6, 14)):
        state = game.new_initial_state(board.to_string() if board.ply else None)
        b = board
        for a in [None, *actions]:
            if a is not None:
                if b.ply:
                    with pytest.raises(HighwayError):
                        state.apply_action(an_illegal_action(b))
                state.apply_action(a)
                b = b.apply(a)
            assert state.board == b and state.is_terminal() == b.is_terminal()
            assert state.current_player() == (pyspiel.PlayerId.TERMINAL if b.is_terminal() else b.to_move)
            assert state.legal_actions() == (b.legal_actions() if not b.is_terminal() else [])
            value = b.outcome().value if b.is_terminal() else 0
            assert state.returns() == [value, -value] and state.rewards() == [value, -value]
            for p in (0, 1):
                assert np.array_equal(np.asarray(state.observation_tensor(p)).reshape(4, 4, 16), planes_of(b, p))
            for twin in (state.clone(), game.deserialize_state(state.serialize()),
                         pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1],
                         game.new_initial_state(state.to_dict())):
                assert twin.board == b and twin.legal_actions() == state.legal_actions()
                assert twin.observation_string(0) == state.observation_string(0)
            assert state.clone().history() == state.history()


def test_az_features_are_cores_path_bounds_in_the_movers_frame():
    """Every channel of the "features" observation recomputed from core's path ranges and bounds
    on the board as the mover sees it (its paths the A-paths), the per-action margin ranges from
    core's bounds after the move."""
    from highway_env.az_game import FEATURE_CHANNELS, MARGIN_SCALE, PATH_SCALE, HighwayGame

    game = HighwayGame(obs="features")
    rng = np.random.default_rng(12)
    boards = [core.random_board(rng, int(k)) for k in rng.integers(0, 16, 40 * SCALE)]
    feats = game.observations(np.array([b.cells for b in boards], np.int8)).reshape(len(boards), CELLS, FEATURE_CHANNELS)
    for b, f in zip(boards, feats):
        v = view_board(b)
        ra, rb = v.path_ranges()
        bounds = v.bounds()
        for c in range(CELLS):
            want = np.zeros(FEATURE_CHANNELS, np.float32)
            if v.cells[c]:
                want[v.cells[c] - 1] = 1
            else:
                want[16] = 1
            for side, (paths, ranges) in enumerate(((core.A_PATHS, ra), (core.B_PATHS, rb))):
                through = [r for p, r in zip(paths, ranges) if c in p]
                best_hi = (bounds.min_a if side == 0 else bounds.min_b)[1]
                want[17 + 2 * side] = min(lo for lo, _ in through) / PATH_SCALE
                want[18 + 2 * side] = min(hi for _, hi in through) / PATH_SCALE
                want[21 + side] = sum(lo <= best_hi for lo, _ in through) / len(through)
            want[23:27] = np.array([*bounds.min_a, *bounds.min_b]) / PATH_SCALE
            want[27:29] = np.array(bounds.margin) / MARGIN_SCALE
            want[29] = b.ply / CELLS
            for n in v.unused_numbers():
                if not v.cells[c]:
                    lo, hi = v.apply((n - 1) * CELLS + c).bounds().margin
                    want[30 + n - 1], want[46 + n - 1] = lo / MARGIN_SCALE, hi / MARGIN_SCALE
            assert np.allclose(f[c], want, atol=1e-6), (b.to_string(), c, np.flatnonzero(~np.isclose(f[c], want)))
