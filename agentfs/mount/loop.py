"""A cheaper wait between requests for pyfuse3's loop: no trip through trio when one is queued.

pyfuse3's request loop (one trio task per worker) takes a ``trio.Lock`` and then awaits
``trio.lowlevel.wait_readable`` on the FUSE device before reading each request. Both always
yield to trio's scheduler: a lock's ``acquire`` is a checkpoint, and ``wait_readable``
registers with epoll and parks the task until the next scheduler pass reports the device
readable. That is two scheduler passes and an ``epoll_wait`` per request, even when the
kernel already has the next request queued, which under load (``tar``, ``grep -r``, a build:
many processes asking at once) is most of the time. Measured on ``cat`` of 10,000 files
through the mount, it was about a fifth of the daemon's CPU time.

``install`` gives pyfuse3 a ``trio`` namespace that differs in two names, through the same
extension point ``pyfuse3.asyncio.enable`` uses (pyfuse3 looks trio up as its module
attribute ``pyfuse3.trio``):

* ``lowlevel.wait_readable`` first asks the kernel with a zero-timeout ``poll(2)`` and
  returns at once when a request is waiting; when none is, or on every ``YIELD_EVERY``-th
  call, it waits through trio as pyfuse3's does, so the mount's timers and signal handlers run;
* ``Lock`` takes a free lock without yielding (``acquire_nowait``); a contended one waits
  as trio's does. The mount runs one worker task (its handlers never await, so more would
  only take turns), so it is never contended.

Everything else is trio's own.
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
