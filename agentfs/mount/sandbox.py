"""The sandbox a command runs in: bubblewrap, a seccomp filter and resource limits.

The command sees the workspace at ``/workspace``, the host's system read-only, a minimal
``/etc``, ``/dev`` and ``/tmp``, no network unless asked, and runs as an unprivileged user with
no capabilities (``agentfs.mount.identity``, ``agentfs.mount.owners``). The limits are set
before anything of the caller's runs, and the namespace ends everything left when the command
ends. docs/security.md, "The sandbox", has what it promises and how each promise is tested.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentfs.mount import cgroup, seccomp
from agentfs.mount.identity import as_sandbox_user, switches_user, system_tool

#: Where the workspace is inside.
WORKSPACE = "/workspace"
#: The command's user and group inside the user namespace.
INSIDE_UID = INSIDE_GID = 1000
#: The PATH inside.
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
#: System directories bound read-only (those this host has).
SYSTEM_DIRS = ("/usr", "/opt")
#: Merged-/usr links a Debian root has.
USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: What the command sees of the host's /etc: what the dynamic linker, name lookup, time
#: zones, TLS certificates (not the private keys beside them), Debian's alternatives and the
#: shells read. Not: shadow, gshadow, the host's users and groups, sudoers, ssh keys, cron,
#: machine-id, mail, credentials.
ETC_ENTRIES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "nsswitch.conf",
    "host.conf",
    "hosts",
    "gai.conf",
    "protocols",
    "services",
    "localtime",
    "timezone",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "ca-certificates.conf",
    "alternatives",
    "mime.types",
    "os-release",
    "debian_version",
    "shells",
    "profile",
    "bash.bashrc",
    "inputrc",
    "locale.alias",
)
#: Only with the network: where the host's name servers are.
NETWORK_ETC_ENTRIES = ("resolv.conf",)
#: The users and groups the command sees.
PASSWD = (
    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
    f"agent:x:{INSIDE_UID}:{INSIDE_GID}:agent:{WORKSPACE}:/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
)
GROUP = f"root:x:0:\nagent:x:{INSIDE_GID}:\nnogroup:x:65534:\n"


@dataclass(frozen=True)
class Limits:
    """What one sandboxed command may use (``[commands]`` in a policy; these defaults hold
    when it says nothing). Each is a hard resource limit of every process the command
    starts, so none can raise it again."""

    #: Memory: of all the command's processes together, shared memory and ``/tmp``
    #: included, where this host lets agentfs make a memory cgroup
    #: (``agentfs.mount.cgroup``); and in any case each process's private writable memory
    #: (RLIMIT_DATA: heaps and private anonymous maps; what runtimes merely reserve, as V8
    #: and Go do, does not count).
    memory_mb: int = 4096
    #: Processes and threads the command may have at once (RLIMIT_NPROC, counted in its
    #: own user namespace).
    processes: int = 512
    #: Open files of each process (RLIMIT_NOFILE).
    open_files: int = 4096
    #: The largest file a process may write (RLIMIT_FSIZE): a larger write fails with
    #: EFBIG ("File too large").
    file_size_mb: int = 2048
    #: CPU seconds of each process (RLIMIT_CPU): SIGXCPU then, SIGKILL five seconds later;
    #: the wall-clock bound is the timeout.
    cpu_seconds: int = 3600
    #: The size of the private /tmp and /dev/shm (memory-backed).
    tmp_mb: int = 1024
    #: What the command may write into the workspace in all (its mount refuses more with
    #: ENOSPC), so that many files, each within ``file_size_mb``, cannot fill the disk.
    write_mb: int = 8192

    def prlimit(self, prlimit: str) -> list[str]:
        """The ``prlimit`` command line that sets these (hard and soft, no core dumps)."""
        mib = 1024 * 1024
        return [
            prlimit,
            f"--data={self.memory_mb * mib}",
            f"--nproc={self.processes}",
            f"--nofile={self.open_files}",
            f"--fsize={self.file_size_mb * mib}",
            f"--cpu={self.cpu_seconds}:{self.cpu_seconds + CPU_GRACE}",
            "--core=0",
            "--",
        ]


#: Seconds between SIGXCPU (the soft CPU limit) and SIGKILL (the hard one).
CPU_GRACE = 5
#: What an environment variable's name may be (POSIX's portable names): ``env`` applies
#: them, and would take anything else for an option or for the command.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Sandbox:
    """One sandboxed run: bubblewrap's command line (``argv``, followed by the command's),
    the files it reads (the seccomp program, ``passwd``, ``group``), the pipe on which it
    names its PID 1, and the memory cgroup that PID 1 waits to be moved into (where this
    host has one). A context manager: it closes them all."""

    def __init__(
        self,
        directory: Path,
        *,
        cwd: str | None,
        network: bool,
        env: Mapping[str, str] | None,
        limits: Limits,
        terminal: bool = False,
    ) -> None:
        require()
        bad = [key for key in env or {} if not NAME.fullmatch(key)]
        if bad:
            raise ValueError(f"not an environment variable's name: {bad[0]!r}")
        self.env = dict(env or {})
        self.fds: list[int] = []
        self._info: int | None = None  # the read end of bubblewrap's info pipe
        self._pid1: int | None = None  # a pidfd of the namespace's PID 1
        self._release: int | None = None  # what PID 1 waits on: the write end of its block fd
        self.cgroup: cgroup.MemoryCgroup | None = None
        try:
            self.cgroup = _cgroup(limits)
            self.argv = self._argv(directory, cwd, network, limits, terminal)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in (*self.fds, self._info, self._pid1, self._release):
            if fd is not None:
                os.close(fd)
        self.fds.clear()
        self._info = self._pid1 = self._release = None
        if self.cgroup is not None:
            self.cgroup.close()
            self.cgroup = None

    def _data(self, name: str, content: bytes) -> str:
        """A memory file bubblewrap reads ``content`` from, as its descriptor number."""
        fd = os.memfd_create(name)  # close-on-exec: only pass_fds hands it on
        self.fds.append(fd)
        os.write(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
        return str(fd)

    def _argv(
        self, directory: Path, cwd: str | None, network: bool, limits: Limits, terminal: bool
    ) -> list[str]:
        bwrap, prlimit = _tool("bwrap"), _tool("prlimit")
        args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns"]
        args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        args += ["--uid", str(INSIDE_UID), "--gid", str(INSIDE_GID), "--hostname", "agentfs"]
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
        for name in ETC_ENTRIES + (NETWORK_ETC_ENTRIES if network else ()):
            if os.path.exists(f"/etc/{name}"):
                args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        args += ["--ro-bind-data", self._data("passwd", PASSWD.encode()), "/etc/passwd"]
        args += ["--ro-bind-data", self._data("group", GROUP.encode()), "/etc/group"]
        args += ["--symlink", "/proc/self/mounts", "/etc/mtab"]
        tmp = str(limits.tmp_mb * 1024 * 1024)
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--size", tmp, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
        args += ["--size", tmp, "--tmpfs", "/tmp"]
        args += ["--bind", str(directory), WORKSPACE]
        args += ["--remount-ro", "/"]
        args += ["--chdir", os.path.join(WORKSPACE, (cwd or "").lstrip("/")).rstrip("/")]
        args += ["--seccomp", self._data("seccomp", seccomp.program())]
        self._info, info_w = os.pipe()
        self.fds.append(info_w)
        args += ["--info-fd", str(info_w)]
        if self.cgroup is not None:
            block, self._release = os.pipe()
            self.fds.append(block)
            args += ["--block-fd", str(block)]
        fixed = {"PATH": SANDBOX_PATH, "HOME": WORKSPACE, "USER": "agent"}
        fixed |= {"LOGNAME": "agent", "LANG": "C.UTF-8"}
        if terminal and "TERM" in os.environ:
            fixed["TERM"] = os.environ["TERM"]
        for key, value in fixed.items():
            args += ["--setenv", key, value]
        return args + limits.prlimit(prlimit)

    def command(self, argv: list[str]) -> list[str]:
        """The whole command line that runs ``argv`` in the sandbox: the caller's variables
        set by ``env`` after the limits (a program name with ``=`` in it goes through ``sh``,
        which ``env`` would take for a variable)."""
        if not self.env:
            return self.argv + argv
        if "=" in argv[0]:
            argv = ["/bin/sh", "-c", 'exec "$0" "$@"', *argv]
        assignments = [f"{key}={value}" for key, value in self.env.items()]
        return [*self.argv, _tool("env"), "--", *assignments, *argv]

    def popen_options(self) -> dict[str, Any]:
        """How to start bubblewrap: an empty environment, from ``/``, as the sandbox's user,
        with the sandbox's files passed on."""
        return {"env": {}, "cwd": "/", "pass_fds": tuple(self.fds), **as_sandbox_user()}

    def started(self, _bwrap: subprocess.Popen) -> None:
        """bubblewrap is running: close our copies of what it was handed, and hold its PID 1
        (by a pidfd, so that no later process can be mistaken for it), which it names on its
        info pipe as soon as it exists (nothing, if it failed before). With a cgroup, PID 1
        is moved into it, then let go on to start the command."""
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()
        pid = self._pid_one()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                self._pid1 = os.pidfd_open(pid)
        if self._release is None:
            return
        release, self._release = self._release, None
        try:
            if pid is not None and self.cgroup is not None:
                self.cgroup.adopt(pid)
                os.write(release, b"x")
        except OSError as exc:
            self.stop()  # PID 1 dies waiting: the command never runs outside its cgroup
            raise refused(f"the command cannot enter its memory cgroup ({exc})") from exc
        finally:
            os.close(release)

    def out_of_memory(self) -> bool:
        """Did the kernel kill a process of the command because all of them together
        reached the memory limit?"""
        return self.cgroup is not None and self.cgroup.oom_kills() > 0

    def stop(self) -> None:
        """End the command and everything in its namespace now: SIGKILL to the namespace's
        PID 1, after which the kernel kills the rest before bubblewrap can return."""
        if self._pid1 is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pid1, signal.SIGKILL)

    def _pid_one(self) -> int | None:
        """The host pid of the namespace's PID 1, from bubblewrap's info pipe."""
        assert self._info is not None
        text = b""
        while block := os.read(self._info, 4096):
            text += block
            with contextlib.suppress(ValueError):
                return int(json.loads(text)["child-pid"])
        return None


