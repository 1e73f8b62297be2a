"""Vectors: choosing the workspace's embedder, embedding the queue, and the k-NN scan.

A k-NN query scans int8 copies in the sqlite-vec table ws_vec for a shortlist and rescores it
from the float32 vectors in ws_vector, so the order and scores are the float ones. Embedding is
slow, so it never runs inside a write: ``embed_pending`` embeds queued texts outside any
transaction and stores each batch in a short one that checks the texts are still there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import apsw

from agentfs.core.digests import digest
from agentfs.core.errors import EmbedderMismatchError
from agentfs.db import vec_table_sql

if TYPE_CHECKING:
    import numpy as np

    from agentfs.core.fs import FileSystem
    from agentfs.search.embedders import Embedder

#: The int8 scan's shortlist is ``SHORTLIST * k + SHORTLIST_EXTRA`` before exact rescoring:
#: on MiniLM vectors of the standard library, twice k already finds the exact top 100.
SHORTLIST = 2
SHORTLIST_EXTRA = 20


def rebuild_vec_table(conn: apsw.Connection, dim: int) -> None:
    """(Re)make ws_vec for vectors of ``dim`` and fill it from ws_vector."""
    conn.execute("DROP TABLE IF EXISTS ws_vec")
    conn.execute(vec_table_sql(dim))
    conn.execute(
        "INSERT INTO ws_vec(rowid, embedding)"
        " SELECT text_id, vec_quantize_int8(embedding, 'unit') FROM ws_vector"
    )


def stored_model(conn: apsw.Connection) -> tuple[str, int]:
    """(model id, dim) of the workspace's vectors; ('', 0) before an embedder is chosen."""
    values = dict(
        conn.execute(
            "SELECT key, value FROM ws_config WHERE key IN ('search.embedder', 'search.dim')"
        )
    )
    return str(values["search.embedder"]), int(values["search.dim"])


def choose(conn: apsw.Connection, embedder: Embedder, *, replace: bool = False) -> bool:
    """Make ``embedder`` the workspace's; returns True when that changed anything.

    The first embedder is simply recorded, and every chunk text queued. Another model is refused
    with ``EmbedderMismatchError`` unless ``replace``: then every vector is dropped (parked ones
    too) and every text queued again. Runs inside the caller's write transaction.
    """
    model, dim = stored_model(conn)
    if model == embedder.model_id and dim == embedder.dim:
        return False
    if model and not replace:
        raise EmbedderMismatchError(
            f"this workspace's vectors were made by {model!r} (dimension {dim}), not by"
            f" {embedder.model_id!r} (dimension {embedder.dim}); vectors of different models"
            " cannot be compared. To re-embed everything with the new model: agentfs index WS"
            " --embedder NAME --replace (Python: ws.index(embedder, replace=True))"
        )
    for key, value in (("search.embedder", embedder.model_id), ("search.dim", str(embedder.dim))):
        conn.execute("UPDATE ws_config SET value = ? WHERE key = ?", (value, key))
    conn.execute("DELETE FROM ws_vector")
    conn.execute("DELETE FROM ws_vector_parked")
    rebuild_vec_table(conn, embedder.dim)
    conn.execute("DELETE FROM ws_embed_queue")
    conn.execute("INSERT INTO ws_embed_queue(text_id) SELECT id FROM ws_text")
    return True


def check_model(conn: apsw.Connection, embedder: Embedder) -> None:
    """Refuse to compare ``embedder``'s vectors with stored ones of another model."""
    model, dim = stored_model(conn)
    if (model, dim) != (embedder.model_id, embedder.dim):
        stored = f"{model!r} (dimension {dim})" if model else "no model (nothing is embedded)"
        raise EmbedderMismatchError(
            f"the workspace's vectors were made by {stored}; the query embedder is"
            f" {embedder.model_id!r} (dimension {embedder.dim})"
        )


class PendingText(NamedTuple):
    """A text waiting for its vector, and where one chunk holding it lies."""

    text_id: int
    ino: int
    start_byte: int
    end_byte: int
    digest: bytes


