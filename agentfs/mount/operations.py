"""The kernel's requests, answered through the core (pyfuse3 ``Operations``).

Every request is one core call, as through the API (the same transaction, versions, rules and
search queueing), made by inode through ``ByInode``: no path is made or resolved on the way,
so a tree is as deep as the kernel lets it be. Handlers run one at a time and never await
inside a transaction; ``_reads`` and ``_changes`` put each request in the group's open
transaction (``agentfs.mount.group``).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import stat
from collections.abc import Callable, Coroutine
from typing import Any, NamedTuple, ParamSpec, TypeVar

import pyfuse3

from agentfs.core import paths, xattrs
from agentfs.core.by_inode import ByInode
from agentfs.core.fs import Attrs, FileSystem
from agentfs.core.inodes import ROOT_INO, Stat, is_dir
from agentfs.core.readers import ReaderHold
from agentfs.db import database_bytes, sync_wal
from agentfs.mount.files import OpenFiles
from agentfs.mount.group import GroupCommit
from agentfs.mount.kernel_cache import KernelCache, Notifier
from agentfs.mount.owners import NO_SWAP, IdSwap

#: What ``st_blksize`` says: stdio and most tools size their buffers from it, so a large value
#: gets large writes (fuse-perf.md, 7).
BLOCK_SIZE = 128 * 1024
#: ``renameat2``'s flag that leaves a whiteout (a character device 0:0) at the old name
#: (linux/fs.h; the kernel passes it on, pyfuse3 has no name for it).
RENAME_WHITEOUT = 4
#: Entries per readdir query (the kernel's buffer takes what fits; the rest comes next call).
READDIR_BATCH = 256
#: ``.`` and ``..`` take readdir's cursors 1 and 2; an entry's cursor is its dentry id past them.
DOT_ENTRIES = 2

log = logging.getLogger(__name__)
_CAPABILITY = xattrs.CAPABILITY.encode()

P = ParamSpec("P")
R = TypeVar("R")


def _fuse_error(exc: Exception, handler: str) -> pyfuse3.FUSEError:
    """The ``FUSEError`` the kernel gets for ``exc`` (never EIO for an error that has a
    number: ENOENT must stay ENOENT)."""
    if isinstance(exc, pyfuse3.FUSEError):
        return exc
    if isinstance(exc, OSError):
        return pyfuse3.FUSEError(exc.errno or errno.EIO)
    if isinstance(exc, UnicodeError):
        return pyfuse3.FUSEError(errno.EINVAL)
    # a bug must fail one request, not end the mount for everyone
    log.error("%s failed", handler, exc_info=exc)
    return pyfuse3.FUSEError(errno.EIO)


# The wrappers below are each one coroutine around the handler, not a stack of them: they sit
# on every request.


def fuse_errors(fn: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """A request outside the group: the core's errors turned into ``FUSEError``s."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except Exception as exc:
            raise _fuse_error(exc, fn.__name__) from None

    return wrapper


