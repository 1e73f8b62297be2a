"""Workspaces as an earlier schema left them, for migration tests: a workspace file made by
this release without the staged log rows' link columns (schema 11), without ws_xattr (schema
8), without ws_pin too (schema 7), or with its search index rewritten the way schema 6 kept it
(one FTS5 row and one vector per chunk, keyed by chunk id, the text's digest on the chunk row;
migrations 8 and 9 make ws_pin and ws_xattr only if they are missing, 12 the link columns),
or with every inode recorded as root's (schema 12), or with a sync token saved inside the file
(schema 13)."""

from __future__ import annotations

import json
from pathlib import Path

import apsw

import agentfs
from agentfs import db

_SCHEMA_6_CHUNK = (
    "CREATE TABLE ws_chunk (id INTEGER PRIMARY KEY, start_line INTEGER NOT NULL,"
    " end_line INTEGER NOT NULL, start_byte INTEGER NOT NULL, end_byte INTEGER NOT NULL,"
    " digest BLOB NOT NULL)"
)


def _as_schema(path: Path, version: int, *undo: str) -> None:
    """Run the ``undo`` statements on the closed workspace file ``path`` and set its counter
    to ``version``, in one transaction."""
    conn = apsw.Connection(str(path))
    try:
        with conn:
            for statement in undo:
                conn.execute(statement)
            conn.execute(
                "UPDATE fs_config SET value = ? WHERE key = ?", (str(version), db.SCHEMA_KEY)
            )
    finally:
        conn.close()


def as_schema_8(path: Path) -> None:
    """Drop what migration 9 made (ws_xattr) from the closed workspace file ``path`` and set
    its counter to 8."""
    _as_schema(path, 8, "DROP TABLE ws_xattr")


def as_schema_7(path: Path) -> None:
    """Drop what migrations 9 and 8 made (ws_xattr, ws_pin) from the closed workspace file
    ``path`` and set its counter to 7."""
    as_schema_8(path)
    _as_schema(path, 7, "DROP TABLE ws_pin")


def as_schema_11(path: Path) -> None:
    """Drop what migration 12 made (the staged log rows' link columns) from the closed
    workspace file ``path`` and set its counter to 11."""
    _as_schema(
        path,
        11,
        "ALTER TABLE ws_tool_call_staged DROP COLUMN path",
        "ALTER TABLE ws_tool_call_staged DROP COLUMN n",
    )


def index_as_schema_6(ws: agentfs.Workspace) -> None:
    """Rewrite ``ws``'s (drained) index in schema 6's layout and set its counter to 6."""
    ws.refresh_index()
    conn = ws.conn
    with conn:
        chunks = conn.execute(
            "SELECT c.id, c.id >> 20, c.start_line, c.end_line, c.start_byte, c.end_byte,"
            " t.digest, c.text_id FROM ws_chunk c JOIN ws_text t ON t.id = c.text_id ORDER BY c.id"
        ).fetchall()
        texts = ws.chunks.read_many(
            [(ino, start, end) for _, ino, _, _, start, end, _, _ in chunks]
        )
        vectors = dict(conn.execute("SELECT text_id, embedding FROM ws_vector"))
        queued = {text_id for (text_id,) in conn.execute("SELECT text_id FROM ws_embed_queue")}
        dim = int(conn.execute("SELECT value FROM ws_config WHERE key = 'search.dim'").get)
        for statement in (
            "DROP TABLE ws_chunk",
            "DROP TABLE ws_text",
            "DROP TABLE ws_vector_parked",
            "DROP TABLE IF EXISTS ws_vec",
            "DELETE FROM ws_vector",
            "DELETE FROM ws_embed_queue",
            "ALTER TABLE ws_vector RENAME COLUMN text_id TO chunk_id",
            "ALTER TABLE ws_embed_queue RENAME COLUMN text_id TO chunk_id",
            "INSERT INTO ws_fts_chunk(ws_fts_chunk) VALUES ('delete-all')",
            "INSERT INTO ws_fts_trigram(ws_fts_trigram) VALUES ('delete-all')",
            _SCHEMA_6_CHUNK,
        ):
            conn.execute(statement)
        for (chunk_id, _ino, first, last, start, end, key, text_id), text in zip(
            chunks, texts, strict=True
        ):
            conn.execute(
                "INSERT INTO ws_chunk VALUES (?, ?, ?, ?, ?, ?)",
                (chunk_id, first, last, start, end, key),
            )
            for table in ("ws_fts_chunk", "ws_fts_trigram"):
                conn.execute(
                    f"INSERT INTO {table}(rowid, text) VALUES (?, ?)", (chunk_id, text.decode())
                )
            if text_id in vectors:
                conn.execute(
                    "INSERT INTO ws_vector(chunk_id, embedding) VALUES (?, ?)",
                    (chunk_id, vectors[text_id]),
                )
            if text_id in queued:
                conn.execute("INSERT INTO ws_embed_queue(chunk_id) VALUES (?)", (chunk_id,))
        if dim:
            conn.execute(db.vec_table_sql(dim))
            conn.execute(
                "INSERT INTO ws_vec(rowid, embedding)"
                " SELECT chunk_id, vec_quantize_int8(embedding, 'unit') FROM ws_vector"
            )
        conn.execute("UPDATE fs_config SET value = '6' WHERE key = ?", (db.SCHEMA_KEY,))


def as_schema_12(path: Path) -> None:
    """Record every inode of the closed workspace file ``path`` as root's, as every release
    before migration 13 did whoever made it, and set its counter to 12."""
    _as_schema(path, 12, "UPDATE fs_inode SET uid = 0, gid = 0")


def as_schema_13_with_token(path: Path, token: str) -> None:
    """Store ``token`` in the sync settings of the closed workspace file ``path`` (set up to
    sync), where ``sync setup --save-token`` kept it before migration 14, and set its
    counter to 13."""
    conn = apsw.Connection(str(path))
    try:
        with conn:
            conn.execute(
                "INSERT INTO ws_sync(key, value) VALUES ('token', ?)", (json.dumps(token),)
            )
    finally:
        conn.close()
    _as_schema(path, 13)
