"""Read tracking and the read-before-write policy (docs/history.md, "Read tracking").

A handle with a ``thread`` records each file it reads (``ws_read``): the inode and ctime seen
and the digest when known. A write whose path matches the handle's ``read_before_write`` globs
checks that record: any change sets ctime and a replaced file has another inode, so an equal
(inode, ctime) proves nothing changed, whoever wrote, and equal digests prove the content is
the same. A write refreshes the writer's own record.
"""

from __future__ import annotations

import datetime
from typing import NamedTuple

import apsw

from agentfs.core.errors import StaleReadError
from agentfs.core.globs import match
from agentfs.history.identity import Acting


class Read(NamedTuple):
    """The last read of ``path`` by ``thread``."""

    thread: str
    path: str
    ino: int
    ctime_ns: int
    size: int
    n: int | None
    hash: bytes | None
    ranged: bool
    at_ns: int

    def as_dict(self) -> dict[str, object]:
        row = self._asdict()
        row["hash"] = self.hash.hex() if self.hash is not None else None
        return row


class FileState(NamedTuple):
    """A file as it is now, in the terms a read records."""

    ino: int
    ctime_ns: int
    size: int
    n: int | None  # its newest version number, if that version is its current content
    hash: bytes | None
    by: str | None = None  # who wrote that version: "actor/thread"


_COLUMNS = "thread, path, ino, ctime_ns, size, n, hash, ranged, at_ns"


def _read_of(row: tuple) -> Read:
    """A ``ws_read`` row as a ``Read`` (``ranged`` is stored as 0/1)."""
    return Read._make((*row[:7], bool(row[7]), row[8]))


def _when(ns: int) -> str:
    return datetime.datetime.fromtimestamp(ns / 1e9, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")


class Reads:
    """``ws_read`` on one connection, and the read-before-write policy of whoever acts
    through one handle (``acting``: empty globs, no policy)."""

    def __init__(self, conn: apsw.Connection, acting: Acting) -> None:
        self.conn = conn
        self.acting = acting

    @property
    def read_before_write(self) -> tuple[str, ...]:
        return self.acting.now.read_before_write

    def record(self, thread: str, path: str, state: FileState, ranged: bool, now: int) -> None:
        self.conn.execute(
            f"INSERT OR REPLACE INTO ws_read({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                thread,
                path,
                state.ino,
                state.ctime_ns,
                state.size,
                state.n,
                state.hash,
                int(ranged),
                now,
            ),
        )

    def last(self, thread: str, path: str) -> Read | None:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM ws_read WHERE thread = ? AND path = ?", (thread, path)
        ).get
        return None if row is None else _read_of(row)

    def list(self, thread: str | None = None) -> list[Read]:
        if thread is None:
            rows = self.conn.execute(f"SELECT {_COLUMNS} FROM ws_read ORDER BY thread, path")
        else:
            rows = self.conn.execute(
                f"SELECT {_COLUMNS} FROM ws_read WHERE thread = ? ORDER BY path", (thread,)
            )
        return [_read_of(row) for row in rows]

    def guards(self, path: str) -> bool:
        """Does the policy cover ``path``?"""
        return any(match(glob, path) for glob in self.read_before_write)

    def check(
        self, thread: str | None, path: str, now: FileState, current_hash: bytes | None
    ) -> None:
        """Raise ``StaleReadError`` unless ``thread`` read ``path`` in the state it is in now.
        ``current_hash`` is the file's digest now, or None when it would cost a full read."""
        if thread is None:
            raise StaleReadError(path, "read_before_write needs a thread on the handle", "unread")
        seen = self.last(thread, path)
        if seen is None:
            raise StaleReadError(
                path,
                f"thread {thread!r} has not read this file; read it before writing it",
                "unread",
            )
        if (seen.ino, seen.ctime_ns) == (now.ino, now.ctime_ns):
            return
        if seen.hash is not None and seen.hash == current_hash:
            return
        read_as = f"version {seen.n}" if seen.n is not None else f"{seen.size} bytes"
        now_as = f"version {now.n}" if now.n is not None else f"{now.size} bytes"
        if now.by:
            now_as += f" by {now.by}"
        raise StaleReadError(
            path,
            f"changed since thread {thread!r} read it: read {read_as} at {_when(seen.at_ns)},"
            f" now {now_as} (changed {_when(now.ctime_ns)}); read it again before writing",
        )
