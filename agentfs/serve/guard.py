"""What every HTTP request must pass before it reaches a workspace: a ``Host`` (and, from a
browser, an ``Origin``) this server answers to, and a bearer token of a known client.

The ``Host`` check is what stops DNS rebinding: a web page whose name the attacker points at
127.0.0.1 reaches a loopback server from the user's own browser, but its requests carry the
attacker's name as their ``Host``. The token stops everyone else: another local user, another
container on the host's network.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from urllib.parse import urlencode

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentfs.serve.clients import Clients, is_loopback

#: Where the client a request's token names is put in its ASGI scope (``scope["state"]``).
CLIENT = "agentfs_client"
#: Names a loopback server answers to, whatever its port.
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def host_names(bound: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names (without a port) a server bound to ``bound`` answers to: the loopback
    names on loopback, else ``bound`` itself; and ``extra`` (the name a reverse proxy uses)."""
    names = set(LOOPBACK) if is_loopback(bound) else {f"[{bound}]" if ":" in bound else bound}
    return frozenset(names | {name.lower() for name in extra})


def bearer_token(headers: Headers) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, if the request has one."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


class HostCheck:
    """ASGI middleware: 421 for a request whose ``Host`` is not one of ``names`` (any port),
    403 for one whose ``Origin`` names another host."""

    def __init__(self, app: ASGIApp, names: frozenset[str]) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = Headers(scope=scope)
            if not self._known(headers.get("host", "")):
                response = PlainTextResponse("this server does not answer to that Host", 421)
                return await response(scope, receive, send)
            origin = headers.get("origin")
            if origin is not None and not self._known(origin.split("://", 1)[-1]):
                response = PlainTextResponse("requests from another origin are refused", 403)
                return await response(scope, receive, send)
        await self.app(scope, receive, send)

    def _known(self, host: str) -> bool:
        name = host.lower()
        if name.startswith("["):
            name = name[: name.find("]") + 1]
        else:
            name = name.rsplit(":", 1)[0] if ":" in name else name
        return name in self.names


class BearerCheck:
    """ASGI middleware: 401 for a request without the token of a known client; the client it
    names goes in the scope (``CLIENT``)."""

    def __init__(self, app: ASGIApp, clients: Clients) -> None:
        self.app = app
        self.clients = clients

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            token = bearer_token(Headers(scope=scope))
            client = None if token is None else self.clients.find(token)
            if client is None:
                response = PlainTextResponse(
                    "a bearer token is required (Authorization: Bearer <token>)",
                    401,
                    headers={"WWW-Authenticate": 'Bearer realm="agentfs"'},
                )
                return await response(scope, receive, send)
            scope.setdefault("state", {})[CLIENT] = client
        await self.app(scope, receive, send)


#: The cookie a browser keeps the web view's token in.
COOKIE = "agentfs_web"


def csrf_token(token: str) -> str:
    """The value every form of the web view carries: derived from the token, so a page of
    another site, which never sees the token, cannot forge a change."""
    return hmac.new(token.encode(), b"agentfs-web-csrf", hashlib.sha256).hexdigest()


class BrowserSession:
    """ASGI middleware of the web view: the URL printed at start carries the token once
    (``?token=``); it is then kept in an HttpOnly, SameSite=Strict cookie and taken out of the
    address bar. Every request needs that cookie (or a bearer token); a POST also needs the
    form's ``csrf`` field (``csrf_token``), checked by the page that takes it."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        offered = request.query_params.get("token")
        if offered is not None and self._is(offered):
            query = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.path + (f"?{urlencode(query)}" if query else "")
            response: Response = RedirectResponse(target, 303)
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
            return await response(scope, receive, send)
        token = bearer_token(request.headers)
        if self._is(request.cookies.get(COOKIE, "")) or (token is not None and self._is(token)):
            return await self.app(scope, receive, send)
        response = PlainTextResponse(
            "open the URL `agentfs serve web` printed: it carries the token this view needs",
            401,
        )
        await response(scope, receive, send)

    def _is(self, value: str) -> bool:
        return hmac.compare_digest(value.encode(), self.token.encode())


#: What every page of the web view tells the browser: only its own scripts and styles, never
#: inside another site's frame, no address sent to another site, nothing kept in a cache.
PAGE_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; form-action 'self'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make a form's Origin "null"
    (b"cache-control", b"no-store"),
]


class PageHeaders:
    """ASGI middleware: ``PAGE_HEADERS`` on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *PAGE_HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)
