"""A cheaper wait between requests for pyfuse3's loop: no trip through trio when one is queued
(docs/mount.md, "The request loop").

pyfuse3 takes a ``trio.Lock`` and awaits the device's readability before each request, two
scheduler passes and an ``epoll_wait`` even when the kernel has the next request queued, as it
has under load. ``install`` gives pyfuse3 a ``trio`` namespace (its module attribute
``pyfuse3.trio``, the extension point ``pyfuse3.asyncio.enable`` uses) whose ``wait_readable``
first polls with a zero timeout (waiting through trio when nothing is queued, and every
``YIELD_EVERY``-th call so timers and signals run) and whose ``Lock`` takes a free lock without
yielding (the mount's one worker never contends for it). Everything else is trio's own.
"""

from __future__ import annotations

import select
import types
from typing import Any

import pyfuse3
import trio

#: A request waiting is answered without yielding, except every this many: trio's timers
#: (the group commit's idle timer) and signal handlers must still get their turn under a
#: steady stream of requests.
YIELD_EVERY = 64


class _Lock:
    """``trio.Lock`` that does not yield when it is free (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = trio.Lock()

    async def __aenter__(self) -> None:
        if self._lock.locked():
            await self._lock.acquire()
        else:
            self._lock.acquire_nowait()

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()


class _Waiter:
    """``wait_readable`` with a non-blocking look first (see the module docstring)."""

    def __init__(self) -> None:
        self._polls: dict[int, select.poll] = {}
        self._calls = 0

    async def wait_readable(self, fd: Any) -> None:
        self._calls += 1
        if self._calls % YIELD_EVERY:
            poll = self._polls.get(fd)
            if poll is None:
                poll = self._polls[fd] = select.poll()
                poll.register(fd, select.POLLIN)
            ready = poll.poll(0)
            if ready and ready[0][1] == select.POLLIN:
                return  # a request is queued: read it now
        await trio.lowlevel.wait_readable(fd)  # none, an error, a close: trio's way


def _namespace(module: types.ModuleType, **replaced: object) -> types.SimpleNamespace:
    names = {name: getattr(module, name) for name in dir(module) if not name.startswith("__")}
    return types.SimpleNamespace(**(names | replaced))


def install() -> None:
    """Give pyfuse3 the quicker waits (idempotent; for this process's mounts)."""
    if isinstance(pyfuse3.trio, types.SimpleNamespace):  # type: ignore[attr-defined]
        return
    lowlevel = _namespace(trio.lowlevel, wait_readable=_Waiter().wait_readable)
    pyfuse3.trio = _namespace(trio, lowlevel=lowlevel, Lock=_Lock)  # type: ignore[attr-defined]
