"""Play Highway in the browser: ``python -m highway_env.play`` (or ``highway-play``); a small
standard-library web app (see :mod:`.server` for the API, :mod:`.session` for the game rules).
"""

from highway_env.play.server import PlayServer, start_server
from highway_env.play.session import PlayError, Session, SessionManager

__all__ = ["PlayServer", "start_server", "PlayError", "Session", "SessionManager"]
