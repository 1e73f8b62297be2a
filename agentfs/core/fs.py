"""The POSIX-like core over the spec tables: resolve, create, read/write, rename, link, unlink.

Every public method is one logical operation and runs in one transaction (``_write``/``_read``),
so a failure part-way leaves the database exactly as it was. Paths are normalised by
``agentfs.core.paths`` first; symlinks are followed inside the workspace only (an absolute target is
relative to the workspace root), with ELOOP after 40 hops as on Linux.

Caveats: ``..`` is resolved lexically before symlinks (like most virtual filesystems, unlike the
kernel); access times are not updated on read (``noatime``), so reads never take the write lock.
"""

from __future__ import annotations

import errno
import io
import os
from types import EllipsisType
from typing import NamedTuple

import apsw

from agentfs.core import handle, limits, paths, treeops, xattrs
from agentfs.core.base import Base
from agentfs.core.by_inode import ByInode
from agentfs.core.changes import Change, Changes, Place
from agentfs.core.chunks import Chunks
from agentfs.core.errors import fs_error, not_found
from agentfs.core.inodes import (
    ROOT_INO,
    S_IFBLK,
    S_IFCHR,
    S_IFDIR,
    S_IFIFO,
    S_IFLNK,
    S_IFMT,
    S_IFREG,
    S_IFSOCK,
    STAT_COLUMNS,
    DirEntry,
    Stat,
    exact,
    is_dir,
    is_symlink,
    now_ns,
    split_ns,
)
from agentfs.core.limits import Limits
from agentfs.core.orphans import Orphans
from agentfs.db import Block, BlockLevel, Transaction

MAX_SYMLINK_HOPS = 40

# A correlated subquery, not a JOIN: less than half the time (docs/architecture.md).
_LOOKUP = (
    "SELECT id, ino, (SELECT mode FROM fs_inode WHERE ino = fs_dentry.ino) FROM fs_dentry"
    " WHERE parent_ino = ? AND name = ?"
)
#: ``_LOOKUP`` for a write: the size too, which the write needs next.
_LOOKUP_FILE = (
    "SELECT d.id, d.ino, i.mode, i.size FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino"
    " WHERE d.parent_ino = ? AND d.name = ?"
)
_STAT = f"SELECT {STAT_COLUMNS} FROM fs_inode WHERE ino = ?"
_STAT_CHILD = (
    f"SELECT {STAT_COLUMNS} FROM fs_inode"
    " WHERE ino = (SELECT ino FROM fs_dentry WHERE parent_ino = ? AND name = ?)"
)
# One text of NUL-separated names (NUL never occurs in a name), split in C: 2.5x faster than a
# row tuple per name on a directory of 500 entries. No ORDER BY: the covering index already
# yields name order, and list.sort() of a sorted list is one linear pass that guarantees it.
_LIST_NAMES = "SELECT group_concat(name, char(0)) FROM fs_dentry WHERE parent_ino = ?"
_READDIR_PLUS = (
    f"SELECT d.name, {STAT_COLUMNS} FROM fs_inode"
    " JOIN (SELECT name, ino AS child FROM fs_dentry WHERE parent_ino = ?) d ON ino = d.child"
    " ORDER BY d.name"
)
_TOUCH_DIR = (
    "UPDATE fs_inode SET nlink = nlink + ?, mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ?"
    " WHERE ino = ?"
)
_TOUCH_FILE = (
    "UPDATE fs_inode SET mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?"
)
_SET_CONTENT = (
    "UPDATE fs_inode SET size = ?, mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ?"
    f" WHERE ino = ? RETURNING {STAT_COLUMNS}"
)
_CREATE_INODE = (
    "INSERT INTO fs_inode(mode, nlink, uid, gid, size, atime, mtime, ctime,"
    " atime_nsec, mtime_nsec, ctime_nsec) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ino"
)
_ADD_DENTRY = "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES (?, ?, ?)"
_HAS_ENTRIES = "SELECT 1 FROM fs_dentry WHERE parent_ino = ? LIMIT 1"
#: An inode's oldest name, its size and mode: where a write addressed by inode goes.
_FIRST_NAME = (
    "SELECT d.id, d.parent_ino, d.name, i.size, i.mode FROM fs_dentry d"
    " JOIN fs_inode i ON i.ino = d.ino WHERE d.ino = ? ORDER BY d.id LIMIT 1"
)


class WriteTarget(NamedTuple):
    """The regular file a write goes to, after following symlinks: its inode and its name
    (``name`` in directory ``parent_ino``; ``FileSystem.path_in`` makes it a path)."""

    ino: int
    created: bool
    dentry_id: int  # 0 when created (not needed then)
    parent_ino: int
    name: str
    size: int  # the file's size when it was looked up (a new one: the size it was created with)


class Attrs(NamedTuple):
    """What a ``setattr`` changes besides the size (None or -1: left as it is)."""

    mode: int | None = None  # permission bits; the file type never changes
    uid: int = -1
    gid: int = -1
    times: tuple[int, int] | None = None  # (atime_ns, mtime_ns)


def _as_bytes(data: bytes | str) -> bytes:
    """Text is stored as UTF-8; bytes as they are."""
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


#: Times are stored as seconds (SQLite's signed 64-bit integers) and nanoseconds, as tmpfs
#: keeps them; ``inodes.exact`` reads back those outside 64-bit nanoseconds.
_NS_RANGE = range(-(1 << 63) * 10**9, (1 << 63) * 10**9)


def _check_times(times: tuple[int, int], where: str) -> None:
    if any(t not in _NS_RANGE for t in times):
        raise fs_error(errno.EINVAL, where, "times must lie within 64-bit seconds of the epoch")


def _may_be_cached(mode: int) -> bool:
    """Can an entry of this type be on a cached directory path? Directories are, and a symlink
    may be a step of one; removing or moving a regular file never changes where a path leads."""
    return is_dir(mode) or is_symlink(mode)


