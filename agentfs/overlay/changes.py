"""What a workspace over a host directory changed there: each file or symlink of the base it
added, modified, deleted or renamed (``ws.changes()``, ``agentfs changes``).

It compares the workspace's tree with ``ws_origin``, what was seen of each name brought in
(``agentfs.core.base``), so it reads nothing of the host and brings nothing in: a directory
never brought in holds what the host holds. A name still at its base path is modified when its
type, permissions or bytes differ from what was seen (bytes are hashed only when the size or
the modification time moved, as git compares); a base name gone from its path is renamed when
its inode has a name no origin accounts for, else deleted; a name no origin accounts for is
added. A name still there holding another inode (an editor that saves by renaming a new file
over the old) is compared by its bytes, as git compares a path. Directories are not listed:
their files are (as git lists them).
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.core.inodes import ROOT_INO, S_IFDIR, S_IFMT
from agentfs.history.api import unified_diff
from agentfs.overlay.host import HostTree

if TYPE_CHECKING:
    from agentfs.workspace import Workspace

Kind = Literal["added", "modified", "deleted", "renamed"]

#: Every live file and symlink with its path: the tree walked in SQL, so that nothing is
#: brought in (a directory not yet brought in has no entries here, and none changed).
_LIVE = (
    "WITH RECURSIVE walk(ino, path) AS (SELECT 1, '' UNION ALL"
    " SELECT d.ino, w.path || '/' || d.name FROM fs_dentry d JOIN walk w ON d.parent_ino = w.ino"
    f" JOIN fs_inode i ON i.ino = d.ino WHERE (i.mode & {S_IFMT}) = {S_IFDIR})"
    " SELECT w.path || '/' || d.name, d.ino, i.mode, i.size,"
    " i.mtime * 1000000000 + i.mtime_nsec FROM walk w JOIN fs_dentry d ON d.parent_ino = w.ino"
    f" JOIN fs_inode i ON i.ino = d.ino WHERE (i.mode & {S_IFMT}) <> {S_IFDIR}"
)


@dataclass(frozen=True)
class Change:
    """One file or symlink the workspace changed against its base.

    Attributes:
        kind: added, modified, deleted or renamed.
        path: the workspace path (a deleted one: where it was).
        type: file or symlink (as it is now; a deleted one: as it was).
        old_path: where a renamed one was in the base.
        insertions: lines added, for text (None: not text, or not a content change).
        deletions: lines removed.
    """

    kind: Kind
    path: str
    type: Literal["file", "symlink"]
    old_path: str | None = None
    insertions: int | None = None
    deletions: int | None = None


@dataclass(frozen=True)
class _Seen:
    """One origin row of a file or symlink."""

    path: str
    ino: int
    mode: int
    size: int
    mtime_ns: int
    digest: bytes | None


def changes(ws: Workspace, under: str = "/", *, stats: bool = True) -> list[Change]:
    """The workspace's changes against its base at or below ``under``, by path. ``stats``:
    count the lines each text file gained and lost (reading both sides; ``apply`` needs no
    counts)."""
    if ws.base is None:
        raise fs_error(errno.EINVAL, str(ws.path), "the workspace has no base (init --base)")
    under = paths.normalize(under)

    def counted(change: Change, origin: _Seen | None = None) -> Change:
        if not stats or not paths.is_within(change.path, under):
            return change
        return _with_stats(ws, change, origin)

    with ws.read_transaction():
        gone = _settle_unlisted(ws)
        seen = _origins(ws)
        live = {
            str(path): (int(ino), int(mode), int(size), int(mtime))
            for path, ino, mode, size, mtime in ws.conn.execute(_LIVE)
        }
        accounted = {origin.path for origin in seen}
        names_of: dict[int, list[str]] = {}  # each live inode's paths, in path order
        for path in sorted(live):
            names_of.setdefault(live[path][0], []).append(path)
        found: list[Change] = []
        moved_to: set[str] = set()
        for origin in seen:
            now = live.get(origin.path)
            if now is not None:  # the name is still there (the same inode or a new one)
                if _differs(ws, origin, now):
                    modified = Change("modified", origin.path, _type(now[1]))
                    found.append(counted(modified, origin))
                continue
            elsewhere = [
                path
                for path in names_of.get(origin.ino, [])
                if path not in accounted and path not in moved_to
            ]
            if not elsewhere:
                found.append(Change("deleted", origin.path, _type(origin.mode)))
                continue
            moved_to.add(elsewhere[0])
            renamed = Change("renamed", elsewhere[0], _type(origin.mode), origin.path)
            if _differs(ws, origin, live[elsewhere[0]], at=elsewhere[0]):
                renamed = counted(renamed, origin)
            found.append(renamed)
        for path, (_, mode, *_) in live.items():
            if path not in accounted and path not in moved_to:
                found.append(counted(Change("added", path, _type(mode))))
        found += gone
    return sorted(
        (c for c in found if paths.is_within(c.path, under)),
        key=lambda c: (c.path, c.kind),
    )


def _settle_unlisted(ws: Workspace) -> list[Change]:
    """Directories never brought in hold what the host holds, unless they moved or went: a
    moved one is brought in (its files then have origins and show as renamed), and the host
    files below one deleted before it was brought in are listed deleted (read from the host:
    the workspace never held them)."""
    assert ws.base is not None
    gone: list[Change] = []
    settled: set[int] = set()
    while True:
        rows = ws.conn.execute(
            f"SELECT ino, path FROM ws_origin WHERE present = 0 AND (mode & {S_IFMT}) = {S_IFDIR}"
        ).fetchall()
        moved = False
        for ino, path in rows:
            if ino in settled:
                continue
            settled.add(int(ino))  # type: ignore[arg-type]
            now = ws.by_inode.path_of(int(ino))  # type: ignore[arg-type]
            if now is None:
                gone += _host_files(HostTree(ws.base.root), "/" + str(path))
            elif now != "/" + str(path) and path != "":
                ws.listdir(now)  # brought in now, at its new place
                moved = True
        if not moved:
            return gone


def _host_files(host: HostTree, directory: str) -> list[Change]:
    """Every file and symlink below host ``directory``, as deleted from the same path."""
    return [
        Change("deleted", paths.join(directory, relative), "symlink" if link else "file")
        for relative, link in host.files_below(directory)
    ]


def _origins(ws: Workspace) -> list[_Seen]:
    rows = ws.conn.execute(
        "SELECT '/' || path, ino, mode, size, mtime_ns, hash FROM ws_origin"
        f" WHERE ino <> {ROOT_INO} AND (mode & {S_IFMT}) <> {S_IFDIR}"
        " ORDER BY path"
    )
    return [_Seen(str(p), int(i), int(m), int(s), int(t), h) for p, i, m, s, t, h in rows]  # type: ignore[arg-type]


def _type(mode: int) -> Literal["file", "symlink"]:
    return "symlink" if stat.S_ISLNK(mode) else "file"


def _differs(
    ws: Workspace, origin: _Seen, now: tuple[int, int, int, int], at: str | None = None
) -> bool:
    """Does the entry at ``at`` (default: the origin's path), now ``(ino, mode, size,
    mtime_ns)``, differ from what was seen?"""
    ino, mode, size, mtime = now
    where = origin.path if at is None else at
    if stat.S_IFMT(mode) != stat.S_IFMT(origin.mode):
        return True
    if stat.S_ISLNK(mode):
        return _digest(ws, where, mode) != origin.digest
    if stat.S_IMODE(mode) != stat.S_IMODE(origin.mode):
        return True
    if ino == origin.ino and size == origin.size and mtime == origin.mtime_ns:
        return False  # unchanged as git judges, without reading it
    if ino == origin.ino and ws.base is not None and ws.base.unread(ino):
        return False  # its bytes never came in: they are the host's (only its times moved)
    if size != origin.size:
        return True
    seen = _seen_digest(ws, origin)
    return seen is None or _digest(ws, where, mode) != seen


def _digest(ws: Workspace, path: str, mode: int) -> bytes:
    if stat.S_ISLNK(mode):
        return hashlib.sha256(os.fsencode(ws.readlink(path))).digest()
    return hashlib.sha256(ws.read(path, track=False)).digest()


def _with_stats(ws: Workspace, change: Change, origin: _Seen | None = None) -> Change:
    """``change`` with its line counts, when both sides are text (and the base's side is
    known: the host's file if it is still what was seen, else the file's first version in
    the workspace's history if that is)."""
    if change.type != "file":
        return change
    old = b"" if origin is None else _seen_bytes(ws, origin)
    if old is None:
        return change
    try:
        a, b = old.decode("utf-8"), ws.read(change.path, track=False).decode("utf-8")
    except UnicodeDecodeError:
        return change
    plus = minus = 0
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return Change(change.kind, change.path, change.type, change.old_path, plus, minus)


def _seen_digest(ws: Workspace, origin: _Seen) -> bytes | None:
    """The SHA-256 of what was seen at ``origin``, where it is known."""
    if origin.digest is not None:
        return origin.digest
    data = _seen_bytes(ws, origin)
    return None if data is None else hashlib.sha256(data).digest()


def _seen_bytes(ws: Workspace, origin: _Seen) -> bytes | None:
    """The bytes that were seen at ``origin``, where they can still be had: the host's file
    while it holds them (for a file whose bytes never came in, while its size and time are
    those seen), else the file's first version in the workspace's history."""
    assert ws.base is not None
    host = HostTree(ws.base.root)
    try:
        info, data = host.lstat(origin.path), host.read(origin.path)
        if origin.digest is None:
            if info is not None and (len(data), info.st_mtime_ns) == (origin.size, origin.mtime_ns):
                return data
        elif hashlib.sha256(data).digest() == origin.digest:
            return data
    except OSError:
        pass
    if origin.digest is None:
        return None
    first = next((v for v in ws.history(origin.path) if v.size is not None), None)
    if first is not None:
        data = ws.read_version(origin.path, first.n)
        if hashlib.sha256(data).digest() == origin.digest:
            return data
    return None


def patch(ws: Workspace, found: list[Change]) -> str:
    """The unified diff of ``found`` against what the base held (``git diff``'s layout): a
    file whose base side cannot be had any more (the host changed it, and history does not
    keep it) says so instead."""
    parts: list[str] = []
    for change in found:
        if change.type != "file":
            continue
        was = change.old_path or change.path
        old: bytes | None = b""
        if change.kind != "added":
            origin = _origin_at(ws, was)
            old = None if origin is None else _seen_bytes(ws, origin)
        new = b"" if change.kind == "deleted" else ws.read(change.path, track=False)
        label_a = "/dev/null" if change.kind == "added" else f"a{was}"
        label_b = "/dev/null" if change.kind == "deleted" else f"b{change.path}"
        if old is None:
            parts.append(f"--- {label_a}\n+++ {label_b}\n(the base's side is no longer known)\n")
            continue
        parts.append(unified_diff(old, new, label_a, label_b))
    return "".join(parts)


def _origin_at(ws: Workspace, path: str) -> _Seen | None:
    rows = ws.conn.execute(
        "SELECT '/' || path, ino, mode, size, mtime_ns, hash FROM ws_origin WHERE path = ?",
        (path.lstrip("/"),),
    ).fetchall()
    return None if not rows else _Seen(*rows[0])  # type: ignore[arg-type]
