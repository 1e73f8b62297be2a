"""Extended attributes through a real mount: the same calls as on tmpfs give the same answers,
a read-only mount refuses changes, ``cp -a`` and ``rsync -X`` carry them in and out, and what
the API sets is what the mount shows (and back)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import agentfs
from tests.mount.conftest import Mounted, start_mount

SHM = Path("/dev/shm")


@pytest.fixture
def shm() -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="agentfs-xattr-", dir=SHM))
    yield where
    shutil.rmtree(where)


def _outcome(call: Callable[[], object]) -> object:
    try:
        return call()
    except OSError as exc:
        return errno.errorcode[exc.errno or 0]


def _calls(root: Path) -> list[tuple[str, Callable[[], object]]]:
    """A script of calls with every answer worth comparing, run in ``root``."""
    f, d, link, fifo = root / "f", root / "d", root / "l", root / "p"
    return [
        ("set user.a", lambda: os.setxattr(f, "user.a", b"1")),
        ("set user.b", lambda: os.setxattr(f, "user.b", b"\x00\xff" * 100)),
        ("set trusted", lambda: os.setxattr(f, "trusted.t", b"t")),
        ("set security", lambda: os.setxattr(f, "security.s", b"s")),
        ("get user.a", lambda: os.getxattr(f, "user.a")),
        ("get user.b", lambda: os.getxattr(f, "user.b")),
        ("get missing", lambda: os.getxattr(f, "user.none")),
        ("list", lambda: sorted(os.listxattr(f))),
        ("create present", lambda: os.setxattr(f, "user.a", b"2", os.XATTR_CREATE)),
        ("create absent", lambda: os.setxattr(f, "user.c", b"3", os.XATTR_CREATE)),
        ("replace absent", lambda: os.setxattr(f, "user.z", b"3", os.XATTR_REPLACE)),
        ("replace present", lambda: os.setxattr(f, "user.c", b"4", os.XATTR_REPLACE)),
        ("get user.c", lambda: os.getxattr(f, "user.c")),
        ("remove", lambda: os.removexattr(f, "user.a")),
        ("remove missing", lambda: os.removexattr(f, "user.a")),
        ("empty value", lambda: os.setxattr(f, "user.e", b"")),
        ("get empty", lambda: os.getxattr(f, "user.e")),
        ("largest value", lambda: os.setxattr(f, "user.big", b"v" * 65536)),
        ("get largest", lambda: len(os.getxattr(f, "user.big"))),
        ("too large", lambda: os.setxattr(f, "user.big", b"v" * 65537)),
        ("empty name", lambda: os.setxattr(f, "", b"")),
        ("long name", lambda: os.setxattr(f, "user." + "n" * 251, b"")),
        ("longest name", lambda: os.setxattr(f, "user." + "n" * 250, b"")),
        ("bare prefix", lambda: os.setxattr(f, "user.", b"")),
        ("unknown prefix", lambda: os.setxattr(f, "foo.bar", b"")),
        ("directory", lambda: os.setxattr(d, "user.dir", b"1")),
        ("get directory", lambda: os.getxattr(d, "user.dir")),
        ("symlink followed", lambda: os.getxattr(link, "user.c")),
        ("symlink user.", lambda: os.setxattr(link, "user.x", b"", follow_symlinks=False)),
        ("symlink get", lambda: os.getxattr(link, "user.c", follow_symlinks=False)),
        ("fifo user.", lambda: os.setxattr(fifo, "user.x", b"")),
        ("missing file", lambda: os.getxattr(root / "nope", "user.a")),
        ("list at end", lambda: sorted(os.listxattr(f))),
        ("list directory", lambda: os.listxattr(d)),
    ]


def _prepare(root: Path) -> None:
    (root / "f").write_bytes(b"content")
    (root / "d").mkdir()
    (root / "l").symlink_to("f")
    os.mkfifo(root / "p")


def test_the_mount_answers_as_tmpfs_does(mounted: Mounted, shm: Path) -> None:
    _prepare(mounted.dir)
    _prepare(shm)
    ours = [(label, _outcome(call)) for label, call in _calls(mounted.dir)]
    theirs = [(label, _outcome(call)) for label, call in _calls(shm)]
    assert ours == theirs


def test_what_the_api_sets_the_mount_shows_and_back(mounted: Mounted) -> None:
    (mounted.dir / "f").write_bytes(b"x")
    os.setxattr(mounted.dir / "f", "user.from_mount", b"m")
    os.setxattr(mounted.dir, "user.on_root", b"r")
    fd = os.open(mounted.dir / "f", os.O_WRONLY)
    os.fsync(fd)  # commits the open group: another process sees the changes from now on
    os.close(fd)
    with agentfs.open(mounted.db) as ws:
        assert ws.getxattr("/f", "user.from_mount") == b"m"
        assert ws.listxattr("/") == ["user.on_root"]
        ws.setxattr("/f", "user.from_api", b"a")
        ws.removexattr("/f", "user.from_mount")
    assert os.listxattr(mounted.dir / "f") == ["user.from_api"]
    assert os.getxattr(mounted.dir / "f", "user.from_api") == b"a"


def test_an_unlinked_open_file_keeps_them(mounted: Mounted) -> None:
    path = mounted.dir / "f"
    path.write_bytes(b"x")
    with open(path, "rb") as f:
        path.unlink()
        os.setxattr(f.fileno(), "user.a", b"1")
        assert os.getxattr(f.fileno(), "user.a") == b"1"
        assert os.listxattr(f.fileno()) == ["user.a"]


def test_getfattr_and_setfattr(mounted: Mounted) -> None:
    if shutil.which("setfattr") is None:
        pytest.skip("setfattr is missing (Debian package attr; make test installs it)")
    path = mounted.dir / "f"
    path.write_bytes(b"x")
    subprocess.run(["setfattr", "-n", "user.mime", "-v", "text/plain", str(path)], check=True)
    shown = subprocess.run(
        ["getfattr", "--absolute-names", "-d", str(path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert 'user.mime="text/plain"' in shown


def test_cp_a_and_rsync_x_carry_them_in_and_out(mounted: Mounted, shm: Path) -> None:
    source = shm / "src"
    source.mkdir()
    (source / "f").write_bytes(b"data")
    os.setxattr(source / "f", "user.tag", b"keep me")
    os.setxattr(source, "user.dir", b"on the directory")
    subprocess.run(["cp", "-a", str(source), str(mounted.dir / "in")], check=True)
    assert os.getxattr(mounted.dir / "in" / "f", "user.tag") == b"keep me"
    assert os.getxattr(mounted.dir / "in", "user.dir") == b"on the directory"
    subprocess.run(["cp", "-a", str(mounted.dir / "in"), str(shm / "out")], check=True)
    assert os.getxattr(shm / "out" / "f", "user.tag") == b"keep me"
    if shutil.which("rsync") is not None:
        subprocess.run(["rsync", "-aX", f"{source}/", str(mounted.dir / "rsynced")], check=True)
        assert os.getxattr(mounted.dir / "rsynced" / "f", "user.tag") == b"keep me"


@contextmanager
def _tagged_file_mounted(tmp_path: Path, *options: str) -> Iterator[Path]:
    """A workspace whose ``/f`` holds ``x`` and ``user.a = 1``, mounted with ``options``;
    yields the file's path in the mount."""
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/f", b"x")
        ws.setxattr("/f", "user.a", b"1")
    m = start_mount(db, tmp_path / "mnt", *options)
    try:
        yield m.dir / "f"
    finally:
        m.unmount()


