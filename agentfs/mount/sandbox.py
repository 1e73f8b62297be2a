"""The sandbox a command runs in: bubblewrap, a seccomp filter and resource limits
(docs/security.md has what it promises and how each promise is tested).

The command sees the workspace at ``/workspace`` (its home and working directory), the
host's ``/usr`` and ``/opt`` read-only, a few files of ``/etc`` (no ``shadow``, no user
list: its own ``passwd`` and ``group``), a fresh ``/proc`` of its own PID namespace, a
minimal ``/dev`` and a small private ``/tmp``; nothing else of the host, no network unless
asked. Everything else is read-only.

Who it runs as: an unprivileged user of the host, inside a user namespace where it is uid
1000 (``agent``) with no capabilities. When agentfs runs as a normal user, that is the same
user; when it runs as root, the command runs as ``nobody`` (65534), so that it holds no
privilege even if it left the namespaces, and counts against process limits (the kernel
never limits root's processes). Either way the mount made for it shows the workspace owner's
files as this user's (``agentfs.mount.owners``).

bubblewrap starts with an empty environment (its own process is PID 1 inside, where
``/proc/1/environ`` is readable), and the command gets only ``PATH``, ``HOME``, ``USER``,
``LANG`` and what the caller passes. ``--die-with-parent``: the sandbox ends with agentfs;
when the command itself ends, bubblewrap's PID 1 exits and the kernel kills whatever the
command left running in the namespace (``setsid``, ``nohup`` and daemons included).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentfs.mount import seccomp

#: Where the workspace is inside.
WORKSPACE = "/workspace"
#: The command's user and group inside the user namespace.
INSIDE_UID = INSIDE_GID = 1000
#: Who a command started by root runs as on the host: nobody, nogroup.
NOBODY = (65534, 65534)
#: The PATH inside.
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
#: System directories bound read-only (those this host has).
SYSTEM_DIRS = ("/usr", "/opt")
#: Merged-/usr links a Debian root has.
USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: What the command sees of the host's /etc: what the dynamic linker, name lookup, time
#: zones, TLS certificates, Debian's alternatives and the shells read. Not: shadow, gshadow,
#: the host's users and groups, sudoers, ssh keys, cron, machine-id, mail, credentials.
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
    "ssl",
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

    #: Private writable memory of each process (RLIMIT_DATA: heaps and anonymous maps;
    #: what runtimes merely reserve, as V8 and Go do, does not count).
    memory_mb: int = 4096
    #: Processes and threads the command may have at once (RLIMIT_NPROC, counted in its
    #: own user namespace).
    processes: int = 512
    #: Open files of each process (RLIMIT_NOFILE).
    open_files: int = 4096
    #: The largest file a process may write (RLIMIT_FSIZE): a larger write fails with
    #: EFBIG ("File too large").
    file_size_mb: int = 2048
    #: CPU seconds of each process (RLIMIT_CPU); the wall-clock bound is the timeout.
    cpu_seconds: int = 3600
    #: The size of the private /tmp and /dev/shm (memory-backed).
    tmp_mb: int = 1024

    def prlimit(self, prlimit: str) -> list[str]:
        """The ``prlimit`` command line that sets these, hard and soft, no core dumps."""
        mib = 1024 * 1024
        return [
            prlimit,
            f"--data={self.memory_mb * mib}",
            f"--nproc={self.processes}",
            f"--nofile={self.open_files}",
            f"--fsize={self.file_size_mb * mib}",
            f"--cpu={self.cpu_seconds}",
            "--core=0",
            "--",
        ]


def host_identity() -> tuple[int, int]:
    """The uid and gid a sandboxed command runs as on the host: ours, or nobody's for root."""
    uid = os.geteuid()
    return NOBODY if uid == 0 else (uid, os.getegid())


