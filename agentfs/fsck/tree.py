"""Checks of the directory tree: ``fs_inode`` (root, types, times), ``fs_dentry``, the orphan
queue, names, reachability from the root and link counts.

They run in this order in ``CHECKS``: every dentry valid and pointing somewhere real before
nameless inodes are looked for, every subtree attached to the root before nlink is recounted.
Repairs that need a safe place for an inode use ``lost_found``.
"""

from __future__ import annotations

import apsw

from agentfs.core import holders
from agentfs.core.inodes import ROOT_INO, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG
from agentfs.core.paths import NAME_MAX
from agentfs.fsck.lost_found import (
    LOST_FOUND,
    _free_name,
    _lost_found,
    _move_to_lost_found,
    _new_directory,
)
from agentfs.fsck.report import _check, _Finding, _is, _rows

#: The seven file types of the spec: regular, directory, symlink, FIFO, char/block device, socket.
FILE_TYPES = (S_IFREG, S_IFDIR, S_IFLNK, 0o010000, 0o020000, 0o060000, 0o140000)

NSEC = 1_000_000_000


# --- fs_inode: the root, types and times ---------------------------------------------------------


@_check
def check_fs_inode_root(conn: apsw.Connection) -> _Finding:
    """Inode 1 exists and is a directory."""
    mode = conn.execute("SELECT mode FROM fs_inode WHERE ino = ?", (ROOT_INO,)).get
    if mode is None:
        yield "root inode 1 is missing", True
    elif mode & S_IFMT != S_IFDIR:
        yield f"root inode 1 is not a directory (mode {mode:#o})", False


def repair_fs_inode_root(conn: apsw.Connection) -> list[str]:
    if conn.execute("SELECT 1 FROM fs_inode WHERE ino = ?", (ROOT_INO,)).get:
        return []
    _new_directory(conn, 0o755, ino=ROOT_INO)
    return ["recreated the root directory (inode 1)"]


@_check
def check_fs_inode_type(conn: apsw.Connection) -> _Finding:
    """Every mode's S_IFMT bits name one of the spec's seven file types."""
    types = ", ".join(map(str, FILE_TYPES))
    for ino, mode in conn.execute(
        f"SELECT ino, mode FROM fs_inode WHERE (mode & {S_IFMT}) NOT IN ({types})"
    ):
        yield f"inode {ino} has no valid file type (mode {mode:#o})", False


_BAD_NSEC = " OR ".join(
    f"{c}_nsec NOT BETWEEN 0 AND {NSEC - 1}" for c in ("atime", "mtime", "ctime")
)


@_check
def check_fs_inode_times(conn: apsw.Connection) -> _Finding:
    """atime_nsec, mtime_nsec and ctime_nsec lie in 0..999999999."""
    sql = f"SELECT ino, atime_nsec, mtime_nsec, ctime_nsec FROM fs_inode WHERE {_BAD_NSEC}"
    for ino, *nsecs in conn.execute(sql):
        yield f"inode {ino} has nanoseconds out of range (a/m/c: {nsecs})", True


def repair_fs_inode_times(conn: apsw.Connection) -> list[str]:
    # Carry whole seconds out of the nanosecond column: the instant stays exactly the same.
    inos = [row[0] for row in conn.execute(f"SELECT ino FROM fs_inode WHERE {_BAD_NSEC}")]
    for col in ("atime", "mtime", "ctime"):
        norm = f"((({col}_nsec % {NSEC}) + {NSEC}) % {NSEC})"
        conn.execute(
            f"UPDATE fs_inode SET {col} = {col} + ({col}_nsec - {norm}) / {NSEC},"
            f" {col}_nsec = {norm} WHERE {col}_nsec NOT BETWEEN 0 AND {NSEC - 1}"
        )
    return [f"normalised the timestamps of inodes {inos} (seconds carried, instant kept)"]


# --- fs_dentry ------------------------------------------------------------------------------------


@_check
def check_fs_dentry_root(conn: apsw.Connection) -> _Finding:
    """The root has no dentry (nothing names inode 1)."""
    for id_, name, parent in conn.execute(
        "SELECT id, name, parent_ino FROM fs_dentry WHERE ino = ?", (ROOT_INO,)
    ):
        yield f"dentry {id_} ({name!r} in directory {parent}) names the root", True


