"""Commands in the mounted workspace: ``ws.run``, ``agentfs exec``, the sandbox, the
``execute_command`` tool, and undoing a command with its snapshot."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from agentfs.tools.policy import Policy
from agentfs.tools.toolset import Toolset

pytestmark = pytest.mark.skipif(
    fuse_available() is not None, reason=f"no FUSE mount here: {fuse_available()}"
)


@pytest.fixture
def ws(tmp_path: Path) -> agentfs.Workspace:
    workspace = agentfs.open(tmp_path / "ws.db", thread="t1")
    workspace.write("/src/app.py", "print('v1')\n", parents=True)
    workspace.write("/notes.txt", "keep me\n")
    yield workspace
    workspace.close()


def test_run_returns_what_the_command_did_and_its_writes_land(ws: agentfs.Workspace) -> None:
    r = ws.run("cat notes.txt; echo oops >&2; echo new > made.txt; exit 3")
    assert (r.stdout, r.stderr, r.exit_code) == ("keep me\n", "oops\n", 3)
    assert not (r.timed_out or r.aborted or r.stdout_truncated or r.stderr_truncated)
    assert ws.read("/made.txt") == b"new\n"
    assert [v.op for v in ws.history("/made.txt")] == ["write"]


def test_restoring_the_snapshot_undoes_the_command(ws: agentfs.Workspace) -> None:
    r = ws.run("rm notes.txt; echo changed > src/app.py; mkdir out; echo x > out/y")
    assert not ws.exists("/notes.txt") and ws.exists("/out/y")
    assert ws.read("/src/app.py") == b"changed\n"
    ws.snapshots.restore(r.snapshot)
    assert ws.read("/notes.txt") == b"keep me\n"
    assert ws.read("/src/app.py") == b"print('v1')\n"
    assert not ws.exists("/out")


def test_snapshot_is_labelled_with_thread_and_command(ws: agentfs.Workspace) -> None:
    r = ws.run(["echo", "hi there"])
    info = next(s for s in ws.snapshots.list() if s.name == r.snapshot)
    assert info.thread == "t1" and "echo 'hi there'" in (info.label or "")


def test_a_commands_writes_are_versions_of_whoever_ran_it(ws: agentfs.Workspace) -> None:
    """Versions written through a command's mount name the handle's actor and thread, and a
    toolset's call its own (the thread's timeline shows what its commands wrote)."""
    ws.actor = "me"
    ws.run("echo one > made.txt")
    first = ws.history("/made.txt")[-1]
    assert (first.actor, first.thread) == ("me", "t1")
    quiet = Policy.model_validate({"tools": {"execute_command": {"needs_approval": False}}})
    tools = Toolset(ws, thread="t2", actor="agent", policy=quiet)
    assert tools.call("execute_command", {"command": "echo two > made.txt"})["exit_code"] == 0
    second = ws.history("/made.txt")[-1]
    assert (second.actor, second.thread) == ("agent", "t2")


def test_cwd_env_and_output_cap(ws: agentfs.Workspace) -> None:
    r = ws.run("pwd; echo $GREETING", cwd="/src", env={"GREETING": "hello"})
    assert r.stdout.splitlines()[0].endswith("/src") and r.stdout.splitlines()[1] == "hello"
    big = ws.run("head -c 300000 /dev/zero | tr '\\0' a", max_output=1000)
    assert big.stdout_truncated and big.stdout.startswith("a" * 1000)
    assert "truncated" in big.stdout[1000:]


def test_timeout_kills_the_whole_process_tree(ws: agentfs.Workspace) -> None:
    marker = f"30.{os.getpid()}"  # a duration no other sleep on the host has
    started = time.monotonic()
    r = ws.run(f"(sleep {marker}; echo late > late.txt) & sleep 30", timeout=0.5)
    assert r.timed_out and r.exit_code == -9
    assert time.monotonic() - started < 10
    assert marker not in _command_lines()  # the background child died with the command
    assert not ws.exists("/late.txt")


def test_what_a_command_leaves_running_ends_with_it(ws: agentfs.Workspace) -> None:
    """Unsandboxed too: a ``setsid`` or ``nohup`` child leaves the process group, but not the
    reaper the command runs under. ``run`` returns at once (the child held the output pipe),
    the child is gone, and the file it held open was committed as it stood."""
    marker = f"60.{os.getpid()}"  # a duration no other sleep on the host has
    started = time.monotonic()
    r = ws.run(
        f"setsid sh -c 'echo held > held.txt; exec 3>>held.txt; exec sleep {marker}' &"
        f" nohup sleep {marker} & sleep 0.5; echo done"
    )
    assert r.stdout == "done\n" and r.exit_code == 0 and time.monotonic() - started < 20
    assert ws.read("/held.txt") == b"held\n"
    assert marker not in _command_lines()


def test_a_timeout_ends_a_setsid_child_and_keeps_what_it_wrote(ws: agentfs.Workspace) -> None:
    marker = f"61.{os.getpid()}"  # a duration no other sleep on the host has
    started = time.monotonic()
    r = ws.run(f"setsid sh -c 'echo partial > part.txt; exec sleep {marker}' & sleep 60", timeout=1)
    assert r.timed_out and r.exit_code == -9
    assert time.monotonic() - started < 20  # not held by the child's copy of the output
    assert ws.read("/part.txt") == b"partial\n"
    assert marker not in _command_lines()


def test_an_unsandboxed_command_loses_agentfs_variables_and_tokens(ws: agentfs.Workspace) -> None:
    secrets = {"AGENTFS_TEST_SECRET": "a", "TURSO_AUTH_TOKEN": "t", "LIBSQL_AUTH": "l"}
    os.environ.update(secrets | {"AGENTFS_OTHER_KEPT": ""})
    try:
        r = ws.run("env", env={"GIVEN": "yes"})
    finally:
        for key in [*secrets, "AGENTFS_OTHER_KEPT"]:
            del os.environ[key]
    assert "GIVEN=yes" in r.stdout and "PATH=" in r.stdout
    assert not any(key in r.stdout for key in [*secrets, "AGENTFS_OTHER"]), r.stdout


def test_exit_codes_and_signals_come_through_the_reaper(ws: agentfs.Workspace) -> None:
    assert ws.run("exit 7").exit_code == 7
    assert ws.run("kill -TERM $$").exit_code == -15
    with pytest.raises(FileNotFoundError, match="no-such-program-here"):
        ws.run(["no-such-program-here"])  # as starting it directly would
    assert ws.run("no-such-program-here").exit_code == 127  # the shell's answer


def _command_lines() -> str:
    """Every process's command line on this host, joined."""
    lines = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):  # it ended meanwhile
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
    return "\n".join(lines)


