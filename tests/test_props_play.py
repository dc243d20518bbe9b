"""Randomized differential checks of the play server's game logic and the perfect player's data:
sessions (moves, undo, restart) against core replaying their history, the page's board view
against core's outcome, hints against the plain reference solver on late positions, and the
opening book's moves under the symmetries. ``HIGHWAY_PROPS_SCALE=N`` multiplies the cases."""

from __future__ import annotations

import os

import numpy as np

from highway_env import core
from highway_env.core import Board, encode_action
from highway_env.play.session import Conflict, SessionManager

SCALE = int(os.environ.get("HIGHWAY_PROPS_SCALE", "1"))


class RandomLegal:
    """A seeded random opponent that answers at once."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def act(self, board):
        legal = board.legal_actions()
        return legal[self.rng.integers(len(legal))]


def test_sessions_follow_core_through_random_moves_undos_and_restarts():
    rng = np.random.default_rng(30)
    manager = SessionManager(build=lambda spec, seed: RandomLegal(seed))
    for g in range(10 * SCALE):
        session = manager.create(side="AB"[g % 2], opponent="random", seed=g)
        for _ in range(60):
            state = session.wait(10)
            board = Board(tuple(state["cells"]))
            replay = Board()
            for i, move in enumerate(state["history"], 1):
                assert move["ply"] == i and move["player"] == "AB"[replay.to_move]
                assert move["by"] == ("human" if replay.to_move == session.human else "opponent")
                assert core.encode_action(move["number"], move["cell"]) == move["action"]
                replay = replay.apply(move["action"])
            assert replay == board and state["ply"] == board.ply and state["over"] == board.is_terminal()
            assert state["your_turn"] == (not board.is_terminal() and board.to_move == session.human)
            assert state["can_undo"] == any(m["by"] == "human" for m in state["history"])
            if state["over"]:
                o = board.outcome()
                assert (state["result"]["winner"], state["result"]["margin"]) == (o.winner, o.margin)
                assert state["result"]["a_paths"] == [list(p) for p in o.a_paths]
                assert state["paths"]["A"]["cells"] == list(o.a_paths[0])
                assert state["paths"]["B"]["cells"] == list(o.b_paths[0])
            bounds = board.bounds()
            assert state["bounds"] == {"min_a": list(bounds.min_a), "min_b": list(bounds.min_b),
                                       "margin": list(bounds.margin)}
            roll = rng.random()
            if roll < 0.15 and state["can_undo"]:
                session.undo()
                after = session.wait(10)
                last_human = max(i for i, m in enumerate(state["history"]) if m["by"] == "human")
                assert [m["action"] for m in after["history"]] == [m["action"] for m in state["history"][:last_human]]
            elif roll < 0.2 or state["over"]:
                session.restart()
            elif state["your_turn"]:
                if rng.random() < 0.2 and board.ply:  # an occupied cell or a used number: refused
                    cell = int(rng.choice([c for c in range(16) if board.cells[c]]))
                    try:
                        session.play(encode_action(int(rng.integers(1, 17)), cell))
                    except Conflict:
                        pass
                    else:
                        raise AssertionError(f"a move into the filled cell {cell} was taken on {board}")
                    assert session.wait(10)["cells"] == list(board.cells)
                else:
                    legal = board.legal_actions()
                    session.play(legal[rng.integers(len(legal))])
            else:
                try:  # not the human's turn: refused, nothing changes
                    session.play(board.legal_actions()[0])
                except Conflict:
                    pass
                else:
                    raise AssertionError("a move out of turn was taken")
        manager.delete(session.id)


def test_hints_match_the_reference_solver_on_late_positions():
    from highway_env.play.hints import HintService
    from highway_env.solver.reference import reference_move_values

    hints = HintService(time_limit=60)
    rng = np.random.default_rng(31)
    for _ in range(6 * SCALE):
        board = core.random_board(rng, int(rng.integers(11, 16)))
        ref = {a: int(np.sign(m)) for a, m in reference_move_values(board).items()}
        value = max(ref.values()) if board.to_move == 0 else min(ref.values())
        h = hints.hint(board, first=int(rng.integers(1, 17)))
        assert h["status"] == "ok" and h["value"] == value and h["verdict"] == core.VERDICTS[value]
        assert len(h["moves"]) == h["total"] == len(ref)
        for m in h["moves"]:
            assert m["keeps"] == (ref[m["action"]] == value), (board.to_string(), m)
            if m["value"] is not None:
                assert m["value"] == ref[m["action"]], (board.to_string(), m)


def test_opening_book_moves_turn_with_the_board():
    from highway_env.solver.opening_book import load_book

    book = load_book()
    rng = np.random.default_rng(32)
    keys = sorted(book.entries)
    for key in rng.choice(keys, min(len(keys), 60 * SCALE), replace=False):
        canon = core.parse_board(key)
        moves = book.moves(canon)
        for perm in core.SYMMETRIES.values():
            image = canon.transform(perm)
            assert book.value(image) == book.value(canon)
            turned = book.moves(image)
            if moves is None:
                assert turned is None
                continue
            assert turned[1] == moves[1]
            assert sorted(turned[0]) == sorted(core.transform_action(a, perm) for a in moves[0]), key
