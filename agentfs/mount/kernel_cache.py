"""What the kernel caches of the mount, and taking it back when another process changes it.

Changes by other processes never reach the kernel, so the mount remembers the attributes and
the names it told it and, when another connection has committed, compares them with the
database (``reconcile``, no clock trusted) and invalidates what differs (docs/mount.md, "Taking
back what other processes changed"). Notifications go out from a thread of their own
(``Notifier``): sent from the request worker, they could wait forever on its own reply.
"""

from __future__ import annotations

import errno
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pyfuse3

from agentfs.core.inodes import STAT_COLUMNS, Stat, exact

if TYPE_CHECKING:
    import apsw

log = logging.getLogger(__name__)

#: Least time between two comparisons while other processes keep committing (seconds): a
#: stream of outside commits costs the mount at most one comparison per gap.
GAP = 0.02

_STATS = f"SELECT {STAT_COLUMNS} FROM fs_inode WHERE ino IN (SELECT value FROM json_each(?))"
_NAMES = (
    "SELECT json_extract(t.value, '$[0]'), json_extract(t.value, '$[1]'), d.ino"
    " FROM json_each(?) t LEFT JOIN fs_dentry d"
    " ON d.parent_ino = json_extract(t.value, '$[0]') AND d.name = json_extract(t.value, '$[1]')"
)


def _same(told: Stat, now: Stat) -> bool:
    """Does the kernel's copy still hold? All of a ``Stat`` counts but the access time (reads
    move it, and nothing a program does depends on the cached one)."""
    return told[:6] == now[:6] and told[7:] == now[7:]


class Notifier:
    """Sends invalidations to the kernel from its own thread, in the order they were queued.

    ``ENOENT`` is expected and ignored: the kernel may have dropped the entry or inode on its
    own since it was told (memory pressure, its timeout)."""

    _STOP = None

    def __init__(self, to_kernel: Callable[[int], int]) -> None:
        self._to_kernel = to_kernel
        self._queue: queue.SimpleQueue[tuple[int, bytes | None] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def inode(self, ino: int) -> None:
        """Forget ``ino``'s attributes and cached pages."""
        self._put((ino, None))

    def entry(self, parent: int, name: str) -> None:
        """Forget the entry ``name`` of directory ``parent`` (and the directory's attributes)."""
        self._put((parent, name.encode("utf-8")))

    def _put(self, item: tuple[int, bytes | None]) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="kernel-cache", daemon=True)
            self._thread.start()
        self._queue.put(item)

    def _run(self) -> None:
        while (item := self._queue.get()) is not self._STOP:
            ino, name = item
            try:
                if name is None:
                    pyfuse3.invalidate_inode(self._to_kernel(ino))
                else:
                    pyfuse3.invalidate_entry(self._to_kernel(ino), name)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    log.warning("cache invalidation of inode %d failed: %s", ino, exc)

    def close(self) -> None:
        """Send what is queued, then stop (before the FUSE session ends: a notification needs
        it)."""
        if self._thread is not None:
            self._queue.put(self._STOP)
            self._thread.join()
            self._thread = None


