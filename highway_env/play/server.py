"""The HTTP side: the page's static files and a small JSON API over :class:`SessionManager`.

    GET  /                          the page (static/index.html)
    GET  /static/<file>             app.js, style.css
    GET  /api/opponents             the opponent presets
    POST /api/games                 {"side": "A"|"B", "opponent": spec, "seed": int?} -> game state (201)
    GET  /api/games/<id>[?wait=S]   the game state; with wait, once the opponent has moved (S <= 30)
    POST /api/games/<id>/move       {"number": 1..16, "cell": 0..15} or {"action": 0..255}
    POST /api/games/<id>/undo       take back your last move and the opponent's reply
    POST /api/games/<id>/new        a new game; optional "side", "opponent", "seed"
    GET  /api/games/<id>/hint[?number=N]  the solver's verdict and the value of every move (N's first)

Errors are JSON ``{"error": message}`` with a 4xx status (400 malformed, 404 unknown, 409 not
possible now) and leave the game as it was. POST bodies must be ``application/json``: a foreign web
page cannot send that to localhost without a CORS preflight, which this server never grants.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from highway_env.play.hints import HintService
from highway_env.play.opponents import PRESETS
from highway_env.play.session import BadRequest, NotFound, PlayError, SessionManager, parse_action

MAX_BODY = 64 * 1024
MAX_WAIT = 30.0
STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}
_GAME_ROUTE = re.compile(r"^/api/games/([A-Za-z0-9_-]{1,64})(?:/(move|undo|new|hint))?$")


def _static_file(name: str) -> bytes | None:
    """A file shipped in highway_env/play/static (only plain names: no way out of the folder)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+\.[a-z]+", name):
        return None
    entry = resources.files("highway_env.play").joinpath("static", name)
    return entry.read_bytes() if entry.is_file() else None


class PlayHandler(BaseHTTPRequestHandler):
    server: "PlayServer"
    server_version = "HighwayPlay/1"
    protocol_version = "HTTP/1.1"

    # -- plumbing
    def log_message(self, format, *args):  # noqa: A002  (the base class's name)
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _body(self) -> dict:
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise PlayError("a POST needs a Content-Length header", HTTPStatus.LENGTH_REQUIRED)
        if int(length) > MAX_BODY:
            raise PlayError(f"request body of {length} bytes is too large (at most {MAX_BODY})",
                            HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        raw = self.rfile.read(int(length))
        if ctype != "application/json":
            raise PlayError(f"Content-Type must be application/json, got {ctype or 'none'!r}",
                            HTTPStatus.UNSUPPORTED_MEDIA_TYPE)
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as e:
            raise BadRequest(f"request body is not valid JSON ({e})") from None
        if not isinstance(body, dict):
            raise BadRequest(f"request body must be a JSON object, got {type(body).__name__}")
        return body

    def _dispatch(self, method: str) -> None:
        try:
            status, payload = self._route(method)
        except PlayError as e:
            status, payload = int(e.status), {"error": str(e)}
        except Exception as e:  # a bug: say so in JSON rather than drop the connection
            self.log_error("internal error: %r", e)
            status, payload = 500, {"error": f"internal error: {type(e).__name__}: {e}"}
        try:
            if isinstance(payload, tuple):  # a static file: (bytes, content type)
                self._send(status, *payload)
            else:
                self._json(status, payload)
        except ConnectionError:
            self.close_connection = True  # the page went away (closed tab, stopped long poll)

    def do_GET(self):
        self._dispatch("GET")

    def do_HEAD(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    # -- routes
    def _route(self, method: str):
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        games = self.server.sessions
        if method == "GET" and path in ("/", "/index.html"):
            return 200, (_static_file("index.html"), STATIC_TYPES[".html"])
        if method == "GET" and path.startswith("/static/"):
            name = path[len("/static/"):]
            data = _static_file(name)
            if data is None:
                raise NotFound(f"no static file {name!r}")
            return 200, (data, STATIC_TYPES.get("." + name.rsplit(".", 1)[-1], "application/octet-stream"))
        if path == "/api/opponents" and method == "GET":
            return 200, {"presets": list(PRESETS), "default": "greedy"}
        if path == "/api/games":
            self._need(method, "POST")
            body = self._body()
            session = games.create(body.get("side", "A"), body.get("opponent", "greedy"), body.get("seed"))
            return 201, session.state()
        m = _GAME_ROUTE.match(path)
        if m is None:
            raise NotFound(f"no such page or API route: {path!r}")
        game_id, action = m.groups()
        if action is None:
            self._need(method, "GET")
            session = games.get(game_id)
            wait = self._wait_seconds(query)
            return 200, session.wait(wait) if wait else session.state()
        if action == "hint":
            self._need(method, "GET")
            return 200, games.hint(game_id, self._number(query))
        self._need(method, "POST")
        session = games.get(game_id)  # unknown id: 404 before any complaint about the body
        body = self._body()
        if action == "move":
            return 200, session.play(parse_action(body))
        if action == "undo":
            return 200, session.undo()
        return 200, games.restart(game_id, body.get("side"), body.get("opponent"), body.get("seed"))

    @staticmethod
    def _need(method: str, allowed: str) -> None:
        if method != allowed:
            raise PlayError(f"method {method} not allowed here (use {allowed})", HTTPStatus.METHOD_NOT_ALLOWED)

    @staticmethod
    def _number(query) -> int | None:
        """The optional ``number`` of a hint request (its moves are solved first)."""
        if "number" not in query:
            return None
        text = query["number"][-1]
        if not text.isdigit() or not 1 <= int(text) <= 16:
            raise BadRequest(f"number must be in 1..16, got {text!r}")
        return int(text)

    @staticmethod
    def _wait_seconds(query) -> float:
        if "wait" not in query:
            return 0.0
        text = query["wait"][-1]
        try:
            wait = float(text)
        except ValueError:
            raise BadRequest(f"wait must be a number of seconds, got {text!r}") from None
        if not 0 <= wait <= MAX_WAIT:
            raise BadRequest(f"wait {text} is out of range 0..{MAX_WAIT:g} seconds")
        return wait


def _import_agents() -> None:
    """Import the agents and the solver in this thread, before any request or warm-up thread
    does: two threads importing the same package cycle at once can see it half initialised."""
    import agents  # noqa: F401
    import highway_env.az_game  # noqa: F401
    import highway_env.solver.player  # noqa: F401


class PlayServer(ThreadingHTTPServer):
    """The server; ``url`` is its address (with the real port when started on port 0)."""

    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", port: int = 8000, sessions: SessionManager | None = None,
                 hint_seconds: float = 5.0, verbose: bool = False):
        self.sessions = sessions if sessions is not None else SessionManager(HintService(hint_seconds))
        self.verbose = verbose
        if ":" in host:  # an IPv6 address such as ::1
            self.address_family = socket.AF_INET6
        super().__init__((host, port), PlayHandler)
        _import_agents()
        if self.sessions.hints is not None:  # load the book and the solver before the first hint
            threading.Thread(target=self.sessions.hints.warm_up, name="hint-warm-up", daemon=True).start()

    def server_close(self) -> None:
        super().server_close()
        self.sessions.close()  # stops the agents' processes

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{port}/"


def start_server(host: str = "127.0.0.1", port: int = 0, **kwargs) -> tuple[PlayServer, threading.Thread]:
    """A server answering in a background thread (tests, the screenshot); stop it with
    ``server.shutdown(); server.server_close()``."""
    server = PlayServer(host, port, **kwargs)
    thread = threading.Thread(target=server.serve_forever, name="highway-play", daemon=True)
    thread.start()
    return server, thread
