"""The play server against careless or hostile clients (issue 14, "The play server"): search sizes
and engine processes are capped, a replaced game stops its search, foreign Host/Origin names get 403
and no error tells whether a file exists, an unread body is never taken for the next request,
stalled connections are closed, bad JSON of any shape is a 400, bad flags stop the start, and 100
concurrent clients lose no request. Loopback only, bounded in count and time."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest

from highway_env.core import encode_action
from highway_env.play.limits import ServerLimits
from highway_env.play.opponents import build_opponent
from highway_env.play.server import MAX_BODY, host_name, start_server
from highway_env.play.session import BadRequest, NotFound, PlayError, SessionManager, TooBusy
from agent_kinds import builtin_agent_kinds


class FirstLegal:
    def act(self, board):
        return encode_action(board.unused_numbers()[0], board.empty_cells()[0])


class FakeEngine(FirstLegal):
    """Stands for an opponent process: thinks until its gate opens, records that it was closed."""

    def __init__(self):
        self.gate = threading.Event()
        self.closed = threading.Event()

    def act(self, board):
        self.gate.wait(10)
        return super().act(board)

    def close(self):
        self.closed.set()
        self.gate.set()


@pytest.fixture()
def server():
    srv, thread = start_server(sessions=SessionManager(build=build_opponent), socket_timeout=2.0)
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def request(srv, method, path, body=None, headers=None, timeout=30):
    """(status, JSON payload) of one request on a fresh connection."""
    host, port = srv.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        payload = r.read()
        return r.status, json.loads(payload) if r.getheader("Content-Type") == "application/json" else payload
    finally:
        conn.close()


def raw_exchange(srv, data: bytes, timeout=5.0) -> bytes:
    """Send raw bytes on one connection and read until the server closes it or goes quiet."""
    s = socket.create_connection(srv.server_address[:2], timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def statuses(raw: bytes) -> list[int]:
    """The status of each response in ``raw`` (a JSON body is not followed by a line break)."""
    return [int(code) for code in re.findall(rb"HTTP/1\.[01] (\d{3}) ", raw)]


# ----------------------------------------------------------------------------- 1. search sizes

@pytest.mark.parametrize("count", ["999_999", " 999999", "+999999", "999999 ", "\u0669\u0669\u0669\u0669\u0669\u0669"])
def test_a_count_written_other_than_in_digits_cannot_pass_the_cap(count):
    """int() reads these as 999999, the cap compares digits: mcts:999_999 ran 50 times the server's
    limit of simulations a move."""
    with pytest.raises(BadRequest, match="N must be an integer|more than this server's limit"):
        SessionManager(build=build_opponent).create("A", f"mcts:{count}")


@pytest.mark.parametrize("spec, value, flag", [
    ("mcts:2000000", "2000000", "--max-mcts-sims"),
    ("az:agents/pretrained/highway_az.pt:100000", "100000", "--max-az-sims"),
])
def test_search_sizes_over_the_cap_are_refused(server, spec, value, flag):
    status, err = request(server, "POST", "/api/games", {"side": "B", "opponent": spec})
    assert status == 400 and value in err["error"] and flag in err["error"], err
    assert len(server.sessions) == 0


#: Agent kinds the server runs on its own threads: each move is instant and bounded whatever the spec.
IN_SERVER_KINDS = ("random", "greedy")


def test_every_agent_kind_is_placed_in_or_out_of_the_server_process():
    """A new kind that searches, left out of ISOLATED_KINDS, would run on a thread of the server's
    process, holding the GIL for the whole search and with no cap on what a page asks for."""
    from highway_env.play.opponents import ISOLATED_KINDS

    unplaced = [k for k in builtin_agent_kinds() if k not in ISOLATED_KINDS and k not in IN_SERVER_KINDS]
    assert not unplaced, (f"agent kind(s) {unplaced}: add each to ISOLATED_KINDS in highway_env/play/opponents.py "
                          "(a search: its own process; cap its size in highway_env/play/limits.py) or, if every "
                          "move is instant, to IN_SERVER_KINDS in tests/test_hostile_server.py")



#: What caps the size of each kind that runs in its own process: (the ServerLimits field, a spec over
#: a limit of 5). None: a page cannot size it (the perfect player's budgets are the server's own).
ISOLATED_CAPS = {"mcts": ("max_mcts_simulations", "mcts:6"), "az": ("max_az_simulations", "az:shipped:6"),
                 "perfect": None}


def test_every_isolated_kind_has_its_size_capped():
    """A searching kind put in ISOLATED_KINDS without a cap in ServerLimits.check lets one request
    start a search of any size (minimax:40) that holds an engine process and a core."""
    from highway_env.play.limits import LimitError
    from highway_env.play.opponents import ISOLATED_KINDS

    assert set(ISOLATED_KINDS) == set(ISOLATED_CAPS), (
        f"kind(s) {sorted(set(ISOLATED_KINDS) ^ set(ISOLATED_CAPS))}: give each a cap in ServerLimits.check "
        "(highway_env/play/limits.py: a field, a --max-... flag in highway_env/play/__main__.py, a row in the "
        "README's 'Play in the browser' table) and an entry in ISOLATED_CAPS in tests/test_hostile_server.py")
    for kind, cap in ISOLATED_CAPS.items():
        if cap is not None:
            field, spec = cap
            with pytest.raises(LimitError, match="more than this server's limit of 5"):
                ServerLimits(**{field: 5}).check(spec)


def test_every_limit_refuses_a_value_below_one():
    """A field added to ServerLimits but not to the checks of ``__post_init__`` took 0 or -1 silently."""
    import dataclasses

    for f in dataclasses.fields(ServerLimits):
        if f.name == "checkpoints":
            continue
        try:
            ServerLimits(**{f.name: 0})
        except ValueError as e:
            assert f"{f.name} must be a positive integer, got 0" in str(e)
        else:
            pytest.fail(f"ServerLimits({f.name}=0) was accepted: add {f.name!r} to the checks in "
                        "ServerLimits.__post_init__ (highway_env/play/limits.py)")

def test_limits_are_configurable():
    limits = ServerLimits(max_mcts_simulations=50, max_az_simulations=8)
    limits.check("mcts:50")
    limits.check("az:agents/pretrained/highway_az.pt:8")
    with pytest.raises(ValueError, match="51 simulations.*limit of 50"):
        limits.check("mcts:51")
    with pytest.raises(ValueError, match="max_engines must be a positive integer, got 0"):
        ServerLimits(max_engines=0)
    with pytest.raises(ValueError, match="max_mcts_simulations must be at most 1000000 .*, got 1000001"):
        ServerLimits(max_mcts_simulations=1_000_001)  # a limit above what the agent registry builds


def test_engine_processes_are_capped_and_idle_ones_make_room():
    engines = []

    def build(spec, seed):
        engines.append(FakeEngine())
        return engines[-1]

    games = SessionManager(build=build, limits=ServerLimits(max_engines=2))
    one = games.create("B", "perfect:random")  # B: the engine opens, so it is thinking
    two = games.create("B", "mcts:10")
    with pytest.raises(TooBusy, match="all 2 engine processes.*--max-engines"):
        games.create("B", "az")
    assert len(engines) == 2 and not any(e.closed.is_set() for e in engines)
    engines[0].gate.set()
    one.wait(5)  # idle now: the least recently used engine makes room
    games.create("A", "perfect:margin")
    assert engines[0].closed.wait(5) and not engines[1].closed.is_set()
    games.create("A", "greedy")  # in-server agents do not count
    engines[1].gate.set()
    assert two.wait(5)["ply"] == 1


def test_a_replaced_or_deleted_game_stops_its_engine():
    engines = []

    def build(spec, seed):
        engines.append(FakeEngine())
        return engines[-1]

    games = SessionManager(build=build)
    game = games.create("B", "mcts:10")
    assert game.thinking
    games.restart(game.id)  # same opponent, still thinking: a fresh engine, the old one stopped
    assert engines[0].closed.wait(5) and len(engines) == 2
    games.delete(game.id)
    assert engines[1].closed.wait(5)


def test_an_engine_started_for_a_game_deleted_meanwhile_is_stopped():
    """A DELETE (or an eviction) while a new game's engine process starts: the restart installed the
    engine in the ended game, where nothing would ever stop it (nor count it against --max-engines)."""
    engines, games = [], None

    def build(spec, seed):
        if engines:  # the restart's engine: the game is deleted while it starts
            games.delete(game.id)
        engines.append(FakeEngine())
        return engines[-1]

    games = SessionManager(build=build)
    game = games.create("A", "mcts:10")
    with pytest.raises(NotFound, match="it was ended"):
        games.restart(game.id, opponent="mcts:20")
    assert engines[0].closed.is_set() and engines[1].closed.is_set()


def test_an_engine_started_while_the_server_stops_is_stopped():
    """A new game whose engine process starts while the server closes every session: it was added
    after close() had emptied the games, so nothing would ever stop its process."""
    engines, games = [], None

    def build(spec, seed):
        games.close()  # the server stops while this engine starts
        engines.append(FakeEngine())
        return engines[-1]

    games = SessionManager(build=build)
    with pytest.raises(PlayError, match="stopping") as e:
        games.create("A", "mcts:10")
    assert e.value.status == 503 and engines[0].closed.is_set() and len(games) == 0
    with pytest.raises(PlayError, match="stopping"):  # once stopped: refused before an engine starts
        games.create("A", "mcts:10")
    assert len(engines) == 1


def test_a_real_search_process_ends_when_its_game_is_replaced(server):
    status, state = request(server, "POST", "/api/games", {"side": "B", "opponent": "mcts:20000"})
    assert status == 201 and state["thinking"], state
    process = server.sessions.get(state["id"]).agent._process
    status, state = request(server, "POST", f"/api/games/{state['id']}/new", {"opponent": "greedy"})
    assert status == 200
    process.wait(10)  # terminated, not left searching
    status, _ = request(server, "DELETE", f"/api/games/{state['id']}")
    assert status == 200 and len(server.sessions) == 0


def test_an_engine_process_killed_mid_search_is_restarted_and_the_game_goes_on():
    """A killed engine (kill -9, the out-of-memory killer) was kept: its game reported "the process
    ... ended", then "... is gone" for every later move, also after New game with that opponent."""
    games = SessionManager()
    try:
        session = games.create("B", "mcts:6000", seed=1)
        first = session.agent._process
        time.sleep(0.15)  # the search (about 0.5 s alone) has started, or not: either way the process is gone
        first.kill()
        state = session.wait(60)
        assert state["opponent_error"] is None and len(state["history"]) == 1, state
        assert session.agent.restarts == 1 and session.agent._process.poll() is None
        session.agent._process.kill()  # killed while idle: the next request finds it gone
        games.restart(session.id)
        state = session.wait(60)
        assert state["opponent_error"] is None and len(state["history"]) == 1, state
        assert session.agent.restarts == 2
    finally:
        games.close()


