"""Reading a tree as it is now or as a snapshot holds it, and diffing two such trees, one
directory at a time (``children(dir_ino)``). A diff compares only the directories that can
differ (parents of ``ws_entry`` rows born or closed between the two generations, and
``ws_dirty`` for the live tree), walking into a subtree only when it appeared or vanished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import apsw

from agentfs.core import paths
from agentfs.core.inodes import S_IFDIR, S_IFMT, is_dir

#: An entry's mtime as snapshots store it: directories' times are not kept (see schema).
ENTRY_MTIME = (
    f"CASE WHEN (i.mode & {S_IFMT}) = {S_IFDIR} THEN 0 ELSE i.mtime * 1000000000 + i.mtime_nsec END"
)


class Entry(NamedTuple):
    """What a name points at in one tree."""

    ino: int
    mode: int
    mtime_ns: int


class Tree:
    """One state of the tree: the live one (``gen`` None) or snapshot generation ``gen``."""

    def __init__(self, conn: apsw.Connection, gen: int | None) -> None:
        self.conn = conn
        self.gen = gen
        self._paths: dict[int, str] | None = None

    def children(self, dir_ino: int) -> dict[str, Entry]:
        if self.gen is None:
            rows = self.conn.execute(
                f"SELECT d.name, d.ino, i.mode, {ENTRY_MTIME} FROM fs_dentry d"
                " JOIN fs_inode i ON i.ino = d.ino WHERE d.parent_ino = ?",
                (dir_ino,),
            )
        else:
            rows = self.conn.execute(
                "SELECT name, ino, mode, mtime_ns FROM ws_entry WHERE parent = ? AND born <= ?"
                " AND (died IS NULL OR died > ?)",
                (dir_ino, self.gen, self.gen),
            )
        return {name: Entry(ino, mode, mtime) for name, ino, mode, mtime in rows}

    def dir_path(self, dir_ino: int) -> str | None:
        """The path of directory ``dir_ino`` in this tree, or None if it is not in it."""
        if self._paths is None:
            self._paths = self._all_dir_paths()
        return self._paths.get(dir_ino)

    def _all_dir_paths(self) -> dict[int, str]:
        """Every directory's path, in one recursive query over directories only."""
        if self.gen is None:
            source = (
                "SELECT d.parent_ino AS parent, d.name AS name, d.ino AS ino FROM fs_dentry d"
                f" JOIN fs_inode i ON i.ino = d.ino WHERE (i.mode & {S_IFMT}) = {S_IFDIR}"
            )
            args: tuple[int, ...] = ()
        else:
            source = (
                "SELECT parent, name, ino FROM ws_entry WHERE born <= ? AND"
                f" (died IS NULL OR died > ?) AND (mode & {S_IFMT}) = {S_IFDIR}"
            )
            args = (self.gen, self.gen)
        rows = self.conn.execute(
            f"WITH RECURSIVE dirs(parent, name, ino) AS ({source}),"
            " walk(ino, path) AS (SELECT 1, '' UNION ALL SELECT d.ino, w.path || '/' || d.name"
            " FROM dirs d JOIN walk w ON d.parent = w.ino) SELECT ino, path FROM walk",
            args,
        )
        return {ino: path or "/" for ino, path in rows}

    def walk(self, dir_ino: int, prefix: str) -> list[tuple[str, Entry]]:
        """Every entry below directory ``dir_ino`` (files, symlinks, directories)."""
        out: list[tuple[str, Entry]] = []
        stack = [(dir_ino, prefix)]
        while stack:
            ino, path = stack.pop()
            for name, entry in self.children(ino).items():
                child = paths.join(path, name)
                out.append((child, entry))
                if is_dir(entry.mode):
                    stack.append((entry.ino, child))
        return out


