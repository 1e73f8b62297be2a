"""Sizes an attacker asks for: a file past the largest size is EFBIG, a workspace past its
quota ENOSPC, a full disk ENOSPC, each before or instead of any change; and a hole of any
allowed size is written one chunk at a time, never held whole in memory."""

from __future__ import annotations

import errno
import os
import subprocess
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck
from agentfs.core import limits

MiB = 1 << 20


def _refused(code: int, call: Callable[[], object]) -> None:
    with pytest.raises(OSError) as caught:
        call()
    assert caught.value.errno == code, caught.value


def _state(ws: agentfs.Workspace) -> tuple[object, ...]:
    """What a refused call must leave as it was."""
    return (
        ws.read("/f"),
        ws.stat("/f").st_mtime_ns,
        [v.n for v in ws.history("/f")],
        ws.conn.execute("SELECT count(*) FROM fs_data").get,
    )


def test_a_file_past_the_largest_size_is_efbig_and_nothing_changes(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/f", b"abc")
    before = _state(ws)
    huge = 10**15
    _refused(errno.EFBIG, lambda: ws.pwrite("/f", b"x", huge))
    _refused(errno.EFBIG, lambda: ws.truncate("/f", 2**62))
    with ws.open("/f", "r+b") as f:
        f.seek(huge)
        _refused(errno.EFBIG, lambda: f.write(b"x"))
        _refused(errno.EFBIG, lambda: f.truncate(huge))
    assert _state(ws) == before
    ws.set_limits(file_size=1000)
    _refused(errno.EFBIG, lambda: ws.write("/f", b"y" * 1001))
    _refused(errno.EFBIG, lambda: ws.append("/f", b"y" * 998))
    assert _state(ws) == before
    ws.write("/f", b"y" * 1000)  # at the limit: allowed


def test_the_quota_refuses_growth_and_allows_cleaning_up(ws: agentfs.Workspace) -> None:
    ws.configure_history(keep="none")
    ws.write("/f", b"abc")
    used = ws.database_bytes()
    ws.set_limits(workspace_size=used + 4 * MiB)
    ws.write("/big", b"b" * (2 * MiB))
    before = _state(ws)
    _refused(errno.ENOSPC, lambda: ws.write("/more", b"m" * (3 * MiB)))
    _refused(errno.ENOSPC, lambda: ws.truncate("/f", 3 * MiB))
    with ws.open("/f", "ab") as f:
        _refused(errno.ENOSPC, lambda: f.write(b"m" * (3 * MiB)))
    assert _state(ws) == before and not ws.exists("/more")
    ws.write("/big", b"small")  # shrinking always passes
    ws.remove("/big")
    ws.conn.execute("PRAGMA wal_checkpoint")
    ws.write("/more", b"m" * (3 * MiB))  # the space it freed is used again
    ws.set_limits(workspace_size=None)
    ws.write("/more", b"m" * (6 * MiB))


def test_limits_are_the_workspaces_for_every_process(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    with agentfs.open(path) as ws, agentfs.open(path) as other:
        ws.write("/f", b"")
        other.write("/g", b"")
        ws.set_limits(file_size=10)
        _refused(errno.EFBIG, lambda: other.write("/g", b"x" * 11))
        assert other.limits == limits.Limits(10, None)
        _refused(errno.EINVAL, lambda: ws.set_limits(file_size=-1))
    with agentfs.open(path) as ws:
        assert ws.limits.file_size == 10


def _peak(call: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "make_hole",
    [
        pytest.param(lambda ws, size: ws.truncate("/f", size), id="truncate"),
        pytest.param(lambda ws, size: ws.pwrite("/f", b"end", size), id="pwrite"),
        pytest.param(lambda ws, size: _handle_truncate(ws, size), id="handle-truncate"),
        pytest.param(lambda ws, size: _handle_write(ws, size), id="handle-write"),
    ],
)
def test_a_hole_costs_one_chunk_of_memory(
    ws: agentfs.Workspace, make_hole: Callable[[agentfs.Workspace, int], object]
) -> None:
    ws.configure_history(keep="none")
    ws.write("/f", b"start")
    size = 64 * MiB
    peak = _peak(lambda: make_hole(ws, size))
    assert peak < 4 * MiB, f"{peak / MiB:.1f} MiB held for a {size // MiB} MiB hole"
    assert ws.read("/f", 0, 5) == b"start"
    assert ws.read("/f", size // 2, 4) == bytes(4)
    assert ws.stat("/f").st_size >= size


def _handle_truncate(ws: agentfs.Workspace, size: int) -> None:
    with ws.open("/f", "r+b") as f:
        f.truncate(size)


def _handle_write(ws: agentfs.Workspace, size: int) -> None:
    with ws.open("/f", "r+b") as f:
        f.seek(size)
        f.write(b"end")


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_full_disk_is_enospc_and_loses_nothing(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(disk)], check=True)
    try:
        with agentfs.open(disk / "w.db") as ws:
            ws.write("/kept", b"k" * 1000)
            _refused(errno.ENOSPC, lambda: ws.write("/big", os.urandom(8 * MiB)))
            with ws.open("/big2", "wb") as f:
                f.write(os.urandom(8 * MiB))
                _refused(errno.ENOSPC, f.flush)
                f.truncate(0)
            assert ws.read("/kept") == b"k" * 1000 and not ws.exists("/big")
            ws.write("/after", b"still writable")
        with agentfs.open(disk / "w.db") as ws:
            assert ws.read("/after") == b"still writable"
            assert fsck.check(ws).clean
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)
