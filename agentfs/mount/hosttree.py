"""The host side of running a command in a copy: writing a workspace subtree into a private
directory, describing a tree by ``lstat`` alone, and removing the copy whatever it holds.

Unlike ``agentfs.transfer``, which exports into a directory the user owns and may share, the
copy is private and deleted afterwards, so it keeps what transfer drops on purpose: setuid and
setgid bits, hard links, FIFOs, sockets and extended attributes. Owners are not copied.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat as statmod
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from agentfs.core import paths
from agentfs.core.digests import digest, hasher
from agentfs.core.fs import FileSystem
from agentfs.core.inodes import S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, Stat

#: Bytes moved per read or write for large files.
BLOCK_BYTES = 8 * 1024 * 1024
#: How long ``wait_for_clock`` waits for the filesystem's clock to move on (seconds).
CLOCK_WAIT = 5.0

_O_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_O_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class HostEntry(NamedTuple):
    """One host entry's ``lstat``: what the comparison of two scans needs."""

    mode: int
    ino: int
    nlink: int
    size: int
    atime_ns: int
    mtime_ns: int
    ctime_ns: int
    rdev: int


#: A scanned tree: each entry by its path relative to the top ("" is the top, "a/b" below it).
Tree = dict[str, HostEntry]


@dataclass
class Exported:
    """What ``export`` wrote, to compare the command's result and the workspace with later.

    Attributes:
        states: each exported entry's workspace ``lstat`` then, by relative path (the
            workspace's own numbers and times, which tell whether another process changed it).
        digests: each exported regular file's content digest, and each symlink's target's,
            by relative path.
        xattrs: the extended attributes each exported file or directory was given on the
            host, by relative path (an attribute the host refused is not there, and is left
            as it is in the workspace whatever the command does).
        skipped: one ``"path: reason"`` line per workspace entry, or attribute, the copy does
            not hold.
    """

    states: dict[str, Stat] = field(default_factory=dict)
    digests: dict[str, bytes] = field(default_factory=dict)
    xattrs: dict[str, dict[str, bytes]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def join(top: str, rel: str) -> str:
    """The workspace path of ``rel`` below the workspace directory ``top``."""
    return paths.join(top, rel) if rel else top


def shown(path: str) -> str:
    """A path for a report line, printable even when a name is not valid UTF-8."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def export(
    fs: FileSystem, top: str, host: Path, hide: Callable[[str, Stat], bool] | None = None
) -> Exported:
    """Write the workspace directory ``top`` into the empty host directory ``host``, in one
    pass over one consistent state: modes (all of 0o7777), nanosecond times, symlinks, empty
    directories, hard links, FIFOs and sockets (device nodes when this process may make them).
    An entry ``hide`` says so of (given its path relative to ``top`` and its ``lstat``: a
    policy's denied files, ``agentfs.mount.copyrules``) is left out with all it holds, and
    leaves no trace: no line in ``skipped``, no state. Raises NotADirectoryError when ``top``
    is not a directory."""
    out = Exported()
    first_names: dict[int, tuple[Path, bytes]] = {}  # hard-linked inode -> first name, digest
    with fs.read_transaction():
        top_st = fs.stat(top)
        if not top_st.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", top)
        out.states[""] = top_st
        attributes = fs.xattrs.every()
        _export_xattrs(attributes.get(top_st.st_ino), "", top, host, out)
        dirs: list[tuple[Path, Stat]] = [(host, top_st)]
        stack = [""]
        while stack:
            rel = stack.pop()
            for name, st in reversed(fs.readdir_plus(join(top, rel))):
                child = f"{rel}/{name}" if rel else name
                if hide is not None and hide(child, st):
                    continue
                try:
                    paths.check_name(name)  # a foreign file's dentry may hold '/' or '..'
                    digest = _export_one(fs, join(top, child), host / child, st, first_names)
                except OSError as exc:
                    out.skipped.append(f"{join(top, child)}: not copied: {exc.strerror or exc}")
                    continue
                out.states[child] = st
                if digest is not None:
                    out.digests[child] = digest
                if st.st_mode & S_IFMT in (S_IFREG, S_IFDIR):
                    _export_xattrs(
                        attributes.get(st.st_ino), child, join(top, child), host / child, out
                    )
                if st.is_dir():
                    dirs.append((host / child, st))
                    stack.append(child)
    for path, st in reversed(dirs):  # contents first: a read-only directory is set last
        os.chmod(path, st.st_mode & 0o7777)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return out


def _export_one(
    fs: FileSystem, path: str, host: Path, st: Stat, first_names: dict[int, tuple[Path, bytes]]
) -> bytes | None:
    """Make one entry (a directory empty and private for now); the digest of a file's
    content or a symlink's target."""
    kind = st.st_mode & S_IFMT
    if kind == S_IFDIR:
        os.mkdir(host, 0o700)
        return None
    if kind == S_IFREG and st.st_ino in first_names:  # a later name of a hard-linked inode
        first, first_digest = first_names[st.st_ino]
        os.link(first, host)
        return first_digest
    content = None
    if kind == S_IFLNK:
        target = fs.readlink(path)
        os.symlink(target, host)
        content = digest(os.fsencode(target))
    elif kind == S_IFREG:
        content = _write_file(fs, path, host, st)
        if st.st_nlink > 1:
            first_names[st.st_ino] = (host, content)
    else:  # FIFOs and sockets; device nodes need privileges (EPERM is reported)
        os.mknod(host, st.st_mode, st.st_rdev)
        os.chmod(host, st.st_mode & 0o7777)
    os.utime(host, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
    return content


def _export_xattrs(
    attributes: dict[str, bytes] | None, rel: str, path: str, host: Path, out: Exported
) -> None:
    """Give a file or directory (only those: Linux refuses ``user.`` names on a symlink or a
    special file) its workspace ``attributes`` on the host."""
    given: dict[str, bytes] = {}
    for name, value in (attributes or {}).items():
        try:
            os.setxattr(host, name, value, follow_symlinks=False)
        except OSError as exc:  # ENOTSUP: a host filesystem without them; EPERM
            out.skipped.append(f"{path}: attribute {name} not copied: {exc.strerror or exc}")
            continue
        given[name] = value
    if given:
        out.xattrs[rel] = given


def host_xattrs(host: Path) -> dict[str, bytes]:
    """The extended attributes of a host file or directory (none where the filesystem has
    none)."""
    try:
        names = os.listxattr(host, follow_symlinks=False)
        return {name: os.getxattr(host, name, follow_symlinks=False) for name in names}
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.ENODATA):
            return {}
        raise


def _write_file(fs: FileSystem, path: str, host: Path, st: Stat) -> bytes:
    h = hasher()
    with open(os.open(host, _O_NEW_FILE, 0o600), "wb") as f:
        for offset in range(0, st.st_size, BLOCK_BYTES):
            data = fs.read(path, offset, BLOCK_BYTES, track=False)
            h.update(data)
            f.write(data)
        f.flush()  # a write after the mode would clear a normal user's setuid bit
        os.fchmod(f.fileno(), st.st_mode & 0o7777)
    return h.digest()


def read_blocks(host: Path) -> Iterator[bytes]:
    """A host file's content in pieces of at most ``BLOCK_BYTES`` (at least one, maybe
    empty); readable even when the command left it without read permission."""
    try:
        fd = os.open(host, _O_READ)
    except PermissionError:  # only the owner's bits are missing: the copy is ours
        os.chmod(host, os.lstat(host).st_mode | 0o400, follow_symlinks=False)
        fd = os.open(host, _O_READ)
    with open(fd, "rb", buffering=0) as f:
        yield f.read(BLOCK_BYTES) or b""
        while data := f.read(BLOCK_BYTES):
            yield data


def digest_of(host: Path) -> bytes:
    """The content digest of a host file, or of a symlink's target (what
    ``Exported.digests`` holds for the workspace's)."""
    if os.path.islink(host):
        return digest(os.fsencode(os.readlink(host)))
    h = hasher()
    for data in read_blocks(host):
        h.update(data)
    return h.digest()


def scan(host: Path, *, restore: bool = True) -> Tree:
    """Every entry below ``host`` (and ``host`` itself, as "") by ``lstat``; symlinks are not
    followed. A directory the command made unlistable or impassable for us (a normal user
    is held by its modes; root is not) is opened up to be walked (the copy is private); its
    recorded mode is the one it had, given back at the end when ``restore`` (else left
    open, for what is read of the copy next)."""
    tree: Tree = {}
    if not os.path.isdir(host) or os.path.islink(host):
        return tree  # the command removed its working tree: everything in it is gone
    opened: list[tuple[str, int]] = []
    held = os.geteuid() != 0  # the copy is ours: its owner bits hold us, and none hold root
    stack = [""]
    while stack:
        rel = stack.pop()
        path = host / rel if rel else host
        st = os.lstat(path)
        tree[rel] = _entry(st)
        if not statmod.S_ISDIR(st.st_mode):
            continue
        if held and st.st_mode & 0o500 != 0o500:
            os.chmod(path, st.st_mode | 0o500)
            opened.append((rel, statmod.S_IMODE(st.st_mode)))
        stack.extend(f"{rel}/{name}" if rel else name for name in os.listdir(path))
    if restore:
        for rel, mode in reversed(opened):  # the deepest first: each is reached through the rest
            path = host / rel if rel else host
            os.chmod(path, mode)
            tree[rel] = _entry(os.lstat(path))  # its ctime now
    return tree


def _entry(st: os.stat_result) -> HostEntry:
    return HostEntry(
        st.st_mode,
        st.st_ino,
        st.st_nlink,
        st.st_size,
        st.st_atime_ns,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_rdev,
    )


def wait_for_clock(marker: Path, tree: Tree) -> None:
    """Return once this filesystem stamps a change with a ctime later than every ctime in
    ``tree``: then anything changed from now on has a ctime different from what ``tree``
    recorded, which is what lets the comparison skip files whose ctime did not move.
    (Timestamps are taken from a coarse clock: a change in the same tick as the copy would
    otherwise be invisible in them.) ``marker`` is a scratch file outside the tree."""
    latest = max(entry.ctime_ns for entry in tree.values())
    marker.touch()
    deadline = time.monotonic() + CLOCK_WAIT
    while os.stat(marker).st_ctime_ns <= latest:
        if time.monotonic() > deadline:
            raise OSError(errno.EIO, "the filesystem's clock does not advance", str(marker))
        time.sleep(0.001)
        os.utime(marker)


def remove(host: Path) -> None:
    """Delete the copy whatever the command left in it: a directory it made unreadable or
    unwritable is opened up first (the copy is ours)."""

    def open_up(_function: Callable[..., Any], path: str, _exc: Any) -> None:
        for directory in (os.path.dirname(path), path):
            st = os.lstat(directory)
            if statmod.S_ISDIR(st.st_mode):
                os.chmod(directory, st.st_mode | 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)

    shutil.rmtree(host, onerror=open_up)
