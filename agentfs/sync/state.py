"""What a workspace remembers about its sync, in tables of its own file (docs/sync.md, "The
local sync state"): the settings and counters, the base tree, the file hashes last computed,
and the conflicts a pull resolved. Made by ``setup``; the core knows nothing of them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

import apsw

from agentfs.db import write_transaction
from agentfs.sync.tree import Conflict, Entry, Known, Tree

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ws_sync (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ws_sync_tree (key TEXT PRIMARY KEY, entry TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ws_sync_hash (
  path TEXT PRIMARY KEY, ino INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL, hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ws_sync_call (
  origin TEXT NOT NULL, remote_id INTEGER NOT NULL, local_id INTEGER NOT NULL,
  PRIMARY KEY (origin, remote_id)
);
CREATE TABLE IF NOT EXISTS ws_sync_snapshot (
  snapshot_id INTEGER PRIMARY KEY, key TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ws_sync_conflict (
  id INTEGER PRIMARY KEY, key TEXT NOT NULL, kept TEXT, lost TEXT, reason TEXT NOT NULL,
  at INTEGER NOT NULL
);
"""


def is_set_up(conn: apsw.Connection) -> bool:
    table = "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'ws_sync'"
    if conn.execute(table).get is None:
        return False
    return conn.execute("SELECT 1 FROM ws_sync WHERE key = 'remote'").get is not None


