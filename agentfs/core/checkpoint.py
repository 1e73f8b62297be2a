"""Checkpointing the WAL from a background thread, so no writer's commit waits for one.

The commit only notices (the WAL hook, which replaces SQLite's automatic checkpoint on that
connection) and wakes a thread that runs ``PASSIVE`` checkpoints on a connection of its own;
once the thread has copied all but ``TAIL`` of the threshold, the writer copies the rest itself
so the WAL can start over, and at ``BEHIND`` times the threshold (or the largest commit) it
waits, so the WAL stays bounded. docs/concurrency.md, "Checkpoints", has the design and the
figures; the thread starts at the first wake-up and a checkpoint killed half-way is harmless.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import apsw

#: A WAL this many times the threshold (or the largest commit since it started over: frames
#: other processes committed in between count too) makes the writer checkpoint by itself.
BEHIND = 4
#: The writer copies the WAL's last frames itself when the thread has left at most this
#: fraction of the threshold uncopied (or ``TAIL_FRAMES``, whichever is more: a few ms of
#: copying); the thread is woken again after the WAL grew by this fraction.
TAIL = 1 / 8
TAIL_FRAMES = 1024


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
        #: Held by whoever checkpoints (the thread, or the writer): the writer can wait for the
        #: thread's checkpoint instead of failing with SQLITE_BUSY next to it.
        self._checkpointing = threading.Lock()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._wal_fd: int | None = None
        #: The WAL's generation (``wal_generation``, read at ``install``) and frames as last
        #: seen at commit.
        self._generation = -1
        self._frames = 0
        self._woken_at = 0
        #: Most frames one commit added in this generation.
        self._largest = 0
        #: (generation, frames copied) of the thread's last checkpoint.
        self._copied = (-1, 0)

    def install(self, conn: apsw.Connection) -> None:
        """Make ``conn``'s commits wake this checkpointer instead of checkpointing. The WAL
        file exists from now until ``conn`` closes (an open connection keeps any other from
        deleting it): its header is read through one descriptor, opened here."""
        with contextlib.suppress(OSError):  # unreadable: generations are not told apart
            self._wal_fd = os.open(conn.filename_wal, os.O_RDONLY)
        self._generation = self.wal_generation()
        conn.set_wal_hook(self._on_commit)

    def wal_generation(self) -> int:
        """The salts in the WAL file's header: every restart of the WAL changes them, whichever
        connection restarts it. (A WAL that started over is not always shorter than before:
        one large commit per generation leaves it the same size. The header's checkpoint
        sequence number is no generation either: each connection keeps its own.) -1 if the
        header cannot be read: then only a WAL that got shorter counts as started over (the
        commit hook must not fail a commit that has happened)."""
        if self._wal_fd is None:
            return -1
        try:
            salts = os.pread(self._wal_fd, 8, 16)
        except OSError:
            return -1
        return int.from_bytes(salts, "big") if len(salts) == 8 else -1

    def _on_commit(self, conn: apsw.Connection, name: str, pages: int) -> int:
        if self._stop:  # closed: the connection is closing too
            return apsw.SQLITE_OK
        # the WAL started over since the last commit: it got shorter, or (read only when it
        # matters, past the threshold) its generation changed
        if pages < self._frames:
            self._started_over(self.wal_generation())
        elif pages >= self.threshold and (generation := self.wal_generation()) != self._generation:
            self._started_over(generation)
        self._largest = max(self._largest, pages - self._frames)
        self._frames = pages
        if pages < self.threshold:
            return apsw.SQLITE_OK
        generation, copied = self._copied
        if generation != self._generation:
            copied = 0
        if self.error is not None or pages >= BEHIND * max(self.threshold, self._largest):
            self._checkpoint_here(conn, name, wait=True)
        elif copied > 0 and pages - copied <= max(self.threshold * TAIL, TAIL_FRAMES):
            self._checkpoint_here(conn, name)  # the rest; the next transaction restarts the WAL
        elif pages - self._woken_at >= self.threshold * TAIL:
            self._woken_at = pages
            if self._thread is None:
                self._start()
            self._wake.set()
        return apsw.SQLITE_OK

    def _started_over(self, generation: int) -> None:
        """Forget what was seen of the WAL before it started over (``generation``: its new
        one)."""
        self._generation = generation
        self._woken_at = self._largest = self._frames = 0

    def _checkpoint_here(self, conn: apsw.Connection, name: str, *, wait: bool = False) -> None:
        """Copy what the WAL holds that is not copied yet, in the writer's thread; after the
        thread's running checkpoint (``wait``), or not at all while there is one."""
        if not self._checkpointing.acquire(blocking=wait):
            return
        try:
            with contextlib.suppress(apsw.BusyError):  # another process is checkpointing
                conn.wal_checkpoint(name, apsw.SQLITE_CHECKPOINT_PASSIVE)
        finally:
            self._checkpointing.release()

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agentfs-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            conn = apsw.Connection(self.path, flags=apsw.SQLITE_OPEN_READWRITE)
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
                    with self._checkpointing:
                        generation = self.wal_generation()
                        log, copied = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
                except apsw.BusyError:
                    continue  # a connection is closing or recovering: the next commit retries
                if log < 0:
                    raise RuntimeError(f"{self.path}: the WAL checkpoint did not run")
                self._copied = (generation, copied)
                self.checkpoints += 1
        except BaseException as exc:
            self.error = exc
        finally:
            conn.close()

    def close(self) -> None:
        """Stop the thread (after the checkpoint it is running, if any)."""
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._wal_fd is not None:
            os.close(self._wal_fd)
            self._wal_fd = None
