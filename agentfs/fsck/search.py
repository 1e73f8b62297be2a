"""fsck of the search index: settings, which files are indexed, chunks, the FTS5 tables, vectors.

The rules are written next to each table in ``schema/migrations/0004-search.sql`` and
``0007-texts.sql`` (the index by chunk text). An inode in
ws_index_queue is exempt from them all: it is waiting to be re-indexed, which is a legal state
(the next write transaction or query drains the queue). That makes every repair the same safe
move: put the inodes concerned back in the queue (their rows are dropped and rebuilt from the
file's content when it drains), so a repair never has to guess what the index should say.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from agentfs.core.inodes import S_IFREG
from agentfs.db import queue_every_file
from agentfs.fsck.report import _check, _Finding, _is, _set_setting, _settings
from agentfs.search.vectors import rebuild_vec_table

_SETTINGS = {
    "search.index": "on",
    "search.max_bytes": "1048576",
    "search.embedder": "",
    "search.dim": "0",
    "search.vectors": "0",
}


_COUNTS = ("search.max_bytes", "search.dim", "search.vectors")


def _valid(key: str, value: str) -> bool:
    if key == "search.index":
        return value in ("on", "off")
    return key not in _COUNTS or str(value).isdigit()


def _setting_errors(conn: apsw.Connection) -> list[tuple[str, str]]:
    values, errors = _settings(conn, _SETTINGS, _valid)
    if values.get("search.embedder") and values.get("search.dim") in ("0", None):
        errors.append(("search.dim", "is 0 while an embedder is set"))
    return errors


@_check
def check_ws_config_search(conn: apsw.Connection) -> _Finding:
    """Every search setting is present and valid."""
    for key, problem in _setting_errors(conn):
        yield f"ws_config {key} {problem}", True


def repair_ws_config_search(conn: apsw.Connection) -> list[str]:
    """A bad setting goes back to its default; a bad embedder setting forgets the embedder
    and its vectors (``agentfs index --embedder`` chooses one again)."""
    done = []
    for key, _ in _setting_errors(conn):
        if key in ("search.embedder", "search.dim"):
            done.extend(_forget_embedder(conn))
            continue
        done.append(_set_setting(conn, key, _SETTINGS[key]))
    return done


def _forget_embedder(conn: apsw.Connection) -> list[str]:
    for key in ("search.embedder", "search.dim"):
        _set_setting(conn, key, _SETTINGS[key])
    conn.execute("DELETE FROM ws_vector")
    conn.execute("DELETE FROM ws_embed_queue")
    conn.execute("DROP TABLE IF EXISTS ws_vec")
    return ["forgot the embedder and its vectors"]


_LIVE_FILE = f"{_is(S_IFREG, 'i.mode')} AND i.nlink > 0 AND i.ino <> 1"  # root: a directory
_NOT_QUEUED = "NOT EXISTS (SELECT 1 FROM ws_index_queue q WHERE q.ino = {})"

_BAD_FILES = (
    # a live file with no row, or a row of the wrong size
    "SELECT i.ino, 'is not in the index' FROM fs_inode i LEFT JOIN ws_index_file f"
    f" ON f.ino = i.ino WHERE {_LIVE_FILE} AND f.ino IS NULL AND {_NOT_QUEUED.format('i.ino')}"
    " UNION ALL SELECT f.ino, 'is indexed at size ' || f.size || ', not ' || i.size"
    " FROM ws_index_file f JOIN fs_inode i ON i.ino = f.ino"
    f" WHERE f.size <> i.size AND {_NOT_QUEUED.format('f.ino')}"
    # a row for something that is not a live regular file
    " UNION ALL SELECT f.ino, 'is indexed but is no live file' FROM ws_index_file f"
    f" LEFT JOIN fs_inode i ON i.ino = f.ino WHERE (i.ino IS NULL OR NOT ({_LIVE_FILE}))"
    f" AND {_NOT_QUEUED.format('f.ino')}"
)


@_check
def check_ws_index_file_live(conn: apsw.Connection) -> _Finding:
    """Outside the queue, the index has a row for exactly the live regular files, at their size."""
    for ino, problem in conn.execute(_BAD_FILES):
        yield f"inode {ino} {problem}", True


_CHUNKS = "(SELECT id >> 20 AS ino, id & 1048575 AS seq, start_line, end_line FROM ws_chunk)"
_BAD_CHUNKS = (
    f"SELECT c.ino, 'has chunks but is not indexed as text' FROM {_CHUNKS} c"
    " LEFT JOIN ws_index_file f ON f.ino = c.ino WHERE f.state IS NOT 'text'"
    " UNION ALL SELECT f.ino, 'has ' || count(c.seq) || ' chunks numbered '"
    " || coalesce(min(c.seq) || '..' || max(c.seq), 'nothing') || ', not 0..' || (f.chunks - 1)"
    f" FROM ws_index_file f LEFT JOIN {_CHUNKS} c ON c.ino = f.ino GROUP BY f.ino"
    " HAVING count(c.seq) <> f.chunks OR (f.chunks > 0 AND max(c.seq) <> f.chunks - 1)"
    " UNION ALL SELECT ino, 'has a chunk with lines ' || start_line || '..' || end_line"
    f" FROM {_CHUNKS} WHERE start_line < 1 OR end_line < start_line"
    " UNION ALL SELECT c.id >> 20, 'has a chunk at bytes ' || c.start_byte || '..' || c.end_byte"
    " || ', outside its ' || f.size FROM ws_chunk c JOIN ws_index_file f ON f.ino = c.id >> 20"
    " WHERE c.start_byte < 0 OR c.end_byte <= c.start_byte OR c.end_byte > f.size"
)


@_check
def check_ws_chunk_layout(conn: apsw.Connection) -> _Finding:
    """Chunks belong to files indexed as text, numbered 0..chunks-1, with valid line and
    byte ranges."""
    seen = set()
    for ino, problem in conn.execute(_BAD_CHUNKS):
        if ino not in seen:
            seen.add(ino)
            yield f"inode {ino} {problem}", True


_BAD_TEXTS = (
    "SELECT c.id >> 20, 'chunk ' || c.id || ' names text ' || c.text_id || ', which is missing'"
    " FROM ws_chunk c WHERE c.text_id NOT IN (SELECT id FROM ws_text)"
    f" AND {_NOT_QUEUED.format('c.id >> 20')}"
    " UNION ALL SELECT NULL, 'text ' || t.id || ' is held by no chunk' FROM ws_text t"
    " WHERE NOT EXISTS (SELECT 1 FROM ws_chunk c WHERE c.text_id = t.id)"
    " UNION ALL SELECT NULL, 'text ' || id || ' is missing from ws_fts_chunk' FROM ws_text"
    " WHERE id NOT IN (SELECT rowid FROM ws_fts_chunk)"
    " UNION ALL SELECT NULL, 'ws_fts_chunk row ' || rowid || ' has no text' FROM ws_fts_chunk"
    " WHERE rowid NOT IN (SELECT id FROM ws_text)"
    " UNION ALL SELECT NULL, 'text ' || id || ' is missing from ws_fts_trigram' FROM ws_text"
    " WHERE id NOT IN (SELECT rowid FROM ws_fts_trigram)"
    " UNION ALL SELECT NULL, 'ws_fts_trigram row ' || rowid || ' has no text'"
    " FROM ws_fts_trigram WHERE rowid NOT IN (SELECT id FROM ws_text)"
)


@_check
def check_ws_text_fts(conn: apsw.Connection) -> _Finding:
    """Each chunk names a text, each text is held by a chunk and is in the BM25 table and the
    trigram table, and nothing else is (the FTS5 structures themselves are checked by
    ``PRAGMA integrity_check``)."""
    for ino, problem in conn.execute(_BAD_TEXTS):
        yield (f"inode {ino}: {problem}" if ino is not None else problem), True


@_check
def check_ws_embed_queue_text(conn: apsw.Connection) -> _Finding:
    """With an embedder chosen, each text has a vector or is queued for one, never both."""
    embedder = conn.execute("SELECT value FROM ws_config WHERE key = 'search.embedder'").get
    for (text_id,) in conn.execute(
        "SELECT text_id FROM ws_embed_queue WHERE text_id NOT IN (SELECT id FROM ws_text)"
        " OR text_id IN (SELECT text_id FROM ws_vector)"
    ):
        yield f"queued text {text_id} is missing or has a vector already", True
    if embedder:
        for (text_id,) in conn.execute(
            "SELECT id FROM ws_text WHERE id NOT IN (SELECT text_id FROM ws_vector)"
            " AND id NOT IN (SELECT text_id FROM ws_embed_queue)"
        ):
            yield f"text {text_id} has no vector and is not queued", True


def _dim(conn: apsw.Connection) -> int:
    return int(conn.execute("SELECT value FROM ws_config WHERE key = 'search.dim'").get or 0)  # type: ignore[arg-type]


@_check
def check_ws_vector_text(conn: apsw.Connection) -> _Finding:
    """Each vector belongs to a text, has the model's dimension and is in the vec0 table."""
    dim = _dim(conn)
    for text_id, size in conn.execute(
        "SELECT text_id, length(embedding) FROM ws_vector WHERE text_id NOT IN"
        " (SELECT id FROM ws_text) OR length(embedding) <> ?",
        (dim * 4,),
    ):
        yield f"vector of text {text_id} ({size} bytes) has no text or a wrong size", True
    if conn.table_exists("main", "ws_vec"):
        missing = conn.execute(
            "SELECT count(*) FROM ws_vector WHERE text_id NOT IN (SELECT rowid FROM ws_vec)"
        ).get
        extra = conn.execute(
            "SELECT count(*) FROM ws_vec WHERE rowid NOT IN (SELECT text_id FROM ws_vector)"
        ).get
        if missing or extra:
            yield f"ws_vec misses {missing} vectors and has {extra} too many", True
    elif conn.execute("SELECT 1 FROM ws_vector LIMIT 1").get is not None:
        yield "vectors are stored but the vec0 table ws_vec is missing", True


