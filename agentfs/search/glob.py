"""``glob``: the paths under a directory whose names match a pattern, from the directory tables.

No content is read, and the walk starts at the deepest directory the pattern names literally and
stops at the pattern's depth (without ``**``), so a narrow pattern reads a narrow part of the
tree. Symlinks met on the walk are matched by name and never followed, so a walk always ends.
"""

from __future__ import annotations

import errno
import re
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.core.globs import compile_glob
from agentfs.core.inodes import S_IFDIR, S_IFMT, type_name

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem

_MAGIC = frozenset("*?[{")

#: Every entry below a directory with its path, type and mtime, to a depth (-1: unlimited).
_WALK = (
    "WITH RECURSIVE walk(ino, path, mode, mtime_ns, size, depth) AS ("
    " SELECT d.ino, :base || d.name, i.mode, i.mtime * 1000000000 + i.mtime_nsec, i.size, 1"
    " FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino WHERE d.parent_ino = :top"
    " UNION ALL SELECT d.ino, w.path || '/' || d.name, i.mode,"
    " i.mtime * 1000000000 + i.mtime_nsec, i.size, w.depth + 1"
    " FROM walk w JOIN fs_dentry d ON d.parent_ino = w.ino JOIN fs_inode i ON i.ino = d.ino"
    f" WHERE (w.mode & {S_IFMT}) = {S_IFDIR} AND (:depth < 0 OR w.depth < :depth))"
    " SELECT path, mode, mtime_ns, size, ino FROM walk"
)


class GlobMatch(NamedTuple):
    """One path ``glob`` found."""

    path: str
    type: str  # file, dir, symlink, special
    size: int
    mtime_ns: int


class Entry(NamedTuple):
    """One path the walk found, as the tables hold it (``walk``)."""

    path: str
    mode: int
    mtime_ns: int
    size: int
    ino: int


def glob(
    fs: FileSystem,
    pattern: str,
    path: str = "/",
    *,
    sort: Literal["mtime", "name"] = "mtime",
    include_dirs: bool = False,
) -> list[GlobMatch]:
    """Entries matching ``pattern`` at or below directory ``path``, newest first or by name.

    ``pattern`` is relative to ``path`` unless it starts with ``/``; a trailing ``/**`` names
    what is below a directory, not the directory itself. Directories only with ``include_dirs``.
    """
    if sort not in ("mtime", "name"):
        raise fs_error(errno.EINVAL, str(sort), "sort is 'mtime' or 'name'")
    found = [
        GlobMatch(e.path, type_name(e.mode), e.size, e.mtime_ns)
        for e in walk(fs, pattern, path)
        if include_dirs or e.mode & S_IFMT != S_IFDIR
    ]
    if sort == "name":
        found.sort(key=lambda m: m.path)
    else:
        found.sort(key=lambda m: (-m.mtime_ns, m.path))
    return found


def walk(fs: FileSystem, pattern: str, path: str = "/") -> list[Entry]:
    """Every entry at or below directory ``path`` whose path matches ``pattern``, unsorted."""
    base = paths.normalize(path)
    full = pattern if pattern.startswith("/") else paths.join(base, pattern)
    regex = glob_regex(pattern, base)
    start, depth = _literal_start(full)
    if not paths.is_within(start, base) and not paths.is_within(base, start):
        return []  # an absolute pattern outside ``path``
    start = start if paths.is_within(start, base) else base
    with fs.read_transaction():
        try:
            top = fs.directory_ino(paths.normalize(start))
        except (FileNotFoundError, NotADirectoryError):
            return []
        prefix = "/" if start == "/" else start + "/"
        rows = cast(
            "list[tuple[str, int, int, int, int]]",
            fs.conn.execute(_WALK, {"base": prefix, "top": top, "depth": depth}).fetchall(),
        )
    return [Entry(*row) for row in rows if paths.is_within(row[0], base) and regex.match(row[0])]


def glob_regex(pattern: str, base: str) -> re.Pattern[str]:
    """The regex of ``pattern`` read relative to directory ``base`` (absolute if it starts
    with ``/``); a malformed pattern is EINVAL."""
    if not pattern or "\0" in pattern:
        raise fs_error(errno.EINVAL, str(pattern), "a glob pattern is a non-empty string")
    full = pattern if pattern.startswith("/") else paths.join(base, pattern)
    try:
        return compile_glob(full)
    except ValueError as exc:
        raise fs_error(errno.EINVAL, pattern, str(exc)) from None


def _literal_start(pattern: str) -> tuple[str, int]:
    """(the deepest directory the absolute ``pattern`` names with no wildcard, how many more
    levels the pattern can reach below it: -1 when a ``**`` makes it unlimited)."""
    parts = [p for p in pattern.split("/") if p]
    literal: list[str] = []
    for part in parts[:-1]:
        if _MAGIC & set(part):
            break
        literal.append(part)
    rest = parts[len(literal) :]
    unlimited = any("**" in part or "{" in part for part in rest)
    return "/" + "/".join(literal), -1 if unlimited else len(rest)