# ----------------------------------------------------------------------------- 2. Host, Origin, files

def test_host_names():
    assert host_name("LocalHost:8000") == "localhost"
    assert host_name("[::1]:80") == "::1"
    assert host_name("127.0.0.1") == "127.0.0.1"
    assert host_name("example.org.") == "example.org"


def test_a_foreign_host_or_origin_is_refused(server):
    port = server.server_address[1]
    for headers in ({"Host": "rebind.attacker.example"}, {"Host": f"rebind.attacker.example:{port}"},
                    {"Origin": "http://rebind.attacker.example"}, {"Origin": "null"}):
        for method, path, body in (("POST", "/api/games", {"opponent": "random"}), ("GET", "/api/opponents", None)):
            status, err = request(server, method, path, body, headers)
            assert status == 403 and "--allow-host" in err["error"], (headers, err)
    assert len(server.sessions) == 0
    for host in ("localhost", f"localhost:{port}", f"127.0.0.1:{port}"):
        assert request(server, "GET", "/api/opponents", headers={"Host": host})[0] == 200
    ok = {"Origin": f"http://127.0.0.1:{port}"}
    assert request(server, "POST", "/api/games", {"opponent": "random"}, ok)[0] == 201


@pytest.mark.parametrize("origin", ["http://[::1", "http://[zz]"])
def test_an_origin_or_target_that_does_not_parse_is_a_4xx(server, origin):
    """urlsplit raises on these: they were a 500 ("internal error: ValueError")."""
    status, err = request(server, "GET", "/api/opponents", headers={"Origin": origin})
    assert status == 403 and "is not this server" in err["error"], err
    out = raw_exchange(server, f"GET {origin}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    assert statuses(out) == [400] and b"is not a URL path" in out, out  # the same as a request target


def test_allow_host_adds_a_name():
    srv, thread = start_server(sessions=SessionManager(build=build_opponent), allow_hosts=["box.lan"])
    try:
        assert request(srv, "GET", "/api/opponents", headers={"Host": "box.lan:8000"})[0] == 200
        assert request(srv, "GET", "/api/opponents", headers={"Host": "other.lan"})[0] == 403
    finally:
        srv.shutdown()
        srv.server_close()


def test_no_file_existence_oracle(server, tmp_path):
    (tmp_path / "exists.pt").write_bytes(b"not a checkpoint")
    answers = []
    for path in ("/etc/passwd", "/etc/nonexistent", str(tmp_path / "exists.pt"), str(tmp_path / "none.pt")):
        status, err = request(server, "POST", "/api/games", {"opponent": f"az:{path}"})
        answers.append((status, err["error"].replace(path, "PATH")))
    assert len(set(answers)) == 1 and answers[0][0] == 400, answers
    assert "--checkpoint" in answers[0][1]


def test_checkpoints_given_to_the_server_are_allowed_and_offered(tmp_path):
    import agents

    mine = tmp_path / "mine.pt"
    shutil.copy(agents.PRETRAINED, mine)
    limits = ServerLimits(checkpoints=(str(mine),))
    limits.check(f"az:{mine}")
    limits.check(f"az:{mine}:16")
    limits.check("az")
    limits.check(f"az:{agents.PRETRAINED}")
    with pytest.raises(ValueError, match="not one this server loads"):
        limits.check(f"az:{tmp_path / 'other.pt'}")
    srv, _ = start_server(sessions=SessionManager(build=build_opponent, limits=limits))
    try:
        presets = request(srv, "GET", "/api/opponents")[1]["presets"]
        assert f"az:{os.path.realpath(mine)}" in [p["spec"] for p in presets]
    finally:
        srv.shutdown()
        srv.server_close()


# ----------------------------------------------------------------------------- 3. desync

def _smuggled(host: str) -> bytes:
    return f"GET /api/games/smuggled HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()


@pytest.mark.parametrize("kind", ["404", "405", "403", "404-game"])
def test_an_unread_body_is_never_the_next_request(server, kind):
    host = "127.0.0.1"
    method, path = {"404": ("POST", "/api/nothing"), "405": ("GET", "/api/games"), "403": ("POST", "/api/games"),
                    "404-game": ("POST", "/api/games/nope/move")}[kind]
    hidden = _smuggled(host)
    head_host = "evil.example" if kind == "403" else host
    first = (f"{method} {path} HTTP/1.1\r\nHost: {head_host}\r\nContent-Type: application/json\r\n"
             f"Content-Length: {len(hidden)}\r\n\r\n").encode() + hidden
    follow = f"GET /api/games/follow HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
    out = raw_exchange(server, first + follow)
    assert b"smuggled" not in out, out
    assert statuses(out) == [int(kind[:3]), 404] and b"'follow'" in out, out


def test_a_body_too_large_to_read_closes_the_connection(server):
    hidden = _smuggled("127.0.0.1")
    body = hidden + b" " * (MAX_BODY + 1 - len(hidden))
    head = (f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    out = raw_exchange(server, head + body + hidden)
    assert statuses(out) == [413] and b"smuggled" not in out and b"Connection: close" in out, out


def test_chunked_and_bad_lengths_close_the_connection(server):
    hidden = _smuggled("127.0.0.1")
    chunked = (b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(hidden):x}\r\n".encode() + hidden + b"\r\n0\r\n\r\n")
    out = raw_exchange(server, chunked)
    assert statuses(out) == [411] and b"smuggled" not in out, out
    bad = (b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           b"Content-Length: -5\r\n\r\n" + hidden)
    out = raw_exchange(server, bad)
    assert statuses(out) == [400] and b"smuggled" not in out, out


@pytest.mark.parametrize("length", [b"\xb9", b"0\r\nContent-Length: LEN", b"LEN\r\nContent-Length: LEN"],
                         ids=["superscript-one", "two-lengths", "two-equal-lengths"])
def test_a_length_that_is_not_one_ascii_number_is_a_400_that_closes(server, length):
    """A digit str.isdigit() takes but int() refuses was a 500 on a kept connection, and of two
    Content-Length headers the first was read: either way the body ran as the next request."""
    hidden = _smuggled("127.0.0.1")
    head = (b"POST /api/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + length.replace(b"LEN", str(len(hidden)).encode()) + b"\r\n\r\n")
    out = raw_exchange(server, head + hidden)
    assert statuses(out) == [400] and b"smuggled" not in out and b"Connection: close" in out, out


# ----------------------------------------------------------------------------- 4. resources, JSON, flags

def test_a_stalled_connection_is_closed(server):
    s = socket.create_connection(server.server_address[:2], timeout=10)
    try:
        s.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{")  # then nothing
        start, out = time.monotonic(), b""
        while chunk := s.recv(4096):
            out += chunk
        assert time.monotonic() - start < 8  # closed after the 2 s socket timeout
    finally:
        s.close()
    # with no reply: the body was read again after the timeout, a 500 "cannot read from timed out object"
    assert out == b"", out
    assert request(server, "GET", "/api/opponents")[0] == 200


@pytest.mark.parametrize("opponent", ["mcts:\u00b9", "az:az:\u00b9"])
def test_a_digit_that_int_refuses_is_a_400_in_a_spec_and_a_query(server, opponent):
    """str.isdigit() takes '\u00b9' (a superscript one), int() does not: these were 500s."""
    status, err = request(server, "POST", "/api/games", {"opponent": opponent})
    assert status == 400 and "internal error" not in err["error"], err
    game = request(server, "POST", "/api/games", {"opponent": "greedy"})[1]
    status, err = request(server, "GET", f"/api/games/{game['id']}/hint?number=%C2%B9")
    assert status == 400 and "number must be in 1..16" in err["error"], err


@pytest.mark.parametrize("body", [
    b"[" * 30000 + b"]" * 30000,
    b'{"side": ' + b"[" * 30000 + b"]" * 30000 + b"}",
    b'{"opponent": ' + b"[" * 30000 + b"]" * 30000 + b"}",
    b'{"seed": NaN}', b'{"seed": Infinity}', b'{"seed": 1e999}', b'{"seed": ' + b"9" * 5000 + b"}",
    b'{"seed": 1.5}', b'{"seed": true}', b'{"side": {"A": 1}}', b'{"side": ["A"]}',
    b'{"opponent": ["mcts", 5]}', b'{"opponent": {"kind": "mcts"}}', b'{"opponent": "mcts:' + b"9" * 5000 + b'"}',
    b'{"opponent": "az:' + b"/" * 900 + b'"}', b"\xff\xfe{}", b'"just a string"', b"null", b"{",
], ids=lambda body: repr(body[:24]))
def test_bad_json_of_any_shape_is_a_400(server, body):
    status, err = request(server, "POST", "/api/games", body)
    assert status == 400 and err["error"], (body[:60], err)


def test_bad_flags_stop_the_start_with_one_line(capsys):
    from highway_env.play.__main__ import main

    for argv in (["--hint-seconds", "nan"], ["--hint-seconds", "inf"], ["--hint-seconds", "-1"],
                 ["--max-mcts-sims", "0"], ["--max-az-sims", "x"], ["--max-engines", "-2"],
                 ["--max-mcts-sims", "1000001"], ["--max-az-sims", "5000000"],  # above what mcts:N, az:PATH:N take
                 ["--checkpoint", "/no/such.pt"], ["--allow-host", "a b"], ["--port", "70000"],
                 ["--port", "x"]):
        try:
            code = main([*argv, "--no-browser"])
        except SystemExit as e:
            code = e.code
        err = capsys.readouterr().err
        assert code == 2, argv
        assert len(err.strip().splitlines()) == 1 and err.startswith("error:"), (argv, err)
        assert argv[-1] in err or argv[0] in err, (argv, err)


@pytest.mark.parametrize("argv, named", [(["--host", ""], "--host"), (["--host", " "], "--host"),
                                         (["--host", "0"], "'0' means every interface"),
                                         (["--host", "::0"], "write 0.0.0.0 (or ::) if you mean it"),
                                         (["--host", "::ffff:0.0.0.0"], "means every interface"),  # IPv4's
                                         (["--checkpoint", "{garbage}"], "garbage.pt"),
                                         (["--checkpoint", "{other}"], "is an agent of game 'jumping'")])
def test_an_empty_host_or_a_corrupt_checkpoint_stops_the_start(capsys, tmp_path, monkeypatch, argv, named):
    """--host '' listened on every interface (what 0.0.0.0 does, the server has no authentication), and
    so did --host 0 (a mistyped port?) and '::0'; a corrupt --checkpoint, or one of another game, was
    offered to the players."""
    import agents
    from agents.checkpoint import load_checkpoint, save_checkpoint
    import highway_env.play.server as server_module
    from highway_env.play.__main__ import main

    def no_server(*args, **kwargs):
        raise AssertionError("the server started")

    monkeypatch.setattr(server_module, "PlayServer", no_server)
    (tmp_path / "garbage.pt").write_bytes(b"not a checkpoint")
    if "{other}" in argv:
        save_checkpoint(tmp_path / "other.pt", {**load_checkpoint(agents.PRETRAINED),
                                                "game": "jumping"})
    with pytest.raises(SystemExit) as exc:
        main([a.format(garbage=tmp_path / "garbage.pt", other=tmp_path / "other.pt") for a in argv]
             + ["--port", "0", "--no-browser"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error:"), err
    assert named in err, err


def test_the_cli_takes_the_new_flags():
    proc = subprocess.Popen([sys.executable, "-m", "highway_env.play", "--port", "0", "--no-browser",
                             "--allow-host", "box.lan", "--max-engines", "1", "--max-mcts-sims", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[3]
        host, port = url.split("/")[2].rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("POST", "/api/games", body=b'{"opponent": "mcts:101"}',
                     headers={"Content-Type": "application/json", "Host": "box.lan"})
        r = conn.getresponse()
        assert r.status == 400 and "limit of 100" in json.loads(r.read())["error"]
    finally:
        proc.terminate()
        proc.wait(10)


# ----------------------------------------------------------------------------- load

def _load(srv, clients: int, per_client: int) -> list[str]:
    """``clients`` threads, each POSTing ``per_client`` new games on fresh connections at once."""
    errors: list[str] = []
    start = threading.Barrier(clients)

    def client():
        start.wait()
        for _ in range(per_client):
            try:
                status, state = request(srv, "POST", "/api/games", {"opponent": "random", "seed": 1})
                if status != 201:
                    errors.append(f"status {status}: {state}")
            except Exception as e:  # noqa: BLE001  (a reset or a timeout is what this counts)
                errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


def test_100_concurrent_clients_lose_no_request():
    srv, _ = start_server(sessions=SessionManager(build=lambda spec, seed: FirstLegal()))
    try:
        t = time.monotonic()
        errors = _load(srv, clients=100, per_client=3)
        assert errors == [], (len(errors), errors[:5])
        assert time.monotonic() - t < 60
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.slow
def test_100_concurrent_clients_2000_requests_lose_none():
    srv, _ = start_server(sessions=SessionManager(build=lambda spec, seed: FirstLegal()))
    try:
        errors = _load(srv, clients=100, per_client=20)
        assert errors == [], (len(errors), errors[:5])
    finally:
        srv.shutdown()
        srv.server_close()


def test_bad_request_helpers_are_400():
    assert BadRequest.status == 400 and TooBusy.status == 429


@pytest.mark.parametrize("argv, named", [(["{blocker}/shot.png"], "a_file"), (["--seed", "-1"], "--seed")])
def test_screenshot_bad_output_or_seed_stops_before_the_browser(capsys, tmp_path, argv, named):
    """An output under a file failed after Chromium and a server had started."""
    from highway_env.play import screenshot

    (tmp_path / "a_file").write_text("")
    try:
        code = screenshot.main([a.format(blocker=tmp_path / "a_file") for a in argv])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and named in err, err
