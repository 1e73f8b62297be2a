"""Reading the search index tables in tests: the chunks of each inode with their text's digest
(ws_chunk's id packs both as ``(ino << 20) | seq``; its text is a ws_text row)."""

from __future__ import annotations

import apsw

#: The packed layout: ``id = (ino << CHUNK_BITS) | seq``.
CHUNK_BITS = 20


def chunk_rows(conn: apsw.Connection) -> list[tuple[int, int, int, int, bytes, int, int]]:
    """(ino, seq, start_line, end_line, digest, chunk id, text id) of every ws_chunk row,
    sorted; the text id is the rowid of the text's FTS5 rows and the key of its vector."""
    mask = (1 << CHUNK_BITS) - 1
    sql = (
        f"SELECT c.id >> {CHUNK_BITS}, c.id & {mask}, c.start_line, c.end_line, t.digest, c.id,"
        " c.text_id FROM ws_chunk c JOIN ws_text t ON t.id = c.text_id"
    )
    return sorted(conn.execute(sql).fetchall())  # type: ignore[arg-type]


def chunks_of(conn: apsw.Connection, ino: int) -> list[tuple[int, int, int, int, bytes, int, int]]:
    return [row for row in chunk_rows(conn) if row[0] == ino]
