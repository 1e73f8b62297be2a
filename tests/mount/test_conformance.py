"""POSIX conformance: every case runs once on tmpfs (the reference) and once in the mount, and
both must give the same outcome, the call's result or its errno.

A case is a row of ``CASES``: the tree its directory holds first (``build``), the call, what
tmpfs answers (so a case that fails on both sides for a wrong reason is caught too), and
whether it runs as root or as another user (``USER``, for the kernel's permission checks, the
sticky bit and ownership: the mount is mounted with ``allow_other`` and checks permissions in
the kernel, ``default_permissions``). Each call runs in the case's directory (one run as USER
in a forked child that drops root), so paths are relative and the same on both sides: what the
kernel counts against PATH_MAX is the path a program passes, not where the directory is.

The tmpfs side is a directory under /dev/shm; the mount's is a directory of one mount shared by
the module, fsck-clean when it ends (``fresh_mount``).
"""

from __future__ import annotations

import errno
import os
import pickle
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.mount.conftest import fresh_mount
from tests.syscalls import RENAME_EXCHANGE, RENAME_NOREPLACE, renameat2

#: The other user: any number does for setresuid, and the files it makes show it.
USER = 2345
RENAME_WHITEOUT = 4
N255, N256 = "n" * 255, "n" * 256
#: Longer than a tick of the coarse clock tmpfs may stamp times with.
TICK = 0.02
#: Directory names of a deep tree: 20 of them make a relative path of 3,999 bytes.
STEP = "d" * 199
DEEP_DIRS = "/".join([STEP] * 20)
#: Why a path over PATH_MAX in total fails in the mount where tmpfs takes it.
Outcome = tuple[str, object]


@dataclass(frozen=True)
class Case:
    """One call and what its directory holds first."""

    name: str
    tree: str
    call: Callable[[], object]
    want: str = "ok"  # what tmpfs answers: "ok" or the errno's name
    user: bool = False  # run as USER instead of root
    #: needs root's privileges as written (a device node, trusted.* names, the parent of
    #: /dev/shm): run as root only, since a normal user's tmpfs answer differs
    root_only: bool = False
    at_top: bool = False  # run in the filesystem's root directory, not the case's
    xfail: str | None = None


# --- the trees ---------------------------------------------------------------------------------


def build(root: Path, tree: str) -> None:
    """Make ``tree`` in ``root``: space-separated entries, in order, each ``path`` (a file
    holding b"abc"), ``path/`` (a directory), ``path|`` (a FIFO), ``path->target`` (a
    symlink) or ``path=other`` (a hard link), then optionally ``:mode`` (octal), ``+name``
    (an extended attribute set, as root) and ``@`` (owned by USER, group root). A path named
    again is only given its mode, attribute or owner."""
    for spec in tree.split():
        mine = spec.endswith("@")
        spec, _, xattr = spec.removesuffix("@").partition("+")
        spec, _, mode = spec.partition(":")
        name, arrow, target = spec.partition("->")
        name, equals, other = name.partition("=")
        path = root / name.rstrip("/|")
        if os.path.lexists(path):
            pass
        elif arrow:
            path.symlink_to(target)
        elif equals:
            os.link(root / other, path)
        elif name.endswith("/"):
            path.mkdir()
        elif name.endswith("|"):
            os.mkfifo(path)
        else:
            path.write_bytes(b"abc")
        if mode:
            path.chmod(int(mode, 8))
        if xattr:
            os.setxattr(path, xattr, b"1")
        if mine:
            os.lchown(path, USER, 0)


# --- what calls return: what both sides can agree on (no inode numbers, no clock) -------------


def kind(path: str) -> tuple[str, int]:
    """The type and permission bits of ``path`` (not followed)."""
    st = os.lstat(path)
    return stat.filemode(st.st_mode)[0], stat.S_IMODE(st.st_mode)


def owner(path: str) -> tuple[int, int, int]:
    st = os.lstat(path)
    return st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)


