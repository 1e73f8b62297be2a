"""A policy's rules where a command runs in a copy: judged at the copy's two ends, not per request.

Copying out, a denied file is left out under every name, so the command cannot tell it from a
file that does not exist; carrying back, each change (``check``) and each file's size
(``check_size``) is judged, and refusals are counted as the mount counts them, so the workspace
ends as the mount would leave it. A copy cannot refuse while the command runs
(docs/policies.md, "Through a copy").
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from typing import NoReturn

from agentfs.core import paths, treeops
from agentfs.core.by_inode import ByInode
from agentfs.core.fs import FileSystem
from agentfs.core.inodes import Stat
from agentfs.db import database_bytes
from agentfs.mount.hosttree import join, shown
from agentfs.mount.rules import MountRules, Refusals


class Refused(PermissionError):
    """A change the rules refused; it is already counted in ``CopyJudge.refusals``."""


class CopyJudge:
    """``rules`` for one command's copy of the workspace directory ``top`` (see the module
    docstring)."""

    def __init__(self, fs: FileSystem, top: str, rules: MountRules) -> None:
        self.fs, self.rules = fs, rules
        self.top = fs.realpath(top)  # rules judge paths free of symlinks, as the mount does
        self.by = ByInode(fs)
        self.refusals = Refusals()
        #: What may still be carried before the workspace passes ``max_workspace_bytes``.
        self.room: int | None = None
        if rules.max_workspace_bytes is not None:
            self.room = rules.max_workspace_bytes - database_bytes(fs.conn)

    @property
    def judges_paths(self) -> bool:
        return self.rules.judges_paths

    def hidden(self, rel: str, st: Stat) -> bool:
        """Is the workspace entry ``st`` at ``rel`` (below ``top``) left out of the copy?"""
        return bool(self.rules.deny) and self.rules.hidden(self.by.names(join(self.top, rel), st))

    def held(self, path: str) -> list[str]:
        """Every name of what the workspace holds at ``path`` now (a final symlink not
        followed); for nothing there, the path alone (symlink-free)."""
        path = paths.normalize(path)
        if path == "/":
            return [path]
        parent, name = paths.parent_and_name(path)
        real = paths.join(self.fs.realpath(parent), name)
        try:
            st = self.fs.lstat(real)
        except (FileNotFoundError, NotADirectoryError):
            return [real]
        return self.by.names(real, st)

    def may(self, path: str, also: Sequence[str] = ()) -> bool:
        """May the entry at ``path`` be changed (made, replaced, removed, given a mode, times
        or attributes)? ``also``: more names that must be writable (a link's file's)."""
        if self.rules.read_only:
            return False
        return not self.judges_paths or self.rules.writable([*self.held(path), *also])

    def may_move_tree(self, old: str, new: str) -> bool:
        """May the workspace directory ``old`` become ``new``, everything in it judged at its
        old path and its new one, what the command was not shown included? (The mount's rule
        for renaming a directory; one no longer there is judged by what the command did.)"""
        try:
            for parent, dirnames, filenames in treeops.walk(self.fs, old):
                for name in [*dirnames, *filenames]:
                    path = paths.join(parent, name)
                    if not self.may(path, self.held(new + path[len(old) :])):
                        return False
        except (FileNotFoundError, NotADirectoryError):
            pass
        return True

    def check(self, op: str, path: str, also: Sequence[str] = ()) -> None:
        """Refuse (``Refused``) the change ``op`` to ``path`` unless it ``may`` be made."""
        if not self.may(path, also):
            self.refuse(op, path)

    def check_size(self, path: str, size: int) -> None:
        """Refuse carrying ``size`` bytes of content to ``path`` past either size limit, and
        count them against ``max_workspace_bytes`` otherwise."""
        most = self.rules.max_file_bytes
        if most is not None and size > most:
            self.refuse("write", path, errno.EFBIG)
        if self.room is not None:
            if size > self.room:
                self.refuse("write", path, errno.ENOSPC)
            self.room -= size

    def refuse(self, op: str, path: str, code: int = errno.EACCES) -> NoReturn:
        self.refusals.add(op, shown(path))
        raise Refused(code, os.strerror(code), path)
