"""Processes that hold a workspace's files open read-only: a read-only FUSE mount.

A writable mount registers as the orphan queue's keeper (``ws_keeper``, ``agentfs.core.orphans``)
so that no other process frees an inode it still has open after someone else unlinked it. A
read-only mount cannot write that row. It takes a shared ``flock`` on a side file instead,
``WS.db-readers``, for as long as it runs, and a purge anywhere leaves the queue alone while
any such lock is held.

``flock``, not ``fcntl`` record locks: SQLite locks byte ranges of the database file itself
with ``fcntl``, and the two kinds never interact on Linux; an ``fcntl`` lock is the process's
and would vanish when any descriptor of the file closed, where a ``flock`` belongs to one open
file description and conflicts within a process too; and the kernel drops it when its holder
dies, however it dies, so a killed mount never blocks purging.

The side file gets the workspace file's mode and, when root makes it, its owner: what
SQLite does for the ``-wal`` and ``-shm`` files. A private workspace has a private side
file, and every process that may open the workspace may open the side file too (a writer
must, to see whether a read-only mount made by root holds it).
"""

from __future__ import annotations

import errno
import fcntl
import os

SUFFIX = "-readers"


def side_file(database: str) -> str:
    """The lock file of the workspace file ``database``."""
    return database + SUFFIX


class ReaderHold:
    """A shared lock on ``database``'s side file, created if missing, until ``release``."""

    def __init__(self, database: str) -> None:
        side = side_file(database)
        try:
            fd = _create_like(database, side)
        except FileExistsError:
            fd = os.open(side, os.O_RDONLY | os.O_CLOEXEC)
        except PermissionError:
            try:  # a directory we may not write to: the file may be there already
                fd = os.open(side, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                raise PermissionError(
                    errno.EACCES,
                    "a read-only mount needs this lock file beside the workspace (so other"
                    " processes leave the files it reads alone) and cannot create it",
                    side,
                ) from None
        self._fd: int | None = fd
        try:
            fcntl.flock(self._fd, fcntl.LOCK_SH)  # waits out a purge's momentary check
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with the descriptor
            self._fd = None


def _create_like(database: str, side: str) -> int:
    """Create ``side`` with ``database``'s permission bits (less the umask) and, as root, its
    owner (private and the caller's where the workspace file is gone); FileExistsError if it
    exists."""
    try:
        st: os.stat_result | None = os.stat(database)
    except FileNotFoundError:
        st = None
    mode = 0o600 if st is None else st.st_mode & 0o666
    fd = os.open(side, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    if st is not None and os.geteuid() == 0:
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except BaseException:
            os.close(fd)
            raise
    return fd


def held(database: str) -> bool:
    """Does any process (this one included) hold ``database`` open read-only as a mount?"""
    try:
        fd = os.open(side_file(database), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing also lets go of the exclusive lock just taken
    return False
