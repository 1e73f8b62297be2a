"""Extended attributes in the core: the API's answers and errnos, their life with the inode
(links, renames, deletes, history), fsck, the migration of an older workspace, and a
hypothesis state machine against a tmpfs directory (/dev/shm) doing the same calls."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule

import agentfs
from agentfs import db, fsck
from tests.model import HostMachine, machine_settings, paths
from tests.old_schema import as_schema_8

SHM = Path("/dev/shm")


def _errno_of(call: Callable[[], object]) -> int | None:
    try:
        call()
    except OSError as exc:
        return exc.errno
    return None


@pytest.fixture
def ws(tmp_path: Path) -> agentfs.Workspace:
    with agentfs.open(tmp_path / "ws.db") as workspace:
        workspace.write("/f", b"content")
        yield workspace


def xattr_rows(ws: agentfs.Workspace) -> int:
    return int(ws.conn.execute("SELECT count(*) FROM ws_xattr").get)  # type: ignore[arg-type]


# --- the API ---------------------------------------------------------------------------------


def test_set_get_list_remove(ws: agentfs.Workspace) -> None:
    ws.setxattr("/f", "user.b", b"2")
    ws.setxattr("/f", b"user.a", b"")  # bytes names as os takes them; empty values are values
    ws.setxattr("/f", "trusted.t", b"\x00\xff")
    assert ws.listxattr("/f") == ["trusted.t", "user.a", "user.b"]
    assert ws.getxattr("/f", "user.a") == b""
    assert ws.getxattr("/f", "trusted.t") == b"\x00\xff"
    ws.setxattr("/f", "user.b", b"3")
    assert ws.getxattr("/f", "user.b") == b"3"
    ws.removexattr("/f", "user.b")
    assert ws.listxattr("/f") == ["trusted.t", "user.a"]
    ws.setxattr("/", "user.root", b"r")
    assert ws.listxattr("/") == ["user.root"]


def test_set_and_remove_update_ctime_only(ws: agentfs.Workspace) -> None:
    before = ws.stat("/f")
    ws.setxattr("/f", "user.a", b"1")
    middle = ws.stat("/f")
    ws.removexattr("/f", "user.a")
    after = ws.stat("/f")
    assert before.st_ctime_ns <= middle.st_ctime_ns <= after.st_ctime_ns
    assert before.st_mtime_ns == middle.st_mtime_ns == after.st_mtime_ns
    assert ws.read("/f") == b"content"


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda ws: ws.getxattr("/f", "user.missing"), errno.ENODATA),
        (lambda ws: ws.removexattr("/f", "user.missing"), errno.ENODATA),
        (lambda ws: ws.getxattr("/nope", "user.a"), errno.ENOENT),
        (lambda ws: ws.setxattr("/nope", "user.a", b""), errno.ENOENT),
        (lambda ws: ws.listxattr("/nope"), errno.ENOENT),
        (lambda ws: ws.setxattr("/f", "", b""), errno.ERANGE),
        (lambda ws: ws.getxattr("/f", ""), errno.ERANGE),
        (lambda ws: ws.setxattr("/f", "user." + "a" * 251, b""), errno.ERANGE),
        (lambda ws: ws.removexattr("/f", "user." + "é" * 126), errno.ERANGE),  # 257 bytes
        (lambda ws: ws.setxattr("/nope", "", b""), errno.ERANGE),  # the name before the file
        (lambda ws: ws.setxattr("/f", "user.a\0b", b""), errno.EINVAL),
        (lambda ws: ws.setxattr("/f", b"user.\xff", b""), errno.EINVAL),  # not UTF-8
        (lambda ws: ws.setxattr("/f", "user.big", b"x" * 65537), errno.E2BIG),
        (lambda ws: ws.setxattr("/f", "user.a", b"", 4), errno.EINVAL),
        (lambda ws: ws.setxattr("/f", "user.", b""), errno.EINVAL),
        (lambda ws: ws.setxattr("/f", "foo.a", b""), errno.ENOTSUP),
        (lambda ws: ws.getxattr("/f", "system.posix_acl_access"), errno.ENOTSUP),
        (lambda ws: ws.setxattr("/f", "security.capability", b"\1"), errno.ENOTSUP),
        (lambda ws: ws.getxattr("/f", "security.capability"), errno.ENODATA),
        (lambda ws: ws.setxattr("/f", "user.new", b"", os.XATTR_REPLACE), errno.ENODATA),
    ],
)
def test_bad_calls_fail_and_change_nothing(
    ws: agentfs.Workspace, call: Callable[[agentfs.Workspace], object], code: int
) -> None:
    ws.setxattr("/f", "user.keep", b"1")
    ctime = ws.stat("/f").st_ctime_ns
    with pytest.raises(OSError) as raised:
        call(ws)
    assert raised.value.errno == code, raised.value
    assert ws.listxattr("/f") == ["user.keep"]
    assert ws.stat("/f").st_ctime_ns == ctime


def test_create_and_replace_flags(ws: agentfs.Workspace) -> None:
    ws.setxattr("/f", "user.a", b"1", os.XATTR_CREATE)
    assert _errno_of(lambda: ws.setxattr("/f", "user.a", b"2", os.XATTR_CREATE)) == errno.EEXIST
    ws.setxattr("/f", "user.a", b"3", os.XATTR_REPLACE)
    assert ws.getxattr("/f", "user.a") == b"3"
    both = os.XATTR_CREATE | os.XATTR_REPLACE
    assert _errno_of(lambda: ws.setxattr("/f", "user.a", b"4", both)) == errno.EEXIST
    assert _errno_of(lambda: ws.setxattr("/f", "user.b", b"4", both)) == errno.ENODATA


def test_limits_are_inclusive(ws: agentfs.Workspace) -> None:
    name = "user." + "n" * 250  # 255 bytes
    ws.setxattr("/f", name, b"v" * 65536)
    assert ws.getxattr("/f", name) == b"v" * 65536


def test_names_of_one_inode_fill_at_most_64_kib(ws: agentfs.Workspace) -> None:
    names = [f"user.{i:03d}" + "x" * 247 for i in range(256)]  # 255 bytes + NUL each: 64 KiB
    for name in names:
        ws.setxattr("/f", name, b"")
    assert _errno_of(lambda: ws.setxattr("/f", "user.one-more", b"")) == errno.ENOSPC
    ws.setxattr("/f", names[0], b"replacing a name takes no more room")
    assert len(ws.listxattr("/f")) == 256


def test_symlinks_follow_or_not(ws: agentfs.Workspace) -> None:
    ws.symlink("f", "/l")
    ws.setxattr("/l", "user.a", b"through")
    assert ws.getxattr("/f", "user.a") == b"through"
    # user. attributes are for files and directories: EPERM to set, ENODATA to read
    assert _errno_of(lambda: ws.setxattr("/l", "user.b", b"", follow_symlinks=False)) == errno.EPERM
    assert _errno_of(lambda: ws.getxattr("/l", "user.a", follow_symlinks=False)) == errno.ENODATA
    assert _errno_of(lambda: ws.removexattr("/l", "user.a", follow_symlinks=False)) == errno.EPERM
    ws.setxattr("/l", "trusted.t", b"on the link", follow_symlinks=False)
    assert ws.listxattr("/l", follow_symlinks=False) == ["trusted.t"]
    assert ws.listxattr("/l") == ["user.a"]
    ws.mknod("/p", stat.S_IFIFO | 0o644)
    assert _errno_of(lambda: ws.setxattr("/p", "user.a", b"")) == errno.EPERM


def test_read_only_workspace_reads_but_refuses_changes(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ro.db") as ws:
        ws.write("/f", b"")
        ws.setxattr("/f", "user.a", b"1")
    with agentfs.open(tmp_path / "ro.db", readonly=True) as ro:
        assert ro.getxattr("/f", "user.a") == b"1"
        assert ro.listxattr("/f") == ["user.a"]
        assert _errno_of(lambda: ro.setxattr("/f", "user.b", b"")) == errno.EROFS
        assert _errno_of(lambda: ro.removexattr("/f", "user.a")) == errno.EROFS


def test_a_failed_transaction_rolls_them_back(ws: agentfs.Workspace) -> None:
    with pytest.raises(FileNotFoundError), ws.transaction():
        ws.setxattr("/f", "user.a", b"1")
        ws.read("/nope")
    assert ws.listxattr("/f") == []


# --- life with the inode -------------------------------------------------------------------


def test_links_share_them_and_renames_keep_them(ws: agentfs.Workspace) -> None:
    ws.setxattr("/f", "user.a", b"1")
    ws.link("/f", "/g")
    ws.setxattr("/g", "user.b", b"2")
    assert ws.listxattr("/f") == ["user.a", "user.b"]
    ws.rename("/f", "/h")
    assert ws.getxattr("/h", "user.b") == b"2"
    ws.mkdir("/d")
    ws.setxattr("/d", "user.dir", b"x")
    ws.rename("/d", "/e")
    assert ws.getxattr("/e", "user.dir") == b"x"


def test_copies_do_not_carry_them(ws: agentfs.Workspace) -> None:
    """``copy`` copies bytes and mode, like ``cp`` without ``--preserve``."""
    ws.setxattr("/f", "user.a", b"1")
    ws.copy("/f", "/copy")
    assert ws.listxattr("/copy") == []


def test_freed_inodes_take_them_along(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db") as ws:
        ws.configure_history(keep="none")  # nothing holds a deleted file
        ws.write("/f", b"x")
        ws.setxattr("/f", "user.a", b"1")
        ws.link("/f", "/g")
        ws.remove("/f")
        assert ws.getxattr("/g", "user.a") == b"1"  # one name left: still there
        ws.remove("/g")
        ws.mkdir("/d")
        ws.setxattr("/d", "user.a", b"1")
        ws.remove("/d")  # a directory is freed at once
        ws.mkdir("/t/u", parents=True)
        ws.write("/t/u/f", b"x")
        for path in ("/t", "/t/u", "/t/u/f"):
            ws.setxattr(path, "user.a", b"1")
        ws.remove("/t", recursive=True)
        ws.orphans.purge()
        assert xattr_rows(ws) == 0
        assert fsck.check(ws).clean


def test_copy_down_keeps_them_on_the_live_inode_and_gives_history_a_copy(
    ws: agentfs.Workspace,
) -> None:
    ws.setxattr("/f", "user.a", b"before")
    ino = ws.stat("/f").st_ino
    ws.snapshots.create("s1")
    ws.write("/f", b"changed")  # the snapshot holds the inode: its bytes are copied down
    assert ws.stat("/f").st_ino == ino
    assert ws.getxattr("/f", "user.a") == b"before"
    ws.setxattr("/f", "user.a", b"after")
    ws.snapshots.restore("s1")
    assert ws.read("/f") == b"content"
    assert ws.getxattr("/f", "user.a") == b"before"  # what the content had when frozen
    ws.orphans.purge()
    assert fsck.check(ws).clean


def test_restoring_a_deleted_tree_leaves_no_stray_rows(ws: agentfs.Workspace) -> None:
    ws.mkdir("/d")
    ws.setxattr("/d", "user.a", b"1")
    ws.snapshots.create("empty-d")
    ws.write("/d/new", b"x")
    ws.mkdir("/d/sub")
    ws.setxattr("/d/sub", "user.b", b"2")  # a directory the restore removes at once
    ws.setxattr("/d/new", "user.c", b"3")
    ws.snapshots.restore("empty-d")
    ws.orphans.purge()
    assert ws.listdir("/d") == []
    assert fsck.check(ws).clean
    live = ws.conn.execute(
        "SELECT count(*) FROM ws_xattr WHERE ino NOT IN (SELECT ino FROM fs_inode)"
    )
    assert live.get == 0


def test_restoring_a_version_kept_aside_keeps_the_files_attributes(
    ws: agentfs.Workspace,
) -> None:
    ws.setxattr("/f", "user.a", b"1")
    ws.write("/f", b"second")  # small: the first version's bytes are kept aside
    ws.restore_version("/f", 1)
    assert ws.read("/f") == b"content"
    assert ws.getxattr("/f", "user.a") == b"1"


# --- fsck and the migration -----------------------------------------------------------------


def test_fsck_finds_and_drops_attributes_of_a_missing_inode(ws: agentfs.Workspace) -> None:
    ws.setxattr("/f", "user.a", b"1")
    with ws.conn:
        ws.conn.execute("INSERT INTO ws_xattr(ino, name, value) VALUES (99999, 'user.x', x'00')")
        ws.conn.execute("INSERT INTO ws_xattr(ino, name, value) VALUES (99999, 'user.y', x'')")
    report = fsck.check(ws)
    assert [(p.check, p.repairable) for p in report.problems] == [("check_ws_xattr_inode", True)]
    assert "2 extended attributes belong to missing inode 99999" in report.problems[0].message
    repaired = fsck.repair(ws)
    assert repaired.clean, repaired.problems
    assert repaired.repaired == ["deleted 2 extended attributes of missing inode 99999"]
    assert ws.getxattr("/f", "user.a") == b"1"


def test_an_older_workspace_gets_the_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with agentfs.open(path) as ws:
        ws.write("/f", b"x")
    as_schema_8(path)
    with agentfs.open(path) as ws:
        assert db.schema_version(ws.conn) == db.SCHEMA_VERSION
        assert ws.listxattr("/f") == []
        ws.setxattr("/f", "user.a", b"1")
        assert ws.getxattr("/f", "user.a") == b"1"
        assert fsck.check(ws).clean


# --- against tmpfs ----------------------------------------------------------------------------


def _tmpfs_has_user_xattrs() -> bool:
    try:
        with tempfile.NamedTemporaryFile(dir=SHM) as probe:
            os.setxattr(probe.name, "user.probe", b"1")
    except OSError:
        return False
    return True


PATHS = paths()
ATTRS = st.sampled_from(
    ["user.a", "user.b", "trusted.t", "security.s", "user.", "foo.x", "", "user." + "x" * 251]
)
VALUES = st.sampled_from([b"", b"1", b"\x00\xff", b"v" * 300, b"x" * 65537])
FLAGS = st.sampled_from([0, os.XATTR_CREATE, os.XATTR_REPLACE])


class XattrsVsTmpfs(HostMachine):
    """The same calls on a workspace and on a tmpfs directory (the host side, in /dev/shm):
    same results, same errnos, and after every step the same attributes on every name (lists
    compared sorted: tmpfs keeps insertion order, the workspace code-point order)."""

    tmp_dir = str(SHM)

    @rule(path=PATHS, data=st.binary(max_size=10))
    def write(self, path: str, data: bytes) -> None:
        with contextlib.suppress(OSError):
            if stat.S_ISFIFO(os.stat(self.h(path)).st_mode):
                return  # opening a FIFO to write would wait for a reader

        def host() -> None:
            with open(self.h(path), "wb") as f:
                f.write(data)

        self.both(f"write {path}", lambda: self.ws.write(path, data), host)

    @rule(path=PATHS)
    def mkdir(self, path: str) -> None:
        self.both(f"mkdir {path}", lambda: self.ws.mkdir(path), lambda: os.mkdir(self.h(path)))

    @rule(path=PATHS, to=st.sampled_from(["a", "b", "missing"]))
    def symlink(self, path: str, to: str) -> None:
        self.both(
            f"symlink {path}",
            lambda: self.ws.symlink(to, path),
            lambda: os.symlink(to, self.h(path)),
        )

    @rule(path=PATHS)
    def mkfifo(self, path: str) -> None:
        self.both(
            f"mkfifo {path}",
            lambda: self.ws.mknod(path, stat.S_IFIFO | 0o644),
            lambda: os.mkfifo(self.h(path), 0o644),
        )

    @rule(src=PATHS, dst=PATHS)
    def link(self, src: str, dst: str) -> None:
        self.both(
            f"link {src} {dst}",
            lambda: self.ws.link(src, dst),
            lambda: os.link(self.h(src), self.h(dst), follow_symlinks=False),
        )

    @rule(src=PATHS, dst=PATHS)
    def rename(self, src: str, dst: str) -> None:
        self.both(
            f"rename {src} {dst}",
            lambda: self.ws.rename(src, dst),
            lambda: os.rename(self.h(src), self.h(dst)),
        )

    @rule(path=PATHS)
    def remove(self, path: str) -> None:
        def host() -> None:
            if stat.S_ISDIR(os.lstat(self.h(path)).st_mode):
                shutil.rmtree(self.h(path))
            else:
                os.unlink(self.h(path))

        self.both(f"remove {path}", lambda: self.ws.remove(path, recursive=True), host)

    @rule(path=PATHS, name=ATTRS, value=VALUES, flags=FLAGS, follow=st.booleans())
    def setxattr(self, path: str, name: str, value: bytes, flags: int, follow: bool) -> None:
        self.both(
            f"setxattr {path} {name[:10]} flags={flags} follow={follow}",
            lambda: self.ws.setxattr(path, name, value, flags, follow_symlinks=follow),
            lambda: os.setxattr(self.h(path), name, value, flags, follow_symlinks=follow),
        )

    @rule(path=PATHS, name=ATTRS, follow=st.booleans())
    def getxattr(self, path: str, name: str, follow: bool) -> None:
        got = self.both(
            f"getxattr {path} {name[:10]} follow={follow}",
            lambda: self.ws.getxattr(path, name, follow_symlinks=follow),
            lambda: os.getxattr(self.h(path), name, follow_symlinks=follow),
        )
        assert got[0] == got[1]

    @rule(path=PATHS, name=ATTRS, follow=st.booleans())
    def removexattr(self, path: str, name: str, follow: bool) -> None:
        self.both(
            f"removexattr {path} {name[:10]} follow={follow}",
            lambda: self.ws.removexattr(path, name, follow_symlinks=follow),
            lambda: os.removexattr(self.h(path), name, follow_symlinks=follow),
        )

    @rule(path=PATHS, follow=st.booleans())
    def listxattr(self, path: str, follow: bool) -> None:
        got = self.both(
            f"listxattr {path} follow={follow}",
            lambda: self.ws.listxattr(path, follow_symlinks=follow),
            lambda: os.listxattr(self.h(path), follow_symlinks=follow),
        )
        if got[0] is not None:
            assert got[0] == sorted(got[1])  # type: ignore[arg-type]

    @invariant()
    def every_name_has_the_same_attributes(self) -> None:
        assert self._ws_attrs("/") == self._host_attrs("/")

    def _ws_attrs(self, path: str) -> dict[str, dict[str, bytes]]:
        out = {
            path: {
                n: self.ws.getxattr(path, n, follow_symlinks=False)
                for n in self.ws.listxattr(path, follow_symlinks=False)
            }
        }
        if stat.S_ISDIR(self.ws.lstat(path).st_mode):
            for name in self.ws.listdir(path):
                out.update(self._ws_attrs(path.rstrip("/") + "/" + name))
        return out

    def _host_attrs(self, path: str) -> dict[str, dict[str, bytes]]:
        where = self.h(path)
        names = os.listxattr(where, follow_symlinks=False)
        out = {path: {n: os.getxattr(where, n, follow_symlinks=False) for n in sorted(names)}}
        if stat.S_ISDIR(os.lstat(where).st_mode):
            for name in os.listdir(where):
                out.update(self._host_attrs(path.rstrip("/") + "/" + name))
        return out


TestXattrsMatchTmpfs = pytest.mark.skipif(
    not _tmpfs_has_user_xattrs(), reason="tmpfs here has no user. xattrs"
)(XattrsVsTmpfs.TestCase)
TestXattrsMatchTmpfs.settings = machine_settings(100, 25)