@dataclass
class TreeDiff:
    """Paths that differ between tree A (older, usually) and tree B.

    ``added``: only in B; ``removed``: only in A; ``modified``: in both with other content,
    type or permissions (directories are listed when they appear or vanish, with their
    contents). Each list is sorted.
    """

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    #: What each added or modified path points at in tree B (restore relinks these).
    after: dict[str, Entry] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, list[str]]:
        return {"added": self.added, "removed": self.removed, "modified": self.modified}

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified)


def changed_dirs(conn: apsw.Connection, older: int, newer: int | None) -> set[int]:
    """Directories whose entries may differ between generation ``older`` and ``newer``
    (None: the live tree, which adds the directories dirtied since the last snapshot)."""
    hi = newer if newer is not None else 1 << 62
    lo, hi = min(older, hi), max(older, hi)
    dirs = {
        parent
        for (parent,) in conn.execute(
            "SELECT parent FROM ws_entry WHERE born > ? AND born <= ?"
            " UNION SELECT parent FROM ws_entry WHERE died > ? AND died <= ?",
            (lo, hi, lo, hi),
        )
    }
    if newer is None:
        dirs.update(ino for (ino,) in conn.execute("SELECT ino FROM ws_dirty"))
    return dirs


def _walked(tree: Tree, dir_ino: int, path: str, walked: set[int]) -> list[tuple[str, Entry]]:
    """``tree.walk`` of directory ``dir_ino``, adding it and the directories below it to
    ``walked``."""
    below = tree.walk(dir_ino, path)
    walked.add(dir_ino)
    walked.update(entry.ino for _, entry in below if is_dir(entry.mode))
    return below


def diff(a: Tree, b: Tree, dirs: set[int], within: str = "/") -> TreeDiff:
    """Compare trees ``a`` and ``b`` in the directories ``dirs`` (see ``changed_dirs``),
    reporting only paths at or below ``within``. A directory that appears, vanishes, moves or
    is replaced brings its whole subtree along, walked in the tree that has it."""
    old_side: dict[str, Entry] = {}
    new_side: dict[str, Entry] = {}
    # A directory inside a subtree already walked on one side has all it holds on that side
    # already: outer directories first, so a vanished or new deep tree is walked once, not
    # once more for each directory in it (which grows with the square of its depth).
    walked_a: set[int] = set()
    walked_b: set[int] = set()

    def depth(dir_ino: int) -> int:
        return len(a.dir_path(dir_ino) or b.dir_path(dir_ino) or "")

    for dir_ino in sorted(dirs, key=depth):
        a_path, b_path = a.dir_path(dir_ino), b.dir_path(dir_ino)
        old = a.children(dir_ino) if a_path is not None and dir_ino not in walked_a else {}
        new = b.children(dir_ino) if b_path is not None and dir_ino not in walked_b else {}
        for name in old.keys() | new.keys():
            before, after = old.get(name), new.get(name)
            if before == after and a_path == b_path:
                continue
            moved = before is None or after is None or before.ino != after.ino or a_path != b_path
            if before is not None and a_path is not None:
                path = paths.join(a_path, name)
                old_side[path] = before
                if moved and is_dir(before.mode):
                    old_side.update(_walked(a, before.ino, path, walked_a))
            if after is not None and b_path is not None:
                path = paths.join(b_path, name)
                new_side[path] = after
                if moved and is_dir(after.mode):
                    new_side.update(_walked(b, after.ino, path, walked_b))

    def keep(found: set[str] | list[str]) -> list[str]:
        return sorted(p for p in found if paths.is_within(p, within))

    modified = [
        p
        for p, entry in new_side.items()
        if p in old_side
        and old_side[p] != entry
        and not (is_dir(entry.mode) and is_dir(old_side[p].mode) and entry.mode == old_side[p].mode)
    ]
    added, changed = keep(new_side.keys() - old_side.keys()), keep(modified)
    relink = {p: new_side[p] for p in (*added, *changed)}
    return TreeDiff(added, keep(old_side.keys() - new_side.keys()), changed, relink)