def content(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def listing(path: str) -> list[tuple[str, bool, bool]]:
    """``readdir``: each name with its type (d_type) as the entry gives it."""
    with os.scandir(path) as entries:
        return sorted((e.name, e.is_dir(follow_symlinks=False), e.is_symlink()) for e in entries)


def dots(path: str) -> tuple[object, ...]:
    """``readdir`` as ``ls -a`` sees it: every name, and whether ``.`` and ``..`` carry the
    inode numbers of the directory and of its parent."""
    out = subprocess.run(["ls", "-a1i", path], capture_output=True, text=True, check=True).stdout
    inos = {name: int(ino) for ino, name in (line.split() for line in out.splitlines())}
    here, up = os.stat(path).st_ino, os.stat(f"{path}/..").st_ino
    return sorted(inos), inos["."] == here, inos[".."] == up


def then(call: Callable[[], object], *checks: Callable[[], object]) -> Callable[[], object]:
    """``call``, then what each check returns (a call's effect, not only its answer)."""

    def both() -> object:
        return call(), *(check() for check in checks)

    return both


def on_fd(path: str, flags: int, use: Callable[[int], object]) -> Callable[[], object]:
    """``use`` on a descriptor of ``path`` opened with ``flags`` (closed after)."""

    def call() -> object:
        fd = os.open(path, flags | os.O_NONBLOCK, 0o644)
        try:
            return use(fd)
        finally:
            os.close(fd)

    return call


def opened(path: str, flags: int) -> Callable[[], object]:
    """``open(2)`` alone: what comes back is whether it succeeded."""
    return on_fd(path, flags, lambda fd: None)


def written(path: str, data: bytes, flags: int = os.O_WRONLY) -> Callable[[], object]:
    return on_fd(path, flags, lambda fd: os.write(fd, data))


def times(op: Callable[[], object], watch: str, after: str | None = None) -> Callable[[], object]:
    """Did ``op`` move ``watch``'s (mtime, ctime)? ``after``: where it is then, if it moved.
    tmpfs may stamp a change with the coarse clock (one tick: 4 ms at HZ=250, 10 ms at
    HZ=100), so the call waits two ticks at most before it: the times of a change that moves
    them must differ from those the tree was made with."""

    def call() -> tuple[bool, bool]:
        before = os.lstat(watch)
        time.sleep(TICK)
        op()
        now = os.lstat(after or watch)
        return now.st_mtime_ns != before.st_mtime_ns, now.st_ctime_ns != before.st_ctime_ns

    return call


def deep(names: list[str], leaf: Callable[[int], object]) -> Callable[[], object]:
    """Make each directory of ``names`` inside the last by relative steps (``mkdirat`` and
    ``openat``, never a path of more than one name), then ``leaf`` on the last one's fd."""

    def call() -> object:
        fd = os.open(".", os.O_DIRECTORY)
        try:
            for name in names:
                os.mkdir(name, dir_fd=fd)
                inner = os.open(name, os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = inner
            return leaf(fd)
        finally:
            os.close(fd)

    return call


def chdir_deep(names: list[str]) -> object:
    """``mkdir`` and ``chdir`` into each name in turn, then make a file there and stat it."""
    for name in names:
        os.mkdir(name)
        os.chdir(name)
    os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o644))
    return kind("f")


def made_at(fd: int) -> object:
    """A file made and written through a directory fd; its type and content read back."""
    out = os.open("f", os.O_CREAT | os.O_RDWR, 0o644, dir_fd=fd)
    try:
        os.write(out, b"deep")
        return os.pread(out, 10, 0), stat.S_ISREG(os.fstat(out).st_mode)
    finally:
        os.close(out)


# --- the cases -----------------------------------------------------------------------------------

C = Case


def U(
    name: str, tree: str, call: Callable[[], object], want: str = "ok", xfail: str | None = None
) -> Case:
    """A case run as USER."""
    return Case(name, tree, call, want, user=True, xfail=xfail)


O_RW, O_WR, O_CREAT, O_EXCL = os.O_RDWR, os.O_WRONLY, os.O_CREAT, os.O_EXCL

OPEN = [
    C("creat new", "", then(opened("n", O_WR | O_CREAT), lambda: kind("n"))),
    C("creat excl existing", "f", opened("f", O_WR | O_CREAT | O_EXCL), "EEXIST"),
    C("creat excl dangling symlink", "l->nowhere", opened("l", O_WR | O_CREAT | O_EXCL), "EEXIST"),
    C(
        "creat through dangling symlink",
        "l->t",
        then(opened("l", O_WR | O_CREAT), lambda: kind("t")),
    ),
    C("creat excl on a directory", "d/", opened("d", O_WR | O_CREAT | O_EXCL), "EEXIST"),
    C("creat on a directory", "d/", opened("d", O_WR | O_CREAT), "EISDIR"),
    C("creat with a trailing slash", "", opened("n/", O_WR | O_CREAT), "EISDIR"),
    C("creat in a missing directory", "", opened("m/n", O_WR | O_CREAT), "ENOENT"),
    C("creat under a file", "f", opened("f/n", O_WR | O_CREAT), "ENOTDIR"),
    C("open missing", "", opened("m", os.O_RDONLY), "ENOENT"),
    C("open a file with a trailing slash", "f", opened("f/", os.O_RDONLY), "ENOTDIR"),
    C("open a directory for writing", "d/", opened("d", O_WR), "EISDIR"),
    C("open a directory read-only", "d/", opened("d", os.O_RDONLY)),
    C("O_TRUNC", "f", then(opened("f", O_WR | os.O_TRUNC), lambda: content("f"))),
    C("O_TRUNC read-only", "f", then(opened("f", os.O_RDONLY | os.O_TRUNC), lambda: content("f"))),
    C("O_TRUNC on a FIFO", "p|", opened("p", O_RW | os.O_TRUNC)),
    C("O_APPEND write", "f", then(written("f", b"de", O_WR | os.O_APPEND), lambda: content("f"))),
    C(
        "O_APPEND pwrite goes to the end",
        "f",
        then(
            on_fd("f", O_WR | os.O_APPEND, lambda fd: os.pwrite(fd, b"Z", 0)), lambda: content("f")
        ),
    ),
    C("O_DIRECTORY on a file", "f", opened("f", os.O_RDONLY | os.O_DIRECTORY), "ENOTDIR"),
    C("O_DIRECTORY on a directory", "d/", opened("d", os.O_RDONLY | os.O_DIRECTORY)),
    C("O_DIRECTORY|O_CREAT", "", opened("n", O_CREAT | os.O_DIRECTORY), "EINVAL"),
    C("O_NOFOLLOW on a symlink", "f l->f", opened("l", os.O_RDONLY | os.O_NOFOLLOW), "ELOOP"),
    C("O_NOFOLLOW|O_PATH on a symlink", "f l->f", opened("l", os.O_PATH | os.O_NOFOLLOW)),
    C("O_NOFOLLOW on a file", "f", opened("f", os.O_RDONLY | os.O_NOFOLLOW)),
    C("symlink loop", "a->b b->a", opened("a", os.O_RDONLY), "ELOOP"),
    C("symlink to a directory, O_DIRECTORY", "d/ l->d", opened("l", os.O_DIRECTORY)),
]