def repair_fs_dentry_root(conn: apsw.Connection) -> list[str]:
    ids = [r[0] for r in conn.execute("SELECT id FROM fs_dentry WHERE ino = ?", (ROOT_INO,))]
    conn.execute("DELETE FROM fs_dentry WHERE ino = ?", (ROOT_INO,))
    return [f"removed dentries {ids} that named the root"]


_BAD_PARENT = (
    "SELECT d.id, d.name, d.parent_ino, p.mode FROM fs_dentry d"
    " LEFT JOIN fs_inode p ON p.ino = d.parent_ino"
    f" WHERE p.ino IS NULL OR (p.mode & {S_IFMT}) <> {S_IFDIR}"
)


def _movable(row: tuple) -> bool:
    """Entries of a root that exists but is not a directory are left alone: nowhere is safe."""
    return not (row[2] == ROOT_INO and row[3] is not None)


@_check
def check_fs_dentry_parent(conn: apsw.Connection) -> _Finding:
    """Every dentry's parent exists and is a directory."""
    for row in conn.execute(_BAD_PARENT):
        id_, name, parent, mode = row
        state = "missing" if mode is None else f"not a directory (mode {mode:#o})"
        yield f"dentry {id_} ({name!r}) is in inode {parent}, which is {state}", _movable(row)


def repair_fs_dentry_parent(conn: apsw.Connection) -> list[str]:
    """A missing parent is recreated as an empty directory (it then goes to lost+found with
    its entries' names intact); an entry inside a non-directory is dropped (its inode, if that
    was its last name, goes to lost+found)."""
    rows = [row for row in _rows(conn, _BAD_PARENT) if _movable(row)]
    missing = sorted({parent for _, _, parent, mode in rows if mode is None})
    for parent in missing:
        _new_directory(conn, 0o700, ino=parent)
    dropped = [id_ for id_, _, _, mode in rows if mode is not None]
    conn.executemany("DELETE FROM fs_dentry WHERE id = ?", [(i,) for i in dropped])
    done = [f"recreated missing parent directories {missing}"] if missing else []
    return done + ([f"removed dentries {dropped} inside non-directories"] if dropped else [])


_BAD_NAME = (
    "SELECT id, name, parent_ino, ino FROM fs_dentry WHERE typeof(name) <> 'text'"
    " OR name IN ('', '.', '..') OR instr(name, '/') > 0"
    f" OR instr(CAST(name AS BLOB), x'00') > 0 OR length(CAST(name AS BLOB)) > {NAME_MAX}"
)


@_check
def check_fs_dentry_name(conn: apsw.Connection) -> _Finding:
    """Names are one path component: non-empty, not '.'/'..', no '/' or NUL, <= 255 bytes."""
    for id_, name, parent, ino in conn.execute(_BAD_NAME):
        yield f"dentry {id_} for inode {ino} in directory {parent} has invalid name {name!r}", True


def repair_fs_dentry_name(conn: apsw.Connection) -> list[str]:
    moved = [_move_to_lost_found(conn, id_, ino) for id_, _, _, ino in _rows(conn, _BAD_NAME)]
    return [f"moved badly named entry to /{LOST_FOUND}/{name}" for name in moved]


_EXTRA_DIR_NAMES = (
    "SELECT d.ino, group_concat(d.id) FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino"
    f" WHERE {_is(S_IFDIR, 'i.mode')} GROUP BY d.ino HAVING count(*) > 1"
)


@_check
def check_fs_dentry_directory_links(conn: apsw.Connection) -> _Finding:
    """A directory has exactly one dentry (no hard links to directories)."""
    for ino, ids in conn.execute(_EXTRA_DIR_NAMES):
        yield f"directory {ino} has several names (dentries {ids})", True


def repair_fs_dentry_directory_links(conn: apsw.Connection) -> list[str]:
    rows = _rows(conn, _EXTRA_DIR_NAMES)
    conn.execute(
        "DELETE FROM fs_dentry WHERE ino IN (SELECT ino FROM fs_inode WHERE"
        f" {_is(S_IFDIR)}) AND id NOT IN (SELECT min(id) FROM fs_dentry GROUP BY ino)"
    )
    return [f"kept only the oldest name of directory {ino} (dentries {ids})" for ino, ids in rows]


