"""The search part of a workspace: the index (choosing an embedder, embedding, status) and queries.

The core knows nothing of the index: its triggers queue each changed file with the write, and
this side drains the queue before the index is read (``agentfs.search.index``).
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from agentfs.core.fs import FileSystem
from agentfs.core.inodes import S_IFMT, S_IFREG
from agentfs.db import load_extensions, queue_every_file
from agentfs.search import vectors
from agentfs.search.embedders import Embedder, builtin
from agentfs.search.glob import walk
from agentfs.search.index import ANY_QUEUED, IndexStatus, SearchIndex
from agentfs.search.names import first_names


class Index:
    """The index of the workspace ``fs`` (see the module docstring)."""

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        self.conn = fs.conn
        self.search_index = SearchIndex(fs.conn, fs.chunks)
        #: A read-only handle's drained copy, with the data_version it was made at.
        self._drained_copy: tuple[object, Index] | None = None

    def refresh_index(self, *, batches: int | None = None) -> int:
        """Index what was written since the index was last brought up to date (writes only
        queue their files: see ``agentfs.search.index``), at most ``batches`` batches of it;
        how many files were indexed. Search, grep and ``index`` call it first; a read-only
        handle cannot, and indexes nothing."""
        if self.fs.readonly or self.conn.execute(ANY_QUEUED).get is None:
            return 0  # the probe takes no lock
        return self.search_index.refresh(self.fs.transaction, batches=batches)

    def indexed(self) -> Index:
        """An index covering every committed write, for a query to run on (over its ``fs``):
        this one, once ``refresh_index`` drained the queue; or, on a read-only handle with files
        waiting to be indexed (it may not write, and a query must not miss them), a private
        in-memory copy of the workspace with the queue drained there. The copy is kept until
        another connection commits; the workspace file is never written."""
        if not self.fs.readonly:
            self.refresh_index()
            return self
        if self.conn.execute(ANY_QUEUED).get is None:
            self.close_drained_copy()  # the queue drained since: the copy is stale
            return self
        version = self.conn.execute("PRAGMA data_version").get
        if self._drained_copy is None or self._drained_copy[0] != version:
            self.close_drained_copy()
            self._drained_copy = version, _drained_copy(self.conn)
        return self._drained_copy[1]

    def close_drained_copy(self) -> None:
        """Free the copy ``indexed`` made, if any."""
        if self._drained_copy is not None:
            self._drained_copy[1].conn.close()
            self._drained_copy = None

    def embedder(self) -> Embedder | None:
        """The built-in embedder of the workspace's model (loaded once per process), or None
        before one was chosen. A workspace embedded by a model of your own has none: pass
        that embedder to ``search`` and ``index``."""
        model, _dim = vectors.stored_model(self.conn)
        if not model:
            return None
        return builtin(model)

    def index(
        self,
        embedder: Embedder | str | None = None,
        *,
        rebuild: bool = False,
        path: str = "/",
        replace: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexStatus:
        """Bring the index up to date and embed what waits for a vector.

        ``embedder`` (an ``Embedder``, or a built-in name: 'minilm', 'hashing') becomes the
        workspace's on first use; a different model than the stored one is refused unless
        ``replace`` (which drops every vector and embeds all chunks again). ``rebuild``
        re-indexes every file at or below ``path`` from its content first. Without an
        embedder given or stored, only BM25 and trigram indexes are brought up to date.
        ``progress(done, total)`` follows the embedding.
        """
        if isinstance(embedder, str):
            embedder = builtin(embedder)
        if rebuild:
            with self.fs.transaction():
                self.search_index.queue(self._files_under(path))
        else:
            self.refresh_index()
        if embedder is not None:
            with self.fs.transaction():
                vectors.choose(self.conn, embedder, replace=replace)
        chosen = embedder or self.embedder()
        if chosen is not None:
            self.embed_pending(chosen, progress=progress)
        return self.index_status()

    def embed_pending(
        self,
        embedder: Embedder | None = None,
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Embed the chunks waiting for a vector (with the workspace's embedder unless one is
        given; it must be of the same model); returns how many were stored."""
        embedder = embedder or self.embedder()
        if embedder is None:
            return 0
        self.refresh_index()  # files written since the last drain get their chunks first
        return vectors.embed_pending(self.fs, embedder, progress=progress)

    def _files_under(self, path: str) -> list[int]:
        st = self.fs.stat(path)
        if not st.is_dir():
            return [st.st_ino] if st.type == "file" else []
        return [e.ino for e in walk(self.fs, "**", path) if e.mode & S_IFMT == S_IFREG]

    def index_status(self) -> IndexStatus:
        """What is indexed, what was skipped and why, what waits for a vector (the queue of
        written files is drained first, so ``queued`` is 0 unless the handle is read-only)."""
        self.refresh_index()
        with self.fs.read_transaction():
            skipped = {
                ino
                for (ino,) in self.conn.execute(
                    "SELECT ino FROM ws_index_file WHERE state <> 'text'"
                )
            }
            # walking up from the few skipped files, not down the whole tree
            return self.search_index.status(first_names(self.fs, skipped))

    def configure_index(
        self, *, enabled: bool | None = None, max_bytes: int | None = None
    ) -> IndexStatus:
        """Turn indexing on or off, or change the size limit; files already there are queued
        and re-indexed under the new rules before the status is returned."""
        with self.fs.transaction():
            if enabled is not None:
                self.search_index.set_enabled(enabled)
            if max_bytes is not None:
                self.search_index.set_max_bytes(max_bytes)
            queue_every_file(self.conn)
        return self.index_status()


def _drained_copy(conn: apsw.Connection) -> Index:
    """The workspace as ``conn`` sees it, copied page by page (SQLite's backup, one read of
    the source) into memory, with its index queue drained there."""
    copy = apsw.Connection(":memory:")
    with copy.backup("main", conn, "main") as backup:
        backup.step()
    load_extensions(copy)
    drained = Index(FileSystem(copy))
    drained.refresh_index()
    return drained
