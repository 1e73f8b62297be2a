"""The OpenAI Agents SDK's own MCP client (``agents.mcp.MCPServerStdio``) against ``agentfs serve
mcp``, configured as docs/mcp.md shows: it lists the tools and calls them, offline, and what it
writes lands in the workspace with its audit row."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agents.mcp import MCPServerStdio

import agentfs
from tests.clirun import AGENTFS


async def _session(db: Path) -> tuple[list[Any], Any, Any]:
    params = {"command": str(AGENTFS), "args": ["serve", "mcp", str(db), "--thread", "main"]}
    async with MCPServerStdio(
        params=params, name="agentfs", client_session_timeout_seconds=60
    ) as server:
        tools = await server.list_tools()
        written = await server.call_tool("write_file", {"path": "/out.txt", "content": "sdk\n"})
        read = await server.call_tool("read_file", {"path": "/notes.md"})
        return tools, written, read


def test_the_openai_agents_sdk_lists_and_calls_the_tools(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/notes.md", "hello from the workspace\n")
    tools, written, read = asyncio.run(_session(db))
    assert {"read_file", "write_file", "edit_file", "grep", "execute_command"} <= {
        t.name for t in tools
    }
    assert not written.is_error and not read.is_error
    assert "hello from the workspace" in read.content[0].text
    with agentfs.open(db) as ws:
        assert ws.read("/out.txt") == b"sdk\n"
        assert {c.name for c in ws.tool_calls.list()} == {"write_file", "read_file"}
