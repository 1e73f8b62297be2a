"""The search index of a workspace: what is indexed, keeping it right, and asking it questions.

Triggers queue every changed regular file in the write's own transaction, so no change is lost
and a write pays one queue row; the queue is drained in batches, each its own transaction,
before the index is read. The index is by chunk text (ws_text), so a text many files hold is
indexed once (docs/search.md, "The indexes, and how they stay right").
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import apsw

from agentfs.core.digests import digest
from agentfs.core.inodes import S_IFMT, S_IFREG
from agentfs.search.chunking import byte_offsets, chunk_text, decode_text
from agentfs.search.vectors import VectorCache

if TYPE_CHECKING:
    from agentfs.core.chunks import Chunks
    from agentfs.db import Transaction

#: The queue in inode order, with each file's size (0 for one gone meanwhile).
_QUEUED = (
    "SELECT q.ino, coalesce(i.size, 0) FROM ws_index_queue q"
    " LEFT JOIN fs_inode i ON i.ino = q.ino ORDER BY q.ino LIMIT ?"
)
#: One probe: is anything queued?
ANY_QUEUED = "SELECT 1 FROM ws_index_queue LIMIT 1"
#: ws_index_file.state values.
TEXT, BINARY, TOO_LARGE, OFF = "text", "binary", "too_large", "off"
#: Most files, and about the most bytes, indexed in one transaction of a drain (see above).
BATCH_FILES = 256
BATCH_BYTES = 8 * 1024 * 1024
#: A chunk id is (ino << CHUNK_BITS) | seq (schema/migrations/0004-search.sql).
CHUNK_BITS = 20
MAX_CHUNKS = 1 << CHUNK_BITS


def chunk_range(ino: int) -> tuple[int, int]:
    """The first and last possible chunk id of ``ino``."""
    return ino << CHUNK_BITS, ((ino + 1) << CHUNK_BITS) - 1


def chunk_ino(chunk_id: int) -> int:
    return chunk_id >> CHUNK_BITS


@dataclass(frozen=True)
class IndexSettings:
    """The ``search.*`` rows of ws_config.

    Attributes:
        enabled: index text files (a file written while off is recorded as 'off').
        max_bytes: larger files are left out of the index (grep scans them).
        embedder: the model id of the stored vectors ('' when none was chosen yet).
        dim: their dimension (0 when none).
    """

    enabled: bool
    max_bytes: int
    embedder: str
    dim: int


def load_settings(conn: apsw.Connection) -> IndexSettings:
    values = dict(conn.execute("SELECT key, value FROM ws_config WHERE key LIKE 'search.%'"))
    return IndexSettings(
        enabled=values["search.index"] == "on",
        max_bytes=int(values["search.max_bytes"]),
        embedder=values["search.embedder"],
        dim=int(values["search.dim"]),
    )


@dataclass(frozen=True)
class IndexStatus:
    """What ``agentfs index --status`` shows.

    Attributes:
        enabled: indexing is on.
        max_bytes: the size limit for indexed files.
        files: live regular files by state ('text', 'binary', 'too_large', 'off').
        chunks: distinct chunk texts indexed (BM25, trigram and vector rows: a text that
            several files hold counts once).
        queued: files written but not indexed yet (drained before the index is read).
        embedder: model id of the stored vectors, or ''.
        dim: their dimension.
        embedded: texts with a vector.
        pending: texts waiting for one (``agentfs index`` embeds them).
        skipped: paths of files not indexed, with why ('binary', 'too_large', 'off').
        unread: files of the base directory whose bytes are not in the workspace yet, so not
            indexed (``agentfs index`` reads them in; docs/overlay.md).
    """

    enabled: bool
    max_bytes: int
    files: dict[str, int]
    chunks: int
    queued: int
    embedder: str
    dim: int
    embedded: int
    pending: int
    skipped: list[tuple[str, str]]
    unread: int = 0


class SearchIndex:
    """Index maintenance for one connection (the query side lives in the sibling modules)."""

    def __init__(self, conn: apsw.Connection, chunks: Chunks) -> None:
        self.conn = conn
        self.chunks = chunks
        #: This connection's in-memory copy of the vectors (``vectors.VectorCache``).
        self.vectors = VectorCache()
        self._tokenizer: apsw.FTS5Tokenizer | None = None

    def tokenizer(self) -> apsw.FTS5Tokenizer:
        """ws_fts_chunk's tokenizer (schema/migrations/0004-search.sql): queries stem their
        words with it to look them up in the FTS5 vocabulary."""
        if self._tokenizer is None:
            self._tokenizer = self.conn.fts5_tokenizer(
                "porter", ["unicode61", "remove_diacritics", "2"]
            )
        return self._tokenizer

    @property
    def settings(self) -> IndexSettings:
        return load_settings(self.conn)

    # --- keeping it right ---------------------------------------------------------------------

    def refresh(self, write: Callable[[], Transaction], *, batches: int | None = None) -> int:
        """Index what is queued, in batches, each in a transaction ``write()`` opens (inside
        the caller's, as a savepoint, when one is open); at most ``batches`` of them. Returns
        how many files were indexed."""
        done = 0
        more = True
        while more and (batches is None or batches > 0):
            with write():
                indexed, more = self.drain_batch()
            done += indexed
            if batches is not None:
                batches -= 1
        return done

    def drain_batch(self) -> tuple[int, bool]:
        """Index one batch of queued inodes as they are now, inside the caller's write
        transaction, and take them off the queue; how many there were, and whether more wait.

        The batch's inodes are all dropped first and indexed after, and the texts their old
        chunks held are swept last: a text that is still (or again) held, by an unchanged part
        of an edited file or by a file a copy-up or a restore replaced, keeps its rows and its
        vector."""
        conn = self.conn
        queued: list[int] = []
        budget = BATCH_BYTES
        for ino, size in conn.execute(_QUEUED, (BATCH_FILES,)):
            if queued and size > budget:
                break
            queued.append(ino)  # type: ignore[arg-type]
            budget -= size  # type: ignore[operator]
        if not queued:
            return 0, False
        settings = self.settings
        released: set[int] = set()
        for ino in queued:
            released.update(self._drop(ino))
        texts = _NewTexts(conn, settings.embedder != "")
        for ino in queued:
            self._index(ino, settings, texts)
        texts.tokenise()
        _sweep(conn, released)
        conn.executemany("DELETE FROM ws_index_queue WHERE ino = ?", [(ino,) for ino in queued])
        more = conn.execute(ANY_QUEUED).get is not None
        if not more:
            conn.execute("DELETE FROM ws_vector_parked")  # no file left to take one back
        return len(queued), more

    def _index(self, ino: int, settings: IndexSettings, texts: _NewTexts) -> None:
        """Index ``ino`` as it is now: its chunks, each naming its text (``texts`` adds the
        ones not indexed yet)."""
        conn = self.conn
        row = conn.execute("SELECT mode, nlink, size FROM fs_inode WHERE ino = ?", (ino,)).get
        if row is None:
            return
        mode, nlink, size = row
        if (mode & S_IFMT) != S_IFREG or nlink == 0:
            return  # gone from the live tree (history may still hold it)
        if self.chunks.base is not None and self.chunks.base.unread(ino):
            return  # a file of the base not read in yet: queued again when its bytes come
        if not settings.enabled:
            self._file(ino, OFF, size, 0)
            return
        if size > settings.max_bytes:
            self._file(ino, TOO_LARGE, size, 0)
            return
        text = decode_text(self.chunks.read(ino, size))
        if text is None:
            self._file(ino, BINARY, size, 0)
            return
        pieces = chunk_text(text)
        if len(pieces) > MAX_CHUNKS:
            self._file(ino, TOO_LARGE, size, 0)
            return
        self._file(ino, TEXT, size, len(pieces))
        first = ino << CHUNK_BITS
        conn.executemany(
            "INSERT INTO ws_chunk(id, text_id, start_line, end_line, start_byte, end_byte)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (first + seq, texts.id_of(piece.text), piece.start_line, piece.end_line, *span)
                for seq, (piece, span) in enumerate(
                    zip(pieces, byte_offsets(text, pieces), strict=True)
                )
            ],
        )

    def _file(self, ino: int, state: str, size: int, chunks: int) -> None:
        self.conn.execute(
            "INSERT INTO ws_index_file(ino, state, size, chunks) VALUES (?, ?, ?, ?)",
            (ino, state, size, chunks),
        )

    def _drop(self, ino: int) -> set[int]:
        """Remove the index rows of ``ino`` (its texts stay until ``_sweep``); returns the
        texts its chunks held. Goes by the chunk rows themselves, not by ws_index_file, so a
        damaged index is cleaned up too."""
        conn = self.conn
        conn.execute("DELETE FROM ws_index_file WHERE ino = ?", (ino,))
        return {
            text_id  # type: ignore[misc]
            for (text_id,) in conn.execute(
                "DELETE FROM ws_chunk WHERE id BETWEEN ? AND ? RETURNING text_id", chunk_range(ino)
            )
        }

    # --- on demand ----------------------------------------------------------------------------

    def queue(self, inos: Iterable[int]) -> None:
        """Re-index ``inos`` from their content (``rebuild``): their texts are dropped, so the
        drain tokenises them again (a damaged FTS5 row is made anew), with texts no chunk
        holds; every other file holding one of those texts is queued too. Vectors are parked
        by digest, so the texts take theirs back when indexed again."""
        conn = self.conn
        inos = list(inos)
        texts = {
            text_id
            for ino in inos
            for (text_id,) in conn.execute(
                "SELECT DISTINCT text_id FROM ws_chunk WHERE id BETWEEN ? AND ?", chunk_range(ino)
            )
        }
        texts.update(
            text_id
            for (text_id,) in conn.execute(
                "SELECT id FROM ws_text t WHERE NOT EXISTS"
                " (SELECT 1 FROM ws_chunk c WHERE c.text_id = t.id)"
            )
        )
        ids = [(text_id,) for text_id in sorted(texts)]  # type: ignore[type-var]
        holders = {
            chunk_ino(chunk_id)  # type: ignore[arg-type]
            for text_id in ids
            for (chunk_id,) in conn.execute("SELECT id FROM ws_chunk WHERE text_id = ?", text_id)
        }
        conn.executemany(
            "INSERT OR REPLACE INTO ws_vector_parked(digest, embedding) SELECT t.digest,"
            " v.embedding FROM ws_vector v JOIN ws_text t ON t.id = v.text_id WHERE t.id = ?",
            ids,
        )
        drop_texts(conn, ids)  # type: ignore[arg-type]
        conn.executemany(
            "INSERT OR IGNORE INTO ws_index_queue(ino) VALUES (?)",
            [(ino,) for ino in sorted(holders.union(inos))],
        )

    def set_enabled(self, enabled: bool) -> None:
        self._set("search.index", "on" if enabled else "off")

    def set_max_bytes(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise OSError(errno.EINVAL, f"search.max_bytes must be >= 0, not {max_bytes}")
        self._set("search.max_bytes", str(max_bytes))

    def _set(self, key: str, value: str) -> None:
        self.conn.execute("UPDATE ws_config SET value = ? WHERE key = ?", (value, key))

    def status(self, path_of: dict[int, str]) -> IndexStatus:
        """Counts for ``agentfs index --status``; ``path_of`` names the skipped inodes."""
        conn = self.conn
        settings = self.settings
        files = dict(conn.execute("SELECT state, count(*) FROM ws_index_file GROUP BY state"))
        skipped = sorted(
            (path_of.get(ino, f"<inode {ino}>"), state)  # type: ignore[arg-type]
            for ino, state in conn.execute(
                "SELECT ino, state FROM ws_index_file WHERE state <> 'text'"
            )
        )
        return IndexStatus(
            enabled=settings.enabled,
            max_bytes=settings.max_bytes,
            files={k: int(v) for k, v in files.items()},  # type: ignore[call-overload]
            chunks=conn.execute("SELECT count(*) FROM ws_text").get,  # type: ignore[arg-type]
            queued=conn.execute("SELECT count(*) FROM ws_index_queue").get,  # type: ignore[arg-type]
            embedder=settings.embedder,
            dim=settings.dim,
            embedded=conn.execute("SELECT count(*) FROM ws_vector").get,  # type: ignore[arg-type]
            pending=conn.execute("SELECT count(*) FROM ws_embed_queue").get,  # type: ignore[arg-type]
            skipped=skipped,
            unread=0 if self.chunks.base is None else self.chunks.base.unread_count(),
        )


class _NewTexts:
    """The texts of one drain batch: each chunk text's id, found by its digest or made, and
    the new ones tokenised together at the end (``tokenise``), in id order, so FTS5 appends
    them to one segment."""

    def __init__(self, conn: apsw.Connection, embedding: bool) -> None:
        self.conn = conn
        self.embedding = embedding
        #: A vector parked by the digest of its text waits for a new text of that digest.
        self.parked = embedding and conn.execute(_ANY_PARKED).get is not None
        self.ids: dict[bytes, int] = {}
        self.new: list[tuple[int, str]] = []

    def id_of(self, text: str) -> int:
        key = digest(text.encode())
        known = self.ids.get(key)
        if known is not None:
            return known
        conn = self.conn
        found = conn.execute("SELECT id FROM ws_text WHERE digest = ?", (key,)).get
        if found is None:
            found = conn.execute("INSERT INTO ws_text(digest) VALUES (?) RETURNING id", (key,)).get
            self.new.append((found, text))  # type: ignore[arg-type]
            if self.embedding:
                self._vector(found, key)  # type: ignore[arg-type]
        self.ids[key] = found  # type: ignore[assignment]
        return found  # type: ignore[return-value]

    def _vector(self, text_id: int, key: bytes) -> None:
        """Give a new text its parked vector, or queue it for embedding."""
        conn = self.conn
        vector = (
            conn.execute(
                "DELETE FROM ws_vector_parked WHERE digest = ? RETURNING embedding", (key,)
            ).get
            if self.parked
            else None
        )
        if vector is None:
            conn.execute("INSERT INTO ws_embed_queue(text_id) VALUES (?)", (text_id,))
            return
        conn.execute("INSERT INTO ws_vector(text_id, embedding) VALUES (?, ?)", (text_id, vector))
        conn.execute(
            "INSERT INTO ws_vec(rowid, embedding) VALUES (?, vec_quantize_int8(?, 'unit'))",
            (text_id, vector),
        )

    def tokenise(self) -> None:
        """The BM25 and trigram rows of the batch's new texts."""
        for table in ("ws_fts_chunk", "ws_fts_trigram"):
            self.conn.executemany(f"INSERT INTO {table}(rowid, text) VALUES (?, ?)", self.new)


_ANY_PARKED = "SELECT 1 FROM ws_vector_parked LIMIT 1"


def _sweep(conn: apsw.Connection, text_ids: Iterable[int]) -> None:
    """Drop the texts of ``text_ids`` that no chunk holds any more: their ws_text row, their
    FTS5 rows, their vector or embedding queue row."""
    gone = [
        (text_id,)
        for text_id in text_ids
        if conn.execute("SELECT 1 FROM ws_chunk WHERE text_id = ? LIMIT 1", (text_id,)).get is None
    ]
    drop_texts(conn, gone)


def drop_texts(conn: apsw.Connection, text_ids: list[tuple[int]]) -> None:
    """Delete every row of the texts ``text_ids`` (as 1-tuples): ws_text, FTS5, vector (its
    int8 copy too) and embedding queue."""
    conn.executemany("DELETE FROM ws_text WHERE id = ?", text_ids)
    for table in ("ws_fts_chunk", "ws_fts_trigram"):
        conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", text_ids)
    conn.executemany("DELETE FROM ws_embed_queue WHERE text_id = ?", text_ids)
    embedded = [
        row
        for text_id in text_ids
        for row in conn.execute(
            "DELETE FROM ws_vector WHERE text_id = ? RETURNING text_id", text_id
        )
    ]
    if embedded:  # ws_vec exists once a model is chosen
        conn.executemany("DELETE FROM ws_vec WHERE rowid = ?", embedded)
