"""Playing in the browser, without a browser: game sessions, hints, and the HTTP API (urllib against
a server on port 0 in a thread)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from highway_env.core import A_PATHS, B_PATHS, Board, encode_action, parse_board
from highway_env.play.hints import HintService
from highway_env.play.opponents import AgentProcess, OpponentSpecError, build_opponent, resolve_spec
from highway_env.play.server import start_server
from highway_env.play.session import BadRequest, Conflict, NotFound, SessionManager, parse_action
from highway_env.play.view import board_view, result_text

# The README's principal variation: perfect play, A wins 47 vs 49.
PV_FINAL = "2,7,4,16,8,9,6,10,13,11,14,12,1,5,3,15"


class FirstLegal:
    """A fast, deterministic opponent: the smallest number in the first empty cell."""

    def act(self, board):
        return encode_action(board.unused_numbers()[0], board.empty_cells()[0])


class Gated(FirstLegal):
    """An opponent that thinks until the test opens the gate."""

    def __init__(self):
        self.gate = threading.Event()
        self.calls = 0

    def act(self, board):
        self.calls += 1
        assert self.gate.wait(10), "the test never opened the gate"
        return super().act(board)


def manager(agent=None, hints=None):
    return SessionManager(hints=hints, build=lambda spec, seed: agent or FirstLegal())


def first_free(state):
    """(smallest unused number, first empty cell) of a state dict."""
    number = min(set(range(1, 17)) - set(state["used"]))
    return number, state["cells"].index(0)


def finish(session, timeout=10.0):
    """Play the human's side (first free move) until the game ends; returns the last state."""
    state = session.wait(timeout)
    while not state["over"]:
        assert state["your_turn"], state
        state = session.play(encode_action(*first_free(state)))
        state = session.wait(timeout)
    return state


# ----------------------------------------------------------------------------- view

def test_view_of_a_full_board_matches_core_outcome():
    board = parse_board(PV_FINAL)
    out = board.outcome()
    view = board_view(board)
    assert view["result"]["text"] == "A wins: 47 vs 49"
    assert (view["result"]["min_a"], view["result"]["min_b"]) == (out.min_a, out.min_b) == (47, 49)
    assert view["result"]["winner"] == "A" and view["result"]["margin"] == 2
    assert view["paths"]["A"]["cells"] == list(out.a_paths[0])
    assert view["paths"]["B"]["cells"] == list(out.b_paths[0])
    assert view["paths"]["A"]["placed"] == view["paths"]["A"]["lo"] == view["paths"]["A"]["hi"] == 47
    assert view["to_move"] is None


def test_view_of_a_partial_board_shows_the_path_that_can_end_cheapest():
    board = parse_board("0,0,0,16,0,0,0,0,0,5,0,0,1,0,0,0")
    ranges_a, ranges_b = board.path_ranges()
    view = board_view(board)
    assert view["result"] is None and view["to_move"] == "B" and view["used"] == [1, 5, 16]
    for who, paths, ranges in (("A", A_PATHS, ranges_a), ("B", B_PATHS, ranges_b)):
        p = view["paths"][who]
        assert tuple(p["cells"]) in paths
        assert p["lo"] == min(lo for lo, _ in ranges)
        assert p["placed"] == sum(board.cells[c] for c in p["cells"])
        assert p["empty"] == sum(1 for c in p["cells"] if board.cells[c] == 0)
    assert view["bounds"]["min_a"] == list(board.bounds().min_a)


def test_result_text_names_the_winner_first():
    assert result_text(47, 49) == "A wins: 47 vs 49"
    assert result_text(50, 48) == "B wins: 48 vs 50"
    assert result_text(48, 48) == "Draw: 48 vs 48"


# ----------------------------------------------------------------------------- sessions

def test_a_whole_game_against_greedy_ends_with_core_outcome():
    games = SessionManager(build=build_opponent)
    session = games.create("A", "greedy", seed=3)
    state = finish(session)
    board = Board(tuple(state["cells"]))
    out = board.outcome()
    assert state["ply"] == 16 and state["over"] and not state["your_turn"]
    assert state["result"]["text"] == result_text(out.min_a, out.min_b)
    assert [m["by"] for m in state["history"]] == ["human", "opponent"] * 8
    assert [m["player"] for m in state["history"]] == ["A", "B"] * 8


