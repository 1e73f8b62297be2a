"""Carrying what a command changed in a copy of the workspace back into it, in one transaction
(``agentfs.mount.copyexec``).

Two ``lstat`` scans of the copy, before and after the command, tell what changed (ctime cannot
be set by a program, so no change is missed and no untouched file is read), and the changes are
applied through the workspace's own calls, so versions, indexing and history see them as from
the API. Where another process changed the same path meanwhile the command wins and the path is
listed in ``conflicts``; under a policy each change is judged first as the operation the mount
would have seen (``CopyJudge``). docs/mount.md, "Running in a copy", has the whole procedure.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentfs.core.fs import FileSystem
from agentfs.core.inodes import S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, Stat
from agentfs.mount.copyrules import CopyJudge, Refused
from agentfs.mount.hosttree import (
    Exported,
    HostEntry,
    Tree,
    digest_of,
    host_xattrs,
    join,
    read_blocks,
    shown,
)


@dataclass
class CopiedBack:
    """What copying back found.

    Attributes:
        conflicts: paths another process changed too, which now hold the command's result.
        skipped: one ``"path: reason"`` line per change the workspace could not take.
    """

    conflicts: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


@dataclass
class _Diff:
    """The command's changes, by path relative to the top of the copy."""

    deleted: list[str] = field(default_factory=list)  # gone, or replaced by another type
    put: list[str] = field(default_factory=list)  # created or changed, parents first
    new_content: set[str] = field(default_factory=set)  # files whose bytes are new
    dirs: set[str] = field(default_factory=set)  # directories whose mode or times to set
    #: files and directories whose attributes changed: what the workspace had, what to set
    xattrs: dict[str, tuple[dict[str, bytes], dict[str, bytes]]] = field(default_factory=dict)


def _kind(mode: int) -> int:
    return mode & S_IFMT


def _quick(entry: HostEntry) -> tuple[int, int, int, int, int]:
    """What the quick check compares (see the module docstring)."""
    return (entry.ino, entry.size, entry.mode, entry.mtime_ns, entry.ctime_ns)


def _diff(host: Path, exported: Exported, before: Tree, after: Tree) -> _Diff:
    """What the command changed between the scans ``before`` and ``after`` of ``host``."""
    out = _Diff()
    for rel, was in before.items():
        now = after.get(rel)
        if rel and (now is None or _kind(now.mode) != _kind(was.mode)):
            out.deleted.append(rel)
    for rel in sorted(after):
        new, old = after[rel], before.get(rel)
        if old is not None and _kind(old.mode) != _kind(new.mode):
            old = None  # a new entry of another type
        if old is not None and _quick(old) == _quick(new):
            continue  # untouched (see the module docstring)
        if _kind(new.mode) in (S_IFREG, S_IFDIR):  # a new entry starts with none
            had = exported.xattrs.get(rel, {}) if old is not None else {}
            has = host_xattrs(host / rel)
            if has != had:
                out.xattrs[rel] = (had, has)
        if _kind(new.mode) == S_IFDIR:
            if old is None:
                out.put.append(rel)
            if old is None or (old.mode, old.mtime_ns) != (new.mode, new.mtime_ns):
                out.dirs.add(rel)
            continue
        kind = _kind(new.mode)
        if kind in (S_IFREG, S_IFLNK) and (
            old is None
            or new.size != old.size
            or digest_of(host / rel) != exported.digests.get(rel)
        ):
            out.new_content.add(rel)
        elif (
            old is not None
            and (old.mode, old.mtime_ns, old.rdev) == (new.mode, new.mtime_ns, new.rdev)
            and (kind != S_IFREG or old.ino == new.ino)  # a file's links may have changed
        ):
            continue  # only its ctime or link count moved: nothing to carry
        out.put.append(rel)
    out.deleted.sort(reverse=True)  # children before their directory
    for rel in (*out.deleted, *out.put):  # their directories' times changed too
        parent = rel.rpartition("/")[0]
        if parent in after and _kind(after[parent].mode) == S_IFDIR:
            out.dirs.add(parent)
    return out


def _moved(entry: HostEntry) -> tuple[int, int, int]:
    """What a renamed entry keeps: its inode, type and, but for a directory (whose mtime moves
    with what is put in or taken out), its mtime: an inode number the command freed and the
    filesystem gave a new file comes with a new mtime."""
    kind = _kind(entry.mode)
    return (entry.ino, kind, 0 if kind == S_IFDIR else entry.mtime_ns)


