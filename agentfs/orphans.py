"""Inodes that lost their last name: freed at once when small, queued in ws_orphan when not.

Removing a tree of 100,000 files must not hold the write lock while every chunk is deleted:
the names go in one transaction (``unlink_subtree``), the inodes are queued in the same
transaction, and ``purge`` frees them afterwards in batches, each its own transaction. A crash
in between leaves a queue that the next open finishes; nothing is lost and nothing leaks.
"""

from __future__ import annotations

import time

import apsw

from agentfs.db import write_transaction
from agentfs.inodes import S_IFDIR, S_IFLNK, S_IFMT, S_IFREG

#: Inodes freed per purge transaction: small enough to keep other writers waiting only briefly.
PURGE_BATCH = 256

_BATCH = "SELECT ino FROM ws_orphan ORDER BY ino LIMIT ?"


class Orphans:
    """The orphan queue of one connection."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        #: Anything queued since the last purge? True at first, so the first purge (at open)
        #: finishes what a crashed process left; afterwards a delete that queued nothing
        #: skips the purge entirely.
        self.queued = True
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS doomed_dentry(id INTEGER PRIMARY KEY, ino INTEGER)"
        )

    def release(self, ino: int, mode: int, *, small: bool) -> None:
        """``ino`` has no name left: free it now, or queue it when freeing would take long."""
        if small:
            kind = mode & S_IFMT
            if kind == S_IFREG:
                self.conn.execute("DELETE FROM fs_data WHERE ino = ?", (ino,))
            elif kind == S_IFLNK:
                self.conn.execute("DELETE FROM fs_symlink WHERE ino = ?", (ino,))
            self.conn.execute("DELETE FROM fs_inode WHERE ino = ?", (ino,))
            return
        self.queued = True
        self.conn.execute("UPDATE fs_inode SET nlink = 0 WHERE ino = ?", (ino,))
        self.conn.execute(
            "INSERT OR IGNORE INTO ws_orphan(ino, queued_at) VALUES (?, ?)",
            (ino, int(time.time())),
        )

    def unlink_subtree(self, dir_ino: int) -> None:
        """Drop every name below directory ``dir_ino`` (not its own) and queue what they freed.

        Set-based, so its cost is a few statements whatever the tree's size. A file that is
        also hard-linked from outside the tree keeps its remaining links and survives.
        """
        self.queued = True
        execute = self.conn.execute
        execute(
            "INSERT INTO temp.doomed_dentry(id, ino) WITH RECURSIVE sub(id, ino) AS ("
            " SELECT id, ino FROM fs_dentry WHERE parent_ino = ?"
            " UNION ALL SELECT d.id, d.ino FROM fs_dentry d JOIN sub ON d.parent_ino = sub.ino)"
            " SELECT id, ino FROM sub",
            (dir_ino,),
        )
        execute(
            "UPDATE fs_inode SET nlink = CASE WHEN (mode & ?) = ? THEN 0 ELSE nlink -"
            " (SELECT count(*) FROM temp.doomed_dentry t WHERE t.ino = fs_inode.ino) END"
            " WHERE ino IN (SELECT ino FROM temp.doomed_dentry)",
            (S_IFMT, S_IFDIR),
        )
        execute("DELETE FROM fs_dentry WHERE id IN (SELECT id FROM temp.doomed_dentry)")
        execute(
            "INSERT OR IGNORE INTO ws_orphan(ino, queued_at) SELECT DISTINCT ino, ?"
            " FROM fs_inode WHERE nlink <= 0 AND ino IN (SELECT ino FROM temp.doomed_dentry)",
            (int(time.time()),),
        )
        execute("DELETE FROM temp.doomed_dentry")

    def pending(self) -> int:
        return self.conn.execute("SELECT count(*) FROM ws_orphan").get

    def purge(self, batch: int = PURGE_BATCH) -> int:
        """Free every queued inode, ``batch`` per transaction; returns how many were freed."""
        if not self.queued:
            return 0
        self.queued = False
        if self.conn.execute("SELECT 1 FROM ws_orphan LIMIT 1").get is None:
            return 0  # nothing after all: one cheap read, no write lock
        freed = 0
        while True:
            with write_transaction(self.conn):
                count = self.conn.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM ws_orphan LIMIT ?)", (batch,)
                ).get
                if not count:
                    return freed
                for table in ("fs_data", "fs_symlink", "fs_inode", "ws_orphan"):
                    self.conn.execute(f"DELETE FROM {table} WHERE ino IN ({_BATCH})", (batch,))
            freed += count