def test_a_read_only_mount_shows_them_and_refuses_changes(tmp_path: Path) -> None:
    with _tagged_file_mounted(tmp_path, "--read-only") as path:
        assert os.getxattr(path, "user.a") == b"1"
        assert os.listxattr(path) == ["user.a"]
        assert _outcome(lambda: os.setxattr(path, "user.b", b"")) == "EROFS"
        assert _outcome(lambda: os.removexattr(path, "user.a")) == "EROFS"


def test_no_xattr_turns_them_off_and_changes_nothing(tmp_path: Path) -> None:
    """``--no-xattr``: every attribute call fails as on a filesystem without them, writes
    work, and the workspace's attributes stay (the API still has them)."""
    with _tagged_file_mounted(tmp_path, "--no-xattr") as path:
        for call in (
            lambda: os.getxattr(path, "user.a"),
            lambda: os.listxattr(path),
            lambda: os.setxattr(path, "user.b", b"2"),
            lambda: os.removexattr(path, "user.a"),
        ):
            assert _outcome(call) == "ENOTSUP"
            assert _outcome(call) == "ENOTSUP"  # the kernel's answer from then on
        with open(path, "ab") as f:
            f.write(b"y")
        assert path.read_bytes() == b"xy"
    with agentfs.open(tmp_path / "ws.db") as ws:
        assert ws.listxattr("/f") == ["user.a"]
        assert ws.read("/f") == b"xy"


def test_trusted_names_are_listed_for_root_only(tmp_path: Path, shm: Path) -> None:
    """tmpfs lists trusted. names only to a caller with CAP_SYS_ADMIN; the mount, which sees
    a uid, to root. (As root, mounted with --allow-other under /dev/shm, so nobody can reach
    it; a normal user's mount, which no one else reaches, shows its owner none.)"""
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/f", b"x", mode=0o644)
        ws.setxattr("/f", "trusted.t", b"1")
        ws.setxattr("/f", "user.u", b"2")
    if os.geteuid() != 0:  # the owner of the mount is no root: it lists no trusted. name
        m = start_mount(db, tmp_path / "mnt")
        try:
            assert os.listxattr(m.dir / "f") == ["user.u"]
        finally:
            m.unmount()
        return
    shm.chmod(0o755)
    m = start_mount(db, shm / "mnt", "--allow-other")
    try:
        path = m.dir / "f"
        assert sorted(os.listxattr(path)) == ["trusted.t", "user.u"]
        as_nobody = subprocess.run(
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                sys.executable,
                "-c",
                f"import os; print(sorted(os.listxattr({str(path)!r})))",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        assert as_nobody.stdout.strip() == "['user.u']"
    finally:
        m.unmount()
