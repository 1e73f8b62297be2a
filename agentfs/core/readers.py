"""Processes that hold a workspace's files open read-only: a read-only FUSE mount.

Such a mount cannot write a keeper row (``agentfs.core.orphans``), so it holds a shared
``flock`` on the side file ``WS.db-readers`` while it runs, and a purge leaves the queue alone
while any such lock is held. ``flock``, not ``fcntl``: it never interacts with SQLite's own
``fcntl`` locks and goes with its holder however it dies (docs/architecture.md, "Deletes"). The
side file gets the workspace file's mode and owner, as SQLite's ``-wal`` and ``-shm`` do.
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
