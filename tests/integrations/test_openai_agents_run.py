"""The SDK's own runner (``agents.Runner``) driving an agent whose tools are the workspace's,
with a scripted ``Model``, offline: function calls, ``apply_patch`` calls and shell calls land
in the workspace, the model reads their results, the SDK's approval holds a command, and every
call is in the audit. Then examples/openai_agents_sdk.py, run as a user runs it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from agents import Agent, ApplyPatchTool, RunConfig, Runner, ShellTool
from agents.items import TResponseOutputItem
from openai.types.responses import ResponseApplyPatchToolCall, ResponseFunctionShellToolCall
from openai.types.responses.response_apply_patch_tool_call import (
    OperationCreateFile,
    OperationUpdateFile,
)
from openai.types.responses.response_function_shell_tool_call import Action

import agentfs
from agentfs.integrations.openai_agents import AgentFSEditor, ShellExecutor, function_tools
from agentfs.integrations.toolsets import toolset_for
from agentfs.mount.exec import fuse_available

ROOT = Path(__file__).resolve().parents[2]
NO_MOUNT = fuse_available()


def _example() -> ModuleType:
    path = ROOT / "examples" / "openai_agents_sdk.py"
    spec = importlib.util.spec_from_file_location("openai_agents_sdk", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


EXAMPLE = _example()
function_call = EXAMPLE.function_call
message = EXAMPLE.message


def _patch(call_id: str, operation: Any) -> ResponseApplyPatchToolCall:
    return ResponseApplyPatchToolCall(
        id=call_id,
        call_id=call_id,
        type="apply_patch_call",
        status="completed",
        operation=operation,
    )


def _shell(call_id: str, *commands: str) -> ResponseFunctionShellToolCall:
    action = Action(commands=list(commands), timeout_ms=30_000)
    return ResponseFunctionShellToolCall(
        id=call_id, call_id=call_id, type="shell_call", status="completed", action=action
    )


def _outputs(items: list[Any]) -> dict[str, Any]:
    """The tool outputs the model was sent, by call id."""
    return {
        item["call_id"]: item
        for item in items
        if isinstance(item, dict) and str(item.get("type", "")).endswith("_output")
    }


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        opened.write("/README.md", "# Greeter\n")
        yield opened


def test_the_runner_drives_function_tools_and_the_editor(ws: agentfs.Workspace) -> None:
    def first(items: list[Any]) -> list[TResponseOutputItem]:
        read = {"path": "README.md", "offset": None, "limit": None, "max_bytes": None}
        create = OperationCreateFile(
            type="create_file", path="src/app.py", diff="+def greet():\n+    return 'hi'\n"
        )
        return [function_call("c1", "read_file", {**read, "version": None}), _patch("c2", create)]

    def second(items: list[Any]) -> list[TResponseOutputItem]:
        seen = _outputs(items)
        assert "# Greeter" in seen["c1"]["output"]
        assert (seen["c2"]["status"], seen["c2"]["output"]) == ("completed", "Created /src/app.py")
        wrong = OperationUpdateFile(type="update_file", path="src/app.py", diff="@@\n-nope\n+x")
        return [_patch("c3", wrong)]

    def third(items: list[Any]) -> list[TResponseOutputItem]:
        failed = _outputs(items)["c3"]
        assert failed["status"] == "failed" and "[patch_failed]" in failed["output"]
        fix = OperationUpdateFile(
            type="update_file",
            path="src/app.py",
            diff="@@ def greet():\n-    return 'hi'\n+    return 'hello'\n",
        )
        note = {"key": "status", "value": '{"done": true}'}
        return [_patch("c4", fix), function_call("c5", "kv_set", note)]

    def last(items: list[Any]) -> list[TResponseOutputItem]:
        seen = _outputs(items)
        assert seen["c4"]["status"] == "completed" and "Error" not in seen["c5"]["output"]
        return [message("greet says hello")]

    model = EXAMPLE.ScriptedModel([first, second, third, last])
    with toolset_for(ws, thread="chat-1", actor="agent") as toolset:
        agent = EXAMPLE.build_agent(toolset, model)
        names = [tool.name for tool in agent.tools]
        assert names.count("apply_patch") == 1 and "execute_command" not in names
        result = Runner.run_sync(
            agent, "make greet say hello", run_config=RunConfig(tracing_disabled=True)
        )
    assert result.final_output == "greet says hello" and not model.steps
    # apply_diff's create joins the '+' lines: no newline after the last (the SDK's own)
    assert ws.read("/src/app.py") == b"def greet():\n    return 'hello'"
    assert ws.kv.get("status") == {"done": True}
    calls = [(c.name, c.error is None) for c in reversed(ws.tool_calls.list())]
    assert sorted(calls) == sorted(
        [
            ("read_file", True),
            ("apply_patch.create_file", True),
            ("apply_patch.update_file", False),
            ("apply_patch.update_file", True),
            ("kv_set", True),
        ]
    )
    version = ws.version("/src/app.py")
    assert (version.n, version.thread, version.actor) == (2, "chat-1", "agent")
    writer = ws.tool_calls.writer("/src/app.py", 2)
    assert writer is not None and writer.name == "apply_patch.update_file"
    assert [r.path for r in ws.reads_log("chat-1")] == ["/README.md"]


@pytest.mark.skipif(NO_MOUNT is not None, reason=f"no FUSE mount here: {NO_MOUNT}")
def test_the_runner_drives_the_shell_and_the_sdks_approval_holds_it(
    ws: agentfs.Workspace,
) -> None:
    def run(items: list[Any]) -> list[TResponseOutputItem]:
        return [_shell("s1", "printf 'print(42)\\n' > job.py", "python3 job.py; exit 4")]

    def done(items: list[Any]) -> list[TResponseOutputItem]:
        entries = _outputs(items)["s1"]["output"]
        assert [e["outcome"] for e in entries] == [
            {"type": "exit", "exit_code": 0},
            {"type": "exit", "exit_code": 4},
        ]
        assert entries[1]["stdout"] == "42\n"
        return [message("ran it")]

    model = EXAMPLE.ScriptedModel([run, done])
    with toolset_for(ws, thread="chat-2") as toolset:
        agent = Agent(
            name="runner",
            model=model,
            tools=[ShellTool(executor=ShellExecutor(toolset), needs_approval=True)],
        )
        config = RunConfig(tracing_disabled=True)
        paused = Runner.run_sync(agent, "run the job", run_config=config)
        assert len(paused.interruptions) == 1 and not ws.exists("/job.py")  # held for a person
        state = paused.to_state()
        state.approve(paused.interruptions[0])
        result = Runner.run_sync(agent, state, run_config=config)
    assert result.final_output == "ran it"
    assert ws.read("/job.py") == b"print(42)\n"
    commands = [
        c.parameters["command"] for c in reversed(ws.tool_calls.list(name="execute_command"))
    ]
    assert commands == ["printf 'print(42)\\n' > job.py", "python3 job.py; exit 4"]


def test_a_shared_toolset_one_audit_log_for_every_tool(ws: agentfs.Workspace) -> None:
    with toolset_for(ws, thread="t") as toolset:
        editor = AgentFSEditor(toolset)
        tools = function_tools(toolset, names=["ls"])
        assert editor.toolset.audit is toolset.audit and editor.toolset.thread == "t"
        assert [t.name for t in tools] == ["ls"]
        agent = Agent(name="a", tools=[*tools, ApplyPatchTool(editor=editor)])
        assert {t.name for t in agent.tools} == {"ls", "apply_patch"}


def _run_example(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    command = [sys.executable, str(ROOT / "examples" / "openai_agents_sdk.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def test_the_example_runs_offline_with_its_scripted_model(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/src/app.py", "print(1)\n", parents=True)
    done = _run_example(str(db), "survey the workspace", "--scripted")
    assert done.returncode == 0, done.stderr
    assert "to undo the turn: agentfs snapshot restore" in done.stdout
    with agentfs.open(db) as ws:
        notes = ws.read_text("/NOTES.md")
        assert notes.startswith("# Files") and "app.py" in notes
        names = sorted(c.name for c in ws.tool_calls.list())
        assert names == ["apply_patch.create_file", "execute_command", "list_tree"]
        if NO_MOUNT is None:
            assert "4 NOTES.md" in done.stdout  # the shell counted the lines in the mount
        ws.snapshots.restore(done.stdout.split()[-1])  # the turn's snapshot
        assert not ws.exists("/NOTES.md")


def test_the_example_without_a_model_says_how_to_get_one(tmp_path: Path) -> None:
    done = _run_example(str(tmp_path / "ws.db"), "anything")
    assert done.returncode == 2 and "--scripted" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "ws.db").exists()
