"""Small pieces several tools share: how times, types and versions are shown to a model, the
optimistic-concurrency check, and reading a file's text to change it."""

from __future__ import annotations

import time
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from agentfs.core.errors import HistoryNotFoundError
from agentfs.core.inodes import S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, Stat
from agentfs.db import INT_MAX
from agentfs.tools.errors import ToolError

if TYPE_CHECKING:
    from agentfs.protocol import WorkspaceAPI

EntryType = Literal["file", "directory", "symlink", "other"]

_TYPES: dict[int, EntryType] = {S_IFREG: "file", S_IFDIR: "directory", S_IFLNK: "symlink"}

PATH_DOC = "a workspace path: /src/app.py, or src/app.py from the root"


#: A version number as file_history shows it (from 1). Bounded above by the largest integer
#: SQLite holds, so a number past it is refused as an invalid argument like a negative one,
#: instead of failing inside SQLite as an internal error.
VersionNumber = Annotated[int, Field(ge=1, le=INT_MAX)]
#: The version a caller last saw: a version number, or 0 for a file without one (version_of).
SeenVersion = Annotated[int, Field(ge=0, le=INT_MAX)]

EXPECTED_VERSION = Field(
    None,
    description="the file's version you last saw (from read_file or stat); if it changed since,"
    " the call fails with stale_read and changes nothing",
)


def entry_type(st: Stat) -> EntryType:
    return _TYPES.get(st.st_mode & S_IFMT, "other")


def iso(ns: int) -> str:
    """``2026-11-24T09:30:12Z``: seconds are enough for a model, and UTC is unambiguous."""
    return _iso_seconds(ns // 1_000_000_000)


@lru_cache(maxsize=4096)
def _iso_seconds(seconds: int) -> str:
    """Cached: the entries of a listing mostly share a handful of seconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def version_of(ws: WorkspaceAPI, path: str, st: Stat) -> int:
    """The version number a caller should pass back as ``expected_version``: the newest
    version of ``path`` if it describes the file as it is, else 0 (no version yet, or history
    off when it was last written)."""
    try:
        latest = ws.version(path)
    except HistoryNotFoundError:
        return 0
    return latest.n if latest.describes(st.st_ino, st.st_size) else 0


def check_expected(ws: WorkspaceAPI, path: str, expected: int | None) -> None:
    """Fail with ``stale_read`` if ``path`` has moved on from version ``expected``."""
    if expected is None:
        return
    try:
        st = ws.stat(path)
    except FileNotFoundError:
        raise ToolError(
            "stale_read",
            f"{path} was deleted since you saw version {expected}; call ls or glob to see"
            " what is there now",
        ) from None
    current = version_of(ws, path, st)
    if current == expected:
        return
    by = ""
    if current:
        latest = ws.version(path)
        who = "/".join(x for x in (latest.actor, latest.thread) if x)
        by = f" by {who}" if who else ""
    raise ToolError(
        "stale_read",
        f"{path} changed since you read it (version {expected}, now {current}{by}): call"
        " read_file again, then redo your change",
        expected_version=expected,
        current_version=current,
    )


def text_to_change(ws: WorkspaceAPI, path: str) -> str:
    """The current text of ``path`` for an edit: an untracked read (the tool reading a file
    to change it is not the caller reading it), refused for binary content."""
    data = ws.read(path, track=False)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            "invalid_argument", f"{path} is not UTF-8 text; it cannot be edited as text"
        ) from None
    if "\0" in text:
        raise ToolError("invalid_argument", f"{path} is binary; it cannot be edited as text")
    return text
