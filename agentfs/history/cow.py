"""Copy-on-write under every write: which inodes a snapshot holds, copying a file's content
down to history, marking changed directories (docs/history.md, "Freezing and copy-down").

An inode's content is frozen while a snapshot entry or a version names it. Before it changes in
place, its bytes are copied down (``copy_down``) to a new nameless inode that takes every
history reference, so the live file keeps its inode number for life, which a FUSE mount and
programs such as git rely on. ``ws_dirty`` lists the directories changed since the newest
snapshot, so the next one reads only those.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import apsw

from agentfs.core.inodes import STAT_COLUMNS, Stat, exact, split_ns
from agentfs.core.xattrs import copy_all
from agentfs.history.trees import ENTRY_MTIME

#: Open rows for the entries of directory :dir born at generation :gen, where none is open.
_HELD_ALL_ALONG = (
    "INSERT INTO ws_entry(parent, name, born, ino, mode, mtime_ns)"
    f" SELECT d.parent_ino, d.name, :gen, d.ino, i.mode, {ENTRY_MTIME}"
    " FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino WHERE d.parent_ino = :dir"
    " AND NOT EXISTS (SELECT 1 FROM ws_entry e WHERE e.parent = d.parent_ino"
    " AND e.name = d.name AND e.died IS NULL)"
)
#: The watermark at the newest inode: every inode so far may be in a snapshot.
RAISE_WATERMARK = (
    "UPDATE ws_config SET value = (SELECT coalesce(max(seq), 0) FROM sqlite_sequence"
    " WHERE name = 'fs_inode') WHERE key = 'snapshot.watermark'"
)

#: ``history.keep`` as stored: 'all', 'none' or a number of versions per path.
KEEP_ALL = "all"
KEEP_NONE = "none"


@dataclass(frozen=True)
class HistorySettings:
    """The workspace-wide history settings (``ws_config``), shared by every handle.

    Attributes:
        keep: versions kept per path: None for all, 0 for none (versioning off), or N.
        max_bytes: files larger than this get no new versions.
        watermark: inodes numbered at or below this may be in a snapshot; -1 when no snapshot
            baseline exists (no ``ws_entry`` rows yet).
    """

    keep: int | None
    max_bytes: int
    watermark: int

    @property
    def versioning(self) -> bool:
        return self.keep != 0

    def versions(self, size: int) -> bool:
        """Does a file of ``size`` bytes get versions?"""
        return self.keep != 0 and size <= self.max_bytes

    def unversioned(self, size: int) -> str | None:
        """What to tell whoever wrote ``size`` bytes that got no version although history is
        on (a restore cannot bring that content back); None when it got one, or history is
        off (then nobody expects one)."""
        if self.keep == 0 or size <= self.max_bytes:
            return None
        return (
            "no version of it was kept: history keeps none of files over"
            f" {self.max_bytes:,} bytes (history.max_bytes)"
        )


def parse_keep(value: str) -> int | None:
    """'all' -> None, 'none' -> 0, '5' -> 5; anything else is a ValueError."""
    if value == KEEP_ALL:
        return None
    if value == KEEP_NONE:
        return 0
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise ValueError(f"history.keep must be 'all', 'none' or a positive number, not {value!r}")


def load_settings(conn: apsw.Connection) -> HistorySettings:
    values = dict(conn.execute("SELECT key, value FROM ws_config"))
    return HistorySettings(
        keep=parse_keep(values["history.keep"]),
        max_bytes=int(values["history.max_bytes"]),
        watermark=int(values["snapshot.watermark"]),
    )


def keep_text(keep: int | str | None) -> str:
    """The stored form of a ``keep`` the API accepts: None/'all', 0/'none', or N > 0."""
    if keep is None:
        return KEEP_ALL
    text = str(keep)
    if text == "0":
        return KEEP_NONE
    parse_keep(text)  # raises for anything else
    return text


def int_width(n: int) -> int:
    """Bytes SQLite's record format takes for the integer ``n`` (n >= 2: an inode number)."""
    for width, limit in ((1, 1 << 7), (2, 1 << 15), (3, 1 << 23), (4, 1 << 31), (6, 1 << 47)):
        if n < limit:
            return width
    return 8


#: A nameless copy of an inode row (nlink 0) with new times, for ``clone``.
_CLONE_INODE = (
    "INSERT INTO fs_inode(mode, nlink, uid, gid, size, atime, mtime, ctime, rdev, atime_nsec,"
    " mtime_nsec, ctime_nsec) SELECT mode, 0, uid, gid, size, atime, ?, ?, rdev, atime_nsec, ?, ?"
    f" FROM fs_inode WHERE ino = ? RETURNING {STAT_COLUMNS}"
)
#: A nameless copy of an inode row as it is (nlink 0), for ``copy_down``: what history held.
_FREEZE_INODE = (
    "INSERT INTO fs_inode(mode, nlink, uid, gid, size, atime, mtime, ctime, rdev, atime_nsec,"
    " mtime_nsec, ctime_nsec) SELECT mode, 0, uid, gid, size, atime, mtime, ctime, rdev,"
    " atime_nsec, mtime_nsec, ctime_nsec FROM fs_inode WHERE ino = ? RETURNING ino"
)
_COPY_CHUNKS = (
    "INSERT INTO fs_data(ino, chunk_index, data)"
    " SELECT ?, chunk_index, data FROM fs_data WHERE ino = ? ORDER BY chunk_index"
)
_MOVE_CHUNKS = "UPDATE fs_data SET ino = ? WHERE ino = ?"
_REPOINT_ENTRIES = "UPDATE ws_entry SET ino = ? WHERE ino = ? RETURNING parent, died IS NULL"


