"""Group commit: the mount's requests share one open transaction, a few milliseconds long.

A transaction costs more than most requests, so requests that only read share a read
transaction as long as nobody commits (``CommitWatch``), and changes share a write transaction
committed after ``WINDOW`` seconds, ``MAX_OPERATIONS`` operations or ``IDLE`` seconds, at every
``close(2)`` and ``fsync``, and at unmount. Each change stays atomic (a savepoint) and its own
operation; the price is the window (docs/mount.md, "Group commit").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from agentfs.core.fs import FileSystem
from agentfs.db import CommitWatch, Transaction

#: Oldest a group may get before it ends (seconds).
WINDOW = 0.05
#: Idle time after which an open group ends (seconds).
IDLE = 0.01
#: Operations a write group holds at most.
MAX_OPERATIONS = 2000


class GroupCommit:
    """The mount's open transaction (see the module docstring)."""

    def __init__(
        self,
        fs: FileSystem,
        *,
        window: float = WINDOW,
        others_committed: Callable[[], None] = lambda: None,
    ) -> None:
        self.fs = fs
        self.window = window
        #: Called inside a group that begins after another process committed (its snapshot
        #: holds that commit): the mount's kernel cache is reconciled there.
        self.others_committed = others_committed
        self._open: Transaction | None = None
        self._started = 0.0
        self._last = 0.0
        self._operations = 0
        self._watch = CommitWatch(fs.conn.filename)
        #: The commit counter just before the open read group began.
        self._mark: bytes | None = None
        #: The commit counter at the last ``look``.
        self._looked: bytes | None = None
        #: ``FileSystem.data_version`` when the last group began.
        self._version = fs.data_version

    @property
    def writing(self) -> bool:
        """Is a write group open?"""
        return self._open is not None and self._open.write

    def begin(self, *, changes: bool) -> None:
        """A request starts (``end_request`` follows it): one that ``changes`` the workspace
        in the write group, as an operation of its own; one that only reads in the open group,
        read or write."""
        if changes:
            self._begin_change()
        else:
            self._begin_read()

    def _begin_read(self) -> None:
        """A read group is opened if none is, or if another process committed since the open
        one began."""
        if (
            self._open is not None
            and not self._open.write
            and self._watch.changed_since(self._mark)
        ):
            self.commit()
        if self._open is None:
            # taken before the snapshot is: a commit in between reads as a change (a
            # needless new snapshot), never as none
            self._mark = self._watch.mark()
            self._begin(self.fs.read_transaction())

    def _begin_change(self) -> None:
        """The write group is opened if none is (an open read group is ended first)."""
        if self._open is not None and not self._open.write:
            self.commit()
        if self._open is None:
            self._begin(self.fs.transaction())
        else:
            self.fs.next_operation()
        self._operations += 1

    def end_request(self) -> None:
        """The request that began last is answered: the group ends if it is old or full."""
        self._last = time.monotonic()
        if self._last - self._started >= self.window or self._operations >= MAX_OPERATIONS:
            self.commit()

    @contextmanager
    def request(self, *, changes: bool) -> Iterator[None]:
        """A block run as one request: ``begin`` before it, ``end_request`` after."""
        self.begin(changes=changes)
        try:
            yield
        finally:
            self.end_request()

    def _begin(self, transaction: Transaction) -> None:
        transaction.__enter__()
        self._open = transaction
        self._started = time.monotonic()
        self._operations = 0
        if self.fs.data_version != self._version:
            self._version = self.fs.data_version
            self.others_committed()

    def look(self) -> None:
        """Between requests (the mount's timer): if the WAL index moved since the last look
        and no group is open, begin and end a read group, so a commit by another process is
        noticed (``others_committed``) while no request comes. A moment's read transaction
        per look after a commit, ours included; one ``pread`` otherwise."""
        if self._open is not None:
            return
        mark = self._watch.mark()
        if mark is not None and mark == self._looked:
            return
        self._looked = mark
        with self.request(changes=False):
            pass
        self.commit()

    def commit(self) -> None:
        """End the open group now, committing what it wrote (nothing if none is open)."""
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

    def close(self) -> None:
        """Unmounting: end the open group and stop watching."""
        try:
            self.commit()
        finally:
            self._watch.close()

    def commit_if_idle(self) -> bool:
        """End a group no request has used for ``IDLE`` seconds (called by a timer); True
        when no group is open afterwards."""
        if self._open is not None and time.monotonic() - self._last >= IDLE:
            self.commit()
        return self._open is None
