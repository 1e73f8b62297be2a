"""Version history of each path (``ws_version``), written by the core in the operation's own
transaction, and read back by ``history``, ``cat --version`` and ``diff`` (docs/history.md).

A version's bytes are in an inode it names or in a ``ws_kept`` row: before a live file's bytes
change in place, ``keep`` copies them aside for a small file, or has the caller copy the content
down for a large one (``repoint`` then moves the rows). Unchanged bytes make no version, one
transaction writing a path several times leaves one, and retention (``history.keep``) prunes
the oldest rows as new ones arrive.
"""

from __future__ import annotations

from collections.abc import Callable
from types import EllipsisType
from typing import NamedTuple

import apsw

from agentfs.core.chunks import Chunks
from agentfs.core.inodes import now_ns
from agentfs.db import INT_MAX
from agentfs.history.cow import CopyOnWrite
from agentfs.history.identity import Acting

#: Events that carry content (an inode or kept bytes); 'delete' and 'move' do not.
CONTENT_OPS = frozenset({"write", "rename", "link", "restore"})

#: The largest content whose versions keep their bytes in ``ws_kept`` when the file changes in
#: place; a larger file's content is copied down to a new inode instead (writing its bytes into
#: ``ws_kept`` would cost more). Measured in docs/history.md.
KEPT_MAX = 16 * 1024


class Version(NamedTuple):
    """One row of a path's history (``Workspace.history``)."""

    path: str
    n: int
    op: str
    ino: int | None
    size: int | None
    hash: bytes | None
    at_ns: int
    actor: str | None
    thread: str | None
    other: str | None
    kept: int | None = None

    @property
    def has_content(self) -> bool:
        return self.ino is not None or self.kept is not None

    def describes(self, ino: int, size: int) -> bool:
        """Is this the content inode ``ino`` has now, ``size`` bytes long? A version may
        name an inode that has grown since: appends leave older versions as its prefix."""
        return self.ino == ino and self.size == size

    def as_dict(self) -> dict[str, object]:
        row = self._asdict()
        row["hash"] = self.hash.hex() if self.hash is not None else None
        return row


