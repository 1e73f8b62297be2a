"""A mount that applies a policy (``agentfs.mount.rules``): what a command sees and may change
through it is what the tools may (docs/policies.md, "Through the mount").

Every request that names a file is judged on all of that file's names: a denied file is absent
(``lookup`` and ``readdir`` never show it), and a change to it or outside the allow list is
EACCES. ``open`` and every change judge the file again, and each refusal is kept
(``Refusals``) for the command's result and its audit row.
"""

from __future__ import annotations

import errno
import os
from typing import Any, NoReturn

import pyfuse3

from agentfs.core import paths, treeops
from agentfs.core.fs import FileSystem
from agentfs.core.inodes import Stat, is_dir
from agentfs.db import database_bytes
from agentfs.mount.operations import Child, WorkspaceOperations, fuse_errors
from agentfs.mount.rules import MountRules, Refusals


class RuledOperations(WorkspaceOperations):
    """``WorkspaceOperations`` under ``rules`` (see the module docstring)."""

    def __init__(self, fs: FileSystem, rules: MountRules, **options: Any) -> None:
        super().__init__(fs, **options)
        self.rules = rules
        self.refusals = Refusals()
        #: What may still be written before the workspace passes ``max_workspace_bytes``:
        #: its size now less every byte written since (what is overwritten or deleted is not
        #: given back; the bytes of open files are committed when they close).
        self.room: int | None = None
        if rules.max_workspace_bytes is not None:
            self.room = rules.max_workspace_bytes - database_bytes(fs.conn)

    # --- judging -----------------------------------------------------------------------------

    def _refuse(self, op: str, path: str, code: int = errno.EACCES) -> NoReturn:
        self.refusals.add(op, path)
        raise pyfuse3.FUSEError(code)

    def _change(self, op: str, path: str, st: Stat | None) -> None:
        """Refuse changing the file at ``path`` (None: a new one) unless every name may."""
        names = [path] if st is None else self.by.names(path, st)
        if not self.rules.writable(names):
            self._refuse(op, path)

    def _change_inode(self, op: str, inode: int) -> None:
        if self.rules.judges_paths:
            self._change(op, self._path(inode), self.by.stat(self._ino(inode)))

    def _path(self, kernel_ino: int) -> str:
        """The path of the kernel's inode ``kernel_ino``, which the rules judge."""
        path = self.by.path_of(self._ino(kernel_ino))
        if path is None:
            raise OSError(errno.ENOENT, "no such file", f"inode {kernel_ino}")
        return path

    def _change_child(self, op: str, parent_inode: int, name: bytes) -> None:
        if self.rules.judges_paths:
            child = self._child(parent_inode, name)
            self._change(op, self._where(child), self.by.lookup(*child))

    def _where(self, child: Child) -> str:
        """The path of the name ``child``, which the rules judge."""
        with self.fs.read_transaction():
            return self.fs.path_in(*child)

    def _listed(self, parent: int, name: str, st: Stat) -> bool:
        if not self.rules.deny:
            return True
        parent_path = self.by.path_of(parent)
        if parent_path is None:
            return False
        return not self.rules.hidden(self.by.names(paths.join(parent_path, name), st))

    def _found(self, parent: int, name: str, st: Stat) -> bool:
        """A hidden name looked up is absent (ENOENT), and counted as refused."""
        if self._listed(parent, name, st):
            return True
        self.refusals.add("lookup", paths.join(self.by.path_of(parent) or "", name))
        return False

    # --- reading the tree ----------------------------------------------------------------------

    @fuse_errors
    async def open(self, inode: int, flags: int, ctx: pyfuse3.RequestContext) -> pyfuse3.FileInfo:
        if self.rules.judges_paths:
            path, st = self._path(inode), self.by.stat(self._ino(inode))
            names = self.by.names(path, st)
            if self.rules.hidden(names):
                self._refuse("open", path, errno.ENOENT)
            writing = flags & os.O_ACCMODE != os.O_RDONLY or flags & os.O_TRUNC
            if writing and not self.rules.writable(names):
                self._refuse("open for writing", path)
        return await super().open(inode, flags, ctx)

    # --- changing the tree ---------------------------------------------------------------------

    @fuse_errors
    async def mkdir(
        self, parent_inode: int, name: bytes, mode: int, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        self._change_child("mkdir", parent_inode, name)
        return await super().mkdir(parent_inode, name, mode, ctx)

    @fuse_errors
    async def mknod(
        self, parent_inode: int, name: bytes, mode: int, rdev: int, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        self._change_child("mknod", parent_inode, name)
        return await super().mknod(parent_inode, name, mode, rdev, ctx)

    @fuse_errors
    async def symlink(
        self, parent_inode: int, name: bytes, target: bytes, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        self._change_child("symlink", parent_inode, name)
        return await super().symlink(parent_inode, name, target, ctx)

    @fuse_errors
    async def create(
        self, parent_inode: int, name: bytes, mode: int, flags: int, ctx: pyfuse3.RequestContext
    ) -> tuple[pyfuse3.FileInfo, pyfuse3.EntryAttributes]:
        self._change_child("create", parent_inode, name)
        return await super().create(parent_inode, name, mode, flags, ctx)

    @fuse_errors
    async def link(
        self, inode: int, new_parent_inode: int, new_name: bytes, ctx: pyfuse3.RequestContext
    ) -> pyfuse3.EntryAttributes:
        """A new name for a file: the file and the new name both judged."""
        if self.rules.judges_paths:
            new = self._where(self._child(new_parent_inode, new_name))
            path, st = self._path(inode), self.by.stat(self._ino(inode))
            if not self.rules.writable([*self.by.names(path, st), new]):
                self._refuse("link", new)
        return await super().link(inode, new_parent_inode, new_name, ctx)

    @fuse_errors
    async def unlink(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        self._change_child("unlink", parent_inode, name)
        await super().unlink(parent_inode, name, ctx)

    @fuse_errors
    async def rmdir(self, parent_inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        self._change_child("rmdir", parent_inode, name)
        await super().rmdir(parent_inode, name, ctx)

    @fuse_errors
    async def rename(
        self,
        parent_inode_old: int,
        name_old: bytes,
        parent_inode_new: int,
        name_new: bytes,
        flags: int,
        ctx: pyfuse3.RequestContext,
    ) -> None:
        """Both ends judged, the one replaced too; a directory's whole tree at its old and
        new paths, as everything in it gets a new name."""
        if self.rules.judges_paths:
            old = self._child(parent_inode_old, name_old)
            new = self._child(parent_inode_new, name_new)
            old_path, new_path = self._where(old), self._where(new)
            st = self.by.lookup(*old)
            self._change("rename", old_path, st)
            self._change("rename", new_path, self.by.lookup(*new))
            if st is not None and is_dir(st.st_mode):
                self._change_tree(old_path, new_path)
            if flags & pyfuse3.RENAME_EXCHANGE:
                moved = self.by.lookup(*new)
                if moved is not None and is_dir(moved.st_mode):
                    self._change_tree(new_path, old_path)
        await super().rename(parent_inode_old, name_old, parent_inode_new, name_new, flags, ctx)

    def _change_tree(self, old: str, new: str) -> None:
        for dirpath, dirnames, filenames in treeops.walk(self.fs, old):
            for name in [*dirnames, *filenames]:
                path = paths.join(dirpath, name)
                moved = new + path[len(old) :]
                st = self.fs.lstat(path)
                if not self.rules.writable([*self.by.names(path, st), moved]):
                    self._refuse("rename", path)

    @fuse_errors
    async def setattr(
        self,
        inode: int,
        attr: pyfuse3.EntryAttributes,
        fields: pyfuse3.SetattrFields,
        fh: int | None,
        ctx: pyfuse3.RequestContext,
    ) -> pyfuse3.EntryAttributes:
        self._change_inode("setattr", inode)
        most = self.rules.max_file_bytes
        if fields.update_size and most is not None and attr.st_size > most:
            self._refuse("truncate", self._path(inode), errno.EFBIG)
        return await super().setattr(inode, attr, fields, fh, ctx)

    @fuse_errors
    async def setxattr(
        self, inode: int, name: bytes, value: bytes, ctx: pyfuse3.RequestContext
    ) -> None:
        self._change_inode("setxattr", inode)
        await super().setxattr(inode, name, value, ctx)

    @fuse_errors
    async def removexattr(self, inode: int, name: bytes, ctx: pyfuse3.RequestContext) -> None:
        self._change_inode("removexattr", inode)
        await super().removexattr(inode, name, ctx)

    # --- file content --------------------------------------------------------------------------

    @fuse_errors
    async def write(self, fh: int, off: int, buf: bytes) -> int:
        """A file may not grow past ``max_file_bytes`` (EFBIG), nor the workspace past
        ``max_workspace_bytes`` (ENOSPC: the database's size, as a tool call's limit is;
        ``room``)."""
        most = self.rules.max_file_bytes
        if most is not None and off + len(buf) > most:
            self._refuse("write", self._handle_path(fh), errno.EFBIG)
        if self.room is not None:
            if len(buf) > self.room:
                self._refuse("write", self._handle_path(fh), errno.ENOSPC)
            self.room -= len(buf)
        return await super().write(fh, off, buf)

    def _handle_path(self, fh: int) -> str:
        return self.by.path_of(self.files.handle(fh).ino) or f"(inode {fh})"
