"""Running a command in a mounted workspace, optionally inside a bubblewrap sandbox.

``run_command`` mounts the workspace on a fresh temporary directory (the daemon
``agentfs.mountd``), runs the command there and unmounts whatever happens; everything the
command started ends with it (the sandbox's PID namespace, or ``agentfs.mount.reaper``), and
output is captured up to a cap per stream. Without ``sandbox`` there is no isolation
(docs/mount.md, "exec"; docs/security.md). Rewinding is the caller's part: it takes a snapshot
first.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from agentfs.mount.daemon_args import MountOptions
from agentfs.mount.daemon_args import start as start_daemon
from agentfs.mount.identity import hand_over, host_identity, switches_user
from agentfs.mount.owners import NO_SWAP, IdSwap
from agentfs.mount.rules import MountRules
from agentfs.mount.sandbox import Limits, Sandbox, scratch_parent

#: Environment variables an unsandboxed command does not inherit: agentfs's own settings
#: and the sync server's tokens.
SECRET_PREFIXES = ("AGENTFS_", "TURSO_", "LIBSQL_")
#: Runs an unsandboxed command and ends what it leaves behind (``agentfs.mount.reaper``).
REAPER = Path(__file__).with_name("reaper.py")
#: How long the command's guard has to end everything after a timeout, before SIGKILL.
KILL_GRACE = 5.0
#: What the mount table inside a sandbox names as the workspace's source (not its path).
SANDBOX_SOURCE = "agentfs"
#: How long the mount may take to appear.
MOUNT_TIMEOUT = 30.0
#: How a command sees the workspace: mounted (FUSE), or a copy carried back afterwards.
Mode = Literal["mount", "copy"]
#: What marks cut output.
TRUNCATED = "\n... [output truncated]\n"


@dataclass(frozen=True)
class CommandResult:
    """What a command did (the shape of the ``execute_command`` tool's result).

    ``mode`` says how it ran: in a mount, or in a copy whose changes were carried back
    (``agentfs.mount.copyexec``); a copy also lists the paths another process changed
    meanwhile, now holding the command's result (``conflicts``), and entries not carried
    either way (``skipped``, ``"path: reason"``)."""

    stdout: str
    stderr: str
    exit_code: int
    duration_ms: int
    timed_out: bool
    aborted: bool
    stdout_truncated: bool
    stderr_truncated: bool
    snapshot: str | None = None
    mode: Mode = "mount"
    conflicts: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    #: The kernel killed a process of the command: all of them together reached the
    #: sandbox's memory limit (``Limits.memory_mb``, where a memory cgroup bounds it).
    out_of_memory: bool = False
    #: What the policy's rules refused, through the mount or carrying a copy back
    #: (``"op path"``, the first ``agentfs.mount.rules.REPORTED``), and how many in all.
    denied: tuple[str, ...] = ()
    denied_total: int = 0

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class MountError(OSError):
    """The workspace could not be mounted for the command."""


@dataclass(frozen=True)
class RunOptions:
    """How a command runs, whether the workspace is mounted for it or copied (``ws.run`` has
    the meaning of each)."""

    cwd: str | None = None
    sandbox: bool = False
    network: bool = False
    timeout: float | None = None
    env: Mapping[str, str] | None = None
    max_output: int | None = None
    capture: bool = True
    limits: Limits = field(default_factory=Limits)
    #: The workspace owner's (uid, gid): a sandboxed command is shown their files as its own.
    owner: tuple[int, int] | None = None
    #: A policy's rules, applied by the mount (``agentfs.mount.ruled``).
    rules: MountRules | None = None
    #: Who runs the command, and in which thread: the versions it writes name them.
    actor: str | None = None
    thread: str | None = None


def fuse_available() -> str | None:
    """Why a mount cannot be made here (None: it can)."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing"
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        return "/dev/fuse is not open to this user (most hosts make it mode 0666)"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is missing (Debian package fuse3)"
    if importlib.util.find_spec("pyfuse3") is None:
        return "pyfuse3 is not installed (the 'mount' extra)"
    return None


def run_command(
    workspace: str | os.PathLike[str],
    command: str | Sequence[str],
    *,
    root: str = "/",
    options: RunOptions,
) -> CommandResult:
    """Run ``command`` (a shell string, or an argument list) in the workspace mounted on a
    temporary directory; ``options.cwd`` is relative to the mounted ``root``. ``capture``
    False lets the command use this process's terminal (``agentfs exec``); the result's
    output is then empty. Raises ``MountError`` when the mount cannot be made."""
    reason = fuse_available()
    if reason is not None:
        raise MountError(f"cannot mount the workspace: {reason}")
    where = scratch_parent(None) if options.sandbox else None
    with tempfile.TemporaryDirectory(prefix="agentfs-exec-", dir=where) as tmp:
        mountpoint = Path(tmp) / "workspace"
        mountpoint.mkdir()
        report = Path(tmp) / "refused.json"  # beside the mount: the command never sees it
        mount = _mount_options(root, options, report)
        daemon = _mount(workspace, mountpoint, mount)
        if options.sandbox:  # mounted: nothing left to swap under us
            hand_over(Path(tmp))
        try:
            result = run_in_directory(mountpoint, command, options)
        finally:
            _unmount(mountpoint, daemon)
        return result if mount.rules is None else _with_refusals(result, report)


def _with_refusals(result: CommandResult, report: Path) -> CommandResult:
    """``result`` with what the mount's rules refused (its report, written as it ended)."""
    try:
        refused = json.loads(report.read_text())
    except (OSError, ValueError) as exc:  # the mount died before it could say
        raise MountError(f"the mount left no report of what its rules refused: {exc}") from None
    return replace(
        result, denied=tuple(refused["denied"]), denied_total=int(refused["denied_total"])
    )


def run_in_directory(
    directory: Path, command: str | Sequence[str], options: RunOptions
) -> CommandResult:
    """Run ``command`` with ``directory`` as the workspace (a mount, or a copy): ``cwd``
    relative to it, under bubblewrap with it at ``/workspace`` when ``sandbox``. Both ways of
    running a command share this, so they behave the same."""
    o = options
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    if not o.sandbox:
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_PREFIXES)}
        env = inherited | dict(o.env or {})
        cwd = Path(directory, (o.cwd or "").lstrip("/"))
        _check_program(argv[0], cwd, env.get("PATH", os.defpath))
        reaped = [sys.executable, "-I", "-S", str(REAPER), *argv]
        return _run(reaped, {"cwd": cwd, "env": env}, _Reaped(o.capture), o)
    with Sandbox(
        directory,
        cwd=o.cwd,
        network=o.network,
        env=o.env,
        limits=o.limits,
        terminal=not o.capture,
    ) as sandbox:
        return _run(sandbox.command(argv), sandbox.popen_options(), sandbox, o)