def _cgroup(limits: Limits) -> cgroup.MemoryCgroup | None:
    """The command's memory cgroup, where this host lets us make one; where it should but
    fails, the sandbox is refused rather than run without."""
    try:
        return cgroup.make(limits.memory_mb * 1024 * 1024)
    except OSError as exc:
        raise refused(f"its memory cgroup cannot be made ({exc})") from exc


def scratch_parent(preferred: str | None) -> str | None:
    """Where to make a directory the sandbox's user will be given (a mount's, a copy's):
    ``preferred`` (None: tempfile's choice) when that user is us; else a directory every
    user can pass through, as root's command runs as a user of its own (a private
    ``$TMPDIR`` would stop it at the door)."""
    if not switches_user():
        return preferred
    for candidate in (preferred or tempfile.gettempdir(), "/tmp", "/dev/shm"):
        if _passable(candidate):
            return candidate
    raise refused("no temporary directory that another user can pass through")


def _passable(directory: str) -> bool:
    """Can any user reach what is inside ``directory`` (every step searchable by others)?"""
    path = Path(directory).resolve()
    try:
        return all(os.stat(p).st_mode & 0o001 for p in (path, *path.parents))
    except OSError:
        return False


class SandboxError(OSError):
    """A sandbox cannot be built on this host (what is missing is in the message)."""