def test_playing_b_the_opponent_opens():
    session = manager().create("B", "first-legal", seed=0)
    state = session.wait(5)
    assert state["ply"] == 1 and state["your_turn"] and state["human"] == "B"
    assert state["history"][0]["by"] == "opponent"
    assert not state["can_undo"]
    with pytest.raises(Conflict, match="nothing to undo"):
        session.undo()
    state = finish(session)
    assert state["history"][-1]["by"] == "human"  # B makes the 16th move
    state = session.undo()  # the human's last move only: nothing came after it
    assert state["ply"] == 15 and state["your_turn"]


def test_undo_takes_back_the_move_and_the_reply():
    session = manager().create("A", "first-legal", seed=0)
    session.play(encode_action(16, 3))
    s2 = session.wait(5)
    session.play(encode_action(*first_free(s2)))
    s4 = session.wait(5)
    assert s4["ply"] == 4
    state = session.undo()
    assert state["cells"] == s2["cells"] and state["your_turn"] and state["ply"] == 2
    state = session.undo()
    assert state["ply"] == 0 and not state["can_undo"]


def test_undo_while_the_opponent_thinks_drops_its_late_reply():
    agent = Gated()
    session = manager(agent).create("A", "gated", seed=0)
    state = session.play(encode_action(16, 3))
    assert state["thinking"] and not state["your_turn"]
    with pytest.raises(Conflict, match="not your turn"):
        session.play(encode_action(1, 0))
    state = session.undo()
    assert state["ply"] == 0 and state["your_turn"] and not state["thinking"]
    agent.gate.set()  # the abandoned reply arrives now and must be ignored
    time.sleep(0.2)
    state = session.state()
    assert state["ply"] == 0 and state["history"] == []
    session.play(encode_action(2, 0))
    assert session.wait(5)["ply"] == 2


def test_rejected_moves_leave_the_game_unchanged():
    session = manager().create("A", "first-legal", seed=0)
    session.play(encode_action(16, 3))
    before = session.wait(5)
    reply = before["history"][-1]
    cases = [
        (encode_action(9, 3), "cell 3 .* already holds 16"),
        (encode_action(reply["number"], 5), f"number {reply['number']} is already on the board"),
    ]
    for action, message in cases:
        with pytest.raises(Conflict, match=message):
            session.play(action)
        assert session.state() == before
    finish(session)
    over = session.state()
    with pytest.raises(Conflict, match="game is over"):
        session.play(encode_action(1, 0))
    assert session.state() == over


@pytest.mark.parametrize("body, message", [
    ({"action": 256}, "action 256 is out of range"),
    ({"action": True}, "action must be an integer"),
    ({"number": 0, "cell": 3}, "number 0 is out of range"),
    ({"number": 5, "cell": 16}, "cell 16 is out of range"),
    ({"number": "5", "cell": 1}, "number must be an integer"),
    ({"cell": 1}, "needs 'number'"),
    ([1, 2], "JSON object"),
])
def test_malformed_moves_are_bad_requests(body, message):
    with pytest.raises(BadRequest, match=message):
        parse_action(body)


def test_new_game_keeps_or_replaces_the_opponent():
    games = SessionManager(build=build_opponent)
    session = games.create("A", "random", seed=1)
    agent = session.agent
    session.play(encode_action(16, 3))
    session.wait(5)
    state = games.restart(session.id)
    assert state["ply"] == 0 and session.agent is agent
    with pytest.raises(BadRequest, match="nonsense"):
        games.restart(session.id, "B", "nonsense:1")
    assert session.state()["ply"] == 0 and session.opponent == "random"  # unchanged
    state = games.restart(session.id, "B", "greedy", 5)
    assert state["opponent"] == "greedy" and state["human"] == "B" and state["seed"] == 5
    assert session.wait(5)["ply"] == 1


def test_two_games_are_independent():
    games = manager()
    one, two = games.create("A", "x"), games.create("B", "x")
    assert one.id != two.id and games.get(one.id) is one
    one.play(encode_action(16, 3))
    one.wait(5)
    assert two.wait(5)["ply"] == 1 and one.state()["ply"] == 2
    two.play(encode_action(16, 3) if two.state()["cells"][3] == 0 else encode_action(2, 5))
    two.wait(5)
    two.undo()
    assert one.state()["ply"] == 2 and two.state()["ply"] == 1
    with pytest.raises(NotFound, match="unknown game id 'nope'"):
        games.get("nope")


