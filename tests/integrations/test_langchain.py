"""The LangChain adapter against the real langchain packages: the workspace's tools as
``BaseTool``s, each call through a ``Toolset`` (policy, audit, read tracking), sync and async,
and langchain's own agent driving them with a scripted chat model, offline."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

import agentfs
from agentfs.integrations.langchain import tools
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import ToolPolicy
from tests.integrations.scripted import ScriptedModel, tool_call


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        opened.write("/notes.md", "one\ntwo\n")
        opened.write("/secrets/key", "k\n", parents=True)
        yield opened


def _by_name(found: Sequence[BaseTool]) -> dict[str, BaseTool]:
    return {t.name: t for t in found}


def test_every_tool_keeps_its_name_description_and_schema(ws: agentfs.Workspace) -> None:
    offered = Toolset(ws).openai_tools()
    adapted = tools(ws)
    assert [t.name for t in adapted] == [s["function"]["name"] for s in offered]
    for schema, tool in zip(offered, adapted, strict=True):
        assert convert_to_openai_tool(tool)["function"] == schema["function"]


def test_calls_go_through_the_toolset(ws: agentfs.Workspace) -> None:
    toolset = Toolset(ws, thread="t1", actor="langchain", tools=["read_file", "edit_file"])
    found = _by_name(tools(toolset))
    assert set(found) == {"read_file", "edit_file"}
    assert "two" in found["read_file"].invoke({"path": "/notes.md"})
    edit = {"path": "/notes.md", "old_string": "two", "new_string": "2"}
    assert "Error" not in found["edit_file"].invoke(edit)
    assert ws.read("/notes.md") == b"one\n2\n"
    toolset.flush()
    latest = ws.version("/notes.md")
    writer = ws.tool_calls.writer("/notes.md", latest.n)
    assert writer is not None and writer.name == "edit_file"
    assert (latest.thread, latest.actor) == ("t1", "langchain")
    assert [r.path for r in ws.reads_log("t1")] == ["/notes.md"]
    # the structured result rides along as the tool message's artifact
    call = {"name": "read_file", "args": {"path": "/notes.md"}, "id": "c1", "type": "tool_call"}
    message = found["read_file"].invoke(call)
    assert isinstance(message, ToolMessage) and message.artifact["total_lines"] == 2


def test_the_policy_holds_and_errors_are_results(ws: agentfs.Workspace) -> None:
    policy = Policy(defaults=ToolPolicy(deny=["/secrets/**"]))
    found = _by_name(tools(ws, policy=policy))
    refused = found["read_file"].invoke({"path": "/secrets/key"})
    assert "denied" in refused and "k\n" not in refused
    assert "denied" in found["write_file"].invoke({"path": "/secrets/new", "content": "x"})
    assert not ws.exists("/secrets/new")
    bad = found["read_file"].invoke({"path": "/notes.md", "offset": -1})
    assert bad.startswith("Error [invalid_argument]") and "offset" in bad


def test_the_async_form_runs_the_sametool_call(ws: agentfs.Workspace) -> None:
    found = _by_name(tools(ws))
    text = asyncio.run(found["write_file"].ainvoke({"path": "/a.txt", "content": "async\n"}))
    assert "Error" not in text and ws.read("/a.txt") == b"async\n"


def test_langchains_agent_works_in_the_workspace(ws: agentfs.Workspace) -> None:
    script = iter(
        [
            tool_call(1, "write_file", path="/plan.md", content="# Plan\n"),
            tool_call(2, "read_file", path="/plan.md"),
            tool_call(3, "read_file", path="/missing.md"),
            AIMessage(content="done"),
        ]
    )
    with Toolset(ws, thread="agent") as toolset:
        agent = create_agent(model=ScriptedModel(messages=script), tools=tools(toolset))
        state = agent.invoke({"messages": [HumanMessage("write a plan")]})
    replies = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(replies) == 3 and "# Plan" in str(replies[1].content)
    assert "not_found" in str(replies[2].content)
    assert state["messages"][-1].content == "done"
    assert ws.read("/plan.md") == b"# Plan\n"
    names = [c.name for c in ws.tool_calls.list()]
    assert sorted(names) == ["read_file", "read_file", "write_file"]


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langchain_agent.py"


def test_the_example_runs_a_turn_offline_and_can_undo_it(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/src/app.py", "print(1)\n", parents=True)
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(db), "write a plan", "--scripted"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Wrote /PLAN.md: Created /PLAN.md")
    assert f"agentfs snapshot restore {db} snap-1" in done.stdout
    with agentfs.open(db) as ws:
        assert "- app.py\n" in ws.read_text("/PLAN.md")
        assert sorted(c.name for c in ws.tool_calls.list()) == ["list_tree", "write_file"]
        ws.snapshots.restore("snap-1")
        assert not ws.exists("/PLAN.md")


def test_the_example_without_a_key_says_so_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(tmp_path / "ws.db"), "hello"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "set ANTHROPIC_API_KEY to run against anthropic:claude-sonnet-4-5, or run --scripted\n"
    )
