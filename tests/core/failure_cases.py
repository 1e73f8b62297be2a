"""Failing operations shared by test_errors and test_atomicity, with the path each must name.

Each case runs against the tree that ``populate`` builds. ``named`` is the path the error must
name: the one given, or for ENOENT/ENOTDIR below the top the component at fault (as the message
"No such file or directory: '/missing'" for ``/missing/f``), or, for ENAMETOOLONG (``truncated``),
a prefix of the over-long text (the message shortens it).
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass

import agentfs

LONG_NAME = "n" * 256
LONG_PATH = "/" + "/".join(["d" * 250] * 263)  # > 65,536 bytes, every component legal


@dataclass(frozen=True)
class Case:
    call: Callable[[agentfs.Workspace], object]
    errno: int
    named: str
    truncated: bool = False


CASES: dict[str, Case] = {
    "read missing file": Case(lambda ws: ws.read("/missing"), errno.ENOENT, "/missing"),
    "read below missing dir": Case(lambda ws: ws.read("/missing/f"), errno.ENOENT, "/missing"),
    "write below missing dir": Case(
        lambda ws: ws.write("/missing/f", b""), errno.ENOENT, "/missing"
    ),
    "remove missing": Case(lambda ws: ws.remove("/missing"), errno.ENOENT, "/missing"),
    "rename missing source": Case(lambda ws: ws.rename("/missing", "/x"), errno.ENOENT, "/missing"),
    "rename into missing dir": Case(
        lambda ws: ws.rename("/file", "/missing/x"), errno.ENOENT, "/missing"
    ),
    "link missing source": Case(lambda ws: ws.link("/missing", "/x"), errno.ENOENT, "/missing"),
    "chmod missing": Case(lambda ws: ws.chmod("/missing", 0o600), errno.ENOENT, "/missing"),
    "utime missing": Case(lambda ws: ws.utime("/missing"), errno.ENOENT, "/missing"),
    "truncate missing": Case(lambda ws: ws.truncate("/missing", 0), errno.ENOENT, "/missing"),
    "listdir missing": Case(lambda ws: ws.listdir("/missing"), errno.ENOENT, "/missing"),
    "readlink missing": Case(lambda ws: ws.readlink("/missing"), errno.ENOENT, "/missing"),
    "mkdir existing dir": Case(lambda ws: ws.mkdir("/dir"), errno.EEXIST, "/dir"),
    "mkdir over file": Case(lambda ws: ws.mkdir("/file"), errno.EEXIST, "/file"),
    "mkdir root": Case(lambda ws: ws.mkdir("/"), errno.EEXIST, "/"),
    "symlink over existing": Case(lambda ws: ws.symlink("t", "/file"), errno.EEXIST, "/file"),
    "link over existing": Case(lambda ws: ws.link("/file", "/dir"), errno.EEXIST, "/dir"),
    "read a directory": Case(lambda ws: ws.read("/dir"), errno.EISDIR, "/dir"),
    "write over a directory": Case(lambda ws: ws.write("/dir", b""), errno.EISDIR, "/dir"),
    "write the root": Case(lambda ws: ws.write("/", b""), errno.EISDIR, "/"),
    "append to the root": Case(lambda ws: ws.append("/", b"x"), errno.EISDIR, "/"),
    "append to a directory": Case(lambda ws: ws.append("/dir", b"x"), errno.EISDIR, "/dir"),
    "pwrite to a directory": Case(lambda ws: ws.pwrite("/dir", b"x", 0), errno.EISDIR, "/dir"),
    "truncate a directory": Case(lambda ws: ws.truncate("/dir", 0), errno.EISDIR, "/dir"),
    "rename file over dir": Case(lambda ws: ws.rename("/file", "/dir"), errno.EISDIR, "/dir"),
    "copy dir without recursive": Case(lambda ws: ws.copy("/dir", "/x"), errno.EISDIR, "/dir"),
    "listdir a file": Case(lambda ws: ws.listdir("/file"), errno.ENOTDIR, "/file"),
    "stat below a file": Case(lambda ws: ws.stat("/file/x"), errno.ENOTDIR, "/file"),
    "write below a file": Case(lambda ws: ws.write("/file/x", b""), errno.ENOTDIR, "/file"),
    "mkdir parents below a file": Case(
        lambda ws: ws.mkdir("/file/a/b", parents=True), errno.ENOTDIR, "/file"
    ),
    "rename dir over file": Case(lambda ws: ws.rename("/dir", "/file"), errno.ENOTDIR, "/file"),
    "remove non-empty dir": Case(lambda ws: ws.remove("/full"), errno.ENOTEMPTY, "/full"),
    "rename over non-empty dir": Case(
        lambda ws: ws.rename("/dir", "/full"), errno.ENOTEMPTY, "/full"
    ),
    "rename dir into itself": Case(
        lambda ws: ws.rename("/full", "/full/child/x"), errno.EINVAL, "/full/child/x"
    ),
    "readlink of a file": Case(lambda ws: ws.readlink("/file"), errno.EINVAL, "/file"),
    "read negative offset": Case(lambda ws: ws.read("/file", -1), errno.EINVAL, "/file"),
    "NUL in path": Case(lambda ws: ws.write("/a\0b", b""), errno.EINVAL, "/a\\0b"),
    "empty symlink target": Case(lambda ws: ws.symlink("", "/l"), errno.EINVAL, "/l"),
    "hard link a directory": Case(lambda ws: ws.link("/dir", "/x"), errno.EPERM, "/dir"),
    "remove root": Case(lambda ws: ws.remove("/", recursive=True), errno.EBUSY, "/"),
    "name of 256 bytes": Case(
        lambda ws: ws.write(f"/dir/{LONG_NAME}", b""), errno.ENAMETOOLONG, LONG_NAME, True
    ),
    "path over 65,536 bytes": Case(
        lambda ws: ws.mkdir(LONG_PATH, parents=True), errno.ENAMETOOLONG, LONG_PATH, True
    ),
}
#: Failures met while following a symlink: they name the path given, not the target.
SYMLINK_CASES: dict[str, Case] = {
    "stat dangling symlink": Case(lambda ws: ws.stat("/dangling"), errno.ENOENT, "/dangling"),
    "stat loop": Case(lambda ws: ws.stat("/loop"), errno.ELOOP, "/loop"),
    "read loop": Case(lambda ws: ws.read("/dir/loop2"), errno.ELOOP, "/dir/loop2"),
    "write loop": Case(lambda ws: ws.write("/loop", b""), errno.ELOOP, "/loop"),
    "listdir below loop": Case(lambda ws: ws.listdir("/loop/x"), errno.ELOOP, "/loop"),
}
ALL_CASES = {**CASES, **SYMLINK_CASES}


def populate(ws: agentfs.Workspace, big: bytes = b"x") -> agentfs.Workspace:
    """The tree every case expects; ``big`` is the content of /full/child/f."""
    ws.mkdir("/dir")
    ws.write("/full/child/f", big, parents=True)
    ws.write("/file", b"x")
    ws.symlink("loop", "/loop")
    ws.symlink("loop2", "/dir/loop2")
    ws.symlink("nowhere", "/dangling")
    return ws