# --- names and reachability -----------------------------------------------------------------------


_NAMED_ORPHANS = (
    "SELECT o.ino, i.nlink, (SELECT count(*) FROM fs_dentry d WHERE d.ino = o.ino)"
    " FROM ws_orphan o LEFT JOIN fs_inode i ON i.ino = o.ino"
    " WHERE i.ino IS NULL OR i.nlink <> 0 OR o.ino IN (SELECT ino FROM fs_dentry)"
)


@_check
def check_ws_orphan_unlinked(conn: apsw.Connection) -> _Finding:
    """Every queued orphan exists, has nlink 0 and no dentry (else purge would free live data)."""
    for ino, nlink, names in conn.execute(_NAMED_ORPHANS):
        state = "does not exist" if nlink is None else f"has nlink {nlink} and {names} names"
        yield f"orphan-queue inode {ino} {state}", True


def repair_ws_orphan_unlinked(conn: apsw.Connection) -> list[str]:
    """An entry whose inode is gone or still named leaves the queue (nlink is then recounted);
    a nameless one keeps its place with nlink set to 0."""
    rows = _rows(conn, _NAMED_ORPHANS)
    dequeue = [ino for ino, nlink, names in rows if nlink is None or names]
    conn.executemany("DELETE FROM ws_orphan WHERE ino = ?", [(i,) for i in dequeue])
    zeroed = [ino for ino, nlink, names in rows if nlink is not None and not names]
    conn.executemany("UPDATE fs_inode SET nlink = 0 WHERE ino = ?", [(i,) for i in zeroed])
    done = [f"took inodes {dequeue} off the orphan queue"] if dequeue else []
    return done + ([f"set nlink 0 on queued orphans {zeroed}"] if zeroed else [])


_PINS = (
    "SELECT p.ino, p.holder, i.ino IS NOT NULL FROM ws_pin p LEFT JOIN fs_inode i ON i.ino = p.ino"
)


@_check
def check_ws_pin_holder(conn: apsw.Connection) -> _Finding:
    """Every pin of an open unlinked inode names an existing inode and a running process."""
    for ino, holder, exists in conn.execute(_PINS):
        if not exists:
            yield f"pin of inode {ino} by {holder}: the inode does not exist", True
        elif not holders.alive(holder):  # type: ignore[arg-type]
            yield f"pin of inode {ino} by {holder}: that process is gone", True


def repair_ws_pin_holder(conn: apsw.Connection) -> list[str]:
    """Drop the pins that keep nothing: the next purge frees what a dead holder pinned."""
    done = []
    for ino, holder, exists in _rows(conn, _PINS):
        if not exists or not holders.alive(holder):  # type: ignore[arg-type]
            conn.execute("DELETE FROM ws_pin WHERE ino = ? AND holder = ?", (ino, holder))
            done.append(f"dropped the pin of inode {ino} by {holder}")
    return done


@_check
def check_ws_keeper_holder(conn: apsw.Connection) -> _Finding:
    """Every keeper of the orphan queue (a mount) is a running process: a gone one would
    keep every other connection from freeing space."""
    for (holder,) in conn.execute("SELECT holder FROM ws_keeper"):
        if not holders.alive(holder):  # type: ignore[arg-type]
            yield f"the orphan queue's keeper {holder} is gone", True


def repair_ws_keeper_holder(conn: apsw.Connection) -> list[str]:
    """Drop the keepers that are gone: every connection purges again."""
    done = []
    for (holder,) in _rows(conn, "SELECT holder FROM ws_keeper"):
        if not holders.alive(holder):  # type: ignore[arg-type]
            conn.execute("DELETE FROM ws_keeper WHERE holder = ?", (holder,))
            done.append(f"dropped the keeper {holder}")
    return done


_NAMELESS = (
    "SELECT ino, mode FROM fs_inode WHERE ino <> 1 AND ino NOT IN (SELECT ino FROM fs_dentry)"
    " AND ino NOT IN (SELECT ino FROM ws_orphan)"
    " AND ino NOT IN (SELECT ino FROM ws_version WHERE ino IS NOT NULL)"
    f" AND (ino NOT IN (SELECT ino FROM ws_entry) OR {_is(S_IFDIR)})"
)


