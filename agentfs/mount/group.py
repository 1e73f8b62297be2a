"""Group commit: the mount's changes committed together, a few times a second.

A commit costs more than most requests (the WAL frames of every page touched, the locks):
untarring a tree or ``rm -rf`` would pay one per request. So the mount holds one write
transaction open across requests and commits it when it is ``WINDOW`` seconds old, after
``MAX_OPERATIONS`` operations, when the mount has been idle for ``IDLE`` seconds, at every
``fsync``, and at unmount. Each request is still atomic on its own (the core's operations are
savepoints inside it, rolled back alone when they fail), and still recorded as its own
operation (``FileSystem.next_operation``: one version per open-write-close, as without it).

The price is the window (docs/mount.md): a change is visible to other processes, and safe
from a crash of the mount, once its group commits, at most ``WINDOW`` seconds later; what
``fsync`` returned for is committed and on disk. Other processes' writers wait for the end of
the current group (SQLite's busy timeout covers it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from agentfs.core.fs import FileSystem
from agentfs.db import Transaction

#: Oldest a group may get before it commits (seconds).
WINDOW = 0.05
#: Idle time after which an open group commits (seconds).
IDLE = 0.01
#: Operations a group holds at most.
MAX_OPERATIONS = 2000


class GroupCommit:
    """The mount's open write transaction (see the module docstring)."""

    def __init__(self, fs: FileSystem, *, window: float = WINDOW) -> None:
        self.fs = fs
        self.window = window
        self._open: Transaction | None = None
        self._started = 0.0
        self._last = 0.0
        self._operations = 0

    @contextmanager
    def operation(self) -> Iterator[None]:
        """One request that changes the workspace, inside the group (opened if none is)."""
        if self._open is None:
            transaction = self.fs.transaction()
            transaction.__enter__()
            self._open = transaction
            self._started = time.monotonic()
            self._operations = 0
        else:
            self.fs.next_operation()
        try:
            yield
        finally:
            self._operations += 1
            self._last = time.monotonic()
            if self._last - self._started >= self.window or self._operations >= MAX_OPERATIONS:
                self.commit()

    def commit(self) -> None:
        """Commit the open group now (nothing if none is open)."""
        transaction, self._open = self._open, None
        if transaction is None:
            return
        try:
            transaction.__exit__(None, None, None)
        except BaseException:
            # a failed COMMIT (a full disk) may leave the transaction open: end it, so the
            # next group starts clean; the kernel is told of the failure by the request
            if self.fs.conn.in_transaction:
                self.fs.conn.execute("ROLLBACK")
            self.fs.drop_caches()
            raise

    def commit_if_idle(self) -> None:
        """Commit a group nothing has added to for ``IDLE`` seconds (called by a timer)."""
        if self._open is not None and time.monotonic() - self._last >= IDLE:
            self.commit()