READ_WRITE = [
    C("read", "f", on_fd("f", os.O_RDONLY, lambda fd: os.read(fd, 10))),
    C("pread past the end", "f", on_fd("f", os.O_RDONLY, lambda fd: os.pread(fd, 10, 100))),
    C("read a directory", "d/", on_fd("d", os.O_RDONLY, lambda fd: os.read(fd, 10)), "EISDIR"),
    C("read a write-only fd", "f", on_fd("f", O_WR, lambda fd: os.read(fd, 10)), "EBADF"),
    C("write a read-only fd", "f", on_fd("f", os.O_RDONLY, lambda fd: os.write(fd, b"x")), "EBADF"),
    C("write", "f", then(written("f", b"X"), lambda: content("f"))),
    C(
        "pwrite past the end leaves a hole",
        "f",
        then(on_fd("f", O_WR, lambda fd: os.pwrite(fd, b"Z", 6)), lambda: content("f")),
    ),
    C(
        "pwrite at a negative offset",
        "f",
        on_fd("f", O_WR, lambda fd: os.pwrite(fd, b"Z", -1)),
        "EINVAL",
    ),
    C(
        "read back through another fd before close",
        "f",
        on_fd("f", O_RW, lambda fd: (os.pwrite(fd, b"XY", 1), content("f"))),
    ),
    C("truncate longer", "f", then(lambda: os.truncate("f", 5), lambda: content("f"))),
    C("truncate shorter", "f", then(lambda: os.truncate("f", 1), lambda: content("f"))),
    C(
        "truncate through a symlink",
        "f l->f",
        then(lambda: os.truncate("l", 0), lambda: content("f")),
    ),
    C("truncate negative", "f", lambda: os.truncate("f", -1), "EINVAL"),
    C("truncate a directory", "d/", lambda: os.truncate("d", 0), "EISDIR"),
    C("truncate a FIFO", "p|", lambda: os.truncate("p", 0), "EINVAL"),
    C("truncate missing", "", lambda: os.truncate("m", 0), "ENOENT"),
    C(
        "ftruncate",
        "f",
        then(on_fd("f", O_WR, lambda fd: os.ftruncate(fd, 2)), lambda: content("f")),
    ),
    C(
        "ftruncate a read-only fd",
        "f",
        on_fd("f", os.O_RDONLY, lambda fd: os.ftruncate(fd, 0)),
        "EINVAL",
    ),
]

