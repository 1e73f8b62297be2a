"""fsck of history: settings, versions, snapshot entries and the dirty set (read records:
``strays``).

The rules are written next to each table in ``schema/migrations/0003-history.sql``. The one
that matters most is ``check_ws_entry_baseline``: outside the directories marked dirty, the
newest generation's rows must equal the live tree, or the next snapshot would record a wrong
state. Its repair is always safe: it marks such directories dirty, so the next snapshot
re-reads them.
"""

from __future__ import annotations

import json

import apsw

from agentfs.core.inodes import S_IFDIR, S_IFREG
from agentfs.fsck.report import (
    INODE_COUNTER,
    _check,
    _Finding,
    _is,
    _rows,
    _set_setting,
    _settings,
)
from agentfs.history.cow import parse_keep
from agentfs.history.trees import ENTRY_MTIME

_DEFAULTS = {"history.keep": "all", "history.max_bytes": "16777216"}


def _valid(key: str, value: str) -> bool:
    try:
        if key != "history.keep":
            return int(value) >= (0 if key == "history.max_bytes" else -1)
        parse_keep(value)
        return True
    except ValueError:
        return False


def _config_errors(conn: apsw.Connection) -> list[tuple[str, str]]:
    """(key, what is wrong) for each missing or invalid history setting."""
    values, errors = _settings(conn, (*_DEFAULTS, "snapshot.watermark"), _valid)
    watermark = values.get("snapshot.watermark", "")
    counter = conn.execute(f"SELECT {INODE_COUNTER}").get
    if watermark.lstrip("-").isdigit() and int(watermark) > counter:
        errors.append(("snapshot.watermark", f"{watermark} is above the inode counter {counter}"))
    return errors


@_check
def check_ws_config_values(conn: apsw.Connection) -> _Finding:
    """Every history setting is present and valid; the watermark is a real inode number."""
    for key, problem in _config_errors(conn):
        yield f"ws_config {key} {problem}", True


def repair_ws_config_values(conn: apsw.Connection) -> list[str]:
    """Bad settings go back to their defaults; a bad watermark becomes the inode counter
    (which freezes every existing inode: safe, at worst one extra copy per file)."""
    done = []
    for key, _ in _config_errors(conn):
        value = _DEFAULTS.get(key) or str(conn.execute(f"SELECT {INODE_COUNTER}").get)
        done.append(_set_setting(conn, key, value))
    return done


_BAD_VERSIONS = (
    "SELECT v.path, v.n, v.op, v.ino, i.ino IS NULL, i.mode, i.size, v.size, v.kept,"
    " k.id IS NULL, length(k.data) FROM ws_version v LEFT JOIN fs_inode i ON i.ino = v.ino"
    " LEFT JOIN ws_kept k ON k.id = v.kept WHERE v.n < 1"
    " OR (v.op IN ('delete', 'move')) <> (v.ino IS NULL AND v.kept IS NULL)"
    " OR (v.ino IS NOT NULL AND v.kept IS NOT NULL)"
    " OR v.op NOT IN ('write', 'rename', 'move', 'link', 'restore', 'delete')"
    f" OR (v.ino IS NOT NULL AND (i.ino IS NULL OR NOT {_is(S_IFREG, 'i.mode')}"
    " OR i.size < v.size OR v.hash IS NULL))"
    " OR (v.kept IS NOT NULL AND (k.id IS NULL OR length(k.data) IS NOT v.size"
    " OR v.hash IS NULL))"
)


