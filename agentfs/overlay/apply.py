"""Carrying a workspace's changes back into its base (``agentfs apply``).

Nothing is written unless every host file the changes touch is still what the workspace saw
(``ws_origin``): a file the user changed meanwhile is a conflict, named, and the run writes
nothing (``ours`` overrides the host's side for a path, ``theirs`` takes it into the workspace
instead). Each file is then replaced atomically (a temporary file in the same directory, synced,
renamed over the old), so a kill leaves every host file old or new, never partial. The plan is
recorded first (``ws_apply``): a rerun after a kill recognises what the killed run already
wrote and finishes the job. Afterwards the origins describe the new host files, so the change
list is empty.

What is never applied: ``.agentfs/`` at the root (where the workspace may live), and in any
repository ``hooks/``, ``config`` and a ``.git`` file (``_never``), so an agent cannot plant
code the host will run; the rest of ``.git/`` only with ``include_git``, its objects written
first, its refs, ``HEAD`` and index after, and its deletions last.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import merge3

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.overlay.changes import Change, changes
from agentfs.overlay.host import HostTree

if TYPE_CHECKING:
    from agentfs.workspace import Workspace

#: Why a file the host changed since the workspace read it cannot simply be written.
CHANGED = "changed on the host since the workspace read it"


@dataclass(frozen=True)
class Conflict:
    """A host path the changes would touch that is no longer what the workspace saw."""

    path: str
    reason: str


@dataclass
class Applied:
    """What ``apply`` did (or, with ``dry_run``, would do).

    Attributes:
        written: host paths written (files and symlinks), as workspace paths.
        deleted: host paths deleted.
        taken: paths whose host side was taken into the workspace (``theirs``).
        merged: paths the host changed too, merged three ways (``merge``).
        skipped: paths never applied, with why.
        conflicts: what stopped the run: when not empty, nothing was written.
        dry_run: nothing was written, by request.
    """

    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    taken: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    dry_run: bool = False


@dataclass(frozen=True)
class _Step:
    """One host path to write (``digest``: the new bytes' or target's SHA-256) or delete."""

    path: str
    mode: int | None = None
    digest: bytes | None = None

    @property
    def deletes(self) -> bool:
        return self.mode is None


def apply(
    ws: Workspace,
    only: Sequence[str] = (),
    *,
    dry_run: bool = False,
    include_git: bool = False,
    ours: Iterable[str] = (),
    theirs: Iterable[str] = (),
    merge: bool = False,
    found: Sequence[Change] | None = None,
) -> Applied:
    """Write the workspace's changes (those at or below the paths ``only``, default all)
    into its base; see the module docstring. ``merge``: a text file the host changed too is
    merged three ways (what the workspace saw, its version, the host's), and the merge is
    written to both, unless the same lines changed on both sides. ``found``: the change list,
    when the caller has it (``changes``) already."""
    base = ws.base
    if base is None:
        raise fs_error(errno.EINVAL, str(ws.path), "the workspace has no base (init --base)")
    keep_ours = {paths.normalize(p) for p in ours}
    take_theirs = {paths.normalize(p) for p in theirs}
    result = Applied(dry_run=dry_run)
    merged: dict[str, bytes] = {}  # path: the three-way merge to write in the workspace
    if found is None:
        found = changes(ws, stats=False)
    selected = [c for c in found if not only or any(_within(c, paths.normalize(p)) for p in only)]
    steps: list[_Step] = []
    for change in selected:
        named = filter(None, (change.old_path, change.path))
        refused = [(p, why) for p in named if (why := _never(p, include_git)) is not None]
        if refused:
            result.skipped += refused
            continue
        steps += _steps(ws, change)
    host = HostTree(base.root)
    journal = dict(_journal(ws))
    if journal and not dry_run:
        for directory in {paths.parent_and_name(path)[0] for path in journal}:
            host.sweep(directory)  # what a killed run left
    removed = {s.path for s in steps if s.deletes}
    pending: list[_Step] = []
    for step in steps:
        if _done(host, step, journal):
            continue  # a killed run wrote it
        if step.path in take_theirs:
            result.taken.append(step.path)
            continue
        if step.path not in keep_ours:
            reason = _conflict(ws, host, step, removed)
            if reason == CHANGED and merge:
                together = _merged(ws, host, step.path)
                if together is not None:
                    merged[step.path] = together
                    result.merged.append(step.path)
                    step = _Step(step.path, step.mode, _digest(together))
                    reason = None
                else:
                    reason = CHANGED + "; the same lines changed on both sides (or not text)"
            if reason is not None:
                result.conflicts.append(Conflict(step.path, reason))
        pending.append(step)
    if result.conflicts or dry_run:
        _report(result, steps)
        return result
    taken = set(result.taken)  # settled by taking the host's side: nothing to write
    steps = [
        _Step(s.path, s.mode, _digest(merged[s.path])) if s.path in merged else s
        for s in steps
        if s.path not in taken
    ]
    # a symlink or file of the base deleted where something is written below it goes first,
    # so nothing is written through it; then git's order (a stable sort)
    holding = {d for s in steps if not s.deletes for d in _parents(s.path)}
    pending.sort(
        key=lambda step: (-1, 0) if step.deletes and step.path in holding else _git_order(step)
    )
    with ws.transaction():
        for path in result.taken:
            _take_theirs(ws, host, path)
        for path, data in merged.items():
            ws.write(path, data)  # the workspace holds what the host will
        ws.conn.execute("DELETE FROM ws_apply")
        ws.conn.executemany(
            "INSERT INTO ws_apply(path, hash, mode) VALUES (?, ?, ?)",
            [(s.path.lstrip("/"), s.digest, s.mode) for s in steps],
        )
    for step in pending:
        _write(ws, host, step)
    with ws.transaction():
        for step in steps:
            _settle(ws, host, step)
        ws.conn.execute("DELETE FROM ws_apply")
    _report(result, steps)
    return result


def _within(change: Change, path: str) -> bool:
    return paths.is_within(change.path, path) or (
        change.old_path is not None and paths.is_within(change.old_path, path)
    )


def _never(path: str, include_git: bool) -> str | None:
    """Why ``path`` is never applied (or not without ``include_git``), or None.

    Git runs, or takes settings from, some of what a repository holds, so none of it is
    written into the host, in the project's repository or in any other at any depth: a
    ``hooks/`` directory, ``config`` and ``config.worktree`` (``core.hooksPath``,
    ``core.fsmonitor``, filters and aliases run commands), and a ``.git`` that is a file or a
    symlink (it would point git at another directory, with hooks of the agent's). A lock file
    (``*.lock``) is what a git stopped part-way left behind."""
    if paths.is_within(path, "/.agentfs"):
        return "the workspace's own directory"
    parts = path.split("/")
    if ".git" not in parts:
        return None
    inside = parts[parts.index(".git") + 1 :]
    if not inside:
        return "a .git file or symlink points git elsewhere: never applied"
    if "hooks" in inside or (inside[-1] in ("config", "config.worktree") and "refs" not in inside):
        return "git runs it: never applied"
    if inside[-1].endswith(".lock"):
        return "a lock a stopped git left: never applied"
    if not include_git:
        return "inside .git (include_git to apply it)"
    return None


def _steps(ws: Workspace, change: Change) -> list[_Step]:
    """The host paths ``change`` writes or deletes (a rename: the new one first)."""
    if change.kind == "deleted":
        return [_Step(change.path)]
    st = ws.lstat(change.path)
    if stat.S_ISLNK(st.st_mode):
        content = os.fsencode(ws.readlink(change.path))
    else:
        content = ws.read(change.path, track=False)
    wrote = _Step(change.path, st.st_mode, hashlib.sha256(content).digest())
    return [wrote, _Step(change.old_path)] if change.old_path else [wrote]


def _journal(ws: Workspace) -> list[tuple[str, tuple[bytes | None, int | None]]]:
    rows = ws.conn.execute("SELECT path, hash, mode FROM ws_apply")
    return [("/" + str(p), (h, m)) for p, h, m in rows]  # type: ignore[misc]


def _done(host: HostTree, step: _Step, journal: dict[str, tuple[bytes | None, int | None]]) -> bool:
    """Did a killed run already carry ``step`` out?"""
    planned = journal.get(step.path)
    if planned is None or planned != (step.digest, step.mode):
        return False
    try:
        now = host.digest(step.path)
    except OSError:
        return False
    return now is None if step.deletes else now == step.digest


def _conflict(ws: Workspace, host: HostTree, step: _Step, removed: set[str]) -> str | None:
    """Why ``step`` would overwrite something the workspace did not see, or None.
    ``removed``: the paths the plan deletes (a symlink of the base the workspace replaced
    by a directory is one: what goes below it waits for it to go, as ``apply`` orders the steps)."""
    seen = ws.conn.execute(
        "SELECT size, mtime_ns, host_ino, host_dev, hash FROM ws_origin WHERE path = ?",
        (step.path.lstrip("/"),),
    ).fetchall()
    try:
        found = host.lstat(step.path)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        if any(paths.is_within(step.path, gone) for gone in removed):
            return None  # the symlink or file on the way goes first
        return "a symlink or a file is on the host where the workspace has a directory"
    if found is None:
        if step.deletes or not seen:
            return None
        return "deleted on the host since the workspace read it"
    if not seen:
        if host.digest(step.path) == step.digest:
            return None  # the host made the same file
        return "created on the host since the workspace read its directory"
    size, mtime, ino, dev, digest = seen[0]
    if (found.st_size, found.st_mtime_ns, found.st_ino, found.st_dev) == (size, mtime, ino, dev):
        return None
    if host.digest(step.path) == digest:
        return None
    return CHANGED


def _parents(path: str) -> list[str]:
    """The directories above ``path``, the root left out: ``/a/b/c`` gives ``/a``, ``/a/b``."""
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _git_order(step: _Step) -> tuple[int, int]:
    """Objects before everything (a pack before its index), what points at them (refs,
    ``HEAD``, the index) after every other write, and what a repository deletes (loose objects
    a ``git gc`` packed, an old pack) last: a run killed part-way never leaves a git repository
    whose refs name objects it does not have (a stable sort: a rename still writes its new
    name first)."""
    in_git = "/.git/" in step.path + "/"
    if in_git and step.deletes:
        return 3, 0
    if "/.git/objects/" in step.path:
        return 0, 0 if step.path.endswith(".pack") else 1
    name = step.path.rsplit("/.git/", 1)[-1] if in_git else ""
    if name in ("HEAD", "index", "packed-refs") or name.startswith("refs/"):
        return 2, 0
    return 1, 0


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _merged(ws: Workspace, host: HostTree, path: str) -> bytes | None:
    """The three-way merge of ``path``: what the workspace saw of the host's file (its first
    version in the workspace's history, when that is it), the workspace's text and the host's
    now; None when one of them is not text or the same lines changed on both sides."""
    seen = ws.conn.execute("SELECT hash FROM ws_origin WHERE path = ?", (path.lstrip("/"),)).get
    first = next((v for v in ws.history(path) if v.size is not None), None)
    if first is None or seen is None:
        return None
    base = ws.read_version(path, first.n)
    if _digest(base) != seen:
        return None
    try:
        theirs = host.read(path)
        sides = [data.decode("utf-8") for data in (base, ws.read(path, track=False), theirs)]
    except (OSError, UnicodeDecodeError):
        return None
    base_lines, ours, theirs_lines = (side.splitlines(keepends=True) for side in sides)
    merge = merge3.Merge3(base_lines, ours, theirs_lines)
    if any(region[0] == "conflict" for region in merge.merge_regions()):
        return None
    return "".join(merge.merge_lines()).encode("utf-8")


def _write(ws: Workspace, host: HostTree, step: _Step) -> None:
    """Carry ``step`` out on the host: a deletion, or an atomic replacement."""
    if step.deletes:
        host.unlink(step.path)
        return
    assert step.mode is not None
    if stat.S_ISLNK(step.mode):
        host.replace(step.path, step.mode, os.fsencode(ws.readlink(step.path)), None)
    else:
        mtime = ws.stat(step.path).st_mtime_ns
        host.replace(step.path, step.mode, ws.read(step.path, track=False), mtime)


def _settle(ws: Workspace, host: HostTree, step: _Step) -> None:
    """The origin of ``step``'s path made what the host now holds."""
    key = step.path.lstrip("/")
    if step.deletes:
        ws.conn.execute("DELETE FROM ws_origin WHERE path = ?", (key,))
        return
    now = host.lstat(step.path)
    if now is None:
        raise fs_error(errno.ENOENT, step.path, "the host file just written is gone")
    ino = ws.lstat(step.path).st_ino
    ws.conn.execute(
        "INSERT OR REPLACE INTO ws_origin(path, ino, host_dev, host_ino, mode, size, mtime_ns,"
        " ctime_ns, hash, present) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
        (
            key,
            ino,
            now.st_dev,
            now.st_ino,
            now.st_mode,
            now.st_size,
            now.st_mtime_ns,
            now.st_ctime_ns,
            step.digest,
        ),
    )


def _take_theirs(ws: Workspace, host: HostTree, path: str) -> None:
    """The host's side of ``path`` made the workspace's, and what was seen."""
    found = host.lstat(path)
    if found is None:
        if _lexists(ws, path):
            ws.remove(path)
        ws.conn.execute("DELETE FROM ws_origin WHERE path = ?", (path.lstrip("/"),))
        return
    if stat.S_ISLNK(found.st_mode):
        target = host.readlink(path)
        if _lexists(ws, path):
            ws.remove(path)
        ws.symlink(target, path)
        digest = hashlib.sha256(os.fsencode(target)).digest()
    else:
        data = host.read(path)
        ws.write(path, data, parents=True, mode=stat.S_IMODE(found.st_mode))
        digest = hashlib.sha256(data).digest()
    ws.utime(path, (found.st_atime_ns, found.st_mtime_ns), follow_symlinks=False)
    _settle(ws, host, _Step(path, found.st_mode, digest))


def _lexists(ws: Workspace, path: str) -> bool:
    try:
        ws.lstat(path)
    except FileNotFoundError:
        return False
    return True


def _report(result: Applied, steps: list[_Step]) -> None:
    for step in steps:
        if step.path in result.taken:
            continue
        (result.deleted if step.deletes else result.written).append(step.path)