class CopyOnWrite:
    """Freeze tests, copy-down and dirty marks for one connection.

    Attributes:
        settings: the history settings as of this transaction (reloaded by ``begin``).
    Caveats:
        ``begin`` must run at the start of every outermost transaction: it reloads the
        settings when another connection committed (it may have snapshotted) and empties
        ``fresh``. A snapshot taken inside a transaction empties ``fresh`` too
        (``snapshot_taken``): what it holds is frozen from then on.
    """

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.settings = load_settings(conn)
        #: Inodes created by the current outermost transaction since its last snapshot (new
        #: files, clones): no snapshot can hold them.
        self.fresh: set[int] = set()
        self._settings_version: int | None = None

    def begin(self, data_version: int, changed: bool) -> None:
        """A new outermost transaction: reload settings if anyone committed since we looked."""
        self.fresh = set()
        if changed or self._settings_version is None:
            self.settings = load_settings(self.conn)
            self._settings_version = data_version

    def reload(self) -> None:
        """Re-read the settings now (after this connection changed them)."""
        self.settings = load_settings(self.conn)

    def snapshot_taken(self) -> None:
        """A snapshot was just taken in this transaction: reload the settings (the new
        watermark) and forget ``fresh``, whose inodes that snapshot may hold."""
        self.reload()
        self.fresh = set()

    def invalidate(self) -> None:
        """Settings may have been rolled back: reload them at the next transaction."""
        self._settings_version = None

    def held_all_along(self, dir_ino: int) -> None:
        """Directory ``dir_ino``'s entries, just brought in from the base, are in every
        snapshot that exists, as the base held them when each was taken: their rows are
        born at the oldest generation, and their inodes are frozen like a snapshot's."""
        oldest = self.conn.execute("SELECT min(id) FROM ws_snapshot").get
        if oldest is None:  # no snapshot yet: the first will record them
            return
        self.conn.execute(_HELD_ALL_ALONG, {"gen": oldest, "dir": dir_ino})
        self.conn.execute(RAISE_WATERMARK)
        self.snapshot_taken()

    def snapshotted(self, ino: int) -> bool:
        """Does a snapshot hold ``ino``'s current content? (Versions that name it are
        ``Versions.keep``'s business.) Exact: a snapshot entry names it. Only an inode at or
        below the watermark can be named by one, so the index probe is made only for those
        (a file created since the newest snapshot costs a comparison)."""
        return (
            ino not in self.fresh
            and ino <= self.settings.watermark
            and self.conn.execute("SELECT 1 FROM ws_entry WHERE ino = ?", (ino,)).get is not None
        )

    def referenced(self, ino: int) -> bool:
        """Does any version or snapshot entry still name ``ino`` (so it must not be freed)?"""
        one = self.conn.execute
        return (
            one("SELECT 1 FROM ws_version WHERE ino = ?", (ino,)).get is not None
            or one("SELECT 1 FROM ws_entry WHERE ino = ?", (ino,)).get is not None
        )

    def mark_dirty(self, dir_ino: int) -> None:
        """Directory ``dir_ino``'s entries changed: the next snapshot must re-read it."""
        if self.settings.watermark >= 0:
            self.conn.execute("INSERT OR IGNORE INTO ws_dirty(ino) VALUES (?)", (dir_ino,))

    def copy_down(self, ino: int, *, whole: bool) -> tuple[int, bool]:
        """Copy live file ``ino``'s content down to a new nameless inode: (its number, moved).

        Snapshot entries naming ``ino`` name the copy instead, so the live file keeps its inode
        number (the kernel and git's index hold it) and the caller changes it in place. With
        ``whole`` (every byte rewritten) the chunks are moved, not copied, when both numbers
        are as wide in a record (``int_width``), which writes only the pages whose bytes change
        (docs/history.md, "Freezing and copy-down").
        """
        conn = self.conn
        frozen: int = conn.execute(_FREEZE_INODE, (ino,)).get
        move = whole and int_width(frozen) == int_width(ino)
        conn.execute(_MOVE_CHUNKS if move else _COPY_CHUNKS, (frozen, ino))
        copy_all(conn, ino, frozen)
        entries = conn.execute(_REPOINT_ENTRIES, (frozen, ino)).fetchall()
        if entries:
            for parent in {parent for parent, alive in entries if alive}:
                self.mark_dirty(parent)  # type: ignore[arg-type]
            conn.execute(
                "UPDATE ws_config SET value = ? WHERE key = 'snapshot.watermark'", (str(frozen),)
            )
            self.settings = replace(self.settings, watermark=frozen)
        return frozen, move

    def clone(self, ino: int, now: int) -> Stat:
        """A new, nameless inode with ``ino``'s metadata (new times) and a copy of its chunks
        and extended attributes (for giving frozen content a second, independent life: a
        version restored while another path still has it)."""
        sec, nsec = split_ns(now)
        new = exact(
            Stat(*self.conn.execute(_CLONE_INODE, (sec, sec, nsec, nsec, ino)).get), self.conn
        )
        self.conn.execute(_COPY_CHUNKS, (new.st_ino, ino))
        copy_all(self.conn, ino, new.st_ino)
        self.fresh.add(new.st_ino)
        return new