NAMESPACE = [
    C("mkdir", "", then(lambda: os.mkdir("n", 0o750), lambda: kind("n"))),
    C("mkdir existing", "d/", lambda: os.mkdir("d"), "EEXIST"),
    C("mkdir over a dangling symlink", "l->m", lambda: os.mkdir("l"), "EEXIST"),
    C("mkdir in a missing directory", "", lambda: os.mkdir("m/n"), "ENOENT"),
    C("mkdir under a file", "f", lambda: os.mkdir("f/n"), "ENOTDIR"),
    C(
        "mkdir with the sticky and setgid bits",
        "",
        then(lambda: os.mkdir("n", 0o3777), lambda: kind("n")),
    ),
    C(
        "mkdir: the parent's links",
        "d/",
        then(lambda: os.mkdir("d/e"), lambda: os.stat("d").st_nlink),
    ),
    C("rmdir", "d/", then(lambda: os.rmdir("d"), lambda: os.listdir("."))),
    C(
        "rmdir: the parent's links",
        "d/ d/e/",
        then(lambda: os.rmdir("d/e"), lambda: os.stat("d").st_nlink),
    ),
    C("rmdir non-empty", "d/ d/f", lambda: os.rmdir("d"), "ENOTEMPTY"),
    C("rmdir .", "d/", lambda: os.rmdir("d/."), "EINVAL"),
    C("rmdir ..", "d/ d/e/", lambda: os.rmdir("d/e/.."), "ENOTEMPTY"),
    C("rmdir a file", "f", lambda: os.rmdir("f"), "ENOTDIR"),
    C("rmdir a symlink to a directory", "d/ l->d", lambda: os.rmdir("l"), "ENOTDIR"),
    C("rmdir missing", "", lambda: os.rmdir("m"), "ENOENT"),
    C(
        "rmdir the mount root",
        "",
        lambda: os.rmdir(os.getcwd()),
        "EBUSY",
        at_top=True,
        root_only=True,
    ),
    C("rmdir . at the mount root", "", lambda: os.rmdir("."), "EINVAL", at_top=True),
    C("rename . at the mount root", "", lambda: os.rename(".", "x"), "EBUSY", at_top=True),
    C("unlink", "f", then(lambda: os.unlink("f"), lambda: os.listdir("."))),
    C("unlink a directory", "d/", lambda: os.unlink("d"), "EISDIR"),
    C("unlink missing", "", lambda: os.unlink("m"), "ENOENT"),
    C("unlink a file with a trailing slash", "f", lambda: os.unlink("f/"), "ENOTDIR"),
    C(
        "unlink a symlink to a directory",
        "d/ l->d",
        then(lambda: os.unlink("l"), lambda: listing(".")),
    ),
    C(
        "unlink one of two links",
        "f g=f",
        then(lambda: os.unlink("f"), lambda: os.stat("g").st_nlink),
    ),
    C("rename a file", "f", then(lambda: os.rename("f", "g"), lambda: listing("."))),
    C("rename over a file", "f g:600", then(lambda: os.rename("f", "g"), lambda: kind("g"))),
    C("rename a file over a directory", "f d/", lambda: os.rename("f", "d"), "EISDIR"),
    C("rename a directory over a file", "d/ f", lambda: os.rename("d", "f"), "ENOTDIR"),
    C(
        "rename a directory over an empty one",
        "d/ d/f e/",
        then(lambda: os.rename("d", "e"), lambda: listing("e")),
    ),
    C(
        "rename a directory over a non-empty one",
        "d/ e/ e/f",
        lambda: os.rename("d", "e"),
        "ENOTEMPTY",
    ),
    C("rename a directory into itself", "d/ d/e/", lambda: os.rename("d", "d/e/x"), "EINVAL"),
    C(
        "rename a directory: the parents' links",
        "d/ d/x/ e/",
        then(
            lambda: os.rename("d/x", "e/x"), lambda: (os.stat("d").st_nlink, os.stat("e").st_nlink)
        ),
    ),
    C(
        "rename a directory onto itself",
        "d/",
        then(lambda: os.rename("d", "d"), lambda: listing(".")),
    ),
    C(
        "rename a file onto its hard link",
        "f g=f",
        then(lambda: os.rename("f", "g"), lambda: listing(".")),
    ),
    C("rename missing", "", lambda: os.rename("m", "n"), "ENOENT"),
    C("rename .", "d/", lambda: os.rename("d/.", "e"), "EBUSY"),
    C("rename a file to a trailing slash", "f", lambda: os.rename("f", "g/"), "ENOTDIR"),
    C("rename into a missing directory", "f", lambda: os.rename("f", "m/f"), "ENOENT"),
    C(
        "rename noreplace",
        "f",
        then(lambda: renameat2("f", "g", RENAME_NOREPLACE), lambda: listing(".")),
    ),
    C(
        "rename noreplace over a file",
        "f g",
        lambda: renameat2("f", "g", RENAME_NOREPLACE),
        "EEXIST",
    ),
    C(
        "rename exchange a file and a directory",
        "f d/ d/x",
        then(
            lambda: renameat2("f", "d", RENAME_EXCHANGE), lambda: listing("."), lambda: listing("f")
        ),
    ),
    C(
        "rename noreplace over a dangling symlink",
        "f l->nowhere",
        lambda: renameat2("f", "l", RENAME_NOREPLACE),
        "EEXIST",
    ),
    C(
        "rename exchange with a missing name",
        "f",
        lambda: renameat2("f", "g", RENAME_EXCHANGE),
        "ENOENT",
    ),
    C(
        "rename exchange into itself",
        "d/ d/e/",
        lambda: renameat2("d", "d/e", RENAME_EXCHANGE),
        "EINVAL",
    ),
    C("rename noreplace|exchange", "f g", lambda: renameat2("f", "g", 3), "EINVAL"),
    C(
        "rename whiteout",
        "f",
        then(lambda: renameat2("f", "g", RENAME_WHITEOUT), lambda: listing("."), lambda: kind("f")),
    ),
    C("link", "f", then(lambda: os.link("f", "g"), lambda: os.stat("f").st_nlink)),
    C("link a directory", "d/", lambda: os.link("d", "e"), "EPERM"),
    C("link over a name", "f g", lambda: os.link("f", "g"), "EEXIST"),
    C("link missing", "", lambda: os.link("m", "n"), "ENOENT"),
    C(
        "link a symlink itself",
        "l->f",
        then(lambda: os.link("l", "k", follow_symlinks=False), lambda: os.lstat("k").st_nlink),
    ),
    C("link into a missing directory", "f", lambda: os.link("f", "m/f"), "ENOENT"),
    C("symlink", "", then(lambda: os.symlink("t", "l"), lambda: (kind("l"), os.readlink("l")))),
    C("symlink over a name", "f", lambda: os.symlink("t", "f"), "EEXIST"),
    C("symlink to an empty target", "", lambda: os.symlink("", "l"), "ENOENT"),
    C(
        "symlink of 4095 bytes",
        "",
        then(lambda: os.symlink("t" * 4095, "l"), lambda: len(os.readlink("l"))),
    ),
    C("symlink of 4096 bytes", "", lambda: os.symlink("t" * 4096, "l"), "ENAMETOOLONG"),
    C("readlink a file", "f", lambda: os.readlink("f"), "EINVAL"),
    C("readlink a directory", "d/", lambda: os.readlink("d"), "EINVAL"),
    C("readlink missing", "", lambda: os.readlink("m"), "ENOENT"),
    C("mkfifo", "", then(lambda: os.mkfifo("p", 0o640), lambda: kind("p"))),
    C("mkfifo over a name", "f", lambda: os.mkfifo("f"), "EEXIST"),
    C(
        "mknod a regular file",
        "",
        then(lambda: os.mknod("n", stat.S_IFREG | 0o600), lambda: kind("n")),
    ),
    C("mknod a socket", "", then(lambda: os.mknod("n", stat.S_IFSOCK | 0o600), lambda: kind("n"))),
    C(
        "mknod a character device",
        "",
        then(
            lambda: os.mknod("n", stat.S_IFCHR | 0o600, os.makedev(1, 3)),
            lambda: os.lstat("n").st_rdev,
        ),
        root_only=True,
    ),
    C("mknod a directory", "", lambda: os.mknod("n", stat.S_IFDIR | 0o700), "EPERM"),
    C("readdir", "f d/ l->f p|", lambda: listing(".")),
    C("readdir lists . and ..", "d/ d/e/ d/e/f", lambda: (dots("d"), dots("d/e"))),
    C("readdir a file", "f", lambda: os.listdir("f"), "ENOTDIR"),
    C("readdir missing", "", lambda: os.listdir("m"), "ENOENT"),
    C(
        "readdir after removals",
        "a b c d/",
        then(lambda: os.unlink("b"), lambda: os.rmdir("d"), lambda: listing(".")),
    ),
    C("statfs", "f", lambda: os.statvfs("f").f_namemax),
    C("fstatfs", "f", on_fd("f", os.O_RDONLY, lambda fd: os.fstatvfs(fd).f_namemax)),
]

