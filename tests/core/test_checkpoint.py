"""The background checkpointer: commits wake a thread instead of checkpointing themselves; the
WAL stays bounded even when the thread cannot help; close stops it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

import agentfs
from agentfs import checkpoint, fsck


def wal_frames(ws: agentfs.Workspace) -> int:
    """Frames in the WAL now (a PASSIVE checkpoint reports it and copies what it can)."""
    _busy, log, _done = ws.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()[0]
    return int(log)  # type: ignore[arg-type]


def checkpointer(ws: agentfs.Workspace) -> checkpoint.BackgroundCheckpointer:
    found = ws._checkpointer
    assert found is not None
    return found


def test_commits_past_the_threshold_wake_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "BEHIND", 10**9)  # the writer never checkpoints itself
    with agentfs.open(tmp_path / "ws.db") as ws:
        bg = checkpointer(ws)
        assert bg._thread is None  # nothing written yet: no thread
        bg.threshold = 64
        data = os.urandom(4096)
        for i in range(200):
            ws.write(f"/f{i}", data)
        deadline = time.monotonic() + 30
        while bg.checkpoints == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert bg.checkpoints > 0 and bg.error is None
        # the thread's checkpoints copied the pages and let the WAL start over: a write now
        # lands in a short WAL, not after the ~600 frames the loop appended
        ws.write("/after", data)
        assert wal_frames(ws) < 64
        assert all(ws.read(f"/f{i}") == data for i in range(200))
    assert not [t for t in threading.enumerate() if t.name == "agentfs-checkpoint"]
    with agentfs.open(tmp_path / "ws.db") as again:
        assert fsck.check(again).clean and len(again.listdir("/")) == 201


def test_without_the_thread_the_writer_keeps_the_wal_bounded(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db") as ws:
        bg = checkpointer(ws)
        bg.threshold = 64
        bg.error = RuntimeError("the thread could not start")  # the fallback path
        data = os.urandom(4096)
        for i in range(300):
            ws.write(f"/f{i}", data)
        assert bg._thread is None
        # each write adds a few frames; the writer checkpoints itself past BEHIND x threshold
        assert wal_frames(ws) <= checkpoint.BEHIND * bg.threshold + 50
