"""Copy-on-write under every write: which inodes a snapshot holds, copying one up, marking
changed directories.

An inode is FROZEN when a snapshot or a version holds its bytes; they then never change in
place. Before the core changes a file's content it asks its hooks where to write
(``HistoryHooks.writable``, which applies these rules): an inode a snapshot may hold is
copied up (``copy_up`` gives the live name(s) a fresh inode to change instead); one that only
versions name has their bytes kept aside first when it is small (``Versions.keep``) and is
copied up when it is not. The core calls that hook on every way of writing (API, tools,
handles, the FUSE mount later), so no writer can reach around it.

A snapshot holds an inode when its number is at or below the snapshot watermark (the fs_inode
counter when the newest snapshot was taken): any live inode that existed then is in that
snapshot. That test needs no table scan. An inode this transaction created is never held yet.

``ws_dirty`` lists the directories whose entries changed since the newest snapshot, so the next
snapshot reads only those; ``mark_dirty`` is one probe when the directory is already listed.
"""

from __future__ import annotations

from dataclasses import dataclass

import apsw

from agentfs.core.inodes import STAT_COLUMNS, Stat, split_ns

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


#: A copy of an inode row with new times (and, unless NULL, a new nlink and size), as a stat.
_COPY_INODE = (
    "INSERT INTO fs_inode(mode, nlink, uid, gid, size, atime, mtime, ctime, rdev, atime_nsec,"
    " mtime_nsec, ctime_nsec) SELECT mode, coalesce(?, nlink), uid, gid, coalesce(?, size),"
    f" atime, ?, ?, rdev, atime_nsec, ?, ? FROM fs_inode WHERE ino = ? RETURNING {STAT_COLUMNS}"
)


class CopyOnWrite:
    """Freeze tests, copy-up and dirty marks for one connection.

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
        #: files, copy-ups): no snapshot can hold them.
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

    def snapshotted(self, ino: int) -> bool:
        """May a snapshot hold ``ino``'s current content? (Versions that name it are
        ``Versions.keep``'s business.)"""
        return ino not in self.fresh and ino <= self.settings.watermark

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

    def copy_up(
        self, ino: int, dentry_id: int, parent_ino: int, now: int, *, size: int | None = None
    ) -> Stat:
        """Give the live name(s) of frozen ``ino`` a new inode with the same metadata; return
        its stat. With ``size`` None the chunks are copied too (inside SQLite, for a write
        into part of the file); with a size, the caller is about to add the whole new content.

        The frozen inode keeps its bytes and loses its names (nlink 0): only history holds it.
        A hard-linked inode has all its names repointed, found by a scan (hard links are rare;
        an index on fs_dentry(ino) would cost every write 10-15 %).
        """
        new = self._copy(ino, now, size=size)
        if new.st_nlink <= 1:
            self.conn.execute("UPDATE fs_dentry SET ino = ? WHERE id = ?", (new.st_ino, dentry_id))
            self.mark_dirty(parent_ino)
        else:
            for (parent,) in self.conn.execute(
                "UPDATE fs_dentry SET ino = ? WHERE ino = ? RETURNING parent_ino", (new.st_ino, ino)
            ).fetchall():
                self.mark_dirty(parent)  # type: ignore[arg-type]
        self.conn.execute("UPDATE fs_inode SET nlink = 0 WHERE ino = ?", (ino,))
        return new

    def clone(self, ino: int, now: int) -> Stat:
        """A new, nameless inode with ``ino``'s metadata and a copy of its chunks (for giving
        frozen content a second, independent life: a version restored while another path
        still has it)."""
        return self._copy(ino, now, nlink=0)

    def _copy(
        self, ino: int, now: int, *, size: int | None = None, nlink: int | None = None
    ) -> Stat:
        """Copy inode ``ino`` (new times; ``size`` None: its chunks too, copied in SQLite)."""
        sec, nsec = split_ns(now)
        new = Stat(*self.conn.execute(_COPY_INODE, (nlink, size, sec, sec, nsec, nsec, ino)).get)
        if size is None:
            self.conn.execute(
                "INSERT INTO fs_data(ino, chunk_index, data)"
                " SELECT ?, chunk_index, data FROM fs_data WHERE ino = ? ORDER BY chunk_index",
                (new.st_ino, ino),
            )
        self.fresh.add(new.st_ino)
        return new