def test_old_idle_sessions_are_dropped_beyond_the_limit():
    games = SessionManager(max_sessions=2, build=lambda spec, seed: FirstLegal())
    first = games.create()
    games.create()
    games.create()
    assert len(games) == 2
    with pytest.raises(NotFound):
        games.get(first.id)


# ----------------------------------------------------------------------------- opponents

def test_the_shipped_checkpoint_resolves_wherever_the_server_runs(tmp_path, monkeypatch):
    import agents

    monkeypatch.chdir(tmp_path)
    assert resolve_spec("az:agents/pretrained/highway_az.pt") == f"az:{agents.PRETRAINED}"
    assert resolve_spec("az:agents/pretrained/highway_az.pt:8") == f"az:{agents.PRETRAINED}:8"
    assert resolve_spec("az") == f"az:{agents.PRETRAINED}"
    assert resolve_spec("az:mine.pt") == "az:mine.pt"
    assert resolve_spec("perfect:margin") == "perfect:margin"
    agent = build_opponent("az:agents/pretrained/highway_az.pt:2", seed=0)
    assert Board().is_legal(agent.act(Board()))


@pytest.mark.parametrize("spec, message", [
    ("", "non-empty"), (None, "non-empty"), ("nonsense", "unknown agent kind"),
    ("perfect:foo", "tie-break"), ("mcts:x", "integer"), ("az:/no/such/file.pt", "does not exist"),
])
def test_bad_opponent_specs_are_named(spec, message):
    with pytest.raises(OpponentSpecError, match=message):
        build_opponent(spec)


@pytest.mark.parametrize("spec, detail", [("perfect:foo", "perfect: tie-break must be one of"),
                                          ("random:1", "agent 'random' takes no arguments")])
def test_bad_opponent_spec_is_named_once_as_the_page_wrote_it(spec, detail):
    """make_agent names the spec itself: the page's message said it twice ("bad opponent spec
    'perfect:foo': bad agent spec 'perfect:foo': ...")."""
    with pytest.raises(OpponentSpecError) as e:
        build_opponent(spec, isolate=False)
    assert str(e.value).startswith(f"bad opponent spec {spec!r}: {detail}")
    assert str(e.value).count(spec) == 1, str(e.value)


def test_perfect_player_opponent_runs_in_its_own_process_and_keeps_the_win():
    """Its searches hold the GIL for seconds: in a process they cannot freeze the server."""
    agent = build_opponent("perfect:random", seed=0)
    assert isinstance(agent, AgentProcess)
    try:
        board = parse_board("2,7,4,16,8,9,6,10,13,0,0,0,1,5,3,15")  # the PV, 4 cells left, A to move
        while not board.is_terminal():
            board = board.apply(agent.act(board) if board.to_move == 0 else FirstLegal().act(board))
        assert board.outcome().value == 1
    finally:
        agent.close()
    with pytest.raises(RuntimeError, match="perfect:random"):
        agent.act(Board())


def test_the_agent_process_gets_a_checkout_on_its_path_but_never_site_packages(monkeypatch):
    """Site-packages on PYTHONPATH would come before the child's standard library."""
    import os
    from pathlib import Path
    from types import SimpleNamespace

    import highway_env
    from highway_env.play import opponents

    class Started(Exception):
        pass

    env_seen = {}

    def popen(*args, env, **kwargs):
        env_seen.update(env)
        raise Started

    root = str(Path(highway_env.__file__).resolve().parent.parent)
    assert not opponents.is_installed(root)  # this checkout is not an installed copy
    monkeypatch.setattr(opponents, "subprocess", SimpleNamespace(Popen=popen, PIPE=subprocess.PIPE))
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    for installed, path in ((False, f"{root}{os.pathsep}/elsewhere"), (True, "/elsewhere")):
        monkeypatch.setattr(opponents, "is_installed", lambda path: installed and path == root)
        with pytest.raises(Started):
            AgentProcess("random")
        assert env_seen["PYTHONPATH"] == path


def test_an_agent_process_reports_a_failing_move():
    agent = build_opponent("greedy", seed=0, isolate=True)
    try:
        assert Board().is_legal(agent.act(Board()))
        with pytest.raises(RuntimeError, match="IndexError"):  # greedy on a full board
            agent.act(parse_board(PV_FINAL))
        assert Board().is_legal(agent.act(Board()))  # still serving after an error
    finally:
        agent.close()


