"""Inodes that lost their last name: queued in ws_orphan, their rows freed later in batches.

An unlink only removes the name and queues the inode, so every delete's commit stays small, a
tree of any size goes in a few statements, and a FUSE mount can keep unlinked files open; a
crash in between leaves a queue the next open finishes. Inodes a process still holds open are
pinned (``ws_pin``), a writable mount is the queue's keeper (``ws_keeper``) and a read-only one
holds a lock (``agentfs.core.readers``): docs/architecture.md, "Deletes", has the whole design.
"""

from __future__ import annotations

import time

import apsw

from agentfs.core import holders, readers
from agentfs.core.inodes import S_IFDIR, S_IFMT, is_dir
from agentfs.core.xattrs import drop_all
from agentfs.db import write_transaction

#: Inodes freed per purge transaction, and the backlog of small ones that triggers a purge.
PURGE_BATCH = 256

#: The next queued inodes to free: not those this connection holds open (``Orphans.pin``),
#: nor those another process pinned (``ws_pin``; dead holders' pins are cleared first).
_QUEUED = (
    "SELECT ino FROM ws_orphan WHERE ino NOT IN (SELECT ino FROM temp.pinned_orphan)"
    " AND ino NOT IN (SELECT ino FROM ws_pin)"
)
#: A connection that pins writes a durable pin whenever it queues an inode it has pinned,
#: whatever queued it (an unlink, a rename over it, a tree's removal, history letting go).
_PIN_ON_QUEUE = (
    "CREATE TEMP TRIGGER IF NOT EXISTS pin_queued_orphan AFTER INSERT ON main.ws_orphan"
    " WHEN new.ino IN (SELECT ino FROM temp.pinned_orphan)"
    " BEGIN INSERT OR IGNORE INTO ws_pin(ino, holder) VALUES (new.ino, {holder}); END"
)
_BATCH = f"{_QUEUED} ORDER BY ino LIMIT ?"


