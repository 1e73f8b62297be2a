"""Reading the search index tables in tests: the chunks of each inode, whatever the layout
(``ws_chunk.ino``/``seq`` columns, or both packed in the id as ``(ino << 20) | seq``)."""

from __future__ import annotations

import apsw

#: The packed layout: ``id = (ino << CHUNK_BITS) | seq``.
CHUNK_BITS = 20


def chunk_rows(conn: apsw.Connection) -> list[tuple[int, int, int, int, bytes, int]]:
    """(ino, seq, start_line, end_line, digest, id) of every ws_chunk row, sorted."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(ws_chunk)")}
    if "ino" in columns:
        sql = "SELECT ino, seq, start_line, end_line, digest, id FROM ws_chunk"
    else:
        mask = (1 << CHUNK_BITS) - 1
        sql = (
            f"SELECT id >> {CHUNK_BITS}, id & {mask}, start_line, end_line, digest, id"
            " FROM ws_chunk"
        )
    return sorted(conn.execute(sql).fetchall())  # type: ignore[arg-type]


def chunks_of(conn: apsw.Connection, ino: int) -> list[tuple[int, int, int, int, bytes, int]]:
    return [row for row in chunk_rows(conn) if row[0] == ino]
