"""From inodes to paths: the index answers in inode numbers, people want names.

Walking up from each inode's names (``ws_dentry_ino``) to a directory costs a few lookups per
answer, where walking down the tree to find a few files would read every entry under it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem

#: (ino, parent, name, size) of every name of the given inodes.
_NAMES = (
    "SELECT d.ino, d.parent_ino, d.name, i.size FROM json_each(?) j"
    " JOIN fs_dentry d ON d.ino = j.value JOIN fs_inode i ON i.ino = d.ino"
)

#: (directory, its path below directory :top, ending in '/', or '' for :top itself) for each
#: of the given directories that lies below :top; one elsewhere climbs to the root (ino 1) and
#: is left out. A directory has one name, so one row at most.
_DIRECTORIES_UP = (
    "WITH RECURSIVE up(leaf, ino, rel) AS ("
    " SELECT value, value, '' FROM json_each(:dirs)"
    " UNION ALL SELECT up.leaf, d.parent_ino, d.name || '/' || up.rel FROM up"
    " JOIN fs_dentry d ON d.ino = up.ino WHERE up.ino NOT IN (:top, 1))"
    " SELECT leaf, rel FROM up WHERE up.ino = :top"
)


def names_below(
    fs: FileSystem, inos: Iterable[int], top: int, base: str
) -> list[tuple[str, int, int]]:
    """(path, ino, size) for each name of ``inos`` inside directory ``top``, whose path is
    ``base``; a hard-linked file has one row per name. Unsorted. The names' directories are
    climbed once each, not once per file: a grep of a common word names most of the tree."""
    prefix = "/" if base == "/" else base + "/"
    conn = fs.conn
    names = conn.execute(_NAMES, (json.dumps(list(inos)),)).fetchall()
    parents = json.dumps(list({parent for _ino, parent, _name, _size in names}))
    where = dict(conn.execute(_DIRECTORIES_UP, {"dirs": parents, "top": top}))
    return [
        (prefix + where[parent] + name, ino, size)  # type: ignore[operator, misc]
        for ino, parent, name, size in names
        if parent in where
    ]


def first_names(fs: FileSystem, inos: Iterable[int]) -> dict[int, str]:
    """A path for each of ``inos`` that has one (of several, for a hard-linked file: the first
    in sorted order)."""
    names: dict[int, str] = {}
    for path, ino, _size in sorted(names_below(fs, inos, 1, "/")):
        names.setdefault(ino, path)
    return names
