"""A real FUSE mount of a fresh workspace, served by ``agentfs mount --foreground`` in its own
process (as users run it), unmounted after the test; the workspace must then be fsck-clean."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck


def _missing() -> str | None:
    """Why this machine cannot mount, or None."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is missing (Debian package fuse3; make test installs it)"
    if importlib.util.find_spec("pyfuse3") is None:
        return "pyfuse3 is not installed (the 'mount' extra; make test installs it)"
    return None


def _mounted(mountpoint: Path) -> bool:
    real = os.path.realpath(mountpoint)
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        return any(line.split()[4] == real for line in table)


#: How long an unmounted daemon may take to exit before the test fails.
EXIT_TIMEOUT = 120


@dataclass
class Mounted:
    """A mounted workspace: its file, the directory, and the serving process."""

    db: Path
    dir: Path
    process: subprocess.Popen[bytes]
    log: Path

    def unmount(self) -> None:
        busy = ""
        if _mounted(self.dir):
            done = subprocess.run(
                ["fusermount3", "-u", str(self.dir)], check=False, capture_output=True, text=True
            )
            busy = done.stderr
        try:
            # it commits what is open and purges what was deleted first: after an rm -rf of
            # thousands of files on a loaded machine that has taken over 30 s
            self.process.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGABRT)  # faulthandler writes every stack to the log
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            subprocess.run(["fusermount3", "-uz", str(self.dir)], check=False)
            raise AssertionError(
                f"the mount did not exit in {EXIT_TIMEOUT} s: {busy} {self.log.read_text()}"
            ) from None

    def kill(self) -> None:
        """kill -9 the daemon and detach what it leaves (the crash case)."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        subprocess.run(["fusermount3", "-uz", str(self.dir)], check=False, capture_output=True)


def start_mount(db: Path, mountpoint: Path, *args: str, via_cli: bool = False) -> Mounted:
    """The mount daemon (``python -m agentfs.mountd DB DIR ARGS``) in a child process, once it
    is mounted; ``via_cli``: ``agentfs mount DB DIR ARGS --foreground`` instead."""
    reason = _missing()
    if reason is not None:
        pytest.skip(f"no FUSE mount on this machine: {reason}")
    mountpoint.mkdir(exist_ok=True)
    log = mountpoint.parent / f"{mountpoint.name}.log"
    program = ["agentfs.cli", "mount"] if via_cli else ["agentfs.mountd"]
    command = [sys.executable, "-m", *program, str(db), str(mountpoint), *args]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*command, "--foreground"] if via_cli else command,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONFAULTHANDLER": "1"},  # a hang at exit shows its stacks
        )
    deadline = time.monotonic() + 30
    while not _mounted(mountpoint):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"not mounted: {log.read_text()}")
        time.sleep(0.02)
    return Mounted(db, mountpoint, process, log)


@contextmanager
def fresh_mount(
    base: Path,
    *options: str,
    populate: Callable[[agentfs.Workspace], object] | None = None,
    via_cli: bool = False,
) -> Iterator[Mounted]:
    """A new workspace in ``base`` (given its first files by ``populate``) mounted on
    ``base/mnt`` with ``options``; after the unmount the mount must have logged no traceback
    and the workspace must be fsck-clean."""
    db = base / "ws.db"
    with agentfs.open(db) as ws:
        if populate is not None:
            populate(ws)
    m = start_mount(db, base / "mnt", *options, via_cli=via_cli)
    try:
        yield m
    finally:
        m.unmount()
    assert "Traceback" not in m.log.read_text(), m.log.read_text()
    with agentfs.open(db) as ws:
        report = fsck.check(ws)
        assert report.clean, report.problems


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[Mounted]:
    """A fresh workspace mounted on ``tmp_path/mnt`` for one test (``fresh_mount``)."""
    with fresh_mount(tmp_path) as m:
        yield m


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where a command's copies are made ($TMPDIR): a directory of the test's own, to see
    each one go."""
    where = tmp_path / "scratch"
    where.mkdir()
    monkeypatch.setenv("TMPDIR", str(where))
    return where


def close_checked(ws: agentfs.Workspace, scratch: Path) -> None:
    """After a copy test: the workspace fsck-clean, then closed, and every copy made in
    ``scratch`` removed."""
    report = fsck.check(ws)
    ws.close()
    assert report.clean, report.problems
    assert list(scratch.iterdir()) == []
