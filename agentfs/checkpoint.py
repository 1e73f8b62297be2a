"""Checkpointing the WAL from a background thread, so no writer's commit waits for one.

With SQLite's automatic checkpoint the commit that pushes the WAL past its threshold copies
every page of the WAL into the database file and fsyncs it before returning: a 1 KiB write
that happens to be that commit took 110-140 ms instead of 0.2 ms, and a 100 MiB write through
``ws.open`` spent 0.7-0.9 s of its 1.1 s there (docs/benchmarks.md). Here the commit only
notices (the WAL hook, which replaces the automatic checkpoint on that connection) and wakes a
thread that checkpoints on a connection of its own, on the other core: ``PASSIVE`` first,
which blocks no one, then a short ``RESTART`` so the WAL starts over rather than growing while
writes go on (``_checkpoint``). Should the thread fall far behind (a WAL of ``BEHIND`` times
the threshold), the writer checkpoints itself, so the WAL stays bounded.

The thread starts at the first wake-up (most handles never write 40 MiB) and stops at
``close``; it is a daemon, and a checkpoint killed half-way is harmless (SQLite redoes it).
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import apsw

#: A WAL this many times the threshold makes the writer checkpoint by itself.
BEHIND = 4
#: How long the thread's RESTART checkpoint waits for the writer's transaction or an old
#: reader before giving up, and how long it then leaves RESTART alone.
RESTART_WAIT_MS = 50
RESTART_BACKOFF_S = 1.0


class BackgroundCheckpointer:
    """The WAL hook of one writing connection and the thread it wakes.

    Attributes:
        checkpoints: how many checkpoints the thread has run.
        error: what stopped the thread, if anything (the writer then checkpoints itself).
    """

    def __init__(self, path: str | Path, threshold_pages: int) -> None:
        self.path = str(path)
        self.threshold = threshold_pages
        self.checkpoints = 0
        self.error: BaseException | None = None
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._restart_after = 0.0

    def install(self, conn: apsw.Connection) -> None:
        """Make ``conn``'s commits wake this checkpointer instead of checkpointing."""
        conn.set_wal_hook(self._on_commit)

    def _on_commit(self, conn: apsw.Connection, name: str, pages: int) -> int:
        if pages >= self.threshold:
            if self.error is not None or pages >= BEHIND * self.threshold:
                with contextlib.suppress(apsw.BusyError):  # the thread is checkpointing now
                    conn.wal_checkpoint(name, apsw.SQLITE_CHECKPOINT_PASSIVE)
            else:
                if self._thread is None:
                    self._start()
                self._wake.set()
        return apsw.SQLITE_OK

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agentfs-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            conn = apsw.Connection(self.path, flags=apsw.SQLITE_OPEN_READWRITE)
            conn.set_busy_timeout(RESTART_WAIT_MS)
            # A connection opens the file (and learns it is in WAL mode) at its first
            # statement: until then a checkpoint does nothing and reports (-1, -1).
            conn.execute("SELECT 1 FROM sqlite_schema LIMIT 1").fetchall()
        except BaseException as exc:  # the writer falls back to checkpointing itself
            self.error = exc
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stop:
                    return
                try:
                    self._checkpoint(conn)
                except apsw.BusyError:
                    continue  # a connection is closing or recovering: the next commit retries
                self.checkpoints += 1
        except BaseException as exc:
            self.error = exc
        finally:
            conn.close()

    def _checkpoint(self, conn: apsw.Connection) -> None:
        """Copy the WAL's pages into the database without blocking anyone (PASSIVE), then
        the few frames committed meanwhile with the writer held off (RESTART), so that the
        next commit starts the WAL over instead of growing it: a writer that never pauses
        would otherwise never let a PASSIVE checkpoint finish. A reader holding an old
        snapshot makes RESTART wait (``RESTART_WAIT_MS``) and then give up; it is not tried
        again for ``RESTART_BACKOFF_S``, so a long reader cannot stall the writer often."""
        log, _ = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
        if log < 0:
            raise RuntimeError(f"{self.path}: the WAL checkpoint did not run (not in WAL mode?)")
        if time.monotonic() < self._restart_after:
            return
        try:
            conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_RESTART)
        except apsw.BusyError:
            self._restart_after = time.monotonic() + RESTART_BACKOFF_S

    def close(self) -> None:
        """Stop the thread (after the checkpoint it is running, if any)."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
