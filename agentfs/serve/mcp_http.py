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
import time
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentfs.serve.clients import Client, Clients
from agentfs.serve.guard import CLIENT, BearerCheck, HostCheck, host_names
from agentfs.serve.listen import listening, serve
from agentfs.tools.mcp_direct import DIRECT_VERSIONS, answer_call
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
#: Seconds a session may stay unused before it ends (the SDK's default).
SESSION_IDLE = 30 * 60
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
    actor, policy)`` on the session's first request. Sessions are keyed by the client and
    the session id together: a session id that another token's client presents is a new
    session of that client, with its own rights."""

    def __init__(
        self,
        make: Callable[[str, str | None, Policy], Toolset],
        defaults: Defaults,
        clients: Clients,
    ) -> None:
        self._make = make
        self._defaults = defaults
        self._bound = {c.thread: c for c in clients.clients if c.thread is not None}
        self._sessions: dict[tuple[str, str], Toolset] = {}
        #: Sessions opened through the SDK (their initialize answered), by client, with the
        #: time of their last request: the ones whose calls may be answered directly.
        self._opened: dict[tuple[str, str], float] = {}

    def of(self, ctx: ServerRequestContext[Any]) -> Toolset:
        request = ctx.request
        assert isinstance(request, Request)  # over HTTP, the transport attaches it
        client: Client = request.scope["state"][CLIENT]
        return self.session(client, request.headers.get("mcp-session-id"), request.headers)

    def session(self, client: Client, session: str | None, headers: Headers) -> Toolset:
        """The toolset of ``client``'s session ``session`` (None: a request without one)."""
        key = (client.token, session or "")
        found = self._sessions.get(key)
        if found is not None:
            return found
        self._forget_idle()
        toolset = self._make(
            self._thread(client, headers, session or client.name),
            client.actor or self._defaults.actor,
            client.policy or self._defaults.policy,
        )
        self._sessions[key] = toolset
        return toolset

    def _thread(self, client: Client, headers: Headers, session: str) -> str:
        if client.thread is not None:
            return client.thread
        named = headers.get(THREAD_HEADER)
        if named is not None:
            if not _THREAD.fullmatch(named):
                raise ThreadRefused(f"{THREAD_HEADER}: not a thread name: {named[:64]!r}")
            owner = self._bound.get(named)
            if owner is not None and owner is not client:
                raise ThreadRefused(f"thread {named!r} is bound to another client's token")
            return named
        if self._defaults.thread is not None:
            return self._defaults.thread
        return "http-" + session[:8]

    def _forget_idle(self) -> None:
        """Drop the sessions unused for ``SESSION_IDLE`` seconds (the SDK has ended them: a
        client that comes back opens a new one), writing their waiting audit rows first."""
        now = time.monotonic()
        for key in [k for k, last in self._opened.items() if now - last > SESSION_IDLE]:
            del self._opened[key]
            toolset = self._sessions.pop(key, None)
            if toolset is not None:
                toolset.flush()

    def opened(self, client: Client, session: str) -> None:
        self._opened[(client.token, session)] = time.monotonic()

    def closed(self, client: Client, session: str) -> None:
        self._opened.pop((client.token, session), None)
        toolset = self._sessions.pop((client.token, session), None)
        if toolset is not None:
            toolset.flush()

    def is_open(self, client: Client, session: str) -> bool:
        """Did ``client`` open ``session``, and use it within ``SESSION_IDLE`` seconds?"""
        key = (client.token, session)
        last = self._opened.get(key)
        if last is None or time.monotonic() - last > SESSION_IDLE:
            return False
        self._opened[key] = time.monotonic()
        return True

    def all(self) -> list[Toolset]:
        return list(self._sessions.values())


