"""The MCP server end to end: ``agentfs serve mcp`` in a subprocess, driven by the ``mcp``
SDK's own stdio client, and by the MCP Inspector's CLI from npm (a second, independent
client)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import agentfs
from agentfs.tools import catalog, reference
from agentfs.tools.toolset import Toolset
from tests.clirun import AGENTFS
from tests.tools.calling import PLAIN

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".npm" / "node_modules" / ".bin" / "mcp-inspector"

pytestmark = pytest.mark.anyio

MUTATING = {spec.name for spec in catalog.all_tools() if spec.mutates}


@pytest.fixture
def served(tmp_path: Path) -> Path:
    """A workspace with a little project in it, closed so the server opens it alone."""
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        ws.write("/src/app.py", "def main():\n    return 1\n", parents=True)
        ws.write("/secrets/key", "hunter2\n", parents=True)
    return path


@asynccontextmanager
async def client(ws: Path, *args: str, elicit: Any = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=str(AGENTFS), args=["serve", "mcp", str(ws), *args])
    with anyio.fail_after(60):  # a hung server fails the test instead of hanging it
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as session,
        ):
            await session.initialize()
            yield session


def _error(result: types.CallToolResult) -> str:
    assert result.is_error, result
    return result.content[0].text  # type: ignore[union-attr]


async def test_lists_every_tool_with_schemas_and_annotations(served: Path) -> None:
    async with client(served) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
    assert set(listed) == {spec.name for spec in PLAIN}
    for spec in PLAIN:
        tool = listed[spec.name]
        assert tool.description == spec.description
        assert tool.input_schema["type"] == "object" and "$defs" not in json.dumps(
            tool.input_schema
        )
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is (not spec.mutates)
        assert hints.destructive_hint is spec.destructive
        assert hints.idempotent_hint is spec.idempotent
        assert hints.open_world_hint is False


async def test_calls_return_text_and_structured_results(served: Path) -> None:
    async with client(served, "--thread", "t1", "--actor", "claude") as session:
        read = await session.call_tool("read_file", {"path": "src/app.py"})
        assert not read.is_error
        assert read.content[0].text.startswith("     1\tdef main():")  # type: ignore[union-attr]
        assert read.structured_content["total_lines"] == 2
        version = read.structured_content["version"]
        edit = await session.call_tool(
            "edit_file",
            {
                "path": "/src/app.py",
                "old_string": "return 1",
                "new_string": "return 2",
                "expected_version": version,
            },
        )
        assert not edit.is_error, edit
        assert "+    return 2" in edit.structured_content["diff"]
        tree = await session.call_tool("list_files", {"path": "/src"})  # an alias
        assert "app.py" in tree.content[0].text  # type: ignore[union-attr]
    with agentfs.open(served) as ws:
        assert ws.read("/src/app.py") == b"def main():\n    return 2\n"
        newest = ws.version("/src/app.py")
        assert (newest.actor, newest.thread) == ("claude", "t1")
        writer = ws.tool_calls.writer("/src/app.py", newest.n)
        assert writer is not None and writer.name == "edit_file"
        # read-only calls were logged too, by the flush at shutdown
        assert {c.name for c in ws.tool_calls.list()} == {"read_file", "edit_file", "list_tree"}


async def test_an_idle_server_indexes_what_was_written(served: Path) -> None:
    async with client(served) as session:
        for i in range(5):
            args = {"path": f"/notes/n{i}.md", "content": f"idle note {i}\n"}
            assert not (await session.call_tool("write_file", args)).is_error
        with agentfs.open(served, readonly=True) as reader:
            waiting = "SELECT count(*) FROM ws_index_queue"
            with anyio.fail_after(20):
                while reader.conn.execute(waiting).get:
                    await anyio.sleep(0.1)
            assert reader.index_status().files == {"text": 7}
        hits = await session.call_tool("workspace_search", {"query": "idle note", "mode": "bm25"})
        assert len(hits.structured_content["hits"]) == 5


async def test_errors_are_is_error_results_with_their_code(served: Path) -> None:
    async with client(served) as session:
        cases = {
            "not_found": ("read_file", {"path": "/nope"}),
            "is_directory": ("read_file", {"path": "/src"}),
            "exists": ("create_file", {"path": "/src/app.py"}),
            "no_match": (
                "edit_file",
                {"path": "/src/app.py", "old_string": "zzz", "new_string": "y"},
            ),
            "invalid_argument": ("grep", {"pattern": "(a)\\1"}),
            "unknown_tool": ("rm_rf", {}),
        }
        for code, (tool, args) in cases.items():
            assert f"[{code}]" in _error(await session.call_tool(tool, args)), code
        bad = await session.call_tool("ls", {"path": "/", "bogus": 1})
        assert "[invalid_argument]" in _error(bad) and "bogus" in _error(bad)


async def test_read_only_lists_no_mutating_tool_and_refuses_them(served: Path) -> None:
    async with client(served, "--read-only") as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert names and not names & MUTATING
        refused = await session.call_tool("write_file", {"path": "/x", "content": "x"})
        assert "[read_only]" in _error(refused)
        assert not (await session.call_tool("grep", {"pattern": "main"})).is_error
    with agentfs.open(served) as ws:
        assert not ws.exists("/x")


async def test_tools_option_filters(served: Path) -> None:
    async with client(served, "--tools", "read_file,ls") as session:
        names = [t.name for t in (await session.list_tools()).tools]
        assert names == ["ls", "read_file"]
        assert "[denied]" in _error(await session.call_tool("grep", {"pattern": "x"}))


def test_unknown_tools_and_bad_policy_are_one_line_errors(served: Path, tmp_path: Path) -> None:
    run = subprocess.run(
        [AGENTFS, "serve", "mcp", served, "--tools", "read_file,nope"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 1 and run.stderr.startswith("agentfs: unknown tools: nope")
    policy = tmp_path / "p.toml"
    policy.write_text("[defaults]\nfrobnicate = true\n")
    run = subprocess.run(
        [AGENTFS, "serve", "mcp", served, "--policy", policy],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and "frobnicate" in run.stderr


async def test_policy_file_denies_paths(served: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[defaults]\ndeny = ["/secrets/**"]\n')
    async with client(served, "--policy", str(policy)) as session:
        assert "[denied]" in _error(await session.call_tool("read_file", {"path": "/secrets/key"}))
        found = await session.call_tool("grep", {"pattern": "hunter2"})
        assert found.structured_content["files"] == []


def _approval_policy(tmp_path: Path) -> Path:
    policy = tmp_path / "approve.toml"
    policy.write_text("[tools.delete_file]\nneeds_approval = true\n")
    return policy


async def test_approval_by_elicitation_accepted(served: Path, tmp_path: Path) -> None:
    asked: list[str] = []

    async def yes(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    async with client(served, "--policy", str(_approval_policy(tmp_path)), elicit=yes) as s:
        done = await s.call_tool("delete_file", {"path": "/src/app.py"})
        assert not done.is_error, done
    assert len(asked) == 1 and "delete_file" in asked[0] and "/src/app.py" in asked[0]
    with agentfs.open(served) as ws:
        assert not ws.exists("/src/app.py")


@pytest.mark.parametrize("answer", ["decline", "refuse"])
async def test_approval_declined_changes_nothing(served: Path, tmp_path: Path, answer: str) -> None:
    async def no(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"approve": False})

    async with client(served, "--policy", str(_approval_policy(tmp_path)), elicit=no) as s:
        refused = await s.call_tool("delete_file", {"path": "/src/app.py"})
        assert "[approval_denied]" in _error(refused)
    with agentfs.open(served) as ws:
        assert ws.read("/src/app.py") == b"def main():\n    return 1\n"
        logged = ws.tool_calls.list(name="delete_file")
        assert len(logged) == 1 and "approval_denied" in (logged[0].error or "")


async def test_a_client_without_elicitation_is_denied(served: Path, tmp_path: Path) -> None:
    async with client(served, "--policy", str(_approval_policy(tmp_path))) as session:
        refused = await session.call_tool("delete_file", {"path": "/src/app.py"})
        assert "[approval_denied]" in _error(refused)
    with agentfs.open(served) as ws:
        assert ws.exists("/src/app.py")


def _inspector(served: Path, *args: str) -> Any:
    if not INSPECTOR.exists():
        pytest.fail(f"{INSPECTOR} is missing: run `make test` (it installs it from npm)")
    run = subprocess.run(
        [INSPECTOR, "--cli", AGENTFS, "serve", "mcp", served, *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("profile", list(catalog.PROFILES))
def test_every_schema_passes_the_inspectors_strict_portability_check(
    served: Path, profile: str
) -> None:
    """No ``type`` arrays (a one-type dialect such as Gemini's refuses them) and no untyped
    field: the MCP Inspector's ``--strict`` reports each, and reports nothing here, for
    every profile."""
    if not INSPECTOR.exists():
        pytest.fail(f"{INSPECTOR} is missing: run `make test` (it installs it from npm)")
    listing = [INSPECTOR, "--cli", "--strict", "--method", "tools/list"]
    run = subprocess.run(
        [*listing, AGENTFS, "serve", "mcp", served, "--profile", profile],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0 and "Warning" not in run.stderr, run.stderr[:2000]
    offered = [s for s in catalog.profile(profile).all_tools() if not s.needs_base]
    assert len(json.loads(run.stdout)["tools"]) == len(offered)


def test_a_profile_is_served_under_its_own_names(served: Path) -> None:
    """``--profile mcp-filesystem``: a client finds the official filesystem server's tools,
    and a call answers with its text."""
    if not INSPECTOR.exists():
        pytest.fail(f"{INSPECTOR} is missing: run `make test` (it installs it from npm)")
    server = [AGENTFS, "serve", "mcp", "--profile", "mcp-filesystem", served]

    def inspect(*args: str, tool_arg: str | None = None) -> Any:
        last = ["--tool-arg", tool_arg] if tool_arg is not None else []  # takes what follows
        run = subprocess.run(
            [INSPECTOR, "--cli", *args, *server, *last],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)

    listed = {t["name"] for t in inspect("--method", "tools/list")["tools"]}
    assert {"read_text_file", "list_directory", "directory_tree"} <= listed
    assert not listed & {s.name for s in catalog.all_tools()} - {
        "read_file",
        "write_file",
        "edit_file",
        "move_file",
        "search_files",
        "read_multiple_files",
    }
    call = ("--method", "tools/call", "--tool-name", "list_directory")
    called = inspect(*call, tool_arg="path=/src")
    assert "[FILE] app.py" in called["content"][0]["text"]


def test_the_mcp_inspector_cli_lists_and_calls_tools(served: Path) -> None:
    listed = _inspector(served, "--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == {s.name for s in PLAIN}
    called = _inspector(
        served,
        "--method",
        "tools/call",
        "--tool-name",
        "grep",
        "--tool-arg",
        "pattern=def main",
        "--tool-arg",
        "output_mode=content",
    )
    assert called["structuredContent"]["lines"][0]["path"] == "/src/app.py"
    assert "/src/app.py:1:def main():" in called["content"][0]["text"]


async def test_layers_serve_the_union_and_write_the_first(served: Path, tmp_path: Path) -> None:
    team = tmp_path / "team.db"
    with agentfs.open(team) as ws:
        ws.write("/docs/guide.md", "the team guide\n", parents=True)
        ws.write("/src/app.py", "shadowed by the first layer\n", parents=True)
    async with client(served, "--layer", str(team)) as session:
        listed = await session.call_tool("ls", {"path": "/"})
        names = [e["name"] for e in listed.structured_content["entries"]]
        assert names == ["docs", "secrets", "src"]
        read = await session.call_tool("read_file", {"path": "/src/app.py"})
        assert "def main" in read.content[0].text  # type: ignore[union-attr]
        write = await session.call_tool(
            "write_file", {"path": "/docs/guide.md", "content": "mine\n", "overwrite": True}
        )
        assert not write.is_error, write
        refused = await session.call_tool("delete_file", {"path": "/docs/guide.md"})
        assert "lower layer" in _error(refused)
    with agentfs.open(team) as ws:
        assert ws.read("/docs/guide.md") == b"the team guide\n"
    with agentfs.open(served) as ws:
        assert ws.read("/docs/guide.md") == b"mine\n"


async def test_every_tool_answers_over_mcp_as_through_toolset_call(tmp_path: Path) -> None:
    """docs/tools.md's example of every tool, run in order over MCP on one demo workspace and
    through ``Toolset.call`` on an identical one: the same structured results (times aside)."""
    served, local = tmp_path / "served.db", tmp_path / "local.db"
    for path in (served, local):
        with agentfs.Workspace(path, actor="docs", thread="main") as ws:
            reference.build_demo(ws)
    with agentfs.open(local) as ws:
        toolset = Toolset(ws, thread="main", actor="agent", approve=lambda _call: True)
        expected = {name: toolset.call(name, args) for name, args in reference.EXAMPLES.items()}

    async def yes(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"approve": True})

    async with client(served, "--thread", "main", "--actor", "agent", elicit=yes) as session:
        for name, args in reference.EXAMPLES.items():
            result = await session.call_tool(name, args)
            assert not result.is_error, (name, result.content)
            assert reference.shown(result.structured_content) == reference.shown(expected[name]), (
                name
            )
        failed = await session.call_tool(*reference.ERROR_EXAMPLE)
        assert _error(failed).startswith("Error [no_match]")