def _check_program(program: str, cwd: Path, search: str) -> None:
    """The program the reaper will start, looked up as ``execvp`` will: FileNotFoundError or
    PermissionError now, as starting it directly would raise (the reaper can only report an
    exit code)."""
    if "/" not in program:
        found = shutil.which(program, path=search) is not None
    else:
        found = (cwd / program).is_file()
        if found and not os.access(cwd / program, os.X_OK):
            raise PermissionError(errno.EACCES, "Permission denied", program)
    if not found:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", program)


def _mount_options(root: str, options: RunOptions, report: Path) -> MountOptions:
    """How the command's mount serves: ``root``; a policy's rules, their refusals written to
    ``report``; for a sandboxed command, its user let in (``allow_other`` where that user is
    not us; the directory above the mount, mode 0700, is then given to it once the mount is
    in place, so no one else reaches the mount), the owner's files shown as its own, a bound
    on what it writes and no host path in its mount table."""
    rules = options.rules if options.rules is not None and options.rules.restricts else None
    mount = MountOptions(
        root=root,
        rules=rules,
        report=report if rules is not None else None,
        actor=options.actor,
        thread=options.thread,
    )
    if not options.sandbox:
        return mount
    uid, gid = host_identity()
    swap = NO_SWAP
    if options.owner is not None and options.owner != (uid, gid):
        swap = IdSwap((options.owner[0], uid), (options.owner[1], gid))
    return replace(
        mount,
        allow_other=switches_user(),
        ids=swap,
        source=SANDBOX_SOURCE,
        write_budget=options.limits.write_mb * 1024 * 1024,
    )