METADATA = [
    C("chmod", "f", then(lambda: os.chmod("f", 0o7777), lambda: kind("f"))),
    C("chmod through a symlink", "f l->f", then(lambda: os.chmod("l", 0o600), lambda: kind("f"))),
    C("chmod missing", "", lambda: os.chmod("m", 0o600), "ENOENT"),
    C(
        "fchmod",
        "f",
        then(on_fd("f", os.O_RDONLY, lambda fd: os.fchmod(fd, 0o640)), lambda: kind("f")),
    ),
    C("chown", "f", then(lambda: os.chown("f", USER, USER), lambda: owner("f"))),
    C(
        "chown clears setuid and setgid",
        "f:6755",
        then(lambda: os.chown("f", USER, -1), lambda: owner("f")),
    ),
    C(
        "chown a symlink itself",
        "l->f",
        then(lambda: os.lchown("l", USER, USER), lambda: owner("l")),
    ),
    C("chown -1 -1", "f:6755", then(lambda: os.chown("f", -1, -1), lambda: owner("f"))),
    C(
        "utimensat",
        "f",
        then(
            lambda: os.utime("f", ns=(1_000_000_123, 2_000_000_456)),
            lambda: os.stat("f").st_mtime_ns,
        ),
    ),
    C(
        "utimensat before 1970",
        "f",
        then(lambda: os.utime("f", ns=(-5_000_000_001, -7)), lambda: os.stat("f").st_mtime_ns),
    ),
    C(
        "utimensat a symlink itself",
        "l->f",
        then(
            lambda: os.utime("l", ns=(3, 4_000_000_000), follow_symlinks=False),
            lambda: os.lstat("l").st_mtime_ns,
        ),
    ),
    C(
        "utimensat in the year 3000",
        "f",
        then(lambda: os.utime("f", (32_503_680_000, 0)), lambda: os.stat("f").st_atime),
    ),
    C(
        "utimensat in the year 1600",
        "f",
        then(lambda: os.utime("f", (-11_676_096_000, 0)), lambda: os.stat("f").st_atime),
    ),
    C("utimensat missing", "", lambda: os.utime("m"), "ENOENT"),
    C(
        "setxattr",
        "f",
        then(lambda: os.setxattr("f", "user.a", b"1"), lambda: os.getxattr("f", "user.a")),
    ),
    C("getxattr missing", "f", lambda: os.getxattr("f", "user.a"), "ENODATA"),
    C("setxattr system.", "f", lambda: os.setxattr("f", "system.a", b"1"), "ENOTSUP"),
    C("setxattr other prefix", "f", lambda: os.setxattr("f", "other.a", b"1"), "ENOTSUP"),
    C(
        "setxattr user. on a symlink",
        "l->f",
        lambda: os.setxattr("l", "user.a", b"1", follow_symlinks=False),
        "EPERM",
    ),
    C("setxattr user. on a FIFO", "p|", lambda: os.setxattr("p", "user.a", b"1"), "EPERM"),
    C(
        "listxattr",
        "d/+user.b d/+trusted.a",
        lambda: sorted(os.listxattr("d")),
        root_only=True,
    ),
    C(
        "removexattr",
        "f+user.a",
        then(lambda: os.removexattr("f", "user.a"), lambda: os.listxattr("f")),
    ),
    C("removexattr missing", "f", lambda: os.removexattr("f", "user.a"), "ENODATA"),
    C(
        "xattr create existing",
        "f+user.a",
        lambda: os.setxattr("f", "user.a", b"1", os.XATTR_CREATE),
        "EEXIST",
    ),
    C(
        "xattr replace missing",
        "f",
        lambda: os.setxattr("f", "user.a", b"1", os.XATTR_REPLACE),
        "ENODATA",
    ),
]

