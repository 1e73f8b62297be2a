"""Snapshots another copy of the workspace took (sync brings them): a generation whose tree is
not, and never was, the live one here (docs/sync.md, "Snapshots from another machine").

The baseline rows the received tree holds exactly stay shared; the others are closed at the
new generation and reopened at the next, reserved number; the tree's other entries live in the
new generation only, its files sharing a live inode only where it holds exactly their bytes.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.core.inodes import ROOT_INO, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, split_ns

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem


class ImportedEntry(NamedTuple):
    """One entry of a snapshot taken elsewhere, every directory included.

    Attributes:
        mode: type and permission bits.
        mtime_ns: a file's or symlink's modification time (directories': not kept).
        target: a symlink's target.
        content: a file's bytes, asked for only when it is not shared with a live inode.
        live_ino: the live file at this path, when it holds exactly these bytes.
    """

    path: str
    mode: int
    mtime_ns: int = 0
    target: str | None = None
    content: Callable[[], bytes] | None = None
    live_ino: int | None = None


_Row = tuple[int, int, int]  # ino, mode, mtime_ns
_NEW_INODE = (
    "INSERT INTO fs_inode(mode, nlink, uid, gid, size, atime, mtime, ctime, rdev, atime_nsec,"
    " mtime_nsec, ctime_nsec) VALUES (?, 0, 0, 0, ?, ?, ?, ?, 0, ?, ?, ?) RETURNING ino"
)


def record(fs: FileSystem, gen: int, entries: Iterable[ImportedEntry]) -> None:
    """Make generation ``gen`` (its ``ws_snapshot`` row just inserted) hold ``entries``, as
    the module docstring says; inside the caller's write transaction."""
    conn = fs.conn
    conn.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'ws_snapshot'", (gen + 1,))
    wanted = _rows(fs, entries)
    baseline: dict[tuple[int, str], _Row] = {
        (int(parent), str(name)): (int(ino), int(mode), int(mtime))  # type: ignore[arg-type]
        for parent, name, ino, mode, mtime in conn.execute(
            "SELECT parent, name, ino, mode, mtime_ns FROM ws_entry WHERE died IS NULL"
        ).fetchall()
    }
    reopened = []
    for key, row in baseline.items():
        if wanted.get(key) == row:
            del wanted[key]  # the same entry: the open row serves both
        else:
            reopened.append((*key, gen + 1, *row))
    conn.executemany(
        "UPDATE ws_entry SET died = ? WHERE parent = ? AND name = ? AND died IS NULL",
        [(gen, parent, name) for parent, name, *_ in reopened],
    )
    conn.executemany(
        "INSERT INTO ws_entry(parent, name, born, ino, mode, mtime_ns) VALUES (?, ?, ?, ?, ?, ?)",
        reopened,
    )
    conn.executemany(
        "INSERT INTO ws_entry(parent, name, born, died, ino, mode, mtime_ns)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(parent, name, gen, gen + 1, *row) for (parent, name), row in wanted.items()],
    )


def _rows(fs: FileSystem, entries: Iterable[ImportedEntry]) -> dict[tuple[int, str], _Row]:
    """(directory, name) -> (inode, mode, mtime) for every entry, parents first."""
    conn = fs.conn
    dirs = {"/": ROOT_INO}
    out: dict[tuple[int, str], _Row] = {}
    for entry in sorted(entries, key=lambda e: (e.path.count("/"), e.path)):
        path = paths.normalize(entry.path)
        parent_path, name = paths.parent_and_name(path)
        parent = dirs.get(parent_path)
        if parent is None or path == "/":
            raise fs_error(errno.EINVAL, path, "an imported snapshot entry has no directory")
        kind = entry.mode & S_IFMT
        if kind == S_IFDIR:
            ino = _live_directory(fs, path) or _new_number(fs)
            dirs[path] = ino
            out[(parent, name)] = (ino, entry.mode, 0)
            continue
        if kind == S_IFREG:
            ino = entry.live_ino or _new_file(fs, entry)
        elif kind == S_IFLNK and entry.target:
            ino = _new_inode(fs, entry, len(entry.target.encode("utf-8")))
            conn.execute("INSERT INTO fs_symlink(ino, target) VALUES (?, ?)", (ino, entry.target))
        else:
            raise fs_error(errno.EINVAL, path, "imported snapshots hold files, symlinks, dirs")
        out[(parent, name)] = (ino, entry.mode, entry.mtime_ns)
    return out


def _live_directory(fs: FileSystem, path: str) -> int | None:
    try:
        return fs.directory_ino(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _new_number(fs: FileSystem) -> int:
    """An inode number issued with no row: a directory only a snapshot has (restore makes
    the row when it brings the directory back)."""
    return int(
        fs.conn.execute(
            "UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'fs_inode' RETURNING seq"
        ).get
    )


def _new_inode(fs: FileSystem, entry: ImportedEntry, size: int) -> int:
    sec, nsec = split_ns(entry.mtime_ns)
    return int(fs.conn.execute(_NEW_INODE, (entry.mode, size, sec, sec, sec, nsec, nsec, nsec)).get)


def _new_file(fs: FileSystem, entry: ImportedEntry) -> int:
    if entry.content is None:
        raise fs_error(errno.EINVAL, entry.path, "an imported file needs its content")
    data = entry.content()
    ino = _new_inode(fs, entry, len(data))
    fs.chunks.append_new(ino, 0, data)
    return ino
