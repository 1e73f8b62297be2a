"""Checks of SQLite's own structure and of ``fs_config``.

``PRAGMA integrity_check`` (and REINDEX, its repair when only an index is off), UNIQUE keys an
engine could have bypassed, and the two ``fs_config`` rows every other check relies on
(``chunk_size`` is read here, through ``_chunk_size``, by the content checks too).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import apsw

from agentfs.db import SPEC_VERSION
from agentfs.fsck.report import _check, _Finding

#: Tables whose UNIQUE/PRIMARY KEY is backed by an index SQLite maintains (not a rowid alias).
UNIQUE_KEYS = (
    ("fs_config", "key"),
    ("fs_dentry", "parent_ino, name"),
    ("fs_data", "ino, chunk_index"),
    ("kv_store", "key"),
)


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
    indexes = sorted({n for line in _integrity_lines(conn) if (n := _index_of(line))})
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