def refused(reason: str) -> SandboxError:
    """The one error every missing piece gives."""
    return SandboxError(f"cannot build the sandbox: {reason}")


def _tool(name: str) -> str:
    found = system_tool(name)
    if found is None:
        raise refused(f"{name} is missing")
    return found


def require() -> None:
    """Raise ``SandboxError`` naming what is missing, where a sandbox cannot be built."""
    reason = unavailable()
    if reason is not None:
        raise refused(reason)


def unavailable() -> str | None:
    """Why a sandbox cannot be built here (None: it can); checked once per process."""
    return next((reason for _part, reason in _probe() if reason is not None), None)


def parts() -> list[tuple[str, str | None]]:
    """Each part the sandbox needs, and why it is missing here (None: present)."""
    return list(_probe())


@functools.cache
def _probe() -> tuple[tuple[str, str | None], ...]:
    bwrap = system_tool("bwrap")
    limits = system_tool("prlimit") and system_tool("env")
    return (
        ("bubblewrap", None if bwrap else "bubblewrap is missing (Debian package bubblewrap)"),
        ("seccomp", seccomp.unavailable()),
        ("limits", None if limits else "prlimit is missing (Debian package util-linux)"),
        ("user namespaces", _userns_probe() if bwrap else "untried: bubblewrap is missing"),
    )


def _userns_probe() -> str | None:
    """Run bubblewrap once as the sandbox's user, in the namespaces a command gets: where
    user namespaces are refused (Docker's default seccomp profile, a sysctl), it says so."""
    probe = [_tool("bwrap"), "--unshare-all", "--unshare-user", "--disable-userns"]
    probe += ["--ro-bind", "/", "/", "--proc", "/proc", "--", "/bin/true"]
    try:
        done = subprocess.run(
            probe,
            env={},
            cwd="/",
            capture_output=True,
            text=True,
            timeout=30,
            **as_sandbox_user(),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot run: {exc}"
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return f"bubblewrap cannot make user namespaces here ({message[0]})"
    return None
