"""``ShellExecutor`` for the SDK's ``ShellTool``: each command runs in the mounted workspace,
sandboxed, through agentfs's ``execute_command``; what it writes lands in the workspace, and
its output, exit code, stderr and timeout come back in the SDK's shapes, audited."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agents import RunContextWrapper, ShellTool
from agents.tool import (
    ShellActionRequest,
    ShellCallData,
    ShellCallOutcome,
    ShellCommandRequest,
    ShellResult,
)

import agentfs
from agentfs.integrations.openai_agents import ShellExecutor
from agentfs.mount.exec import fuse_available
from agentfs.tools import Policy
from agentfs.tools.policy import ToolPolicy

pytestmark = pytest.mark.skipif(
    fuse_available() is not None, reason=f"no FUSE mount here: {fuse_available()}"
)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        opened.write("/src/app.py", "print('hello')\n", parents=True)
        yield opened


def _request(
    *commands: str, timeout_ms: int | None = None, max_output_length: int | None = None
) -> ShellCommandRequest:
    action = ShellActionRequest(
        commands=list(commands), timeout_ms=timeout_ms, max_output_length=max_output_length
    )
    return ShellCommandRequest(
        ctx_wrapper=RunContextWrapper(context=None), data=ShellCallData("call_1", action)
    )


def test_commands_run_in_the_workspace_and_their_files_land(ws: agentfs.Workspace) -> None:
    with ShellExecutor(ws, thread="t1") as executor:
        assert ShellTool(executor=executor).executor is executor
        result = executor(
            _request("python3 src/app.py > out.txt && cat out.txt", "echo oops >&2; exit 3")
        )
    assert isinstance(result, ShellResult)
    first, second = result.output
    assert (first.stdout, first.stderr, first.outcome) == (
        "hello\n",
        "",
        ShellCallOutcome(type="exit", exit_code=0),
    )
    assert first.command == "python3 src/app.py > out.txt && cat out.txt"
    assert ws.read("/out.txt") == b"hello\n"
    assert (second.stderr, second.exit_code, second.status) == ("oops\n", 3, "completed")
    calls = ws.tool_calls.list(name="execute_command")
    assert [c.parameters["command"] for c in reversed(calls)] == [
        "python3 src/app.py > out.txt && cat out.txt",
        "echo oops >&2; exit 3",
    ]
    assert [c.result["exit_code"] for c in reversed(calls) if c.result] == [0, 3]
    # each command can be undone: its snapshot is in the result for the host
    assert first.provider_data is not None
    ws.snapshots.restore(first.provider_data["snapshot"])
    assert not ws.exists("/out.txt")


def test_the_requests_timeout_and_output_length_hold(ws: agentfs.Workspace) -> None:
    executor = ShellExecutor(ws)
    slow = executor(_request("echo started; sleep 30", timeout_ms=1000)).output[0]
    assert slow.outcome == ShellCallOutcome(type="timeout") and slow.status == "timeout"
    assert slow.stdout == "started\n"
    long = executor(_request("seq 1 10000; echo err >&2", max_output_length=20))
    assert long.max_output_length == 20
    out = long.output[0]
    assert out.stdout == "1\n2\n3\n4\n5\n6\n7\n8\n9\n10"[:20] and out.stderr == ""
    assert out.exit_code == 0


def test_a_refused_command_runs_nowhere_and_says_why(ws: agentfs.Workspace) -> None:
    with ShellExecutor(ws) as executor:
        refused = executor(_request("sudo touch /x")).output[0]
    assert refused.exit_code == 126 and "[denied]" in refused.stderr
    assert not ws.exists("/x")
    off = Policy(tools={"execute_command": ToolPolicy(enabled=False)})
    with ShellExecutor(ws, policy=off) as executor:
        disabled = executor(_request("touch y")).output[0]
    assert disabled.exit_code == 126 and "disabled" in disabled.stderr
    assert not ws.exists("/y")
    asking = Policy(tools={"execute_command": ToolPolicy(needs_approval=True)})
    with ShellExecutor(ws, policy=asking, approve=lambda _request: False) as executor:
        unapproved = executor(_request("touch z")).output[0]
    assert unapproved.exit_code == 126 and "[approval_denied]" in unapproved.stderr
    assert not ws.exists("/z")
    logged = [c.error for c in ws.tool_calls.list(name="execute_command")]
    assert len(logged) == 3 and all(logged)
