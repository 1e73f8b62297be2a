"""File content in fs_data: reading and writing byte ranges over fixed-size chunks.

Invariant kept by every function here (and checked by fsck): a file of ``size`` bytes has
chunks ``0 .. ceil(size / chunk_size) - 1``, all exactly ``chunk_size`` long but the last. Holes
(a write past the end, a growing truncate) are stored as zero bytes, because the spec's readers
concatenate chunks and must see the same bytes we do. Callers hold the write transaction and
update ``fs_inode.size`` themselves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import apsw

if TYPE_CHECKING:
    from agentfs.core.base import Base

_SELECT_RANGE = (
    "SELECT chunk_index, data FROM fs_data WHERE ino = ? AND chunk_index BETWEEN ? AND ?"
    " ORDER BY chunk_index"
)
_SELECT_ONE = "SELECT data FROM fs_data WHERE ino = ? AND chunk_index = ?"
_UPSERT = (
    "INSERT INTO fs_data(ino, chunk_index, data) VALUES (?, ?, ?)"
    " ON CONFLICT(ino, chunk_index) DO UPDATE SET data = excluded.data"
)
_INSERT = "INSERT INTO fs_data(ino, chunk_index, data) VALUES (?, ?, ?)"


class Chunks:
    """Chunked content I/O for one connection and one chunk size."""

    def __init__(self, conn: apsw.Connection, chunk_size: int) -> None:
        self.conn = conn
        self.size = chunk_size
        #: The host directory under the workspace, whose files' bytes come in when first
        #: read (``agentfs.core.base``); None for a workspace without one.
        self.base: Base | None = None

    def present(self, ino: int) -> int | None:
        """Make sure the bytes of file ``ino`` are in the workspace: None when they were,
        else its size once they are (brought in from the base's host file now)."""
        if self.base is not None and self.base.unread(ino):
            return self.base.fill(ino)
        return None

    def read(self, ino: int, file_size: int, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes ``[offset, offset+length)`` clipped to ``file_size``: short at the end of file.

        A damaged file (a chunk missing or short, found by fsck) still reads as ``file_size``
        bytes with zeros in the gaps, never with later bytes shifted into the wrong place. A
        file of the base whose bytes are not in yet is brought in first, and clipped to the
        size it has then (the host's file may have changed since it was listed).
        """
        filled = self.present(ino)
        if filled is not None:
            file_size = filled
        end = file_size if length is None else min(file_size, offset + length)
        if offset >= end:
            return b""
        cs = self.size
        first, last = offset // cs, (end - 1) // cs
        if first == last:
            chunk = self.conn.execute(_SELECT_ONE, (ino, first)).get or b""
            data = chunk[offset - first * cs : end - first * cs]
        else:
            parts, expect = [], first
            for index, chunk in self.conn.execute(_SELECT_RANGE, (ino, first, last)):
                if index != expect:
                    parts.append(bytes((index - expect) * cs))
                parts.append(chunk if len(chunk) == cs or index == last else chunk.ljust(cs, b"\0"))
                expect = index + 1
            data = b"".join(parts)[offset - first * cs : end - first * cs]
        return data if len(data) == end - offset else data.ljust(end - offset, b"\0")

    def read_many(self, ranges: list[tuple[int, int, int]]) -> list[bytes]:
        """Bytes ``[start, end)`` of each (ino, start, end), with one query for all of them
        (a search reading thousands of small pieces would otherwise pay a query each). The
        ranges must lie within their files, as the search index records them."""
        for ino in {ino for ino, _start, _end in ranges}:
            self.present(ino)
        cs = self.size
        wanted = sorted(
            {
                (ino, i)
                for ino, start, end in ranges
                for i in range(start // cs, (end - 1) // cs + 1)
            }
        )
        if not wanted:
            return [b""] * len(ranges)
        found = {
            (ino, index): data
            for ino, index, data in self.conn.execute(
                "SELECT d.ino, d.chunk_index, d.data FROM json_each(?) AS j JOIN fs_data AS d"
                " ON d.ino = j.value ->> 0 AND d.chunk_index = j.value ->> 1",
                (json.dumps(wanted),),
            )
        }
        out = []
        for ino, start, end in ranges:
            first, last = start // cs, (end - 1) // cs
            joined = b"".join(
                found.get((ino, i), b"").ljust(cs, b"\0") if i < last else found.get((ino, i), b"")
                for i in range(first, last + 1)
            )
            piece = joined[start - first * cs : end - first * cs]
            out.append(piece.ljust(end - start, b"\0"))
        return out

    def replace(self, ino: int, data: bytes, old_size: int) -> None:
        """Make ``data`` the whole content of a file of ``old_size`` bytes. Chunks are updated
        in place and those past the new end deleted: a DELETE and a re-INSERT of the same
        keys dirtied more pages than an UPDATE (a 1 KiB overwrite)."""
        cs = self.size
        count = -(-len(data) // cs)
        if -(-old_size // cs) > count:
            self.conn.execute(
                "DELETE FROM fs_data WHERE ino = ? AND chunk_index >= ?", (ino, count)
            )
        view = memoryview(data)
        self.conn.executemany(
            _UPSERT, ((ino, i, view[i * cs : (i + 1) * cs].tobytes()) for i in range(count))
        )

    def append_new(self, ino: int, first_index: int, data: bytes) -> None:
        """Insert ``data`` as fresh chunks from ``first_index`` (no chunk there yet)."""
        cs = self.size
        if len(data) <= cs:
            if data:
                self.conn.execute(_INSERT, (ino, first_index, data))
            return
        view = memoryview(data)
        self.conn.executemany(
            _INSERT,
            (
                (ino, first_index + i, view[pos : pos + cs].tobytes())
                for i, pos in enumerate(range(0, len(data), cs))
            ),
        )

    def put(self, rows: Iterable[tuple[int, int, bytes | bytearray]]) -> None:
        """Set whole chunks, ``(ino, chunk_index, data)`` each, whether or not they exist; the
        caller keeps the layout (every chunk full but the last). ``rows`` may be a generator:
        SQLite takes one row at a time."""
        self.conn.executemany(_UPSERT, rows)

    def write(self, ino: int, file_size: int, offset: int, data: bytes) -> int:
        """Write ``data`` at ``offset`` (zero-filling any gap after the old end); new size."""
        if not data:
            return file_size
        end = offset + len(data)
        self._splice(ino, file_size, min(offset, file_size), end, offset, data)
        return max(file_size, end)

    def truncate(self, ino: int, file_size: int, new_size: int) -> None:
        """Cut or zero-extend the content to ``new_size`` bytes."""
        cs = self.size
        if new_size > file_size:
            self._splice(ino, file_size, file_size, new_size, new_size, b"")
            return
        keep = -(-new_size // cs)  # chunks that stay
        self.conn.execute("DELETE FROM fs_data WHERE ino = ? AND chunk_index >= ?", (ino, keep))
        if new_size % cs:
            self.conn.execute(
                "UPDATE fs_data SET data = substr(data, 1, ?) WHERE ino = ? AND chunk_index = ?",
                (new_size % cs, ino, keep - 1),
            )

    def _splice(
        self, ino: int, file_size: int, start: int, end: int, offset: int, data: bytes
    ) -> None:
        """Rewrite ``[start, end)``: zeros before ``offset``, then ``data``. Only the first
        and the last chunk can keep old bytes around the range: those are read first, and
        the chunks then stream into one statement, so a hole costs one chunk of memory."""
        cs = self.size
        kept: dict[int, bytes] = {}
        for index in {start // cs, (end - 1) // cs}:
            base = index * cs
            old_len = max(0, min(cs, file_size - base))
            if old_len and (start > base or min(base + cs, end) - base < old_len):
                kept[index] = self.conn.execute(_SELECT_ONE, (ino, index)).get or b""

        def rows() -> Iterator[tuple[int, int, bytes]]:
            for index, lo, hi, piece in self._pieces(start, end, offset, data):
                old = kept.get(index)
                yield (
                    ino,
                    index,
                    piece if old is None else old[:lo].ljust(lo, b"\0") + piece + old[hi:],
                )

        self.conn.executemany(_UPSERT, rows())

    def _pieces(
        self, start: int, end: int, offset: int, data: bytes
    ) -> Iterator[tuple[int, int, int, bytes]]:
        """(chunk index, lo, hi, new bytes for [lo, hi) of that chunk) over ``[start, end)``."""
        cs = self.size
        view = memoryview(data)
        for index in range(start // cs, (end - 1) // cs + 1):
            base = index * cs
            lo, hi = max(base, start), min(base + cs, end)
            zeros = bytes(max(0, min(hi, offset) - lo))
            data_lo, data_hi = max(lo, offset) - offset, hi - offset
            piece = zeros + view[data_lo:data_hi].tobytes() if data_hi > data_lo else zeros
            yield index, lo - base, hi - base, piece
