"""The agent's view of sync: the ``sync_status`` tool, and ``agentfs serve mcp
--sync-on-snapshot`` pushing after each snapshot, driven by the ``mcp`` SDK's client."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

import agentfs
from agentfs import sync
from agentfs.tools import Toolset
from tests.sync.conftest import SyncServer
from tests.sync.test_sync import both_edit, machine, picture
from tests.tools.test_mcp import client


def test_sync_status_tool(tmp_path: Path, server: SyncServer) -> None:
    a, b = both_edit(tmp_path, server)
    with agentfs.Workspace(a, create=False) as ws:
        tools = Toolset(ws, thread="t")
        state = tools.call("sync_status", {"offline": True})
        assert (state["changed"], state["unpushed"], state["behind"]) == (1, 0, None)
        sync.push(b)
        state = tools.call("sync_status", {})
        assert (state["changed"], state["behind"], state["conflicts"]) == (1, 1, [])
        sync.push(a)  # a's edit is older: b's wins here, a's is kept as a version
        result = tools.invoke("sync_status", {})
        assert result.data["conflicts"] == [
            {"path": "/doc.txt", "reason": "changed on both sides: the later change is kept"}
        ]
        assert "Conflict: /doc.txt" in result.text and result.data["last_push"].endswith("Z")
    with agentfs.Workspace(machine(tmp_path, "c")) as ws:
        alone = Toolset(ws).invoke("sync_status", {})
        assert alone.data["remote"] is None and "does not sync" in alone.text
    server.kill()  # the server gone: an error result
    with agentfs.Workspace(b, create=False) as ws:
        error = Toolset(ws).call("sync_status", {})["error"]
        assert error["code"] == "unsupported" and "connection refused" in error["message"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_serve_mcp_pushes_after_each_snapshot(tmp_path: Path, server: SyncServer) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    with agentfs.Workspace(a) as ws:
        ws.write("/notes.md", "turn 1\n")
    sync.setup(a, server.url)
    async with client(a, "--sync-on-snapshot", "--thread", "t1") as session:
        await session.call_tool("write_file", {"path": "/turn2.md", "content": "turn 2\n"})
        done = await session.call_tool("snapshot_create", {"name": "turn-2"})
        assert not done.is_error
        deadline = time.monotonic() + 30
        while sync.status(a, offline=True)["changed"] and time.monotonic() < deadline:
            await anyio.sleep(0.1)
        await session.call_tool("ls", {"path": "/"})  # the server keeps serving meanwhile
    sync.clone(server.url, b)
    assert picture(b) == picture(a)
    with agentfs.Workspace(b, create=False) as ws:
        assert ws.read("/turn2.md") == b"turn 2\n"
        assert {c.name for c in ws.tool_calls.list()} >= {"write_file", "snapshot_create"}
