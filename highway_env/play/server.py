"""The HTTP side: the page's static files and a small JSON API over :class:`SessionManager`.

    GET  /                          the page (static/index.html)
    GET  /static/<file>             app.js, style.css
    GET  /api/opponents             the opponent presets
    POST /api/games                 {"side": "A"|"B", "opponent": spec, "seed": int?} -> game state (201)
    GET  /api/games/<id>[?wait=S]   the game state; with wait, once the opponent has moved (S <= 30)
    POST /api/games/<id>/move       {"number": 1..16, "cell": 0..15} or {"action": 0..255}
    POST /api/games/<id>/undo       take back your last move and the opponent's reply
    POST /api/games/<id>/new        a new game; optional "side", "opponent", "seed"
    DELETE /api/games/<id>          end the game (its opponent's search stops)
    GET  /api/games/<id>/hint[?number=N]  the solver's verdict and the value of every move (N's first)

Errors are JSON ``{"error": message}`` with a 4xx status (400 malformed, 403 foreign host, 404
unknown, 409 not possible now, 429 every engine busy) and leave the game as it was. POST bodies
must be ``application/json``: a foreign web page cannot send that to localhost without a CORS
preflight, which this server never grants. Requests whose ``Host`` (or ``Origin``) is not a name
of this server get 403, so a DNS-rebinding page cannot reach the API either.

Each connection reads its whole request body or is closed, so an unread body can never be taken
for the next request; a connection stalled for ``socket_timeout`` seconds is closed.
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
from highway_env.play.limits import ServerLimits
from highway_env.play.opponents import offered_presets
from highway_env.play.session import (DEFAULT_OPPONENT, BadRequest, NotFound, PlayError, SessionManager,
                                      parse_action)

MAX_BODY = 64 * 1024
MAX_WAIT = 30.0
#: Seconds a connection may stall (reading a request, writing a reply) before it is closed.
SOCKET_TIMEOUT = 30.0
#: Connections served at once; more wait in the listen queue (each holds a thread).
MAX_CONNECTIONS = 256
#: Pending connections the kernel queues before refusing (the stdlib default, 5, refuses bursts).
LISTEN_BACKLOG = 1024
#: Names every server answers to; the bound address and ``allow_hosts`` are added.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}
_GAME_ROUTE = re.compile(r"^/api/games/([A-Za-z0-9_-]{1,64})(?:/(move|undo|new|hint))?$")


def _static_file(name: str) -> tuple[bytes, str]:
    """A file of highway_env/play/static and its type (plain names only: no way out of the folder)."""
    if re.fullmatch(r"[A-Za-z0-9_-]+\.[a-z]+", name):
        entry = resources.files("highway_env.play").joinpath("static", name)
        if entry.is_file():
            return entry.read_bytes(), STATIC_TYPES.get(name[name.index("."):], "application/octet-stream")
    raise NotFound(f"no static file {name!r}")


def host_name(value: str) -> str:
    """The host name of a ``Host`` header value (``name``, ``name:port``, ``[v6]:port``), lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        value = value.split(":")[0]
    return value.rstrip(".")


def _origin_host(origin: str) -> str:
    """The host name of an ``Origin`` header value; '' when it has none or cannot be parsed
    (``http://[::1`` makes urlsplit raise)."""
    try:
        return urlsplit(origin.strip()).hostname or ""
    except ValueError:
        return ""


def _no_constants(name: str):
    raise ValueError(f"{name} is not a JSON value")


