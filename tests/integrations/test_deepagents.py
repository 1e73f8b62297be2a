"""``AgentFSBackend`` under deepagents' own agent: ``create_deep_agent`` with a scripted chat
model writes, edits, reads, greps and runs a command, and everything lands in the workspace
with its audit; the operator's policy holds for every operation; the async twins answer as
the sync ones; a ``CompositeBackend`` routes one directory to a workspace."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deepagents import create_deep_agent
from deepagents.backends import CompositeBackend, StateBackend
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import agentfs
from agentfs.integrations.deepagents import AgentFSBackend
from agentfs.mount.exec import fuse_available
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import ToolPolicy
from tests.integrations.scripted import ScriptedModel, tool_call

NO_MOUNT = fuse_available()


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        opened.write("/README.md", "# demo\nTODO: write notes\n")
        opened.write("/secrets/key", "k\n", parents=True)
        yield opened


def _tool_messages(state: dict[str, Any]) -> dict[str, str]:
    return {str(m.name): str(m.content) for m in state["messages"] if isinstance(m, ToolMessage)}


def test_a_deep_agent_works_in_the_workspace(ws: agentfs.Workspace) -> None:
    script = [
        tool_call(1, "write_file", file_path="/notes.md", content="one\ntwo\n"),
        tool_call(2, "edit_file", file_path="/notes.md", old_string="two", new_string="2"),
        tool_call(3, "read_file", file_path="/notes.md"),
        tool_call(4, "grep", pattern="TODO"),
        tool_call(5, "glob", pattern="*.md"),
        tool_call(6, "ls", path="/"),
        AIMessage(content="done"),
    ]
    with AgentFSBackend(ws, thread="t1") as backend:
        agent = create_deep_agent(model=ScriptedModel(messages=iter(script)), backend=backend)
        state = agent.invoke({"messages": [HumanMessage("take notes")]})
    assert state["messages"][-1].content == "done"
    assert ws.read("/notes.md") == b"one\n2\n"
    seen = _tool_messages(state)
    assert "one" in seen["read_file"] and "2" in seen["read_file"]
    assert "/README.md" in seen["grep"]
    assert "/notes.md" in seen["glob"] and "/README.md" in seen["glob"]
    assert "/secrets/" in seen["ls"]
    calls = list(reversed(ws.tool_calls.list()))
    assert [c.name for c in calls] == ["write_file", "edit_file", "read_file", "grep", "glob", "ls"]
    assert all(c.error is None for c in calls)
    # each change is linked to the version it wrote, made by this actor in this thread
    latest = ws.history("/notes.md")[-1]
    assert (latest.thread, latest.actor) == ("t1", "deepagents")
    writer = ws.tool_calls.writer("/notes.md", latest.n)
    assert writer is not None and writer.name == "edit_file"
    assert any(r.path == "/notes.md" for r in ws.reads_log("t1"))


@pytest.mark.skipif(NO_MOUNT is not None, reason=f"no FUSE mount here: {NO_MOUNT}")
def test_a_deep_agents_command_runs_in_the_mounted_workspace(ws: agentfs.Workspace) -> None:
    script = [
        tool_call(1, "execute", command="grep -c TODO README.md > count.txt; cat count.txt"),
        tool_call(2, "execute", command="echo oops >&2; exit 3"),
        AIMessage(content="done"),
    ]
    with AgentFSBackend(ws) as backend:
        agent = create_deep_agent(model=ScriptedModel(messages=iter(script)), backend=backend)
        state = agent.invoke({"messages": [HumanMessage("count")]})
    results = [str(m.content) for m in state["messages"] if isinstance(m, ToolMessage)]
    assert results[0].startswith("1")
    assert results[1].startswith("[stderr] oops\n\nExit code: 3")
    assert ws.read("/count.txt") == b"1\n"
    failed, ran = ws.tool_calls.list(name="execute")
    assert ran.result["snapshot"] and ws.snapshots.get(ran.result["snapshot"]) is not None
    assert failed.error is None  # a command that fails ran: its exit code is for the model


def test_the_operators_policy_holds_for_every_operation(ws: agentfs.Workspace) -> None:
    policy = Policy(
        defaults=ToolPolicy(deny=["/secrets/**"]),
        tools={
            "write_file": ToolPolicy(deny=["/README.md", "/secrets/**"]),
            "delete_file": ToolPolicy(enabled=False),
        },
    )
    backend = AgentFSBackend(ws, policy=policy)
    assert backend.read("/secrets/key").error
    assert backend.download_files(["/secrets/key"])[0].error == "permission_denied"
    assert [e["path"] for e in backend.ls("/").entries or []] == ["/README.md", "/secrets/"]
    assert backend.ls("/secrets").entries == []
    assert backend.grep("k", "/").matches == []
    assert [m["path"] for m in backend.glob("**").matches or []] == ["/README.md"]
    assert not backend.glob("*", "/secrets").matches
    assert backend.write("/README.md", "gone").error
    assert backend.upload_files([("/README.md", b"gone")])[0].error == "permission_denied"
    assert backend.edit("/README.md", "demo", "x").error is None  # edit_file is not denied it
    assert backend.delete("/README.md").error
    assert ws.exists("/README.md") and ws.exists("/secrets/key")
    assert backend.write("/secrets/new", "x").error and not ws.exists("/secrets/new")


def test_a_read_only_policy_refuses_every_change(ws: agentfs.Workspace) -> None:
    backend = AgentFSBackend(ws, policy=Policy(read_only=True))
    assert backend.write("/a", "x").error
    assert backend.edit("/README.md", "demo", "x").error
    assert backend.delete("/README.md").error
    assert backend.upload_files([("/a", b"x")])[0].error == "permission_denied"
    assert "Exit code" not in backend.execute("touch /tmp/x").output
    assert backend.execute("touch made").exit_code == 1 and not ws.exists("/made")
    assert ws.read("/README.md").startswith(b"# demo")


def test_the_async_twins_answer_as_the_sync_calls(ws: agentfs.Workspace) -> None:
    backend = AgentFSBackend(ws)

    async def run() -> list[Any]:
        return [
            await backend.awrite("/a.txt", "x\ny\n"),
            await backend.aedit("/a.txt", "y", "z"),
            await backend.aread("/a.txt", 1, 1),
            await backend.als("/"),
            await backend.aglob("*.txt"),
            await backend.agrep("z", max_count=1),
            await backend.adownload_files(["/a.txt"]),
            await backend.aupload_files([("/b.bin", b"\0")]),
            await backend.adelete("/b.bin"),
        ]

    wrote, edited, read, listed, globbed, grepped, got, put, deleted = asyncio.run(run())
    assert wrote.path == "/a.txt" and edited.occurrences == 1
    assert read == backend.read("/a.txt", 1, 1) and read.file_data == {
        "content": "z\n",
        "encoding": "utf-8",
    }
    assert listed == backend.ls("/") and globbed == backend.glob("*.txt")
    assert grepped.matches == [{"path": "/a.txt", "line": 2, "text": "z"}]
    assert got[0].content == b"x\nz\n" and put[0].error is None and deleted.error is None


def test_a_toolset_given_lends_its_thread_policy_and_audit_log(ws: agentfs.Workspace) -> None:
    policy = Policy(defaults=ToolPolicy(deny=["/secrets/**"]))
    with Toolset(ws, thread="t9", actor="me", policy=policy) as toolset:
        backend = AgentFSBackend(toolset)
        assert backend.write("/a.txt", "x").error is None
        assert backend.read("/secrets/key").error
        assert toolset.invoke("read_file", {"path": "/a.txt"}).error is None
    assert (ws.history("/a.txt")[-1].thread, ws.history("/a.txt")[-1].actor) == ("t9", "me")
    # the given Toolset's close published the backend's rows too, the refused read's included
    assert sorted(c.name for c in ws.tool_calls.list()) == ["read_file", "read_file", "write_file"]


def test_a_composite_backend_keeps_memories_in_the_workspace(ws: agentfs.Workspace) -> None:
    script = [
        tool_call(1, "write_file", file_path="/memories/user.md", content="likes tea\n"),
        tool_call(2, "write_file", file_path="/scratch.txt", content="draft\n"),
        AIMessage(content="noted"),
    ]
    backend = CompositeBackend(default=StateBackend(), routes={"/memories/": AgentFSBackend(ws)})
    agent = create_deep_agent(model=ScriptedModel(messages=iter(script)), backend=backend)
    state = agent.invoke({"messages": [HumanMessage("remember")]})
    assert ws.read("/user.md") == b"likes tea\n"  # the route's prefix is the workspace's root
    assert not ws.exists("/scratch.txt")  # the rest stays in the agent's state
    assert "/scratch.txt" in state["files"]


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "deepagents_memories.py"


def _example(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, env=env, check=False
    )


def test_the_memories_example_remembers_across_runs(tmp_path: Path) -> None:
    db = str(tmp_path / "memories.db")
    first = _example(db, "I like tea", "--scripted")
    second = _example(db, "My cat is Tom", "--scripted")
    assert first.returncode == 0 and first.stdout.strip() == "Noted. Memories kept: 1.", (
        first.stderr
    )
    assert second.returncode == 0 and second.stdout.strip() == "Noted. Memories kept: 2."
    with agentfs.open(db) as ws:
        assert ws.read("/001.md") == b"I like tea\n" and ws.read("/002.md") == b"My cat is Tom\n"
        assert ws.history("/002.md")[-1].thread == "memories"
        assert [c.name for c in ws.tool_calls.list()] == ["write_file", "ls", "write_file", "ls"]


def test_the_memories_example_without_a_key_says_so(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = _example(str(tmp_path / "m.db"), "hello", env=env)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "set ANTHROPIC_API_KEY to run against anthropic:claude-sonnet-4-5, or run --scripted"
    )
    assert not (tmp_path / "m.db").exists()
