"""The attacker's test bench: ``Box`` runs a hostile command through ``ws.run(...,
sandbox=True)`` as one identity, agentfs run by root or by an unprivileged user, since the
sandbox is built differently for each (root's command runs as a uid of its own with the
owner's ids swapped in the mount; a user's runs as that user); and what the host shows of it
afterwards.

"root" calls ``ws.run`` in this process. "user", when the tests run as root, starts
``as_user.py`` as uid 2345 (``setpriv``) with an interpreter that uid can execute, in a
workspace directory it owns; when the tests run as a normal user, that user is the
unprivileged one and runs in this process. (``conftest.py`` makes the ``box`` fixture.)
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from as_user import perform

import agentfs
from agentfs.mount import sandbox
from agentfs.mount.exec import CommandResult, fuse_available

#: The unprivileged user the "user" variant runs as: no account of the host, it is given a
#: name only in the private mount namespace it runs in (``NAMED``).
USER_UID = 2345
HERE = Path(__file__).resolve().parent
AS_USER = HERE / "as_user.py"
SYSTEM_PYTHON = Path("/usr/bin/python3")
#: Where the host's tools are, for the unprivileged process.
HOST_PATH = "/usr/local/bin:/usr/bin:/bin"
#: What ``unshare`` runs before dropping privileges: an account for uid 2345 in a private
#: mount namespace, as ``fusermount3`` refuses to mount for a uid without a name. First it
#: drops its copies of the workspaces other tests have mounted: a copy keeps a mount alive
#: after the host unmounts it, and its daemon serving until this namespace ends.
NAMED = (
    "umount -a -l -t fuse.agentfs; "
    'mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"'
)


def missing() -> str | None:
    """Why this machine cannot run a sandboxed command in a mount, or None."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing"
    reason = sandbox.unavailable()  # bubblewrap, seccomp, limits, user namespaces
    if reason is not None:
        return f"no sandbox here: {reason}"
    reason = fuse_available()
    if reason is not None:
        return f"no FUSE mount here: {reason}"
    return None


@dataclass(frozen=True)
class UserSetup:
    """What uid 2345 needs: an interpreter it can execute, and a name (for fusermount3)."""

    base: Path
    python: Path
    passwd: Path
    group: Path


def shown(result: CommandResult) -> str:
    """A command's outcome for an assertion's message."""
    return (
        f"exit {result.exit_code}, timed out {result.timed_out}\n"
        f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}"
    )


