"""Opening and closing workspaces: nothing leaks, every table has an fsck check."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import agentfs


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_opening_and_closing_fifty_times_leaks_no_descriptor_or_thread(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        ws.write("/a", b"x")
    fds, threads = _open_fds(), threading.active_count()
    for i in range(50):
        with agentfs.open(path) as ws:
            ws.write(f"/f{i}", b"x")
            ws.read("/a")
            ws.remove(f"/f{i}")
    assert (_open_fds(), threading.active_count()) == (fds, threads)


def test_close_is_idempotent(tmp_path: Path) -> None:
    ws = agentfs.open(tmp_path / "ws.db")
    ws.close()
    ws.close()


def test_close_frees_what_the_connection_queued(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        ws.configure_history(keep="none")
        ws.write("/a", b"x")
        ws.remove("/a")
        assert ws.orphans.pending() == 1  # a small file waits for a batch
    with agentfs.open(path, readonly=True) as ws:
        assert ws.orphans.pending() == 0
        assert ws.conn.execute("SELECT count(*) FROM fs_data").get == 0


def test_sync_fsyncs_the_wal_that_holds_the_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut cannot be staged here; what makes commits survive one can be watched: the
    WAL file that holds them, and its directory, are fsynced, and nothing is copied into the
    main file in the caller's thread."""
    path = tmp_path / "ws.db"
    synced: list[str] = []
    real = os.fsync

    def watched(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    with agentfs.open(path) as ws:
        for i in range(50):
            ws.write(f"/f{i}", bytes(5000))
        size = path.stat().st_size
        monkeypatch.setattr(os, "fsync", watched)
        ws.sync()
        assert synced == [f"{path}-wal", str(tmp_path)]
        assert path.stat().st_size == size  # the new pages are still only in the WAL
