"""Play Highway in the browser: ``python -m highway_env.play`` (or ``highway-play``).

A small standard-library web app: :mod:`.server` serves the page in ``static/`` and a JSON API,
:mod:`.session` keeps one game per id (board, history, undo, the opponent agent), :mod:`.hints`
asks the exact solver for the verdict and the value of every move, :mod:`.view` turns a board
into what the page draws (cheapest paths, bounds, result), :mod:`.opponents` builds the opponent
from an agent spec (the perfect player in a process of its own, :mod:`.agent_worker`).
:mod:`.screenshot` drives headless Chromium (tests, the README picture).
"""

from highway_env.play.server import PlayServer, start_server
from highway_env.play.session import PlayError, Session, SessionManager

__all__ = ["PlayServer", "start_server", "PlayError", "Session", "SessionManager"]
