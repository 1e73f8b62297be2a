"""FIFOs, sockets and device nodes: names with an inode and no content."""

from __future__ import annotations

import errno
import stat

import pytest

import agentfs


@pytest.mark.parametrize(
    ("kind", "rdev"),
    [(stat.S_IFIFO, 0), (stat.S_IFSOCK, 0), (stat.S_IFCHR, 0x0103), (stat.S_IFBLK, 0x0801)],
)
def test_mknod_makes_a_contentless_node(ws: agentfs.Workspace, kind: int, rdev: int) -> None:
    ws.mkdir("/dev")
    st = ws.mknod("/dev/node", kind | 0o640, rdev)
    assert stat.S_IFMT(st.st_mode) == kind and stat.S_IMODE(st.st_mode) == 0o640
    assert (st.st_size, st.st_nlink, st.st_rdev) == (0, 1, rdev)
    assert ws.lstat("/dev/node") == st
    assert ws.listdir("/dev") == ["node"]
    ws.remove("/dev/node")
    assert ws.listdir("/dev") == []


@pytest.mark.parametrize("kind", [stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK, 0])
def test_mknod_refuses_what_has_its_own_call(ws: agentfs.Workspace, kind: int) -> None:
    with pytest.raises(OSError) as exc:
        ws.mknod("/x", kind | 0o644)
    assert exc.value.errno == errno.EINVAL
    assert not ws.exists("/x")


def test_mknod_refuses_an_existing_name_and_bad_paths(ws: agentfs.Workspace) -> None:
    ws.write("/taken", "x")
    with pytest.raises(FileExistsError):
        ws.mknod("/taken", stat.S_IFIFO | 0o600)
    assert ws.read("/taken") == b"x"
    with pytest.raises(FileNotFoundError):
        ws.mknod("/missing/fifo", stat.S_IFIFO | 0o600)
    with pytest.raises(OSError) as exc:
        ws.mknod("/" + "n" * 256, stat.S_IFIFO | 0o600)
    assert exc.value.errno == errno.ENAMETOOLONG


def test_snapshots_keep_and_restore_a_fifo(ws: agentfs.Workspace) -> None:
    ws.mknod("/pipe", stat.S_IFIFO | 0o600)
    ws.snapshots.create("with-pipe")
    ws.remove("/pipe")
    ws.snapshots.restore("with-pipe")
    assert stat.S_ISFIFO(ws.lstat("/pipe").st_mode)


def test_history_records_no_version_of_a_node(ws: agentfs.Workspace) -> None:
    """Versions are of regular files: renaming, linking or deleting a FIFO records none
    (fsck, run after every test, checks that each version names a regular file)."""
    ws.mkdir("/d")
    ws.mknod("/d/pipe", stat.S_IFIFO | 0o600)
    ws.rename("/d/pipe", "/d/moved")
    ws.link("/d/moved", "/d/again")
    ws.rename("/d", "/e")
    ws.remove("/e/again")
    ws.remove("/e", recursive=True)
    assert ws.history("/d/pipe") == [] and ws.history("/e/moved") == []
