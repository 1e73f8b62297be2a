"""fsck: check every invariant of a workspace file, and repair the ones that are safe to repair.

One small function per invariant, named ``check_<table>_<what>`` after what it checks (the
rules are written next to each table in ``schema/*.sql``); ``CHECKS`` runs them in a fixed order
so that later checks may rely on what earlier ones established (a rebuilt index before any
query uses it, every name valid before nlink is counted). A check reads and yields ``Problem``s;
the repair alongside it (``REPAIRS``) fixes what it can with set-based SQL. ``repair`` runs
each check and its repair in turn inside ONE write transaction, so later checks see the state
the earlier repairs left, and a failure part-way leaves the file exactly as it was.

Repairs never delete data a user could still want: nameless or detached inodes are given a name
in ``/lost+found`` (``ino-<n>``), and a problem with no safe answer (a file whose chunks have a
hole, a symlink without a target, a malformed JSON value) is reported, not touched.
docs/fsck.md explains each check and each repair.

Caveats: run ``repair`` while no other process writes (it holds the write lock throughout);
``check`` takes a read transaction, so it sees one consistent state and never writes.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import apsw

from agentfs.db import SPEC_VERSION, read_transaction, write_transaction
from agentfs.inodes import ROOT_INO, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, split_ns
from agentfs.paths import NAME_MAX

if TYPE_CHECKING:
    from agentfs.workspace import Workspace

#: The seven file types of the spec: regular, directory, symlink, FIFO, char/block device, socket.
FILE_TYPES = (S_IFREG, S_IFDIR, S_IFLNK, 0o010000, 0o020000, 0o060000, 0o140000)
#: Where repairs put inodes that have no reachable name.
LOST_FOUND = "lost+found"
#: Tables whose UNIQUE/PRIMARY KEY is backed by an index SQLite maintains (not a rowid alias).
UNIQUE_KEYS = (
    ("fs_config", "key"),
    ("fs_dentry", "parent_ino, name"),
    ("fs_data", "ino, chunk_index"),
    ("kv_store", "key"),
)

NSEC = 1_000_000_000


def _is(kind: int, mode: str = "mode") -> str:
    """SQL: the ``mode`` column holds file type ``kind`` (no octal literals in SQLite)."""
    return f"({mode} & {S_IFMT}) = {kind}"


@dataclass(frozen=True)
class Problem:
    """One broken invariant: which check found it, what is wrong, and whether repair fixes it."""

    check: str
    message: str
    repairable: bool


@dataclass
class FsckReport:
    """What ``check`` found (and, after ``repair``, what was done before the re-check)."""

    problems: list[Problem] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, object]:
        """JSON-ready (``agentfs fsck --json``)."""
        return {
            "clean": self.clean,
            "problems": [asdict(p) for p in self.problems],
            "repaired": list(self.repaired),
        }


CheckFn = Callable[[apsw.Connection], Iterator[Problem]]
RepairFn = Callable[[apsw.Connection], list[str]]
_Finding = Iterator[tuple[str, bool]]


def _check(fn: Callable[[apsw.Connection], _Finding]) -> CheckFn:
    """A check body yields (message, repairable); this names each Problem after the check."""

    @functools.wraps(fn)
    def run(conn: apsw.Connection) -> Iterator[Problem]:
        for message, repairable in fn(conn):
            yield Problem(fn.__name__, message, repairable)

    return run


def _rows(conn: apsw.Connection, sql: str, bindings: tuple = ()) -> list[tuple]:
    return conn.execute(sql, bindings).fetchall()


def _chunk_size(conn: apsw.Connection) -> int | None:
    value = conn.execute("SELECT value FROM fs_config WHERE key = 'chunk_size'").get
    try:
        size = int(value)
    except (TypeError, ValueError):
        return None
    return size if size > 0 else None


# --- SQLite's own structure ---------------------------------------------------------------------


def _integrity_lines(conn: apsw.Connection) -> list[str]:
    lines = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    return [] if lines == ["ok"] else lines


def _index_of(line: str) -> str | None:
    """The index a 'missing from index'/'wrong # of entries' line names (REINDEX fixes those)."""
    match = re.search(r"(?:missing from|entries in|entry in) index (\S+)$", line)
    return match.group(1) if match else None


@_check
def check_sqlite_integrity(conn: apsw.Connection) -> _Finding:
    """SQLite's PRAGMA integrity_check reports nothing (b-trees, indexes, NOT NULL)."""
    lines = _integrity_lines(conn)
    duplicates = bool(lines) and any(_duplicate_keys(conn))
    for line in lines:
        yield f"integrity_check: {line}", _index_of(line) is not None and not duplicates