class KernelCache:
    """What the kernel was told, and reconciling it with the database (module docstring).

    Inode numbers here are the workspace's; ``Notifier`` maps them to the kernel's."""

    def __init__(self, conn: apsw.Connection, notifier: Notifier) -> None:
        self.conn = conn
        self.notifier = notifier
        #: The attributes last reported for each inode.
        self._attrs: dict[int, Stat] = {}
        #: Lookups the kernel holds on each inode (it forgets them with ``forget``).
        self._lookups: dict[int, int] = {}
        #: The names answered per directory: name -> inode, 0 for "no such name".
        self._names: dict[int, dict[str, int]] = {}
        #: Inodes invalidated since their last open: their next open drops cached pages
        #: itself (the notice may not have landed yet).
        self._stale_pages: set[int] = set()
        self._pending = False
        self._last = 0.0

    # --- what the kernel is told ---------------------------------------------------------------

    def told_attrs(self, st: Stat) -> None:
        """The kernel got ``st`` (getattr, setattr, or with an entry)."""
        self._attrs[st.st_ino] = st

    def told_entry(self, parent: int, name: str, st: Stat | None) -> None:
        """The kernel got ``name`` in ``parent``: an inode (one lookup more; its attributes
        go through ``told_attrs``) or none."""
        if st is None:
            self._names.setdefault(parent, {})[name] = 0
            return
        self._names.setdefault(parent, {})[name] = st.st_ino
        self._lookups[st.st_ino] = self._lookups.get(st.st_ino, 0) + 1

    def name_gone(self, parent: int, name: str) -> None:
        """The mount itself removed ``name`` (the kernel dropped its entry)."""
        names = self._names.get(parent)
        if names is not None:
            names.pop(name, None)

    def moved(self, old: tuple[int, str], new: tuple[int, str]) -> None:
        """The mount renamed ``old`` (parent, name) to ``new``: the kernel moved its entry."""
        ino = self._names.get(old[0], {}).pop(old[1], 0)
        if ino:
            self._names.setdefault(new[0], {})[new[1]] = ino
        else:
            self.name_gone(*new)

    def exchanged(self, a: tuple[int, str], b: tuple[int, str]) -> None:
        """The mount swapped the inodes of two names (RENAME_EXCHANGE)."""
        ino_a = self._names.get(a[0], {}).pop(a[1], 0)
        ino_b = self._names.get(b[0], {}).pop(b[1], 0)
        if ino_a and ino_b:
            self._names.setdefault(a[0], {})[a[1]] = ino_b
            self._names.setdefault(b[0], {})[b[1]] = ino_a

    def pages_valid(self, ino: int) -> bool:
        """May an open of ``ino`` keep the pages the kernel cached? Not when another process
        changed it since its last open, nor while a reconcile is put off."""
        if ino in self._stale_pages:
            self._stale_pages.discard(ino)
            return False
        return not self._pending

    def forget(self, ino: int, lookups: int) -> None:
        """The kernel forgot ``lookups`` of its lookups of ``ino``; at none it holds nothing of
        it (nor of its entries: a child's entry keeps its directory's)."""
        left = self._lookups.get(ino, 0) - lookups
        if left > 0:
            self._lookups[ino] = left
            return
        self._lookups.pop(ino, None)
        self._attrs.pop(ino, None)
        self._names.pop(ino, None)
        self._stale_pages.discard(ino)

    # --- taking back what changed ----------------------------------------------------------------

    def others_committed(self) -> None:
        """Another process committed: reconcile now (the caller holds a transaction that sees
        the commit), or at the next ``due`` when the last reconcile was under ``GAP`` ago."""
        self._pending = True
        self.reconcile_if_due()

    def due(self) -> bool:
        """Is a deferred reconcile waiting, its gap over?"""
        return self._pending and time.monotonic() - self._last >= GAP

    def reconcile_if_due(self) -> None:
        """``reconcile`` if one is waiting and its gap is over (inside a transaction)."""
        if self.due():
            self.reconcile()

    def reconcile(self) -> None:
        """Compare what was told with the database (inside the caller's transaction) and
        invalidate every difference."""
        self._pending = False
        self._last = time.monotonic()
        if self._attrs:
            now = {
                row[0]: exact(Stat(*row), self.conn)
                for row in self.conn.execute(_STATS, (json.dumps(list(self._attrs)),))
            }
            for ino, told in list(self._attrs.items()):
                current = now.get(ino)
                if current is None or not _same(told, current):
                    self.notifier.inode(ino)
                    self._stale_pages.add(ino)
                    if current is None:
                        del self._attrs[ino]
                    else:
                        self._attrs[ino] = current
        pairs = [[parent, name] for parent, names in self._names.items() for name in names]
        if pairs:
            for parent, name, ino in self.conn.execute(_NAMES, (json.dumps(pairs),)):
                names = self._names[parent]
                if names[name] != (ino or 0):
                    self.notifier.entry(parent, name)
                    del names[name]