def _in_group(
    *, changes: bool
) -> Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, R]]]:
    """A request run inside the open group commit (``agentfs.mount.group``), its errors
    turned into ``FUSEError``s; one that ``changes`` the workspace is refused on a read-only
    mount."""

    def decorate(fn: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
        @functools.wraps(fn)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            ops: WorkspaceOperations = args[0]  # type: ignore[assignment]
            try:
                if changes and ops.readonly:
                    raise OSError(errno.EROFS, "the workspace is mounted read-only")
                ops.group.begin(changes=changes)
                try:
                    return await fn(*args, **kwargs)
                finally:
                    ops.group.end_request()
            except Exception as exc:
                raise _fuse_error(exc, fn.__name__) from None

        return wrapper

    return decorate


#: A request that only reads (a read group is opened if none is).
_reads = _in_group(changes=False)
#: A request that changes the workspace: one operation of the write group.
_changes = _in_group(changes=True)


class Child(NamedTuple):
    """A name in a directory, as a request gives it."""

    parent: int  # the directory's workspace inode
    name: str


def _name(raw: bytes) -> str:
    """A name from the kernel: UTF-8 (the workspace stores text), one component."""
    name = raw.decode("utf-8")
    if len(raw) > paths.NAME_MAX:
        raise OSError(errno.ENAMETOOLONG, "name too long", name[:64])
    if "/" in name or "\0" in name:
        raise OSError(errno.EINVAL, "bad name", name)
    return name


class WorkspaceOperations(pyfuse3.Operations):
    """One mounted workspace (see the module docstring).

    Attributes:
        fs: the workspace (a ``FileSystem``) every request goes through.
        root: the workspace inode shown as the mount's root.
        timeout: how long the kernel may cache entries and attributes (seconds).
        xattrs: are extended attributes served? Without, every xattr request is answered
            ENOSYS, which the kernel takes as "never ask again" (and tells programs
            EOPNOTSUPP): its ``getxattr("security.capability")`` before each ``write(2)``
            stops with it.
        ids: the owner's ids exchanged with a sandboxed command's (``agentfs.mount.owners``).
        write_budget: the bytes that may still be written through the mount (None: no
            bound); a write past it fails with ENOSPC. A sandboxed command's mount has one,
            so that no number of files, each within its size limit, fills the host's disk.
    """

    supports_dot_lookup = False
    enable_writeback_cache = False
    enable_acl = False

    def __init__(
        self,
        fs: FileSystem,
        root: int = ROOT_INO,
        timeout: float = 1.0,
        xattrs: bool = True,
        ids: IdSwap = NO_SWAP,
        write_budget: int | None = None,
    ) -> None:
        super().__init__()
        self.fs = fs
        self.ids = ids
        self.write_budget = write_budget
        self.by = ByInode(fs)
        self.files = OpenFiles(fs)
        #: What the kernel was told, to take back what other processes change.
        self.cache = KernelCache(fs.conn, Notifier(self._kernel_ino))
        self.group = GroupCommit(fs, others_committed=self._others_committed)
        self.root = root
        self.timeout = timeout
        self.xattrs = xattrs
        self.readonly = fs.readonly
        # Others leave the orphan queue to us while we run: we hold files open unpinned.
        self._reading: ReaderHold | None = None
        if not self.readonly:
            fs.orphans.keep()
        else:  # nothing can be written: a lock says it (agentfs.core.readers)
            self._reading = ReaderHold(fs.conn.filename)

    def _others_committed(self) -> None:
        """Another process committed: take back what the kernel was told of what it changed,
        and purge at the next idle moment (it may have queued a file only we may free)."""
        self.cache.others_committed()
        self.fs.orphans.others_committed()

    # --- numbers, paths and attributes ---------------------------------------------------------

    def _ino(self, kernel_ino: int) -> int:
        return self.root if kernel_ino == pyfuse3.ROOT_INODE else kernel_ino

    def _kernel_ino(self, ino: int) -> int:
        return pyfuse3.ROOT_INODE if ino == self.root else ino

    def _child(self, parent_inode: int, raw: bytes) -> Child:
        """The name ``raw`` in the kernel's directory ``parent_inode``, decoded once."""
        return Child(self._ino(parent_inode), _name(raw))

    def _attrs(self, st: Stat) -> pyfuse3.EntryAttributes:
        self.cache.told_attrs(st)
        size, mtime, ctime = st.st_size, st.st_mtime_ns, st.st_ctime_ns
        pending = self.files.pending(st.st_ino)
        if pending is not None:
            size, changed = pending
            if changed:
                mtime = ctime = changed
        entry = pyfuse3.EntryAttributes()
        entry.st_ino = self._kernel_ino(st.st_ino)
        entry.generation = 0
        entry.entry_timeout = self.timeout
        entry.attr_timeout = self.timeout
        entry.st_mode = st.st_mode
        entry.st_nlink = st.st_nlink
        if self.ids is NO_SWAP:  # every getattr and lookup passes here: no calls when unused
            entry.st_uid = st.st_uid
            entry.st_gid = st.st_gid
        else:
            entry.st_uid = self.ids.uid(st.st_uid)
            entry.st_gid = self.ids.gid(st.st_gid)
        entry.st_rdev = st.st_rdev
        entry.st_size = size
        entry.st_blksize = BLOCK_SIZE
        entry.st_blocks = -(-size // 512)
        entry.st_atime_ns = st.st_atime_ns
        entry.st_mtime_ns = mtime
        entry.st_ctime_ns = ctime
        return entry

    def _entry(self, child: Child, st: Stat) -> pyfuse3.EntryAttributes:
        """The entry of a name just made, ``st``."""
        self.cache.told_entry(child.parent, child.name, st)
        return self._attrs(st)

    def _file_bits(self, mode: int) -> int:
        """The permission bits a request may store. Through a mount that swaps ids (a
        sandboxed command's), no setuid or setgid bit on anything but a directory: the
        command's file is stored as the owner's, root's in root's workspace, and must not
        become a setuid-root program wherever the workspace is mounted or exported next."""
        if self.ids is NO_SWAP or stat.S_ISDIR(mode):
            return mode & 0o7777
        return mode & 0o1777

    def _own(self, st: Stat, ctx: pyfuse3.RequestContext, parent: int) -> Stat:
        """New files belong to whoever made them (the core records the mount's own ids),
        except that in a setgid directory they take its group, and a directory made there is
        setgid too (the kernel leaves this to the filesystem); the stat after."""
        uid, gid, mode = self.ids.uid(ctx.uid), self.ids.gid(ctx.gid), None
        folder = self.by.stat(parent)
        if folder.st_mode & stat.S_ISGID:
            gid = folder.st_gid
            if is_dir(st.st_mode):
                mode = stat.S_IMODE(st.st_mode) | stat.S_ISGID
        if (uid, gid) == (st.st_uid, st.st_gid) and mode is None:
            return st
        return self.fs.set_attrs(st.st_ino, Attrs(mode=mode, uid=uid, gid=gid))

    # --- reading the tree ----------------------------------------------------------------------

    @_reads
    async def lookup(
        self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        parent, text = self._ino(parent_inode), _name(name)
        st = self.by.lookup(parent, text)
        if st is not None and not self._found(parent, text, st):
            st = None
        self.cache.told_entry(parent, text, st)
        if st is None:  # a negative entry the kernel may cache as long as a positive one
            entry = pyfuse3.EntryAttributes()
            entry.st_ino = 0
            entry.entry_timeout = self.timeout
            return entry
        return self._attrs(st)

    @_reads
    async def getattr(self, inode: int, ctx: pyfuse3.RequestContext) -> pyfuse3.EntryAttributes:
        return self._attrs(self.by.stat(self._ino(inode)))

    @_reads
    async def readlink(self, inode: int, ctx: pyfuse3.RequestContext) -> bytes:
        return self.by.readlink(self._ino(inode)).encode("utf-8")

    @_reads
    async def opendir(self, inode: int, ctx: pyfuse3.RequestContext) -> int:
        st = self.by.stat(self._ino(inode))
        if not is_dir(st.st_mode):
            raise OSError(errno.ENOTDIR, "not a directory")
        return inode

    @_reads
    async def readdir(self, fh: int, start_id: int, token: pyfuse3.ReaddirToken) -> None:
        """``.`` and ``..`` (as every local file system lists them; the kernel counts no
        lookup for them), then the entries in dentry-id order from the cursor the kernel hands
        back: an entry keeps its place while others are added or removed (fuse-perf.md, P7)."""
        parent = self._ino(fh)
        if start_id < DOT_ENTRIES:
            up = parent if parent == self.root else self.by.parent(parent)
            for cursor, (dot, ino) in enumerate([(b".", parent), (b"..", up)], 1):
                if cursor > start_id and not pyfuse3.readdir_reply(
                    token, dot, self._attrs(self.by.stat(ino)), cursor
                ):
                    return
        after = max(start_id - DOT_ENTRIES, 0)
        while True:
            batch = self.by.entries(parent, after, READDIR_BATCH)
            for cursor, name, st in batch:
                if not self._listed(parent, name, st):
                    after = cursor
                    continue
                if not pyfuse3.readdir_reply(
                    token, name.encode("utf-8"), self._attrs(st), cursor + DOT_ENTRIES
                ):
                    return
                self.cache.told_entry(parent, name, st)  # readdirplus: one lookup each
                after = cursor
            if len(batch) < READDIR_BATCH:
                return

    def _listed(self, parent: int, name: str, st: Stat) -> bool:
        """Does ``readdir`` show this entry? (All: a mount under a policy hides some,
        ``agentfs.mount.ruled``.)"""
        return True

    def _found(self, parent: int, name: str, st: Stat) -> bool:
        """Does ``lookup`` find this entry? (As ``_listed``; a mount under a policy also
        counts each name it hides.)"""
        return True

    async def releasedir(self, fh: int) -> None:
        return None

    @_reads
    async def statfs(self, ctx: pyfuse3.RequestContext) -> pyfuse3.StatvfsData:
        """The space of the disk the workspace file lives on, or within the workspace's
        quota when it has one (``agentfs limits``); inodes counted as used."""
        host = os.statvfs(os.path.dirname(os.path.abspath(self.fs.conn.filename)))
        used = self.fs.conn.execute("SELECT count(*) FROM fs_inode").get
        data = pyfuse3.StatvfsData()
        data.f_bsize = BLOCK_SIZE
        data.f_frsize = host.f_frsize
        data.f_blocks = host.f_blocks
        data.f_bfree = host.f_bfree
        data.f_bavail = host.f_bavail
        quota = self.fs.limits.workspace_size
        if quota is not None:
            left = max(0, quota - database_bytes(self.fs.conn)) // host.f_frsize
            data.f_blocks = quota // host.f_frsize
            data.f_bfree = min(host.f_bfree, left)
            data.f_bavail = min(host.f_bavail, left)
        data.f_files = int(used) + host.f_ffree  # type: ignore[call-overload]
        data.f_ffree = host.f_ffree
        data.f_favail = host.f_favail
        data.f_namemax = paths.NAME_MAX
        return data

    # --- changing the tree ---------------------------------------------------------------------

    @_changes
    async def mkdir(
        self, parent_inode: int, name: bytes, mode: int, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        return self._make(parent_inode, name, ctx, lambda at: self.by.mkdir(*at, mode))

    @_changes
    async def mknod(
        self, parent_inode: int, name: bytes, mode: int, rdev: int, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        def make(at: Child) -> Stat:
            if stat.S_ISREG(mode):
                return self.by.create(*at, self._file_bits(mode))
            return self.by.mknod(*at, mode, rdev)

        return self._make(parent_inode, name, ctx, make)

    @_changes
    async def symlink(
        self, parent_inode: int, name: bytes, target: bytes, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        link_to = target.decode("utf-8")
        return self._make(parent_inode, name, ctx, lambda at: self.by.symlink(*at, link_to))

    def _make(
        self,
        parent_inode: int,
        name: bytes,
        ctx: pyfuse3.RequestContext,
        make: Callable[[Child], Stat],
    ) -> pyfuse3.EntryAttributes:
        """A new entry made by ``make(child)``, owned by the caller, in one transaction."""
        child = self._child(parent_inode, name)
        with self.fs.transaction():
            return self._entry(child, self._own(make(child), ctx, child.parent))

    @_changes
    async def link(
        self, inode: int, new_parent_inode: int, new_name: bytes, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        ino = self._ino(inode)
        self.files.commit(ino)  # the new name must see what was written
        child = self._child(new_parent_inode, new_name)
        return self._entry(child, self.by.link(ino, *child))

    @_changes
    async def unlink(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        child = self._child(parent_inode, name)
        self.by.remove(*child, directory=False)
        self.cache.name_gone(*child)

    @_changes
    async def rmdir(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        child = self._child(parent_inode, name)
        self.by.remove(*child, directory=True)
        self.cache.name_gone(*child)

    @_changes
    async def rename(
        self,
        parent_inode_old: int,
        name_old: bytes,
        parent_inode_new: int,
        name_new: bytes,
        flags: int,
        ctx: pyfuse3.RequestContext,
    ) -> None:
        old = self._child(parent_inode_old, name_old)
        new = self._child(parent_inode_new, name_new)
        if flags & pyfuse3.RENAME_EXCHANGE:
            self.by.exchange(*old, *new)
            self.cache.exchanged(old, new)
            return
        with self.fs.transaction():
            if flags & pyfuse3.RENAME_NOREPLACE and self.by.lookup(*new) is not None:
                raise OSError(errno.EEXIST, "exists", new.name)
            self.by.rename(*old, *new)
            if flags & RENAME_WHITEOUT:  # overlayfs's mark of a name deleted from a lower layer
                self._own(self.by.mknod(*old, stat.S_IFCHR), ctx, old.parent)
        self.cache.moved(old, new)

    @_changes
    async def setattr(
        self,
        inode: int,
        attr: pyfuse3.EntryAttributes,
        fields: pyfuse3.SetattrFields,
        fh: int | None,
        ctx: pyfuse3.RequestContext,
    ) -> pyfuse3.EntryAttributes:
        ino = self._ino(inode)
        if fields.update_atime or fields.update_mtime:
            # the bytes written so far, and their version, go first: committed after these
            # times they would move the mtime again (tar, cp -p and rsync set times last)
            self.files.settle(ino)
        if fields.update_size and not self.files.cut(ino, attr.st_size):
            self.by.truncate(ino, attr.st_size)
        # the rest by number: fchmod, fchown and futimens work on an unlinked open file too
        attrs = Attrs(
            mode=self._file_bits(attr.st_mode) if fields.update_mode else None,
            uid=self.ids.uid(attr.st_uid) if fields.update_uid else -1,
            gid=self.ids.gid(attr.st_gid) if fields.update_gid else -1,
        )
        # inside the request's group (``_changes``); set_attrs is atomic by itself
        if fields.update_atime or fields.update_mtime:
            st = self.by.stat(ino)
            atime = attr.st_atime_ns if fields.update_atime else st.st_atime_ns
            mtime = attr.st_mtime_ns if fields.update_mtime else st.st_mtime_ns
            attrs = attrs._replace(times=(atime, mtime))
        if attrs != Attrs() or not fields.update_size:
            # one that sets nothing (chown(f, -1, -1)) still moves ctime, as the kernel's own
            # filesystems do; a truncate moved it already
            st = self.fs.set_attrs(ino, attrs)
        else:
            st = self.by.stat(ino)
        return self._attrs(st)

    # --- extended attributes (``agentfs.core.xattrs``) -----------------------------------------
    # The kernel checked the name's length, the value's size, the flags and the permissions
    # (user. needs the file's read or write permission, trusted. CAP_SYS_ADMIN); pyfuse3 turns
    # XATTR_CREATE/XATTR_REPLACE into a getxattr first and answers a size probe itself.

    def _check_xattrs(self) -> None:
        if not self.xattrs:
            raise pyfuse3.FUSEError(errno.ENOSYS)  # the kernel asks no more (--no-xattr)

    async def getxattr(self, inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> bytes:
        self._check_xattrs()
        if name == _CAPABILITY:  # asked before every write(2): never stored, no query
            raise pyfuse3.FUSEError(errno.ENODATA)
        return await self._getxattr(inode, name)

    @_reads
    async def _getxattr(self, inode: int, name: bytes) -> bytes:
        return self.fs.xattrs.get(self._ino(inode), xattrs.valid_name(name, f"inode {inode}"))

    @_reads
    async def listxattr(self, inode: int, ctx: pyfuse3.RequestContext) -> list[bytes]:
        """Every name, but trusted. ones only for root (tmpfs shows them only to a caller
        with CAP_SYS_ADMIN; the request carries a uid, not capabilities)."""
        self._check_xattrs()
        names = self.fs.xattrs.list(self._ino(inode))
        return [
            name.encode("utf-8")
            for name in names
            if ctx.uid == 0 or not name.startswith(xattrs.TRUSTED)
        ]

    @_changes
    async def setxattr(
        self, inode: int, name: bytes, value: bytes, ctx: pyfuse3.RequestContext
    ) -> None:
        self._check_xattrs()
        key, value = xattrs.valid_setting(name, value, 0, f"inode {inode}")
        self.fs.xattrs.set(self._ino(inode), key, value)

    @_changes
    async def removexattr(self, inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        self._check_xattrs()
        self.fs.xattrs.remove(self._ino(inode), xattrs.valid_name(name, f"inode {inode}"))

    # --- file content --------------------------------------------------------------------------

    async def open(self, inode: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        """A handle; ``O_TRUNC`` empties the file here (libfuse's atomic O_TRUNC: the kernel
        sends no truncate of its own), also with ``O_RDONLY``, which Linux truncates too once
        the caller may write the file (the kernel checked that)."""
        if flags & os.O_TRUNC and flags & os.O_ACCMODE == os.O_RDONLY:
            return await self._open_emptied(inode)
        return await self._open(inode, flags)

    @_changes
    async def _open_emptied(self, inode: int) -> pyfuse3.FileInfo:
        """A read-only handle on a file truncated first, as ``truncate(2)`` is (``setattr``)."""
        ino = self._ino(inode)
        if not self.files.cut(ino, 0):
            self.by.truncate(ino, 0)
        return pyfuse3.FileInfo(fh=self.files.open(ino, False), keep_cache=False)

    @_reads
    async def _open(self, inode: int, flags: int) -> pyfuse3.FileInfo:
        writable = flags & os.O_ACCMODE != os.O_RDONLY
        if writable and self.readonly:
            raise OSError(errno.EROFS, "the workspace is mounted read-only")
        ino = self._ino(inode)
        fh = self.files.open(ino, writable, append=bool(flags & os.O_APPEND))
        if flags & os.O_TRUNC and writable:
            self.files.truncate(fh, 0)
        # pages another process's change made stale go now, not when the notice lands
        return pyfuse3.FileInfo(fh=fh, keep_cache=self.cache.pages_valid(ino))

    @_changes
    async def create(
        self, parent_inode: int, name: bytes, mode: int, flags: int, ctx: pyfuse3.RequestContext
    ) -> tuple[pyfuse3.FileInfo, pyfuse3.EntryAttributes]:
        child = self._child(parent_inode, name)
        with self.fs.transaction():
            st = self._own(self.by.create(*child, self._file_bits(mode)), ctx, child.parent)
        fh = self.files.open(st.st_ino, True, bool(flags & os.O_APPEND), made=st)
        return pyfuse3.FileInfo(fh=fh, keep_cache=True), self._entry(child, st)

    @_reads
    async def read(self, fh: int, off: int, size: int) -> bytes:
        return self.files.read(fh, off, size)

    @_changes
    async def write(self, fh: int, off: int, buf: bytes) -> int:
        if self.write_budget is not None:
            if len(buf) > self.write_budget:
                raise OSError(errno.ENOSPC, "the command's write budget is spent")
            self.write_budget -= len(buf)
        return self.files.write(fh, off, buf)

    @fuse_errors
    async def flush(self, fh: int) -> None:
        """``close(2)``: what the file holds is committed before close returns, with the
        group's metadata (visible to every process from then on)."""
        handle = self.files.handle(fh)
        if not handle.writable:
            return  # nothing of this handle's to commit, nor to wait for
        with self._committing():
            self.files.commit(handle.ino)
        self.group.commit()

    @fuse_errors
    async def fsync(self, fh: int, datasync: bool) -> None:
        handle = self.files.handle(fh)
        if not handle.writable:
            return  # nothing of this handle's to commit, nor to wait for
        with self._committing():
            self.files.commit(handle.ino)
        self.group.commit()
        sync_wal(self.fs.conn)  # what was committed survives a power cut

    @fuse_errors
    async def fsyncdir(self, fh: int, datasync: bool) -> None:
        """``fsync`` of a directory: every create, rename and unlink so far is committed and
        on disk when it returns, as git, editors and package managers expect of the pattern
        write a temporary file, fsync it, rename it into place, fsync the directory. (The
        open group holds the changes of every directory: it commits whole.) Unanswered, the
        kernel would take ENOSYS as "nothing to do" and return 0 from then on."""
        self.group.commit()
        sync_wal(self.fs.conn)

    @fuse_errors
    async def release(self, fh: int) -> None:
        if not self.files.handle(fh).writable:  # a reader's release writes nothing
            self.files.release(fh)
            return
        with self._committing():
            self.files.release(fh)

    def _committing(self) -> contextlib.AbstractContextManager[None]:
        """Where a handle's buffer commits: the open group (nothing to commit read-only)."""
        return contextlib.nullcontext() if self.readonly else self.group.request(changes=True)

    def close(self) -> None:
        """Unmounting: commit every open file and the open group; send the last notices;
        give the orphan queue back to every connection."""
        try:
            with self._committing():
                self.files.close_all()
        finally:
            try:
                self.group.close()
            finally:
                self.cache.notifier.close()
                if not self.readonly:
                    self.fs.orphans.unkeep()
                if self._reading is not None:
                    self._reading.release()

    def on_idle(self) -> None:
        """The mount's timer: end a group no request uses, then free what is due (the inodes
        whose last handle closed after they were unlinked): purging runs its own
        transactions, so it waits for a moment with none open. Then notice other processes'
        commits (``GroupCommit.look``), and reconcile the kernel's cache if that was put
        off."""
        if self.group.commit_if_idle() and not self.readonly:
            self.fs.orphans.purge_due()
        self.group.look()
        if self.cache.due():
            with self.group.request(changes=False):
                self.cache.reconcile_if_due()  # unless done as the group began

    async def forget(self, inode_list: Any) -> None:
        """The kernel dropped inodes (inode numbers are never reused, AUTOINCREMENT: nothing
        of the workspace's to free); the cache stops tracking them."""
        for kernel_ino, lookups in inode_list:
            self.cache.forget(self._ino(kernel_ino), lookups)