class Sandbox:
    """One sandboxed run's bubblewrap command line and the files it reads (the seccomp
    program, ``passwd``, ``group``): a context manager that closes them."""

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
        reason = unavailable()
        if reason is not None:
            raise SandboxError(f"cannot build the sandbox: {reason}")
        self.identity = host_identity()
        self.fds: list[int] = []
        try:
            self.argv = self._argv(directory, cwd, network, env or {}, limits, terminal)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()

    def _data(self, name: str, content: bytes) -> str:
        """A memory file bubblewrap reads ``content`` from, as its descriptor number."""
        fd = os.memfd_create(name, 0)
        self.fds.append(fd)
        os.write(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
        return str(fd)

    def _argv(
        self,
        directory: Path,
        cwd: str | None,
        network: bool,
        env: Mapping[str, str],
        limits: Limits,
        terminal: bool,
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
        variables = {"PATH": SANDBOX_PATH, "HOME": WORKSPACE, "USER": "agent"}
        variables |= {"LOGNAME": "agent", "LANG": "C.UTF-8"}
        if terminal and "TERM" in os.environ:
            variables["TERM"] = os.environ["TERM"]
        for key, value in {**variables, **env}.items():
            args += ["--setenv", key, value]
        return args + limits.prlimit(prlimit)

    def popen_options(self) -> dict[str, object]:
        """How to start bubblewrap: an empty environment, from ``/``, as ``identity``, with
        the sandbox's files passed on."""
        options: dict[str, object] = {"env": {}, "cwd": "/", "pass_fds": tuple(self.fds)}
        uid, gid = self.identity
        if uid != os.geteuid():  # root hands the command to nobody
            options |= {"user": uid, "group": gid, "extra_groups": []}
        return options


def scratch_parent(preferred: str | None) -> str | None:
    """Where to make a directory the sandbox's user will be given (a mount's, a copy's):
    ``preferred`` (None: tempfile's choice) when that user is us; else a directory every
    user can pass through, as root's command runs as nobody (a private ``$TMPDIR`` would
    stop it at the door)."""
    if host_identity()[0] == os.geteuid():
        return preferred
    for candidate in (preferred or tempfile.gettempdir(), "/tmp", "/dev/shm"):
        if _passable(candidate):
            return candidate
    raise SandboxError("cannot build the sandbox: no temporary directory that nobody can reach")


def _passable(directory: str) -> bool:
    """Can any user reach what is inside ``directory`` (every step searchable by others)?"""
    path = Path(directory).resolve()
    try:
        return all(os.stat(p).st_mode & 0o001 for p in (path, *path.parents))
    except OSError:
        return False


class SandboxError(OSError):
    """A sandbox cannot be built on this host (what is missing is in the message)."""


def _tool(name: str) -> str:
    found = shutil.which(name, path="/usr/local/bin:/usr/bin:/bin")
    if found is None:
        raise SandboxError(f"cannot build the sandbox: {name} is missing")
    return found


def unavailable() -> str | None:
    """Why a sandbox cannot be built here (None: it can); checked once per process."""
    return next((reason for _part, reason in _probe() if reason is not None), None)


def parts() -> list[tuple[str, str | None]]:
    """Each part the sandbox needs, and why it is missing here (None: present)."""
    return list(_probe())


@functools.cache
def _probe() -> tuple[tuple[str, str | None], ...]:
    bwrap = shutil.which("bwrap", path="/usr/local/bin:/usr/bin:/bin")
    found = [
        ("bubblewrap", None if bwrap else "bubblewrap is missing (Debian package bubblewrap)"),
        ("seccomp", seccomp.unavailable()),
        (
            "limits",
            None
            if shutil.which("prlimit", path="/usr/local/bin:/usr/bin:/bin")
            else "prlimit is missing (Debian package util-linux)",
        ),
    ]
    userns = _userns_probe() if bwrap else "untried: bubblewrap is missing"
    return (*found, ("user namespaces", userns))


def _userns_probe() -> str | None:
    """Run bubblewrap once as the sandbox's user, in the namespaces a command gets: where
    user namespaces are refused (Docker's default seccomp profile, a sysctl), it says so."""
    uid, gid = host_identity()
    as_user: dict[str, Any] = {}
    if uid != os.geteuid():
        as_user = {"user": uid, "group": gid, "extra_groups": []}
    probe = [_tool("bwrap"), "--unshare-all", "--unshare-user", "--disable-userns"]
    probe += ["--ro-bind", "/", "/", "--proc", "/proc", "--", "/bin/true"]
    try:
        done = subprocess.run(
            probe, env={}, cwd="/", capture_output=True, text=True, timeout=30, **as_user
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot run: {exc}"
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return f"bubblewrap cannot make user namespaces here ({message[0]})"
    return None