class Orphans:
    """The orphan queue as one connection sees it.

    Attributes:
        backlog: inodes this connection queued since its last purge.
    Caveats:
        Space comes back when the backlog reaches PURGE_BATCH, when something large was
        queued (a file over one chunk, a tree), at ``Workspace.close`` and at the next open.
    """

    def __init__(self, conn: apsw.Connection, chunk_size: int) -> None:
        self.conn = conn
        self.chunk_size = chunk_size
        self.backlog = 0
        #: Purge at the next chance: True at first, so the first purge (at open) finishes
        #: what a crashed process left behind.
        self._urgent = True
        #: This connection's name in ``ws_pin`` (``holders.this_connection``), once
        #: ``enable_pins``.
        self.holder: str | None = None
        self._readonly = conn.readonly("main")
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS doomed_dentry(id INTEGER PRIMARY KEY, ino INTEGER)"
        )
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS pinned_orphan(ino INTEGER PRIMARY KEY)")

    def enable_pins(self) -> None:
        """Let this connection ``pin``: installs its trigger (a TEMP one: outside any
        transaction, so no rollback can take it away)."""
        if self.conn.in_transaction:
            raise RuntimeError("enable_pins must run outside a transaction")
        self.holder = holders.this_connection()
        self.conn.execute(_PIN_ON_QUEUE.format(holder=apsw.format_sql_value(self.holder)))

    def keep(self) -> None:
        """Register as the queue's keeper (see the module docstring): from now on the other
        connections leave queued inodes to this one. Call ``unkeep`` when done."""
        if self.holder is None:
            raise RuntimeError("call enable_pins first")
        with write_transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO ws_keeper(holder) VALUES (?)", (self.holder,))

    def unkeep(self) -> None:
        """Stop keeping the queue; the next purge anywhere may free what it holds."""
        with write_transaction(self.conn):
            self.conn.execute("DELETE FROM ws_keeper WHERE holder = ?", (self.holder,))

    def others_committed(self) -> None:
        """Another connection committed: it may have queued inodes that only this keeper
        will free, so the next ``purge_due`` purges."""
        self._urgent = True

    def kept_elsewhere(self) -> bool:
        """Does another live connection keep the queue (so this one must not purge)? A
        writable mount's ``ws_keeper`` row, or a read-only mount's lock (``readers``)."""
        keepers = [h for (h,) in self.conn.execute("SELECT holder FROM ws_keeper")]
        if any(h != self.holder and holders.alive(h) for h in keepers):
            return True
        return bool(self.conn.filename) and readers.held(self.conn.filename)

    def pin(self, ino: int) -> None:
        """Keep ``ino``'s rows even once it is queued: this process has it open (a file
        unlinked while a FUSE handle still reads it). Nothing is written here (an open must
        stay cheap): the pin is a temp table row, and only if ``ino`` is queued by this
        connection while pinned does a trigger also write its durable pin (``ws_pin``), in
        the queuing transaction, which every other process's purge respects."""
        if self.holder is None:
            raise RuntimeError("call enable_pins first")
        self.conn.execute("INSERT OR IGNORE INTO temp.pinned_orphan(ino) VALUES (?)", (ino,))

    def unpin(self, ino: int) -> None:
        """The last handle on ``ino`` closed: a queued ``ino`` may be freed now. Nothing is
        written here (a release must stay cheap, and may come inside a read transaction):
        a durable pin it got is dropped by the next purge (``clear_stale_pins``), made soon."""
        self.conn.execute("DELETE FROM temp.pinned_orphan WHERE ino = ?", (ino,))
        self._urgent = True

    def release(self, ino: int, mode: int, size: int) -> None:
        """``ino`` has no name left: a directory (no content) goes at once, anything else is
        queued for ``purge``. Runs inside the caller's transaction."""
        if is_dir(mode):
            self.free_directory(ino)
            return
        self.conn.execute(
            "INSERT OR IGNORE INTO ws_orphan(ino, queued_at) VALUES (?, ?)",
            (ino, int(time.time())),
        )
        self.backlog += 1
        if size > self.chunk_size:
            self._urgent = True

    def free_directory(self, ino: int) -> None:
        """Free directory ``ino`` now, it has no name left: its row and its extended
        attributes (it has no content)."""
        self.conn.execute("DELETE FROM fs_inode WHERE ino = ?", (ino,))
        drop_all(self.conn, "?", (ino,))

    def unlink_subtree(self, dir_ino: int, *, track_dirty: bool = False) -> None:
        """Drop every name below directory ``dir_ino`` (not its own) and queue what they freed.

        Set-based, so its cost is a few statements whatever the tree's size. A file that is
        also hard-linked from outside the tree keeps its remaining links and survives, and so
        does one that history holds (a version or a snapshot entry names it). With
        ``track_dirty`` (snapshots exist), every directory that lost entries is marked dirty
        for the next snapshot.
        """
        self._urgent = True
        execute = self.conn.execute
        execute(
            "INSERT INTO temp.doomed_dentry(id, ino) WITH RECURSIVE sub(id, ino) AS ("
            " SELECT id, ino FROM fs_dentry WHERE parent_ino = ?"
            " UNION ALL SELECT d.id, d.ino FROM fs_dentry d JOIN sub ON d.parent_ino = sub.ino)"
            " SELECT id, ino FROM sub",
            (dir_ino,),
        )
        if track_dirty:
            execute(
                "INSERT OR IGNORE INTO ws_dirty(ino) SELECT DISTINCT parent_ino FROM fs_dentry"
                " WHERE id IN (SELECT id FROM temp.doomed_dentry)"
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
            " FROM fs_inode WHERE nlink <= 0 AND ino IN (SELECT ino FROM temp.doomed_dentry)"
            " AND ((mode & ?) = ? OR (NOT EXISTS (SELECT 1 FROM ws_version v"
            " WHERE v.ino = fs_inode.ino)"
            " AND NOT EXISTS (SELECT 1 FROM ws_entry e WHERE e.ino = fs_inode.ino)))",
            (int(time.time()), S_IFMT, S_IFDIR),
        )
        execute("DELETE FROM temp.doomed_dentry")

    def pending(self) -> int:
        return self.conn.execute("SELECT count(*) FROM ws_orphan").get

    def purge_due(self) -> int:
        """``purge`` if it is worth a transaction now (see the class caveats); else nothing."""
        if self._urgent or self.backlog >= PURGE_BATCH:
            return self.purge()
        return 0

    def purge(self, batch: int = PURGE_BATCH) -> int:
        """Free every queued inode, ``batch`` per transaction; returns how many were freed."""
        self._urgent = False
        self.backlog = 0
        if self._readonly:
            return 0  # nothing can be freed through a read-only connection
        self.clear_stale_pins()
        if self.conn.execute(f"{_QUEUED} LIMIT 1").get is None:
            return 0  # nothing after all: one cheap read, no write lock
        freed = 0
        while True:
            with write_transaction(self.conn):
                # Asked under the write lock: a mount that started before this transaction
                # is seen, and one that starts after it cannot hold what it frees (only an
                # inode unlinked before it began is queued in it, and a mount opens names).
                if self.kept_elsewhere():
                    return freed  # a mount may hold these open without a pin: its to free
                # A safety net: history (a version, a snapshot) may hold a queued file only
                # through a bug or a hand edit; it leaves the queue unfreed, never lost.
                # Only this batch is looked at, so a long queue is not rescanned per batch;
                # directories are never held (restore re-creates them).
                self.conn.execute(
                    f"DELETE FROM ws_orphan WHERE ino IN ({_BATCH}) AND (EXISTS (SELECT 1"
                    " FROM ws_version v WHERE v.ino = ws_orphan.ino) OR EXISTS (SELECT 1"
                    " FROM ws_entry e JOIN fs_inode i ON i.ino = e.ino WHERE e.ino ="
                    " ws_orphan.ino AND (i.mode & ?) <> ?))",
                    (batch, S_IFMT, S_IFDIR),
                )
                count = self.conn.execute(f"SELECT count(*) FROM ({_BATCH})", (batch,)).get
                if not count:
                    return freed
                drop_all(self.conn, _BATCH, (batch,))
                for table in ("fs_data", "fs_symlink", "fs_inode", "ws_orphan"):
                    self.conn.execute(f"DELETE FROM {table} WHERE ino IN ({_BATCH})", (batch,))
            freed += count

    def clear_stale_pins(self) -> None:
        """Delete the durable pins that hold nothing open any more: every pin of a process
        that is no longer running (a crashed mount), so what it pinned can be freed, and this
        connection's own pins of inodes it has closed since; and the keepers that are gone.
        One read each when there are none."""
        holders_now = [h for (h,) in self.conn.execute("SELECT DISTINCT holder FROM ws_pin")]
        dead = [(h,) for h in holders_now if not holders.alive(h)]  # type: ignore[arg-type]
        keepers = [h for (h,) in self.conn.execute("SELECT holder FROM ws_keeper")]
        dead_keepers = [(h,) for h in keepers if not holders.alive(h)]  # type: ignore[arg-type]
        closed = "holder = ? AND ino NOT IN (SELECT ino FROM temp.pinned_orphan)"
        own_closed = (
            self.holder in holders_now
            and self.conn.execute(
                f"SELECT 1 FROM ws_pin WHERE {closed} LIMIT 1", (self.holder,)
            ).get
        )
        if dead or own_closed or dead_keepers:
            with write_transaction(self.conn):
                self.conn.executemany("DELETE FROM ws_pin WHERE holder = ?", dead)
                self.conn.executemany("DELETE FROM ws_keeper WHERE holder = ?", dead_keepers)
                if own_closed:
                    self.conn.execute(f"DELETE FROM ws_pin WHERE {closed}", (self.holder,))