def _fingerprint(st: Stat | None) -> tuple[int, int, int, int, int] | None:
    """What tells whether another process changed an entry since the copy was made."""
    if st is None:
        return None
    return (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class _Applier:
    """One copy-back: the workspace calls for a diff, inside the caller's transaction."""

    def __init__(
        self,
        fs: FileSystem,
        top: str,
        host: Path,
        before: Tree,
        after: Tree,
        diff: _Diff,
        judge: CopyJudge | None,
    ) -> None:
        self.fs, self.top, self.host = fs, top, host
        self.before, self.after, self.diff = before, after, diff
        self.judge = judge
        self.result = CopiedBack()
        self.blocked: set[str] = set()  # relative paths not carried: skip what is below
        self.refused: set[str] = set()  # relative paths the judge refused
        # A hard-linked host inode -> a workspace path that is (or will be) that inode: first
        # the names the command changed in place or left alone, then each name written.
        self.links: dict[int, str] = {}
        # (Same kind too: an inode number the command freed may be reused.)
        for rel, new in sorted(after.items()):
            old = before.get(rel)
            if new.nlink > 1 and old and (old.ino, old.mode & S_IFMT) == (new.ino, S_IFREG):
                self.links.setdefault(new.ino, join(top, rel))
        # A host inode -> the new names it has (a rename's other end, for the judge).
        self.new_names: dict[tuple[int, int, int], list[str]] = {}
        for rel, new in after.items() if judge is not None else ():
            old = before.get(rel)
            if rel and (old is None or _moved(old) != _moved(new)):
                self.new_names.setdefault(_moved(new), []).append(rel)
        # New names of what a refused rename keeps where it was: they are refused too.
        self.kept: set[str] = set()
        # Renamed directories the judge refuses whole (see ``_refused_moves``).
        self.moves_refused = self._refused_moves() if judge and judge.judges_paths else set()

    def _refused_moves(self) -> set[str]:
        """The directories the command renamed that the mount would not have renamed (see
        ``CopyJudge.may_move_tree``): their contents stay where they were."""
        assert self.judge is not None
        refused = set()
        for rel in self.diff.deleted:
            was = self.before[rel]
            if _kind(was.mode) != S_IFDIR:
                continue
            for new in self.new_names.get(_moved(was), []):
                if not self.judge.may_move_tree(join(self.top, rel), join(self.top, new)):
                    refused.add(rel)
        return refused

    def run(self, exported: Exported) -> CopiedBack:
        changed_meanwhile = []
        for rel in sorted({*self.diff.deleted, *self.diff.put, *self.diff.xattrs}):
            path = join(self.top, rel)
            try:
                now = self.fs.lstat(path)
            except OSError:  # absent, or a name the workspace cannot hold (skipped below)
                now = None
            if _fingerprint(now) != _fingerprint(exported.states.get(rel)):
                changed_meanwhile.append((rel, path))
        for rel in self.diff.deleted:
            self.step(rel, self.delete)
        for rel in self.diff.put:
            self.step(rel, self.put)
        for rel in sorted(self.diff.dirs, reverse=True):  # after their contents
            self.step(rel, self.directory)
        for rel in sorted(self.diff.xattrs):
            self.step(rel, self.attributes)
        self.result.conflicts = [
            path for rel, path in changed_meanwhile if not self._under(rel, self.refused)
        ]
        return self.result

    @staticmethod
    def _under(rel: str, tops: set[str]) -> bool:
        """Is ``rel`` one of ``tops`` or below one?"""
        return any(rel == top or rel.startswith(f"{top}/") for top in tops)

    def step(self, rel: str, action: Callable[[str, str], None]) -> None:
        """Run one change in a savepoint of its own: one that fails is skipped and reported
        and leaves nothing behind, and what is below it is skipped silently."""
        if rel in self.blocked or (rel and rel.rpartition("/")[0] in self.blocked):
            self.blocked.add(rel)
            return
        path = join(self.top, rel)
        try:
            with self.fs.transaction():
                action(rel, path)
        except Refused:  # counted by the judge
            self.blocked.add(rel)
            self.refused.add(rel)
        except (OSError, ValueError) as exc:  # ValueError: text that is not UTF-8
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.result.skipped.append(f"{shown(path)}: not copied back: {reason}")
            self.blocked.add(rel)

    def existing(self, path: str, kind: int | None) -> Stat | None:
        """What the workspace holds at ``path`` if it is a ``kind``; anything else there is
        removed (None)."""
        try:
            st = self.fs.lstat(path)
        except FileNotFoundError:
            return None
        if kind is not None and _kind(st.st_mode) == kind:
            return st
        # Under path rules a directory goes only once empty (see the module docstring).
        self.fs.remove(path, recursive=self.judge is None or not self.judge.judges_paths)
        return None

    def check(self, op: str, path: str) -> None:
        """Refuse the change unless the policy allows it (without one, all are allowed)."""
        if self.judge is not None:
            self.judge.check(op, path)

    def delete(self, rel: str, path: str) -> None:
        """Remove what is gone; under a policy, one whose host inode the command gave a new
        name was renamed (or linked), and is kept unless the new name may be made too."""
        if self.judge is not None:
            was = self.before[rel]
            moved = self.new_names.get(_moved(was), [])
            also = [name for new in moved for name in self.judge.held(join(self.top, new))]
            if self._under(rel, self.moves_refused) or (moved and not self.judge.may(path, also)):
                self.kept.update(moved)
                self.judge.refuse("rename", path)
            if not moved:
                self.judge.check("rmdir" if _kind(was.mode) == S_IFDIR else "unlink", path)
        self.existing(path, None)

    def put(self, rel: str, path: str) -> None:
        if self.judge is not None and rel in self.kept:
            self.judge.refuse("rename", path)
        new, old = self.after[rel], self.before.get(rel)
        kind = _kind(new.mode)
        if kind == S_IFREG:
            self.file(rel, path, new, old if old and _kind(old.mode) == S_IFREG else None)
            return
        if old is None or _kind(old.mode) != kind:
            self.check({S_IFDIR: "mkdir", S_IFLNK: "symlink"}.get(kind, "mknod"), path)
        else:
            self.check("symlink" if rel in self.diff.new_content else "setattr", path)
        existing = self.existing(path, kind)
        if kind == S_IFDIR:
            if existing is None:
                self.fs.mkdir(path, new.mode & 0o7777)
            return  # its mode and times once its contents are in (``directory``)
        if kind == S_IFLNK:
            if existing is None or rel in self.diff.new_content:
                self.existing(path, None)
                self.fs.symlink(os.readlink(self.host / rel), path)
        elif existing is None or existing.st_rdev != new.rdev:
            self.existing(path, None)
            self.fs.mknod(path, new.mode, new.rdev)
        elif existing.st_mode & 0o7777 != new.mode & 0o7777:
            self.fs.chmod(path, new.mode & 0o7777)
        self.fs.utime(path, (new.atime_ns, new.mtime_ns), follow_symlinks=False)

    def file(self, rel: str, path: str, new: HostEntry, old: HostEntry | None) -> None:
        source = self.links.get(new.ino) if new.nlink > 1 else None
        if source == path:
            source = None
        if source is not None and (old is None or old.ino != new.ino):
            op = "link"  # a new name of a file: judged with the file's names too
        else:
            op = "create" if old is None else "write" if rel in self.diff.new_content else "setattr"
        if self.judge is not None:
            self.judge.check(op, path, self.judge.held(source) if source is not None else ())
        existing = self.existing(path, S_IFREG)
        if source is not None:  # another name of a host inode carried
            if existing is None or existing.st_ino != self.fs.lstat(source).st_ino:
                self.existing(path, None)
                self.fs.link(source, path)
            return  # its content, mode and times are that name's
        if existing is not None and existing.st_nlink > 1 and (old is None or old.ino != new.ino):
            self.fs.remove(path)  # replaced on the host: the other names keep the old inode
            existing = None
        if existing is None or rel in self.diff.new_content:
            if self.judge is not None:
                self.judge.check_size(path, new.size)
            blocks = read_blocks(self.host / rel)
            self.fs.write(path, next(blocks), mode=new.mode & 0o7777)
            for data in blocks:
                self.fs.append(path, data)
        if existing is not None and existing.st_mode & 0o7777 != new.mode & 0o7777:
            self.fs.chmod(path, new.mode & 0o7777)
        self.fs.utime(path, (new.atime_ns, new.mtime_ns))
        if new.nlink > 1:
            self.links[new.ino] = path

    def attributes(self, rel: str, path: str) -> None:
        """Set and remove the attributes the command set, changed and removed."""
        had, now = self.diff.xattrs[rel]
        self.check("setxattr", path)
        for name in had.keys() - now.keys():
            self.fs.removexattr(path, name, follow_symlinks=False)
        for name, value in now.items():
            if had.get(name) != value:
                self.fs.setxattr(path, name, value, follow_symlinks=False)

    def directory(self, rel: str, path: str) -> None:
        new = self.after[rel]
        chmod = self.fs.lstat(path).st_mode & 0o7777 != new.mode & 0o7777
        if self.judge is not None and not self.judge.may(path):
            if chmod:
                self.judge.refuse("setattr", path)
            return  # its times: as the workspace stamped them (see the module docstring)
        if chmod:
            self.fs.chmod(path, new.mode & 0o7777)
        self.fs.utime(path, (new.atime_ns, new.mtime_ns))


def copy_back(
    fs: FileSystem,
    top: str,
    host: Path,
    exported: Exported,
    before: Tree,
    after: Tree,
    judge: CopyJudge | None = None,
) -> CopiedBack:
    """Apply to the workspace directory ``top`` what changed in its copy ``host`` between
    the scans ``before`` and ``after``, in one transaction, what ``judge`` allows of it (the
    module docstring has the rules; the judge counts what it refused)."""
    diff = _diff(host, exported, before, after)
    with fs.transaction():
        return _Applier(fs, top, host, before, after, diff, judge).run(exported)
