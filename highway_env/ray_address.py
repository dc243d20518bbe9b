"""Ray head addresses given on a command line (``--ray-address``): one where no head answers fails at
once, because Ray itself retries a wrong address for minutes before it gives up."""

from __future__ import annotations

import contextlib
import os
import socket
import sys

from highway_env.core import HighwayError

#: how to give an address, the end of every message about a wrong one
_GIVE = ("give the head's host:port (ray start --head prints it; 6379 by default), 'auto' or 'local'")


def check_reachable(address: str, option: str = "--ray-address", timeout: float = 10.0) -> None:
    """HighwayError naming ``address`` unless it is 'local', 'auto' or a host:port that accepts a
    connection within ``timeout`` seconds."""
    if address in ("local", "auto"):
        return
    scheme, _, rest = address.rpartition("://")
    if scheme.lower() in ("http", "https"):  # the dashboard's, or the job API's, address: ray.init's ValueError
        raise HighwayError(f"{option} {address!r} is an HTTP address (the dashboard's or the job API's, for "
                           f"'ray job submit'); {_GIVE}")
    host, colon, port = rest.rpartition(":")
    if not colon and not port.isdigit():  # a host alone ('127.0.0.1'); a number alone is taken as a port
        raise HighwayError(f"{option} {address!r} has no port; {_GIVE}")
    if host.startswith("[") and host.endswith("]"):  # an IPv6 head as Ray writes it, [::1]:6379
        host = host[1:-1]
    try:
        if not 0 < int(port) < 2**16:  # socket raises OverflowError past a C long, and wraps some others
            raise ValueError(f"port {port} is not in 1..65535")
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except (OSError, ValueError) as e:
        raise HighwayError(f"{option} {address!r}: no Ray head answers there ({e}); {_GIVE}") from None


def check_ray_head(address: str, option: str = "--ray-address") -> None:
    """HighwayError naming ``address`` where a host:port that accepts connections (see
    :func:`check_reachable`) is no Ray head: another service, the dashboard's port, a worker node's
    port. Ray would retry it for minutes; a head's GCS answers at once, and anything else is told
    apart within about 15 s. 'local', 'auto' and Ray Client addresses (ray://) are left to Ray, as is every address
    where this Ray version has no GCS client to ask with."""
    if address in ("local", "auto") or "://" in address:
        return
    try:
        from ray._raylet import InnerGcsClient
    except ImportError:
        return
    try:
        with _stderr_silenced():  # Ray's C++ core logs each failed try there, lines of no use to the user
            InnerGcsClient.standalone(address, None, 5000)  # ms a try: a head across a slow link still answers
    except (TypeError, AttributeError):  # another Ray version's client, called otherwise: left to Ray
        return
    except Exception as e:  # Ray's RpcError: the GCS did not answer
        raise HighwayError(f"{option} {address!r}: something answers there, but no Ray head ({type(e).__name__}: "
                           f"{e}); {_GIVE}") from None


@contextlib.contextmanager
def _stderr_silenced():
    """File descriptor 2 goes to /dev/null meanwhile (code in C++ writes there, past sys.stderr)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
