"""Listening for HTTP: the socket bound before the server starts, so that the URL printed
names the port really taken (port 0: one the system picks) and a client that connects at
once waits in the backlog, and uvicorn serving an ASGI application on it until interrupted."""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn
from starlette.types import ASGIApp

#: How long a stop waits for open requests and streams before it cuts them.
GRACE_SECONDS = 2


def listening(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # inherited by each connection: a response's headers and body go out at once, not held
    # back until the client acknowledges (Nagle's algorithm and delayed ACKs)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def base_url(sock: socket.socket) -> str:
    """``http://host:port`` of a listening socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def serve(app: ASGIApp, sock: socket.socket, started: Callable[[str], None] | None) -> None:
    """Serve ``app`` on ``sock`` until interrupted; ``started`` hears the base URL first."""
    # an open event stream (the web view's) would hold a graceful stop off for ever
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=GRACE_SECONDS
    )
    if started is not None:
        started(base_url(sock))
    uvicorn.Server(config).run(sockets=[sock])