_COLUMNS = "path, n, op, ino, size, hash, at_ns, actor, thread, other, kept"
_LATEST = f"SELECT {_COLUMNS} FROM ws_version WHERE path = ? ORDER BY n DESC LIMIT 1"
_KEEP = "INSERT INTO ws_kept(data) VALUES (?) RETURNING id"
_INSERT = (
    "INSERT INTO ws_version(path, n, op, ino, size, hash, at_ns, actor, thread, other)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class Versions:
    """Writing and reading ``ws_version`` on one connection.

    Attributes:
        actor, thread: who writes, recorded with every event (set on the workspace handle).
        journal: when a list, every (path, n) recorded is appended to it, so a caller can
            tell which versions one operation made (the agent tools' audit links them).
        pending: the rows this transaction recorded that describe their inode as it will be
            at commit: a later change in the same transaction updates such a row instead of
            keeping its bytes (``begin`` empties it).
    """

    def __init__(
        self,
        conn: apsw.Connection,
        cow: CopyOnWrite,
        chunks: Chunks,
        release: Callable[[int], None],
        acting: Acting,
    ) -> None:
        self.conn = conn
        self.cow = cow
        self.chunks = chunks
        self.release = release  # frees an inode nothing holds any more (retention pruned it)
        self.acting = acting  # whose names each version records
        self.journal: list[tuple[str, int]] | None = None
        self.pending: set[tuple[str, int]] = set()

    def begin(self) -> None:
        """A new outermost transaction: no row is pending yet."""
        self.pending = set()

    def latest(self, path: str) -> Version | None:
        row = self.conn.execute(_LATEST, (path,)).get
        return None if row is None else Version(*row)

    def record(
        self,
        path: str,
        op: str,
        ino: int | None = None,
        size: int | None = None,
        hash_: bytes | None = None,
        other: str | None = None,
        latest: Version | EllipsisType | None = ...,
        *,
        pending: bool = True,
    ) -> None:
        """Append an event to ``path``'s history (inside the caller's transaction).

        A second ``write`` of the same inode in one transaction updates that transaction's row
        instead. ``latest`` saves a lookup when the caller has the path's newest row already.
        ``pending`` False: the row keeps the inode's bytes as they are now, even if this
        transaction changes them next (a file's untracked content, recorded before a change).
        Inodes retention pruned that nothing else holds any more are released.
        """
        if latest is ...:
            latest = self.latest(path)
        now = now_ns()
        if (
            latest is not None
            and op == "write"
            and latest.op in CONTENT_OPS
            and latest.ino == ino
            and (path, latest.n) in self.pending
        ):
            self.conn.execute(
                "UPDATE ws_version SET size = ?, hash = ?, at_ns = ? WHERE path = ? AND n = ?",
                (size, hash_, now, path, latest.n),
            )
            return  # already in the journal
        n = 1 if latest is None else latest.n + 1
        who = self.acting.now
        self.conn.execute(
            _INSERT, (path, n, op, ino, size, hash_, now, who.actor, who.thread, other)
        )
        if pending and ino is not None:
            self.pending.add((path, n))
        if self.journal is not None:
            self.journal.append((path, n))
        for ino in self._prune(path, n):
            self.release(ino)

    def _holding(self, ino: int, path: str | None) -> list[tuple[str, int, int]]:
        """(path, n, size) of every version row naming inode ``ino``, except ``path``'s
        pending rows: the change about to be recorded updates those."""
        return [
            (row_path, n, row_size)  # type: ignore[misc]
            for row_path, n, row_size in self.conn.execute(
                "SELECT path, n, size FROM ws_version WHERE ino = ?", (ino,)
            ).fetchall()
            if row_path != path or (row_path, n) not in self.pending
        ]

    def keep(self, ino: int, size: int, path: str | None) -> bool:
        """Before inode ``ino`` (``size`` bytes) changes in place: give every version row that
        names it its bytes in ``ws_kept``, except ``path``'s pending row (the change about to
        be recorded updates that one). False when there is such a row but the file is over
        ``KEPT_MAX``: the caller must copy the content down instead (``repoint`` the rows to
        the inode that takes it), and nothing was kept."""
        rows = self._holding(ino, path)
        if not rows:
            return True
        if size > KEPT_MAX:
            return False
        data = self.chunks.read(ino, size)
        for row_path, n, row_size in rows:  # an older version may be a shorter prefix
            kept = self.conn.execute(
                "INSERT INTO ws_kept(data) VALUES (?) RETURNING id", (data[:row_size],)
            ).get
            self.conn.execute(
                "UPDATE ws_version SET ino = NULL, kept = ? WHERE path = ? AND n = ?",
                (kept, row_path, n),
            )
        return True

    def repoint(self, ino: int, frozen: int, path: str | None) -> None:
        """The content of inode ``ino`` was copied down to ``frozen`` (``CopyOnWrite``): every
        version row naming ``ino`` names ``frozen`` now, except ``path``'s pending rows (as
        in ``keep``: they describe the content about to be written, and will be updated)."""
        self.conn.executemany(
            "UPDATE ws_version SET ino = ? WHERE path = ? AND n = ?",
            [(frozen, row_path, n) for row_path, n, _ in self._holding(ino, path)],
        )

    def content(self, version: Version) -> bytes:
        """The bytes of a content row, wherever they are."""
        if version.kept is not None:
            return self.conn.execute("SELECT data FROM ws_kept WHERE id = ?", (version.kept,)).get
        if version.ino is None or version.size is None:
            raise ValueError(f"{version.path}: version {version.n} is a {version.op}, no content")
        return self.chunks.read(version.ino, version.size)

    def forget(self, version: Version) -> None:
        """Drop a pending row this transaction wrote (the file grew past
        ``history.max_bytes``); such a row names its inode, so there are no kept bytes."""
        self.conn.execute(
            "DELETE FROM ws_version WHERE path = ? AND n = ?", (version.path, version.n)
        )
        self.pending.discard((version.path, version.n))
        if self.journal is not None and (version.path, version.n) in self.journal:
            self.journal.remove((version.path, version.n))

    def _prune(self, path: str, newest: int) -> list[int]:
        keep = self.cow.settings.keep
        if not keep or newest <= keep:  # all kept, or versioning off (gc prunes then)
            return []
        rows = self.conn.execute(
            "DELETE FROM ws_version WHERE path = ? AND n <= ? RETURNING ino, kept",
            (path, newest - keep),
        ).fetchall()
        for _, kept in rows:
            if kept is not None:
                self.conn.execute("DELETE FROM ws_kept WHERE id = ?", (kept,))
        return [int(ino) for ino, _ in rows if ino is not None and self._unheld(int(ino))]

    def _unheld(self, ino: int) -> bool:
        """Nothing names ``ino`` any more: no dentry (nlink 0), no version, no snapshot."""
        nlink = self.conn.execute("SELECT nlink FROM fs_inode WHERE ino = ?", (ino,)).get
        return nlink == 0 and not self.cow.referenced(ino)

    # --- reading ---------------------------------------------------------------------------

    def history(self, path: str) -> list[Version]:
        """Every event of ``path``, oldest first."""
        return [
            Version(*row)
            for row in self.conn.execute(
                f"SELECT {_COLUMNS} FROM ws_version WHERE path = ? ORDER BY n", (path,)
            )
        ]

    def get(self, path: str, n: int) -> Version | None:
        """Version ``n`` of ``path``; None when there is none, ``n`` outside the numbers a
        version can have (1 up to SQLite's largest integer) included, which SQLite could not
        even be asked about."""
        if not 1 <= n <= INT_MAX:
            return None
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM ws_version WHERE path = ? AND n = ?", (path, n)
        ).get
        return None if row is None else Version(*row)

    def holding_under(self, prefix: str) -> list[Version]:
        """The latest version of each path at or below directory ``prefix`` whose latest
        event holds content (the files history has there now), by path. One query: SQLite
        takes a ``max()`` aggregate's bare columns from the row holding the maximum, and the
        paths whose last event is a delete or a move are left out there, not in Python."""
        where = ""
        args: tuple[str, ...] = ()
        if prefix != "/":
            where = " WHERE path = ? OR (path >= ? AND path < ?)"
            args = (prefix, prefix + "/", prefix + "0")  # '0' sorts right after '/'
        rows = self.conn.execute(
            f"SELECT * FROM (SELECT {_COLUMNS}, max(n) FROM ws_version{where} GROUP BY path)"
            " WHERE ino IS NOT NULL OR kept IS NOT NULL ORDER BY path",
            args,
        )
        return [Version(*row[:-1]) for row in rows]
