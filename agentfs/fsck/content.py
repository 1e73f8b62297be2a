"""Checks of what files and logs hold: ``fs_symlink`` targets, ``fs_data`` chunks and file
sizes, ``kv_store`` JSON, ``tool_calls`` records and the staged log rows of changing calls
(``schema/migrations/0011-staged-calls.sql``); their stray rows are in ``strays``.

A problem with no safe answer here (a hole in a file's chunks, a symlink without a target, a
malformed JSON value) is reported and never touched; only sizes are repaired.
"""

from __future__ import annotations

import apsw

from agentfs.core.inodes import S_IFLNK, S_IFREG
from agentfs.db import table_columns
from agentfs.fsck.report import _check, _Finding, _is, _rows
from agentfs.fsck.sqlite import _chunk_size
from agentfs.toolcalls import FIRST_LINK, LINK_PAIR

# --- fs_symlink -----------------------------------------------------------------------------------


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


@_check
def check_fs_data_type(conn: apsw.Connection) -> _Finding:
    """Only regular files have chunks (never directories, symlinks or special files)."""
    for ino, mode, count in conn.execute(
        "SELECT i.ino, i.mode, count(*) FROM fs_data d NOT INDEXED JOIN fs_inode i ON i.ino = d.ino"
        f" WHERE NOT {_is(S_IFREG, 'i.mode')} GROUP BY i.ino"
    ):
        yield f"inode {ino} (mode {mode:#o}) is not a regular file but has {count} chunks", False


def _file_chunks(conn: apsw.Connection) -> list[tuple]:
    """(ino, size, chunks, first, last, bytes, layout ok) of files whose chunks or size are off
    (none while ``chunk_size`` is unusable: check_fs_config_chunk_size reports that).

    Well-formed: indexes 0..n-1, every chunk a BLOB, all exactly chunk_size but the last,
    which holds 1..chunk_size bytes. length() and typeof() of a column never read the blob;
    NOT INDEXED: the table is the truth even when its index is damaged (Turso's engine);
    MATERIALIZED: else the GROUP BY sorter would carry every blob (docs/fsck.md)."""
    chunk_size = _chunk_size(conn)
    if chunk_size is None:
        return []
    # a file of the base whose bytes are still on the host has its size and no chunks
    # (``agentfs.core.base``; check_ws_origin_unread)
    unread = (
        " AND NOT EXISTS (SELECT 1 FROM ws_origin o WHERE o.ino = i.ino AND o.present = 0)"
        if conn.table_exists("main", "ws_origin")
        else ""
    )
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
        f" FROM fs_inode i LEFT JOIN c ON c.ino = i.ino WHERE {_is(S_IFREG, 'i.mode')}{unread})"
        " SELECT ino, size, n, lo, hi, total, ok FROM f WHERE NOT ok OR total <> size",
        (chunk_size,),
    )


@_check
def check_fs_data_layout(conn: apsw.Connection) -> _Finding:
    """A file's chunks are 0..n-1, all chunk_size bytes but the last (1..chunk_size bytes)."""
    for ino, _, n, lo, hi, total, ok in _file_chunks(conn):
        if not ok:
            yield (
                f"file {ino} has malformed chunks: {n} chunks, indexes {lo}..{hi}, {total} bytes"
                f" (chunk size {_chunk_size(conn)})",
                False,
            )


@_check
def check_fs_inode_size(conn: apsw.Connection) -> _Finding:
    """A file's size is the total length of its chunks."""
    for ino, size, n, _, _, total, ok in _file_chunks(conn):
        if total != size:
            yield f"file {ino} has size {size} but its {n} chunks hold {total} bytes", bool(ok)


def repair_fs_inode_size(conn: apsw.Connection) -> list[str]:
    """Only where the chunks are well-formed: they are then the truth (what readers see)."""
    rows = [r for r in _file_chunks(conn) if r[6] and r[5] != r[1]]
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
    finished = "status IS NOT 'pending'" if "status" in table_columns(conn, "tool_calls") else "1"
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


@_check
def check_ws_tool_call_staged_values(conn: apsw.Connection) -> _Finding:
    """Staged log rows hold what ``publish`` moves: JSON texts, the first version written as
    a text ``path`` and an integer ``n`` (both NULL for none) and a JSON list of the others'
    ``[path, n]``, ordered times, and a result or an error, not both. Not repaired: a staged
    row is a change's only log row, so fsck reports it and leaves it."""
    for id_, name in conn.execute(
        "SELECT id, name FROM ws_tool_call_staged WHERE"
        f" NOT ((path IS NULL AND n IS NULL) OR ({FIRST_LINK})) OR NOT json_valid(writes)"
        " OR json_type(writes) != 'array' OR EXISTS (SELECT 1 FROM json_each(writes) j WHERE"
        f" NOT ({LINK_PAIR}))"
        " OR (parameters IS NOT NULL AND NOT"
        " json_valid(parameters)) OR (result IS NOT NULL AND NOT json_valid(result))"
        " OR (result IS NOT NULL AND error IS NOT NULL) OR completed_at < started_at"
    ):
        yield f"staged log row {id_} of a {name} call is malformed", False
