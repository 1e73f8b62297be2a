"""The file system addressed by inode number instead of path: what a FUSE request carries.

Reads are one or two indexed queries; changes name an entry as a directory's inode and a name
and run the core's operation with no path resolved (history makes its keys from the inode
numbers: ``FileSystem.path_in``). A live file's inode number never changes.
"""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from agentfs.core import paths
from agentfs.core.errors import fs_error, not_found
from agentfs.core.inodes import ROOT_INO, S_IFDIR, STAT_COLUMNS, Stat, exact, is_dir, is_symlink

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem

_STAT = f"SELECT {STAT_COLUMNS} FROM fs_inode WHERE ino = ?"
_LOOKUP = (
    f"SELECT {STAT_COLUMNS} FROM fs_inode"
    " WHERE ino = (SELECT ino FROM fs_dentry WHERE parent_ino = ? AND name = ?)"
)
#: A directory's entries after a cursor (the dentry id: AUTOINCREMENT, so it never goes back
#: and an entry keeps its place while others come and go: readdir offsets stay valid).
_ENTRIES = (
    f"SELECT d.id, d.name, {STAT_COLUMNS} FROM (SELECT id, name, ino AS child FROM fs_dentry"
    " WHERE parent_ino = ? AND id > ? ORDER BY id LIMIT ?) d JOIN fs_inode ON ino = d.child"
    " ORDER BY d.id"
)
#: The first name of ``ino``: its parent, the name, its mode.
_NAME = (
    "SELECT parent_ino, name, (SELECT mode FROM fs_inode WHERE ino = ?1) FROM fs_dentry"
    " WHERE ino = ?1 ORDER BY id LIMIT 1"
)
#: The mode of an inode the tree still holds: the root, or one with a name.
_LIVE = (
    "SELECT mode FROM fs_inode WHERE ino = ?1"
    " AND (ino = ?2 OR EXISTS (SELECT 1 FROM fs_dentry WHERE ino = ?1))"
)
_PARENT = "SELECT parent_ino FROM fs_dentry WHERE ino = ? ORDER BY id LIMIT 1"
#: Every name of ``ino``: its parent and the name, oldest first.
_NAMES = "SELECT parent_ino, name FROM fs_dentry WHERE ino = ? ORDER BY id"
#: The names from ``ino`` up to the root, deepest first (one name per level: a directory has
#: one name; a hard-linked file's lowest dentry id is taken). The depth bound only stops a
#: cycle a damaged file could hold: a tree made through the mount may be as deep as it likes.
_PATH = (
    "WITH RECURSIVE up(ino, name, depth) AS ("
    " SELECT * FROM (SELECT parent_ino, name, 0 FROM fs_dentry WHERE ino = ?1 ORDER BY id LIMIT 1)"
    " UNION ALL"
    " SELECT d.parent_ino, d.name, up.depth + 1 FROM up JOIN fs_dentry d ON d.ino = up.ino"
    " WHERE up.ino <> ?2 AND up.depth < 1048576"
    ") SELECT ino, name FROM up ORDER BY depth DESC"
)


