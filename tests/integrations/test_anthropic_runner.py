"""End to end, offline: the SDK's own tool runner (``client.beta.messages.tool_runner``) drives
the workspace's Anthropic tools against a scripted model behind an HTTP mock transport, and
examples/anthropic_loop.py runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

import agentfs
from agentfs.integrations.anthropic import (
    AgentFSMemoryTool,
    AgentFSTextEditorTool,
    AsyncAgentFSMemoryTool,
    agent_toolset,
    async_agent_toolset,
)

ROOT = Path(__file__).resolve().parents[2]
Reply = dict[str, Any]


def reply(n: int, content: list[dict[str, Any]], stop: str) -> Reply:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def uses(n: int, *calls: tuple[str, dict[str, Any]]) -> Reply:
    blocks = [
        {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": arguments}
        for i, (name, arguments) in enumerate(calls)
    ]
    return reply(n, blocks, "tool_use")


def scripted(
    replies: list[Reply], seen: list[dict[str, Any]]
) -> Callable[[httpx2.Request], httpx2.Response]:
    """A model that answers each request with the next reply, keeping what it was sent."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        seen.append(body)
        return httpx2.Response(200, json=replies[len(seen) - 1])

    return handle


def tool_results(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for body in seen
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        yield opened


SCRIPT = [
    uses(0, ("memory", {"command": "view", "path": "/memories"})),
    uses(
        1,
        ("memory", {"command": "create", "path": "/memories/prefs.md", "file_text": "tea\n"}),
        ("write", {"file_path": "src/app.py", "content": "print('hi')\n"}),
    ),
    uses(
        2,
        (
            "str_replace_based_edit_tool",
            {"command": "str_replace", "path": "/src/app.py", "old_str": "hi", "new_str": "hello"},
        ),
        ("memory", {"command": "view", "path": "/memories/missing.md"}),
    ),
    uses(3, ("grep", {"pattern": "hello"})),
    reply(4, [{"type": "text", "text": "done"}], "end_turn"),
]


def test_the_sync_tool_runner_runs_the_workspaces_tools(ws: agentfs.Workspace) -> None:
    seen: list[dict[str, Any]] = []
    http = httpx2.Client(transport=httpx2.MockTransport(scripted(SCRIPT, seen)))
    client = anthropic.Anthropic(api_key="test", http_client=http)
    tools = [
        AgentFSMemoryTool(ws, thread="t"),
        AgentFSTextEditorTool(ws, thread="t"),
        *agent_toolset(ws, thread="t"),
    ]
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5-5",
        max_tokens=1024,
        tools=tools,
        messages=[{"role": "user", "content": "remember I like tea, write an app"}],
    )
    final = runner.until_done()
    assert [b.text for b in final.content if b.type == "text"] == ["done"]
    sent = seen[0]["tools"]
    assert {"type": "memory_20250818", "name": "memory"} in sent
    assert {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"} in sent
    assert {t.get("name") for t in sent} >= {"bash", "read", "write", "edit", "glob", "grep"}
    assert ws.read_text("/memories/prefs.md") == "tea\n"
    assert ws.read_text("/src/app.py") == "print('hello')\n"
    results = {r["tool_use_id"]: r for r in tool_results(seen)}
    assert results["toolu_1_1"]["content"] == "wrote 12 bytes to src/app.py"
    assert results["toolu_2_1"] == {
        "type": "tool_result",
        "tool_use_id": "toolu_2_1",
        "content": "The path /memories/missing.md does not exist. Please provide a valid path.",
        "is_error": True,
    }
    assert results["toolu_3_0"]["content"] == "/src/app.py:1:print('hello')\n"
    for tool in tools:
        tool.toolset.flush()  # type: ignore[attr-defined]
    calls = ws.tool_calls.list()
    assert sorted(c.name for c in calls) == sorted(
        ["memory_view", "memory_create", "write", "text_editor_str_replace", "memory_view", "grep"]
    )
    writer = ws.tool_calls.writer("/src/app.py", 2)
    assert writer is not None and writer.name == "text_editor_str_replace"


def test_the_async_tool_runner_runs_them_in_place(ws: agentfs.Workspace) -> None:
    seen: list[dict[str, Any]] = []
    script = [
        uses(0, ("memory", {"command": "create", "path": "/memories/a.md", "file_text": "x"})),
        uses(1, ("read", {"file_path": "/memories/a.md"})),
        reply(2, [{"type": "text", "text": "ok"}], "end_turn"),
    ]
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(scripted(script, seen)))
    client = anthropic.AsyncAnthropic(api_key="test", http_client=http)

    async def session() -> str:
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-5-5",
            max_tokens=1024,
            tools=[AsyncAgentFSMemoryTool(ws), *async_agent_toolset(ws, names=("read",))],
            messages=[{"role": "user", "content": "go"}],
        )
        final = await runner.until_done()
        return "".join(b.text for b in final.content if b.type == "text")

    assert asyncio.run(session()) == "ok"
    assert {r["tool_use_id"]: r["content"] for r in tool_results(seen)}["toolu_1_0"] == "x"


def test_the_example_runs_offline(tmp_path: Path) -> None:
    workspace = tmp_path / "ws.db"
    with agentfs.open(workspace) as ws:
        ws.write("/src/app.py", "print(1)\n", parents=True)
    example = [sys.executable, str(ROOT / "examples" / "anthropic_loop.py"), str(workspace)]
    done = subprocess.run(
        [*example, "survey the workspace", "--scripted"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "4 tool calls in the audit" in done.stdout
    with agentfs.open(workspace) as ws:
        assert "/src/app.py" in ws.read_text("/NOTES.md")
        assert ws.read_text("/memories/survey.md").startswith("Surveyed")
        assert {c.name for c in ws.tool_calls.list()} == {
            "memory_view",
            "glob",
            "write",
            "memory_create",
        }
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    refused = subprocess.run([*example, "x"], capture_output=True, text=True, env=env, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "set ANTHROPIC_API_KEY to run against a model, or run --scripted"
    ]
