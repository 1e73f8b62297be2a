"""Open files of the mount: one buffer per inode, shared by every handle on it.

The kernel may read through one descriptor what another wrote, so writes are held per inode
(``InodeFile``) and committed at ``flush``, ``fsync`` and the last ``release``, which records
the one version of the open-write-close; an inode only read has no buffer at all (docs/mount.md,
"Open files"). An inode with a handle open is pinned, so unlinking it keeps its bytes until the
last release.
"""

from __future__ import annotations

import errno
import itertools
from dataclasses import dataclass, field

from agentfs.core.budget import DirtyBudget
from agentfs.core.by_inode import ByInode
from agentfs.core.errors import fs_error
from agentfs.core.fs import FileSystem
from agentfs.core.handle import InodeFile
from agentfs.core.inodes import Stat, is_dir, now_ns

#: Uncommitted bytes the mount's open files hold between them, at most (past it, the file
#: holding the most commits). Large writes commit at least every this many bytes, which
#: bounds the daemon's memory and was no slower than 256 MiB (docs/mount.md).
BUFFER_BUDGET = 64 * 1024 * 1024


@dataclass
class _Open:
    """An inode's buffer (None while only readers hold it) and the handles that share it."""

    file: InodeFile | None
    handles: set[int] = field(default_factory=set)
    #: When a handle last wrote or truncated the buffer (ns): the mtime and ctime ``stat``
    #: shows until the buffer is committed, as a disk's would move at each ``write(2)``;
    #: 0 once times were set after that (the workspace's are shown).
    changed_ns: int = 0


@dataclass(frozen=True)
class Handle:
    """What one ``open(2)`` asked for."""

    ino: int
    writable: bool
    append: bool


class OpenFiles:
    """Handles and per-inode buffers of one mount (see the module docstring)."""

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        self.by = ByInode(fs)
        self._handles: dict[int, Handle] = {}
        self._inodes: dict[int, _Open] = {}
        self._next = itertools.count(1)
        #: What the open files may hold uncommitted between them (``agentfs.core.budget``).
        self.budget = DirtyBudget(BUFFER_BUDGET)
        fs.orphans.enable_pins()

    def open(self, ino: int, writable: bool, append: bool = False, made: Stat | None = None) -> int:
        """A new handle on ``ino``. The inode's buffer is made by the first writable handle
        (a read-only one made before it, if any, is dropped: it held nothing to commit);
        readers alone get none. ``made``: the stat of a file just created."""
        entry = self._inodes.get(ino)
        if entry is None:
            if not writable:
                self._check_readable(ino)
            entry = _Open(InodeFile(self.fs, ino, True, made, self.budget) if writable else None)
            self._inodes[ino] = entry
            self.fs.orphans.pin(ino)
        elif writable and (entry.file is None or not entry.file.writable()):
            if entry.file is not None:
                entry.file.close()
            entry.file = InodeFile(self.fs, ino, writable=True, budget=self.budget)
        fh = next(self._next)
        entry.handles.add(fh)
        self._handles[fh] = Handle(ino, writable, append)
        return fh

    def _check_readable(self, ino: int) -> None:
        """Check that ``ino`` is a file a reader may open; a reader needs no buffer."""
        st = self.by.stat(ino)
        if is_dir(st.st_mode):
            raise fs_error(errno.EISDIR, f"inode {ino}")
        if st.type != "file":
            raise fs_error(errno.EINVAL, f"inode {ino}", "not a regular file")

    def handle(self, fh: int) -> Handle:
        try:
            return self._handles[fh]
        except KeyError:
            raise fs_error(errno.EBADF, f"handle {fh}") from None

    def buffered(self, ino: int) -> InodeFile | None:
        """The open buffer of ``ino``, if a handle holds one."""
        entry = self._inodes.get(ino)
        return None if entry is None else entry.file

    def read(self, fh: int, offset: int, size: int) -> bytes:
        """What the handle reads: the buffer's image if the inode has one, else the
        committed bytes."""
        ino = self.handle(fh).ino
        f = self._inodes[ino].file
        if f is None:
            return self.by.read(ino, offset, size)
        f.seek(offset)
        return f.read(size)

    def truncate(self, fh: int, size: int) -> None:
        """``O_TRUNC`` or ``ftruncate`` through a writable handle: the buffer is cut."""
        self.writable_file(fh).truncate(size)
        self._inodes[self._handles[fh].ino].changed_ns = now_ns()

    def write(self, fh: int, offset: int, data: bytes) -> int:
        """A write that crosses the largest file size writes what fits and returns the short
        count, as a local filesystem does (the next write is EFBIG): the kernel splits a
        large ``write(2)`` into requests, so refusing only the last one would leave an
        arbitrary part written, and the count would not say where the limit is."""
        f = self.writable_file(fh)
        at = f.size if self._handles[fh].append else offset
        room = self.fs.limits.file_size - at
        if 0 < room < len(data):
            data = data[:room]
        f.seek(at)
        written = f.write(data)
        self._inodes[self._handles[fh].ino].changed_ns = now_ns()
        return written

    def cut(self, ino: int, size: int) -> bool:
        """``truncate(2)`` of an inode a writable handle holds: its buffer is cut and committed
        (an unlinked file's stays with its handles). False when no such buffer exists."""
        entry = self._inodes.get(ino)
        if entry is None or entry.file is None or not entry.file.writable():
            return False
        entry.file.truncate(size)
        entry.file.flush()
        entry.changed_ns = now_ns()
        return True

    def pending(self, ino: int) -> tuple[int, int] | None:
        """The size of what ``ino``'s buffer holds uncommitted, if it holds any, and when it
        last changed (0: times were set since); ``stat`` shows them, as a disk's would move at
        each ``write(2)``, though the bytes are committed at close."""
        entry = self._inodes.get(ino)
        if entry is None or entry.file is None or not entry.file.dirty:
            return None
        return entry.file.size, entry.changed_ns

    def writable_file(self, fh: int) -> InodeFile:
        """The buffer a writable handle writes to; EBADF for a read-only handle."""
        h = self.handle(fh)
        f = self._inodes[h.ino].file
        if not h.writable or f is None:
            raise fs_error(errno.EBADF, f"handle {fh}", "not open for writing")
        return f

    def commit(self, ino: int) -> None:
        """Commit what ``ino``'s buffer holds (no version yet)."""
        f = self.buffered(ino)
        if f is not None and f.dirty:
            f.flush()

    def settle(self, ino: int) -> None:
        """``ino``'s times are about to be set: its buffer is committed and its version
        recorded now (``WorkspaceFile.settle``), and ``stat`` shows the workspace's times from
        now on, until the next write (an unlinked file's bytes stay in its buffer)."""
        entry = self._inodes.get(ino)
        if entry is not None and entry.file is not None:
            entry.file.settle()
            entry.changed_ns = 0

    def release(self, fh: int) -> None:
        """Drop a handle; the last one on an inode commits and records its version."""
        h = self._handles.pop(fh, None)
        if h is None:
            return
        entry = self._inodes[h.ino]
        entry.handles.discard(fh)
        if entry.handles:
            return
        del self._inodes[h.ino]
        try:
            if entry.file is not None:
                entry.file.close()
        finally:
            self.fs.orphans.unpin(h.ino)

    def close_all(self) -> None:
        """Commit and close everything (unmount)."""
        for fh in list(self._handles):
            self.release(fh)