class PlayHandler(BaseHTTPRequestHandler):
    server: "PlayServer"
    server_version = "HighwayPlay/1"
    protocol_version = "HTTP/1.1"

    # -- plumbing
    def setup(self) -> None:
        self.timeout = self.server.socket_timeout  # StreamRequestHandler sets it on the socket
        super().setup()

    def log_message(self, format, *args):  # noqa: A002  (the base class's name)
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if status == HTTPStatus.METHOD_NOT_ALLOWED and self._allow:
            self.send_header("Allow", self._allow)
        if self._pending:  # a body we cannot drain: no request may follow it
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body_length(self) -> int:
        """The declared body length (0 when none); a body that cannot be delimited closes the
        connection after the reply."""
        if self.headers.get("Transfer-Encoding") is not None:
            self._pending = -1
            raise PlayError("chunked request bodies are not supported: send a Content-Length",
                            HTTPStatus.LENGTH_REQUIRED)
        lengths = self.headers.get_all("Content-Length", [])
        if not lengths:
            return 0
        if len(lengths) > 1:  # which one delimits the body? neither: the next request could hide in it
            self._pending = -1
            raise BadRequest(f"a request needs one Content-Length header, got {len(lengths)}: {lengths[:4]!r}")
        length = lengths[0]
        # ASCII digits only: str.isdigit() takes '\xb9' ('1' superscript), which int() then refuses
        if not re.fullmatch(r"[0-9]{1,12}", length.strip()):
            self._pending = -1
            raise BadRequest(f"Content-Length must be a number of bytes, got {length[:40]!r}")
        return int(length)

    def _body(self) -> dict:
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if self.headers.get("Content-Length") is None:  # (a Transfer-Encoding was refused already)
            raise PlayError("a POST needs a Content-Length header", HTTPStatus.LENGTH_REQUIRED)
        length = self._pending
        if length > MAX_BODY:
            raise PlayError(f"request body of {length} bytes is too large (at most {MAX_BODY})",
                            HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        # -1 while reading: after a read that times out the socket reads nothing more, so
        # _finish_body must not try again (an OSError, answered as an internal error)
        self._pending = -1
        raw = self.rfile.read(length)
        if len(raw) < length:
            raise ConnectionError("the client closed the connection in the middle of its body")
        self._pending = 0
        if ctype != "application/json":
            raise PlayError(f"Content-Type must be application/json, got {ctype or 'none'!r}",
                            HTTPStatus.UNSUPPORTED_MEDIA_TYPE)
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw, parse_constant=_no_constants)
        except RecursionError:
            raise BadRequest("request body is nested too deeply to be a request") from None
        except (UnicodeDecodeError, ValueError) as e:
            raise BadRequest(f"request body is not valid JSON ({str(e)[:200]})") from None
        if not isinstance(body, dict):
            raise BadRequest(f"request body must be a JSON object, got {type(body).__name__}")
        return body

    def _check_host(self) -> None:
        """403 unless ``Host`` (and ``Origin``, when sent) names this server (see the module docstring)."""
        host = self.headers.get("Host")
        if host is None:
            raise PlayError("a request needs a Host header", HTTPStatus.FORBIDDEN)
        allowed = self.server.allowed_hosts
        if host_name(host) not in allowed:
            raise PlayError(f"host {host[:100]!r} is not a name of this server (start it with "
                            "--allow-host NAME to answer to that name)", HTTPStatus.FORBIDDEN)
        origin = self.headers.get("Origin")
        if origin is not None and _origin_host(origin) not in allowed:
            raise PlayError(f"origin {origin[:100]!r} is not this server (start it with --allow-host "
                            "NAME to accept requests from pages at that name)", HTTPStatus.FORBIDDEN)

    def _finish_body(self) -> None:
        """Read what is left of the body (see the module docstring), or close the connection."""
        if 0 < self._pending <= MAX_BODY:
            self.rfile.read(self._pending)
            self._pending = 0
        if self._pending:  # -1 (no length) or too large to read
            self.close_connection = True

    def _dispatch(self) -> None:
        """Every method's handler (HEAD is GET without the body; others are answered 405, their
        body read or the connection closed)."""
        method = "GET" if self.command == "HEAD" else self.command
        self._pending = 0  # body bytes left to read; -1 when it cannot be delimited
        self._allow = ""  # the methods a 405 names
        try:
            try:
                self._pending = self._body_length()
                self._check_host()
                status, payload = self._route(method)
            finally:
                self._finish_body()
        except PlayError as e:
            status, payload = int(e.status), {"error": str(e)}
        except (TimeoutError, ConnectionError) as e:  # a stalled or vanished client
            self.close_connection = True
            self.log_error("connection dropped: %r", e)
            return
        except Exception as e:  # a bug: say so in JSON rather than drop the connection
            self.log_error("internal error: %r", e)
            status, payload = 500, {"error": f"internal error: {type(e).__name__}: {e}"}
        try:
            if isinstance(payload, tuple):  # a static file: (bytes, content type)
                self._send(status, *payload)
            else:
                self._send(status, json.dumps(payload).encode(), "application/json")
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the page went away (closed tab, stopped long poll)

    do_GET = do_HEAD = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = _dispatch

    # -- routes
    def _route(self, method: str):
        try:
            url = urlsplit(self.path)
        except ValueError:  # an absolute URL with a broken host: "http://[::1/"
            raise BadRequest(f"the request target {self.path[:100]!r} is not a URL path") from None
        path, query = url.path, parse_qs(url.query)
        games = self.server.sessions
        if path in ("/", "/index.html", "/api/opponents") or path.startswith("/static/"):
            self._need(method, "GET")
        if path in ("/", "/index.html"):
            return 200, _static_file("index.html")
        if path.startswith("/static/"):
            return 200, _static_file(path[len("/static/"):])
        if path == "/api/opponents":
            return 200, {"presets": offered_presets(games.limits.checkpoints), "default": DEFAULT_OPPONENT}
        if path == "/api/games":
            self._need(method, "POST")
            body = self._body()
            session = games.create(body.get("side", "A"), body.get("opponent", DEFAULT_OPPONENT),
                                   body.get("seed"))
            return 201, session.state()
        m = _GAME_ROUTE.match(path)
        if m is None:
            raise NotFound(f"no such page or API route: {path!r}")
        game_id, action = m.groups()
        if action is None:
            self._need(method, "GET", "DELETE")
            if method == "DELETE":
                return 200, games.delete(game_id)
            session = games.get(game_id)  # unknown id: 404 before any complaint about the query
            return 200, session.wait(self._wait_seconds(query))  # wait 0: the state now
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

    def _need(self, method: str, *allowed: str) -> None:
        """405 unless ``method`` is one of ``allowed``; the reply's Allow header lists them (HEAD too
        where GET is allowed), as HTTP requires of a 405."""
        if method not in allowed:
            self._allow = ", ".join(allowed + (("HEAD",) if "GET" in allowed else ()))
            raise PlayError(f"method {method} not allowed here (use {' or '.join(allowed)})",
                            HTTPStatus.METHOD_NOT_ALLOWED)

    @staticmethod
    def _number(query) -> int | None:
        """The optional ``number`` of a hint request (its moves are solved first)."""
        if "number" not in query:
            return None
        text = query["number"][-1]
        if not text.isdecimal() or not 1 <= int(text) <= 16:  # isdigit takes '\xb9', which int() refuses
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


