"""What each page of the web view shows, read from the workspace: plain data for the templates
(``agentfs.serve.web.app`` routes and renders them). Each page reads in one transaction, so it
shows one state of the workspace even while an agent writes."""

from __future__ import annotations

import hashlib
import json
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, guess_lexer_for_filename
from pygments.util import ClassNotFound

from agentfs.core import paths
from agentfs.history.versions import Version
from agentfs.workspace import Workspace

#: The most bytes of a file the page shows (the rest is described).
SHOWN_BYTES = 1 << 20
#: The most bytes of text highlighted by their language (more is shown plain).
HIGHLIGHTED_BYTES = 128 << 10
#: Rows of the tool-call log per page.
CALLS_PER_PAGE = 100
#: Lines of a diff shown before the rest is cut.
DIFF_LINES = 5000
_FORMATTER = HtmlFormatter(linenos="table", anchorlinenos=True, lineanchors="L", wrapcode=True)


def when(ns: int | None) -> str:
    """A time for people: UTC, to the second."""
    if ns is None:
        return ""
    return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def crumbs(path: str) -> list[tuple[str, str]]:
    """(name, path) of each directory on the way to ``path``, the root first."""
    out = [("/", "/")]
    parts = [p for p in path.split("/") if p]
    for i, name in enumerate(parts):
        out.append((name, "/" + "/".join(parts[: i + 1])))
    return out


@dataclass
class Entry:
    name: str
    path: str
    kind: str
    size: int
    mtime: str


def listing(ws: Workspace, path: str) -> list[Entry]:
    """A directory's entries, directories first."""
    entries = []
    for name, st in ws.readdir_plus(path):
        mode = st.st_mode
        kind = "dir" if stat.S_ISDIR(mode) else "link" if stat.S_ISLNK(mode) else "file"
        entries.append(Entry(name, paths.join(path, name), kind, st.st_size, when(st.st_mtime_ns)))
    entries.sort(key=lambda e: (e.kind != "dir", e.name))
    return entries


@dataclass
class FileView:
    path: str
    size: int
    mtime: str
    text_html: str | None  # highlighted, when the file is text
    described: str | None  # what is shown instead of binary bytes, or why the text is cut
    versions: list[Version] = field(default_factory=list)
    writers: dict[int, int] = field(default_factory=dict)  # version -> tool call id


def file_view(ws: Workspace, path: str) -> FileView:
    st = ws.stat(path)
    data = ws.read(path, 0, SHOWN_BYTES, track=False)
    text_html = described = None
    try:
        text = data.decode("utf-8")
        if "\0" in text:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL")
    except UnicodeDecodeError:
        with ws.open(path, "rb") as f:  # in pieces: a binary file may be gigabytes
            digest = hashlib.file_digest(f, "sha256").hexdigest()  # type: ignore[arg-type]
        described = f"binary: {size(st.st_size)}, SHA-256 {digest}"
    else:
        # a language's lexer costs about 2 s a MiB, on the thread every request shares
        lexer = _lexer(path, text) if len(data) <= HIGHLIGHTED_BYTES else TextLexer()
        text_html = highlight(text, lexer, _FORMATTER)
        notes = []
        if st.st_size > SHOWN_BYTES:
            notes.append(f"the first {SHOWN_BYTES:,} of {st.st_size:,} bytes")
        if len(data) > HIGHLIGHTED_BYTES:
            notes.append(f"not highlighted (over {size(HIGHLIGHTED_BYTES)})")
        described = "; ".join(notes) or None
    history_path = ws.history_path(path)
    versions = ws.history(history_path)
    writers = {
        int(n): int(call_id)
        for n, call_id in ws.conn.execute(
            "SELECT n, call_id FROM ws_tool_write WHERE path = ?", (history_path,)
        )
    }
    return FileView(path, st.st_size, when(st.st_mtime_ns), text_html, described, versions, writers)


def _lexer(path: str, text: str) -> Any:
    try:
        return guess_lexer_for_filename(path, text[:4096])
    except ClassNotFound:
        return TextLexer()


def highlight_css() -> str:
    return _FORMATTER.get_style_defs(".highlight")