AS_USER = [
    U("create in a directory without w", "d/:555", opened("d/n", O_WR | O_CREAT), "EACCES"),
    U("mkdir in a directory without w", "d/:555", lambda: os.mkdir("d/n"), "EACCES"),
    U("unlink in a directory without w", "d/ d/f@ d/:555", lambda: os.unlink("d/f"), "EACCES"),
    U("rmdir in a directory without w", "d/ d/e/@ d/:555", lambda: os.rmdir("d/e"), "EACCES"),
    U(
        "rename out of a directory without w",
        "d/ d/f@ d/:555",
        lambda: os.rename("d/f", "f"),
        "EACCES",
    ),
    U("rename into a directory without w", "d/:555 f@", lambda: os.rename("f", "d/f"), "EACCES"),
    U(
        "move a directory without w to another parent",
        "e/:500@ d/",
        lambda: os.rename("e", "d/e"),
        "EACCES",
    ),
    U("rename a directory without w in place", "e/:500@", lambda: os.rename("e", "g")),
    U("lookup in a directory without x", "d/ d/f d/:666", lambda: os.stat("d/f"), "EACCES"),
    U("readdir a directory without r", "d/:333", lambda: os.listdir("d"), "EACCES"),
    U("open another's file without r", "f:600", opened("f", os.O_RDONLY), "EACCES"),
    U("open another's file for writing", "f:644", opened("f", O_WR), "EACCES"),
    U(
        "O_TRUNC of another's read-only file",
        "f:644",
        opened("f", os.O_RDONLY | os.O_TRUNC),
        "EACCES",
    ),
    U("truncate another's read-only file", "f:644", lambda: os.truncate("f", 0), "EACCES"),
    U("O_NOATIME on another's file", "f:644", opened("f", os.O_RDONLY | os.O_NOATIME), "EPERM"),
    U("chmod another's file", "f:666", lambda: os.chmod("f", 0o777), "EPERM"),
    U("link another's unreadable file", "f:600", lambda: os.link("f", "g"), "EPERM"),
    U(
        "chown one's own file to one's group",
        "f@",
        then(lambda: os.chown("f", -1, USER), lambda: owner("f")),
    ),
    U("chown one's own file to root", "f@", lambda: os.chown("f", 0, -1), "EPERM"),
    U(
        "chmod g+s outside the group drops it",
        "f@",
        then(lambda: os.chmod("f", 0o2755), lambda: owner("f")),
    ),
    U("utimensat now on another's writable file", "f:666", lambda: os.utime("f")),
    U("utimensat now on another's read-only file", "f:644", lambda: os.utime("f"), "EACCES"),
    U("utimensat times on another's file", "f:666", lambda: os.utime("f", ns=(1, 1)), "EPERM"),
    U("setxattr user. without w", "f:644", lambda: os.setxattr("f", "user.a", b"1"), "EACCES"),
    U("setxattr trusted.", "f@", lambda: os.setxattr("f", "trusted.a", b"1"), "EPERM"),
    U("listxattr hides trusted.", "f+trusted.a f+user.b", lambda: os.listxattr("f")),
    U("mknod a device", "", lambda: os.mknod("n", stat.S_IFCHR | 0o600, os.makedev(1, 3)), "EPERM"),
    U("create: owner and mode", "", then(opened("n", O_WR | O_CREAT), lambda: owner("n"))),
    U("mkdir: owner and mode", "", then(lambda: os.mkdir("n", 0o777), lambda: owner("n"))),
    U(
        "create in a setgid directory",
        "g/:2777",
        then(opened("g/n", O_WR | O_CREAT), lambda: owner("g/n")),
    ),
    U(
        "mkdir in a setgid directory",
        "g/:2777",
        then(lambda: os.mkdir("g/n", 0o755), lambda: owner("g/n")),
    ),
    U(
        "symlink in a setgid directory",
        "g/:2777",
        then(lambda: os.symlink("t", "g/l"), lambda: owner("g/l")),
    ),
    U("write clears setuid", "f:6777", then(written("f", b"x"), lambda: owner("f"))),
    U("sticky: unlink another's file", "s/:1777 s/f", lambda: os.unlink("s/f"), "EPERM"),
    U("sticky: unlink one's own file", "s/:1777 s/f@", lambda: os.unlink("s/f")),
    U("sticky: rename another's file", "s/:1777 s/f", lambda: os.rename("s/f", "s/g"), "EPERM"),
    U(
        "sticky: rename over another's file",
        "s/:1777 s/f s/g@",
        lambda: os.rename("s/g", "s/f"),
        "EPERM",
    ),
    U("sticky: rmdir another's directory", "s/:1777 s/e/:777", lambda: os.rmdir("s/e"), "EPERM"),
    U("sticky: create", "s/:1777", opened("s/n", O_WR | O_CREAT)),
]

