"""``ws.acting``: who acts is given per block, in this thread or asyncio task only, and the
handle's own identity stays as it was; a tool call acts as its toolset without touching it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import agentfs
from agentfs.core.errors import StaleReadError
from agentfs.tools import Toolset


def _writer(ws: agentfs.Workspace, path: str) -> tuple[str | None, str | None]:
    latest = ws.version(path)
    return latest.thread, latest.actor


def test_a_block_acts_for_what_it_runs_and_the_handle_keeps_its_own(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db", thread="own", actor="me") as ws:
        with ws.acting(thread="chat-42", actor="claude") as who:
            ws.write("/a", "1")
            assert (ws.thread, ws.actor) == ("chat-42", "claude") == who[:2]
            snap = ws.snapshots.create("turn-1")
        ws.write("/b", "2")
        assert _writer(ws, "/a") == ("chat-42", "claude")
        assert _writer(ws, "/b") == ("own", "me")
        assert (snap.thread, snap.actor) == ("chat-42", "claude")
        assert (ws.thread, ws.actor, ws.read_before_write) == ("own", "me", ())


def test_a_block_left_by_an_error_gives_the_identity_back(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db", thread="own") as ws:
        with pytest.raises(FileNotFoundError), ws.acting(thread="t2"):
            ws.read("/missing")
        assert ws.thread == "own"


def test_read_before_write_holds_inside_the_block_only(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db", thread="t1") as ws:
        ws.write("/f", "x")
        with pytest.raises(StaleReadError), ws.acting(thread="t1", read_before_write=True):
            ws.write("/f", "y")
        assert ws.read("/f") == b"x"
        ws.write("/f", "z")  # the handle has no such rule
        with pytest.raises(ValueError):
            ws.acting(thread="t1", read_before_write="")  # a bad glob fails at once


def test_tasks_acting_at_once_through_one_handle_record_their_own_names(tmp_path: Path) -> None:
    """Two asyncio tasks interleave inside their blocks: each write names its own task."""
    with agentfs.open(tmp_path / "ws.db") as ws:

        async def agent(name: str) -> None:
            with ws.acting(thread=name, actor=name):
                for i in range(5):
                    ws.write(f"/{name}/{i}", name, parents=True)
                    await asyncio.sleep(0)  # the other task runs here, inside its own block

        async def both() -> None:
            await asyncio.gather(agent("a"), agent("b"))

        asyncio.run(both())
        for name in ("a", "b"):
            assert {_writer(ws, f"/{name}/{i}") for i in range(5)} == {(name, name)}
        assert (ws.thread, ws.actor) == (None, None)


def test_a_tool_call_acts_as_its_toolset_and_leaves_the_handle_alone(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db", thread="own", actor="me") as ws:
        tools = Toolset(ws, thread="chat-7", actor="coder")
        assert not tools.invoke("write_file", {"path": "/t.md", "content": "x"}).is_error
        assert _writer(ws, "/t.md") == ("chat-7", "coder")
        assert (ws.thread, ws.actor) == ("own", "me")
        assert not tools.invoke("read_file", {"path": "/t.md"}).is_error
        assert [(r.thread, r.path) for r in ws.reads_log()] == [("chat-7", "/t.md")]
