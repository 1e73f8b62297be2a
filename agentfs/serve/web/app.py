"""The web view's routes (``agentfs serve web``): the pages of ``agentfs.serve.web.pages``
rendered with Jinja2, the actions (restore a version, restore a snapshot, apply or discard an
overlay change) unless the view is read-only, and ``/events``, a server-sent event each time
the workspace changes.

Every handler is ``async`` and calls the workspace on the event loop's thread, one at a time:
the workspace is one connection (Starlette would run a plain function in a thread pool).
Every request has passed the ``Host`` check and the browser session (``agentfs.serve.guard``);
every action also checks the form's CSRF field.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agentfs import overlay, sync
from agentfs.core import paths
from agentfs.core.errors import HistoryNotFoundError
from agentfs.serve.guard import BrowserSession, HostCheck, PageHeaders, csrf_token
from agentfs.serve.web import pages
from agentfs.workspace import Workspace

#: The stylesheet and the script, shipped in the package.
STATIC = Path(__file__).with_name("static")
#: The largest integer SQLite holds.
SQLITE_MAX_INT = (1 << 63) - 1
#: How often ``/events`` looks for another process's commits.
POLL_SECONDS = 0.5


class WebView:
    """The view of one workspace (see the module docstring)."""

    def __init__(self, ws: Workspace, token: str, *, read_only: bool) -> None:
        self.ws = ws
        self.read_only = read_only or ws.readonly
        self.csrf = csrf_token(token)
        #: The sync server the workspace syncs with, if any (its page is shown then).
        self.remote = sync.remote(ws.path)
        self.templates = Environment(
            loader=PackageLoader("agentfs.serve.web", "templates"),
            autoescape=select_autoescape(["html"]),
        )
        self.templates.globals.update(
            when=pages.when, size=pages.size, crumbs=pages.crumbs, join=paths.join
        )

    def routes(self) -> list[Route | Mount]:
        routes: list[Route | Mount] = [
            Route("/", self.home),
            Route("/tree{path:path}", self.tree),
            Route("/file{path:path}", self.file),
            Route("/diff{path:path}", self.diff),
            Route("/snapshots", self.snapshots),
            Route("/snapshot/{name:path}", self.snapshot),
            Route("/calls", self.calls),
            Route("/search", self.search),
            Route("/changes", self.changes),
            Route("/sync", self.sync_status),
            Route("/events", self.events),
            Route("/highlight.css", self.highlight_css),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]
        if not self.read_only:
            routes += [
                Route("/restore{path:path}", self.restore_version, methods=["POST"]),
                Route("/snapshot-restore/{name:path}", self.restore_snapshot, methods=["POST"]),
                Route("/changes/apply", self.apply, methods=["POST"]),
                Route("/changes/discard", self.discard, methods=["POST"]),
            ]
        return routes

    def render(self, name: str, request: Request, status: int = 200, **values: Any) -> HTMLResponse:
        template = self.templates.get_template(name)
        page = template.render(
            request=request,
            read_only=self.read_only,
            csrf=self.csrf,
            has_base=self.ws.base is not None,
            syncs=self.remote is not None,
            workspace=self.ws.path.name,
            **values,
        )
        return HTMLResponse(page, status)

    def failed(self, request: Request, exc: OSError | HistoryNotFoundError) -> HTMLResponse:
        status = 404 if getattr(exc, "errno", None) in (errno.ENOENT, errno.ENOTDIR) else 400
        if isinstance(exc, HistoryNotFoundError):
            status = 404
        return self.render("error.html", request, status, message=str(exc))

    # --- pages --------------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        with self.ws.read_transaction():
            recent = pages.calls(self.ws, tool=None, outcome=None, thread=None, before=None)[:20]
            snaps = self.ws.snapshots.list()[-10:][::-1]
            info = self.ws.info()
        return self.render("home.html", request, recent=recent, snapshots=snaps, info=info)

    async def tree(self, request: Request) -> Response:
        try:
            path = paths.normalize(request.path_params["path"] or "/")
            with self.ws.read_transaction():
                if not self.ws.stat(path).is_dir():
                    return RedirectResponse(f"/file{path}", 303)
                entries = pages.listing(self.ws, path)
        except OSError as exc:
            return self.failed(request, exc)
        return self.render("tree.html", request, path=path, entries=entries)

    async def file(self, request: Request) -> Response:
        try:
            path = paths.normalize(request.path_params["path"] or "/")
            with self.ws.read_transaction():
                if self.ws.stat(path).is_dir():
                    return RedirectResponse(f"/tree{path}", 303)
                view = pages.file_view(self.ws, path)
        except OSError as exc:
            return self.failed(request, exc)
        return self.render("file.html", request, view=view)

    async def diff(self, request: Request) -> Response:
        a, b = _number(request, "a"), _number(request, "b")
        try:
            path = paths.normalize(request.path_params["path"] or "/")
            with self.ws.read_transaction():
                history_path = self.ws.history_path(path)
                text = self.ws.diff(history_path, a, b)
                versions = self.ws.history(history_path)
        except (OSError, HistoryNotFoundError) as exc:
            return self.failed(request, exc)
        lines, cut = pages.diff_lines(text)
        return self.render(
            "diff.html", request, path=path, a=a, b=b, lines=lines, cut=cut, versions=versions
        )

    async def snapshots(self, request: Request) -> Response:
        with self.ws.read_transaction():
            found = self.ws.snapshots.list()
        by_thread: dict[str, list[Any]] = {}
        for snap in found:
            by_thread.setdefault(snap.thread or "(no thread)", []).append(snap)
        return self.render("snapshots.html", request, by_thread=by_thread)

    async def snapshot(self, request: Request) -> Response:
        name = request.path_params["name"]
        try:
            with self.ws.read_transaction():
                snap = self.ws.snapshots.get(name)
                same = [s for s in self.ws.snapshots.list(snap.thread) if s.id < snap.id]
                before = same[-1] if same else None
                against = request.query_params.get("against") or (before.name if before else None)
                # against the thread's snapshot before it; the first one against now
                snapshots = self.ws.snapshots
                changed = snapshots.diff(against, name) if against else snapshots.diff(name)
        except (OSError, HistoryNotFoundError) as exc:
            return self.failed(request, exc)
        return self.render(
            "snapshot.html", request, snap=snap, against=against, changed=changed.as_dict()
        )

    async def calls(self, request: Request) -> Response:
        query = request.query_params
        chosen = {k: query.get(k) or None for k in ("tool", "outcome", "thread")}
        with self.ws.read_transaction():
            rows = pages.calls(
                self.ws,
                before=_number(request, "before"),
                **chosen,  # type: ignore[arg-type]
            )
            threads, tools = pages.threads(self.ws), pages.tools_used(self.ws)
        return self.render(
            "calls.html", request, rows=rows, chosen=chosen, threads=threads, tools=tools
        )

    async def search(self, request: Request) -> Response:
        query = request.query_params
        q, kind = query.get("q", ""), query.get("kind", "search")
        hits: Any = None
        note = None
        if q:
            try:
                if kind == "grep":
                    hits = self.ws.grep(q, "/", max_results=200).lines
                else:
                    found = self.ws.search(q, top_k=20)
                    hits, note = found.hits, found.note
            except (OSError, ValueError) as exc:
                return self.render("search.html", request, q=q, kind=kind, error=str(exc))
        return self.render("search.html", request, q=q, kind=kind, hits=hits, note=note)

    async def changes(self, request: Request) -> Response:
        if self.ws.base is None:
            return self.render("error.html", request, 404, message="the workspace has no base")
        found = overlay.changes(self.ws)
        return self.render("changes.html", request, found=found, root=self.ws.base.root)

    async def sync_status(self, request: Request) -> Response:
        """The sync state: from the workspace alone, or asking the server (``?ask=1``)."""
        if self.remote is None:
            return self.render("error.html", request, 404, message="the workspace does not sync")
        ask = request.query_params.get("ask") == "1"
        try:
            state = sync.status(self.ws.path, offline=not ask)
        except sync.SyncError as exc:
            return self.render("error.html", request, 502, message=str(exc))
        return self.render("sync.html", request, state=state, asked=ask)

    async def highlight_css(self, request: Request) -> Response:
        return Response(pages.highlight_css(), media_type="text/css")

    async def events(self, request: Request) -> Response:
        """A server-sent event ``changed`` each time the workspace changes (another process
        commits, or an action here), polled every ``POLL_SECONDS``."""

        async def stream() -> AsyncIterator[str]:
            seen = self._state()
            yield "retry: 2000\n\n"
            while not await request.is_disconnected():
                await asyncio.sleep(POLL_SECONDS)
                now = self._state()
                if now != seen:
                    seen = now
                    yield "event: changed\ndata: {}\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    def _state(self) -> tuple[int, int]:
        """Moves with every commit: another connection's (SQLite's data_version) and this
        one's (its count of changed rows: an action here, or an agent's call through
        ``--mcp`` in the same process)."""
        conn = self.ws.conn
        return int(conn.execute("PRAGMA data_version").get), conn.total_changes()  # type: ignore[arg-type]

    # --- actions ------------------------------------------------------------------------------

    async def _form(self, request: Request) -> dict[str, str] | None:
        """The posted form, or None when its CSRF field is wrong."""
        form = await request.form()
        values = {k: str(v) for k, v in form.items()}
        if not hmac.compare_digest(values.get("csrf", ""), self.csrf):
            return None
        return values

    def _refused(self, request: Request) -> HTMLResponse:
        return self.render("error.html", request, 403, message="the form's CSRF field is wrong")

    async def restore_version(self, request: Request) -> Response:
        form = await self._form(request)
        if form is None:
            return self._refused(request)
        try:
            path = paths.normalize(request.path_params["path"])
            self.ws.restore_version(self.ws.history_path(path), int(form["n"]))
        except (OSError, HistoryNotFoundError, KeyError, ValueError) as exc:
            return self.render("error.html", request, 400, message=str(exc))
        return RedirectResponse(f"/file{path}", 303)

    async def restore_snapshot(self, request: Request) -> Response:
        if await self._form(request) is None:
            return self._refused(request)
        name = request.path_params["name"]
        try:
            self.ws.snapshots.restore(name)
        except (OSError, HistoryNotFoundError) as exc:
            return self.render("error.html", request, 400, message=str(exc))
        return RedirectResponse(f"/snapshot/{name}", 303)

    async def apply(self, request: Request) -> Response:
        return await self._overlay(request, discard=False)

    async def discard(self, request: Request) -> Response:
        return await self._overlay(request, discard=True)

    async def _overlay(self, request: Request, *, discard: bool) -> Response:
        form = await self._form(request)
        if form is None:
            return self._refused(request)
        try:
            path = paths.normalize(form.get("path", ""))
            done = overlay.apply(self.ws, [path], theirs=[path] if discard else [])
        except OSError as exc:
            return self.render("error.html", request, 400, message=str(exc))
        if done.conflicts:
            found = overlay.changes(self.ws)
            return self.render("changes.html", request, 409, found=found, conflicts=done.conflicts)
        return RedirectResponse("/changes", 303)


def _number(request: Request, key: str) -> int | None:
    """A number the query gives (a version, a call id), or None: not one, or past what
    SQLite's integers hold (then no row has it)."""
    value = request.query_params.get(key)
    if not value or not value.isascii() or not value.isdigit():
        return None
    return min(int(value), SQLITE_MAX_INT)


def new_token() -> str:
    """The random token of one run of the web view."""
    return secrets.token_urlsafe(24)


def web_app(
    ws: Workspace, token: str, names: frozenset[str], *, read_only: bool = False
) -> Starlette:
    """The web view of ``ws`` behind the ``Host`` check and the browser session."""
    view = WebView(ws, token, read_only=read_only)
    app = Starlette(routes=view.routes())
    app.add_middleware(BrowserSession, token=token)
    app.add_middleware(PageHeaders)
    app.add_middleware(HostCheck, names=names)  # the outermost: checked first
    return app
