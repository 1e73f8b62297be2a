"""The ``/lost+found`` helpers the tree repairs use to give an inode a safe name.

Repairs never delete data a user could still want: a nameless or detached inode is re-homed as
``/lost+found/ino-<n>`` (``lost+found.1`` ... when a non-directory already holds the name).
"""

from __future__ import annotations

import time

import apsw

from agentfs.core.inodes import ROOT_INO, S_IFDIR, S_IFMT, split_ns

#: Where repairs put inodes that have no reachable name.
LOST_FOUND = "lost+found"


def _new_directory(conn: apsw.Connection, perm: int, ino: int | None = None) -> int:
    """An empty directory inode (no dentry yet); nlink 2, times now."""
    sec, nsec = split_ns(time.time_ns())
    return conn.execute(
        "INSERT INTO fs_inode(ino, mode, nlink, atime, mtime, ctime, atime_nsec, mtime_nsec,"
        " ctime_nsec) VALUES (?1, ?2, 2, ?3, ?3, ?3, ?4, ?4, ?4) RETURNING ino",
        (ino, S_IFDIR | perm, sec, nsec),
    ).get


def _lost_found(conn: apsw.Connection) -> int:
    """The ino of /lost+found, created (mode 0700) when absent. A non-directory already
    called lost+found is left alone and lost+found.1, .2 ... is used instead."""
    for attempt in range(1000):
        name = LOST_FOUND if attempt == 0 else f"{LOST_FOUND}.{attempt}"
        found = conn.execute(
            "SELECT d.ino, i.mode FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino"
            " WHERE d.parent_ino = ? AND d.name = ?",
            (ROOT_INO, name),
        ).fetchone()
        if found is None:
            ino = _new_directory(conn, 0o700)
            conn.execute(
                "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES (?, ?, ?)",
                (name, ROOT_INO, ino),
            )
            conn.execute("UPDATE fs_inode SET nlink = nlink + 1 WHERE ino = ?", (ROOT_INO,))
            return ino
        if found[1] & S_IFMT == S_IFDIR:
            return found[0]
    raise RuntimeError("no usable lost+found name under the root")  # pragma: no cover


def _free_name(conn: apsw.Connection, dir_ino: int, base: str) -> str:
    """``base``, or ``base.1``, ``base.2`` ... whichever is not taken in ``dir_ino``."""
    name, n = base, 0
    while conn.execute(
        "SELECT 1 FROM fs_dentry WHERE parent_ino = ? AND name = ?", (dir_ino, name)
    ).get:
        n += 1
        name = f"{base}.{n}"
    return name


def _move_to_lost_found(conn: apsw.Connection, dentry_id: int, ino: int) -> str:
    """Re-home one dentry as /lost+found/ino-<n>; returns the name it got."""
    lost_found = _lost_found(conn)
    name = _free_name(conn, lost_found, f"ino-{ino}")
    conn.execute(
        "UPDATE fs_dentry SET parent_ino = ?, name = ? WHERE id = ?", (lost_found, name, dentry_id)
    )
    return name
