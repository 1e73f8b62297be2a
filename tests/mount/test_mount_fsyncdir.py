"""``fsync`` of a directory keeps what it promised: the daemon killed (``kill -9``) at a
moment of the write-fsync-rename-fsync pattern loses no rename whose directory fsync had
returned, as on any local filesystem."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck
from tests.mount.conftest import start_mount

#: What a careful program does for each file (git's objects, an editor's save): the content
#: into a temporary file, fsync, rename into place, fsync the directory; then it says so.
PATTERN = """
import os, sys
top, times = sys.argv[1], int(sys.argv[2])
i = 0
while i != times:
    tmp, final = os.path.join(top, f".tmp{i}"), os.path.join(top, f"file{i}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, f"content {i}\\n".encode() * 100)
    os.fsync(fd)
    os.close(fd)
    os.rename(tmp, final)
    d = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(d)
    os.close(d)
    print(i, flush=True)
    i += 1
sys.stdin.read()  # then nothing more: the mount sees no request that would commit
"""


def _start(mounted_dir: Path, times: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", PATTERN, str(mounted_dir), str(times)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _kept(db: Path, promised: list[int]) -> None:
    """Every file whose rename was promised holds its content; the workspace is sound."""
    with agentfs.open(db) as ws:
        for i in promised:
            assert ws.read(f"/dir/file{i}") == f"content {i}\n".encode() * 100, i
        assert fsck.check(ws).clean


def _workspace(tmp_path: Path) -> Path:
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.mkdir("/dir")
    return db


@pytest.mark.parametrize("attempt", range(3))
def test_a_rename_survives_a_kill_right_after_its_directory_fsync(
    tmp_path: Path, attempt: int
) -> None:
    """The daemon killed as soon as the program heard its directory fsync return, before
    anything else could commit the change (the last rename of a save, then an idle mount)."""
    db = _workspace(tmp_path)
    m = start_mount(db, tmp_path / "mnt")
    writer = _start(m.dir / "dir", 1)
    assert writer.stdout is not None
    assert writer.stdout.readline() == "0\n"
    m.kill()
    writer.kill()
    writer.wait()
    _kept(db, [0])


@pytest.mark.parametrize("after", [0.3, 0.6, 1.0])
def test_renames_survive_a_kill_at_any_point_of_the_pattern(tmp_path: Path, after: float) -> None:
    """The daemon killed at some point of a program repeating the pattern: every rename
    whose directory fsync had returned is there."""
    db = _workspace(tmp_path)
    m = start_mount(db, tmp_path / "mnt")
    writer = _start(m.dir / "dir", -1)
    time.sleep(after)
    m.kill()
    out, _ = writer.communicate(timeout=30)
    promised = [int(line) for line in out.split()]
    assert promised, "the program never got through one file"
    _kept(db, promised)
