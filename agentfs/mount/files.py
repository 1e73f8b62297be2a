"""Open files of the mount: one buffer per inode, shared by every handle on it.

The kernel may read through one descriptor what another wrote, so what is written is held per
inode (an ``InodeFile``: writes go to an in-memory image, reads see it), not per handle. It is
committed in one transaction at ``flush`` (every ``close(2)`` sends one), at ``fsync`` and at
the last ``release``, which also records the one version of the open-write-close. An inode
with a handle open is pinned, so unlinking it keeps its bytes until the last release.
"""

from __future__ import annotations

import errno
import itertools
from dataclasses import dataclass, field

from agentfs.core.errors import fs_error
from agentfs.core.fs import FileSystem
from agentfs.core.handle import InodeFile


@dataclass
class _Open:
    """An inode's buffer and the handles that share it."""

    file: InodeFile
    handles: set[int] = field(default_factory=set)


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
        self._handles: dict[int, Handle] = {}
        self._inodes: dict[int, _Open] = {}
        self._next = itertools.count(1)
        fs.orphans.enable_pins()

    def open(self, ino: int, writable: bool, append: bool = False) -> int:
        """A new handle on ``ino``; the inode's buffer is made on the first one (writable
        if any handle needs it: an upgrade reopens it once its changes are committed)."""
        entry = self._inodes.get(ino)
        if entry is not None and writable and not entry.file.writable():
            entry.file.close()  # read-only so far: nothing to commit
            entry.file = InodeFile(self.fs, ino, writable=True)
        elif entry is None:
            entry = self._inodes[ino] = _Open(InodeFile(self.fs, ino, writable))
            self.fs.orphans.pin(ino)
        fh = next(self._next)
        entry.handles.add(fh)
        self._handles[fh] = Handle(ino, writable, append)
        return fh

    def handle(self, fh: int) -> Handle:
        try:
            return self._handles[fh]
        except KeyError:
            raise fs_error(errno.EBADF, f"handle {fh}") from None

    def file(self, fh: int) -> InodeFile:
        return self._inodes[self.handle(fh).ino].file

    def buffered(self, ino: int) -> InodeFile | None:
        """The open buffer of ``ino``, if a handle holds one."""
        entry = self._inodes.get(ino)
        return None if entry is None else entry.file

    def read(self, fh: int, offset: int, size: int) -> bytes:
        f = self.file(fh)
        f.seek(offset)
        return f.read(size)

    def write(self, fh: int, offset: int, data: bytes) -> int:
        h = self.handle(fh)
        if not h.writable:
            raise fs_error(errno.EBADF, f"handle {fh}", "not open for writing")
        f = self._inodes[h.ino].file
        f.seek(f.size if h.append else offset)
        return f.write(data)

    def commit(self, ino: int) -> None:
        """Commit what ``ino``'s buffer holds (no version yet)."""
        f = self.buffered(ino)
        if f is not None and f.dirty:
            f.flush()

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
            entry.file.close()
        finally:
            self.fs.orphans.unpin(h.ino)
            self.fs.orphans.purge_due()

    def close_all(self) -> None:
        """Commit and close everything (unmount)."""
        for fh in list(self._handles):
            self.release(fh)
