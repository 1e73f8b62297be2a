"""The host directory under a workspace: its lowest layer, brought in when first needed.

The first time a directory of the base is needed (a path resolved through it, its listing),
its host entries become ordinary inodes and dentries, made by the file system's own
operations: the host's modes and times, symlinks as symlinks, a host file with several names
one inode with several names. A file comes in as its name and its stat; its bytes follow the
first time anything reads or changes them (``fill``, called by ``Chunks`` and by the file
system before a write), so listing a tree of large files copies none of them. From then on
the directory is the workspace's like any other, so deleting or renaming what came from the
host is an ordinary change, and the host is never written. ``ws_origin`` keeps, for every
inode brought in, where it came from and what was seen (the conflict check of ``apply``
compares the host with it).

Bringing something in writes to the workspace, so it happens in a write transaction: a
workspace with a base reads in write transactions while anything is still to come in
(``FileSystem._read``).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat as st
from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentfs import db
from agentfs.core import beneath, paths
from agentfs.core.errors import fs_error
from agentfs.core.inodes import ROOT_INO, S_IFDIR, S_IFMT, S_IFREG

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem

#: The name the base's root may hold that never comes in: where a workspace over it lives.
HIDDEN = ".agentfs"

_ORIGIN = (
    "INSERT INTO ws_origin(ino, path, host_dev, host_ino, mode, size, mtime_ns, ctime_ns, hash,"
    " present) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
#: Read a host file's bytes this many at a time (a large file is never held whole).
_BLOCK = 1 << 22
_ANY_ABSENT = "SELECT 1 FROM ws_origin WHERE present = 0 LIMIT 1"
_ABSENT_DIRS = f"SELECT ino FROM ws_origin WHERE present = 0 AND (mode & {S_IFMT}) = {S_IFDIR}"
#: A live inode brought in from the same host file: the same device and inode number, and the
#: size and modification time seen (an inode number the host reused for another file has
#: other ones).
_SAME_HOST_FILE = (
    "SELECT o.ino FROM ws_origin o JOIN fs_inode i ON i.ino = o.ino WHERE o.host_dev = ?"
    f" AND o.host_ino = ? AND o.size = ? AND o.mtime_ns = ? AND (o.mode & {S_IFMT}) = {S_IFREG}"
    f" AND i.nlink > 0 AND (i.mode & {S_IFMT}) = {S_IFREG} LIMIT 1"
)
_UNREAD_FILES = (
    f"SELECT DISTINCT o.ino FROM ws_origin o JOIN fs_inode i ON i.ino = o.ino"
    f" WHERE o.present = 0 AND (o.mode & {S_IFMT}) = {S_IFREG} AND i.nlink > 0 ORDER BY o.ino"
)
_UNREAD = "SELECT 1 FROM ws_origin WHERE ino = ? AND present = 0 LIMIT 1"


class Base:
    """The base of one workspace (``FileSystem.base``); None where there is none."""

    def __init__(self, fs: FileSystem, root: str) -> None:
        self.fs = fs
        self.root = root
        #: Directories whose host entries are not in the workspace yet, read when first
        #: needed and again whenever the file system drops its caches (another connection
        #: may have brought some in).
        self._absent: set[int] | None = None
        #: Is anything still to come in (None: not known since the caches were dropped)?
        self._pending: bool | None = None

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
        fs.base = fs.chunks.base = base
        return base

    def forget(self) -> None:
        """Read what is still to come in again when next needed."""
        self._absent = None
        self._pending = None

    def pending(self) -> bool:
        """Is some directory's listing or some file's content of the base not in yet?"""
        if self._pending is None:
            self._pending = self.fs.conn.execute(_ANY_ABSENT).get is not None
        return self._pending

    def needs(self, dir_ino: int) -> bool:
        """Is ``dir_ino`` a directory whose host entries are not in the workspace yet?"""
        return dir_ino in self._absent_dirs()

    def unread(self, ino: int) -> bool:
        """Is ``ino`` a file of the base whose bytes are not in the workspace yet? (One
        indexed lookup, none once nothing is pending: a large tree has too many such files
        to keep them in memory, and every read of a file asks.)"""
        return self.pending() and self.fs.conn.execute(_UNREAD, (ino,)).get is not None

    def unread_files(self) -> list[int]:
        """Every live file of the base whose bytes are not in the workspace yet."""
        return [ino for (ino,) in self.fs.conn.execute(_UNREAD_FILES)]

    def unread_count(self) -> int:
        """How many ``unread_files`` there are (counted, not listed)."""
        return int(self.fs.conn.execute(f"SELECT count(*) FROM ({_UNREAD_FILES})").get)  # type: ignore[arg-type]

    def absent_dirs(self) -> frozenset[int]:
        """The directories whose host entries are not in the workspace yet."""
        return frozenset(self._absent_dirs())

    def _absent_dirs(self) -> set[int]:
        if self._absent is None:
            self._absent = {row for (row,) in self.fs.conn.execute(_ABSENT_DIRS)}
        return self._absent

    def bring_in(self, dir_ino: int) -> None:
        """Make the host entries of directory ``dir_ino`` the workspace's. Called inside a
        write transaction, as the directory is first resolved."""
        self._absent_dirs().discard(dir_ino)
        self._pending = None
        conn = self.fs.conn
        where = conn.execute(
            "SELECT path FROM ws_origin WHERE ino = ? AND present = 0", (dir_ino,)
        ).get
        if where is None:  # another connection brought it in
            return
        conn.execute("UPDATE ws_origin SET present = 1 WHERE ino = ?", (dir_ino,))
        relative = str(where)
        at = self.fs.by_inode.path_of(dir_ino)
        if at is None:  # removed before it was ever listed: nothing to bring
            return
        try:
            dir_fd = beneath.open_beneath(self.root, relative, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return  # the host removed it since (or made it something else): it stays empty
        try:
            entries = sorted(os.scandir(dir_fd), key=lambda e: e.name)
            own = db.own_files(self.fs.conn)
            for entry in entries:
                if not relative and entry.name == HIDDEN:
                    continue
                try:
                    if (entry.stat(follow_symlinks=False).st_dev, entry.inode()) in own:
                        continue  # the workspace's own file (agentfs run --ws in the directory)
                    where = f"{relative}/{entry.name}".lstrip("/")
                    with self.fs.transaction():  # one entry's failure undoes that entry only
                        self._bring(entry, dir_fd, dir_ino, paths.join(at, entry.name), where)
                except OSError:
                    continue  # unreadable, gone meanwhile, or a name no workspace can hold
            host = os.fstat(dir_fd)
        finally:
            os.close(dir_fd)
        self.fs.utime(at, (host.st_atime_ns, host.st_mtime_ns))
        self.fs.hooks.brought_in(dir_ino)
        # what came in is recorded as its own operation: the change that needed it (a write
        # to a file just brought in) gets a version of its own after the host's
        self.fs.next_operation()

    def fill(self, ino: int) -> int:
        """Bring in the bytes of file ``ino`` (``unread``) and return its size, inside the
        caller's write transaction. They are what the host file holds now: should it have
        changed since it was listed (the user kept working), its new size and modification
        time come too, and are what is recorded as seen. A host file gone, or no longer a
        regular file, leaves the workspace as it was (EIO: its bytes are nowhere), and so does
        one larger than the workspace's limits allow (EFBIG, ENOSPC: ``agentfs.core.limits``)."""
        fs, conn = self.fs, self.fs.conn
        rows = conn.execute(
            "SELECT path, size, mtime_ns FROM ws_origin WHERE ino = ? AND present = 0", (ino,)
        ).fetchall()
        if not rows:
            return int(conn.execute("SELECT size FROM fs_inode WHERE ino = ?", (ino,)).get)  # type: ignore[arg-type]
        if fs.readonly:
            raise fs_error(
                errno.EROFS,
                conn.filename,
                "a file of the base is not in the workspace yet; open it writable",
            )
        with fs.transaction():  # all of its bytes or none
            fd = self._open_host(str(path) for path, _size, _mtime in rows)
            with os.fdopen(fd, "rb") as host:
                info = os.fstat(host.fileno())  # what is read, not what was listed
                shown = os.path.join(self.root, str(rows[0][0]))
                fs._check_growth(shown, 0, info.st_size)  # the workspace's limits hold too
                hashing = hashlib.sha256()
                block = max(1, _BLOCK // fs.chunks.size) * fs.chunks.size
                size = 0
                while data := host.read(block):
                    fs.chunks.append_new(ino, size // fs.chunks.size, data)
                    hashing.update(data)
                    size += len(data)
                if size > info.st_size:  # it grew while read
                    fs._check_growth(shown, 0, size)
            _path, seen_size, seen_mtime = rows[0]
            if (size, info.st_mtime_ns) == (seen_size, seen_mtime):
                # the size written again, unchanged: it queues the file for the search index
                conn.execute("UPDATE fs_inode SET size = ? WHERE ino = ?", (size, ino))
            else:
                sec, nsec = divmod(info.st_mtime_ns, 1_000_000_000)
                conn.execute(
                    "UPDATE fs_inode SET size = ?, mtime = ?, mtime_nsec = ? WHERE ino = ?",
                    (size, sec, nsec, ino),
                )
                fs.hooks.names_changed(None, ino)
            conn.execute(
                "UPDATE ws_origin SET present = 1, hash = ?, host_dev = ?, host_ino = ?,"
                " size = ?, mtime_ns = ?, ctime_ns = ? WHERE ino = ?",
                (
                    hashing.digest(),
                    info.st_dev,
                    info.st_ino,
                    size,
                    info.st_mtime_ns,
                    info.st_ctime_ns,
                    ino,
                ),
            )
        self._pending = None
        return size

    def _open_host(self, relatives: Iterable[str]) -> int:
        """A descriptor of the first of ``relatives`` (one host file's names) that is still a
        regular file, reached without following a symlink (``agentfs.core.beneath``: a
        host directory swapped for a symlink since it was listed leads nowhere, whatever the
        privileges of the process reading it); EIO naming the first when none is."""
        tried = []
        for relative in relatives:
            tried.append(os.path.join(self.root, relative))
            try:
                fd = beneath.open_beneath(self.root, relative, os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                continue
            if st.S_ISREG(os.fstat(fd).st_mode):
                return fd
            os.close(fd)
        raise fs_error(
            errno.EIO,
            tried[0],
            "the host file is gone or no longer a regular file since the workspace listed it:"
            " its bytes cannot be read",
        )

    def _bring(
        self, entry: os.DirEntry[str], dir_fd: int, dir_ino: int, path: str, relative: str
    ) -> None:
        """One host entry (of the host directory open as ``dir_fd``), at workspace ``path``
        in directory ``dir_ino``."""
        fs, conn = self.fs, self.fs.conn
        path = paths.normalize(path)  # OSError for a name no workspace can hold
        info = entry.stat(follow_symlinks=False)
        mode = info.st_mode
        if st.S_ISDIR(mode):
            made = fs.mkdir(path, st.S_IMODE(mode))
            conn.execute(_ORIGIN, _row(made.st_ino, relative, info, None, 0))
            self._absent_dirs().add(made.st_ino)
        elif st.S_ISLNK(mode):
            target = os.readlink(entry.name, dir_fd=dir_fd)
            made = fs.symlink(target, path)
            digest = hashlib.sha256(os.fsencode(target)).digest()
            conn.execute(_ORIGIN, _row(made.st_ino, relative, info, digest, 1))
        elif st.S_ISREG(mode):
            linked = None
            if info.st_nlink > 1:  # another name of a host file already in, if one is
                linked = conn.execute(_SAME_HOST_FILE, _host_file(info)).get
            if linked is not None:
                # one more name, not a change: no version (``fs.link`` would record one)
                fs._link_existing(dir_ino, entry.name, int(linked))  # type: ignore[arg-type]
                seen = conn.execute(
                    "SELECT hash, present FROM ws_origin WHERE ino = ? LIMIT 1", (linked,)
                ).get
                conn.execute(_ORIGIN, _row(int(linked), relative, info, *seen))  # type: ignore[arg-type, misc]
                return
            # its name and stat only: the bytes come when first needed (``fill``)
            made_ino = fs._make_in(dir_ino, entry.name, mode, path, info.st_size)
            conn.execute(_ORIGIN, _row(made_ino, relative, info, None, 0))
            self._pending = True
        else:  # a FIFO, socket or device: not content a workspace keeps
            return
        fs.utime(path, (info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)


def _host_file(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _row(
    ino: int, relative: str, info: os.stat_result, digest: bytes | None, present: int
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
        present,
    )