def embed_pending(
    fs: FileSystem,
    embedder: Embedder,
    *,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed every queued text with ``embedder`` (which must be the workspace's); returns how
    many were stored. ``progress(done, total)`` is called after each batch.

    A text is read from one chunk that holds it; bytes that no longer hash to the text's digest
    (a file written since the index looked, by another connection) are not embedded: the text
    stays queued, and the file is re-indexed before the next pass."""
    conn = fs.conn
    with fs.read_transaction():
        check_model(conn, embedder)
        total = conn.execute("SELECT count(*) FROM ws_embed_queue").get
    done = 0
    after = 0
    while True:
        with fs.read_transaction():
            batch = [
                PendingText(*row)  # type: ignore[arg-type]
                for row in conn.execute(
                    "SELECT t.id, c.id >> 20, c.start_byte, c.end_byte, t.digest"
                    " FROM ws_embed_queue q JOIN ws_text t ON t.id = q.text_id"
                    " JOIN ws_chunk c ON c.id = (SELECT min(id) FROM ws_chunk WHERE text_id = t.id)"
                    " WHERE q.text_id > ? ORDER BY q.text_id LIMIT ?",
                    (after, batch_size),
                )
            ]
            texts = chunk_texts(fs, [(c.ino, c.start_byte, c.end_byte) for c in batch])
        if not batch:
            break
        after = batch[-1].text_id
        kept = [i for i, text in enumerate(texts) if digest(text.encode()) == batch[i].digest]
        batch = [batch[i] for i in kept]
        if not batch:
            continue
        vectors = embedder.embed([texts[i] for i in kept])
        with fs.transaction():
            check_model(conn, embedder)
            done += _store(conn, batch, vectors)
        if progress is not None:
            progress(min(done, int(total)), int(total))  # type: ignore[arg-type]
    return done


def _store(conn: apsw.Connection, batch: Sequence[PendingText], vectors: np.ndarray) -> int:
    """Store the vectors of the texts still queued (a text id of another digest is another
    text); returns how many."""
    import numpy as np  # imported where vectors are handled: slow to import at every start

    stored = 0
    for text, vector in zip(batch, vectors, strict=True):
        still = conn.execute(
            "SELECT 1 FROM ws_embed_queue q JOIN ws_text t ON t.id = q.text_id"
            " WHERE q.text_id = ? AND t.digest = ?",
            (text.text_id, text.digest),
        ).get
        if still is None:
            continue  # no chunk holds it any more
        blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
        conn.execute(
            "INSERT INTO ws_vector(text_id, embedding) VALUES (?, ?)", (text.text_id, blob)
        )
        conn.execute(
            "INSERT INTO ws_vec(rowid, embedding) VALUES (?, vec_quantize_int8(?, 'unit'))",
            (text.text_id, blob),
        )
        conn.execute("DELETE FROM ws_embed_queue WHERE text_id = ?", (text.text_id,))
        stored += 1
    return stored


def chunk_texts(fs: FileSystem, chunks: Sequence[tuple[int, int, int]]) -> list[str]:
    """The text of each (ino, start byte, end byte) chunk, read in one query. A chunk starts
    and ends at line starts, so its bytes are valid UTF-8 on their own."""
    return [piece.decode("utf-8") for piece in fs.chunks.read_many(list(chunks))]


class VectorCache:
    """Every stored vector of a workspace in memory, for exact k-NN by one matrix product.

    A process that searches again and again (an agent's loop, the MCP server) does better with
    one float32 product than with sqlite-vec's scan (docs/search.md). The copy is loaded at the
    second query that finds the vectors unchanged (``search.vectors``, bumped by triggers on
    every change), so a one-shot query never pays the load; it costs ``4 * dim`` bytes a vector.
    """

    def __init__(self) -> None:
        self.version: str | None = None
        self.ids: np.ndarray | None = None
        self.matrix: np.ndarray | None = None
        self._asked: str | None = None

    def get(self, conn: apsw.Connection, dim: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(text ids, vectors) as stored now, or None when not (yet) worth loading."""
        version = conn.execute("SELECT value FROM ws_config WHERE key = 'search.vectors'").get
        if not isinstance(version, str):
            return None  # no counter: no way to know the copy is right
        if version == self.version and self.ids is not None and self.matrix is not None:
            return self.ids, self.matrix
        self.version = self.ids = self.matrix = None
        if self._asked != version:
            self._asked = version  # the first query at this version scans with sqlite-vec
            return None
        import numpy as np

        rows = conn.execute("SELECT text_id, embedding FROM ws_vector").fetchall()
        self.ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self.matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(  # type: ignore[misc]
            len(rows), dim
        )
        self.version = version
        return self.ids, self.matrix


def nearest(
    conn: apsw.Connection,
    query: np.ndarray,
    k: int,
    among: Sequence[int] | None = None,
    cache: VectorCache | None = None,
) -> list[tuple[int, float]]:
    """The ``k`` chunk texts closest to the unit vector ``query``, as (text id, cosine
    similarity), best first. ``among`` restricts the answer to those text ids. With a warm
    ``cache`` the answer is exact from memory; otherwise sqlite-vec's int8 scan makes a
    shortlist that is rescored exactly (or, with ``among``, those texts are scored directly)."""
    import numpy as np

    blob = np.ascontiguousarray(query, dtype=np.float32).tobytes()
    loaded = cache.get(conn, len(query)) if cache is not None else None
    if loaded is not None:
        ids, matrix = loaded
        if among is not None:
            keep = np.isin(ids, np.fromiter(among, dtype=np.int64))
            ids, matrix = ids[keep], matrix[keep]
        scores = matrix @ np.ascontiguousarray(query, dtype=np.float32)
        top = np.argpartition(-scores, k)[:k] if len(scores) > k else np.arange(len(scores))
        best = sorted(top.tolist(), key=lambda i: (-scores[i], ids[i]))
        return [(int(ids[i]), float(scores[i])) for i in best]
    if among is None:
        shortlist = [
            text_id
            for (text_id,) in conn.execute(
                "SELECT rowid FROM ws_vec WHERE embedding MATCH vec_quantize_int8(?, 'unit')"
                " AND k = ?",
                (blob, k * SHORTLIST + SHORTLIST_EXTRA),
            )
        ]
    else:
        shortlist = list(among)
    return similarities(conn, blob, shortlist)[:k]


def similarities(
    conn: apsw.Connection, query: bytes, text_ids: Sequence[int]
) -> list[tuple[int, float]]:
    """Exact cosine similarity of ``query`` to each text that has a vector, best first."""
    scored: list[tuple[int, float]] = []
    for start in range(0, len(text_ids), 500):
        part = text_ids[start : start + 500]
        scored.extend(
            (int(text_id), 1.0 - float(distance))  # type: ignore[arg-type]
            for text_id, distance in conn.execute(
                "SELECT text_id, vec_distance_cosine(embedding, ?) FROM ws_vector"
                f" WHERE text_id IN ({','.join('?' * len(part))})",
                (query, *part),
            )
        )
    scored.sort(key=lambda pair: -pair[1])
    return scored