# ----------------------------------------------------------------------------- hints

@pytest.fixture(scope="module")
def hints():
    return HintService(time_limit=20.0)


def test_hint_on_the_empty_board_comes_from_the_book(hints):
    h = hints.hint(Board())
    assert h["status"] == "ok" and not h["computed"]
    assert h["value"] == 1 and h["verdict"] == "A wins"
    values = {(m["number"], m["cell"]): m["value"] for m in h["moves"]}
    assert len(values) == 256 and h["seconds"] < 2
    assert values[(16, 3)] == values[(16, 12)] == values[(1, 0)] == 1  # the README's winning first moves
    assert values[(3, 0)] == 0 and values[(16, 0)] == -1


def test_early_hint_uses_the_book_only(hints):
    h = hints.hint(parse_board("0,0,0,0,0,7,0,0,0,0,0,0,0,0,0,0"))  # a losing first move: in the book
    assert h["status"] == "ok" and not h["computed"] and h["value"] == -1
    assert 0 < h["known"] < h["total"] and "solved from move 5" in h["message"]
    h = hints.hint(parse_board("0,0,0,16,0,0,0,0,0,0,0,0,7,0,0,1"))  # ply 3, not in the book
    assert h["status"] == "unavailable" and h["value"] is None
    assert all(m["keeps"] is None for m in h["moves"])
    assert "available from move 5" in h["message"] and h["seconds"] < 1


def test_hint_from_ply_4_is_solved_and_agrees_with_the_solver(hints):
    from highway_env.solver.solver import Solver

    board = parse_board("0,0,0,16,0,0,0,0,0,5,0,0,1,0,0,15")
    h = hints.hint(board)
    assert h["computed"] and h["status"] == "ok", h["message"]
    assert h["known"] == h["total"] == len(board.legal_actions())
    solver = Solver(tt_bits=16)
    assert h["value"] == solver.value(board)
    for m in h["moves"][::37]:
        assert m["value"] == solver.value(board.apply(m["action"]))


def test_hint_time_limit_gives_partial_answers_that_resume():
    service = HintService(time_limit=1e-4)
    board = parse_board("0,3,0,16,0,0,0,0,0,5,0,0,1,0,0,15")
    h = service.hint(board)
    assert h["status"] == "partial" and "still solving" in h["message"]
    service.time_limit = 20.0
    h = service.hint(board)
    assert h["status"] == "ok" and h["known"] == h["total"]


