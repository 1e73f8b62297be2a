"""The host directory under a workspace: its lowest layer, brought in a directory at a time.

The first time a directory of the base is needed (a path resolved through it, its listing),
its host entries become ordinary inodes and dentries, made by the file system's own
operations: the host's modes and times, symlinks as symlinks, a host file with several names
one inode with several names. From then on the directory is the workspace's like any other,
so deleting or renaming what came from the host is an ordinary change, and the host is never
written. ``ws_origin`` keeps, for every inode brought in, where it came from and what was
seen (the conflict check of ``apply`` compares the host with it).

Bringing a directory in writes to the workspace, so it happens in a write transaction: a
workspace with a base reads in write transactions (``FileSystem._read``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat as st
from typing import TYPE_CHECKING

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.core.inodes import ROOT_INO

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem

#: The name the base's root may hold that never comes in: where a workspace over it lives.
HIDDEN = ".agentfs"

_ORIGIN = (
    "INSERT INTO ws_origin(ino, path, host_dev, host_ino, mode, size, mtime_ns, ctime_ns, hash,"
    " listed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class Base:
    """The base of one workspace (``FileSystem.base``); None where there is none."""

    def __init__(self, fs: FileSystem, root: str) -> None:
        self.fs = fs
        self.root = root
        #: Directories whose host entries are not in the workspace yet, read when first
        #: needed and again whenever the file system drops its caches (another connection
        #: may have brought some in).
        self._unlisted: set[int] | None = None

    @classmethod
    def of(cls, fs: FileSystem) -> Base | None:
        """The base recorded in ``fs``'s file, or None."""
        if not fs.conn.table_exists("main", "ws_base"):
            return None
        root = fs.conn.execute("SELECT root FROM ws_base WHERE id = 1").get
        return None if root is None else cls(fs, str(root))

    @classmethod
    def attach(cls, fs: FileSystem, root: str) -> Base:
        """Put the host directory ``root`` under ``fs``, an empty workspace: its root becomes
        the workspace's root, brought in when first needed."""
        host = os.path.abspath(root)
        info = os.stat(host)
        if not st.S_ISDIR(info.st_mode):
            raise fs_error(errno.ENOTDIR, host, "a base must be a directory")
        with fs.transaction():
            if fs.conn.execute("SELECT 1 FROM ws_base").get is not None:
                raise fs_error(errno.EEXIST, host, "the workspace has a base already")
            if fs.listdir("/"):
                raise fs_error(errno.ENOTEMPTY, host, "a base goes under an empty workspace")
            fs.conn.execute("INSERT INTO ws_base(id, root) VALUES (1, ?)", (host,))
            fs.conn.execute(
                _ORIGIN,
                (
                    ROOT_INO,
                    "",
                    info.st_dev,
                    info.st_ino,
                    info.st_mode,
                    0,
                    info.st_mtime_ns,
                    info.st_ctime_ns,
                    None,
                    0,
                ),
            )
        base = cls(fs, host)
        fs.base = base
        return base

    def forget(self) -> None:
        """Read the unlisted directories again when next needed."""
        self._unlisted = None

    def pending(self) -> bool:
        """Are some directories of the base not in the workspace yet?"""
        return bool(self._load())

    def needs(self, ino: int) -> bool:
        """Is ``ino`` a directory whose host entries are not in the workspace yet?"""
        return ino in self._load()

    def _load(self) -> set[int]:
        if self._unlisted is None:
            self._unlisted = {
                row for (row,) in self.fs.conn.execute("SELECT ino FROM ws_origin WHERE listed = 0")
            }
        return self._unlisted

    def bring_in(self, dir_ino: int) -> None:
        """Make the host entries of directory ``dir_ino`` the workspace's. Called inside a
        write transaction, as the directory is first resolved."""
        self._load().discard(dir_ino)
        conn = self.fs.conn
        where = conn.execute(
            "SELECT path FROM ws_origin WHERE ino = ? AND listed = 0", (dir_ino,)
        ).get
        if where is None:  # another connection brought it in
            return
        conn.execute("UPDATE ws_origin SET listed = 1 WHERE ino = ?", (dir_ino,))
        relative = str(where)
        host_dir = os.path.join(self.root, relative) if relative else self.root
        at = self.fs.by_inode.path_of(dir_ino)
        if at is None:  # removed before it was ever listed: nothing to bring
            return
        try:
            entries = sorted(os.scandir(host_dir), key=lambda e: e.name)
        except FileNotFoundError:
            return  # the host removed it since: it stays empty here
        own = self._own_files()
        for entry in entries:
            if not relative and entry.name == HIDDEN:
                continue
            try:
                if (entry.stat(follow_symlinks=False).st_dev, entry.inode()) in own:
                    continue  # the workspace's own file (agentfs run --ws in the directory)
                where = f"{relative}/{entry.name}".lstrip("/")
                with self.fs.transaction():  # one entry's failure undoes that entry only
                    self._bring(entry, paths.join(at, entry.name), where)
            except OSError:
                continue  # unreadable, gone meanwhile, or a name no workspace can hold
        host = os.lstat(host_dir)
        self.fs.utime(at, (host.st_atime_ns, host.st_mtime_ns))
        self.fs.hooks.brought_in(dir_ino)
        # what came in is recorded as its own operation: the change that needed it (a write
        # to a file just brought in) gets a version of its own after the host's
        self.fs.next_operation()

    def _own_files(self) -> set[tuple[int, int]]:
        """(device, inode) of the workspace's database file and its WAL and shared memory."""
        found = set()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                info = os.stat(self.fs.conn.filename + suffix)
                found.add((info.st_dev, info.st_ino))
        return found

    def _bring(self, entry: os.DirEntry[str], path: str, relative: str) -> None:
        """One host entry, at workspace ``path``."""
        fs, conn = self.fs, self.fs.conn
        info = entry.stat(follow_symlinks=False)
        mode = info.st_mode
        if st.S_ISDIR(mode):
            made = fs.mkdir(path, st.S_IMODE(mode))
            conn.execute(_ORIGIN, _row(made.st_ino, relative, info, None, 0))
            self._load().add(made.st_ino)
        elif st.S_ISLNK(mode):
            target = os.readlink(entry.path)
            made = fs.symlink(target, path)
            digest = hashlib.sha256(os.fsencode(target)).digest()
            conn.execute(_ORIGIN, _row(made.st_ino, relative, info, digest, 1))
        elif st.S_ISREG(mode):
            linked = None
            if info.st_nlink > 1:
                linked = conn.execute(
                    "SELECT ino FROM ws_origin WHERE host_dev = ? AND host_ino = ?",
                    (info.st_dev, info.st_ino),
                ).get
            if linked is not None:
                first = fs.by_inode.path_of(int(linked))  # type: ignore[arg-type]
                if first is not None:
                    made = fs.link(first, path)
                    seen = conn.execute(
                        "SELECT hash FROM ws_origin WHERE ino = ? LIMIT 1", (made.st_ino,)
                    ).get
                    conn.execute(_ORIGIN, _row(made.st_ino, relative, info, seen, 1))  # type: ignore[arg-type]
                    return
            with open(entry.path, "rb") as host_file:
                info = os.fstat(host_file.fileno())  # what was read, not what was listed
                data = host_file.read()
            made = fs.write(path, data, mode=st.S_IMODE(info.st_mode))
            conn.execute(
                _ORIGIN,
                _row(made.st_ino, relative, info, hashlib.sha256(data).digest(), 1),
            )
        else:  # a FIFO, socket or device: not content a workspace keeps
            return
        fs.utime(path, (info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)


def _row(
    ino: int, relative: str, info: os.stat_result, digest: bytes | None, listed: int
) -> tuple[object, ...]:
    return (
        ino,
        relative,
        info.st_dev,
        info.st_ino,
        info.st_mode,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        digest,
        listed,
    )