class SyncState:
    """The sync tables of one workspace connection."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def create(self, remote: str, origin: str) -> None:
        """Remember ``remote`` and this copy's ``origin``. A token is never kept here: the
        file travels (``agentfs.credentials`` keeps a saved one)."""
        with write_transaction(self.conn):
            for _ in self.conn.execute(_SCHEMA):
                pass
            self._set("remote", remote)
            self._set("origin", origin)

    # --- settings and counters ---------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        text = self.conn.execute("SELECT value FROM ws_sync WHERE key = ?", (key,)).get
        return default if text is None else json.loads(text)

    def _set(self, key: str, value: Any) -> None:
        self.conn.execute(
            "INSERT INTO ws_sync(key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value)),
        )

    def record(self, **values: Any) -> None:
        """Set several values in one transaction."""
        with write_transaction(self.conn):
            for key, value in values.items():
                self._set(key, value)

    def count(self, sent: int, received: int) -> None:
        """Add one operation's bytes on the wire to the totals."""
        self.record(
            sent_bytes=self.get("sent_bytes", 0) + sent,
            received_bytes=self.get("received_bytes", 0) + received,
        )

    @property
    def heads(self) -> list[str]:
        return list(self.get("heads", []))

    # --- the base tree -----------------------------------------------------------------------

    def base(self) -> Tree:
        return {
            key: json.loads(entry)
            for key, entry in self.conn.execute("SELECT key, entry FROM ws_sync_tree")
        }

    def set_base(self, tree: Tree, changes: dict[str, Entry | None], heads: list[str]) -> None:
        """The base is now ``tree`` (the old base with ``changes``), reconciled with ``heads``;
        call inside a write transaction."""
        for key, entry in changes.items():
            if entry is None:
                self.conn.execute("DELETE FROM ws_sync_tree WHERE key = ?", (key,))
            else:
                self.conn.execute(
                    "INSERT OR REPLACE INTO ws_sync_tree(key, entry) VALUES (?, ?)",
                    (key, json.dumps(tree[key], sort_keys=True)),
                )
        self._set("heads", heads)

    # --- file hashes -------------------------------------------------------------------------

    def known(self) -> dict[str, Known]:
        rows = self.conn.execute("SELECT path, ino, ctime_ns, size, hash FROM ws_sync_hash")
        return {path: Known(ino, ctime, size, h) for path, ino, ctime, size, h in rows}

    def remember(self, hashes: dict[str, Known], previous: dict[str, Known]) -> None:
        """Keep ``hashes`` (what the files are now) where they differ from ``previous``."""
        for path in previous.keys() - hashes.keys():
            self.conn.execute("DELETE FROM ws_sync_hash WHERE path = ?", (path,))
        self.conn.executemany(
            "INSERT OR REPLACE INTO ws_sync_hash(path, ino, ctime_ns, size, hash)"
            " VALUES (?, ?, ?, ?, ?)",
            [
                (path, k.ino, k.ctime_ns, k.size, k.hash)
                for path, k in hashes.items()
                if previous.get(path) != k
            ],
        )

    # --- tool calls from other copies --------------------------------------------------------

    def arrived_calls(self, from_id: int) -> set[int]:
        """The local ids, from ``from_id`` on, of calls stored from other copies."""
        rows = self.conn.execute(
            "SELECT local_id FROM ws_sync_call WHERE local_id >= ?", (from_id,)
        )
        return {row[0] for row in rows}

    def has_call(self, origin: str, remote_id: int) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM ws_sync_call WHERE origin = ? AND remote_id = ?", (origin, remote_id)
        ).get
        return row is not None

    def local_calls(self, origin: str, remote_ids: list[int]) -> dict[int, int]:
        """The local ids of the calls ``origin`` logged as ``remote_ids`` that were stored
        here (by their id there)."""
        wanted = set(remote_ids)
        if not wanted:
            return {}
        rows = self.conn.execute(
            "SELECT remote_id, local_id FROM ws_sync_call WHERE origin = ?"
            " AND remote_id BETWEEN ? AND ?",
            (origin, min(wanted), max(wanted)),
        )
        return {int(r): int(local) for r, local in rows if r in wanted}

    def add_calls(self, origin: str, remote_ids: list[int], local_ids: list[int]) -> None:
        self.conn.executemany(
            "INSERT INTO ws_sync_call(origin, remote_id, local_id) VALUES (?, ?, ?)",
            [(origin, r, local) for r, local in zip(remote_ids, local_ids, strict=True)],
        )

    # --- snapshots sent and received ----------------------------------------------------------

    def snapshot_ids(self) -> set[int]:
        """Local snapshots that travelled (sent from here, or received)."""
        return {row[0] for row in self.conn.execute("SELECT snapshot_id FROM ws_sync_snapshot")}

    def snapshot_keys(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT key FROM ws_sync_snapshot")}

    def add_snapshot(self, snapshot_id: int, key: str) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO ws_sync_snapshot(snapshot_id, key) VALUES (?, ?)",
            (snapshot_id, key),
        )

    # --- conflicts ---------------------------------------------------------------------------

    def add_conflicts(self, conflicts: Iterable[Conflict]) -> None:
        now = int(time.time())
        self.conn.executemany(
            "INSERT INTO ws_sync_conflict(key, kept, lost, reason, at) VALUES (?, ?, ?, ?, ?)",
            [(c.key, _text(c.kept), _text(c.lost), c.reason, now) for c in conflicts],
        )

    def conflicts(self) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT id, key, kept, lost, reason, at FROM ws_sync_conflict ORDER BY id"
        )
        return [
            {
                "id": id_,
                "path": key,
                "kept": _entry(kept),
                "lost": _entry(lost),
                "reason": reason,
                "at": at,
            }
            for id_, key, kept, lost, reason, at in rows
        ]

    def resolve(self, keys: Iterable[str] = ()) -> int:
        """Clear the conflicts of ``keys`` (none given: all); how many were cleared."""
        wanted = list(keys)
        cleared = 0
        with write_transaction(self.conn):
            if not wanted:
                self.conn.execute("DELETE FROM ws_sync_conflict")
                return self.conn.changes()
            for key in wanted:
                self.conn.execute("DELETE FROM ws_sync_conflict WHERE key = ?", (key,))
                cleared += self.conn.changes()
        return cleared


def _text(entry: Entry | None) -> str | None:
    return None if entry is None else json.dumps(entry, sort_keys=True)


def _entry(text: str | None) -> Entry | None:
    return None if text is None else json.loads(text)