def test_hint_judges_the_number_in_view_first():
    service = HintService(time_limit=0.5)
    board = parse_board("15,0,0,16,0,0,0,0,0,0,0,0,14,0,0,13")  # ply 4, slow to solve fully
    service.player.value_of(board)  # the position's own value first, so that the moves get the time
    judged = []
    for _ in range(20):  # each request resumes where the last one stopped (a loaded machine is slow)
        h = service.hint(board, first=9)
        judged = [m["number"] for m in h["moves"] if m["keeps"] is not None]
        if judged:
            break
    nines = sum(1 for a in board.legal_actions() if a // 16 + 1 == 9)
    assert judged, h
    if len(judged) < nines:
        assert set(judged) == {9}
    else:
        assert judged.count(9) == nines


def test_hint_while_the_solver_is_busy_says_so():
    service = HintService(time_limit=0.05)
    with service._lock:
        assert service.hint(parse_board("0,3,0,16,0,0,0,0,0,5,0,0,1,0,0,15"))["status"] == "busy"


def test_hint_on_a_full_board_is_the_result(hints):
    h = hints.hint(parse_board(PV_FINAL))
    assert h["status"] == "over" and h["value"] == 1


# ----------------------------------------------------------------------------- HTTP API

@pytest.fixture()
def server():
    srv, thread = start_server(sessions=SessionManager(HintService(time_limit=10.0), build=build_opponent))
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def call(srv, method, path, body=None, raw=None, content_type="application/json"):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": content_type} if data is not None else {}
    req = urllib.request.Request(srv.url + path.lstrip("/"), data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            payload = r.read()
            return r.status, (json.loads(payload) if r.headers.get_content_type() == "application/json" else payload)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_http_full_game_with_undo(server):
    status, state = call(server, "POST", "/api/games", {"side": "A", "opponent": "random", "seed": 2})
    assert status == 201 and state["ply"] == 0 and state["your_turn"]
    gid = state["id"]
    status, state = call(server, "POST", f"/api/games/{gid}/move", {"number": 16, "cell": 3})
    assert status == 200 and state["ply"] >= 1
    state = call(server, "GET", f"/api/games/{gid}?wait=10")[1]
    assert state["ply"] == 2 and state["your_turn"]
    after_two = state["cells"]
    state = call(server, "POST", f"/api/games/{gid}/move", {"action": encode_action(*first_free(state))})[1]
    state = call(server, "GET", f"/api/games/{gid}?wait=10")[1]
    assert state["ply"] == 4
    status, state = call(server, "POST", f"/api/games/{gid}/undo", {})
    assert status == 200 and state["cells"] == after_two
    while not state["over"]:
        number, cell = first_free(state)
        state = call(server, "POST", f"/api/games/{gid}/move", {"number": number, "cell": cell})[1]
        state = call(server, "GET", f"/api/games/{gid}?wait=10")[1]
    out = Board(tuple(state["cells"])).outcome()
    assert state["result"]["text"] == result_text(out.min_a, out.min_b)
    assert state["result"]["a_paths"] == [list(p) for p in out.a_paths]
    status, err = call(server, "POST", f"/api/games/{gid}/move", {"number": 1, "cell": 0})
    assert status == 409 and "game is over" in err["error"]


def test_http_errors_are_4xx_json_and_change_nothing(server):
    gid = call(server, "POST", "/api/games", {"side": "A", "opponent": "greedy", "seed": 1})[1]["id"]
    call(server, "POST", f"/api/games/{gid}/move", {"number": 16, "cell": 3})
    before = call(server, "GET", f"/api/games/{gid}?wait=10")[1]
    move = f"/api/games/{gid}/move"
    cases = [
        (("POST", move, None, b"{not json"), 400, "not valid JSON"),
        (("POST", move, None, b"[1, 2]"), 400, "must be a JSON object"),
        (("POST", move, {"number": 16, "cell": 5}), 409, "number 16 is already on the board"),
        (("POST", move, {"number": 9, "cell": 3}), 409, "cell 3 (row 1, column 4) already holds 16"),
        (("POST", move, {"number": 17, "cell": 0}), 400, "number 17 is out of range 1..16"),
        (("POST", move, {"action": -1}), 400, "action -1 is out of range"),
        (("POST", move, {"cell": 0}), 400, "needs 'number'"),
        (("POST", "/api/games/nope/move", {"number": 1, "cell": 0}), 404, "unknown game id 'nope'"),
        (("GET", "/api/games/nope"), 404, "unknown game id"),
        (("POST", "/api/games", {"opponent": "mcts:zero"}), 400, "mcts:zero"),
        (("POST", "/api/games", {"opponent": "nonsense"}), 400, "'nonsense'"),
        (("POST", "/api/games", {"side": "C"}), 400, "side must be 'A' or 'B', got 'C'"),
        (("POST", "/api/games", {"seed": -3}), 400, "seed must be a non-negative integer, got -3"),
        (("POST", f"/api/games/{gid}/new", {"opponent": "perfect:fastest"}), 400, "fastest"),
        (("POST", f"/api/games/{gid}/new", {"opponent": 7}), 400, "got 7"),
        (("GET", f"/api/games/{gid}?wait=forever"), 400, "wait must be a number"),
        (("GET", f"/api/games/{gid}/hint?number=17"), 400, "number must be in 1..16, got '17'"),
        (("GET", move), 405, "not allowed"),
        (("GET", "/api/nothing"), 404, "no such page"),
    ]
    for args, status, message in cases:
        method, path, body, *raw = args + (None,) * (4 - len(args))
        got_status, got = call(server, method, path, body, raw=raw[0] if raw else None)
        assert got_status == status, (args, got)
        assert message in got["error"], (args, got)
        assert call(server, "GET", f"/api/games/{gid}")[1] == before, args
    status, got = call(server, "POST", move, raw=b'{"number": 1, "cell": 0}', content_type="text/plain")
    assert status == 415 and "application/json" in got["error"]
    assert call(server, "GET", f"/api/games/{gid}")[1] == before


def test_http_a_method_a_route_does_not_take_is_a_405_that_names_the_allowed_ones(server):
    gid = call(server, "POST", "/api/games", {"side": "A", "opponent": "random", "seed": 2})[1]["id"]
    cases = [("POST", "/api/opponents", "GET, HEAD"), ("POST", "/static/app.js", "GET, HEAD"),
             ("DELETE", "/", "GET, HEAD"), ("POST", "/index.html", "GET, HEAD"),
             ("GET", "/api/games", "POST"), ("GET", f"/api/games/{gid}/move", "POST"),
             ("POST", f"/api/games/{gid}", "GET, DELETE, HEAD"), ("POST", f"/api/games/{gid}/hint", "GET, HEAD")]
    for method, path, allow in cases:
        req = urllib.request.Request(server.url + path.lstrip("/"), data=b"{}" if method == "POST" else None,
                                     method=method, headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=60)
        assert e.value.code == 405 and e.value.headers["Allow"] == allow, (method, path, e.value.headers)
        assert "not allowed" in json.loads(e.value.read())["error"], (method, path)
    assert call(server, "GET", "/api/opponents")[0] == 200  # the allowed method still answers


def test_http_moving_while_the_opponent_thinks_is_refused():
    agent = Gated()
    srv, _ = start_server(sessions=manager(agent))
    try:
        gid = call(srv, "POST", "/api/games", {"side": "B", "opponent": "gated"})[1]["id"]
        status, err = call(srv, "POST", f"/api/games/{gid}/move", {"number": 1, "cell": 0})
        assert status == 409 and "not your turn: A (the opponent, gated) is to move" in err["error"]
        state = call(srv, "GET", f"/api/games/{gid}?wait=0.2")[1]
        assert state["thinking"] and state["ply"] == 0
        agent.gate.set()
        state = call(srv, "GET", f"/api/games/{gid}?wait=10")[1]
        assert state["ply"] == 1 and state["your_turn"]
    finally:
        agent.gate.set()
        srv.shutdown()
        srv.server_close()


def test_http_two_games_at_once(server):
    one = call(server, "POST", "/api/games", {"side": "A", "opponent": "random", "seed": 1})[1]["id"]
    two = call(server, "POST", "/api/games", {"side": "A", "opponent": "greedy", "seed": 1})[1]["id"]
    call(server, "POST", f"/api/games/{one}/move", {"number": 16, "cell": 3})
    call(server, "POST", f"/api/games/{two}/move", {"number": 1, "cell": 0})
    s1 = call(server, "GET", f"/api/games/{one}?wait=10")[1]
    s2 = call(server, "GET", f"/api/games/{two}?wait=10")[1]
    assert s1["cells"][3] == 16 and s1["cells"][0] != 1 and s1["opponent"] == "random"
    assert s2["cells"][0] == 1 and s2["cells"][3] != 16 and s2["opponent"] == "greedy"
    call(server, "POST", f"/api/games/{one}/undo", {})
    assert call(server, "GET", f"/api/games/{two}")[1] == s2


def test_http_hint_and_static_files(server):
    gid = call(server, "POST", "/api/games", {"side": "A", "opponent": "random", "seed": 1})[1]["id"]
    status, h = call(server, "GET", f"/api/games/{gid}/hint")
    assert status == 200 and h["status"] == "ok" and h["value"] == 1 and h["ply"] == 0
    status, page = call(server, "GET", "/")
    assert status == 200 and b"<title>Highway</title>" in page and b"/static/app.js" in page
    for name in ("app.js", "style.css"):
        status, data = call(server, "GET", f"/static/{name}")
        assert status == 200 and len(data) > 1000
    for bad in ("/static/../server.py", "/static/%2e%2e/server.py", "/static/missing.js"):
        assert call(server, "GET", bad)[0] == 404
    status, presets = call(server, "GET", "/api/opponents")
    assert status == 200 and "perfect:hardest" in [p["spec"] for p in presets["presets"]]


def test_cli_serves_on_a_free_port_and_prints_its_address():
    from highway_env.play.__main__ import main

    assert main(["--port", "70000", "--no-browser"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    proc = subprocess.Popen([sys.executable, "-m", "highway_env.play", "--port", "0", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("Highway: play at http://127.0.0.1:"), line
        url = line.split()[3]
        with urllib.request.urlopen(url, timeout=30) as r:
            assert b"Highway" in r.read()
    finally:
        proc.terminate()
        proc.wait(10)
