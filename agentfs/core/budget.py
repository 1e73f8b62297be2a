"""How many bytes of uncommitted chunks a group of open handles may hold between them.

A handle keeps what it writes in memory until it commits (``agentfs.core.handle``). One
budget per handle bounds that handle; one budget shared by every handle of a FUSE mount bounds
the daemon, however many files a program holds open and however much it writes to them: past
the limit, the handle holding the most commits its chunks, so memory stays within the budget
plus one chunk per writing request.
"""

from __future__ import annotations

from typing import Protocol


class Holder(Protocol):
    """What a budget asks of a handle: commit its chunks (and report holding none)."""

    def flush(self) -> None: ...


class DirtyBudget:
    """The uncommitted bytes of the handles sharing it (see the module docstring)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._held: dict[Holder, int] = {}
        self._flushing = False

    def hold(self, holder: Holder, nbytes: int) -> None:
        """``holder`` holds ``nbytes`` now; at the limit the largest holder commits (not
        again from inside that commit, which reports its own bytes here)."""
        self.total += nbytes - self._held.get(holder, 0)
        if nbytes:
            self._held[holder] = nbytes
        else:
            self._held.pop(holder, None)
        if self.total >= self.limit and self._held and not self._flushing:
            self._flushing = True
            try:
                max(self._held, key=self._held.__getitem__).flush()
            finally:
                self._flushing = False
