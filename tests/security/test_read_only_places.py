"""A workspace a normal user may read but not write (a read-only file, or a read-only
directory where SQLite cannot make its -wal and -shm): reading works, a write is one line,
and the file stays byte-for-byte as it was, with nothing made beside it. Run as uid 2345:
root's writes pass every permission check."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from security_bench import USER_UID, UserSetup, as_user

import agentfs


@pytest.fixture
def place(user_setup: UserSetup) -> Path:
    """A directory of the user's holding a workspace with /a = hello, closed cleanly."""
    directory = user_setup.base / f"ro-{os.urandom(4).hex()}"
    directory.mkdir()
    with agentfs.open(directory / "ws.db") as ws:
        ws.write("/a", b"hello")
    for path in (directory, *directory.iterdir()):
        os.chown(path, USER_UID, USER_UID)
    return directory


def _agentfs(user: UserSetup, *args: object) -> subprocess.CompletedProcess[str]:
    argv = as_user(user, str(user.python), "-m", "agentfs.cli", *map(str, args))
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)


def _refused_in_one_line(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode == 1, done
    assert done.stderr.startswith("agentfs: ") and done.stderr.count("\n") == 1, done.stderr
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr


@pytest.mark.parametrize("closed", ["directory", "file"])
def test_a_place_the_user_cannot_write_is_read_only(
    user_setup: UserSetup, place: Path, closed: str
) -> None:
    db = place / "ws.db"
    (place if closed == "directory" else db).chmod(0o500 if closed == "directory" else 0o400)
    before = db.read_bytes()
    try:
        assert _agentfs(user_setup, "cat", db, "/a").stdout == "hello"
        assert _agentfs(user_setup, "ls", db).stdout.split() == ["a"]
        why = "directory" if closed == "directory" else "is not writable"
        _refused_in_one_line(_agentfs(user_setup, "write", db, "/b", "x"), "read-only here", why)
        assert db.read_bytes() == before
        if closed == "directory":
            assert sorted(p.name for p in place.iterdir()) == ["ws.db"]
    finally:
        place.chmod(0o700)
        db.chmod(0o600)


def test_changes_left_in_a_wal_are_never_read_as_if_absent(
    user_setup: UserSetup, place: Path
) -> None:
    """An immutable open would ignore the -wal: refused with the reason instead."""
    db = place / "ws.db"
    wal = Path(f"{db}-wal")
    wal.write_bytes(b"\0" * 4096)  # stands for a WAL a crash left behind
    os.chown(wal, USER_UID, USER_UID)
    place.chmod(0o500)
    try:
        _refused_in_one_line(_agentfs(user_setup, "cat", db, "/a"), "-wal holds changes")
    finally:
        place.chmod(0o700)
