"""``agentfs mount`` in the background, the listing, ``agentfs umount``, and their errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import agentfs
from agentfs.mount.exec import fuse_available

pytestmark = pytest.mark.skipif(
    fuse_available() is not None, reason=f"no FUSE mount here: {fuse_available()}"
)


def agentfs_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentfs.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_mount_in_background_list_and_umount(tmp_path: Path) -> None:
    db, mnt = tmp_path / "ws.db", tmp_path / "mnt"
    with agentfs.open(db) as ws:
        ws.write("/hello.txt", "hi")
    mnt.mkdir()
    done = agentfs_cli("mount", db, mnt)
    assert done.returncode == 0, done.stderr
    try:
        assert (mnt / "hello.txt").read_text() == "hi"
        listed = agentfs_cli("mount")
        assert f"{db} on {mnt}" in listed.stdout
        again = agentfs_cli("mount", db, mnt)
        assert again.returncode == 1 and "already mounted" in again.stderr
    finally:
        done = agentfs_cli("umount", mnt)
    assert done.returncode == 0, done.stderr
    assert f"on {mnt}" not in agentfs_cli("mount").stdout
    assert list(mnt.iterdir()) == []


def test_mount_errors_are_one_line(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    agentfs.open(db).close()
    for args, fragment in (
        (("mount", tmp_path / "missing.db", tmp_path), "no such workspace"),
        (("mount", db, tmp_path / "nowhere"), "must be a directory"),
        (("umount", tmp_path), "not an agentfs mount"),
        (("mount", db), "both WS and DIR"),
    ):
        done = agentfs_cli(*args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert done.stderr.startswith("agentfs: ") and fragment in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
