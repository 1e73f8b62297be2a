"""Opening paths beneath a host directory without ever following a symlink on the way.

The base of a workspace (``agentfs.core.base``) is a directory someone else may change while
the workspace reads it, and ``agentfs apply`` writes into it. A path joined to its root and
opened as a string follows any symlink among its directories, so a directory of the host
swapped for a symlink (by its owner, or planted by an agent's own change) would lead the read
or the write outside the base. Here each directory on the way is opened with ``O_NOFOLLOW``
from the one above it: a symlink or a file where a directory should be is ELOOP or ENOTDIR.
"""

from __future__ import annotations

import contextlib
import errno
import os

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def split(relative: str) -> list[str]:
    """The names of ``relative``, a '/'-separated path below the root ('' or '/': none)."""
    names = [name for name in relative.split("/") if name]
    if any(name in (".", "..") for name in names):
        raise OSError(errno.EINVAL, f"not a path below the base: {relative!r}")
    return names


def open_dir(root: str, names: list[str], *, create: bool = False) -> int:
    """A descriptor of directory ``root/names...``; with ``create`` the missing directories
    are made (mode 0777 less the umask, as ``mkdir -p`` makes them)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the root as given
    for name in names:
        try:
            try:
                opened = os.open(name, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                opened = os.open(name, _DIR, dir_fd=fd)
        finally:
            os.close(fd)
        fd = opened
    return fd


def open_beneath(root: str, relative: str, flags: int) -> int:
    """A descriptor of ``relative`` below ``root`` opened with ``flags`` (and
    ``O_NOFOLLOW``); the root itself when ``relative`` is empty."""
    names = split(relative)
    if not names:
        return open_dir(root, [])
    parent = open_dir(root, names[:-1])
    try:
        return os.open(names[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    finally:
        os.close(parent)