def _mount(
    workspace: str | os.PathLike[str], mountpoint: Path, options: MountOptions
) -> subprocess.Popen[bytes]:
    with tempfile.TemporaryFile() as log:
        daemon = start_daemon(workspace, mountpoint, options, log)
        deadline = time.monotonic() + MOUNT_TIMEOUT
        while not os.path.ismount(mountpoint):
            if daemon.poll() is not None or time.monotonic() > deadline:
                daemon.kill()
                daemon.wait()
                log.seek(0)
                message = log.read().decode(errors="replace").strip()
                raise MountError(message or "the mount failed")
            time.sleep(0.02)
    return daemon


def _unmount(mountpoint: Path, daemon: subprocess.Popen) -> None:
    """Unmount (the daemon commits open files and exits); lazily if something still holds
    the mount, and never leave the daemon behind."""
    for args in (["-u"], ["-u", "-z"]):
        if not os.path.ismount(mountpoint):
            break
        subprocess.run(["fusermount3", *args, str(mountpoint)], capture_output=True, check=False)
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()


class _Guard(Protocol):
    """What starts a command and can end it with all it started: the sandbox (its PID
    namespace) or, unsandboxed, the reaper (``_Reaped``)."""

    def started(self, proc: subprocess.Popen) -> None: ...

    def stop(self) -> None: ...

    def out_of_memory(self) -> bool: ...


def _run(
    argv: list[str], start: Mapping[str, Any], guard: _Guard, options: RunOptions
) -> CommandResult:
    """Run ``argv`` (``start``: Popen's options of where and as whom) and wait for it; on a
    timeout or Ctrl-C, ``guard`` ends it and everything it started before this returns."""
    started = time.monotonic()
    capture = options.capture
    pipe = subprocess.PIPE if capture else None
    # A captured command gets a session of its own; one on our terminal stays in our process
    # group, so it can read the terminal and gets Ctrl-C.
    proc = subprocess.Popen(
        argv,
        **start,
        stdout=pipe,
        stderr=pipe,
        stdin=subprocess.DEVNULL if capture else None,
        start_new_session=capture,
    )
    readers = [_Capped(stream, options.max_output) for stream in (proc.stdout, proc.stderr)]
    try:
        guard.started(proc)
    except BaseException:
        guard.stop()
        proc.wait()
        raise
    timed_out = aborted = False
    try:
        proc.wait(timeout=options.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    except KeyboardInterrupt:
        aborted = True
    if timed_out or aborted:
        guard.stop()
        proc.wait()
    out, err = (r.result() for r in readers)
    return CommandResult(
        stdout=out[0],
        stderr=err[0],
        # what we did to it, whichever way its guard reports a death by signal
        exit_code=-signal.SIGKILL if timed_out or aborted else proc.returncode,
        duration_ms=round((time.monotonic() - started) * 1000),
        timed_out=timed_out,
        aborted=aborted,
        stdout_truncated=out[1],
        stderr_truncated=err[1],
        out_of_memory=guard.out_of_memory(),
    )


class _Reaped:
    """The guard of an unsandboxed command: the reaper it runs under, which kills all below
    it when told (SIGTERM); SIGKILL to the reaper (and, for a captured command, to its
    session's process group) if it has not finished within ``KILL_GRACE``."""

    def __init__(self, group: bool) -> None:
        self.group = group
        self.proc: subprocess.Popen | None = None

    def started(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def out_of_memory(self) -> bool:
        """Unsandboxed, nothing but the host bounds the command's memory."""
        return False

    def stop(self) -> None:
        proc = self.proc
        assert proc is not None
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(timeout=KILL_GRACE)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                if self.group:
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()


class _Capped:
    """Drain one output stream on a thread, keeping its first ``limit`` bytes."""

    def __init__(self, stream: IO[bytes] | None, limit: int | None) -> None:
        self.kept = bytearray()
        self.dropped = 0
        self.limit = limit
        self.thread: threading.Thread | None = None
        if stream is not None:
            self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
            self.thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with stream:
            while block := stream.read1(65536):  # type: ignore[attr-defined]
                room = len(block) if self.limit is None else self.limit - len(self.kept)
                self.kept += block[: max(room, 0)]
                self.dropped += max(len(block) - max(room, 0), 0)

    def result(self) -> tuple[str, bool]:
        if self.thread is not None:
            self.thread.join()
        text = self.kept.decode("utf-8", errors="replace")
        return (text + TRUNCATED, True) if self.dropped else (text, False)


def describe(command: str | Sequence[str]) -> str:
    """The command line as one string (a snapshot's label)."""
    return command if isinstance(command, str) else shlex.join(command)