class DirectPosts:
    """ASGI middleware in front of the SDK: a POST holding one plain ``tools/call`` of a
    session its client opened, on a protocol version the direct path knows
    (``agentfs.tools.mcp_direct``), is answered here with ``application/json`` (a Streamable
    HTTP server may answer any POST so); the SDK's per-request pipeline was most of a small
    call's time. Everything else goes to the SDK, the body replayed, and the sessions the SDK
    opens and closes are noted on the way."""

    def __init__(self, app: ASGIApp, server: McpServer, toolsets: SessionToolsets) -> None:
        self.app = app
        self.server = server
        self.toolsets = toolsets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = Headers(scope=scope)
        client: Client = scope["state"][CLIENT]
        session = headers.get("mcp-session-id")
        if scope["method"] == "DELETE" and session is not None:
            self.toolsets.closed(client, session)
        direct = (
            scope["method"] == "POST"
            and session is not None
            and headers.get("mcp-protocol-version") in DIRECT_VERSIONS
            and "application/json" in headers.get("accept", "")
            and self.toolsets.is_open(client, session)
        )
        if direct:
            assert session is not None
            body = await _body(receive, MAX_BODY)
            if body is None:  # too long, or the client went away
                response = Response("the request body is too long", 413)
                return await response(scope, receive, send)
            answer = None
            with contextlib.suppress(ThreadRefused):  # the SDK's path says why, as an error
                toolset = self.toolsets.session(client, session, headers)
                answer = answer_call(
                    body.decode("utf-8", errors="replace"),
                    lambda params: self.server.answer_directly(params, toolset),
                )
            if answer is not None:
                response = Response(
                    answer, media_type="application/json", headers={"mcp-session-id": session}
                )
                return await response(scope, receive, send)
            receive = _replay(body, receive)
        await self.app(scope, receive, self._noting(client, send))

    def _noting(self, client: Client, send: Send) -> Send:
        """``send``, noting the session id an SDK response gives the client."""

        async def noted(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 300:
                for name, value in message.get("headers", []):
                    if name.lower() == b"mcp-session-id":
                        self.toolsets.opened(client, value.decode("latin-1"))
            await send(message)

        return noted


async def _body(receive: Receive, limit: int) -> bytes | None:
    """The request's body, or None when it is longer than ``limit`` or the client left."""
    parts = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            return None
        if not message.get("more_body", False):
            return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` first, then the rest of the request's messages."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def app(
    server: McpServer,
    toolsets: SessionToolsets,
    clients: Clients,
    names: frozenset[str],
    *,
    beside: ASGIApp | None = None,
) -> Starlette:
    """The ASGI application: the ``Host`` check, then at ``ENDPOINT`` the bearer token, the
    direct calls and the protocol; every other path goes to ``beside`` (the web view, which
    checks its own session) if given."""
    manager = StreamableHTTPSessionManager(
        server.server, max_request_body_size=MAX_BODY, session_idle_timeout=SESSION_IDLE
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as tasks:
            tasks.start_soon(server.flush_when_idle)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
                server.flush()

    protocol = DirectPosts(StreamableHTTPASGIApp(manager), server, toolsets)
    routes: list[Route | Mount] = [Route(ENDPOINT, endpoint=BearerCheck(protocol, clients))]
    if beside is not None:
        routes.append(Mount("/", app=beside))
    outer = Starlette(routes=routes, lifespan=lifespan)
    outer.add_middleware(HostCheck, names=names)  # the outermost: checked first
    return outer


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
    beside: ASGIApp | None = None,
) -> None:
    """Serve until interrupted (blocking). ``make`` builds a client session's toolset;
    ``started`` hears the base URL once the socket listens (port 0: one the system picks;
    the protocol is at that URL and ``ENDPOINT``); with
    ``sync_on_snapshot`` a push follows each snapshot (the last one waited for at the end);
    ``beside`` serves every other path (``app``)."""
    host, port = address
    toolsets = SessionToolsets(make, defaults, clients)
    first = make(defaults.thread or "main", defaults.actor, defaults.policy)
    pusher = Pusher(first.ws.path) if sync_on_snapshot else None
    with ExitStack() as stack:
        sock = stack.enter_context(listening(host, port))
        ws = first.ws
        if not ws.readonly and ws.embedder() is not None:
            stack.enter_context(ws.embed_in_background())
        server = McpServer(
            first, pusher=pusher, direct=False, instructions=instructions, toolsets=toolsets
        )
        names = host_names(host, allowed_hosts)
        serve(app(server, toolsets, clients, names, beside=beside), sock, started)
    if pusher is not None:
        pusher.wait()