@contextmanager
def _environment(extra: Mapping[str, str]) -> Iterator[None]:
    """``extra`` in this process's environment, for as long as the block runs."""
    saved = {key: os.environ.get(key) for key in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def as_user(user: UserSetup, *argv: str) -> list[str]:
    """The command line that runs ``argv`` as uid 2345, named in a mount namespace of its own."""
    named = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", NAMED]
    named += ["sh", str(user.passwd), str(user.group)]
    drop = ["setpriv", f"--reuid={USER_UID}", f"--regid={USER_UID}", "--clear-groups", "--"]
    return [*named, *drop, *argv]


@dataclass
class Started:
    """A command under way (``Box.start``): ``running()`` until ``wait()`` has its result;
    ``pid``: the host process that runs agentfs for it."""

    wait: Callable[[], CommandResult]
    running: Callable[[], bool]
    pid: int


@dataclass
class Box:
    """One identity's workspace and the way to run commands in it.

    ``owner_uid``: who owns the workspace (and is recorded as the owner of what a command
    creates); ``sandbox_uid``: who the sandboxed command runs as on the host."""

    identity: str
    dir: Path
    owner_uid: int
    sandbox_uid: int
    user: UserSetup | None

    @property
    def db(self) -> Path:
        return self.dir / "ws.db"

    def run(self, command: str | Sequence[str], **arguments: Any) -> CommandResult:
        """``start(command, **arguments)``, waited for."""
        return self.start(command, **arguments).wait()

    def start(
        self,
        command: str | Sequence[str],
        *,
        writes: Mapping[str, str] | None = None,
        symlinks: Mapping[str, str] | None = None,
        host_env: Mapping[str, str] | None = None,
        limits: sandbox.Limits | None = None,
        **options: Any,
    ) -> Started:
        """``ws.run(command, sandbox=True, mode="mount", **options)`` as this identity, after
        ``writes`` and ``symlinks`` (path: target) through the API; ``host_env`` is added to
        the environment of the process that runs agentfs. Returns at once."""
        request = {
            "db": str(self.db),
            "writes": dict(writes or {}),
            "symlinks": dict(symlinks or {}),
            "command": command if isinstance(command, str) else list(command),
            "options": {"sandbox": True, "mode": "mount", **options},
            "limits": None if limits is None else asdict(limits),
        }
        if self.user is None:
            return self._start_here(request, dict(host_env or {}))
        return self._start_as_user(request, dict(host_env or {}))

    def _start_here(self, request: dict[str, Any], host_env: dict[str, str]) -> Started:
        outcome: dict[str, Any] = {}
        environment = ExitStack()  # until wait() returns
        environment.enter_context(_environment(host_env))

        def target() -> None:
            try:
                outcome["result"] = perform(request)
            except BaseException as exc:
                outcome["error"] = exc

        thread = threading.Thread(target=target, daemon=True)
        thread.start()

        def wait() -> CommandResult:
            try:
                thread.join(timeout=180)
            finally:
                environment.close()
            assert not thread.is_alive(), "ws.run did not return within 180 s"
            if "error" in outcome:
                raise outcome["error"]
            return outcome["result"]

        return Started(wait, thread.is_alive, os.getpid())

    def _start_as_user(self, request: dict[str, Any], host_env: dict[str, str]) -> Started:
        user = self.user
        assert user is not None
        argv = as_user(user, str(user.python), str(AS_USER), json.dumps(request))
        env = {"PATH": HOST_PATH, "HOME": str(self.dir), "LANG": "C.UTF-8", **host_env}
        process = subprocess.Popen(
            argv, env=env, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

        def wait() -> CommandResult:
            try:
                out, err = process.communicate(timeout=180)
            except subprocess.TimeoutExpired:
                process.kill()
                out, err = process.communicate()
                raise AssertionError(f"as_user.py did not return within 180 s: {err!r}") from None
            try:
                answer = json.loads(out)
            except ValueError:
                raise AssertionError(
                    f"as_user.py failed ({process.returncode}): {out!r} {err!r}"
                ) from None
            if "error" in answer:
                raise AssertionError(f"ws.run raised as uid {USER_UID}: {answer['error']} {err!r}")
            fields = answer["result"]
            fields["conflicts"] = tuple(fields["conflicts"])
            fields["skipped"] = tuple(fields["skipped"])
            return CommandResult(**fields)

        return Started(wait, lambda: process.poll() is None, process.pid)

    @contextmanager
    def workspace(self) -> Iterator[agentfs.Workspace]:
        """The workspace, opened here to see what a command left (as root, for the "user"
        variant: reading takes no ownership, the API writes nothing until asked)."""
        with agentfs.open(self.db) as ws:
            yield ws


def host_processes(argument: str) -> list[int]:
    """The host's processes with ``argument`` as one of their arguments (a whole one: the
    shell command lines that mention it hold it as part of a longer argument)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argument.encode() in argv:
            found.append(int(entry.name))
    return found


def host_uids(pid: int) -> list[int]:
    """The real, effective, saved and filesystem uids of a host process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return [int(n) for n in line.split()[1:]]
    raise AssertionError(f"no Uid line for {pid}")


def wait_until_gone(argument: str, seconds: float = 5.0) -> list[int]:
    """Wait for the host's processes with ``argument`` to end; those still there."""
    deadline = time.monotonic() + seconds
    while (left := host_processes(argument)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
