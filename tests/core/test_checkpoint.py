"""The background checkpointer: commits wake a thread instead of checkpointing themselves; the
WAL stays bounded even when the thread cannot help; close stops it."""

from __future__ import annotations

import itertools
import os
import threading
import time
from pathlib import Path

import apsw
import pytest

import agentfs
from agentfs import fsck
from agentfs.core import checkpoint


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
    monkeypatch.setattr(checkpoint, "TAIL_FRAMES", 16)  # ... beyond the thread's last few
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
        # once the thread has copied the pages, a commit copies what is left and the next one
        # starts the WAL over: it lands in a short WAL, not after the ~600 frames of the loop
        # (the WAL's size as the last commit saw it: a checkpoint of our own would restart it)
        frames = []
        for i in range(100):
            ws.write("/after", data if i % 2 else data[::-1])
            frames.append(bg._frames)
            if frames[-1] < 64:
                break
            time.sleep(0.05)
        assert frames[-1] < 64, frames
        assert all(ws.read(f"/f{i}") == data for i in range(200))
    assert not [t for t in threading.enumerate() if t.name == "agentfs-checkpoint"]
    with agentfs.open(tmp_path / "ws.db") as again:
        assert fsck.check(again).clean and len(again.listdir("/")) == 201


def test_a_writer_that_never_pauses_still_sees_the_wal_start_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread's PASSIVE checkpoints never catch up with a busy writer on their own; the
    writer copies the last few frames itself, so the WAL starts over again and again."""
    monkeypatch.setattr(checkpoint, "BEHIND", 10**9)  # the writer's full fallback is off
    monkeypatch.setattr(checkpoint, "TAIL_FRAMES", 16)  # the tail is the thread's leftovers
    with agentfs.open(tmp_path / "ws.db") as ws:
        bg = checkpointer(ws)
        bg.threshold = 64
        data = os.urandom(4096)
        largest, restarts, last = 0, 0, 0
        # how large the WAL grows in between, and so how many writes a restart takes, depends
        # on how often the thread gets a core (under a loaded machine it lags: a full suite's
        # run saw only 2 restarts in 30,000 writes); that the WAL keeps starting over does
        # not: write until it has three times, within a bound, and ask for at least two
        for i in range(60_000):
            ws.write(f"/f{i % 50}", data[: 1 + i % 4096])
            largest = max(largest, bg._frames)
            restarts += bg._frames < last
            last = bg._frames
            if restarts >= 3 and i >= 3000:
                break
        assert bg.error is None and bg.checkpoints > 0
        assert restarts >= 2, (restarts, largest)


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


def count_own_checkpoints(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The WAL's frames at each checkpoint the writer runs in its own thread (filled in as it
    runs them)."""
    own: list[int] = []
    real = checkpoint.BackgroundCheckpointer._checkpoint_here

    def counted(
        self: checkpoint.BackgroundCheckpointer, conn: object, name: str, *, wait: bool = False
    ) -> None:
        own.append(self._frames)
        real(self, conn, name, wait=wait)  # type: ignore[arg-type]

    monkeypatch.setattr(checkpoint.BackgroundCheckpointer, "_checkpoint_here", counted)
    return own


def test_commits_larger_than_the_threshold_are_copied_by_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that commits in steps of many times the threshold (the mount commits a file
    streamed in one go every 256 MiB) copies nothing itself while the thread keeps up, and the
    WAL still starts over: a transaction that begins with the whole WAL copied restarts it."""
    own = count_own_checkpoints(monkeypatch)
    with agentfs.open(tmp_path / "ws.db") as ws:
        bg = checkpointer(ws)
        bg.threshold = 64
        step = os.urandom(1 << 20)  # 256 frames of 4 KiB: four times the threshold
        seen = []
        for i in range(12):
            ws.write(f"/big{i}", step)
            seen.append(bg._frames)
            deadline = time.monotonic() + 60
            while bg._copied != (bg._generation, bg._frames):  # a writer slower than the disk
                assert time.monotonic() < deadline, (bg._copied, bg._generation, bg._frames)
                time.sleep(0.005)
        assert own == [] and bg.error is None, own
        assert max(seen) < 2 * 300, seen  # one step per WAL generation, never two
        assert all(ws.read(f"/big{i}") == step for i in range(12))
    with agentfs.open(tmp_path / "ws.db") as again:
        assert fsck.check(again).clean


def test_a_thread_that_falls_behind_large_commits_makes_the_writer_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the thread copying nothing (a disk slower than the writer, at worst), the writer
    copies the WAL itself once it is BEHIND times its largest commit: the WAL stays bounded
    and the writer is held back."""
    monkeypatch.setattr(checkpoint.BackgroundCheckpointer, "_start", lambda self: None)
    own = count_own_checkpoints(monkeypatch)
    with agentfs.open(tmp_path / "ws.db") as ws:
        seen = write_steps_bounded(ws, 16)
        assert len(own) >= 2 and all(n >= checkpoint.BEHIND * 269 for n in own), (own, seen)


def write_steps_bounded(ws: agentfs.Workspace, count: int) -> list[int]:
    """Write ``count`` 1 MiB files, each its own commit of about 270 frames (the first about
    390, with the schema's pages), with a threshold of 64 frames; check that the WAL stayed
    within BEHIND times the largest commit (and one more), started over, and lost nothing.
    The WAL's size at each commit."""
    bg = checkpointer(ws)
    bg.threshold = 64
    step = os.urandom(1 << 20)
    seen = []
    for i in range(count):
        ws.write(f"/big{i}", step)
        seen.append(bg._frames)
    assert max(seen) <= (checkpoint.BEHIND + 1) * 400, seen
    assert sum(b < a for a, b in itertools.pairwise(seen)) >= 2, seen  # it started over
    assert all(ws.read(f"/big{i}") == step for i in range(count))
    return seen


def test_a_writer_the_thread_never_quite_catches_up_with_keeps_the_wal_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commits larger than the tail, back to back: each transaction begins before the thread
    has copied the last one, so the WAL never starts over by itself. At BEHIND times the
    largest commit the writer waits for the thread's checkpoint and copies the rest."""
    monkeypatch.setattr(checkpoint, "TAIL_FRAMES", 16)
    with agentfs.open(tmp_path / "ws.db") as ws:
        write_steps_bounded(ws, 40)
        assert checkpointer(ws).error is None


def test_the_generation_changes_whoever_restarts_the_wal(tmp_path: Path) -> None:
    """Another connection's checkpoint that restarts the WAL changes the generation the
    writer reads (each connection keeps its own checkpoint sequence number; the salts are
    the WAL's own)."""
    with agentfs.open(tmp_path / "ws.db") as ws:
        bg = checkpointer(ws)
        ws.write("/a", b"one")
        before = bg.wal_generation()
        assert before != -1
        other = apsw.Connection(str(tmp_path / "ws.db"))
        try:
            other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            ws.write("/a", b"two")  # the next write starts the emptied WAL over
            assert bg.wal_generation() not in (-1, before)
        finally:
            other.close()