def repair_sqlite_integrity(conn: apsw.Connection) -> list[str]:
    indexes = sorted({_index_of(line) for line in _integrity_lines(conn)} - {None})
    for name in indexes:
        conn.execute(f'REINDEX "{name.replace(chr(34), chr(34) * 2)}"')
    return [f"rebuilt index {name} (REINDEX)" for name in indexes]


def _duplicate_keys(conn: apsw.Connection) -> Iterator[str]:
    for table, columns in UNIQUE_KEYS:
        sql = (
            f"SELECT {columns}, count(*) FROM {table} NOT INDEXED GROUP BY {columns}"
            " HAVING count(*) > 1"
        )
        for *key, count in conn.execute(sql):
            yield f"{table}: {count} rows share the key ({columns}) = {tuple(key)!r}"


@_check
def check_sqlite_unique_keys(conn: apsw.Connection) -> _Finding:
    """No two rows share a UNIQUE key (an engine that skipped the index could insert twice)."""
    for message in _duplicate_keys(conn):
        yield message, False


# --- fs_config ----------------------------------------------------------------------------------


@_check
def check_fs_config_chunk_size(conn: apsw.Connection) -> _Finding:
    """fs_config.chunk_size is present and a positive integer."""
    if _chunk_size(conn) is None:
        value = conn.execute("SELECT value FROM fs_config WHERE key = 'chunk_size'").get
        yield f"fs_config.chunk_size is {value!r}, not a positive integer", False


@_check
def check_fs_config_schema_version(conn: apsw.Connection) -> _Finding:
    """fs_config.schema_version is present."""
    if not conn.execute("SELECT value FROM fs_config WHERE key = 'schema_version'").get:
        yield "fs_config.schema_version is missing", True


def repair_fs_config_schema_version(conn: apsw.Connection) -> list[str]:
    conn.execute(
        "INSERT OR REPLACE INTO fs_config(key, value) VALUES ('schema_version', ?)",
        (SPEC_VERSION,),
    )
    return [f"set fs_config.schema_version to {SPEC_VERSION!r}"]


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


_DANGLING = (
    "SELECT id, name, parent_ino, ino FROM fs_dentry WHERE ino NOT IN (SELECT ino FROM fs_inode)"
)


@_check
def check_fs_dentry_inode(conn: apsw.Connection) -> _Finding:
    """Every dentry names an inode that exists."""
    for id_, name, parent, ino in conn.execute(_DANGLING):
        yield f"dentry {id_} ({name!r} in directory {parent}) names missing inode {ino}", True


def repair_fs_dentry_inode(conn: apsw.Connection) -> list[str]:
    ids = [row[0] for row in conn.execute(_DANGLING)]
    conn.execute("DELETE FROM fs_dentry WHERE ino NOT IN (SELECT ino FROM fs_inode)")
    return [f"removed dentries {ids} that named missing inodes"]


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


_NAMELESS = (
    "SELECT ino, mode FROM fs_inode WHERE ino <> 1 AND ino NOT IN (SELECT ino FROM fs_dentry)"
    " AND ino NOT IN (SELECT ino FROM ws_orphan)"
)


@_check
def check_fs_inode_named(conn: apsw.Connection) -> _Finding:
    """Every inode but the root and queued orphans has at least one dentry."""
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


# --- fs_symlink -----------------------------------------------------------------------------------


_STRAY_TARGETS = (
    "SELECT s.ino, i.mode FROM fs_symlink s LEFT JOIN fs_inode i ON i.ino = s.ino"
    f" WHERE i.ino IS NULL OR NOT {_is(S_IFLNK, 'i.mode')}"
)


@_check
def check_fs_symlink_inode(conn: apsw.Connection) -> _Finding:
    """fs_symlink rows belong to existing symlink inodes only."""
    for ino, mode in conn.execute(_STRAY_TARGETS):
        state = "a missing inode" if mode is None else f"a non-symlink (mode {mode:#o})"
        yield f"fs_symlink row for inode {ino}, {state}", True


