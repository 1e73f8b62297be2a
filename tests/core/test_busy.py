"""A writer that finds the write lock taken: the busy handler every connection gets.

It tries the lock again every ``BUSY_STEP`` (SQLite's own handler sleeps up to 100 ms
between tries, so a writer that takes the lock back at once starves it) and gives up with
``EBUSY`` after ``BUSY_TIMEOUT_MS``. The clock here is ``agentfs.db``'s own, replaced: no
test waits for real.
"""

from __future__ import annotations

import errno
import time
import types
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

import agentfs
from agentfs import db


def _clock(monkeypatch: pytest.MonkeyPatch, on_sleep: Callable[[], None]) -> list[float]:
    """``agentfs.db``'s ``time`` replaced by a clock that moves only when slept on; the
    sleeps asked for are returned (the list fills as the test runs)."""
    now = [1000.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds
        on_sleep()

    fake = types.SimpleNamespace(**vars(time))
    fake.monotonic, fake.sleep = lambda: now[0], sleep
    monkeypatch.setattr(db, "time", fake)
    return slept


def test_a_waiting_writer_tries_every_step_and_gets_the_lock_once_free(
    ws_path: Path, ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = db.connect(ws_path)
    holder.execute("BEGIN IMMEDIATE")

    def release_after_three_tries() -> None:
        if len(slept) == 3:
            holder.execute("COMMIT")

    slept = _clock(monkeypatch, release_after_three_tries)
    ws.write("/after-the-wait", "landed")
    holder.close()
    assert slept == [db.BUSY_STEP] * 3  # the same short step each time, never growing
    assert ws.read("/after-the-wait") == b"landed"


def test_a_writer_gives_up_with_ebusy_after_the_timeout(
    ws_path: Path, ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = db.connect(ws_path)
    holder.execute("BEGIN IMMEDIATE")
    slept = _clock(monkeypatch, lambda: None)
    try:
        with pytest.raises(OSError) as caught:
            ws.write("/never", "x")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert caught.value.errno == errno.EBUSY
    assert abs(len(slept) - round(db.BUSY_TIMEOUT_MS / 1000 / db.BUSY_STEP)) <= 1


def test_each_wait_gets_the_whole_timeout(ws_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second wait on the same connection starts its own count (SQLite's tries restart
    at 0), so a connection that waited long once is not cut short the next time."""
    holder = db.connect(ws_path)
    waiter = db.connect(ws_path)
    slept = _clock(monkeypatch, lambda: None)
    limit = round(db.BUSY_TIMEOUT_MS / 1000 / db.BUSY_STEP)
    try:
        for _ in range(2):
            holder.execute("BEGIN IMMEDIATE")
            with pytest.raises(apsw.BusyError):
                waiter.execute("BEGIN IMMEDIATE")
            holder.execute("ROLLBACK")
            assert abs(len(slept) - limit) <= 1  # (the fake clock adds up floats)
            slept.clear()
    finally:
        holder.close()
        waiter.close()
