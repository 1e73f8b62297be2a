"""The search index of a workspace: what is indexed, keeping it right, and asking it questions.

Triggers (schema/migrations/0004-search.sql) queue every regular file whose content, size,
link count or existence changed, in the write's own transaction: no change can be lost, and a
write pays one queue row, not the indexing. The queue is drained when the index is about to
be read (``SearchMixin.refresh_index``: before a search, ``index``, ``index --status``; a grep
drains two batches and reads the rest whole) and by the background step of long-running
processes, in batches of up to ``BATCH_FILES`` files or ``BATCH_BYTES`` bytes, each batch its
own transaction: FTS5 writes one segment per transaction, so a batch costs about what one
file did, and another writer waits at most one batch. Queries never miss a committed write:
they drain first, and grep also reads a still-queued file whole (a read-only handle cannot
drain).

Per file, a drain drops the old rows and re-reads the whole file: files over
``search.max_bytes`` are not indexed (and grep scans them), so this is bounded. Chunks whose
text is unchanged keep their embedding (it is copied by digest, never recomputed).
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
        chunks: BM25 chunks.
        queued: files written but not indexed yet (drained before the index is read).
        embedder: model id of the stored vectors, or ''.
        dim: their dimension.
        embedded: chunks with a vector.
        pending: chunks waiting for one (``agentfs index`` embeds them).
        skipped: paths of files not indexed, with why ('binary', 'too_large', 'off').
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

        The batch's inodes are all dropped first and indexed after. Their old vectors are set
        aside by the digest of their chunk's text, so a new chunk with the same text (an
        unchanged part of an edited file, or of a file a copy-up or a restore replaced) takes
        one over instead of waiting to be embedded again."""
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
        old: list[tuple[int, bytes]] = []
        for ino in queued:
            old.extend(self._drop(ino))
        pool = self._set_vectors_aside(old) if settings.embedder else {}
        for ino in queued:
            self._index(ino, settings, pool)
        conn.executemany("DELETE FROM ws_index_queue WHERE ino = ?", [(ino,) for ino in queued])
        return len(queued), conn.execute(ANY_QUEUED).get is not None

    def _index(self, ino: int, settings: IndexSettings, pool: dict[bytes, list[bytes]]) -> None:
        """Index ``ino`` as it is now; chunks whose text is in ``pool`` take a vector from it."""
        conn = self.conn
        row = conn.execute("SELECT mode, nlink, size FROM fs_inode WHERE ino = ?", (ino,)).get
        if row is None:
            return
        mode, nlink, size = row
        if (mode & S_IFMT) != S_IFREG or nlink == 0:
            return  # gone from the live tree (history may still hold it)
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
        rows = [
            (first + seq, piece.start_line, piece.end_line, start, end, digest(piece.text.encode()))
            for seq, (piece, (start, end)) in enumerate(
                zip(pieces, byte_offsets(text, pieces), strict=True)
            )
        ]
        conn.executemany(
            "INSERT INTO ws_chunk(id, start_line, end_line, start_byte, end_byte, digest)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
        texts = [(first + seq, piece.text) for seq, piece in enumerate(pieces)]
        conn.executemany("INSERT INTO ws_fts_chunk(rowid, text) VALUES (?, ?)", texts)
        conn.executemany("INSERT INTO ws_fts_trigram(rowid, text) VALUES (?, ?)", texts)
        if settings.embedder:
            for row in rows:
                self._vector_for(row[0], row[5], pool)

    def _file(self, ino: int, state: str, size: int, chunks: int) -> None:
        self.conn.execute(
            "INSERT INTO ws_index_file(ino, state, size, chunks) VALUES (?, ?, ?, ?)",
            (ino, state, size, chunks),
        )

    def _drop(self, ino: int) -> list[tuple[int, bytes]]:
        """Remove every index row of ``ino`` but its vectors; returns its old chunks as (id,
        digest). Goes by the chunk rows themselves, not by ws_index_file, so a damaged
        index is cleaned up too."""
        conn = self.conn
        conn.execute("DELETE FROM ws_index_file WHERE ino = ?", (ino,))
        low, high = chunk_range(ino)
        old: list[tuple[int, bytes]] = conn.execute(  # type: ignore[assignment]
            "DELETE FROM ws_chunk WHERE id BETWEEN ? AND ? RETURNING id, digest", (low, high)
        ).fetchall()
        ids = [(chunk_id,) for chunk_id, _ in old]
        conn.executemany("DELETE FROM ws_fts_chunk WHERE rowid = ?", ids)
        conn.executemany("DELETE FROM ws_fts_trigram WHERE rowid = ?", ids)
        return old

    def _set_vectors_aside(self, old: list[tuple[int, bytes]]) -> dict[bytes, list[bytes]]:
        """Take the vectors (and queue rows) of the dropped chunks out of the tables; returns
        the vectors by the digest of their chunk's text."""
        conn = self.conn
        pool: dict[bytes, list[bytes]] = {}
        for chunk_id, key in old:
            conn.execute("DELETE FROM ws_embed_queue WHERE chunk_id = ?", (chunk_id,))
            vector = conn.execute(
                "DELETE FROM ws_vector WHERE chunk_id = ? RETURNING embedding", (chunk_id,)
            ).get
            if vector is not None:
                conn.execute("DELETE FROM ws_vec WHERE rowid = ?", (chunk_id,))
                pool.setdefault(key, []).append(vector)  # type: ignore[arg-type]
        return pool

    def _vector_for(self, chunk_id: int, key: bytes, pool: dict[bytes, list[bytes]]) -> None:
        """Give a new chunk a set-aside vector of the same text, or queue it for embedding."""
        conn = self.conn
        vectors = pool.get(key)
        if not vectors:
            conn.execute("INSERT INTO ws_embed_queue(chunk_id) VALUES (?)", (chunk_id,))
            return
        vector = vectors.pop()
        conn.execute("INSERT INTO ws_vector(chunk_id, embedding) VALUES (?, ?)", (chunk_id, vector))
        conn.execute(
            "INSERT INTO ws_vec(rowid, embedding) VALUES (?, vec_quantize_int8(?, 'unit'))",
            (chunk_id, vector),
        )

    # --- on demand ----------------------------------------------------------------------------

    def queue(self, inos: Iterable[int]) -> None:
        """Queue ``inos`` for re-indexing (``rebuild``)."""
        self.conn.executemany(
            "INSERT OR IGNORE INTO ws_index_queue(ino) VALUES (?)", [(ino,) for ino in inos]
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
            chunks=conn.execute("SELECT count(*) FROM ws_chunk").get,  # type: ignore[arg-type]
            queued=conn.execute("SELECT count(*) FROM ws_index_queue").get,  # type: ignore[arg-type]
            embedder=settings.embedder,
            dim=settings.dim,
            embedded=conn.execute("SELECT count(*) FROM ws_vector").get,  # type: ignore[arg-type]
            pending=conn.execute("SELECT count(*) FROM ws_embed_queue").get,  # type: ignore[arg-type]
            skipped=skipped,
        )
