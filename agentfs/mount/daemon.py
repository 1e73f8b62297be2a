"""Mounting, serving and unmounting: the process that answers the kernel for one mount.

``serve`` runs pyfuse3's loop on trio in the calling process until the mount goes away
(``fusermount3 -u``, ``agentfs umount``) or SIGINT/SIGTERM arrives, then commits every open
file and unmounts. The mount's source is the workspace file and its type ``fuse.agentfs``, so
``active_mounts`` finds every mount in ``/proc/self/mountinfo`` whichever process made it.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyfuse3
import trio

from agentfs.core.fs import FileSystem
from agentfs.core.inodes import ROOT_INO
from agentfs.mount import loop
from agentfs.mount.group import IDLE
from agentfs.mount.operations import WorkspaceOperations
from agentfs.mount.owners import NO_SWAP, IdSwap
from agentfs.mount.ruled import RuledOperations
from agentfs.mount.rules import MountRules

log = logging.getLogger(__name__)

#: The filesystem type the kernel shows for our mounts (``fuse.<subtype>``).
FSTYPE = "fuse.agentfs"


@dataclass(frozen=True)
class Mount:
    """One active mount, as ``/proc/self/mountinfo`` lists it."""

    source: str  # the workspace file
    mountpoint: str
    options: str


def serve(
    fs: FileSystem,
    mountpoint: str | os.PathLike[str],
    *,
    root: int = ROOT_INO,
    readonly: bool = False,
    allow_other: bool = False,
    timeout: float = 1.0,
    xattrs: bool = True,
    ids: IdSwap = NO_SWAP,
    write_budget: int | None = None,
    source: str | None = None,
    rules: MountRules | None = None,
    report: Path | None = None,
    ready: Callable[[], None] | None = None,
) -> None:
    """Mount ``fs`` (its directory ``root``) on ``mountpoint`` and answer requests until
    unmounted or signalled; ``ready`` is called once the mount is in place. ``xattrs=False``
    answers extended-attribute requests ENOSYS, after which the kernel sends none. ``ids``
    exchanges the owner's ids with a sandboxed command's, ``write_budget`` bounds what it
    may write (``WorkspaceOperations``); ``source`` is what the mount table
    names as its source (default: the workspace file's path; a sandbox's mount says less, as
    its mount table is readable inside). ``rules``: a policy's (``agentfs.mount.ruled``),
    whose refusals are written to ``report`` when the mount ends."""
    make = WorkspaceOperations if rules is None else functools.partial(RuledOperations, rules=rules)
    ops = make(fs, root=root, timeout=timeout, xattrs=xattrs, ids=ids, write_budget=write_budget)
    readonly = readonly or (rules is not None and rules.read_only)
    options = set(pyfuse3.default_options)
    fsname = os.path.abspath(fs.conn.filename) if source is None else source
    # libfuse splits options at commas: escaped, a path cannot add an option of its own
    escaped = fsname.replace("\\", "\\\\").replace(",", "\\,")
    # nosuid and nodev are libfuse's defaults for root too; said here so they stay
    options |= {f"fsname={escaped}", "subtype=agentfs", "nosuid", "nodev"}
    if readonly:
        options.add("ro")
    if allow_other:
        options.add("allow_other")
    loop.install()
    pyfuse3.init(ops, os.fspath(mountpoint), options)
    unmounted = False
    try:
        if ready is not None:
            ready()
        trio.run(_main, ops)
        unmounted = True  # the loop ends by itself only when the kernel unmounted us
    finally:
        try:
            ops.close()
            if report is not None and isinstance(ops, RuledOperations):
                ops.refusals.write(report)
        finally:
            pyfuse3.close(unmount=not unmounted)


async def _main(ops: WorkspaceOperations) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stop_on_signal, nursery.cancel_scope)
        nursery.start_soon(_commit_when_idle, ops)
        # one worker: handlers never await, so a second would only take turns with it
        await pyfuse3.main(min_tasks=1, max_tasks=1)
        nursery.cancel_scope.cancel()


async def _commit_when_idle(ops: WorkspaceOperations) -> None:
    """The mount's timer: an idle group is ended, then what is due is purged (on_idle)."""
    while True:
        await trio.sleep(IDLE)
        try:
            ops.on_idle()
        except Exception:  # a failed commit (a full disk) must not end the mount
            log.exception("group commit failed")


async def _stop_on_signal(scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            pyfuse3.terminate()
            return


def active_mounts() -> list[Mount]:
    """Every agentfs mount the kernel has now."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        for line in table:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == FSTYPE:
                found.append(Mount(_unescape(fields[sep + 2]), _unescape(fields[4]), fields[5]))
    return found


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        text = text.replace(code, char)
    return text


def is_mounted(mountpoint: str | os.PathLike[str]) -> bool:
    real = os.path.realpath(mountpoint)
    return any(m.mountpoint == real for m in active_mounts())


def unmount(mountpoint: str | os.PathLike[str], *, lazy: bool = False) -> None:
    """Unmount an agentfs mount (the daemon then commits and exits); OSError if it is none."""
    real = os.path.realpath(mountpoint)
    if not is_mounted(real):
        raise FileNotFoundError(2, "not an agentfs mount", os.fspath(mountpoint))
    command = [shutil.which("fusermount3") or "fusermount3", "-u"]
    if lazy:
        command.append("-z")
    done = subprocess.run([*command, real], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise OSError(16, done.stderr.strip() or "unmount failed", real)


def wait_until(mountpoint: str | os.PathLike[str], mounted: bool, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``mountpoint`` to be (or stop being) mounted."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_mounted(mountpoint) == mounted:
            return True
        time.sleep(0.02)
    return is_mounted(mountpoint) == mounted


def mountpoint_ready(path: str | os.PathLike[str]) -> Path:
    """The mountpoint as an existing directory (FUSE mounts on nothing else)."""
    target = Path(path)
    if not target.is_dir():
        raise NotADirectoryError(20, "the mountpoint must be a directory", os.fspath(path))
    return target
