"""The agent tools over MCP's Streamable HTTP transport (``agentfs serve mcp --http``).

The SDK's session manager serves the protocol at ``/mcp``; in front of it every request passes
the ``Host`` check and the bearer token (``agentfs.serve.guard``). Each client session gets a
toolset of its own, so its calls are tracked in its own thread: the thread its token is bound
to, else the one it names in the ``Agentfs-Thread`` header, else the server's ``--thread``,
else one of its own (``http-`` and the start of its session id). A token's actor and policy
replace the server's. Calls run one at a time on the event loop's thread, as over stdio (the
workspace is one connection).
"""

from __future__ import annotations

import contextlib
import re
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from agentfs.serve.clients import Client, Clients
from agentfs.serve.guard import CLIENT, BearerCheck, HostCheck, host_names
from agentfs.tools.mcp_server import McpServer
from agentfs.tools.policy import Policy
from agentfs.tools.pusher import Pusher
from agentfs.tools.toolset import Toolset

#: The header a client names its thread in (a thread bound to its token wins).
THREAD_HEADER = "agentfs-thread"
#: What a thread named in the header may look like.
_THREAD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}")
#: The path the protocol is served at.
ENDPOINT = "/mcp"
#: The largest request body (a write_file call carries the whole file): the SDK's 4 MiB is
#: less than a file an agent may write over stdio.
MAX_BODY = 64 << 20


class ThreadRefused(PermissionError):
    """A client named a thread it may not work in."""


@dataclass(frozen=True)
class Defaults:
    """What the server was started with, for clients whose token binds nothing."""

    thread: str | None
    actor: str | None
    policy: Policy


class SessionToolsets:
    """A toolset per client session (see the module docstring), made by ``make(thread,
    actor, policy)`` on the session's first request."""

    def __init__(
        self,
        make: Callable[[str, str | None, Policy], Toolset],
        defaults: Defaults,
        clients: Clients,
    ) -> None:
        self._make = make
        self._defaults = defaults
        self._bound = {c.thread: c for c in clients.clients if c.thread is not None}
        self._sessions: dict[str, Toolset] = {}

    def of(self, ctx: ServerRequestContext[Any]) -> Toolset:
        request = ctx.request
        assert isinstance(request, Request)  # over HTTP, the transport attaches it
        client: Client = request.scope["state"][CLIENT]
        session = request.headers.get("mcp-session-id") or f"token:{client.name}"
        found = self._sessions.get(session)
        if found is not None:
            return found
        toolset = self._make(
            self._thread(client, request, session),
            client.actor or self._defaults.actor,
            client.policy or self._defaults.policy,
        )
        self._sessions[session] = toolset
        return toolset

    def _thread(self, client: Client, request: Request, session: str) -> str:
        if client.thread is not None:
            return client.thread
        named = request.headers.get(THREAD_HEADER)
        if named is not None:
            if not _THREAD.fullmatch(named):
                raise ThreadRefused(f"{THREAD_HEADER}: not a thread name: {named[:64]!r}")
            owner = self._bound.get(named)
            if owner is not None and owner is not client:
                raise ThreadRefused(f"thread {named!r} is bound to another client's token")
            return named
        if self._defaults.thread is not None:
            return self._defaults.thread
        return "http-" + session.removeprefix("token:")[:8]

    def all(self) -> list[Toolset]:
        return list(self._sessions.values())

    def forget(self, session: str) -> Toolset | None:
        return self._sessions.pop(session, None)


def app(server: McpServer, clients: Clients, names: frozenset[str]) -> Starlette:
    """The ASGI application: the guard, then the protocol at ``ENDPOINT``."""
    manager = StreamableHTTPSessionManager(server.server, max_request_body_size=MAX_BODY)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(server.flush_when_idle)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
                server.flush()

    endpoint = Route(ENDPOINT, endpoint=StreamableHTTPASGIApp(manager))  # no redirect to /mcp/
    inner = Starlette(routes=[endpoint], lifespan=lifespan)
    inner.add_middleware(BearerCheck, clients=clients)
    inner.add_middleware(HostCheck, names=names)  # the outermost: checked first
    return inner


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (an IPv6 host in brackets: ``[::1]:8765``) as (host, port)."""
    host, colon, port = text.rpartition(":")
    host = host.strip("[]") if host.startswith("[") else host
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"not HOST:PORT: {text!r} (e.g. 127.0.0.1:8765, [::1]:8765)")
    return host, int(port)


def serve_http(
    make: Callable[[str, str | None, Policy], Toolset],
    defaults: Defaults,
    clients: Clients,
    address: tuple[str, int],
    *,
    allowed_hosts: tuple[str, ...] = (),
    instructions: str | None = None,
    sync_on_snapshot: bool = False,
    started: Callable[[str], None] | None = None,
) -> None:
    """Serve until interrupted (blocking). ``make`` builds a client session's toolset;
    ``started`` hears the URL once the socket listens (port 0: one the system picks); with
    ``sync_on_snapshot`` a push follows each snapshot (the last one waited for at the end)."""
    host, port = address
    toolsets = SessionToolsets(make, defaults, clients)
    first = make(defaults.thread or "main", defaults.actor, defaults.policy)
    pusher = Pusher(first.ws.path) if sync_on_snapshot else None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with ExitStack() as stack:
        sock = stack.enter_context(socket.socket(family, socket.SOCK_STREAM))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)  # a client that connects at once waits in the backlog
        ws = first.ws
        if not ws.readonly and ws.embedder() is not None:
            stack.enter_context(ws.embed_in_background())
        server = McpServer(
            first, pusher=pusher, direct=False, instructions=instructions, toolsets=toolsets
        )
        asgi = app(server, clients, host_names(host, allowed_hosts))
        config = uvicorn.Config(asgi, log_level="warning", lifespan="on")
        if started is not None:
            bound_host, bound_port = sock.getsockname()[:2]
            shown = f"[{bound_host}]" if ":" in bound_host else bound_host
            started(f"http://{shown}:{bound_port}{ENDPOINT}")
        uvicorn.Server(config).run(sockets=[sock])
    if pusher is not None:
        pusher.wait()
