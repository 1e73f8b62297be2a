"""Open files that lose their name, on a real mount: another process's purge spares them while
the mount runs (``ws_pin``; ``ws_keeper`` for a file the other process unlinked), frees them
once the mount is killed, and fchmod, fchown and
futimens still work on them, as on tmpfs. Also a rename with RENAME_EXCHANGE under an open
descriptor."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import agentfs
from agentfs import fsck
from tests.mount.conftest import Mounted, start_mount
from tests.mount.test_mount_files import _eventually
from tests.syscalls import RENAME_EXCHANGE, renameat2

CONTENT = bytes(range(256)) * 1000  # several chunks


def _rows(m: Mounted, sql: str, *args: object) -> list[tuple]:
    with agentfs.open(m.db, readonly=True) as ws:
        return ws.conn.execute(sql, args).fetchall()


def _inode_exists(m: Mounted, ino: int) -> bool:
    return bool(_rows(m, "SELECT 1 FROM fs_inode WHERE ino = ?", ino))


def _api_file(m: Mounted, name: str) -> int:
    """A file the API wrote (so the kernel caches none of its pages: reads reach the mount),
    with no history (else its version holds it, and an unlink queues nothing); its inode."""
    with agentfs.open(m.db) as ws:
        ws.configure_history(keep="none")
        return ws.write(f"/{name}", CONTENT).st_ino


def _open_then_unlink(m: Mounted) -> tuple[int, int]:
    """An API-written file opened through the mount by this process, then unlinked through
    the mount; returns the descriptor and the inode once the unlink is committed with its
    pin."""
    ino = _api_file(m, "doomed")
    fd = os.open(m.dir / "doomed", os.O_RDWR)
    try:
        os.unlink(m.dir / "doomed")
        assert _eventually(lambda: bool(_rows(m, "SELECT 1 FROM ws_pin WHERE ino = ?", ino)))
    except BaseException:
        os.close(fd)
        raise
    return fd, ino


def test_another_process_purging_spares_an_open_unlinked_file(mounted: Mounted) -> None:
    fd, ino = _open_then_unlink(mounted)
    try:
        with agentfs.open(mounted.db) as ws:  # an open purges, and so does this
            ws.orphans.purge()
            assert ws.conn.execute("SELECT 1 FROM ws_orphan WHERE ino = ?", (ino,)).get
            assert fsck.check(ws).clean  # a pinned orphan is no problem
        assert os.pread(fd, 300, 1000) == CONTENT[1000:1300]
        assert os.pwrite(fd, b"written after", 0) == 13
        assert os.pread(fd, 13, 0) == b"written after"
        assert os.fstat(fd).st_size == len(CONTENT) and os.fstat(fd).st_nlink == 0
    finally:
        os.close(fd)
    # the last release unpins and frees it
    assert _eventually(lambda: not _inode_exists(mounted, ino))
    assert _rows(mounted, "SELECT * FROM ws_pin") == []
    mounted.unmount()
    assert _rows(mounted, "SELECT * FROM ws_keeper") == []  # unmounting gives the queue back


def test_a_file_another_process_unlinks_reads_on_in_the_mount(mounted: Mounted) -> None:
    """The mount never wrote a pin for a file it only reads, and the unlink is another
    process's, yet that process's purge leaves the file to the mount (the queue's keeper),
    so bytes the mount had not read yet still read back whole."""
    ino = _api_file(mounted, "shared")
    fd = os.open(mounted.dir / "shared", os.O_RDONLY)
    try:
        assert os.pread(fd, 100, 0) == CONTENT[:100]
        with agentfs.open(mounted.db) as ws:
            ws.remove("/shared")
            assert ws.orphans.purge() == 0  # the mount keeps the queue
            assert ws.conn.execute("SELECT count(*) FROM ws_keeper").get == 1
            assert fsck.check(ws).clean
        assert os.pread(fd, 5000, 200_000) == CONTENT[200_000:205_000]
        assert os.fstat(fd).st_nlink == 0
    finally:
        os.close(fd)
    # the mount frees it once closed: it noticed the other commit and purges when idle
    assert _eventually(lambda: not _inode_exists(mounted, ino))


def test_a_read_only_mount_keeps_what_another_process_unlinks(tmp_path: Path) -> None:
    """A read-only mount can write no keeper row; its lock (agentfs.core.readers) stops every
    other purge, so a file it has open reads on whole after another process removes it; once
    it unmounts, or is killed, the next purge frees the file."""
    db = tmp_path / "ws.db"
    agentfs.open(db).close()
    for ending in ("unmount", "kill"):
        with agentfs.open(db) as ws:  # no history: nothing but the open file holds it
            ws.configure_history(keep="none")
            ino = ws.write("/shared", CONTENT).st_ino
        m = start_mount(db, tmp_path / "mnt", "--read-only")
        try:
            fd = os.open(m.dir / "shared", os.O_RDONLY)
            try:
                assert os.pread(fd, 100, 0) == CONTENT[:100]
                with agentfs.open(db) as ws:
                    ws.remove("/shared")
                    assert ws.orphans.purge() == 0  # the read-only mount holds the queue
                    assert fsck.check(ws).clean
                assert os.pread(fd, 5000, 200_000) == CONTENT[200_000:205_000]
            finally:
                os.close(fd)
        finally:
            if ending == "unmount":
                m.unmount()
            else:
                m.kill()
        with agentfs.open(db) as ws:  # an open purges: nobody holds the queue now
            assert not ws.conn.execute("SELECT 1 FROM fs_inode WHERE ino = ?", (ino,)).get
            assert fsck.check(ws).clean


def test_a_killed_mounts_pins_are_cleared_by_the_next_open(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    agentfs.open(db).close()
    m = start_mount(db, tmp_path / "mnt")
    fd, ino = _open_then_unlink(m)
    m.kill()
    with contextlib.suppress(OSError):  # the mount is gone: the kernel may report it
        os.close(fd)
    assert _inode_exists(m, ino)  # the dead holder's pin is still there ...
    with agentfs.open(db) as ws:  # ... until the next open's purge sees it is dead
        assert ws.conn.execute("SELECT count(*) FROM ws_pin").get == 0
        assert ws.conn.execute("SELECT count(*) FROM ws_keeper").get == 0  # so was it
        assert ws.conn.execute("SELECT 1 FROM fs_inode WHERE ino = ?", (ino,)).get is None
        assert fsck.check(ws).clean


#: Who the unlinked file is given to: another owner for root; a normal user can only give a
#: file to itself.
OTHER_OWNER = (1234, 5678) if os.geteuid() == 0 else (os.getuid(), os.getgid())


def _unlinked_metadata(root: Path) -> tuple:
    """Open a file under ``root``, unlink it, change its mode, owner and times through the
    descriptor, and return what fstat says of it (times as set, ctime left out)."""
    path = root / "meta"
    path.write_bytes(b"some bytes")
    fd = os.open(path, os.O_RDWR)
    try:
        os.unlink(path)
        os.ftruncate(fd, 4)
        os.fchmod(fd, 0o640)
        os.fchown(fd, *OTHER_OWNER)
        os.utime(fd, ns=(1_000_000_123, 2_000_000_456))
        s = os.fstat(fd)
        return (
            stat.filemode(s.st_mode),
            s.st_nlink,
            s.st_uid,
            s.st_gid,
            s.st_size,
            s.st_atime_ns,
            s.st_mtime_ns,
            os.pread(fd, 100, 0),
        )
    finally:
        os.close(fd)


def test_fchmod_fchown_and_futimens_on_an_unlinked_file_as_on_tmpfs(
    mounted: Mounted, tmp_path: Path
) -> None:
    reference = Path("/dev/shm") / f"agentfs-unlinked-{os.getpid()}"
    reference.mkdir()
    try:
        expected = _unlinked_metadata(reference)
    finally:
        os.rmdir(reference)
    assert _unlinked_metadata(mounted.dir) == expected
    assert expected[:5] == ("-rw-r-----", 0, *OTHER_OWNER, 4)


def test_an_open_descriptor_follows_its_file_through_an_exchange(mounted: Mounted) -> None:
    d = mounted.dir
    (d / "x").mkdir()
    (d / "x" / "file").write_bytes(b"the file")
    (d / "dir").mkdir()
    (d / "dir" / "inside").write_bytes(b"inside")
    ino = os.stat(d / "x" / "file").st_ino
    fd = os.open(d / "x" / "file", os.O_WRONLY | os.O_APPEND)
    try:
        renameat2(str(d / "x" / "file"), str(d / "dir"), RENAME_EXCHANGE)
        os.write(fd, b" grew")
    finally:
        os.close(fd)
    assert os.stat(d / "dir").st_ino == ino
    assert (d / "dir").read_bytes() == b"the file grew"
    assert (d / "x" / "file" / "inside").read_bytes() == b"inside"
    with agentfs.open(mounted.db, readonly=True) as ws:
        assert ws.read("/dir") == b"the file grew" and ws.read("/x/file/inside") == b"inside"


def test_a_write_moves_mtime_before_the_close_unlinked_or_not(mounted: Mounted) -> None:
    """Bytes are committed at close, but ``fstat`` after a ``write(2)`` shows the new size and
    a new mtime and ctime at once, as on a disk; also once the file has lost its name (its
    bytes then never reach the workspace, so nothing else would move its times)."""
    path = mounted.dir / "log"
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, b"a")
        os.utime(fd, ns=(10**9, 10**9))  # settles the file: its mtime is the one set
        assert os.fstat(fd).st_mtime_ns == 10**9
        os.write(fd, b"one")
        first = os.fstat(fd)
        assert (first.st_size, first.st_mtime_ns > 10**9) == (4, True)
        assert first.st_ctime_ns == first.st_mtime_ns
        os.unlink(path)
        os.write(fd, b"two")
        second = os.fstat(fd)
        assert second.st_size == 7
        assert second.st_mtime_ns > first.st_mtime_ns
    finally:
        os.close(fd)
