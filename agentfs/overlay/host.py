"""The host directory under a workspace as the change list and ``apply`` reach it: every path
beneath its root, and never through a symlink (``agentfs.core.beneath``), so that neither the
host's owner swapping a directory for a symlink nor an agent's change (a symlink of the base
replaced by a directory of files) can make ``apply`` read or write outside the base. A
symlink or a file where a directory should be is ELOOP or ENOTDIR."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator

from agentfs.core import beneath

#: The prefix of the temporary files a write makes next to its target.
TEMP_PREFIX = ".agentfs-apply-"


class HostTree:
    """Paths are the workspace's ('/'-separated, from the base's root)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def lstat(self, path: str) -> os.stat_result | None:
        """What is at ``path`` (a symlink itself), or None when nothing is."""
        names = beneath.split(path)
        try:
            parent = beneath.open_dir(self.root, names[:-1])
        except FileNotFoundError:
            return None
        try:
            return os.stat(names[-1], dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return None
        finally:
            os.close(parent)

    def read(self, path: str) -> bytes:
        """The bytes of the regular file at ``path``."""
        fd = beneath.open_beneath(self.root, path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise IsADirectoryError(path)
            return f.read()

    def readlink(self, path: str) -> str:
        names = beneath.split(path)
        parent = beneath.open_dir(self.root, names[:-1])
        try:
            return os.readlink(names[-1], dir_fd=parent)
        finally:
            os.close(parent)

    def digest(self, path: str) -> bytes | None:
        """The SHA-256 of a file's bytes or a symlink's target at ``path``; None when nothing
        is there, and a marker for a directory (or anything else) that no content matches."""
        found = self.lstat(path)
        if found is None:
            return None
        if stat.S_ISLNK(found.st_mode):
            return hashlib.sha256(os.fsencode(self.readlink(path))).digest()
        if not stat.S_ISREG(found.st_mode):
            return b"not a file"
        return hashlib.sha256(self.read(path)).digest()

    def replace(self, path: str, mode: int, content: bytes, mtime_ns: int | None) -> None:
        """Put a regular file (``content``, its bytes) or a symlink (``content``, its target)
        at ``path`` atomically: a temporary file next to it, synced, renamed over it. The
        missing directories on the way are made."""
        names = beneath.split(path)
        parent = beneath.open_dir(self.root, names[:-1], create=True)
        temp = TEMP_PREFIX + secrets.token_hex(6)
        try:
            if stat.S_ISLNK(mode):
                os.symlink(content, temp, dir_fd=parent)
            else:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                fd = os.open(temp, flags, 0o600, dir_fd=parent)
                try:
                    view = memoryview(content)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fchmod(fd, stat.S_IMODE(mode))
                    if mtime_ns is not None:
                        os.utime(fd, ns=(mtime_ns, mtime_ns))
                    os.fsync(fd)
                finally:
                    os.close(fd)
            os.replace(temp, names[-1], src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=parent)
            raise
        finally:
            os.close(parent)

    def unlink(self, path: str) -> None:
        """Remove the file or symlink at ``path``; nothing when it is gone already."""
        names = beneath.split(path)
        try:
            parent = beneath.open_dir(self.root, names[:-1])
        except FileNotFoundError:
            return
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(names[-1], dir_fd=parent)
        finally:
            os.close(parent)

    def sweep(self, directory: str) -> None:
        """Remove the temporary files a killed write left in ``directory``."""
        try:
            fd = beneath.open_dir(self.root, beneath.split(directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        try:
            for name in os.listdir(fd):
                if name.startswith(TEMP_PREFIX):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name, dir_fd=fd)
        finally:
            os.close(fd)

    def files_below(self, directory: str) -> Iterator[tuple[str, bool]]:
        """(path relative to ``directory``, is a symlink) of every file and symlink below
        it, in name order; nothing when it is gone."""
        try:
            fd = beneath.open_dir(self.root, beneath.split(directory))
        except (FileNotFoundError, NotADirectoryError):
            return
        try:
            for top, dirs, names, top_fd in os.fwalk(".", dir_fd=fd):
                dirs.sort()  # a symlink to a directory is among dirs, and not descended into
                for name in sorted(names + dirs):
                    mode = os.stat(name, dir_fd=top_fd, follow_symlinks=False).st_mode
                    if not stat.S_ISDIR(mode):
                        yield os.path.normpath(os.path.join(top, name)), stat.S_ISLNK(mode)
        finally:
            os.close(fd)
