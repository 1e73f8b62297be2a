"""The opt-in background step: a thread that indexes written files and embeds their chunks.

It runs while the agent works, so the first query after a burst of writes finds little left to
do. It has a ``Workspace`` of its own on the same file (opened by a function the workspace hands
it, so this layer never imports the workspace), and embeds outside any transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agentfs.search.embedders import Embedder


class Indexable(Protocol):
    """What the thread needs of the workspace it opens (a ``Workspace`` has it all)."""

    def embedder(self) -> Embedder | None: ...

    def refresh_index(self) -> int: ...

    def embed_pending(self, embedder: Embedder | None = None) -> int: ...


class BackgroundEmbedder:
    """Index what was written and embed what waits for a vector every ``interval`` seconds
    until ``stop`` (or the end of a ``with`` block); ``drain`` asks for a pass now and waits
    for it. ``error`` holds what stopped the thread early, if anything; ``embedded`` counts
    the vectors it stored."""

    def __init__(
        self,
        open_workspace: Callable[[], AbstractContextManager[Indexable]],
        embedder: Embedder | None,
        interval: float,
    ) -> None:
        self.open_workspace = open_workspace
        self.embedder = embedder
        self.interval = interval
        self.embedded = 0
        self.error: BaseException | None = None
        self._passes = 0
        self._busy = False
        self._done = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="agentfs-embedder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with self.open_workspace() as ws:
                while not self._stop.is_set():
                    self._wake.clear()
                    with self._changed:
                        self._busy = True
                    embedder = self.embedder or ws.embedder()
                    if embedder is None:
                        ws.refresh_index()
                    else:  # indexes first, then embeds
                        self.embedded += ws.embed_pending(embedder)
                    with self._changed:
                        self._busy = False
                        self._passes += 1
                        self._changed.notify_all()
                    self._wake.wait(self.interval)
        except BaseException as exc:  # the owner sees it in ``error``
            self.error = exc
        finally:
            with self._changed:
                self._done = True
                self._changed.notify_all()

    def drain(self, timeout: float | None = None) -> bool:
        """Start a pass now and wait until it ends (True), or ``timeout`` (False); what was
        written before the call is indexed and embedded by then."""
        with self._changed:
            target = self._passes + (2 if self._busy else 1)
            self._wake.set()
            return (
                self._changed.wait_for(lambda: self._passes >= target or self._done, timeout)
                and self.error is None
            )

    def stop(self) -> None:
        """Finish the current batch and end the thread."""
        self._stop.set()
        self._wake.set()
        self._thread.join()

    def __enter__(self) -> BackgroundEmbedder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