@_check
def check_ws_version_inode(conn: apsw.Connection) -> _Finding:
    """Each version has a valid op and number; a content version names an existing regular
    file of at least the recorded size (its bytes are the file's first ones: a file may only
    grow under the versions that name it) or kept bytes of that size, never both."""
    for row in conn.execute(_BAD_VERSIONS):
        path, n, op, ino, missing, mode, size, want, kept, kept_missing, kept_size = row
        if ino is not None and kept is not None:
            yield f"version {n} of {path} names both inode {ino} and kept bytes {kept}", False
        elif ino is not None and missing:
            yield f"version {n} of {path} ({op}) names missing inode {ino}", True
        elif ino is not None and mode is not None and (mode & 0o170000) != S_IFREG:
            yield f"version {n} of {path} names inode {ino}, which is not a regular file", False
        elif ino is not None and size < want:
            yield f"version {n} of {path}: inode {ino} has {size} bytes, recorded {want}", False
        elif kept is not None and kept_missing:
            yield f"version {n} of {path} ({op}) names missing kept bytes {kept}", True
        elif kept is not None and kept_size != want:
            yield (
                f"version {n} of {path}: kept bytes {kept} are {kept_size}, recorded {want}",
                False,
            )
        else:
            yield f"version {n} of {path} is malformed (op {op!r}, ino {ino}, kept {kept})", False


def repair_ws_version_inode(conn: apsw.Connection) -> list[str]:
    """Versions whose inode or kept bytes are gone are dropped (nothing is left to read
    back); the rest are reported only."""
    rows = _rows(
        conn,
        "DELETE FROM ws_version WHERE (ino IS NOT NULL AND NOT EXISTS (SELECT 1 FROM fs_inode i"
        " WHERE i.ino = ws_version.ino)) OR (kept IS NOT NULL AND NOT EXISTS (SELECT 1"
        " FROM ws_kept k WHERE k.id = ws_version.kept)) RETURNING path, n",
    )
    return [f"dropped version {n} of {path}: its content is gone" for path, n in rows]


_KEPT_NAMED = (
    "SELECT k.id, count(v.path) FROM ws_kept k LEFT JOIN ws_version v ON v.kept = k.id"
    " GROUP BY k.id HAVING count(v.path) <> 1"
)


@_check
def check_ws_kept_named(conn: apsw.Connection) -> _Finding:
    """Every kept row holds the bytes of exactly one version (retention frees it with its
    version, so one no version names is a leak; two sharing one would free it twice)."""
    for kept, count in conn.execute(_KEPT_NAMED):
        if count == 0:
            yield f"kept bytes {kept} belong to no version", True
        else:
            yield f"kept bytes {kept} are named by {count} versions", False


def repair_ws_kept_named(conn: apsw.Connection) -> list[str]:
    """Kept bytes no version names are deleted (nothing can read them)."""
    rows = _rows(
        conn,
        "DELETE FROM ws_kept WHERE NOT EXISTS (SELECT 1 FROM ws_version v"
        " WHERE v.kept = ws_kept.id) RETURNING id",
    )
    return [f"deleted kept bytes {kept}, which no version named" for (kept,) in rows]


@_check
def check_ws_snapshot_meta(conn: apsw.Connection) -> _Finding:
    """meta is JSON text (or NULL); counts are not negative."""
    for name, meta, files, size in conn.execute("SELECT name, meta, files, bytes FROM ws_snapshot"):
        if meta is not None:
            try:
                json.loads(meta)
            except ValueError:
                yield f"snapshot {name!r} has meta that is not JSON", False
        if files < 0 or size < 0:
            yield f"snapshot {name!r} has negative counts", False


_BAD_ENTRIES = (
    "SELECT e.parent, e.name, e.born, e.died, e.ino, i.ino IS NULL FROM ws_entry e"
    " LEFT JOIN fs_inode i ON i.ino = e.ino"
    " WHERE (e.died IS NOT NULL AND e.died <= e.born) OR e.born < 1"
    " OR e.born > (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'ws_snapshot')"
    f" OR (NOT {_is(S_IFDIR, 'e.mode')} AND i.ino IS NULL) OR e.ino > {INODE_COUNTER}"
)


@_check
def check_ws_entry_inode(conn: apsw.Connection) -> _Finding:
    """Each snapshot entry has a valid generation interval and an inode number that was
    issued, and a file or symlink entry names an inode that still exists (directories may be
    gone: restore recreates them)."""
    counter = conn.execute(f"SELECT {INODE_COUNTER}").get
    for parent, name, born, died, ino, missing in conn.execute(_BAD_ENTRIES):
        where = f"snapshot entry {name!r} in directory {parent}"
        if ino > counter:
            yield f"{where} names inode {ino}, a number never issued", False
        elif missing:
            yield f"{where} names missing inode {ino}", False
        else:
            yield f"{where} has generations {born}..{died}", False