@dataclass
class DiffLine:
    kind: str  # "add", "del", "hunk", "head" or "same"
    text: str


def diff_lines(diff: str) -> tuple[list[DiffLine], bool]:
    """A unified diff as classed lines (and whether it was cut at ``DIFF_LINES``)."""
    out = []
    lines = diff.splitlines()
    for line in lines[:DIFF_LINES]:
        if line.startswith(("+++", "---")):
            kind = "head"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        out.append(DiffLine(kind, line))
    return out, len(lines) > DIFF_LINES


@dataclass
class CallRow:
    id: int
    name: str
    started: str
    duration_ms: int
    outcome: str
    parameters: str
    result: str
    writes: list[tuple[str, int]]
    threads: list[str]


def calls(
    ws: Workspace, *, tool: str | None, outcome: str | None, thread: str | None, before: int | None
) -> list[CallRow]:
    """The tool-call log, newest first, with the versions each call wrote; filtered by tool,
    outcome ("ok" or "error") and thread, ``CALLS_PER_PAGE`` of them from call id ``before``
    down. A call's thread is the one it was made in (``ws_tool_call_who``); for a call logged
    before that was kept, the thread of the versions it wrote."""
    conn = ws.conn
    rows: list[tuple[Any, ...]] = conn.execute(
        "SELECT t.id, t.name, t.parameters, t.result, t.error, t.started_at, t.duration_ms,"
        " w.thread FROM tool_calls t LEFT JOIN ws_tool_call_who w ON w.call_id = t.id"
        " WHERE (?1 IS NULL OR t.name = ?1)"
        " AND (?2 IS NULL OR (?2 = 'error') = (t.error IS NOT NULL))"
        " AND (?3 IS NULL OR t.id < ?3) AND (?4 IS NULL OR w.thread = ?4 OR (w.call_id IS NULL"
        " AND EXISTS (SELECT 1 FROM ws_tool_write x JOIN ws_version v ON v.path = x.path"
        " AND v.n = x.n WHERE x.call_id = t.id AND v.thread = ?4)))"
        " ORDER BY t.id DESC LIMIT ?5",
        (tool, outcome, before, thread, CALLS_PER_PAGE),
    ).fetchall()
    writes = ws.tool_calls.writes_of(int(r[0]) for r in rows)
    older = _threads_of(ws, [int(r[0]) for r in rows if r[7] is None])
    out = []
    for id_, name, params, result, error, started, duration, made_in in rows:
        out.append(
            CallRow(
                int(id_),
                str(name),
                when(int(started) * 1_000_000_000),
                int(duration or 0),
                "error" if error is not None else "ok",
                _short(params),
                _short(error if error is not None else result),
                writes.get(int(id_), []),
                [str(made_in)] if made_in is not None else older.get(int(id_), []),
            )
        )
    return out


def _threads_of(ws: Workspace, ids: list[int]) -> dict[int, list[str]]:
    if not ids:
        return {}
    found: dict[int, list[str]] = {}
    for call_id, thread in ws.conn.execute(
        "SELECT DISTINCT w.call_id, v.thread FROM ws_tool_write w JOIN ws_version v"
        " ON v.path = w.path AND v.n = w.n WHERE w.call_id BETWEEN ? AND ? AND v.thread"
        " IS NOT NULL ORDER BY 1, 2",
        (min(ids), max(ids)),
    ):
        found.setdefault(int(call_id), []).append(str(thread))
    return found


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def threads(ws: Workspace) -> list[str]:
    """Every thread a tool call, a version or a snapshot names."""
    return [
        str(t)
        for (t,) in ws.conn.execute(
            "SELECT thread FROM ws_tool_call_who WHERE thread IS NOT NULL UNION"
            " SELECT thread FROM ws_version WHERE thread IS NOT NULL UNION"
            " SELECT thread FROM ws_snapshot WHERE thread IS NOT NULL ORDER BY 1"
        )
    ]


def tools_used(ws: Workspace) -> list[str]:
    return [str(n) for (n,) in ws.conn.execute("SELECT DISTINCT name FROM tool_calls ORDER BY 1")]
