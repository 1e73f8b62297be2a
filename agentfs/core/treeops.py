"""Tree operations written once over the file API, for ``Workspace`` and ``LayeredWorkspace``.

Both expose the same per-path calls; walking a tree and copying a file or a tree are sequences
of those calls, so they live here rather than as a method copied into each class.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from typing import Protocol

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.core.inodes import DirEntry, Stat


class Tree(Protocol):
    """The per-path calls a walk, a copy and the skills catalog need."""

    def scandir(self, path: str = "/") -> list[DirEntry]: ...
    def listdir(self, path: str = "/") -> list[str]: ...
    def stat(self, path: str, *, follow_symlinks: bool = True) -> Stat: ...
    def lstat(self, path: str) -> Stat: ...
    def read(
        self, path: str, offset: int = 0, length: int | None = None, *, track: bool = True
    ) -> bytes: ...
    def write(
        self, path: str, data: bytes | str, *, parents: bool = False, mode: int = 0o644
    ) -> Stat: ...
    def mkdir(
        self, path: str, mode: int = 0o755, *, parents: bool = False, exist_ok: bool = False
    ) -> Stat: ...
    def symlink(self, target: str, path: str) -> Stat: ...
    def readlink(self, path: str) -> str: ...
    def realpath(self, path: str) -> str: ...
    def chmod(self, path: str, mode: int) -> None: ...


def exists(tree: Tree, path: str) -> bool:
    """True when ``path`` names something, following symlinks (like ``os.path.exists``):
    False for a missing name, a file where a directory was needed, or a symlink loop."""
    try:
        tree.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return False
        raise
    return True


def walk(tree: Tree, top: str = "/") -> Iterator[tuple[str, list[str], list[str]]]:
    """Like ``os.walk`` top-down: (dirpath, dirnames, filenames), names sorted.

    Symlinks (to directories too) are listed in filenames and never descended into, so a
    walk always terminates. Prune by editing ``dirnames`` in place, as with ``os.walk``.
    """
    stack = [paths.normalize(top)]
    while stack:
        current = stack.pop()
        entries = tree.scandir(current)
        dirnames = [e.name for e in entries if e.is_dir()]
        filenames = [e.name for e in entries if not e.is_dir()]
        yield current, dirnames, filenames
        stack.extend(paths.join(current, name) for name in reversed(dirnames))


def copy(tree: Tree, src: str, dst: str, *, recursive: bool) -> None:
    """Copy the file ``src`` (bytes and mode, a symlink followed) or, with ``recursive``, the
    directory tree ``src`` to ``dst``. The caller holds the transaction."""
    st = tree.stat(src)
    if not st.is_dir():
        _copy_file(tree, src, dst, st.st_mode)
        return
    if not recursive:
        raise fs_error(errno.EISDIR, src, "use recursive=True to copy a directory")
    # compared on symlink-free paths, so a route into src through a symlink is caught too
    if paths.is_within(tree.realpath(paths.parent_and_name(dst)[0]), tree.realpath(src)):
        raise fs_error(errno.EINVAL, dst, f"cannot copy {src} into itself")
    copy_tree(tree, src, dst)


def copy_tree(tree: Tree, src: str, dst: str) -> None:
    """Copy directory ``src`` to a new ``dst``: modes kept, symlinks copied as symlinks, hard
    links not kept. The caller holds the transaction and has refused a copy into itself.
    Each directory is made before what it holds, from a stack (a tree may be deeper than
    Python's recursion limit)."""
    pending = [(src, dst)]
    while pending:
        source, target = pending.pop()
        tree.mkdir(target, tree.stat(source).st_mode & 0o7777)
        for entry in tree.scandir(source):
            s, d = paths.join(source, entry.name), paths.join(target, entry.name)
            if entry.is_dir():
                pending.append((s, d))
            elif entry.is_symlink():
                tree.symlink(tree.readlink(s), d)
            else:
                _copy_file(tree, s, d, tree.lstat(s).st_mode)


def _copy_file(tree: Tree, src: str, dst: str, mode: int) -> None:
    tree.write(dst, tree.read(src))
    tree.chmod(dst, mode)
