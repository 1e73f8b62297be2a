"""Tool surfaces: another set of tool names and shapes over the same workspace, run by a
``Toolset`` under the policy entries of the agentfs tools they are governed by, audited and
transacted as agentfs's own are. A surface must not be a way around the operator's rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs.tools import Policy, Toolset
from agentfs.tools.context import Context
from agentfs.tools.policy import ToolPolicy
from agentfs.tools.spec import Surface, ToolInput, ToolOutput

SURFACE = Surface("a framework's")


class CatInput(ToolInput):
    path: str


class CatOutput(ToolOutput):
    body: str


class PutInput(ToolInput):
    path: str
    body: str


class PutOutput(ToolOutput):
    path: str


@SURFACE.tool(
    "cat", title="Cat", description="Read a file whole.", tracks_reads=True, governed_by="read_file"
)
def cat(ctx: Context, args: CatInput) -> CatOutput:
    return CatOutput(body=ctx.ws.read(ctx.path(args.path)).decode())


@SURFACE.tool(
    "put",
    title="Put",
    description="Write a file whole.",
    mutates=True,
    destructive=True,
    governed_by="write_file",
)
def put(ctx: Context, args: PutInput) -> PutOutput:
    path = ctx.path(args.path, write=True)
    ctx.write(path, args.body.encode(), parents=True)
    return PutOutput(path=path)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        opened.write("/notes.md", "hello\n")
        opened.write("/secrets/key", "k\n", parents=True)
        yield opened


def test_a_surface_offers_its_own_names_and_shapes(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, surface=SURFACE)
    assert [t.name for t in tools.tools()] == ["cat", "put"]
    assert tools.call("cat", {"path": "/notes.md"}) == {"body": "hello\n"}
    assert tools.call("put", {"path": "/a/b.txt", "body": "x"}) == {"path": "/a/b.txt"}
    assert ws.read("/a/b.txt") == b"x"
    unknown = tools.call("read_file", {"path": "/notes.md"})["error"]
    assert unknown["code"] == "unknown_tool" and "cat, put" in unknown["message"]
    with pytest.raises(ValueError, match="read_file"):
        Toolset(ws, surface=SURFACE, tools=["read_file"])


def test_the_policy_of_the_governing_tool_rules(ws: agentfs.Workspace) -> None:
    off = Toolset(
        ws, surface=SURFACE, policy=Policy(tools={"read_file": ToolPolicy(enabled=False)})
    )
    assert [t.name for t in off.tools()] == ["put"]
    assert off.call("cat", {"path": "/notes.md"})["error"]["code"] == "denied"
    deny = Policy(defaults=ToolPolicy(deny=["/secrets/**"]))
    guarded = Toolset(ws, surface=SURFACE, policy=deny)
    assert guarded.call("cat", {"path": "/secrets/key"})["error"]["code"] == "denied"
    assert guarded.call("put", {"path": "/secrets/new", "body": "x"})["error"]["code"] == "denied"
    assert not ws.exists("/secrets/new")
    asked: list[str] = []
    approval = Policy(tools={"write_file": ToolPolicy(needs_approval=True)})
    careful = Toolset(
        ws, surface=SURFACE, policy=approval, approve=lambda r: bool(asked.append(r.tool))
    )
    assert careful.needs_approval("put") and not careful.needs_approval("cat")
    assert careful.call("put", {"path": "/b", "body": "x"})["error"]["code"] == "approval_denied"
    assert asked == ["put"] and not ws.exists("/b")
    reader = Toolset(ws, surface=SURFACE, policy=Policy(read_only=True))
    assert [t.name for t in reader.tools()] == ["cat"]
    assert reader.call("put", {"path": "/c", "body": "x"})["error"]["code"] == "read_only"


def test_a_surfaces_calls_are_audited_with_what_they_wrote(ws: agentfs.Workspace) -> None:
    with Toolset(ws, surface=SURFACE, thread="t1") as tools:
        wrote = tools.invoke("put", {"path": "/notes.md", "body": "changed\n"})
        tools.call("cat", {"path": "/notes.md"})
    assert wrote.versions == [("/notes.md", 2)]
    writer = ws.tool_calls.writer("/notes.md", 2)
    assert writer is not None and writer.name == "put"
    assert ws.tool_calls.writes(writer.id) == wrote.versions
    assert {c.name for c in ws.tool_calls.list()} == {"put", "cat"}
    assert ws.version("/notes.md").thread == "t1"
    assert [r.path for r in ws.reads_log("t1")] == ["/notes.md"]


def test_a_profile_is_a_surface_by_name(ws: agentfs.Workspace) -> None:
    assert Toolset(ws, profile="agentfs").surface is Toolset(ws).surface
    with pytest.raises(ValueError, match="no profile 'nope'; the profiles are: agentfs"):
        Toolset(ws, profile="nope")
    with pytest.raises(ValueError, match="a profile or a surface"):
        Toolset(ws, profile="agentfs", surface=SURFACE)


def test_the_mcp_filesystem_profile_offers_the_servers_tools(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mcp-filesystem")
    assert "read_text_file" in [t.name for t in tools.tools()] and tools.surface.find("ls") is None
    wrote = tools.invoke("write_file", {"path": "/a.txt", "content": "hi"})
    assert wrote.text == "Successfully wrote to /a.txt"  # the server's text, not agentfs's
    assert ws.read("/a.txt") == b"hi"


def test_a_preset_keeps_one_kind_of_agents_tools(ws: agentfs.Workspace) -> None:
    from agentfs.tools import catalog

    coding = [t.name for t in Toolset(ws, preset="coding").tools()]
    assert "execute_command" in coding and "kv_set" not in coding
    assert set(coding) == catalog.PRESETS["coding"]
    memory = Toolset(ws, preset="memory", tools=["kv_get", "read_file", "grep"])
    assert [t.name for t in memory.tools()] == ["read_file", "kv_get"]  # both narrow
    assert memory.call("grep", {"pattern": "x"})["error"]["code"] == "denied"
    served = Toolset(ws, profile="mcp-filesystem", preset="memory").tools()
    assert "write_file" in {t.name for t in served} and "create_directory" not in {
        t.name for t in served
    }  # a profile's tool is in a preset when the tool ruling it is
    with pytest.raises(ValueError, match="no preset 'nope'; the presets are: coding, memory"):
        Toolset(ws, preset="nope")
