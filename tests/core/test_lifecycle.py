"""Opening and closing workspaces: nothing leaks, every table has an fsck check."""

from __future__ import annotations

import os
import threading
from pathlib import Path

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


def test_sync_copies_the_committed_wal_into_the_main_file(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        for i in range(50):
            ws.write(f"/f{i}", bytes(5000))
        pages = ws.conn.execute("PRAGMA page_count").get * ws.conn.execute("PRAGMA page_size").get
        assert path.stat().st_size < pages  # the new pages are only in the WAL so far
        ws.sync()
        assert path.stat().st_size == pages
