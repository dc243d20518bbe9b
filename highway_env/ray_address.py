"""Ray head addresses given on a command line (``--ray-address``): one where no head answers fails at
once, because Ray itself retries a wrong address for minutes before it gives up."""

from __future__ import annotations

import socket

from highway_env.core import HighwayError


def check_reachable(address: str, option: str = "--ray-address", timeout: float = 10.0) -> None:
    """HighwayError naming ``address`` unless it is 'local', 'auto' or a host:port that accepts a
    connection within ``timeout`` seconds."""
    if address in ("local", "auto"):
        return
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if host.startswith("[") and host.endswith("]"):  # an IPv6 head as Ray writes it, [::1]:6379
        host = host[1:-1]
    try:
        if not 0 < int(port) < 2**16:  # socket raises OverflowError past a C long, and wraps some others
            raise ValueError(f"port {port} is not in 1..65535")
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except (OSError, ValueError) as e:
        raise HighwayError(f"{option} {address!r}: no Ray head answers there ({e}); give the head's "
                           "host:port (ray start --head prints it), 'auto' or 'local'") from None
