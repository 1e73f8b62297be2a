"""Running a command in a copy of the workspace, where it cannot be mounted or a copy is asked for.

The workspace directory is written into a fresh private directory (``hosttree.export``), the
command runs there exactly as in a mount (``run_in_directory``), and what the copy holds when
it ends is carried back in one transaction (``copyback``), as a mount keeps what a command
wrote before it died; the copy is deleted whatever happens (docs/mount.md).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from agentfs.core import paths
from agentfs.core.fs import FileSystem
from agentfs.core.inodes import S_IFMT, S_IFREG
from agentfs.mount import hosttree
from agentfs.mount.copyback import copy_back
from agentfs.mount.copyrules import CopyJudge
from agentfs.mount.exec import CommandResult, RunOptions, run_in_directory
from agentfs.mount.identity import host_identity, switches_user
from agentfs.mount.sandbox import scratch_parent

#: Where the copy goes by preference: a memory filesystem, where making a file costs a few
#: microseconds against up to a millisecond on a disk's /tmp (thousands are made per run).
MEMORY_DIR = "/dev/shm"


def run_in_copy(
    fs: FileSystem,
    command: str | Sequence[str],
    *,
    root: str = "/",
    options: RunOptions,
) -> CommandResult:
    """Run ``command`` in a copy of the workspace directory ``root`` and carry its changes
    back (the arguments are ``run_command``'s). The result's ``mode`` is ``"copy"``; it lists
    the paths another process changed meanwhile (``conflicts``: the command's result won) and
    what could not be carried either way (``skipped``), and what the rules refused
    (``denied``, ``denied_total``)."""
    top = paths.normalize(root)
    rules = options.rules
    judge = CopyJudge(fs, top, rules) if rules is not None and rules.restricts else None
    parent = _copy_parent(fs)
    if options.sandbox:
        parent = scratch_parent(parent)
    scratch = Path(tempfile.mkdtemp(prefix="agentfs-exec-", dir=parent))
    try:
        tree = scratch / "workspace"
        tree.mkdir()
        exported = hosttree.export(fs, top, tree, judge.hidden if judge is not None else None)
        if options.sandbox:
            _hand_over(scratch)
        before = hosttree.scan(tree)
        hosttree.wait_for_clock(scratch / "clock", before)
        result = run_in_directory(tree, command, options)
        after = hosttree.scan(tree, restore=False)
        back = copy_back(fs, top, tree, exported, before, after, judge)
    finally:
        hosttree.remove(scratch)
    return replace(
        result,
        mode="copy",
        conflicts=tuple(back.conflicts),
        skipped=tuple(exported.skipped + back.skipped),
        denied=tuple(judge.refusals.shown) if judge is not None else (),
        denied_total=judge.refusals.total if judge is not None else 0,
    )


def _hand_over(scratch: Path) -> None:
    """Give the copy to the sandbox's user where that is not us (root's command runs as a
    user of its own), so it can change what the owner could; ownership is not carried back.
    (``chown`` clears setuid and setgid bits, inert in the sandbox anyway: it mounts the copy
    ``nosuid``.)"""
    if not switches_user():
        return
    uid, gid = host_identity()  # once, not a system call per file
    for top, dirs, files in os.walk(scratch):
        for name in dirs + files:
            os.lchown(os.path.join(top, name), uid, gid)
    os.lchown(scratch, uid, gid)  # last: until now only root could reach what was handed over


def _copy_parent(fs: FileSystem) -> str | None:
    """Where to make the copy: ``$TMPDIR`` when set (the user's choice), else ``MEMORY_DIR``
    when it has room for twice the workspace's file content, else tempfile's default."""
    chosen = os.environ.get("TMPDIR")
    if chosen:
        return chosen
    try:
        room = os.statvfs(MEMORY_DIR)
    except OSError:
        return None
    content = fs.conn.execute(
        f"SELECT coalesce(sum(size), 0) FROM fs_inode WHERE mode & {S_IFMT} = {S_IFREG}"
    ).get
    if os.access(MEMORY_DIR, os.W_OK | os.X_OK) and room.f_bavail * room.f_frsize > 2 * content:
        return MEMORY_DIR
    return None