def test_sandbox_isolates_the_command(ws: agentfs.Workspace, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret"
    secret.write_text("do not read")
    script = (
        f"cat {secret} 2>/dev/null && echo READ-HOST;"
        f" cat {ws.conn.filename} >/dev/null 2>&1 && echo READ-DB;"
        " touch /usr/x 2>/dev/null && echo WROTE-USR;"
        " touch /etc/x 2>/dev/null && echo WROTE-ETC;"
        " echo t > /tmp/t && echo TMP-OK;"
        " echo w > inside.txt && echo WS-OK; pwd;"
        " (echo > /dev/tcp/127.0.0.1/9) 2>/dev/null && echo NET"
    )
    r = ws.run(["bash", "-c", script], sandbox=True)
    lines = r.stdout.split()
    assert "TMP-OK" in lines and "WS-OK" in lines and "/workspace" in lines
    for leak in ("READ-HOST", "READ-DB", "WROTE-USR", "WROTE-ETC", "NET"):
        assert leak not in lines, r.stdout
    assert ws.read("/inside.txt") == b"w\n"
    assert not Path("/tmp/t").exists() or Path("/tmp/t").read_text() != "t\n"


def test_sandbox_environment_is_an_allowlist(ws: agentfs.Workspace) -> None:
    os.environ["AGENTFS_TEST_SECRET"] = "leak"
    try:
        r = ws.run("env", sandbox=True, env={"GIVEN": "yes"})
    finally:
        del os.environ["AGENTFS_TEST_SECRET"]
    assert "AGENTFS_TEST_SECRET" not in r.stdout and "GIVEN=yes" in r.stdout


def test_agentfs_exec_exit_code_and_undo_hint(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    agentfs.open(db).close()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentfs.cli",
            "exec",
            str(db),
            "--",
            "sh",
            "-c",
            "echo made > f.txt; exit 7",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 7
    assert "agentfs snapshot restore" in done.stderr
    with agentfs.open(db) as ws:
        assert ws.read("/f.txt") == b"made\n"
    mounts = Path("/proc/self/mountinfo").read_text()
    assert "fuse.agentfs" not in mounts or str(tmp_path) not in mounts  # unmounted


def test_execute_command_tool(ws: agentfs.Workspace) -> None:
    approved = Toolset(ws, thread="t1", approve=lambda _call: True)
    out = approved.call("execute_command", {"command": "python3 src/app.py", "timeout_ms": 30000})
    assert out["stdout"] == "v1\n" and out["exit_code"] == 0 and out["snapshot"]
    denied = approved.call("execute_command", {"command": "sudo rm -rf /"})
    assert denied["error"]["code"] == "denied"
    unapproved = Toolset(ws, thread="t1").call("execute_command", {"command": "touch x"})
    assert unapproved["error"]["code"] == "approval_denied" and not ws.exists("/x")
    quiet = Policy.model_validate({"tools": {"execute_command": {"needs_approval": False}}})
    assert Toolset(ws, policy=quiet).call("execute_command", {"command": "true"})["exit_code"] == 0
    ws.tool_calls.publish()  # the changing calls' staged log rows, into tool_calls
    logged = ws.tool_calls.list(name="execute_command")
    assert any(call.error is None for call in logged)