TIMES = [
    C("create: parent mtime and ctime", "d/", times(opened("d/n", O_WR | O_CREAT), "d")),
    C("mkdir: parent times", "d/", times(lambda: os.mkdir("d/n"), "d")),
    C("unlink: parent times", "d/ d/f", times(lambda: os.unlink("d/f"), "d")),
    C("rmdir: parent times", "d/ d/e/", times(lambda: os.rmdir("d/e"), "d")),
    C("rename: source parent times", "d/ d/f e/", times(lambda: os.rename("d/f", "e/f"), "d")),
    C("rename: target parent times", "d/ d/f e/", times(lambda: os.rename("d/f", "e/f"), "e")),
    C("rename: the file's times", "f", times(lambda: os.rename("f", "g"), "f", "g")),
    C("rename: the replaced file's times", "f g h=g", times(lambda: os.rename("f", "g"), "h")),
    C("exchange: the first file's times", "f g", times(lambda: renameat2("f", "g", 2), "g")),
    C("mkfifo: parent times", "d/", times(lambda: os.mkfifo("d/p"), "d")),
    C("chmod: the file's times", "f", times(lambda: os.chmod("f", 0o600), "f")),
    C("chown: the file's times", "f", times(lambda: os.chown("f", -1, -1), "f")),
    C("link: the file's times", "f", times(lambda: os.link("f", "g"), "f")),
    C("link: parent times", "f d/", times(lambda: os.link("f", "d/g"), "d")),
    C("unlink one of two links: the file's times", "f g=f", times(lambda: os.unlink("f"), "g")),
    C("symlink: parent times", "d/", times(lambda: os.symlink("t", "d/l"), "d")),
    C("write: the file's times", "f", times(written("f", b"x"), "f")),
    C("truncate: the file's times", "f", times(lambda: os.truncate("f", 1), "f")),
    C("truncate to the same size: the file's times", "f", times(lambda: os.truncate("f", 3), "f")),
    C("O_TRUNC: the file's times", "f", times(opened("f", O_WR | os.O_TRUNC), "f")),
    C(
        "read: the file's times",
        "f",
        times(on_fd("f", os.O_RDONLY, lambda fd: os.read(fd, 9)), "f"),
    ),
    C("setxattr: the file's times", "f", times(lambda: os.setxattr("f", "user.a", b"1"), "f")),
    C(
        "write, fstat before close",
        "f",
        on_fd("f", O_WR, lambda fd: times(lambda: os.write(fd, b"x"), "f")()),
    ),
]

