"""How large a file (``EFBIG``) and a whole workspace (``ENOSPC``) may grow, checked before writing.

A refused write changes nothing; since a hole is stored as zeros, a file costs its size and
``truncate -s 1P`` must be refused up front. Both limits live in ``fs_config``, so every process
that opens the workspace obeys the same ones.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

import apsw

from agentfs.core.errors import fs_error
from agentfs.db import database_bytes

FILE_SIZE_KEY = "limits.file_size"
WORKSPACE_SIZE_KEY = "limits.workspace_size"
#: The largest file by default: far above what an agent's files hold, and low enough that a
#: hole made by mistake (or on purpose) costs seconds and gigabytes, not the disk.
DEFAULT_FILE_SIZE = 4 << 30


@dataclass(frozen=True)
class Limits:
    """A workspace's limits.

    Attributes:
        file_size: the largest size of a file, in bytes.
        workspace_size: the largest the database may grow to in bytes (its used pages), or
            None for no quota: only the disk's free space then.
    """

    file_size: int = DEFAULT_FILE_SIZE
    workspace_size: int | None = None

    def check(self, conn: apsw.Connection, path: str, old_size: int, new_size: int) -> None:
        """Refuse a file growing from ``old_size`` to ``new_size`` bytes past a limit. The
        quota compares the pages in use now plus the growth with the limit, so a write that
        frees or keeps space always passes (a full workspace can still be cleaned up)."""
        if new_size > self.file_size:
            raise fs_error(
                errno.EFBIG, path, f"files are limited to {self.file_size} bytes ({FILE_SIZE_KEY})"
            )
        if self.workspace_size is None or new_size <= old_size:
            return
        if database_bytes(conn) + new_size - old_size > self.workspace_size:
            raise fs_error(
                errno.ENOSPC,
                path,
                f"the workspace is limited to {self.workspace_size} bytes ({WORKSPACE_SIZE_KEY})",
            )


def load(conn: apsw.Connection) -> Limits:
    """The limits stored in ``fs_config``; defaults for those not set."""
    values = dict(
        conn.execute(
            "SELECT key, value FROM fs_config WHERE key IN (?, ?)",
            (FILE_SIZE_KEY, WORKSPACE_SIZE_KEY),
        )
    )
    try:
        file_size = int(values.get(FILE_SIZE_KEY, DEFAULT_FILE_SIZE))
        quota = values.get(WORKSPACE_SIZE_KEY)
        return Limits(file_size, None if quota is None else int(quota))
    except ValueError:
        raise fs_error(
            errno.EINVAL, conn.filename, f"fs_config limits are damaged: {values}"
        ) from None


def store(conn: apsw.Connection, limits: Limits) -> None:
    """Save ``limits`` (inside the caller's write transaction)."""
    if limits.file_size < 0 or (limits.workspace_size or 0) < 0:
        raise fs_error(errno.EINVAL, conn.filename, "limits must be >= 0")
    conn.execute(
        "INSERT OR REPLACE INTO fs_config(key, value) VALUES (?, ?)",
        (FILE_SIZE_KEY, str(limits.file_size)),
    )
    if limits.workspace_size is None:
        conn.execute("DELETE FROM fs_config WHERE key = ?", (WORKSPACE_SIZE_KEY,))
    else:
        conn.execute(
            "INSERT OR REPLACE INTO fs_config(key, value) VALUES (?, ?)",
            (WORKSPACE_SIZE_KEY, str(limits.workspace_size)),
        )