class PlayServer(ThreadingHTTPServer):
    """The server; ``url`` is its address (with the real port when started on port 0).

    ``allow_hosts``: names besides localhost and the bound address that requests may use (a LAN
    name when serving on 0.0.0.0). ``limits``: search sizes, engine processes and checkpoints a
    request may ask for (used when ``sessions`` is not given)."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, host: str = "127.0.0.1", port: int = 8000, sessions: SessionManager | None = None,
                 hint_seconds: float = 5.0, verbose: bool = False, allow_hosts=(),
                 limits: ServerLimits | None = None, socket_timeout: float = SOCKET_TIMEOUT):
        self.sessions = sessions if sessions is not None else SessionManager(HintService(hint_seconds),
                                                                             limits=limits)
        self.verbose = verbose
        self.socket_timeout = socket_timeout
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        names = {*LOCAL_HOSTS, *(host_name(h) for h in allow_hosts)}
        if host not in ("", "0.0.0.0", "::"):
            names.add(host_name(f"[{host}]" if ":" in host else host))
        self.allowed_hosts = frozenset(names)
        if ":" in host:  # an IPv6 address such as ::1
            self.address_family = socket.AF_INET6
        super().__init__((host, port), PlayHandler)
        # imported in this thread before any request or warm-up thread does: two threads importing
        # the same package cycle at once can see it half initialised
        import agents  # noqa: F401
        import highway_env.az_game  # noqa: F401
        import highway_env.solver.player  # noqa: F401

        if self.sessions.hints is not None:  # load the book and the solver before the first hint
            threading.Thread(target=self.sessions.hints.warm_up, name="hint-warm-up", daemon=True).start()

    def process_request(self, request, client_address):
        """One thread a connection, at most :data:`MAX_CONNECTIONS` at once: beyond that the accept
        loop waits and new connections queue in the listen backlog instead of being refused."""
        self._slots.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

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