LONG_NAMES = [
    C("creat a name of 255 bytes", "", opened(N255, O_WR | O_CREAT)),
    C("creat a name of 256 bytes", "", opened(N256, O_WR | O_CREAT), "ENAMETOOLONG"),
    C("mkdir a name of 256 bytes", "", lambda: os.mkdir(N256), "ENAMETOOLONG"),
    C("symlink a name of 256 bytes", "", lambda: os.symlink("t", N256), "ENAMETOOLONG"),
    C("link to a name of 256 bytes", "f", lambda: os.link("f", N256), "ENAMETOOLONG"),
    C("rename to a name of 256 bytes", "f", lambda: os.rename("f", N256), "ENAMETOOLONG"),
    C("mkfifo a name of 256 bytes", "", lambda: os.mkfifo(N256), "ENAMETOOLONG"),
    C("stat a name of 256 bytes", "", lambda: os.stat(N256), "ENAMETOOLONG"),
    C(
        "rename a name of 255 bytes",
        "f",
        then(lambda: os.rename("f", N255), lambda: os.listdir(".")),
    ),
    C(
        "a path of 4,095 bytes",
        "",
        deep([STEP] * 20, lambda fd: opened(f"{DEEP_DIRS}/{'f' * 95}", O_WR | O_CREAT)()),
    ),
    C(
        "a path of 4,096 bytes",
        "",
        deep([STEP] * 20, lambda fd: opened(f"{DEEP_DIRS}/{'f' * 96}", O_WR | O_CREAT)()),
        "ENAMETOOLONG",
    ),
    C("a tree of 5,000 bytes by openat", "", deep([STEP] * 25, made_at)),
    C("a tree of 5,000 bytes by chdir", "", lambda: chdir_deep([STEP] * 25)),
    C(
        "a tree of 3,000 bytes by openat",
        "",
        deep([STEP] * 15, made_at),
    ),
]

CASES = [*OPEN, *READ_WRITE, *NAMESPACE, *METADATA, *AS_USER, *TIMES, *LONG_NAMES]


# --- running them ------------------------------------------------------------------------------


def outcome(where: Path, case: Case) -> Outcome:
    """``case.call()`` working in ``where``: ("ok", what it returned) or (the errno's name,
    None). A case run as USER runs in a forked child that drops root."""
    if case.user:
        return _as_user(where, case)
    here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    umask = os.umask(0o022)
    try:
        os.chdir(where)
        return _called(case)
    finally:
        os.umask(umask)
        os.fchdir(here)
        os.close(here)


def _called(case: Case) -> Outcome:
    try:
        return "ok", case.call()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc.errno)), None


def _as_user(where: Path, case: Case) -> Outcome:
    """``outcome`` in a forked child as USER, its answer pickled back through a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read_end)
            os.umask(0o022)
            os.setgroups([])
            os.setresgid(USER, USER, USER)
            os.setresuid(USER, USER, USER)
            os.chdir(where)
            data = pickle.dumps(_called(case))
        except BaseException as exc:
            data = pickle.dumps(("crashed", repr(exc)))
        with open(write_end, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(write_end)
    with open(read_end, "rb") as answer:
        data = answer.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)  # type: ignore[no-any-return]


@dataclass
class Sides:
    """The reference directory on tmpfs and the mount, each the root of its cases."""

    tmpfs: Path
    mount: Path


@pytest.fixture(scope="module")
def sides() -> Iterator[Sides]:
    """One mount for the module, with ``allow_other`` so that USER reaches it, under a
    directory of /dev/shm every user can pass; the tmpfs side beside it."""
    base = Path(tempfile.mkdtemp(prefix="agentfs-conformance-", dir="/dev/shm"))
    try:
        base.chmod(0o755)
        (base / "tmpfs").mkdir()
        options = ("--allow-other",) if os.geteuid() == 0 else ()
        with fresh_mount(base, *options) as m:
            yield Sides(base / "tmpfs", m.dir)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _param(index: int, case: Case) -> object:
    marks = [] if case.xfail is None else [pytest.mark.xfail(strict=True, reason=case.xfail)]
    return pytest.param(index, case, id=case.name.replace(" ", "-"), marks=marks)


@pytest.mark.parametrize(("index", "case"), [_param(i, c) for i, c in enumerate(CASES)])
def test_same_outcome_as_tmpfs(sides: Sides, index: int, case: Case) -> None:
    if case.user and os.geteuid() != 0:
        pytest.skip("running a call as another user needs root")
    if case.root_only and os.geteuid() != 0:
        pytest.skip("the call needs root's privileges as written")
    results = []
    for side in (sides.tmpfs, sides.mount):
        where = side / f"c{index}"
        where.mkdir()
        where.chmod(0o777)
        build(where, case.tree)
        top = Path("/dev/shm") if side is sides.tmpfs else side  # the filesystem's root
        results.append(outcome(top if case.at_top else where, case))
    expected, got = results
    assert expected[0] == case.want, f"tmpfs answered {expected}: the case is wrong"
    assert got == expected