@_check
def check_fs_inode_named(conn: apsw.Connection) -> _Finding:
    """Every inode but the root, queued orphans and history's frozen inodes (held by a version
    or a snapshot) has at least one dentry."""
    for ino, mode in conn.execute(_NAMELESS):
        yield f"inode {ino} (mode {mode:#o}) has no name", True


def repair_fs_inode_named(conn: apsw.Connection) -> list[str]:
    rows = _rows(conn, _NAMELESS)
    lost_found = _lost_found(conn)
    names = [(_free_name(conn, lost_found, f"ino-{ino}"), ino) for ino, _ in rows]
    conn.executemany(
        "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES (?, ?, ?)",
        [(name, lost_found, ino) for name, ino in names],
    )
    return [f"gave nameless inode {ino} the name /{LOST_FOUND}/{name}" for name, ino in names]


_UNREACHABLE = (
    "WITH RECURSIVE reach(ino) AS (SELECT 1 UNION SELECT d.ino FROM fs_dentry d"
    " JOIN reach r ON d.parent_ino = r.ino JOIN fs_inode i ON i.ino = d.ino"
    f" WHERE {_is(S_IFDIR, 'i.mode')})"
    " SELECT d.ino, d.parent_ino, d.id FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino"
    f" WHERE {_is(S_IFDIR, 'i.mode')} AND d.ino NOT IN (SELECT ino FROM reach)"
    " ORDER BY d.ino"
)


@_check
def check_fs_inode_reachable(conn: apsw.Connection) -> _Finding:
    """Every named directory is reachable from the root (no cycles, no detached subtrees)."""
    for ino, parent, _ in conn.execute(_UNREACHABLE):
        yield f"directory {ino} (in directory {parent}) is not reachable from the root", True


def repair_fs_inode_reachable(conn: apsw.Connection) -> list[str]:
    """Per detached component, move the directory at its top (or one on its cycle) to
    lost+found; everything below it comes along with its names."""
    done = []
    while rows := _rows(conn, _UNREACHABLE):
        parent_of = {ino: (parent, id_) for ino, parent, id_ in rows}
        ino, seen = rows[0][0], set()
        while parent_of[ino][0] in parent_of and ino not in seen:
            seen.add(ino)
            ino = parent_of[ino][0]
        name = _move_to_lost_found(conn, parent_of[ino][1], ino)
        done.append(f"moved detached directory {ino} to /{LOST_FOUND}/{name}")
    return done


# --- link counts ----------------------------------------------------------------------------------


_NLINK = (
    "WITH names(ino, n) AS (SELECT ino, count(*) FROM fs_dentry GROUP BY ino),"
    " subdirs(ino, n) AS (SELECT d.parent_ino, count(*) FROM fs_dentry d JOIN fs_inode c"
    f" ON c.ino = d.ino WHERE {_is(S_IFDIR, 'c.mode')} GROUP BY d.parent_ino)"
    " SELECT i.ino, i.nlink, CASE WHEN i.ino = 1 OR"
    f" {_is(S_IFDIR, 'i.mode')} THEN 2 + coalesce(s.n, 0) ELSE coalesce(n.n, 0) END"
    " AS want FROM fs_inode i LEFT JOIN names n ON n.ino = i.ino"
    " LEFT JOIN subdirs s ON s.ino = i.ino"
    " WHERE i.ino NOT IN (SELECT ino FROM ws_orphan) AND i.nlink IS NOT want"
)


@_check
def check_fs_inode_nlink(conn: apsw.Connection) -> _Finding:
    """nlink = number of dentries (files), 2 + child directories (directories, root too)."""
    for ino, nlink, want in conn.execute(_NLINK):
        yield f"inode {ino} has nlink {nlink}, expected {want}", True


def repair_fs_inode_nlink(conn: apsw.Connection) -> list[str]:
    rows = _rows(conn, _NLINK)
    conn.execute(f"UPDATE fs_inode SET nlink = x.want FROM ({_NLINK}) x WHERE fs_inode.ino = x.ino")
    return [f"set nlink of inode {ino} from {nlink} to {want}" for ino, nlink, want in rows]
