"""The ``triggerfish`` profile, behaviour by behaviour: each tool's result, the workspace's
scope for paths, the edit's uniqueness rule, the policy of the agentfs tool ruling each tool,
the audit under the profile's names, commands in the real mount, and the profile served over
MCP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import Limits, ToolPolicy
from agentfs.tools.profiles.triggerfish import SURFACE
from tests.tools.calling import call, error, served

NAMES = [
    "read_file",
    "write_file",
    "edit_file",
    "list_directory",
    "search_files",
    "run_command",
]
RULED_BY = {
    "read_file": "read_file",
    "write_file": "write_file",
    "edit_file": "edit_file",
    "list_directory": "ls",
    "search_files": "search_files",
    "run_command": "execute_command",
}
NO_MOUNT = fuse_available()


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as workspace:
        workspace.write("/notes/todo.md", "buy milk\ncall Ada\nbuy bread\n", parents=True)
        workspace.write("/src/app.py", "def main():\n    return 1\n", parents=True)
        workspace.write("/src/lib/util.py", "def helper():\n    return 'main'\n", parents=True)
        workspace.write("/private/key.txt", "s3cret\n", parents=True)
        workspace.write("/blob.bin", b"\x00\x01\x02binary", parents=True)
        workspace.mkdir("/empty")
        yield workspace


def test_the_profile_offers_exactly_its_tools_each_ruled_by_its_agentfs_tool(
    ws: agentfs.Workspace,
) -> None:
    tools = Toolset(ws, profile="triggerfish")
    assert tools.surface is SURFACE
    assert [t.name for t in tools.tools()] == NAMES
    assert {t.name: t.policy_name for t in tools.tools()} == RULED_BY
    params = {t.name: sorted(t.input.model_fields) for t in tools.tools()}
    assert params == {
        "read_file": ["path"],
        "write_file": ["content", "path"],
        "edit_file": ["new_text", "old_text", "path"],
        "list_directory": ["path"],
        "search_files": ["content_search", "path", "pattern"],
        "run_command": ["command"],
    }
    assert not SURFACE.find("read_file").mutates  # type: ignore[union-attr]
    assert SURFACE.find("run_command").elsewhere  # type: ignore[union-attr]


def test_read_file_returns_the_whole_text(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="triggerfish")
    data, text = call(tools, "read_file", path="/notes/todo.md")
    assert text == "buy milk\ncall Ada\nbuy bread\n"
    assert data["content"] == text and data["path"] == "/notes/todo.md"
    assert call(tools, "read_file", path="notes/todo.md")[1] == text  # relative to the root
    assert call(tools, "read_file", path="/notes/./x/../todo.md")[1] == text
    binary = call(tools, "read_file", path="/blob.bin")
    assert binary[0]["binary"] and binary[0]["content"] == ""
    assert binary[1] == "/blob.bin is a binary file (9 bytes, application/octet-stream); not shown."
    code, message = error(tools, "read_file", path="/nope.txt")
    assert code == "not_found" and "call list_directory or search_files" in message
    assert error(tools, "read_file", path="/notes")[0] == "is_directory"


def test_write_file_creates_and_overwrites(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="triggerfish")
    data, text = call(tools, "write_file", path="out/report.txt", content="first\n")
    assert data["created"] and text.startswith("Created /out/report.txt")
    data, text = call(tools, "write_file", path="/out/report.txt", content="second\n")
    assert not data["created"] and text.startswith("Replaced /out/report.txt")
    assert ws.read("/out/report.txt") == b"second\n"
    assert error(tools, "write_file", path="/notes", content="x")[0] == "is_directory"


@pytest.mark.parametrize("path", ["../escape.txt", "/../escape.txt", "a/../../escape.txt", ".."])
def test_a_path_climbing_out_of_the_workspace_is_refused(ws: agentfs.Workspace, path: str) -> None:
    tools = Toolset(ws, profile="triggerfish")
    code, message = error(tools, "write_file", path=path, content="x")
    assert code == "invalid_path" and "above the workspace root" in message
    assert not ws.exists("/escape.txt")
    assert error(tools, "read_file", path="../notes/todo.md")[0] == "invalid_path"
    # a `..` that stays inside is an ordinary path
    assert call(tools, "write_file", path="a/b/../ok.txt", content="x")[0]["path"] == "/a/ok.txt"


def test_edit_file_replaces_the_one_occurrence(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="triggerfish")
    call(tools, "read_file", path="/notes/todo.md")
    data, text = call(
        tools, "edit_file", path="/notes/todo.md", old_text="call Ada", new_text="call Grace"
    )
    assert ws.read("/notes/todo.md") == b"buy milk\ncall Grace\nbuy bread\n"
    assert "-call Ada" in data["diff"] and "+call Grace" in text


@pytest.mark.parametrize(
    ("old", "code", "says"),
    [
        ("sell milk", "no_match", "old_text was not found"),
        ("buy", "not_unique", "old_text occurs 2 times"),
        ("", "invalid_argument", "empty"),
    ],
)
def test_edit_file_fails_and_changes_nothing_unless_old_text_occurs_once(
    ws: agentfs.Workspace, old: str, code: str, says: str
) -> None:
    tools = Toolset(ws, profile="triggerfish")
    before = ws.read("/notes/todo.md")
    got, message = error(tools, "edit_file", path="/notes/todo.md", old_text=old, new_text="x")
    assert got == code and says in message
    assert ws.read("/notes/todo.md") == before
    assert len(ws.history("/notes/todo.md")) == 1


def test_edit_file_keeps_a_crlf_files_line_ends(ws: agentfs.Workspace) -> None:
    ws.write("/dos.txt", b"one\r\ntwo\r\n")
    tools = Toolset(ws, profile="triggerfish")
    call(tools, "edit_file", path="dos.txt", old_text="one\ntwo", new_text="1\n2")
    assert ws.read("/dos.txt") == b"1\r\n2\r\n"


def test_list_directory_marks_directories(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="triggerfish")
    data, text = call(tools, "list_directory", path="/src")
    assert data["entries"] == ["app.py", "lib/"]
    assert text == "app.py\nlib/"
    root = call(tools, "list_directory", path="/")[0]["entries"]
    assert {"notes/", "src/", "empty/", "blob.bin"} <= set(root)
    assert call(tools, "list_directory", path="empty")[1] == "/empty is empty."
    assert error(tools, "list_directory", path="/src/app.py")[0] == "not_directory"
    assert error(tools, "list_directory", path="/missing")[0] == "not_found"


def test_search_files_by_name(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="triggerfish")
    data, text = call(tools, "search_files", path="/", pattern="*.py")
    assert data["files"] == ["/src/app.py", "/src/lib/util.py"]  # any depth
    assert text == "/src/app.py\n/src/lib/util.py"
    assert call(tools, "search_files", path="/src", pattern="lib/*.py")[0]["files"] == [
        "/src/lib/util.py"
    ]
    assert call(tools, "search_files", path="src", pattern="app.py")[0]["files"] == ["/src/app.py"]
    assert call(tools, "search_files", path="/", pattern="*.rs")[1] == "No matches."
    assert error(tools, "search_files", path="/src/app.py", pattern="*")[0] == "not_directory"


def test_search_files_by_content(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="triggerfish")
    data, text = call(tools, "search_files", path="/", pattern="main", content_search=True)
    assert data["lines"] == [
        {"path": "/src/app.py", "line": 1, "text": "def main():"},
        {"path": "/src/lib/util.py", "line": 2, "text": "    return 'main'"},
    ]
    assert text == "/src/app.py:1:def main():\n/src/lib/util.py:2:    return 'main'"
    regex = call(tools, "search_files", path="/notes", pattern=r"^buy \w+$", content_search=True)
    assert [hit["line"] for hit in regex[0]["lines"]] == [1, 3]
    # not a valid regular expression: searched as plain text
    ws.write("/src/call.py", "main(\n")
    plain = call(tools, "search_files", path="/src", pattern="main(", content_search=True)
    assert plain[0]["lines"] == [
        {"path": "/src/app.py", "line": 1, "text": "def main():"},
        {"path": "/src/call.py", "line": 1, "text": "main("},
    ]
    # a valid regular expression RE2 will not run (lookahead): searched as plain text too
    ws.write("/src/look.py", "x(?=y)\n")
    found = call(tools, "search_files", path="/src", pattern="x(?=y)", content_search=True)
    assert found[0]["lines"] == [{"path": "/src/look.py", "line": 1, "text": "x(?=y)"}]


def test_the_policy_of_the_ruling_tools_holds(ws: agentfs.Workspace) -> None:
    policy = Policy(defaults=ToolPolicy(deny=["/private/**"]))
    tools = Toolset(ws, profile="triggerfish", policy=policy)
    assert error(tools, "read_file", path="/private/key.txt")[0] == "denied"
    assert error(tools, "write_file", path="/private/new.txt", content="x")[0] == "denied"
    assert (
        error(tools, "edit_file", path="/private/key.txt", old_text="s", new_text="t")[0]
        == "denied"
    )
    assert call(tools, "list_directory", path="/private")[0]["entries"] == []
    assert call(tools, "search_files", path="/", pattern="*.txt")[0]["files"] == []
    hits = call(tools, "search_files", path="/", pattern="s3cret", content_search=True)
    assert hits[1] == "No matches."
    assert not ws.exists("/private/new.txt")

    # one agentfs tool's entry rules its profile tool alone
    only_ls = Policy(tools={"ls": ToolPolicy(enabled=False)})
    tools = Toolset(ws, profile="triggerfish", policy=only_ls)
    assert "list_directory" not in [t.name for t in tools.tools()]
    assert error(tools, "list_directory", path="/")[0] == "denied"
    assert call(tools, "read_file", path="/src/app.py")[1].startswith("def main")

    # content search answers to grep's entry too
    no_grep = Policy(tools={"grep": ToolPolicy(enabled=False)})
    tools = Toolset(ws, profile="triggerfish", policy=no_grep)
    assert error(tools, "search_files", path="/", pattern="x", content_search=True)[0] == "denied"
    assert call(tools, "search_files", path="/", pattern="*.md")[0]["files"] == ["/notes/todo.md"]


def test_the_policys_limits_hold(ws: agentfs.Workspace) -> None:
    policy = Policy(limits=Limits(max_read_bytes=8, max_write_bytes=4))
    tools = Toolset(ws, profile="triggerfish", policy=policy)
    data, text = call(tools, "read_file", path="/notes/todo.md")
    assert data["truncated"] and data["content"] == "buy milk"
    assert text == "buy milk\n... cut at 8 of 28 bytes by the policy's read limit"
    assert error(tools, "write_file", path="/big.txt", content="12345")[0] == "too_large"
    assert not ws.exists("/big.txt")


def test_read_only_offers_and_runs_no_change(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="triggerfish", policy=Policy(read_only=True))
    assert [t.name for t in tools.tools()] == ["read_file", "list_directory", "search_files"]
    assert error(tools, "write_file", path="/x.txt", content="x")[0] == "read_only"
    assert error(tools, "edit_file", path="/src/app.py", old_text="1", new_text="2")[0] == (
        "read_only"
    )
    assert error(tools, "run_command", command="touch x")[0] == "read_only"
    assert not ws.exists("/x.txt")


def test_run_command_needs_approval_and_its_denylist_holds(ws: agentfs.Workspace) -> None:
    assert error(Toolset(ws, profile="triggerfish"), "run_command", command="ls")[0] == (
        "approval_denied"
    )
    tools = Toolset(ws, profile="triggerfish", approve=lambda request: True)
    code, message = error(tools, "run_command", command="sudo ls")
    assert code == "denied" and "forbids" in message


def test_calls_are_audited_under_the_profiles_names(ws: agentfs.Workspace) -> None:
    with Toolset(ws, profile="triggerfish") as tools:
        call(tools, "read_file", path="/src/app.py")
        call(tools, "write_file", path="/a.txt", content="a")
        call(tools, "edit_file", path="/a.txt", old_text="a", new_text="b")
        call(tools, "list_directory", path="/")
        call(tools, "search_files", path="/", pattern="*.py")
        error(tools, "edit_file", path="/a.txt", old_text="zzz", new_text="y")
    for name in ["read_file", "write_file", "list_directory", "search_files"]:
        assert len(ws.tool_calls.list(name=name)) == 1, name
    edits = ws.tool_calls.list(name="edit_file")
    assert len(edits) == 2
    assert not ws.tool_calls.list(name="ls")  # recorded as the profile's name, not the ruler's


@pytest.mark.skipif(NO_MOUNT is not None, reason=f"no FUSE mount here: {NO_MOUNT}")
def test_run_command_runs_in_the_mounted_workspace(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="triggerfish", approve=lambda request: True)
    data, text = call(
        tools, "run_command", command="cat notes/todo.md | wc -l > count.txt; echo done"
    )
    assert data["exit_code"] == 0 and data["stdout"] == "done\n"
    assert text == "exit code 0\ndone"
    assert ws.read("/count.txt").strip() == b"3"
    data, text = call(tools, "run_command", command="echo oops >&2; exit 3")
    assert data["exit_code"] == 3 and data["stderr"] == "oops\n"
    assert text == "exit code 3\n[stderr]\noops"
    tools.flush()  # the audit publishes its rows in batches
    assert len(ws.tool_calls.list(name="run_command")) == 2


@pytest.mark.anyio
async def test_served_over_mcp_under_its_names(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.close()
    with anyio.fail_after(60):
        async with served(tmp_path / "ws.db", "triggerfish") as session:
            listed = (await session.list_tools()).tools
            assert [t.name for t in listed] == NAMES
            schema = {t.name: t.input_schema for t in listed}
            assert schema["edit_file"]["required"] == ["path", "old_text", "new_text"]
            got = await session.call_tool("read_file", {"path": "/src/app.py"})
            assert got.content[0].text == "def main():\n    return 1\n"  # type: ignore[union-attr]
            assert got.structured_content == {
                "path": "/src/app.py",
                "content": "def main():\n    return 1\n",
                "size": 25,
                "binary": False,
                "truncated": False,
            }
            listed_dir = await session.call_tool("list_directory", {"path": "/src"})
            assert listed_dir.content[0].text == "app.py\nlib/"  # type: ignore[union-attr]