class ByInode:
    """Inode-addressed reads over one ``FileSystem`` (see the module docstring)."""

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        self.conn = fs.conn

    def stat(self, ino: int) -> Stat:
        """The inode's attributes; ENOENT when there is no such inode."""
        with self.fs.read_transaction():
            row = self.conn.execute(_STAT, (ino,)).get
        if row is None:
            raise fs_error(errno.ENOENT, f"inode {ino}")
        return exact(Stat(*row), self.conn)  # type: ignore[misc]

    def lookup(self, parent: int, name: str) -> Stat | None:
        """The entry ``name`` of directory ``parent`` (not following a symlink), or None."""
        with self.fs.read_transaction():
            row = self.conn.execute(_LOOKUP, (self.fs._listed(parent), name)).get
        return None if row is None else exact(Stat(*row), self.conn)  # type: ignore[misc]

    def entries(self, parent: int, after: int, limit: int) -> list[tuple[int, str, Stat]]:
        """Up to ``limit`` entries of directory ``parent`` past cursor ``after`` (0: from the
        start), each ``(cursor, name, lstat)``, in cursor order."""
        with self.fs.read_transaction():
            rows = self.conn.execute(_ENTRIES, (self.fs._listed(parent), after, limit)).fetchall()
        conn = self.conn
        return [(row[0], row[1], exact(Stat(*row[2:]), conn)) for row in rows]  # type: ignore[misc, arg-type]

    def parent(self, directory: int) -> int:
        """The directory holding ``directory`` (the root holds itself)."""
        with self.fs.read_transaction():
            row = self.conn.execute(_PARENT, (directory,)).get
        return ROOT_INO if row is None else row  # type: ignore[return-value]

    def path_of(self, ino: int) -> str | None:
        """A path naming ``ino`` now ('/' for the root), None when it has no name (unlinked,
        or frozen by history). Directories' paths are cached on the ``FileSystem`` (dropped
        whenever its path cache is: a rename or removal of a directory, another process's
        commit), so a file costs one query."""
        with self.fs.read_transaction():
            cached = self.fs.dir_paths.get(ino)
            if cached is not None:
                return cached
            row = self.conn.execute(_NAME, (ino,)).get
            if row is None:
                return None
            parent, name, mode = row  # type: ignore[misc]
            parent_path = self.fs.dir_paths.get(parent)
            if parent_path is None:
                parent_path = self._walk_up(parent)
                if parent_path is None:
                    return None
            path = paths.join(parent_path, name)
            if is_dir(mode):
                self.fs.dir_paths[ino] = path
            return path

    def names(self, path: str, st: Stat) -> list[str]:
        """Every name of the entry ``st`` found at the symlink-free ``path``: that path alone
        for a directory or a file with one name (no query), else each of its hard links."""
        if st.st_nlink <= 1 or is_dir(st.st_mode):
            return [path]
        return self.names_of(st.st_ino) or [path]

    def names_of(self, ino: int) -> list[str]:
        """Every path naming ``ino`` now (a hard-linked file has several), oldest name first."""
        with self.fs.read_transaction():
            rows = self.conn.execute(_NAMES, (ino,)).fetchall()
            found = []
            for parent, name in rows:
                parent_path = self.path_of(parent)  # type: ignore[arg-type]
                if parent_path is not None:
                    found.append(paths.join(parent_path, name))  # type: ignore[arg-type]
        return found

    def _walk_up(self, directory: int) -> str | None:
        """The path of ``directory`` from its names up to the root (one recursive query)."""
        rows = self.conn.execute(_PATH, (directory, ROOT_INO)).fetchall()
        if not rows or rows[0][0] != ROOT_INO:
            return None  # no name, or a chain that does not reach the root
        path = "/" + "/".join(str(name) for _, name in rows)
        self.fs.dir_paths[directory] = path
        return path

    def read(self, ino: int, offset: int, size: int) -> bytes:
        """Up to ``size`` committed bytes of file ``ino`` from ``offset`` (short at the end)."""
        with self.fs.read_transaction():
            length = self.conn.execute("SELECT size FROM fs_inode WHERE ino = ?", (ino,)).get
            if length is None:
                raise fs_error(errno.ENOENT, f"inode {ino}")
            return self.fs.chunks.read(ino, length, offset, size)  # type: ignore[arg-type]

    def readlink(self, ino: int) -> str:
        """The target of symlink ``ino``; EINVAL for anything else."""
        with self.fs.read_transaction():
            target = self.conn.execute("SELECT target FROM fs_symlink WHERE ino = ?", (ino,)).get
            if target is None:
                mode = self.conn.execute("SELECT mode FROM fs_inode WHERE ino = ?", (ino,)).get
                if mode is None:
                    raise fs_error(errno.ENOENT, f"inode {ino}")
                if not is_symlink(mode):  # type: ignore[arg-type]
                    raise fs_error(errno.EINVAL, f"inode {ino}", "not a symbolic link")
        return target  # type: ignore[return-value]

    # --- changes -------------------------------------------------------------------------

    def mkdir(self, parent: int, name: str, mode: int) -> Stat:
        """A new directory ``name`` in ``parent``; EEXIST when the name is taken."""
        with self.fs._write():
            made = self.fs._make_in(self._directory(parent), name, S_IFDIR | mode & 0o7777, name)
            return self.fs._stat_ino(made)

    def create(self, parent: int, name: str, mode: int) -> Stat:
        """A new empty regular file (``FileSystem.create``)."""
        with self.fs._write():
            return self.fs._create_file_in(self._directory(parent), name, mode, name)

    def mknod(self, parent: int, name: str, mode: int, rdev: int = 0) -> Stat:
        """A FIFO, socket or device node (``FileSystem.mknod``)."""
        with self.fs._write():
            return self.fs._mknod_in(self._directory(parent), name, mode, rdev, name)

    def symlink(self, parent: int, name: str, target: str) -> Stat:
        """A symlink to ``target`` (``FileSystem.symlink``)."""
        with self.fs._write():
            return self.fs._symlink_in(self._directory(parent), name, target, name)

    def link(self, ino: int, parent: int, name: str) -> Stat:
        """Another name for ``ino`` (``FileSystem.link``); ENOENT when it has none left: an
        unlinked inode waits in the orphan queue, and a name would not take it out."""
        with self.fs._write():
            st = self.stat(ino)
            if st.st_nlink == 0:
                raise fs_error(errno.ENOENT, f"inode {ino}", "it has no name left")
            directory = self._directory(parent)
            return self.fs._link_in(ino, st.st_mode, directory, name, f"inode {ino}", name)

    def remove(self, parent: int, name: str, *, directory: bool) -> None:
        """``rmdir(2)`` (``directory``) or ``unlink(2)`` of ``name`` in ``parent``."""
        with self.fs._write():
            found = self._entry(parent, name)
            self.fs._remove(parent, name, found, recursive=False, directory=directory, shown=name)
        self.fs.orphans.purge_due()

    def rename(self, parent: int, name: str, new_parent: int, new_name: str) -> None:
        """``rename(2)`` (``FileSystem.rename``)."""
        with self.fs._write():
            found = self._entry(parent, name)
            target = (self._directory(new_parent), new_name)
            self.fs._rename((parent, name), found, target, name, new_name)
        self.fs.orphans.purge_due()

    def exchange(self, parent: int, name: str, other_parent: int, other_name: str) -> None:
        """Swap two names (``FileSystem.exchange``)."""
        with self.fs._write():
            a, b = self._entry(parent, name), self._entry(other_parent, other_name)
            self.fs._exchange((parent, name), a, (other_parent, other_name), b, name, other_name)

    def truncate(self, ino: int, size: int) -> None:
        """Set the size of the regular file ``ino`` (``FileSystem.truncate``); ENOENT when it
        has no name."""
        with self.fs._write():
            target = self.fs._target_of(ino)
            if target is None:
                raise fs_error(errno.ENOENT, f"inode {ino}")
            self.fs._truncate(target, size, target.name)

    def _directory(self, ino: int) -> int:
        """``ino``, a directory still in the tree: a name made in one another process removed
        (the kernel may still hold its number) would hang below nothing. ENOENT, ENOTDIR."""
        mode = self.conn.execute(_LIVE, (ino, ROOT_INO)).get
        if mode is None:
            raise fs_error(errno.ENOENT, f"inode {ino}", "the directory was removed")
        if not is_dir(mode):  # type: ignore[arg-type]
            raise fs_error(errno.ENOTDIR, f"inode {ino}")
        return ino

    def _entry(self, parent: int, name: str) -> tuple[int, int, int]:
        """(dentry id, inode, mode) of ``name`` in ``parent``; ENOENT when there is none."""
        found = self.fs._lookup(parent, name)
        if found is None:
            raise not_found(name)
        return found