class FileSystem:
    """Path and inode operations on one workspace connection.

    Attributes:
        conn: the apsw connection (one writer per process; see docs/concurrency.md).
        chunks: content I/O over fs_data.
    Caveats:
        ``_dirs`` caches resolved directory paths; it is dropped whenever another connection
        commits (SQLite's data_version changes), after a local rename or removal of a directory
        or symlink, and after any rolled-back transaction, so it never outlives the truth.
    """

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        #: The host directory under the workspace, if it has one (read at the end).
        self.base: Base | None = None
        chunk_size = conn.execute("SELECT value FROM fs_config WHERE key = 'chunk_size'").get
        if not (isinstance(chunk_size, str) and chunk_size.isdigit() and int(chunk_size) > 0):
            raise fs_error(
                errno.EINVAL, conn.filename, f"fs_config.chunk_size is damaged ({chunk_size!r})"
            )
        self.chunks = Chunks(conn, int(chunk_size))
        #: Who new inodes belong to: this process's effective ids, as a file made by any other
        #: system call would (the mount records the requesting process's ids instead).
        self.owner = (os.geteuid(), os.getegid())
        self.orphans = Orphans(conn, self.chunks.size)
        #: Extended attributes by inode number (the path-based calls are ``getxattr`` & co).
        self.xattrs = xattrs.Xattrs(self)
        #: The hooks of each change, for the layer above (``Changes``: a plain filesystem).
        self.hooks = Changes()
        self._dirs: dict[str, int] = {"/": ROOT_INO}
        #: The path of each directory inode looked up by number (``dir_path``), dropped with
        #: the other caches.
        self.dir_paths: dict[int, str] = {ROOT_INO: "/"}
        #: Reads addressed by inode number, and the paths of inodes.
        self.by_inode = ByInode(self)
        #: Did a path in ``_dirs`` resolve through a symlink? (Then a directory may be cached
        #: under more than one path: ``_forget_removed``.)
        self._links_cached = False
        # Any rollback of a whole transaction, ours or a caller's, may have undone directories
        # the cache learned inside it (and AUTOINCREMENT then reissues their numbers), and
        # settings it changed.
        conn.set_rollback_hook(self.drop_caches)
        self._data_version = conn.execute("PRAGMA data_version").get
        self._readonly = conn.readonly("main")

        #: What a write refused on a read-only handle says (the opener may know more: why).
        self.readonly_reason = "the workspace is open read-only"
        #: The workspace's limits, read when first needed after another connection commits.
        self._limits: Limits | None = None
        #: This handle's all-or-nothing block (``transaction``), open or not: made once, as
        #: every changing tool call opens one, and reset as it opens.
        self._block: Block | None = None
        self.base = self.chunks.base = Base.of(self)

    # --- transactions and the directory cache -------------------------------------------------

    def transaction(self, *, savepoints: bool = True) -> Transaction:
        """Group several operations into one atomic transaction::

            with ws.transaction():
                ws.write("/a", b"1")
                ws.rename("/b", "/c")

        Use this, not a raw ``with ws.conn:``, so in-memory caches stay right on rollback.

        Each operation inside is a savepoint, so one that fails is undone alone and a caller
        may catch its error and go on. ``savepoints=False`` spares that (SQLite copies every
        page an operation inside a savepoint changes; 8 µs of a 1 KiB write_file) for a block
        that is all or nothing anyway: an operation that fails after changing something, its
        error caught inside the block, dooms the block, which then rolls back whole and
        raises ``DoomedBlockError`` instead of committing (``agentfs.db.Block``). Nested in
        another transaction, it is a level of that one.
        """
        if savepoints or self.conn.in_transaction:
            return self._write()
        self._check_writable()
        if self._block is None:
            self._block = Block(self.conn, on_begin=self._check_cache, on_rollback=self.drop_caches)
        return self._block

    def read_transaction(self) -> Transaction:
        """Make several reads see one state while other processes commit::

            with ws.read_transaction():
                names = ws.listdir("/src")
                sizes = [ws.stat(f"/src/{n}").st_size for n in names]

        It takes no write lock; writers in other processes go on (WAL).
        """
        return self._read()

    @property
    def readonly(self) -> bool:
        """Opened read-only: nothing can be written through this handle."""
        return self._readonly

    def _check_writable(self) -> None:
        if self._readonly:
            raise fs_error(errno.EROFS, self.conn.filename, self.readonly_reason)

    def _write(self, *, savepoint: bool = True) -> Transaction:
        self._check_writable()
        block = self._block
        if block is not None and block.open:  # a level of the open block
            return BlockLevel(block)
        return Transaction(
            self.conn,
            write=True,
            on_begin=self._check_cache,
            on_rollback=self.drop_caches,
            savepoint=savepoint,
        )

    def _read(self) -> Transaction:
        if self.base is not None and not self._readonly and self.base.pending():
            return self._write()  # a read may bring a directory of the base in (core/base.py)
        return Transaction(
            self.conn, write=False, on_begin=self._check_cache, on_rollback=self.drop_caches
        )

    @property
    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version`` as this connection's last transaction began: it
        moves only when another connection commits (the mount reconciles the kernel's cache
        when it does)."""
        return self._data_version

    def next_operation(self) -> None:
        """Start the next logical operation inside a transaction that holds several (the
        mount's group commit): the hooks forget what they keep per operation (this
        transaction's pending versions), so each operation is recorded as if committed alone.
        Nobody else can have committed meanwhile: the transaction holds the write lock."""
        self.hooks.begin(self._data_version, False)

    def _check_cache(self) -> None:
        """Drop cached directories if another connection committed since we last looked.
        ``PRAGMA data_version`` changes only for other connections' commits, and read inside
        the transaction it describes exactly the snapshot the operation will see."""
        version = self.conn.execute("PRAGMA data_version").get
        changed = version != self._data_version
        if changed:
            self._data_version = version
            self.drop_caches()
        self.hooks.begin(version, changed)

    def drop_caches(self) -> None:
        """Forget every cached directory path, and have the hooks forget what they cached
        (after a rollback, or after changing the tables by hand: fsck repair)."""
        self._dirs = {"/": ROOT_INO}
        self.dir_paths = {ROOT_INO: "/"}
        self._links_cached = False
        self._limits = None
        if self.base is not None:
            self.base.forget()
        self.hooks.invalidate()

    # --- limits ---------------------------------------------------------------------------------

    @property
    def limits(self) -> Limits:
        """How large a file and the workspace may grow (``agentfs.core.limits``)."""
        if self._limits is None:
            self._limits = limits.load(self.conn)
        return self._limits

    def set_limits(
        self, *, file_size: int | None = None, workspace_size: int | EllipsisType | None = ...
    ) -> Limits:
        """Change the limits every process opening the workspace obeys; returns them::

            ws.set_limits(file_size=1 << 30)  # files up to 1 GiB (EFBIG beyond)
            ws.set_limits(workspace_size=10 << 30)  # the file up to 10 GiB (ENOSPC beyond)
            ws.set_limits(workspace_size=None)  # no quota

        A limit below what the workspace holds now refuses growth only: nothing is removed.
        """
        with self._write():
            now = limits.load(self.conn)
            new = Limits(
                now.file_size if file_size is None else file_size,
                now.workspace_size if workspace_size is ... else workspace_size,
            )
            limits.store(self.conn, new)
            self._limits = new
            return new

    def _check_growth(self, path: str, old_size: int, new_size: int) -> None:
        """EFBIG or ENOSPC before a file grows past a limit (``agentfs.core.limits``)."""
        if new_size > old_size:
            self.limits.check(self.conn, path, old_size, new_size)

    # --- resolution ---------------------------------------------------------------------------

    def _lookup(self, parent_ino: int, name: str) -> tuple[int, int, int] | None:
        """(dentry id, ino, mode) of ``name`` in directory ``parent_ino``, or None."""
        return self.conn.execute(_LOOKUP, (parent_ino, name)).get

    def _resolve_dir(self, path: str, hops: list[int]) -> int:
        """Inode of the directory at normalised ``path``, following symlinks all the way.

        The ancestors not yet cached are resolved first, the shallowest first, so that each
        finds its parent cached: a loop, where resolving each through its parent would
        recurse once a level, and a tree may be deeper than Python's recursion limit."""
        ino = self._dirs.get(path)
        if ino is not None:
            return ino if self.base is None else self._listed(ino)
        pending = []
        above = paths.parent_and_name(path)[0]
        while above not in self._dirs:  # "/" always is
            pending.append(above)
            above = paths.parent_and_name(above)[0]
        for ancestor in reversed(pending):
            self._resolve_one_dir(ancestor, hops)
        return self._resolve_one_dir(path, hops)

    def _resolve_one_dir(self, path: str, hops: list[int]) -> int:
        """``_resolve_dir`` of ``path`` once its parent is cached (or is reached through a
        symlink, which ``_resolve`` follows)."""
        followed = hops[0]
        _, ino, mode = self._resolve(path, True, hops)
        if not is_dir(mode):
            raise fs_error(errno.ENOTDIR, path)
        self._dirs[path] = ino
        if hops[0] != followed:
            self._links_cached = True
        return self._listed(ino)

    def _listed_below(self, top: int) -> None:
        """Bring in every directory of the base at or below directory ``top`` (removing the
        tree then removes, and records the removal of, everything the host holds there; a
        search then misses nothing). Goes by the directories still to come in, a level per
        round, rather than down the whole tree: once the tree is in, it costs a lookup."""
        base = self.base
        if base is None:
            return
        while True:
            where = self.by_inode.path_of(top)
            if where is None:
                return
            below = [
                ino
                for ino in sorted(base.absent_dirs())
                if (at := self.by_inode.path_of(ino)) is not None and paths.is_within(at, where)
            ]
            if not below:
                return
            for ino in below:
                with self.transaction():  # a directory at a time: other writers go between
                    self._listed(ino)

    def _listed(self, dir_ino: int) -> int:
        """``dir_ino``, its entries from the base brought in first if they are not yet
        (``agentfs.core.base``): the one place a directory's entries are first needed."""
        base = self.base
        if base is not None and base.needs(dir_ino):
            if self._readonly:
                raise fs_error(
                    errno.EROFS,
                    self.conn.filename,
                    "a directory of the base is not in the workspace yet; open it writable",
                )
            base.bring_in(dir_ino)
        return dir_ino

    def _resolve(self, path: str, follow: bool, hops: list[int] | None = None) -> tuple:
        """(dentry id or 0 for root, ino, mode) of ``path``; follows a final symlink if asked.

        Errors name the path as given: a failure in an ancestor names that ancestor (as the
        recursion resolves it), a failure after following a symlink names ``path`` itself.
        """
        hops = [0] if hops is None else hops
        start = path
        follow = follow or type(path) is paths.DirPath  # "link/" means the link's target
        while True:
            if path == "/":
                return 0, ROOT_INO, S_IFDIR
            parent, name = paths.parent_and_name(path)
            try:
                found = self._lookup(self._resolve_dir(parent, hops), name)
            except OSError as exc:
                if path is start:
                    raise
                raise fs_error(exc.errno or errno.EIO, start) from None
            if found is None:
                raise not_found(start)
            if not (follow and is_symlink(found[2])):
                if type(start) is paths.DirPath and not is_dir(found[2]):
                    raise fs_error(errno.ENOTDIR, start)
                return found
            path = self._follow(parent, found[1], hops, start)

    def _follow(self, parent: str, link_ino: int, hops: list[int], origin: str) -> str:
        """The normalised path a symlink in directory ``parent`` points at; ELOOP (naming
        ``origin``, the path the caller asked for) after MAX_SYMLINK_HOPS."""
        hops[0] += 1
        if hops[0] > MAX_SYMLINK_HOPS:
            raise fs_error(errno.ELOOP, origin)
        target = self.conn.execute("SELECT target FROM fs_symlink WHERE ino = ?", (link_ino,)).get
        return paths.normalize(target if target.startswith("/") else paths.join(parent, target))

    def directory_ino(self, path: str) -> int:
        """The inode of the directory at normalised ``path``, symlinks followed (ENOENT,
        ENOTDIR as for any path). Inside a transaction, as every read is."""
        return self._resolve_dir(path, [0])

    def _parent(self, path: str, create: bool = False) -> tuple[int, str]:
        """(parent directory ino, name) for creating or replacing ``path``."""
        parent, name = paths.parent_and_name(path)
        return (self.makedirs(parent) if create else self._resolve_dir(parent, [0])), name

    def makedirs(self, path: str) -> int:
        """``mkdir -p`` of normalised ``path`` inside an open write transaction; returns the
        directory's ino."""
        try:
            return self._resolve_dir(path, [0])
        except FileNotFoundError:
            pass
        # the failed resolution cached every ancestor that exists: make the rest, downwards
        missing = [path]
        above = paths.parent_and_name(path)[0]
        while above not in self._dirs:
            missing.append(above)
            above = paths.parent_and_name(above)[0]
        ino = self._dirs[above]
        for directory in reversed(missing):
            ino = self._create(ino, paths.parent_and_name(directory)[1], S_IFDIR | 0o755)
            self._dirs[directory] = ino
        return ino

    def _stat_ino(self, ino: int) -> Stat:
        return exact(Stat(*self.conn.execute(_STAT, (ino,)).get), self.conn)

    # --- creating and removing names ---------------------------------------------------------

    def _create(
        self, parent_ino: int, name: str, mode: int, size: int = 0, now: int | None = None
    ) -> int:
        """New inode + dentry; directories count in their parent's nlink. Updates parent times."""
        sec, nsec = split_ns(now_ns() if now is None else now)
        directory = mode & S_IFMT == S_IFDIR
        uid, gid = self.owner
        ino = self.conn.execute(
            _CREATE_INODE,
            (mode, 2 if directory else 1, uid, gid, size, sec, sec, sec, nsec, nsec, nsec),
        ).get
        self.hooks.created(ino)
        try:
            self.conn.execute(_ADD_DENTRY, (name, parent_ino, ino))
        except apsw.ConstraintError:
            raise fs_error(errno.EEXIST, name) from None
        self.conn.execute(_TOUCH_DIR, (1 if directory else 0, sec, nsec, sec, nsec, parent_ino))
        self.hooks.dir_changed(parent_ino)
        return ino

    def _make_in(
        self,
        parent_ino: int,
        name: str,
        mode: int,
        shown: str,
        size: int = 0,
        now: int | None = None,
    ) -> int:
        """A new inode named ``name`` in directory ``parent_ino``; EEXIST (naming ``shown``)
        when the name is taken."""
        if self._lookup(parent_ino, name) is not None:
            raise fs_error(errno.EEXIST, shown)
        return self._create(parent_ino, name, mode, size, now)

    def nameless_file(self, mode: int, data: bytes) -> int:
        """A new regular file with no name yet holding ``data`` (history restoring a version
        whose bytes were kept aside links it next)."""
        sec, nsec = split_ns(now_ns())
        uid, gid = self.owner
        ino = self.conn.execute(
            _CREATE_INODE, (mode, 0, uid, gid, len(data), sec, sec, sec, nsec, nsec, nsec)
        ).get
        self.hooks.created(ino)
        self.chunks.append_new(ino, 0, data)
        return ino

    def _unlink_dentry(self, dentry_id: int, parent_ino: int, ino: int, mode: int) -> None:
        """Drop one name; an inode left with none goes to the orphan queue, unless history
        (a version or a snapshot) still holds it."""
        sec, nsec = split_ns(now_ns())
        self.conn.execute("DELETE FROM fs_dentry WHERE id = ?", (dentry_id,))
        self.conn.execute(_TOUCH_DIR, (-1 if is_dir(mode) else 0, sec, nsec, sec, nsec, parent_ino))
        self.hooks.dir_changed(parent_ino)
        if is_dir(mode):
            self.orphans.release(ino, mode, 0)
            return
        nlink, size = next(
            self.conn.execute(
                "UPDATE fs_inode SET nlink = nlink - 1, ctime = ?, ctime_nsec = ? WHERE ino = ?"
                " RETURNING nlink, size",
                (sec, nsec, ino),
            )
        )
        if nlink <= 0:
            if not self.hooks.holds(ino):
                self.orphans.release(ino, mode, size)
            else:  # a snapshot keeps it: a file of the base keeps what its host file holds now
                self.chunks.present(ino)

    # --- reading ------------------------------------------------------------------------------

    def stat(self, path: str, *, follow_symlinks: bool = True) -> Stat:
        path = paths.normalize(path)
        with self._read():
            return self._stat(path, follow_symlinks)

    def _stat(self, path: str, follow: bool) -> Stat:
        """Stat of normalised ``path`` inside an open transaction."""
        if type(path) is str and path != "/":  # the common case: one query, cached parent
            parent, name = paths.parent_and_name(path)
            row = self.conn.execute(_STAT_CHILD, (self._resolve_dir(parent, [0]), name)).get
            if row is None:
                raise not_found(path)
            if not (follow and is_symlink(row[1])):
                return exact(Stat(*row), self.conn)
        return self._stat_ino(self._resolve(path, follow)[1])

    def lstat(self, path: str) -> Stat:
        return self.stat(path, follow_symlinks=False)

    def exists(self, path: str) -> bool:
        """True when ``path`` names something (following symlinks, like ``os.path.exists``)."""
        return treeops.exists(self, path)

    def read(
        self, path: str, offset: int = 0, length: int | None = None, *, track: bool = True
    ) -> bytes:
        """The file's bytes, or ``length`` bytes from ``offset`` (short at the end of file).

        With a thread on the handle this is a tracked read, unless ``track`` is false: a tool
        that reads a file only to edit it must not count as its caller having read it."""
        if offset < 0 or (length is not None and length < 0):
            raise fs_error(errno.EINVAL, str(path), "offset and length must be >= 0")
        path = paths.normalize(path)
        tracked = track and not self._readonly  # a read-only handle records nothing
        thread = self.hooks.reader() if tracked else None
        # a tracked read's one write is one statement: inside a caller's transaction it
        # needs no savepoint of its own
        with self._write(savepoint=False) if thread is not None else self._read():
            st = self._stat(path, True)  # inode and size in one query
            if is_dir(st.st_mode):
                raise fs_error(errno.EISDIR, path)
            data = self.chunks.read(st.st_ino, st.st_size, offset, length)
            if thread is not None:
                whole = offset == 0 and len(data) == st.st_size
                self.hooks.read(thread, path, st, data if whole else None)
            return data

    def open(
        self,
        path: str,
        mode: str = "r",
        *,
        encoding: str = "utf-8",
        buffer_limit: int = handle.BUFFER_LIMIT,
    ) -> handle.WorkspaceFile | io.TextIOWrapper:
        """A file object (``read``, ``write``, ``seek``, ``tell``, ``truncate``, ``flush``,
        ``close``; a context manager) for ``mode`` as the built-in ``open`` takes it: binary
        with ``b``, else text in ``encoding``. What it writes commits atomically at each
        ``flush`` and at ``close``, which records one version (``agentfs.core.handle``)."""
        return handle.open_file(self, path, mode, encoding, buffer_limit)

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read(path).decode(encoding)

    def readlink(self, path: str) -> str:
        path = paths.normalize(path)
        with self._read():
            _, ino, mode = self._resolve(path, False)
            if not is_symlink(mode):
                raise fs_error(errno.EINVAL, path, "not a symbolic link")
            return self.conn.execute("SELECT target FROM fs_symlink WHERE ino = ?", (ino,)).get

    def scandir(self, path: str = "/") -> list[DirEntry]:
        """Entries of a directory with their inode and type, sorted by name (one JOIN)."""
        path = paths.normalize(path)
        with self._read():
            ino = self._resolve_dir(path, [0])
            rows = self.conn.execute(
                "SELECT d.name, d.ino, i.mode FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino"
                " WHERE d.parent_ino = ? ORDER BY d.name",
                (ino,),
            )
            return [DirEntry(*row) for row in rows]

    def readdir_plus(self, path: str = "/") -> list[tuple[str, Stat]]:
        """Every entry of a directory with its ``lstat``, sorted by name, in one query (what
        ``ls -l`` and a FUSE readdirplus need, without one stat per entry)."""
        path = paths.normalize(path)
        with self._read():
            rows = self.conn.execute(_READDIR_PLUS, (self._resolve_dir(path, [0]),))
            conn = self.conn
            return [(row[0], exact(Stat._make(row[1:]), conn)) for row in rows]

    def listdir(self, path: str = "/") -> list[str]:
        """Names in a directory, sorted."""
        path = paths.normalize(path)
        with self._read():
            joined = self.conn.execute(_LIST_NAMES, (self._resolve_dir(path, [0]),)).get
        if joined is None:
            return []
        names = joined.split("\0")
        names.sort()  # code-point order = SQLite's BINARY order of UTF-8 text
        return names

    # --- writing content -----------------------------------------------------------------------

    def write(
        self, path: str, data: bytes | str, *, parents: bool = False, mode: int = 0o644
    ) -> Stat:
        """Create or replace a whole file (following a symlink at ``path``, like ``open``)."""
        return self._put(path, data, parents, mode, exclusive=False)[0]

    def put(
        self, path: str, data: bytes | str, *, parents: bool = False, exclusive: bool = False
    ) -> tuple[Stat, bool]:
        """``write`` that says whether it created the file: ``(stat, created)``, for a caller
        that must tell a new file from a replaced one (one walk of the path instead of a
        ``stat`` first). ``exclusive``: create only; anything at ``path``, a dangling symlink
        too, is EEXIST and nothing changes (``open(path, "x")``). A new file's mode is 0644."""
        return self._put(path, data, parents, 0o644, exclusive=exclusive)

    def _put(
        self, path: str, data: bytes | str, parents: bool, mode: int, *, exclusive: bool
    ) -> tuple[Stat, bool]:
        data = _as_bytes(data)
        path = paths.normalize(path)
        now = now_ns()
        with self._write():
            target = self._open_for_write(path, parents, mode, len(data), now, exclusive=exclusive)
            self._check_growth(path, 0 if target.created else target.size, len(data))
            ino = target.ino
            change = Change(data)
            if target.created:  # the inode already has the final size: only chunks to add
                self.chunks.append_new(ino, 0, data)
                self.hooks.changed(target, change, len(data))
                perm = S_IFREG | (mode & 0o7777)
                return Stat(ino, perm, 1, 0, 0, len(data), now, now, now), True
            self.hooks.guard(target)
            rewrite = self.hooks.changing(target, change)
            if not rewrite.needed:  # the same bytes, and history knows them: times only
                self._touch(target, now)
                return self._stat_ino(ino), False
            if rewrite.in_place:
                self.chunks.replace(ino, data, rewrite.in_place)
            else:  # no chunk left (history took them, or it was empty): all are new
                self.chunks.append_new(ino, 0, data)
            st = self._set_content(ino, len(data))
            self.hooks.changed(target, change, len(data), rewrite.memo)
            return st, False

    def create(self, path: str, mode: int = 0o644) -> Stat:
        """A new empty regular file, EEXIST if ``path`` names anything (``O_CREAT|O_EXCL``).
        It gets no version yet: its first content does, when a handle that writes it closes
        (so a program's open-write-close of a new file is one version, as for any file)."""
        path = paths.normalize(path)
        with self._write():
            return self._create_file_in(*self._parent(path), mode, path)

    def _create_file_in(self, parent_ino: int, name: str, mode: int, shown: str) -> Stat:
        now = now_ns()
        perm = S_IFREG | (mode & 0o7777)
        ino = self._make_in(parent_ino, name, perm, shown, 0, now)
        return Stat(ino, perm, 1, 0, 0, 0, now, now, now)

    def pwrite(self, path: str, data: bytes | str, offset: int) -> int:
        """Write at ``offset`` (a gap after the end reads as zeros); returns bytes written."""
        if offset < 0:
            raise fs_error(errno.EINVAL, str(path), "offset must be >= 0")
        data = _as_bytes(data)
        self._write_at(path, data, offset, parents=False)
        return len(data)

    def append(self, path: str, data: bytes | str, *, parents: bool = False) -> int:
        """Write at the end of the file (creating it, and its parents if asked); new size."""
        return self._write_at(path, _as_bytes(data), None, parents=parents)

    def _write_at(self, path: str, data: bytes, offset: int | None, *, parents: bool) -> int:
        """Write ``data`` at ``offset`` (None: the end), creating the file; the new size."""
        path = paths.normalize(path)
        now = now_ns()
        with self._write():
            target = self._open_for_write(path, parents, 0o644, 0, now)
            size = target.size
            at = size if offset is None else offset
            self._check_growth(path, size, at + len(data))
            self.hooks.guard(target)
            if not target.created and self._unchanged_by(target.ino, size, at, data):
                self._touch(target, now)  # nothing changes: no copy, no version
                return size
            change = Change(unchanged_below=min(at, size), appended=data if at == size else None)
            self.hooks.changing(target, change)
            new_size = self.chunks.write(target.ino, size, at, data)
            self._set_content(target.ino, new_size)
            self.hooks.changed(target, change, new_size)
        return new_size

    def truncate(self, path: str, size: int) -> None:
        path = paths.normalize(path)
        with self._write():
            self._truncate(self._open_for_write(path, False, 0o644, 0, create=False), size, path)

    def _truncate(self, target: WriteTarget, size: int, shown: str) -> None:
        if size < 0:
            raise fs_error(errno.EINVAL, shown, "size must be >= 0")
        now = now_ns()
        old_size = target.size
        self._check_growth(shown, old_size, size)
        self.hooks.guard(target)
        if old_size == size:
            self._touch(target, now)
            return
        change = Change(unchanged_below=min(size, old_size))
        self.hooks.changing(target, change)
        self.chunks.truncate(target.ino, old_size, size)
        self._set_content(target.ino, size)
        self.hooks.changed(target, change, size)

    def _target_of(self, ino: int) -> WriteTarget | None:
        """The regular file ``ino`` as a write's target, named by its oldest name; None when
        it has no name (unlinked); EISDIR or EINVAL when it is no regular file."""
        row = self.conn.execute(_FIRST_NAME, (ino,)).get
        if row is None:
            return None
        dentry_id, parent_ino, name, size, mode = row  # type: ignore[misc]
        self._require_file(f"inode {ino}", mode)
        filled = self.chunks.present(ino)  # a change starts from the bytes it has
        size = size if filled is None else filled
        return WriteTarget(ino, False, dentry_id, parent_ino, name, size)

    def _unchanged_by(self, ino: int, size: int, at: int, data: bytes) -> bool:
        """Would writing ``data`` at ``at`` leave the file's bytes as they are?"""
        end = at + len(data)
        return end <= size and self.chunks.read(ino, size, at, len(data)) == data

    def _open_for_write(
        self,
        path: str,
        parents: bool,
        mode: int,
        size: int,
        now: int | None = None,
        *,
        create: bool = True,
        exclusive: bool = False,
    ) -> WriteTarget:
        """The regular file at ``path`` after symlinks, or (with ``create``) a new inode
        recorded as ``size`` bytes long whose chunks the caller adds; with ``exclusive``
        only the new inode (EEXIST when anything is at ``path``)."""
        if type(path) is paths.DirPath or path == "/":  # open("x/", O_CREAT): a directory
            try:
                self._resolve(path, True)
            except (FileNotFoundError, NotADirectoryError) as exc:
                if exc.filename != path:
                    raise  # a parent is missing or not a directory
            raise fs_error(errno.EISDIR, path)
        hops = [0]
        start = path
        while True:
            try:
                parent_ino, name = self._parent(path, create=parents)
            except OSError as exc:
                if path is start:
                    raise
                raise fs_error(exc.errno or errno.EIO, start) from None
            found = self.conn.execute(_LOOKUP_FILE, (parent_ino, name)).get
            if found is not None and exclusive:
                raise fs_error(errno.EEXIST, start)
            if found is None:
                if not create:
                    raise not_found(start)
                perm = S_IFREG | (mode & 0o7777)
                ino = self._create(parent_ino, name, perm, size, now)
                return WriteTarget(ino, True, 0, parent_ino, name, size)
            if is_symlink(found[2]):
                path = self._follow(paths.parent_and_name(path)[0], found[1], hops, start)
                continue
            self._require_file(start, found[2])
            filled = self.chunks.present(found[1])  # a change starts from the bytes it has
            size = found[3] if filled is None else filled
            return WriteTarget(found[1], False, found[0], parent_ino, name, size)

    def _require_file(self, path: str, mode: int) -> None:
        if is_dir(mode):
            raise fs_error(errno.EISDIR, path)
        if mode & S_IFMT != S_IFREG:
            raise fs_error(errno.EINVAL, path, "not a regular file")

    def _touch(self, target: WriteTarget, now: int) -> None:
        """A write that changed no byte still sets mtime and ctime, as the kernel does."""
        sec, nsec = split_ns(now)
        self.conn.execute(_TOUCH_FILE, (sec, nsec, sec, nsec, target.ino))
        self.hooks.touched(target)

    def size_of(self, ino: int) -> int:
        """The size of inode ``ino``, inside a transaction the caller holds."""
        return self.conn.execute("SELECT size FROM fs_inode WHERE ino = ?", (ino,)).get

    def _set_content(self, ino: int, size: int) -> Stat:
        """Set a changed file's size and times; its stat after (one statement, RETURNING)."""
        sec, nsec = split_ns(now_ns())
        return exact(
            Stat(*self.conn.execute(_SET_CONTENT, (size, sec, nsec, sec, nsec, ino)).get), self.conn
        )

    # --- the namespace ---------------------------------------------------------------------------

    def mkdir(
        self, path: str, mode: int = 0o755, *, parents: bool = False, exist_ok: bool = False
    ) -> Stat:
        path = paths.normalize(path)
        with self._write():
            if (parents or exist_ok) and self._is_dir(path):
                return self._stat_ino(self._resolve_dir(path, [0]))
            if path == "/":
                raise fs_error(errno.EEXIST, path)
            parent_ino, name = self._parent(path, create=parents)
            return self._stat_ino(self._make_in(parent_ino, name, S_IFDIR | (mode & 0o7777), path))

    def _is_dir(self, path: str) -> bool:
        try:
            return is_dir(self._resolve(path, True)[2])
        except (FileNotFoundError, NotADirectoryError):
            return False

    def symlink(self, target: str, path: str) -> Stat:
        """Create ``path`` pointing at ``target`` (stored verbatim; need not exist)."""
        path = paths.normalize(path)
        with self._write():
            return self._symlink_in(*self._parent(path), target, path)

    def _symlink_in(self, parent_ino: int, name: str, target: str, shown: str) -> Stat:
        if not target or "\0" in target or len(target.encode("utf-8")) >= paths.PATH_MAX:
            raise fs_error(errno.EINVAL, shown, "symlink target must be 1..4095 bytes, no NUL")
        ino = self._make_in(parent_ino, name, S_IFLNK | 0o777, shown, len(target.encode("utf-8")))
        self.conn.execute("INSERT INTO fs_symlink(ino, target) VALUES (?, ?)", (ino, target))
        return self._stat_ino(ino)

    def mknod(self, path: str, mode: int, rdev: int = 0) -> Stat:
        """Create a FIFO, a socket or a device node (``mknod(2)``, ``mkfifo``): a name and
        an inode with no content; ``rdev`` is a device's number. EEXIST if ``path`` is taken;
        regular files, directories and symlinks have their own calls (EINVAL here)."""
        path = paths.normalize(path)
        with self._write():
            return self._mknod_in(*self._parent(path), mode, rdev, path)

    def _mknod_in(self, parent_ino: int, name: str, mode: int, rdev: int, shown: str) -> Stat:
        if mode & S_IFMT not in (S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK):
            raise fs_error(errno.EINVAL, shown, "mknod makes FIFOs, sockets and devices")
        ino = self._make_in(parent_ino, name, mode & (S_IFMT | 0o7777), shown)
        if rdev:
            self.conn.execute("UPDATE fs_inode SET rdev = ? WHERE ino = ?", (rdev, ino))
        return self._stat_ino(ino)

    def link(self, src: str, dst: str) -> Stat:
        """Hard link: ``dst`` becomes another name of ``src``'s inode (not for directories)."""
        src, dst = paths.normalize(src), paths.normalize(dst)
        with self._write():
            _, ino, mode = self._resolve(src, False)
            return self._link_in(ino, mode, *self._parent(dst), src, dst)

    def _link_in(
        self, ino: int, mode: int, parent_ino: int, name: str, shown_src: str, shown_dst: str
    ) -> Stat:
        if self._lookup(parent_ino, name) is not None:
            raise fs_error(errno.EEXIST, shown_dst)
        if is_dir(mode):
            raise fs_error(errno.EPERM, shown_src, "hard links to directories are not allowed")
        self._link_existing(parent_ino, name, ino)
        if mode & S_IFMT == S_IFREG:
            self.hooks.linked(parent_ino, name, ino)
        return self._stat_ino(ino)

    def relink(self, path: str, ino: int) -> None:
        """Name the nameless inode ``ino`` ``path`` (parents made), in place of the file or
        symlink there, which is unlinked without a hook of its own: history restoring a
        version records the one change itself. EISDIR if a directory has the name."""
        parent_ino, name = self._parent(path, create=True)
        existing = self._lookup(parent_ino, name)
        if existing is not None:
            if is_dir(existing[2]):
                raise fs_error(errno.EISDIR, path, "a directory has this name now")
            self._unlink_dentry(existing[0], parent_ino, existing[1], existing[2])
        self._link_existing(parent_ino, name, ino)

    def _link_existing(self, parent_ino: int, name: str, ino: int) -> None:
        """One more name for inode ``ino`` (a hard link, or history relinking a frozen one)."""
        sec, nsec = split_ns(now_ns())
        self.conn.execute(_ADD_DENTRY, (name, parent_ino, ino))
        self.conn.execute(_TOUCH_DIR, (0, sec, nsec, sec, nsec, parent_ino))
        self.conn.execute(
            "UPDATE fs_inode SET nlink = nlink + 1, ctime = ?, ctime_nsec = ? WHERE ino = ?",
            (sec, nsec, ino),
        )
        self.hooks.dir_changed(parent_ino)

    def remove(self, path: str, *, recursive: bool = False, directory: bool | None = None) -> None:
        """Remove a file, symlink or empty directory; with ``recursive``, a whole tree.
        ``directory=True`` removes only a directory (ENOTDIR otherwise: ``rmdir(2)``),
        ``directory=False`` only something else (EISDIR: ``unlink(2)``).

        A tree's names go in this transaction; its inodes' content is freed right after, in
        batches (``Orphans.purge``), so a crash in between loses nothing and leaks nothing.
        """
        path = paths.normalize(path)
        if path == "/":
            raise fs_error(errno.EBUSY, path, "cannot remove the workspace root")
        with self._write():
            found = self._resolve(path, False)
            parent, name = paths.parent_and_name(path)
            parent_ino = self._resolve_dir(parent, [0])
            self._remove(
                parent_ino, name, found, recursive=recursive, directory=directory, shown=path
            )
        self.orphans.purge_due()

    def _remove(
        self,
        parent_ino: int,
        name: str,
        found: tuple[int, int, int],
        *,
        recursive: bool,
        directory: bool | None,
        shown: str,
    ) -> None:
        """Remove the entry ``name`` of ``parent_ino``, ``found`` (its dentry id, inode and
        mode)."""
        dentry_id, ino, mode = found
        if directory is not None and directory != is_dir(mode):
            raise fs_error(errno.ENOTDIR if directory else errno.EISDIR, shown)
        if is_dir(mode) and recursive:
            self._listed_below(ino)  # what the host holds there goes too, recorded
        elif is_dir(mode):
            self._listed(ino)  # empty only if the host's entries are not there either
        tree = is_dir(mode) and self.conn.execute(_HAS_ENTRIES, (ino,)).get
        if tree:
            if not recursive:
                raise fs_error(errno.ENOTEMPTY, shown)
            self.hooks.deleting(parent_ino, name, mode)
            self.orphans.unlink_subtree(ino, track_dirty=self.hooks.tracks_dirs())
        else:
            self.hooks.deleting(parent_ino, name, mode)
        self._unlink_dentry(dentry_id, parent_ino, ino, mode)
        self._forget_removed(parent_ino, name, ino, mode, tree=bool(tree))

    def _forget_removed(
        self, parent_ino: int, name: str, ino: int, mode: int, *, tree: bool
    ) -> None:
        """Drop what the path caches know of a removed directory or symlink. When no cached
        path went through a symlink and the directory was empty, only its own entry can
        name it (its path, link-free): ``rm -rf`` then keeps every other directory cached,
        where dropping them all made each next unlink walk up again."""
        if not _may_be_cached(mode):
            return
        if tree or self._links_cached:
            self.drop_caches()
            return
        self._dirs.pop(self.path_in(parent_ino, name), None)
        self.dir_paths.pop(ino, None)

    def rename(self, src: str, dst: str) -> None:
        """Atomic ``rename(2)``: replaces a file or an empty directory at ``dst``."""
        src, dst = paths.normalize(src), paths.normalize(dst)
        if src == "/" or dst == "/":
            raise fs_error(errno.EBUSY, "/", "cannot rename the workspace root")
        with self._write():
            # rename(2)'s order: both parent directories, then the source name.
            src_dir, src_name = paths.parent_and_name(src)
            src_parent = self._resolve_dir(src_dir, [0])
            dst_parent, name = self._parent(dst)
            found = self._resolve(src, False)
            self._rename((src_parent, src_name), found, (dst_parent, name), src, dst)
        self.orphans.purge_due()

    def _rename(
        self, src: Place, found: tuple[int, int, int], dst: Place, shown_src: str, shown_dst: str
    ) -> None:
        """Move the entry at ``src``, ``found`` (its dentry id, inode and mode), to ``dst``."""
        src_parent, dst_parent, name = src[0], dst[0], dst[1]
        dentry_id, ino, mode = found
        if is_dir(mode) and self._inside(dst_parent, ino):
            raise fs_error(errno.EINVAL, shown_dst, f"cannot move {shown_src} into itself")
        existing = self._lookup(dst_parent, name)
        if existing is not None:
            if existing[1] == ino:
                return  # same inode (itself or a hard link): POSIX says do nothing
            self._check_replace(shown_dst, mode, existing)
            self._unlink_dentry(existing[0], dst_parent, existing[1], existing[2])
        self.hooks.moving(src, dst, ino, mode)
        sec, nsec = split_ns(now_ns())
        self.conn.execute(
            "UPDATE fs_dentry SET parent_ino = ?, name = ? WHERE id = ?",
            (dst_parent, name, dentry_id),
        )
        moved_dir = 1 if is_dir(mode) and src_parent != dst_parent else 0
        self.conn.execute(_TOUCH_DIR, (-moved_dir, sec, nsec, sec, nsec, src_parent))
        self.conn.execute(_TOUCH_DIR, (moved_dir, sec, nsec, sec, nsec, dst_parent))
        self.hooks.dir_changed(src_parent)
        self.hooks.dir_changed(dst_parent)
        self.conn.execute(
            "UPDATE fs_inode SET ctime = ?, ctime_nsec = ? WHERE ino = ?", (sec, nsec, ino)
        )
        if _may_be_cached(mode) or (existing is not None and _may_be_cached(existing[2])):
            self.drop_caches()

    def exchange(self, a: str, b: str) -> None:
        """Atomically swap the names ``a`` and ``b`` (``renameat2(..., RENAME_EXCHANGE)``):
        both must exist (ENOENT), may be of any types and in different directories, and
        neither may be a directory holding the other (EINVAL). Each inode keeps its number
        and its content; only which name leads to which changes."""
        a, b = paths.normalize(a), paths.normalize(b)
        if a == "/" or b == "/":
            raise fs_error(errno.EBUSY, "/", "cannot exchange the workspace root")
        with self._write():
            dir_a, name_a = paths.parent_and_name(a)
            dir_b, name_b = paths.parent_and_name(b)
            place_a = (self._resolve_dir(dir_a, [0]), name_a)
            place_b = (self._resolve_dir(dir_b, [0]), name_b)
            found_a, found_b = self._resolve(a, False), self._resolve(b, False)
            self._exchange(place_a, found_a, place_b, found_b, a, b)

    def _exchange(
        self,
        a: Place,
        found_a: tuple[int, int, int],
        b: Place,
        found_b: tuple[int, int, int],
        shown_a: str,
        shown_b: str,
    ) -> None:
        """Swap what is at ``a`` and ``b`` (``found_a``, ``found_b``: each one's dentry id,
        inode and mode)."""
        (parent_a, _), (parent_b, _) = a, b
        (dentry_a, ino_a, mode_a), (dentry_b, ino_b, mode_b) = found_a, found_b
        if is_dir(mode_a) and self._inside(parent_b, ino_a):
            raise fs_error(errno.EINVAL, shown_b, f"cannot move {shown_a} into itself")
        if is_dir(mode_b) and self._inside(parent_a, ino_b):
            raise fs_error(errno.EINVAL, shown_a, f"cannot move {shown_b} into itself")
        if ino_a == ino_b:
            return  # one inode under both names (itself or a hard link): nothing to do
        self.hooks.exchanging(a, b, (ino_a, mode_a), (ino_b, mode_b))
        # each name keeps its dentry (and its readdir place) and takes the other's inode
        self.conn.execute(
            "UPDATE fs_dentry SET ino = CASE id WHEN ? THEN ? ELSE ? END WHERE id IN (?, ?)",
            (dentry_a, ino_b, ino_a, dentry_a, dentry_b),
        )
        sec, nsec = split_ns(now_ns())
        # a directory that changes parent moves one link count with it
        shift = is_dir(mode_b) - is_dir(mode_a) if parent_a != parent_b else 0
        self.conn.execute(_TOUCH_DIR, (shift, sec, nsec, sec, nsec, parent_a))
        self.conn.execute(_TOUCH_DIR, (-shift, sec, nsec, sec, nsec, parent_b))
        self.hooks.dir_changed(parent_a)
        self.hooks.dir_changed(parent_b)
        self.conn.execute(
            "UPDATE fs_inode SET ctime = ?, ctime_nsec = ? WHERE ino IN (?, ?)",
            (sec, nsec, ino_a, ino_b),
        )
        if _may_be_cached(mode_a) or _may_be_cached(mode_b):
            self.drop_caches()

    def realpath(self, path: str) -> str:
        """``path`` with every symlink on it resolved, like ``os.path.realpath``: what does
        not exist is kept as written (a dangling symlink leads to where its target would be),
        so a policy can judge a path before a write creates it."""
        path = paths.normalize(path)
        with self._read():
            return self._realpath_lenient(path, [0])

    def names(self, path: str) -> list[str]:
        """Every path naming what ``path`` leads to (symlinks followed): its real path, and
        for a file with hard links each of its other names too. What does not exist is its
        real path alone (as ``realpath`` keeps it). A policy judges a file by all of them, so
        that another name cannot reach what a rule denies."""
        path = paths.normalize(path)
        with self._read():
            real = self._realpath_lenient(path, [0])
            try:
                st = self._stat(real, False)
            except (FileNotFoundError, NotADirectoryError):
                return [real]
            return self.by_inode.names(real, st)

    def dir_path(self, ino: int) -> str:
        """The path of directory ``ino`` (symlink-free: a directory has one name), inside a
        transaction the caller holds; ENOENT when it has none (``ByInode.path_of``)."""
        path = self.dir_paths.get(ino)
        if path is None:
            path = self.by_inode.path_of(ino)
            if path is None:
                raise fs_error(errno.ENOENT, f"inode {ino}", "the directory has no path")
        return path

    def path_in(self, parent_ino: int, name: str) -> str:
        """The symlink-free path of the entry ``name`` of directory ``parent_ino``: what
        history keys a file by, made from inode numbers (no path is resolved)."""
        return paths.join(self.dir_path(parent_ino), name)

    def _realpath_lenient(self, path: str, hops: list[int]) -> str:
        real = "/"
        parts = paths.split(path)
        for i, name in enumerate(parts):
            try:
                found = self._lookup(self._resolve_dir(real, hops), name)
            except (FileNotFoundError, NotADirectoryError):
                found = None
            if found is None:  # the rest does not exist: nothing more to follow
                return paths.normalize("/".join([real, *parts[i:]]))
            real = paths.join(real, name)
            if is_symlink(found[2]):
                target = self._follow(paths.parent_and_name(real)[0], found[1], hops, path)
                real = self._realpath_lenient(target, hops)
        return real

    def _inside(self, parent_ino: int, directory: int) -> bool:
        """Would a new entry of directory ``parent_ino`` lie inside directory ``directory``
        (or be it)? Decided on their paths, which name no symlink."""
        return paths.is_within(self.dir_path(parent_ino), self.dir_path(directory))

    def _check_replace(self, dst: str, mode: int, existing: tuple[int, int, int]) -> None:
        if is_dir(mode) and not is_dir(existing[2]):
            raise fs_error(errno.ENOTDIR, dst)
        if not is_dir(mode) and is_dir(existing[2]):
            raise fs_error(errno.EISDIR, dst)
        if (
            is_dir(existing[2])
            and self.conn.execute(_HAS_ENTRIES, (self._listed(existing[1]),)).get
        ):
            raise fs_error(errno.ENOTEMPTY, dst)

    # --- metadata -------------------------------------------------------------------------

    def chmod(self, path: str, mode: int) -> None:
        path = paths.normalize(path)
        with self._write():
            dentry_id, ino, _ = self._resolve(path, True)
            self._set_attrs(dentry_id, ino, Attrs(mode=mode))

    def chown(self, path: str, uid: int, gid: int, *, follow_symlinks: bool = True) -> None:
        """Set the owner and group (-1 leaves one as it is); ctime becomes now. Ownership is
        recorded, not enforced: the workspace has no users (the FUSE mount shows it, and the
        kernel checks it there with ``default_permissions``)."""
        path = paths.normalize(path)
        with self._write():
            dentry_id, ino, _ = self._resolve(path, follow_symlinks)
            self._set_attrs(dentry_id, ino, Attrs(uid=uid, gid=gid))

    def utime(
        self, path: str, ns: tuple[int, int] | None = None, *, follow_symlinks: bool = True
    ) -> None:
        """Set (atime_ns, mtime_ns); None means now. ctime becomes now, as in the kernel."""
        path = paths.normalize(path)
        if ns is None:
            now = now_ns()
            ns = (now, now)
        _check_times(ns, path)
        with self._write():
            dentry_id, ino, _ = self._resolve(path, follow_symlinks)
            self._set_attrs(dentry_id, ino, Attrs(times=ns))

    def set_attrs(self, ino: int, attrs: Attrs) -> Stat:
        """Change inode ``ino``'s mode, owner or times by number, named or not: what
        ``fchmod``, ``fchown`` and ``futimens`` do to an open file, which may have been
        unlinked meanwhile (history keeps versions by path, and metadata has none, so
        nothing is lost by having no path). Returns its stat after; ENOENT if no such inode."""
        if attrs.times is not None:
            _check_times(attrs.times, f"inode {ino}")
        with self._write():
            st = self._set_attrs(None, ino, attrs)
            if st is None:
                raise fs_error(errno.ENOENT, f"inode {ino}")
            return st

    def _set_attrs(self, dentry_id: int | None, ino: int, attrs: Attrs) -> Stat | None:
        """One UPDATE of what ``attrs`` sets, ctime now; snapshots told (``names_changed``;
        ``dentry_id`` None: any name of the inode, found only if snapshots need it).
        Returns the inode's stat after, None if there is no such inode."""
        sec, nsec = split_ns(now_ns())
        sets, args = ["ctime = ?", "ctime_nsec = ?"], [sec, nsec]
        if attrs.mode is not None:
            sets.append("mode = (mode & ?) | ?")
            args += [S_IFMT, attrs.mode & 0o7777]
        for column, value in (("uid", attrs.uid), ("gid", attrs.gid)):
            if value >= 0:
                sets.append(f"{column} = ?")
                args.append(value)
        if attrs.times is not None:
            (a, a_ns), (m, m_ns) = split_ns(attrs.times[0]), split_ns(attrs.times[1])
            sets.append("atime = ?, atime_nsec = ?, mtime = ?, mtime_nsec = ?")
            args += [a, a_ns, m, m_ns]
        row = self.conn.execute(
            f"UPDATE fs_inode SET {', '.join(sets)} WHERE ino = ? RETURNING {STAT_COLUMNS}",
            (*args, ino),
        ).get
        if row is None:
            return None
        self.hooks.names_changed(dentry_id, ino)
        return exact(Stat(*row), self.conn)  # type: ignore[misc]

    # --- extended attributes (``agentfs.core.xattrs`` has the rules) -------------------------

    def getxattr(self, path: str, name: str | bytes, *, follow_symlinks: bool = True) -> bytes:
        """The value of attribute ``name`` of ``path``, like ``os.getxattr``; ENODATA if unset."""
        key = xattrs.valid_name(name, str(path))
        path = paths.normalize(path)
        with self._read():
            return self.xattrs.get(self._resolve(path, follow_symlinks)[1], key, path)

    def listxattr(self, path: str = "/", *, follow_symlinks: bool = True) -> list[str]:
        """The attribute names of ``path``, sorted (``os.listxattr`` keeps the kernel's order)."""
        path = paths.normalize(path)
        with self._read():
            return self.xattrs.list(self._resolve(path, follow_symlinks)[1], path)

    def setxattr(
        self,
        path: str,
        name: str | bytes,
        value: bytes,
        flags: int = 0,
        *,
        follow_symlinks: bool = True,
    ) -> None:
        """Set attribute ``name`` of ``path``, like ``os.setxattr``: ``flags`` may be
        ``os.XATTR_CREATE`` (EEXIST if it is set) or ``os.XATTR_REPLACE`` (ENODATA if not)."""
        key, value = xattrs.valid_setting(name, value, flags, str(path))
        path = paths.normalize(path)
        with self._write():
            ino = self._resolve(path, follow_symlinks)[1]
            self.xattrs.set(ino, key, value, flags, path)

    def removexattr(self, path: str, name: str | bytes, *, follow_symlinks: bool = True) -> None:
        """Remove attribute ``name`` of ``path``, like ``os.removexattr``; ENODATA if unset."""
        key = xattrs.valid_name(name, str(path))
        path = paths.normalize(path)
        with self._write():
            self.xattrs.remove(self._resolve(path, follow_symlinks)[1], key, path)
