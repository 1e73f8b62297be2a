"""Version history of each path (``ws_version``), written by the core in the operation's own
transaction, and read back by ``history``, ``cat --version`` and ``diff``.

Numbers run from 1 per path in the order events happened; the newest ``write`` row of a live
file names the inode the file has now, so that inode is frozen (``agentfs.cow``) and the next
write copies up. Unchanged bytes make no version (``write`` compares digests first), and a
transaction that writes one path several times leaves one version: its row is updated, not
repeated. Retention (``history.keep``) prunes a path's oldest rows as new ones arrive; the
inodes only they held go to the orphan queue and are freed with it.
"""

from __future__ import annotations

import hashlib
from types import EllipsisType
from typing import NamedTuple

import apsw

from agentfs.cow import CopyOnWrite
from agentfs.inodes import now_ns

#: Events that carry content (an inode); 'delete' and 'move' do not.
CONTENT_OPS = frozenset({"write", "rename", "link", "restore"})


def digest(data: bytes) -> bytes:
    """The content hash stored with versions and reads: BLAKE2b, 128 bits."""
    return hashlib.blake2b(data, digest_size=16).digest()


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

    @property
    def has_content(self) -> bool:
        return self.ino is not None

    def as_dict(self) -> dict[str, object]:
        row = self._asdict()
        row["hash"] = self.hash.hex() if self.hash is not None else None
        return row


_COLUMNS = "path, n, op, ino, size, hash, at_ns, actor, thread, other"
_LATEST = f"SELECT {_COLUMNS} FROM ws_version WHERE path = ? ORDER BY n DESC LIMIT 1"
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
    """

    def __init__(self, conn: apsw.Connection, cow: CopyOnWrite) -> None:
        self.conn = conn
        self.cow = cow
        self.actor: str | None = None
        self.thread: str | None = None
        self.journal: list[tuple[str, int]] | None = None

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
    ) -> list[int]:
        """Append an event to ``path``'s history (inside the caller's transaction).

        A second ``write`` of the same inode in one transaction updates that transaction's row
        instead. ``latest`` saves a lookup when the caller has the path's newest row already.
        Returns the inodes retention pruned that nothing else holds any more, for the caller
        to release.
        """
        if latest is ...:
            latest = self.latest(path)
        now = now_ns()
        if (
            latest is not None
            and op == "write"
            and latest.op in CONTENT_OPS
            and latest.ino == ino
            and ino in self.cow.fresh
        ):
            self.conn.execute(
                "UPDATE ws_version SET size = ?, hash = ?, at_ns = ? WHERE path = ? AND n = ?",
                (size, hash_, now, path, latest.n),
            )
            return []  # already in the journal
        n = 1 if latest is None else latest.n + 1
        self.conn.execute(
            _INSERT, (path, n, op, ino, size, hash_, now, self.actor, self.thread, other)
        )
        if self.journal is not None:
            self.journal.append((path, n))
        return self._prune(path, n)

    def forget(self, version: Version) -> None:
        """Drop a row this transaction wrote (the file grew past ``history.max_bytes``)."""
        self.conn.execute(
            "DELETE FROM ws_version WHERE path = ? AND n = ?", (version.path, version.n)
        )
        if self.journal is not None and (version.path, version.n) in self.journal:
            self.journal.remove((version.path, version.n))

    def _prune(self, path: str, newest: int) -> list[int]:
        keep = self.cow.settings.keep
        if not keep or newest <= keep:  # all kept, or versioning off (gc prunes then)
            return []
        dropped = [
            int(ino)
            for (ino,) in self.conn.execute(
                "DELETE FROM ws_version WHERE path = ? AND n <= ? RETURNING ino",
                (path, newest - keep),
            ).fetchall()
            if ino is not None
        ]
        return [ino for ino in dropped if self._unheld(ino)]

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
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM ws_version WHERE path = ? AND n = ?", (path, n)
        ).get
        return None if row is None else Version(*row)

    def paths_under(self, prefix: str) -> list[str]:
        """Paths with history at or below directory ``prefix`` (deleted ones too)."""
        if prefix == "/":
            rows = self.conn.execute("SELECT DISTINCT path FROM ws_version ORDER BY path")
        else:
            rows = self.conn.execute(
                "SELECT DISTINCT path FROM ws_version WHERE path = ? OR"
                " (path >= ? AND path < ?) ORDER BY path",
                (prefix, prefix + "/", prefix + "0"),  # '0' sorts right after '/'
            )
        return [path for (path,) in rows]
