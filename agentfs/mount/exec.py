"""Running a command in a mounted workspace, optionally inside a bubblewrap sandbox.
(Where it cannot be mounted, ``agentfs.mount.copyexec`` runs it in a copy instead, through
``run_in_directory`` here: the same sandbox, timeout and output handling.)

``run_command`` mounts the workspace on a fresh temporary directory (a child process serving
it: ``python -m agentfs.cli mount ... --foreground``), runs the command there, and unmounts
whatever happens: a failure, a timeout, Ctrl-C. The command's process group is killed on a
timeout, so nothing it started outlives it. Output is captured up to a cap per stream, the rest
drained and dropped, and the result says so.

With ``sandbox``, the command runs under Debian's ``bwrap``: the workspace at ``/workspace``
(its working directory), the system directories read-only, a private ``/tmp``, ``/proc`` and
``/dev`` of its own, no network unless asked, its own PID namespace, and only the environment
variables on an allowlist. It cannot see the host's other files (home directories, the
workspace file itself) nor write anywhere but ``/workspace`` and ``/tmp``. What it does not
isolate: CPU and memory (no cgroup limits), and the read-only system directories are readable.

Rewinding is the caller's part: ``Workspace.run`` and ``agentfs exec`` take a snapshot first
(this module only needs the workspace's file).
"""

from __future__ import annotations

import importlib.util
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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Literal

#: Environment variables a sandboxed command gets from ours (``env`` adds more).
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ")
#: The PATH inside the sandbox when ours is not passed on.
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
#: System directories the sandbox sees read-only (those that exist on this host).
SYSTEM_DIRS = ("/usr", "/etc", "/opt")
#: Merged-/usr links a Debian root has.
USR_LINKS = ("bin", "sbin", "lib", "lib64")
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


def fuse_available() -> str | None:
    """Why a mount cannot be made here (None: it can)."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing"
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
    with tempfile.TemporaryDirectory(prefix="agentfs-exec-") as tmp:
        mountpoint = Path(tmp) / "workspace"
        mountpoint.mkdir()
        daemon = _mount(workspace, mountpoint, root)
        try:
            return run_in_directory(mountpoint, command, options)
        finally:
            _unmount(mountpoint, daemon)


def run_in_directory(
    directory: Path, command: str | Sequence[str], options: RunOptions
) -> CommandResult:
    """Run ``command`` with ``directory`` as the workspace (a mount, or a copy): ``cwd``
    relative to it, under bubblewrap with it at ``/workspace`` when ``sandbox``. Both ways of
    running a command share this, so they behave the same."""
    o = options
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    inside = Path(directory, (o.cwd or "").lstrip("/"))
    if o.sandbox:
        argv = _bwrap(directory, o.cwd, o.network, o.env) + argv
        child_env = None
    else:
        child_env = {**os.environ, **(o.env or {})}
    return _run(argv, inside, child_env, o.timeout, o.max_output, o.capture)


def _mount(workspace: str | os.PathLike[str], mountpoint: Path, root: str) -> subprocess.Popen:
    serve = ["mount", os.fspath(workspace), str(mountpoint), "--root", root, "--foreground"]
    with tempfile.TemporaryFile() as log:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "agentfs.cli", *serve],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # Ctrl-C reaches the command, not the mount
        )
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


def _bwrap(
    directory: Path, cwd: str | None, network: bool, env: Mapping[str, str] | None
) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise MountError("the sandbox needs bubblewrap (Debian package bubblewrap)")
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-all"]
    if network:
        args.append("--share-net")
    for d in SYSTEM_DIRS:
        if os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for name in USR_LINKS:
        if os.path.islink(f"/{name}"):
            args += ["--symlink", os.readlink(f"/{name}"), f"/{name}"]
        elif os.path.isdir(f"/{name}"):
            args += ["--ro-bind", f"/{name}", f"/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    args += ["--bind", str(directory), "/workspace"]
    args += ["--chdir", os.path.join("/workspace", (cwd or "").lstrip("/")).rstrip("/")]
    args += ["--clearenv", "--setenv", "HOME", "/workspace", "--setenv", "PATH", SANDBOX_PATH]
    for key in ENV_ALLOWLIST:
        if key in os.environ and key != "PATH":
            args += ["--setenv", key, os.environ[key]]
    for key, value in (env or {}).items():
        args += ["--setenv", key, value]
    return args


def _run(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout: float | None,
    max_output: int | None,
    capture: bool,
) -> CommandResult:
    started = time.monotonic()
    pipe = subprocess.PIPE if capture else None
    # A captured command gets a session of its own, so a timeout kills all it started; one on
    # our terminal stays in our process group, so it can read the terminal and gets Ctrl-C.
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdout=pipe,
        stderr=pipe,
        stdin=subprocess.DEVNULL if capture else None,
        start_new_session=capture,
    )
    readers = [_Capped(stream, max_output) for stream in (proc.stdout, proc.stderr)]
    timed_out = aborted = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc, capture)
    except KeyboardInterrupt:
        aborted = True
        _kill(proc, capture)
    out, err = (r.result() for r in readers)
    return CommandResult(
        stdout=out[0],
        stderr=err[0],
        exit_code=proc.returncode,
        duration_ms=round((time.monotonic() - started) * 1000),
        timed_out=timed_out,
        aborted=aborted,
        stdout_truncated=out[1],
        stderr_truncated=err[1],
    )


def _kill(proc: subprocess.Popen, group: bool) -> None:
    """Kill the command, and with ``group`` everything it started (its process group)."""
    try:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
    proc.wait()


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
