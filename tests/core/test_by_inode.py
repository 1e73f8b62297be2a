"""Changes addressed by inode (``ByInode``, what the mount's requests go through): a name is
never made below a directory that left the tree, whose number a kernel (or any caller) may
still hold, nor below something that is not a directory."""

from __future__ import annotations

import stat
from collections.abc import Callable

import pytest

import agentfs
from agentfs.core.by_inode import ByInode

Make = Callable[[ByInode, int], object]

MAKES: dict[str, Make] = {
    "mkdir": lambda by, d: by.mkdir(d, "x", 0o755),
    "create": lambda by, d: by.create(d, "x", 0o644),
    "mknod": lambda by, d: by.mknod(d, "x", stat.S_IFIFO | 0o644),
    "symlink": lambda by, d: by.symlink(d, "x", "target"),
    "link": lambda by, d: by.link(by.fs.stat("/kept").st_ino, d, "x"),
    "rename": lambda by, d: by.rename(by.fs.stat("/").st_ino, "kept", d, "x"),
}


@pytest.mark.parametrize("make", MAKES.values(), ids=MAKES.keys())
def test_no_name_below_a_removed_directory(ws: agentfs.Workspace, make: Make) -> None:
    ws.write("/kept", b"k")
    gone = ws.mkdir("/gone").st_ino
    ws.remove("/gone")
    before = sorted(ws.listdir("/"))
    with pytest.raises(FileNotFoundError):
        make(ws.by_inode, gone)
    assert sorted(ws.listdir("/")) == before
    assert ws.conn.execute("SELECT count(*) FROM fs_dentry WHERE parent_ino = ?", (gone,)).get == 0


@pytest.mark.parametrize("make", MAKES.values(), ids=MAKES.keys())
def test_no_name_below_a_file(ws: agentfs.Workspace, make: Make) -> None:
    ws.write("/kept", b"k")
    file = ws.write("/file", b"f").st_ino
    with pytest.raises(NotADirectoryError):
        make(ws.by_inode, file)
    assert ws.read("/kept") == b"k"


def test_only_a_regular_file_is_truncated_by_number(ws: agentfs.Workspace) -> None:
    by = ws.by_inode
    with pytest.raises(IsADirectoryError):
        by.truncate(ws.mkdir("/d").st_ino, 0)
    with pytest.raises(OSError, match="not a regular file"):
        by.truncate(ws.mknod("/fifo", stat.S_IFIFO | 0o644).st_ino, 0)
    by.truncate(ws.write("/f", b"four").st_ino, 2)
    assert ws.read("/f") == b"fo"