def repair_fs_symlink_inode(conn: apsw.Connection) -> list[str]:
    inos = [row[0] for row in conn.execute(_STRAY_TARGETS)]
    conn.executemany("DELETE FROM fs_symlink WHERE ino = ?", [(i,) for i in inos])
    return [f"removed fs_symlink rows of non-symlink inodes {inos}"]


@_check
def check_fs_symlink_target(conn: apsw.Connection) -> _Finding:
    """Every symlink inode has its fs_symlink row, with a non-empty target."""
    for (ino,) in conn.execute(
        "SELECT i.ino FROM fs_inode i LEFT JOIN fs_symlink s ON s.ino = i.ino"
        f" WHERE {_is(S_IFLNK, 'i.mode')} AND coalesce(s.target, '') = ''"
    ):
        yield f"symlink inode {ino} has no target", False


_SYMLINK_SIZE = (
    "SELECT i.ino, i.size, length(CAST(s.target AS BLOB)) FROM fs_inode i"
    " JOIN fs_symlink s ON s.ino = i.ino"
    f" WHERE {_is(S_IFLNK, 'i.mode')} AND i.size <> length(CAST(s.target AS BLOB))"
)


@_check
def check_fs_symlink_size(conn: apsw.Connection) -> _Finding:
    """A symlink's size is the length of its target in UTF-8 bytes."""
    for ino, size, want in conn.execute(_SYMLINK_SIZE):
        yield f"symlink inode {ino} has size {size}, its target is {want} bytes", True


def repair_fs_symlink_size(conn: apsw.Connection) -> list[str]:
    rows = _rows(conn, _SYMLINK_SIZE)
    conn.executemany("UPDATE fs_inode SET size = ? WHERE ino = ?", [(w, i) for i, _, w in rows])
    return [f"set size of symlink {ino} from {size} to {want}" for ino, size, want in rows]


# --- fs_data --------------------------------------------------------------------------------------


_STRAY_CHUNKS = (
    "SELECT ino, count(*) FROM fs_data NOT INDEXED WHERE ino NOT IN (SELECT ino FROM fs_inode)"
    " GROUP BY ino"
)


@_check
def check_fs_data_inode(conn: apsw.Connection) -> _Finding:
    """Every chunk belongs to an inode that exists."""
    for ino, count in conn.execute(_STRAY_CHUNKS):
        yield f"{count} chunks belong to missing inode {ino}", True


def repair_fs_data_inode(conn: apsw.Connection) -> list[str]:
    rows = _rows(conn, _STRAY_CHUNKS)
    conn.execute("DELETE FROM fs_data WHERE ino NOT IN (SELECT ino FROM fs_inode)")
    return [f"deleted {count} chunks of missing inode {ino}" for ino, count in rows]


@_check
def check_fs_data_type(conn: apsw.Connection) -> _Finding:
    """Only regular files have chunks (never directories, symlinks or special files)."""
    for ino, mode, count in conn.execute(
        "SELECT i.ino, i.mode, count(*) FROM fs_data d NOT INDEXED JOIN fs_inode i ON i.ino = d.ino"
        f" WHERE NOT {_is(S_IFREG, 'i.mode')} GROUP BY i.ino"
    ):
        yield f"inode {ino} (mode {mode:#o}) is not a regular file but has {count} chunks", False


def _file_chunks(conn: apsw.Connection, chunk_size: int) -> list[tuple]:
    """(ino, size, chunks, first, last, bytes, layout ok) of files whose chunks or size are off.

    Well-formed: indexes 0..n-1, every chunk a BLOB, all exactly chunk_size but the last,
    which holds 1..chunk_size bytes. length() and typeof() of a column never read the blob;
    NOT INDEXED: the table is the truth even when its index is damaged (Turso's engine);
    MATERIALIZED: else the GROUP BY sorter would carry every blob (measured 8x slower)."""
    return _rows(
        conn,
        "WITH k AS MATERIALIZED (SELECT ino, chunk_index i, length(data) len,"
        " typeof(data) <> 'blob' odd FROM fs_data NOT INDEXED),"
        " c AS (SELECT ino, count(*) n, min(i) lo, max(i) hi, sum(len) total, max(len) longest,"
        " min(len) shortest, sum(odd) odd, sum(len <> ?1) n_short,"
        " max(CASE WHEN len <> ?1 THEN i END) short_at FROM k GROUP BY ino),"
        " f AS (SELECT i.ino, i.size, coalesce(c.n, 0) n, c.lo, c.hi, coalesce(c.total, 0) total,"
        " c.n IS NULL OR (c.lo = 0 AND c.hi = c.n - 1 AND c.odd = 0 AND c.longest <= ?1"
        " AND c.shortest > 0 AND (c.n_short = 0 OR (c.n_short = 1 AND c.short_at = c.hi))) ok"
        f" FROM fs_inode i LEFT JOIN c ON c.ino = i.ino WHERE {_is(S_IFREG, 'i.mode')})"
        " SELECT ino, size, n, lo, hi, total, ok FROM f WHERE NOT ok OR total <> size",
        (chunk_size,),
    )


