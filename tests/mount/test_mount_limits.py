"""Sizes an attacker asks for through the mount: each is refused with EFBIG or ENOSPC, or
served in bounded memory, and the daemon lives on. Its memory is read from /proc
(``VmHWM``, the peak resident size since it started)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import agentfs
from agentfs.mount.files import BUFFER_BUDGET
from tests.mount.conftest import Mounted

MiB = 1 << 20
#: What the daemon may grow by, at most, beyond its start, whatever the test asks of it: the
#: open files' budget, SQLite's page cache (64 MiB, agentfs.db) and some slack. Before the
#: budget, the writes below held all 144 MiB; before holes were streamed, a 256 MiB hole
#: held 256 MiB.
GROWTH = BUFFER_BUDGET + 64 * MiB + 24 * MiB


def _peak_rss(m: Mounted) -> int:
    status = Path(f"/proc/{m.process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def _alive(m: Mounted) -> None:
    assert m.process.poll() is None, m.log.read_text()
    (m.dir / "alive").write_bytes(b"yes")
    assert (m.dir / "alive").read_bytes() == b"yes"


def _errno(call: object) -> int:
    with pytest.raises(OSError) as caught:
        call()  # type: ignore[operator]
    return caught.value.errno or 0


def test_a_petabyte_is_efbig_and_the_mount_lives(mounted: Mounted) -> None:
    f = mounted.dir / "f"
    f.write_bytes(b"abc")
    assert _errno(lambda: os.truncate(f, 2**50)) == errno.EFBIG
    fd = os.open(f, os.O_RDWR)
    try:
        assert _errno(lambda: os.pwrite(fd, b"x", 10**15)) == errno.EFBIG
        assert _errno(lambda: os.ftruncate(fd, 2**50)) == errno.EFBIG
    finally:
        os.close(fd)
    assert f.read_bytes() == b"abc"
    _alive(mounted)


def test_holes_and_many_open_files_stay_within_the_budget(mounted: Mounted) -> None:
    start = _peak_rss(mounted)
    hole = mounted.dir / "hole"
    hole.write_bytes(b"start")
    os.truncate(hole, 256 * MiB)
    with open(hole, "r+b") as f:
        f.seek(300 * MiB)
        f.write(b"end")
    block = os.urandom(MiB)
    fds = [os.open(mounted.dir / f"open{i}", os.O_CREAT | os.O_WRONLY, 0o644) for i in range(6)]
    try:
        for step in range(24):  # 6 files of 24 MiB, written side by side: 144 MiB
            for fd in fds:
                os.pwrite(fd, block, step * MiB)
    finally:
        for fd in fds:
            os.close(fd)
    grew = _peak_rss(mounted) - start
    assert grew < GROWTH, f"the daemon grew by {grew // MiB} MiB"
    with open(hole, "rb") as f:
        assert f.read(5) == b"start" and f.read(MiB) == bytes(MiB)
        f.seek(300 * MiB)
        assert f.read() == b"end"
    with open(mounted.dir / "open5", "rb") as f:
        f.seek(23 * MiB)
        assert f.read() == block
    _alive(mounted)


def test_an_unlinked_open_file_commits_to_its_own_inode(mounted: Mounted) -> None:
    """Written past the budget after its unlink, the file's bytes go to its inode, not to the
    version that named it (history copied that content down first), and the inode is freed
    at the last close."""
    f = mounted.dir / "gone"
    f.write_bytes(b"version one")
    start = _peak_rss(mounted)
    block = os.urandom(MiB)
    fd = os.open(f, os.O_RDWR)
    try:
        os.unlink(f)
        for step in range(128):
            os.pwrite(fd, block, step * MiB)
        assert os.pread(fd, MiB, 127 * MiB) == block
        assert os.fstat(fd).st_size == 128 * MiB
        with agentfs.open(mounted.db, readonly=True) as ws:
            first = ws.history("/gone")[0]
            assert ws.read_version("/gone", first.n) == b"version one"
    finally:
        os.close(fd)
    grew = _peak_rss(mounted) - start
    assert grew < GROWTH, f"the daemon grew by {grew // MiB} MiB"
    _alive(mounted)


def test_the_quota_is_the_mounts_size_and_enospc(mounted: Mounted) -> None:
    """As on a full disk, a write that does not fit leaves what fitted, and removing it makes
    room again (with no history kept: versions count towards the quota)."""
    with agentfs.open(mounted.db) as ws:
        ws.configure_history(keep="none")
        ws.set_limits(workspace_size=ws.database_bytes() + 8 * MiB)
    fs = os.statvfs(mounted.dir)
    assert fs.f_blocks * fs.f_frsize <= 9 * MiB
    assert 0 < fs.f_bavail * fs.f_frsize <= 8 * MiB
    assert _errno(lambda: (mounted.dir / "big").write_bytes(b"b" * (12 * MiB))) == errno.ENOSPC
    assert 0 < (mounted.dir / "big").stat().st_size <= 8 * MiB
    (mounted.dir / "big").unlink()
    (mounted.dir / "small").write_bytes(b"fits")
    assert (mounted.dir / "small").read_bytes() == b"fits"
    _alive(mounted)


def test_a_write_across_the_largest_size_writes_what_fits(mounted: Mounted) -> None:
    """The kernel sends a 1 MiB ``pwrite`` as several requests: the request crossing the
    limit writes what fits, so the call's count ends at the limit, as on a local filesystem
    (not at the page boundary before it), and the next write is EFBIG."""
    with agentfs.open(mounted.db) as ws:
        ws.set_limits(file_size=8 * MiB)
    f = mounted.dir / "edge"
    f.write_bytes(b"")
    block = os.urandom(MiB)
    start = 7 * MiB + 1
    fd = os.open(f, os.O_WRONLY)
    try:
        assert os.pwrite(fd, block, start) == MiB - 1
        assert _errno(lambda: os.pwrite(fd, b"x", 8 * MiB)) == errno.EFBIG
        assert os.fstat(fd).st_size == 8 * MiB
    finally:
        os.close(fd)
    with open(f, "rb") as r:
        r.seek(start)
        assert r.read() == block[: MiB - 1]
    _alive(mounted)
