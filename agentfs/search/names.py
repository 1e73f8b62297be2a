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

#: (ino, path below the top directory, size) of every name of the given inodes that lies
#: below directory :top; a name elsewhere climbs to the root (ino 1) and is left out.
_UP = (
    "WITH RECURSIVE up(leaf, ino, rel) AS ("
    " SELECT d.ino, d.parent_ino, d.name FROM fs_dentry d"
    " WHERE d.ino IN (SELECT value FROM json_each(:inos))"
    " UNION ALL SELECT up.leaf, d.parent_ino, d.name || '/' || up.rel FROM up"
    " JOIN fs_dentry d ON d.ino = up.ino WHERE up.ino NOT IN (:top, 1))"
    " SELECT up.leaf, up.rel, i.size FROM up JOIN fs_inode i ON i.ino = up.leaf"
    " WHERE up.ino = :top"
)


def names_below(
    fs: FileSystem, inos: Iterable[int], top: int, base: str
) -> list[tuple[str, int, int]]:
    """(path, ino, size) for each name of ``inos`` inside directory ``top``, whose path is
    ``base``; a hard-linked file has one row per name. Unsorted."""
    prefix = "/" if base == "/" else base + "/"
    rows = fs.conn.execute(_UP, {"inos": json.dumps(list(inos)), "top": top}).fetchall()
    return [(prefix + str(rel), int(ino), int(size)) for ino, rel, size in rows]  # type: ignore[arg-type]


def first_names(fs: FileSystem, inos: Iterable[int]) -> dict[int, str]:
    """A path for each of ``inos`` that has one (of several, for a hard-linked file: the first
    in sorted order)."""
    names: dict[int, str] = {}
    for path, ino, _size in sorted(names_below(fs, inos, 1, "/")):
        names.setdefault(ino, path)
    return names