@_check
def check_fs_data_layout(conn: apsw.Connection) -> _Finding:
    """A file's chunks are 0..n-1, all chunk_size bytes but the last (1..chunk_size bytes)."""
    chunk_size = _chunk_size(conn)
    if chunk_size is None:
        return
    for ino, _, n, lo, hi, total, ok in _file_chunks(conn, chunk_size):
        if not ok:
            yield (
                f"file {ino} has malformed chunks: {n} chunks, indexes {lo}..{hi}, {total} bytes"
                f" (chunk size {chunk_size})",
                False,
            )


@_check
def check_fs_inode_size(conn: apsw.Connection) -> _Finding:
    """A file's size is the total length of its chunks."""
    chunk_size = _chunk_size(conn)
    if chunk_size is None:
        return
    for ino, size, n, _, _, total, ok in _file_chunks(conn, chunk_size):
        if total != size:
            yield f"file {ino} has size {size} but its {n} chunks hold {total} bytes", bool(ok)


def repair_fs_inode_size(conn: apsw.Connection) -> list[str]:
    """Only where the chunks are well-formed: they are then the truth (what readers see)."""
    chunk_size = _chunk_size(conn)
    rows = [r for r in _file_chunks(conn, chunk_size or 1) if r[6] and r[5] != r[1]]
    conn.executemany("UPDATE fs_inode SET size = ? WHERE ino = ?", [(r[5], r[0]) for r in rows])
    return [
        f"set size of file {ino} from {size} to {total}" for ino, size, _, _, _, total, _ in rows
    ]


# --- kv_store and tool_calls ----------------------------------------------------------------------


@_check
def check_kv_store_json(conn: apsw.Connection) -> _Finding:
    """Every kv_store value is valid JSON text."""
    for (key,) in conn.execute("SELECT key FROM kv_store WHERE NOT json_valid(value)"):
        yield f"kv_store value of {key!r} is not valid JSON", False


@_check
def check_tool_calls_json(conn: apsw.Connection) -> _Finding:
    """tool_calls.parameters and .result are valid JSON when present."""
    for id_, column in conn.execute(
        "SELECT id, 'parameters' FROM tool_calls WHERE parameters IS NOT NULL"
        " AND NOT json_valid(parameters) UNION ALL SELECT id, 'result' FROM tool_calls"
        " WHERE result IS NOT NULL AND NOT json_valid(result) ORDER BY 1"
    ):
        yield f"tool call {id_}: {column} is not valid JSON", False


@_check
def check_tool_calls_outcome(conn: apsw.Connection) -> _Finding:
    """No tool call has both a result and an error."""
    for (id_,) in conn.execute(
        "SELECT id FROM tool_calls WHERE result IS NOT NULL AND error IS NOT NULL"
    ):
        yield f"tool call {id_} has both a result and an error", False