@_check
def check_ws_entry_overlap(conn: apsw.Connection) -> _Finding:
    """No two rows of one (parent, name) cover the same generation."""
    for parent, name, born_a, born_b in conn.execute(
        "SELECT a.parent, a.name, a.born, b.born FROM ws_entry a JOIN ws_entry b"
        " ON b.parent = a.parent AND b.name = a.name AND b.born > a.born"
        " WHERE a.died IS NULL OR a.died > b.born"
    ):
        yield f"snapshot entries {name!r} in directory {parent} overlap ({born_a}, {born_b})", False


@_check
def check_ws_entry_frozen(conn: apsw.Connection) -> _Finding:
    """Every inode a snapshot holds is at or below the watermark, so no write changes it (a
    number above the inode counter, never issued, is check_ws_entry_inode's to report)."""
    for ino, name in conn.execute(
        "SELECT ino, name FROM ws_entry WHERE ino > (SELECT CAST(value AS INTEGER)"
        f" FROM ws_config WHERE key = 'snapshot.watermark') AND ino <= {INODE_COUNTER}"
        " LIMIT 100"
    ):
        yield f"snapshot entry {name!r} names inode {ino}, above the watermark", True


def repair_ws_entry_frozen(conn: apsw.Connection) -> list[str]:
    conn.execute(f"UPDATE ws_config SET value = {INODE_COUNTER} WHERE key = 'snapshot.watermark'")
    return ["raised snapshot.watermark to the inode counter"]


_STALE_BASELINE = (
    "SELECT DISTINCT d.parent_ino FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino"
    " WHERE d.parent_ino NOT IN (SELECT ino FROM ws_dirty) AND NOT EXISTS (SELECT 1"
    " FROM ws_entry e WHERE e.parent = d.parent_ino AND e.name = d.name AND e.died IS NULL"
    f" AND e.ino = d.ino AND e.mode = i.mode AND e.mtime_ns = {ENTRY_MTIME})"
    " UNION SELECT e.parent FROM ws_entry e WHERE e.died IS NULL"
    " AND e.parent NOT IN (SELECT ino FROM ws_dirty) AND NOT EXISTS (SELECT 1 FROM fs_dentry d"
    " WHERE d.parent_ino = e.parent AND d.name = e.name)"
)


def _stale_baseline(conn: apsw.Connection) -> list[int]:
    if conn.execute("SELECT value FROM ws_config WHERE key = 'snapshot.watermark'").get == "-1":
        return []
    return [parent for (parent,) in conn.execute(_STALE_BASELINE)]


@_check
def check_ws_entry_baseline(conn: apsw.Connection) -> _Finding:
    """Outside ws_dirty, the newest generation's entries are exactly the live tree's."""
    for parent in _stale_baseline(conn):
        yield f"directory {parent} changed since the last snapshot but is not marked dirty", True


def repair_ws_entry_baseline(conn: apsw.Connection) -> list[str]:
    stale = _stale_baseline(conn)
    conn.executemany("INSERT OR IGNORE INTO ws_dirty(ino) VALUES (?)", [(p,) for p in stale])
    return [f"marked directories {stale} dirty for the next snapshot"] if stale else []


@_check
def check_ws_dirty_baseline(conn: apsw.Connection) -> _Finding:
    """Directories are marked dirty only while a snapshot baseline exists."""
    if conn.execute("SELECT value FROM ws_config WHERE key = 'snapshot.watermark'").get == "-1":
        count = conn.execute("SELECT count(*) FROM ws_dirty").get
        if count:
            yield f"{count} directories are marked dirty but no snapshot exists", True


def repair_ws_dirty_baseline(conn: apsw.Connection) -> list[str]:
    conn.execute("DELETE FROM ws_dirty")
    return ["cleared ws_dirty (no snapshot baseline)"]