@_check
def check_ws_vector_parked_size(conn: apsw.Connection) -> _Finding:
    """A vector parked while its text waits to be indexed again has the model's dimension."""
    parked = conn.execute(
        "SELECT count(*) FROM ws_vector_parked WHERE length(embedding) <> ?", (_dim(conn) * 4,)
    ).get
    if parked:
        yield f"{parked} parked vectors are not of the model's size", True


def _rebuild(conn: apsw.Connection) -> list[str]:
    """Drop every index row and queue every live file: the next write transaction or query
    rebuilds the index from the files' content. Vectors go too (a damaged index cannot say
    which text a vector is of); the next ``agentfs index`` embeds the texts again."""
    conn.execute("DELETE FROM ws_index_file")
    conn.execute("DELETE FROM ws_chunk")
    conn.execute("DELETE FROM ws_text")
    conn.execute("DELETE FROM ws_vector_parked")
    for table in ("ws_fts_chunk", "ws_fts_trigram"):
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
    conn.execute("DELETE FROM ws_embed_queue")
    conn.execute("DELETE FROM ws_vector")
    if conn.table_exists("main", "ws_vec"):
        conn.execute("DELETE FROM ws_vec")
    return [f"queued {queue_every_file(conn)} files to re-index"]


def repair_ws_index_file_live(conn: apsw.Connection) -> list[str]:
    """Rebuild the index (``_rebuild``)."""
    return _rebuild(conn)


