"""``ws.open(path, mode)``: a file object whose writes commit atomically at ``flush``/``close``,
with one version per handle, not one per write call (docs/handle.md).

Writes go to an in-memory image of the chunks they touch, which reads through the handle see
at once; ``flush`` applies it in one write transaction (others see the file before or after,
never a mix) and ``close`` records the handle's one version. The image stays within a budget
(``agentfs.core.budget``): past it the handle flushes by itself. A path's handle
(``WorkspaceFile``) writes to whatever file its path names then, as an editor's save does; an
inode's (``InodeFile``, the mount's) follows its file.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentfs.core import paths
from agentfs.core.budget import DirtyBudget
from agentfs.core.changes import Change
from agentfs.core.digests import hasher
from agentfs.core.errors import fs_error
from agentfs.core.inodes import Stat, is_dir

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from agentfs.core.fs import FileSystem, WriteTarget

#: Dirty bytes a handle holds before it flushes by itself.
BUFFER_LIMIT = 256 * 1024 * 1024

_MODES = {"r", "w", "a", "x"}


def parse_mode(mode: str) -> tuple[str, bool, bool]:
    """('r'|'w'|'a'|'x', plus, binary) of an ``open`` mode; EINVAL for anything else."""
    kinds = [c for c in mode if c in _MODES]
    rest = mode.replace("+", "", 1).replace("b", "", 1).replace("t", "", 1)
    if len(kinds) != 1 or len(rest) != 1 or ("b" in mode and "t" in mode):
        raise fs_error(errno.EINVAL, mode, "mode is r, w, a or x, with an optional + and b or t")
    return kinds[0], "+" in mode, "b" in mode


class WorkspaceFile(io.RawIOBase):
    """A binary file object over one workspace file (see the module docstring)."""

    def __init__(
        self,
        fs: FileSystem,
        path: str,
        mode: str,
        buffer_limit: int = BUFFER_LIMIT,
        budget: DirtyBudget | None = None,
    ) -> None:
        """``budget``: shared with other handles (a mount's); else one of ``buffer_limit``
        bytes for this handle alone."""
        super().__init__()
        kind, plus, _binary = parse_mode(mode)
        self._fs = fs
        self.name = path  # what errors name: the normalised path (an inode's handle: its number)
        self.mode = mode
        self._readable = kind == "r" or plus
        self._writable = kind != "r" or plus
        self._append = kind == "a"
        self._budget = DirtyBudget(buffer_limit) if budget is None else budget
        self._cs = fs.chunks.size
        #: Chunk index -> the chunk's bytes as the handle has them (only chunks it changed).
        self._dirty: dict[int, bytearray] = {}
        self._pos = 0
        self._flushed = 0  # the inode this handle's last flush wrote
        existing = self._committed_size()
        if kind == "r" and existing is None:
            raise fs_error(errno.ENOENT, self.name)
        if kind == "x" and existing is not None:
            raise fs_error(errno.EEXIST, self.name)
        if self._writable and fs._readonly:
            raise fs_error(errno.EROFS, self.name, fs.readonly_reason)
        if kind != "r" and existing is None:
            self._check_creatable()
        #: Committed bytes below this offset are still the file's (a truncate lowers it).
        self._base = 0 if kind in ("w", "x") or existing is None else existing
        #: The file's size in the workspace as of the last commit (what a growth adds to).
        self._committed_bytes = existing or 0
        self._size = self._base
        self._pos = self._size if self._append else 0  # as the built-in open does
        # a new file, or open("w"/"x"), changes the file even if nothing is written
        self._wrote = self._pending = kind != "r" and (existing is None or kind in ("w", "x"))
        #: No version will need a digest of more than this (none at all: 0).
        self._hash_limit = fs.hooks.digest_limit()
        #: The version's hash, fed while the writes run on from 0 without a gap (None: the
        #: version reads the bytes back), and how many bytes it has seen.
        self._hash: hashlib.blake2b | None = (
            hasher() if self._base == 0 and self._hash_limit > 0 else None
        )
        self._hashed = 0
        #: The lowest offset written (or truncated to) since the last commit; None: none.
        self._low: int | None = None

    # --- io.RawIOBase ----------------------------------------------------------------------

    def readable(self) -> bool:
        return self._readable

    def writable(self) -> bool:
        return self._writable

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        self._check_open()
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._check_open()
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._size}.get(whence)
        if base is None:
            raise fs_error(errno.EINVAL, self.name, f"whence must be 0, 1 or 2, not {whence}")
        if base + offset < 0:
            raise fs_error(errno.EINVAL, self.name, "a seek before the start of the file")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer: bytearray | memoryview, /) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)

    def read(self, size: int | None = -1) -> bytes:
        self._check_open()
        if not self._readable:
            raise io.UnsupportedOperation("not readable")
        end = self._size if size is None or size < 0 else min(self._size, self._pos + size)
        if end <= self._pos:
            return b""
        data = self._range(self._pos, end)
        self._pos = end
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def write(self, data: Buffer, /) -> int:
        self._check_open()
        if not self._writable:
            raise io.UnsupportedOperation("not writable")
        view = memoryview(data).cast("B")
        n = len(view)
        if n == 0:
            return 0
        if self._append:
            self._pos = self._size
        start = self._pos
        self._check_growth(start + n)
        self._lower(start)
        self._feed_hash(start, view)
        cs = self._cs
        done = 0
        while done < n:
            at = start + done
            index, lo = divmod(at, cs)
            take = min(cs - lo, n - done)
            chunk = self._chunk_for_write(index, lo, take)
            if len(chunk) < lo:
                chunk.extend(bytes(lo - len(chunk)))
            chunk[lo : lo + take] = view[done : done + take]
            done += take
        self._pos = start + n
        self._size = max(self._size, self._pos)
        self._wrote = self._pending = True
        self._budget.hold(self, len(self._dirty) * cs)
        return n

    def truncate(self, size: int | None = None) -> int:
        self._check_open()
        if not self._writable:
            raise io.UnsupportedOperation("not writable")
        size = self._pos if size is None else size
        if size < 0:
            raise fs_error(errno.EINVAL, self.name, "size must be >= 0")
        self._check_growth(size)
        cs = self._cs
        keep = -(-size // cs)
        for index in [i for i in self._dirty if i >= keep]:
            del self._dirty[index]
        if size % cs and keep - 1 in self._dirty:
            del self._dirty[keep - 1][size % cs :]
        self._budget.hold(self, len(self._dirty) * cs)
        self._base = min(self._base, size)
        self._size = size
        self._lower(size)
        if self._hash is not None and size < self._hashed:
            self._hash = hasher() if size == 0 and self._hash_limit > 0 else None
            self._hashed = 0
        self._wrote = self._pending = True
        return size

    def flush(self) -> None:
        """Commit what the handle changed since the last flush, in one transaction."""
        if self.closed or not self._pending:
            return
        self._commit(version=False)

    def settle(self) -> None:
        """Commit and record a version now, as ``close`` would, and stay open: what is
        written after is the next version (the version row names the inode, so history keeps
        its bytes before they change, as for any version). The mount settles a file whose
        times a program sets while it is open, which ``tar``, ``cp -p`` and ``rsync`` do
        last: its bytes committed later would move the mtime it was given."""
        if self.closed or not (self._wrote or self._pending):
            return
        self._commit(version=True)
        self._wrote = False

    def close(self) -> None:
        """Flush, record one version of what the handle wrote, and close."""
        if self.closed:
            return
        try:
            if self._wrote or self._pending:
                self._commit(version=True)
        finally:
            self._dirty.clear()
            self._budget.hold(self, 0)
            super().close()

    # --- the image ---------------------------------------------------------------------------

    def _check_growth(self, size: int) -> None:
        """EFBIG or ENOSPC before the handle grows the file to ``size`` bytes: the workspace
        grows by what the handle will commit beyond the file's committed size."""
        if size > self._size:
            self._fs._check_growth(self.name, self._committed_bytes, size)

    def _lower(self, offset: int) -> None:
        self._low = offset if self._low is None else min(self._low, offset)

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed file")

    def _committed_size(self) -> int | None:
        """Size of the regular file the path names now, None when there is none; EISDIR."""
        try:
            st = self._fs.stat(self.name)
        except FileNotFoundError:
            return None
        if is_dir(st.st_mode):
            raise fs_error(errno.EISDIR, self.name)
        if st.type != "file":
            raise fs_error(errno.EINVAL, self.name, "not a regular file")
        return st.st_size

    def _check_creatable(self) -> None:
        parent, _name = paths.parent_and_name(self.name)
        if not self._fs.stat(parent).is_dir():
            raise fs_error(errno.ENOTDIR, parent)

    def _committed(self, start: int, end: int) -> bytes:
        """``[start, end)`` of the committed file, cut at ``_base`` and zero-filled."""
        stop = min(end, self._base)
        data = self._fs.read(self.name, start, stop - start, track=False) if stop > start else b""
        return data.ljust(end - start, b"\0")

    def _chunk_for_write(self, index: int, lo: int, take: int) -> bytearray:
        """The image of chunk ``index``, made on its first write from the bytes the file has
        there now, unless the write covers them all. Bytes past an image's end are zeros."""
        chunk = self._dirty.get(index)
        if chunk is None:
            start = index * self._cs
            known = max(0, min(self._size, start + self._cs) - start)
            covered = lo == 0 and take >= known
            chunk = bytearray() if covered else bytearray(self._committed(start, start + known))
            self._dirty[index] = chunk
        return chunk

    def _range(self, start: int, end: int) -> bytes:
        """``[start, end)`` as the handle sees it: its images where it has them, the committed
        file elsewhere (each run of chunks it did not touch read in one go)."""
        cs = self._cs
        out = bytearray()
        pos = start
        while pos < end:
            index, lo = divmod(pos, cs)
            chunk = self._dirty.get(index)
            if chunk is not None:
                take = min(cs - lo, end - pos)
                out += bytes(chunk[lo : lo + take]).ljust(take, b"\0")
            else:
                stop = min(end, (index + 1) * cs)
                while stop < end and stop // cs not in self._dirty:
                    stop = min(end, stop + cs)
                take = stop - pos
                out += self._committed(pos, stop)
            pos += take
        return bytes(out)

    def _feed_hash(self, start: int, view: memoryview) -> None:
        if self._hash is None:
            return
        if self._hashed + len(view) > self._hash_limit:
            self._hash = None  # too large to get a version: hashing it would be wasted
        elif start == self._hashed and self._size == self._hashed:
            self._hash.update(view)
            self._hashed += len(view)
        else:
            self._hash = None  # not a plain run from 0: the version reads the bytes back

    # --- committing ------------------------------------------------------------------------

    def _commit(self, *, version: bool) -> None:
        # a file deleted since is made again only when there is something to write
        with self._fs._write():
            target = self._fs._open_for_write(self.name, False, 0o644, 0, create=self._pending)
            self._commit_to(target, version=version)
        self._committed_all()

    def _commit_to(self, target: WriteTarget, *, version: bool) -> None:
        """Commit what the handle holds to ``target``, inside the caller's transaction; with
        ``version``, the handle's version too (once it wrote)."""
        if self._pending:  # else only the version is left: the file as the last flush left it
            self._apply(target)
        if version and self._wrote:
            self._record(target)

    def _committed_all(self) -> None:
        """What the handle held is committed: its image is empty, the file is its size."""
        self._dirty.clear()
        self._budget.hold(self, 0)
        self._base = self._committed_bytes = self._size
        self._pending = False
        self._low = None

    def _apply(self, target: WriteTarget) -> None:
        """Make the committed file ``target`` what the handle holds: keep the committed bytes
        below ``_base``, write the dirty chunks, zero-fill any gap, set the size."""
        fs = self._fs
        committed = target.size
        fs.hooks.guard(target)
        keep = min(committed, self._base)  # committed bytes that stay the file's
        cs = self._cs
        appends = keep == committed > 0 and self._low is not None and self._low >= committed
        edge = committed // cs
        if appends and committed % cs and edge in self._dirty:
            # only bytes past the end changed: the last chunk's committed part is taken as it
            # is now (not as this handle first saw it), so those bytes stay exactly the same
            fresh = fs.chunks.read(target.ino, committed, edge * cs, committed % cs)
            self._dirty[edge][: committed % cs] = fresh
        # a rewrite from 0 lets history take the chunks (none are left: all are written
        # anew); otherwise it copies what it must keep; what an earlier flush committed gets
        # no version of its own
        ino = target.ino
        change = Change(
            unchanged_below=committed if appends else 0,
            whole=keep == 0,
            by_handle=True,
            first=ino != self._flushed,
        )
        self._write_chunks(ino, fs.hooks.changing(target, change).in_place, keep)
        self._flushed = ino
        fs.hooks.changed(target, change, self._size)

    def _write_chunks(self, ino: int, committed: int, keep: int) -> None:
        """Make inode ``ino`` (``committed`` bytes long) the handle's file: its first ``keep``
        bytes stay, the dirty chunks and any gap up to the size are written."""
        fs, cs = self._fs, self._cs
        if committed > keep:
            fs.chunks.truncate(ino, committed, keep)
        edge = keep // cs  # the chunk where the kept bytes end, rewritten if the file grows
        kept_edge = (
            fs.chunks.read(ino, keep, edge * cs, keep % cs)
            if keep % cs and edge not in self._dirty and self._size > keep
            else b""
        )
        fs.chunks.put(self._rows(ino, keep, kept_edge))
        fs._set_content(ino, self._size)

    def _rows(
        self, ino: int, keep: int, kept_edge: bytes
    ) -> Iterator[tuple[int, int, bytes | bytearray]]:
        """The chunks a commit writes, made one at a time as SQLite takes them (so a hole
        costs one chunk of memory, whatever its size): the dirty ones, and past the ``keep``
        committed bytes every other chunk up to the size, zeros after ``kept_edge`` (the
        committed part of the chunk where the kept bytes end)."""
        cs, size = self._cs, self._size
        for index in range(-(-size // cs)):
            start = index * cs
            length = min(cs, size - start)
            chunk = self._dirty.get(index)
            if chunk is not None:
                if len(chunk) < length:
                    chunk.extend(bytes(length - len(chunk)))
                del chunk[length:]
                yield ino, index, chunk  # apsw binds the bytearray: no copy
            elif start + length > keep:  # past the kept bytes: a hole, or the old last chunk
                old = kept_edge if start < keep else b""
                yield ino, index, old.ljust(length, b"\0")

    def _record(self, target: WriteTarget) -> None:
        """The handle's one version: of the file as it is now, hashed as it was written
        when the writes ran on from 0, else read back."""
        fs = self._fs
        size = fs.size_of(target.ino)
        hash_ = self._hash.digest() if self._hash is not None and self._hashed == size else None
        fs.hooks.closed(target, size, hash_)


class InodeFile(WorkspaceFile):
    """A handle bound to an inode instead of a path, as an open file descriptor is: what the
    FUSE mount opens. Each commit goes to the inode, its version under the inode's oldest name
    then; a file unlinked while open stays readable and writable through it, its writes
    committed to the inode alone (``_spill``) and gone with the last close."""

    def __init__(
        self,
        fs: FileSystem,
        ino: int,
        writable: bool,
        made: Stat | None = None,
        budget: DirtyBudget | None = None,
    ) -> None:
        """``made``: the stat of a file the caller has just created, so it is not looked up
        again; ``budget``: shared with the other handles (a mount's)."""
        self.ino = ino
        self._by = fs.by_inode
        self._made = made
        super().__init__(fs, f"inode {ino}", "r+b" if writable else "rb", budget=budget)

    def _committed_size(self) -> int | None:
        st, self._made = self._made or self._by.stat(self.ino), None
        if is_dir(st.st_mode):
            raise fs_error(errno.EISDIR, self.name)
        if st.type != "file":
            raise fs_error(errno.EINVAL, self.name, "not a regular file")
        return st.st_size

    def _committed(self, start: int, end: int) -> bytes:
        stop = min(end, self._base)
        data = self._by.read(self.ino, start, stop - start) if stop > start else b""
        return data.ljust(end - start, b"\0")

    @property
    def size(self) -> int:
        """The file's size as this handle sees it (its writes included)."""
        return self._size

    @property
    def dirty(self) -> bool:
        """Does the handle hold changes not committed yet?"""
        return self._pending

    def _commit(self, *, version: bool) -> None:
        with self._fs._write():
            target = self._fs._target_of(self.ino)  # where its oldest name is now
            if target is None:  # unlinked (see the class docstring)
                if self._pending:
                    self._spill()
                return
            self._commit_to(target, version=version)
        self._committed_all()

    def _spill(self) -> None:
        """Commit an unlinked file's bytes to its inode, which only this process's handles
        still reach: history first moves away whatever it holds of that inode
        (``Changes.detached``), and no version is recorded, since the file has no name."""
        fs = self._fs
        fs.hooks.detached(self.ino)
        committed = fs.size_of(self.ino)
        self._write_chunks(self.ino, committed, min(committed, self._base))
        self._committed_all()


class _FlushThrough:
    """Python's buffered writers do not pass ``flush`` on to the raw file: here it must
    reach it, since that is where the commit happens."""

    def flush(self) -> None:
        super().flush()  # type: ignore[misc]
        self.raw.flush()  # type: ignore[attr-defined]


class _BufferedWriter(_FlushThrough, io.BufferedWriter):
    pass


class _BufferedRandom(_FlushThrough, io.BufferedRandom):
    pass


def open_file(
    fs: FileSystem, path: str, mode: str, encoding: str, buffer_limit: int
) -> WorkspaceFile | io.TextIOWrapper:
    """``ws.open``: the raw handle for a binary mode, a text wrapper over it otherwise."""
    raw = WorkspaceFile(fs, paths.normalize(path), mode, buffer_limit)
    kind, plus, binary = parse_mode(mode)
    if binary:
        return raw
    buffered: io.BufferedIOBase
    if plus:
        buffered = _BufferedRandom(raw)
    elif kind == "r":
        buffered = io.BufferedReader(raw)
    else:
        buffered = _BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding=encoding)
