"""An untrusted agent (and the commands it runs) against the ``mastra`` and ``baf`` profiles:
every argument is the agent's, and the workspace may hold links it made. The operator's
policy must hold through every tool and spelling of a path, a space that is not writable
must stay unchanged, bad input must be a clear ``ToolError`` that changes nothing, and a
bad spaces file must be one error line from the CLI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from agentfs.tools import Policy, Toolset
from agentfs.tools.commands import MOST_LINE_BYTES
from agentfs.tools.policy import Limits, ToolPolicy
from agentfs.tools.profiles.baf import Space, Workspaces
from tests.clirun import assert_user_error, run
from tests.tools.calling import call, error

DENY = Policy(defaults=ToolPolicy(deny=["/hidden/**"]))
SECRET = b"lighthouse key 4471\n"


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    """A denied file (``/hidden/code.txt``) and the names an agent could give it."""
    with agentfs.open(tmp_path / "ws.db") as workspace:
        workspace.write("/hidden/code.txt", SECRET, parents=True)
        workspace.write("/data/a.txt", "alpha\n", parents=True)
        workspace.symlink("/hidden/code.txt", "/data/soft.txt")
        workspace.symlink("/hidden", "/data/dir")
        workspace.symlink("/hidden/new.txt", "/data/dangling")
        workspace.link("/hidden/code.txt", "/data/hard.txt")
        workspace.index()
        yield workspace


@pytest.fixture
def spaces(tmp_path: Path) -> Iterator[Workspaces]:
    """``docs`` (not writable) and ``notes`` (writable), in that order."""
    with agentfs.open(tmp_path / "docs.db") as docs, agentfs.open(tmp_path / "notes.db") as notes:
        docs.write("/README.md", "The manuals.\n")
        notes.write("/plan.md", "- sow\n")
        yield Workspaces([Space(docs, "docs", writable=False), Space(notes, "notes")])


def _approving(ws: agentfs.Workspace) -> Toolset:
    return Toolset(ws, profile="mastra", approve=lambda request: True)


# --- the policy through every name of a denied file (holds) -------------------------------------

SPELLINGS = [
    "/hidden/code.txt",
    "hidden/code.txt",
    "/data/../hidden/code.txt",
    "//hidden/./code.txt",
    "/HIDDEN/code.txt",
    "/\uff48\uff49\uff44\uff44\uff45\uff4e/code.txt",  # fullwidth: NFKC is /hidden
    "/data/soft.txt",
    "/data/hard.txt",
    "/data/dir/code.txt",
]


@pytest.mark.parametrize("path", SPELLINGS)
def test_mastra_every_name_of_a_denied_file_is_refused(ws: agentfs.Workspace, path: str) -> None:
    tools = Toolset(ws, profile="mastra", policy=DENY)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("workspace_read_file", {"encoding": "base64"}),
        ("workspace_file_exists", {}),
        ("workspace_write_file", {"content": "PWNED"}),
        ("workspace_index", {"content": "PWNED", "metadata": {"a": 1}}),
        ("workspace_delete_file", {}),
        ("workspace_mkdir", {}),
    ]
    for tool, args in calls:
        assert error(tools, tool, path=path, **args)[0] == "denied", (tool, path)
    assert ws.read("/hidden/code.txt") == SECRET
    assert ws.listxattr("/hidden/code.txt") == []


def test_mastra_listings_and_search_show_no_name_of_a_denied_file(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra", policy=DENY)
    listed = call(tools, "workspace_list_files", path="/", recursive=True)[0]
    names = [e["name"] for e in listed["entries"]]
    assert names == ["data", "data/a.txt", "data/dir", "hidden"]  # a linked dir is not walked
    assert call(tools, "workspace_list_files", path="/data/dir")[0]["entries"] == []
    for query in ["lighthouse", "4471"]:
        assert call(tools, "workspace_search", query=query)[0]["results"] == []
    scoped = call(tools, "workspace_search", query="lighthouse", path="/data/dir")[0]
    assert scoped["results"] == []
    # the same search without the policy finds it: the index holds it
    assert call(Toolset(ws, profile="mastra"), "workspace_search", query="4471")[0]["count"] == 1


def test_mastra_commands_see_no_denied_file_and_make_no_name_for_it(ws: agentfs.Workspace) -> None:
    if (no_mount := fuse_available()) is not None:
        pytest.skip(f"no FUSE mount here: {no_mount}")
    tools = Toolset(ws, profile="mastra", policy=DENY, approve=lambda request: True)
    script = "cat hidden/code.txt; ln -s hidden/code.txt pub; ln hidden/code.txt hard; true"
    ran = call(tools, "workspace_execute_code", code=script, runtime="bash")[0]
    assert "4471" not in ran["stdout"]
    assert error(tools, "workspace_read_file", path="/pub")[0] == "denied"
    assert not ws.exists("/hard")


@pytest.mark.parametrize("path", [p.lstrip("/") for p in SPELLINGS if ".." not in p])
def test_baf_every_name_of_a_denied_file_is_refused(ws: agentfs.Workspace, path: str) -> None:
    tools = Toolset(ws, profile="baf", policy=DENY)
    for tool, args in [
        ("read_file", {}),
        ("write_file", {"content": "PWNED"}),
        ("create_file", {"content": "PWNED"}),
        ("delete_file", {}),
    ]:
        assert error(tools, tool, path=path, **args)[0] == "denied", tool
    assert ws.read("/hidden/code.txt") == SECRET


# --- atomicity (holds) --------------------------------------------------------------------------


def test_mastra_index_whose_metadata_fails_leaves_the_file_as_it_was(
    ws: agentfs.Workspace,
) -> None:
    tools = Toolset(ws, profile="mastra")
    big = {"a": "x" * 70_000}  # over the 64 KiB an extended attribute holds
    for path in ("/data/a.txt", "/data/new.txt"):
        code, message = error(tools, "workspace_index", path=path, content="zebra", metadata=big)
        assert code == "invalid_argument" and "64 KiB" in message
    assert ws.read("/data/a.txt") == b"alpha\n" and len(ws.history("/data/a.txt")) == 1
    assert not ws.exists("/data/new.txt")
    ws.index()
    assert call(tools, "workspace_search", query="zebra")[0]["results"] == []


def test_writes_over_max_write_bytes_leave_nothing(
    ws: agentfs.Workspace, spaces: Workspaces
) -> None:
    limited = Policy(limits=Limits(max_write_bytes=5))
    mastra = Toolset(ws, profile="mastra", policy=limited)
    for tool in ["workspace_write_file", "workspace_index"]:
        assert error(mastra, tool, path="/big/new.txt", content="123456")[0] == "too_large"
    assert not ws.exists("/big")
    baf = Toolset(spaces.members["notes"].ws, profile="baf", policy=limited)
    for tool in ["write_file", "create_file"]:
        assert error(baf, tool, path="big/new.txt", content="123456")[0] == "too_large"
    assert error(baf, "write_file", path="plan.md", content="123456")[0] == "too_large"
    assert not baf.ws.exists("/big") and baf.ws.read("/plan.md") == b"- sow\n"


# --- bad input: a clear ToolError, nothing changed ----------------------------------------------


def _nulls(tools: Toolset) -> Iterator[tuple[str, dict[str, Any]]]:
    for spec in tools.tools():
        yield spec.name, dict.fromkeys(spec.input.model_fields)


def test_strict_nulls_never_crash_and_wrong_types_are_refused(
    ws: agentfs.Workspace, spaces: Workspaces
) -> None:
    before = {p: ws.read(p) for p in ["/data/a.txt", "/hidden/code.txt"]}
    for tools in [_approving(ws), spaces]:
        for name, nulls in _nulls(tools):
            got = tools.invoke(name, nulls, strict=True)  # every default: may succeed
            assert got.error is None or got.error.code != "internal_error", (name, got.data)
            for wrong in [7, ["x"], {"x": 1}]:
                got = tools.invoke(name, dict.fromkeys(nulls, wrong))
                assert got.error is not None and got.error.code == "invalid_argument", name
    assert {p: ws.read(p) for p in before} == before
    assert ws.snapshots.list() == []


# --- the baf spaces: nothing changes in a space that is not writable (holds) --------------------


@pytest.mark.parametrize("workspace", ["docs", "docs ", "DOCS", "d\u043ecs", ["notes"], 1, True])
@pytest.mark.parametrize("tool", ["write_file", "create_file", "delete_file"])
def test_baf_a_space_that_is_not_writable_stays_unchanged(
    spaces: Workspaces, tool: str, workspace: object
) -> None:
    docs = spaces.members["docs"].ws
    got = spaces.invoke(tool, {"workspace": workspace, "path": "README.md", "content": "PWNED"})
    expected = "read_only" if workspace == "docs" else "invalid_argument"
    assert got.error is not None and got.error.code == expected, got.data
    assert docs.read("/README.md") == b"The manuals.\n" and len(docs.history("/README.md")) == 1
    assert spaces.members["notes"].ws.read("/plan.md") == b"- sow\n"


# --- holes that were open -----------------------------------------------------------------------


def test_mastra_code_too_long_once_quoted_is_refused_before_running(
    ws: agentfs.Workspace,
) -> None:
    # each ' takes 5 bytes quoted on the command line: 80 KiB of code becomes 160 KiB, over
    # the 128 KiB Linux takes in one argument
    code = "true #" + "'" * 20_000 + "x" * 60_000
    assert len(code.encode()) < MOST_LINE_BYTES
    got, message = error(_approving(ws), "workspace_execute_code", code=code, runtime="shell")
    assert got == "too_large" and "write long input to a file" in message
    assert ws.snapshots.list() == []  # refused before the run's snapshot


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["a\x00b"], "invalid_argument"),
        (["\ud800"], "invalid_argument"),  # a lone surrogate: JSON can carry one
        (["x" * 200_000], "too_large"),
    ],
)
def test_mastra_command_args_that_cannot_run_are_refused_before_running(
    ws: agentfs.Workspace, args: list[str], code: str
) -> None:
    got, message = error(_approving(ws), "workspace_execute_command", command="echo", args=args)
    assert got == code and message.startswith("command: ") and "\n" not in message
    assert ws.snapshots.list() == []  # no snapshot of a run that never ran


def test_mastra_index_metadata_that_is_not_json_is_refused(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    # a model's arguments arrive as JSON text; Python's decoder takes NaN and Infinity
    got = tools.invoke(
        "workspace_index", '{"path": "/n.txt", "content": "x", "metadata": {"a": NaN}}'
    )
    assert got.error is not None and got.error.code == "invalid_argument"
    assert "metadata" in got.error.message
    assert not ws.exists("/n.txt")


@pytest.mark.parametrize("path", ["/data/a.txt/x", "/loop"])
def test_mastra_file_exists_is_false_where_nothing_can_be(ws: agentfs.Workspace, path: str) -> None:
    ws.symlink("/loop", "/loop")
    tools = Toolset(ws, profile="mastra")
    assert call(tools, "workspace_file_exists", path=path)[0] == {"exists": False, "type": "none"}


@pytest.mark.parametrize("tool", ["read_file", "write_file"])
def test_baf_arguments_that_are_not_json_are_said_so_among_several_spaces(
    spaces: Workspaces, tool: str
) -> None:
    got = spaces.invoke(tool, '{"workspace": "notes", "path": "plan.md"')
    assert got.error is not None and got.error.code == "invalid_argument"
    assert "not valid JSON" in got.error.message


def test_baf_an_unknown_tool_among_several_spaces_is_unknown_tool(spaces: Workspaces) -> None:
    got = spaces.invoke("read_text_file", {"path": "plan.md"})
    assert got.error is not None and got.error.code == "unknown_tool"
    assert "write_file" in got.error.message  # the tools of the set, not of one space


@pytest.mark.parametrize("writable", ["true", "false"])
def test_the_cli_refuses_a_space_whose_path_is_a_directory(tmp_path: Path, writable: str) -> None:
    (tmp_path / "docs").mkdir()
    spaces_file = tmp_path / "spaces.toml"
    spaces_file.write_text(
        f'[[workspace]]\nname = "docs"\npath = "docs"\nwritable = {writable}\n', encoding="utf-8"
    )
    result = run("serve", "mcp", "--profile", "baf", "--spaces", spaces_file, input="")
    assert_user_error(result, str(tmp_path / "docs"), "directory")


# --- holes in shared code -----------------------------------------------------------------------


def test_mkdir_of_the_root_under_a_path_policy_is_an_existing_directory(
    ws: agentfs.Workspace,
) -> None:
    tools = Toolset(ws, profile="mastra", policy=DENY)
    assert call(tools, "workspace_mkdir", path="/")[0] == {"success": True, "path": "/"}


def test_the_denylist_sees_su_on_a_later_line_of_code(ws: agentfs.Workspace) -> None:
    tools = _approving(ws)
    assert error(tools, "workspace_execute_code", code="true\nsu -c id", runtime="bash")[0] == (
        "denied"
    )


def test_the_cli_names_a_spaces_file_that_is_not_utf8(tmp_path: Path) -> None:
    spaces_file = tmp_path / "spaces.toml"
    spaces_file.write_bytes(b'\xff[[workspace]]\nname = "docs"\n')
    result = run("serve", "mcp", "--profile", "baf", "--spaces", spaces_file, input="")
    assert_user_error(result, str(spaces_file))


@pytest.mark.parametrize(
    ("command", "env", "code"),
    [
        ("echo a\x00b", None, "invalid_argument"),
        ("echo \ud800", None, "invalid_argument"),
        ("echo " + "x" * MOST_LINE_BYTES, None, "too_large"),
        ("true", {"X": "a\x00b"}, "invalid_argument"),
        ("true", {"X": "\udfff"}, "invalid_argument"),
    ],
)
def test_agentfs_execute_command_refuses_what_no_process_takes_before_its_snapshot(
    ws: agentfs.Workspace, command: str, env: dict[str, str] | None, code: str
) -> None:
    tools = Toolset(ws, approve=lambda _request: True)
    got, message = error(tools, "execute_command", command=command, env=env)
    assert got == code and "\n" not in message
    assert ws.snapshots.list() == []
