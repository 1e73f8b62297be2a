"""The index as ``Workspace`` methods: choosing an embedder, embedding, rebuilding, status.

A mixin over ``FileSystem`` (like ``agentfs.history.HistoryMixin``), so the workspace class
stays a list of what it offers. Keeping the index right on every write needs none of this:
that happens in the core (``agentfs.search.index``).
"""

from __future__ import annotations

from collections.abc import Callable

from agentfs.fs import FileSystem
from agentfs.inodes import S_IFMT, S_IFREG
from agentfs.search import vectors
from agentfs.search.background import BackgroundEmbedder
from agentfs.search.embedders import Embedder, builtin
from agentfs.search.glob import walk
from agentfs.search.index import IndexStatus, queue_every_file, refresh
from agentfs.search.names import first_names


class SearchMixin(FileSystem):
    """``index``, ``index_status`` and ``configure_index`` (``search``, ``grep`` and ``glob``
    are the functions of ``agentfs.search`` assigned on ``Workspace``)."""

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
            with self._write():
                self.search_index.queue(self._files_under(path))
        else:
            refresh(self)
        if embedder is not None:
            with self._write():
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
        refresh(self)  # files a raw-connection transaction left unindexed get their chunks
        return vectors.embed_pending(self, embedder, progress=progress)

    def embed_in_background(
        self, *, interval: float = 5.0, embedder: Embedder | None = None
    ) -> BackgroundEmbedder:
        """The opt-in background step: a thread with its own connection that embeds queued
        chunks every ``interval`` seconds until stopped (use it as a context manager)."""
        return BackgroundEmbedder(self.conn.filename, embedder, interval)

    def _files_under(self, path: str) -> list[int]:
        st = self.stat(path)
        if not st.is_dir():
            return [st.st_ino] if st.type == "file" else []
        return [e.ino for e in walk(self, "**", path) if e.mode & S_IFMT == S_IFREG]

    def index_status(self) -> IndexStatus:
        """What is indexed, what was skipped and why, what waits for a vector."""
        with self._read():
            skipped = {
                ino
                for (ino,) in self.conn.execute(
                    "SELECT ino FROM ws_index_file WHERE state <> 'text'"
                )
            }
            # walking up from the few skipped files, not down the whole tree
            return self.search_index.status(first_names(self, skipped))

    def configure_index(
        self, *, enabled: bool | None = None, max_bytes: int | None = None
    ) -> IndexStatus:
        """Turn indexing on write on or off, or change the size limit; files already there
        are re-indexed under the new rules in the same transaction."""
        with self._write():
            if enabled is not None:
                self.search_index.set_enabled(enabled)
            if max_bytes is not None:
                self.search_index.set_max_bytes(max_bytes)
            queue_every_file(self.conn)
        return self.index_status()