def repair_ws_chunk_layout(conn: apsw.Connection) -> list[str]:
    """Rebuild the index (``_rebuild``)."""
    return _rebuild(conn)


def repair_ws_text_fts(conn: apsw.Connection) -> list[str]:
    """Rebuild the index (``_rebuild``)."""
    return _rebuild(conn)


def repair_ws_embed_queue_text(conn: apsw.Connection) -> list[str]:
    """Drop queue rows of missing or embedded texts; queue every text without a vector."""
    dropped = conn.execute(
        "DELETE FROM ws_embed_queue WHERE text_id NOT IN (SELECT id FROM ws_text)"
        " OR text_id IN (SELECT text_id FROM ws_vector) RETURNING 1"
    ).fetchall()
    added: Sequence[object] = []
    if conn.execute("SELECT value FROM ws_config WHERE key = 'search.embedder'").get:
        added = conn.execute(
            "INSERT INTO ws_embed_queue(text_id) SELECT id FROM ws_text WHERE id NOT IN"
            " (SELECT text_id FROM ws_vector) AND id NOT IN (SELECT text_id FROM ws_embed_queue)"
            " RETURNING 1"
        ).fetchall()
    return [f"dropped {len(dropped)} and queued {len(added)} texts for embedding"]


def repair_ws_vector_text(conn: apsw.Connection) -> list[str]:
    """Drop vectors of missing texts or of the wrong size (their texts are queued again) and
    rebuild the vec0 table from ws_vector."""
    dim = _dim(conn)
    bad = [
        text_id
        for (text_id,) in conn.execute(
            "DELETE FROM ws_vector WHERE text_id NOT IN (SELECT id FROM ws_text)"
            " OR length(embedding) <> ? RETURNING text_id",
            (dim * 4,),
        ).fetchall()
    ]
    conn.execute(
        "INSERT OR IGNORE INTO ws_embed_queue(text_id) SELECT id FROM ws_text WHERE id IN"
        f" ({','.join('?' * len(bad))})",
        bad,
    )
    if dim:
        rebuild_vec_table(conn, dim)
    return [f"dropped {len(bad)} bad vectors and rebuilt ws_vec"]


def repair_ws_vector_parked_size(conn: apsw.Connection) -> list[str]:
    """Drop parked vectors of the wrong size: their texts are embedded again when indexed."""
    dropped = conn.execute(
        "DELETE FROM ws_vector_parked WHERE length(embedding) <> ? RETURNING 1",
        (_dim(conn) * 4,),
    ).fetchall()
    return [f"dropped {len(dropped)} parked vectors of the wrong size"]
