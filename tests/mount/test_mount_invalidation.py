"""Changes made outside the mount reach what the kernel cached: the mount runs with a 60 s
cache timeout, so without invalidation every check below would see the old state for a
minute; each must see the new one within a second or two (the notice is asynchronous)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentfs
from tests.mount.conftest import Mounted, fresh_mount

DEADLINE = 3.0


def _files(ws: agentfs.Workspace) -> None:
    ws.write("/a.txt", "first")
    ws.mkdir("/dir")
    ws.write("/dir/b.txt", "bee")


@pytest.fixture
def cached(tmp_path: Path) -> Iterator[Mounted]:
    """A mount whose kernel cache lives 60 s."""
    with fresh_mount(tmp_path, "--cache-timeout", "60", populate=_files) as m:
        yield m


def eventually(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.01)
    return check()


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def test_content_size_and_mode_changed_by_the_api(cached: Mounted) -> None:
    a = cached.dir / "a.txt"
    assert a.read_text() == "first" and a.stat().st_size == 5  # now cached, pages too
    with agentfs.open(cached.db) as ws:
        ws.write("/a.txt", "second, longer")
        ws.chmod("/a.txt", 0o600)
    assert eventually(lambda: a.stat().st_size == 14)
    assert a.read_text() == "second, longer"
    assert eventually(lambda: a.stat().st_mode & 0o777 == 0o600)


def test_same_size_rewrite_with_the_old_mtime_is_not_served_from_stale_pages(
    cached: Mounted,
) -> None:
    """Same size, mtime put back: the kernel's own check (size and mtime) sees no change;
    only the mount's comparison (ctime moved) takes the cached pages back."""
    a = cached.dir / "a.txt"
    assert a.read_text() == "first"  # its pages are now in the kernel's cache
    with agentfs.open(cached.db) as ws:
        old = ws.stat("/a.txt")
        ws.write("/a.txt", "FIRST")
        ws.utime("/a.txt", (old.st_atime_ns, old.st_mtime_ns))
    assert eventually(lambda: a.read_text() == "FIRST")
    assert a.stat().st_mtime_ns == old.st_mtime_ns


def test_names_made_removed_and_renamed_by_the_api(cached: Mounted) -> None:
    new, gone = cached.dir / "dir" / "new.txt", cached.dir / "dir" / "b.txt"
    assert not _exists(new)  # a negative entry, cached for 60 s
    assert gone.read_text() == "bee"
    with agentfs.open(cached.db) as ws:
        ws.write("/dir/new.txt", "hello")
        ws.rename("/dir/b.txt", "/dir/c.txt")
    assert eventually(lambda: _exists(new))
    assert new.read_text() == "hello"
    assert eventually(lambda: not _exists(gone))
    assert (cached.dir / "dir" / "c.txt").read_text() == "bee"
    assert sorted(os.listdir(cached.dir / "dir")) == ["c.txt", "new.txt"]


def test_a_snapshot_restore_reaches_the_mount(cached: Mounted) -> None:
    """A restore rewrites rows without the core's write path; the comparison still sees it."""
    with agentfs.open(cached.db) as ws:
        ws.snapshots.create("before")
    (cached.dir / "a.txt").write_text("changed in the mount")
    (cached.dir / "made.txt").write_text("made in the mount")
    os.unlink(cached.dir / "dir" / "b.txt")
    assert (cached.dir / "a.txt").read_text() == "changed in the mount"
    with agentfs.open(cached.db) as ws:
        ws.snapshots.restore("before")
    assert eventually(lambda: (cached.dir / "a.txt").read_text() == "first")
    assert eventually(lambda: not _exists(cached.dir / "made.txt"))
    assert eventually(lambda: _exists(cached.dir / "dir" / "b.txt"))
    assert (cached.dir / "dir" / "b.txt").read_text() == "bee"


def test_a_directory_replaced_by_the_api(cached: Mounted) -> None:
    assert (cached.dir / "dir" / "b.txt").read_text() == "bee"
    with agentfs.open(cached.db) as ws:
        ws.remove("/dir", recursive=True)
        ws.write("/dir", "now a file")
    assert eventually(lambda: (cached.dir / "dir").is_file())
    assert (cached.dir / "dir").read_text() == "now a file"
    assert not _exists(cached.dir / "dir" / "b.txt")