@_check
def check_tool_calls_times(conn: apsw.Connection) -> _Finding:
    """completed_at is set and duration_ms = (completed_at - started_at) * 1000, give or take
    the whole-second rounding of both columns (agentfs-sdk's pending calls are exempt)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(tool_calls)")}
    finished = "status IS NOT 'pending'" if "status" in columns else "1"
    for id_, started, completed, duration in conn.execute(
        "SELECT id, started_at, completed_at, duration_ms FROM tool_calls"
        f" WHERE {finished} AND (completed_at IS NULL OR duration_ms IS NULL"
        " OR abs(duration_ms - (completed_at - started_at) * 1000) > 1000)"
    ):
        if completed is None:
            yield f"tool call {id_} has no completed_at", False
        else:
            yield (
                f"tool call {id_}: duration_ms {duration} disagrees with"
                f" completed_at - started_at = {completed - started} s",
                False,
            )


# --- lost+found -----------------------------------------------------------------------------------


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


# --- running --------------------------------------------------------------------------------------

#: Every check, in the order they run: structure first, then names, links, content, the logs.
CHECKS: tuple[CheckFn, ...] = (
    check_sqlite_integrity,
    check_sqlite_unique_keys,
    check_fs_config_chunk_size,
    check_fs_config_schema_version,
    check_fs_inode_root,
    check_fs_inode_type,
    check_fs_inode_times,
    check_fs_dentry_root,
    check_fs_dentry_inode,
    check_fs_dentry_parent,
    check_fs_dentry_name,
    check_fs_dentry_directory_links,
    check_ws_orphan_unlinked,
    check_fs_inode_named,
    check_fs_inode_reachable,
    check_fs_inode_nlink,
    check_fs_symlink_inode,
    check_fs_symlink_target,
    check_fs_symlink_size,
    check_fs_data_inode,
    check_fs_data_type,
    check_fs_data_layout,
    check_fs_inode_size,
    check_kv_store_json,
    check_tool_calls_json,
    check_tool_calls_outcome,
    check_tool_calls_times,
)

#: The repair of each check that has one; it runs only when its check found repairable problems.
REPAIRS: dict[CheckFn, RepairFn] = {
    check_sqlite_integrity: repair_sqlite_integrity,
    check_fs_config_schema_version: repair_fs_config_schema_version,
    check_fs_inode_root: repair_fs_inode_root,
    check_fs_inode_times: repair_fs_inode_times,
    check_fs_dentry_root: repair_fs_dentry_root,
    check_fs_dentry_inode: repair_fs_dentry_inode,
    check_fs_dentry_parent: repair_fs_dentry_parent,
    check_fs_dentry_name: repair_fs_dentry_name,
    check_fs_dentry_directory_links: repair_fs_dentry_directory_links,
    check_ws_orphan_unlinked: repair_ws_orphan_unlinked,
    check_fs_inode_named: repair_fs_inode_named,
    check_fs_inode_reachable: repair_fs_inode_reachable,
    check_fs_inode_nlink: repair_fs_inode_nlink,
    check_fs_symlink_inode: repair_fs_symlink_inode,
    check_fs_symlink_size: repair_fs_symlink_size,
    check_fs_data_inode: repair_fs_data_inode,
    check_fs_inode_size: repair_fs_inode_size,
}


def _run(check: CheckFn, conn: apsw.Connection) -> list[Problem]:
    """The check's problems; one that SQLite cannot even answer (a query through a damaged
    index) is itself a problem, left for the integrity repair that runs before it."""
    try:
        return list(check(conn))
    except apsw.CorruptError as exc:
        return [Problem(check.__name__, f"could not run on the damaged file: {exc}", False)]


def check_connection(conn: apsw.Connection) -> FsckReport:
    """Run every check in one read transaction; never writes."""
    problems: list[Problem] = []
    try:
        with read_transaction(conn):
            for run in CHECKS:
                problems.extend(_run(run, conn))
    except apsw.CorruptError:
        pass  # already reported by the check that met it; SQLite then fails the COMMIT too
    return FsckReport(problems)


def repair_connection(conn: apsw.Connection) -> FsckReport:
    """Check and repair in one write transaction, then re-check; see ``repair``."""
    repaired: list[str] = []
    try:
        with write_transaction(conn):
            for run in CHECKS:
                found = _run(run, conn)
                fix = REPAIRS.get(run)
                if fix is not None and any(p.repairable for p in found):
                    repaired.extend(fix(conn))
    except apsw.CorruptError:
        repaired = []  # a damage REINDEX could not fix: SQLite rolled everything back
    report = check_connection(conn)
    report.repaired = repaired
    return report


def check(ws: Workspace) -> FsckReport:
    """Every invariant of ``ws``'s file, checked read-only."""
    return check_connection(ws.conn)


def repair(ws: Workspace) -> FsckReport:
    """Fix what is safely repairable in one write transaction, then re-check.

    The returned report holds what is still wrong (problems no repair may touch) and, in
    ``repaired``, one line per action taken."""
    try:
        return repair_connection(ws.conn)
    finally:
        ws.drop_caches()  # names may have moved; the path cache must not outlive them
