"""The mount through plain system calls: what a program sees, and what the workspace got."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck
from agentfs.core.paths import TREE_PATH_MAX
from tests.mount.conftest import Mounted, start_mount


def _api(m: Mounted) -> agentfs.Workspace:
    return agentfs.open(m.db, readonly=True)


def test_write_read_and_the_api_sees_it(mounted: Mounted) -> None:
    d = mounted.dir
    (d / "src").mkdir()
    (d / "src" / "a.txt").write_text("hello\n")
    with open(d / "src" / "a.txt", "a") as f:
        f.write("world\n")
    assert (d / "src" / "a.txt").read_text() == "hello\nworld\n"
    with _api(mounted) as ws:
        assert ws.read("/src/a.txt") == b"hello\nworld\n"  # committed before close returned
    # one version per open-write-close: the create, then the append (each recorded when the
    # kernel releases the file, which it does just after close returns)
    assert _eventually(lambda: _write_sizes(mounted, "/src/a.txt") == [6, 12])


def _write_sizes(m: Mounted, path: str) -> list[int | None]:
    with _api(m) as ws:
        return [v.size for v in ws.history(path) if v.op == "write"]


def _eventually(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_api_writes_appear_in_the_mount(mounted: Mounted) -> None:
    with agentfs.open(mounted.db) as ws:
        ws.write("/from-api.txt", "made by the API")
    assert (mounted.dir / "from-api.txt").read_text() == "made by the API"


def test_api_writes_appear_at_once_while_the_mount_is_busy_reading(mounted: Mounted) -> None:
    """The mount's requests share a read snapshot while nobody commits; a commit by another
    process must end it before the next request, or a file the API just wrote would be
    missing from the mount (and its absence cached by the kernel)."""
    (mounted.dir / "busy.txt").write_text("read over and over")
    stop = threading.Event()

    def keep_reading() -> None:  # another program keeps the mount's read group alive
        while not stop.is_set():
            (mounted.dir / "busy.txt").read_bytes()
            os.stat(mounted.dir / "busy.txt")

    reader = threading.Thread(target=keep_reading)
    reader.start()
    try:
        with agentfs.open(mounted.db) as ws:
            for i in range(40):
                ws.write(f"/new-{i}.txt", f"version {i}")
                assert (mounted.dir / f"new-{i}.txt").read_text() == f"version {i}"
    finally:
        stop.set()
        reader.join()


def test_offsets_sparse_truncate_and_o_trunc(mounted: Mounted) -> None:
    p = mounted.dir / "f.bin"
    fd = os.open(p, os.O_CREAT | os.O_RDWR, 0o640)
    try:
        assert os.pwrite(fd, b"tail", 100_000) == 4  # a hole before it reads as zeros
        assert os.pread(fd, 10, 99_998) == b"\0\0tail"
        os.ftruncate(fd, 100_001)
        assert os.fstat(fd).st_size == 100_001
        assert os.pread(fd, 100, 99_990) == b"\0" * 10 + b"t"
    finally:
        os.close(fd)
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    with open(p, "wb") as f:  # O_TRUNC arrives with open, not as a setattr
        f.write(b"new")
    assert p.read_bytes() == b"new"


def test_o_append_writes_at_the_end(mounted: Mounted) -> None:
    p = mounted.dir / "log"
    p.write_bytes(b"12345")
    fd = os.open(p, os.O_WRONLY | os.O_APPEND)
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, b"67")
    finally:
        os.close(fd)
    assert p.read_bytes() == b"1234567"


def test_rename_link_symlink_and_metadata(mounted: Mounted) -> None:
    d = mounted.dir
    (d / "a").write_text("A")
    (d / "b").write_text("B")
    os.rename(d / "a", d / "b")  # over an existing file
    assert (d / "b").read_text() == "A" and not (d / "a").exists()
    os.link(d / "b", d / "c")
    assert os.stat(d / "b").st_ino == os.stat(d / "c").st_ino
    assert os.stat(d / "b").st_nlink == 2
    os.symlink("b", d / "s")
    assert os.readlink(d / "s") == "b" and (d / "s").read_text() == "A"
    os.chmod(d / "b", 0o600)
    assert stat.S_IMODE(os.stat(d / "c").st_mode) == 0o600
    os.utime(d / "b", ns=(1_000_000_001, 2_000_000_002))
    st = os.stat(d / "b")
    assert (st.st_atime_ns, st.st_mtime_ns) == (1_000_000_001, 2_000_000_002)
    if os.geteuid() == 0:
        os.chown(d / "b", 1234, 5678)
        assert (os.stat(d / "b").st_uid, os.stat(d / "b").st_gid) == (1234, 5678)
    else:  # as on any filesystem, only root gives a file away
        with pytest.raises(PermissionError):
            os.chown(d / "b", 1234, 5678)
        os.chown(d / "b", os.getuid(), os.getgid())
        assert (os.stat(d / "b").st_uid, os.stat(d / "b").st_gid) == (os.getuid(), os.getgid())
    (d / "sub" / "deep").mkdir(parents=True)
    os.rename(d / "sub", d / "moved")
    assert (d / "moved" / "deep").is_dir()
    with pytest.raises(OSError) as exc:
        os.rmdir(d / "moved")
    assert exc.value.errno == errno.ENOTEMPTY
    with pytest.raises(OSError) as exc:
        os.rename(d / "moved", d / "moved" / "deep" / "x")
    assert exc.value.errno == errno.EINVAL


def test_bad_names_are_refused_and_change_nothing(mounted: Mounted) -> None:
    d = mounted.dir
    with pytest.raises(OSError) as exc:
        (d / ("x" * 256)).write_text("too long")
    assert exc.value.errno == errno.ENAMETOOLONG
    bad = os.fsencode(str(d)) + b"/bad-\xff"
    with pytest.raises(OSError) as exc:
        os.open(bad, os.O_CREAT | os.O_WRONLY)
    assert exc.value.errno == errno.EINVAL
    assert os.listdir(d) == []


def test_unlinked_while_open_stays_readable(mounted: Mounted) -> None:
    p = mounted.dir / "doomed"
    p.write_bytes(b"still here" * 1000)
    fd = os.open(p, os.O_RDWR)
    try:
        os.unlink(p)
        assert not p.exists()
        assert os.pread(fd, 10, 0) == b"still here"
        os.pwrite(fd, b"STILL", 0)
        assert os.pread(fd, 10, 0) == b"STILL here"
    finally:
        os.close(fd)
    with _api(mounted) as ws:
        assert not ws.exists("/doomed")


def test_readdir_keeps_its_place_while_entries_go(mounted: Mounted) -> None:
    d = mounted.dir / "many"
    d.mkdir()
    for i in range(600):
        (d / f"f{i:04d}").write_bytes(b"")
    seen = []
    with os.scandir(d) as it:
        for n, entry in enumerate(it):
            seen.append(entry.name)
            if n == 10:
                for i in range(300, 600):  # remove later entries mid-listing
                    os.unlink(d / f"f{i:04d}")
    assert len(seen) == len(set(seen))  # nothing twice
    assert {f"f{i:04d}" for i in range(300)} <= set(seen)  # nothing that stayed was skipped


def test_read_only_mount_refuses_changes(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/keep.txt", "kept")
    m = start_mount(db, tmp_path / "ro", "--read-only")
    try:
        assert (m.dir / "keep.txt").read_text() == "kept"
        for attempt in (
            lambda: (m.dir / "new").write_text("x"),
            lambda: (m.dir / "keep.txt").write_text("x"),
            lambda: os.unlink(m.dir / "keep.txt"),
            lambda: os.mkdir(m.dir / "d"),
        ):
            with pytest.raises(OSError) as exc:
                attempt()
            assert exc.value.errno == errno.EROFS
    finally:
        m.unmount()
    with agentfs.open(db) as ws:
        assert ws.listdir("/") == ["keep.txt"] and ws.read("/keep.txt") == b"kept"


def test_root_option_mounts_a_subtree(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/outside.txt", "no")
        ws.write("/proj/inside.txt", "yes", parents=True)
    m = start_mount(db, tmp_path / "sub", "--root", "/proj")
    try:
        assert sorted(os.listdir(m.dir)) == ["inside.txt"]
        (m.dir / "made.txt").write_text("here")
        assert os.stat(m.dir).st_ino == 1
    finally:
        m.unmount()
    with agentfs.open(db) as ws:
        assert ws.read("/proj/made.txt") == b"here"


def test_concurrent_api_and_mount_writers(mounted: Mounted) -> None:
    """A process writes in the mount while this one writes through the API."""
    errors: list[BaseException] = []

    def api_writer() -> None:
        try:
            with agentfs.open(mounted.db) as ws:
                for i in range(200):
                    ws.write(f"/api/{i}", f"api {i}", parents=True)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=api_writer)
    thread.start()
    script = (
        "import sys\nfor i in range(200):\n open(f'{sys.argv[1]}/m{i}', 'w').write(f'mount {i}')"
    )
    subprocess.run(["python3", "-c", script, str(mounted.dir)], check=True, timeout=120)
    thread.join()
    assert not errors
    with _api(mounted) as ws:
        assert len(ws.listdir("/api")) == 200
        assert all(ws.read(f"/m{i}") == f"mount {i}".encode() for i in range(200))
    assert len(os.listdir(mounted.dir / "api")) == 200


def test_killed_mount_leaves_a_consistent_workspace(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    agentfs.open(db).close()
    m = start_mount(db, tmp_path / "mnt")
    (m.dir / "synced").write_bytes(b"s" * 10_000)
    fd = os.open(m.dir / "synced", os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    writer = subprocess.Popen(
        [
            "python3",
            "-c",
            "import sys\nfor i in range(100000):\n"
            " open(f'{sys.argv[1]}/w{i % 50}', 'wb').write(bytes([i % 256]) * 5000)",
            str(m.dir),
        ],
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)
    m.kill()
    writer.kill()
    writer.wait()
    with agentfs.open(db) as ws:
        assert fsck.check(ws).clean
        assert ws.read("/synced") == b"s" * 10_000
        for name in ws.listdir("/"):
            data = ws.read(f"/{name}")
            assert len(set(data)) <= 1  # old or new content, never a mix
    again = start_mount(db, tmp_path / "mnt")
    try:
        assert (again.dir / "synced").read_bytes() == b"s" * 10_000
    finally:
        again.unmount()


def test_a_tree_deeper_than_any_path_the_api_takes(mounted: Mounted) -> None:
    """Through the mount a tree goes as deep as on tmpfs: directories made one name at a time
    (``mkdirat``, ``openat``) past the longest path the API takes (``TREE_PATH_MAX``), and at
    the bottom a file written, renamed, linked, truncated, read back; then the top renamed,
    with every path below it; history keeps the file's versions under its deep path."""
    step = "d" * 200
    fd = os.open(mounted.dir, os.O_RDONLY)
    depth = 0
    try:
        while depth <= TREE_PATH_MAX:
            os.mkdir(step, dir_fd=fd)
            inner = os.open(step, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd, depth = inner, depth + len(step) + 1
        f = os.open("f", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
        os.write(f, b"deep down")
        os.close(f)
        os.rename("f", "g", src_dir_fd=fd, dst_dir_fd=fd)
        os.link("g", "h", src_dir_fd=fd, dst_dir_fd=fd)
        f = os.open("h", os.O_RDWR, dir_fd=fd)
        os.ftruncate(f, 4)
        os.close(f)
        os.rename(mounted.dir / step, mounted.dir / "top")
        f = os.open("g", os.O_RDONLY, dir_fd=fd)
        assert os.read(f, 100) == b"deep"
        os.close(f)
        assert sorted(os.listdir(fd)) == ["g", "h"]
    finally:
        os.close(fd)
    with _api(mounted) as ws:
        longest, kinds = ws.conn.execute(
            "SELECT max(length(path)), group_concat(DISTINCT op) FROM ws_version"
        ).get
    assert longest > TREE_PATH_MAX
    assert set(kinds.split(",")) >= {"write", "move", "rename", "link"}
    shutil.rmtree(mounted.dir / "top")
    assert os.listdir(mounted.dir) == []
