"""Workspace files are private: the file, its ``-wal`` and ``-shm``, the read-only mount's
``-readers`` lock file, a fork and a spec export are made readable by their owner only
(0600), whatever the umask; an existing file keeps the mode its owner gave it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import agentfs
from agentfs.core.readers import ReaderHold, side_file

PROGRAM = Path(__file__).with_name("private_files.py")
EVERY_FILE = {
    f"{name}.db{side}" for name in ("ws", "fork", "spec") for side in ("", "-wal", "-shm")
} | {"ws.db-readers"}


def made_under(directory: Path, umask: int) -> dict[str, list[int]]:
    """Each file ``private_files.py`` made in ``directory`` under ``umask``: [mode, uid]."""
    done = subprocess.run(
        [sys.executable, str(PROGRAM), str(directory), f"{umask:o}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    modes: dict[str, list[int]] = json.loads(done.stdout)
    return modes


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_every_file_is_made_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    modes = made_under(tmp_path, umask)
    assert set(modes) == EVERY_FILE  # a new side file must be named here, and be private
    assert {name: mode for name, (mode, _uid) in modes.items()} == dict.fromkeys(
        EVERY_FILE, 0o600 & ~umask
    )


def test_an_existing_workspace_keeps_its_mode_until_its_owner_changes_it(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    agentfs.open(path).close()
    path.chmod(0o644)  # as an earlier release made it
    with agentfs.open(path) as ws:
        ws.write("/a.txt", "a")
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        assert stat.S_IMODE(Path(f"{path}-wal").stat().st_mode) == 0o644  # SQLite's rule
    path.chmod(0o600)  # what docs/security.md tells its owner to do
    with agentfs.open(path) as ws:
        ws.write("/a.txt", "b")
        for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            assert stat.S_IMODE(name.stat().st_mode) == 0o600, name


def test_the_readers_file_follows_the_workspace_files_mode(tmp_path: Path) -> None:
    """Like SQLite's ``-wal`` and ``-shm``: whoever may open the workspace may open its lock
    file, and no one else."""
    path = tmp_path / "ws.db"
    agentfs.open(path).close()
    path.chmod(0o640)
    hold = ReaderHold(str(path))
    hold.release()
    assert stat.S_IMODE(os.stat(side_file(str(path))).st_mode) == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_roots_readers_file_of_a_users_workspace_belongs_to_that_user(tmp_path: Path) -> None:
    """Root's read-only mount of a user's private workspace makes the lock file; the user's
    own writer must still open it to see the mount holds it."""
    path = tmp_path / "ws.db"
    agentfs.open(path).close()
    os.chown(path, 2345, 2345)
    hold = ReaderHold(str(path))
    try:
        st = os.stat(side_file(str(path)))
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (2345, 2345, 0o600)
    finally:
        hold.release()
