"""The ``baf`` profile, behaviour by behaviour: its five tools and their ``workspace``
argument, several named workspaces behind one toolset (``Workspaces``: routing, read-only
spaces, the audit in each workspace's own log), paths relative to the root, each tool's
result and errors, the system prompt presenting the workspaces, the spaces file, and the
profile served over MCP by ``agentfs serve mcp --profile baf [--spaces FILE]``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_core import PydanticUndefined

import agentfs
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import Limits, ToolPolicy
from agentfs.tools.profiles.baf import SURFACE, Space, SpacesFile, Workspaces
from tests.clirun import assert_user_error, run
from tests.tools.calling import call, error, served

NAMES = ["list_directory", "read_file", "write_file", "create_file", "delete_file"]
RULED_BY = {
    "list_directory": "ls",
    "read_file": "read_file",
    "write_file": "write_file",
    "create_file": "create_file",
    "delete_file": "delete_file",
}
CHANGING = ["write_file", "create_file", "delete_file"]
LOOKING = ["list_directory", "read_file"]
REQUIRED = ...  # a parameter without a default
PARAMS = {
    "list_directory": {"workspace": None, "path": "."},
    "read_file": {"workspace": None, "path": REQUIRED},
    "write_file": {"workspace": None, "path": REQUIRED, "content": REQUIRED},
    "create_file": {"workspace": None, "path": REQUIRED, "content": ""},
    "delete_file": {"workspace": None, "path": REQUIRED},
}
MANUAL = "# Installing the kettle\n\nFill it, then press the lever.\n"
PLAN = "- repot the fern\n- order seeds\n"


@pytest.fixture
def manual(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    """The read-only ``docs`` workspace."""
    with agentfs.open(tmp_path / "manual.db") as workspace:
        workspace.write("/kettle/install.md", MANUAL, parents=True)
        workspace.write("/kettle/faq.md", "Q: Does it whistle?\nA: Yes.\n", parents=True)
        workspace.write("/README.md", "The appliance manuals.\n")
        yield workspace


@pytest.fixture
def garden(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    """The writable ``notes`` workspace."""
    with agentfs.open(tmp_path / "garden.db") as workspace:
        workspace.write("/plan.md", PLAN)
        workspace.write("/beds/north.md", "tomatoes, basil\n", parents=True)
        workspace.write("/secret/combination.txt", "4-8-15\n", parents=True)
        workspace.write("/seed.bin", b"\x00\x01seedpack")
        workspace.mkdir("/shed")
        yield workspace


@pytest.fixture
def spaces(manual: agentfs.Workspace, garden: agentfs.Workspace) -> Workspaces:
    return Workspaces(
        [
            Space(manual, "docs", "The appliance manuals", writable=False),
            Space(garden, "notes", "The garden notebook"),
        ]
    )


def _defaults(tools: Toolset) -> dict[str, dict[str, Any]]:
    return {
        t.name: {
            name: REQUIRED if field.default is PydanticUndefined else field.default
            for name, field in t.input.model_fields.items()
        }
        for t in tools.tools()
    }


def _calls(ws: agentfs.Workspace) -> list[tuple[str, Any, str | None]]:
    """The workspace's audit rows, oldest first: name, parameters, error code."""
    rows = sorted(ws.tool_calls.list(), key=lambda row: row.id)
    return [
        (row.name, row.parameters, None if row.error is None else json.loads(row.error)["code"])
        for row in rows
    ]


# --- the surface --------------------------------------------------------------------------------


def test_the_profile_offers_exactly_its_tools_each_ruled_by_its_agentfs_tool(
    garden: agentfs.Workspace, spaces: Workspaces
) -> None:
    tools = Toolset(garden, profile="baf")
    assert tools.surface is SURFACE
    assert [t.name for t in tools.tools()] == NAMES
    assert {t.name: t.policy_name for t in tools.tools()} == RULED_BY
    assert _defaults(tools) == PARAMS
    assert [t.name for t in spaces.tools()] == NAMES
    assert _defaults(spaces) == PARAMS
    assert [t.name for t in SURFACE.all_tools() if t.mutates] == CHANGING
    assert SURFACE.find("read_file").tracks_reads  # type: ignore[union-attr]


# --- several named workspaces -------------------------------------------------------------------


def test_a_call_acts_on_the_workspace_it_names_only(
    manual: agentfs.Workspace, garden: agentfs.Workspace, spaces: Workspaces
) -> None:
    data, text = call(spaces, "read_file", workspace="docs", path="kettle/install.md")
    assert data["content"] == MANUAL and text == MANUAL
    assert call(spaces, "read_file", workspace="notes", path="plan.md")[0]["content"] == PLAN
    assert error(spaces, "read_file", workspace="notes", path="kettle/install.md")[0] == (
        "not_found"
    )
    data, text = call(spaces, "write_file", workspace="notes", path="README.md", content="mine\n")
    assert data == {"path": "README.md", "bytes": 5, "created": True}
    assert text == "Created README.md (5 bytes)."
    assert garden.read("/README.md") == b"mine\n"
    assert manual.read("/README.md") == b"The appliance manuals.\n"  # same path, other space
    assert len(manual.history("/README.md")) == 1
    listed = call(spaces, "list_directory", workspace="docs")[0]["entries"]
    assert listed == ["[FILE] README.md", "[DIR] kettle"]


def test_leaving_workspace_out_among_several_names_them(
    garden: agentfs.Workspace, spaces: Workspaces
) -> None:
    code, message = error(spaces, "write_file", path="plan.md", content="x")
    assert code == "invalid_argument"
    assert message == "there are several workspaces; name one with workspace: docs, notes"
    assert garden.read("/plan.md") == PLAN.encode()


def test_with_one_workspace_the_name_may_be_left_out(garden: agentfs.Workspace) -> None:
    one = Workspaces([Space(garden, "notes")])
    assert call(one, "read_file", path="plan.md")[0]["content"] == PLAN
    assert call(one, "read_file", workspace="notes", path="plan.md")[0]["content"] == PLAN
    call(one, "create_file", path="beds/south.md", content="squash\n")
    assert garden.read("/beds/south.md") == b"squash\n"


def test_an_unknown_workspace_is_refused_naming_the_workspaces(
    manual: agentfs.Workspace, garden: agentfs.Workspace, spaces: Workspaces
) -> None:
    code, message = error(spaces, "create_file", workspace="attic", path="x.md", content="x")
    assert code == "invalid_argument"
    assert message == "there is no workspace 'attic'; the workspaces are: docs, notes"
    assert not garden.exists("/x.md") and not manual.exists("/x.md")
    # names are matched exactly
    assert error(spaces, "read_file", workspace="Docs", path="README.md")[0] == ("invalid_argument")


@pytest.mark.parametrize("tool", NAMES)
def test_a_workspace_that_is_not_a_name_is_refused_with_the_names(
    manual: agentfs.Workspace, garden: agentfs.Workspace, spaces: Workspaces, tool: str
) -> None:
    args: dict[str, Any] = {"workspace": 2, "path": "plan.md", "content": "x"}
    if tool in ("list_directory", "read_file", "delete_file"):
        del args["content"]
    code, message = error(spaces, tool, **args)
    assert code == "invalid_argument"
    assert message == (
        f"invalid arguments for {tool}: workspace: a workspace's name (docs, notes), not 2"
    )
    assert garden.read("/plan.md") == PLAN.encode() and not manual.exists("/plan.md")


def test_names_must_be_unique_and_there_must_be_a_workspace(
    manual: agentfs.Workspace, garden: agentfs.Workspace
) -> None:
    with pytest.raises(ValueError, match="workspace names must be unique: docs"):
        Workspaces([Space(manual, "docs"), Space(garden, "notes"), Space(garden, "docs")])
    with pytest.raises(ValueError, match="give at least one workspace"):
        Workspaces([])
    with pytest.raises(ValueError, match="printable and not empty"):
        Space(garden, "")
    with pytest.raises(ValueError, match="max_read_bytes must be at least 1"):
        Space(garden, "notes", max_read_bytes=0)


def test_each_call_is_logged_in_its_own_workspace(
    manual: agentfs.Workspace, garden: agentfs.Workspace, spaces: Workspaces
) -> None:
    call(spaces, "read_file", workspace="docs", path="README.md")
    call(spaces, "write_file", workspace="notes", path="log.md", content="sowed\n")
    call(spaces, "list_directory", workspace="notes", path="beds")
    error(spaces, "delete_file", workspace="docs", path="README.md")
    spaces.flush()  # the audit publishes read-only calls' rows in batches
    assert _calls(manual) == [
        ("read_file", {"workspace": "docs", "path": "README.md"}, None),
        ("delete_file", {"workspace": "docs", "path": "README.md"}, "read_only"),
    ]
    assert sorted(_calls(garden), key=lambda row: row[0]) == [
        ("list_directory", {"workspace": "notes", "path": "beds"}, None),
        ("write_file", {"workspace": "notes", "path": "log.md", "content": "sowed\n"}, None),
    ]


def test_a_routing_failure_is_logged_in_the_first_workspace(
    manual: agentfs.Workspace, garden: agentfs.Workspace, spaces: Workspaces
) -> None:
    error(spaces, "read_file", workspace="attic", path="plan.md")
    error(spaces, "write_file", path="plan.md", content="x")
    spaces.close()
    assert _calls(manual) == [
        ("read_file", {"workspace": "attic", "path": "plan.md"}, "invalid_argument"),
        ("write_file", {"path": "plan.md", "content": "x"}, "invalid_argument"),
    ]
    assert _calls(garden) == []


# --- writable or not ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write_file", {"path": "README.md", "content": "defaced\n"}),
        ("write_file", {"path": "new.md", "content": "x"}),
        ("create_file", {"path": "kettle/new.md", "content": "x"}),
        ("delete_file", {"path": "kettle/faq.md"}),
    ],
)
def test_a_space_that_is_not_writable_refuses_changes(
    manual: agentfs.Workspace, spaces: Workspaces, tool: str, args: dict[str, Any]
) -> None:
    before = {p: manual.read(p) for p in ["/README.md", "/kettle/install.md", "/kettle/faq.md"]}
    code, message = error(spaces, tool, workspace="docs", **args)
    assert code == "read_only" and tool in message
    assert {p: manual.read(p) for p in before} == before
    assert not manual.exists("/new.md") and not manual.exists("/kettle/new.md")
    assert all(len(manual.history(p)) == 1 for p in before)


def test_changing_tools_are_offered_only_when_a_space_is_writable(
    manual: agentfs.Workspace, garden: agentfs.Workspace
) -> None:
    frozen = Workspaces(
        [Space(manual, "docs", writable=False), Space(garden, "notes", writable=False)]
    )
    assert [t.name for t in frozen.tools()] == LOOKING
    assert error(frozen, "write_file", workspace="notes", path="plan.md", content="x")[0] == (
        "read_only"
    )
    assert garden.read("/plan.md") == PLAN.encode()
    thawed = Workspaces(
        [Space(manual, "docs", writable=False), Space(garden, "notes", writable=True)]
    )
    assert [t.name for t in thawed.tools()] == NAMES
    only_one = Workspaces([Space(garden, "notes", writable=False)])
    assert [t.name for t in only_one.tools()] == LOOKING


# --- paths --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/plan.md", "/", "../plan.md", "beds/../../plan.md", "..", ""])
def test_a_path_not_relative_to_the_root_is_refused(garden: agentfs.Workspace, path: str) -> None:
    tools = Toolset(garden, profile="baf")
    for tool, args in [
        ("read_file", {}),
        ("list_directory", {}),
        ("write_file", {"content": "x"}),
        ("create_file", {}),
        ("delete_file", {}),
    ]:
        code, message = error(tools, tool, path=path, **args)
        assert code == "invalid_path", tool
        assert message.startswith(f"{path!r} leaves the workspace or is not relative to it")
    assert garden.read("/plan.md") == PLAN.encode()
    assert len(garden.history("/plan.md")) == 1


def test_a_dot_dot_that_stays_inside_is_an_ordinary_path(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf")
    assert call(tools, "read_file", path="beds/../plan.md")[0]["content"] == PLAN
    assert call(tools, "read_file", path="./beds/./north.md")[0]["path"] == "beds/north.md"
    data = call(tools, "write_file", path="beds/../shed/tools.md", content="rake\n")[0]
    assert data["path"] == "shed/tools.md"
    assert garden.read("/shed/tools.md") == b"rake\n"


def test_the_policys_deny_globs_refuse_and_hide(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf", policy=Policy(defaults=ToolPolicy(deny=["/secret/**"])))
    assert error(tools, "read_file", path="secret/combination.txt")[0] == "denied"
    assert error(tools, "write_file", path="secret/combination.txt", content="0")[0] == "denied"
    assert error(tools, "create_file", path="secret/new.txt")[0] == "denied"
    assert error(tools, "delete_file", path="secret/combination.txt")[0] == "denied"
    assert call(tools, "list_directory", path="secret")[1] == "secret is an empty directory."
    assert "[DIR] secret" in call(tools, "list_directory")[0]["entries"]  # only its inside
    hidden = Toolset(
        garden, profile="baf", policy=Policy(defaults=ToolPolicy(deny=["/secret", "/seed.bin"]))
    )
    assert call(hidden, "list_directory")[0]["entries"] == [
        "[DIR] beds",
        "[FILE] plan.md",
        "[DIR] shed",
    ]
    assert garden.read("/secret/combination.txt") == b"4-8-15\n"
    assert not garden.exists("/secret/new.txt")


# --- list_directory -----------------------------------------------------------------------------


def test_list_directory_marks_entries_in_name_order(garden: agentfs.Workspace) -> None:
    garden.write("/beds/east.md", "leeks\n")
    garden.mkdir("/beds/cold frame")
    tools = Toolset(garden, profile="baf")
    data, text = call(tools, "list_directory", path="beds")
    assert data == {
        "path": "beds",
        "entries": ["[DIR] cold frame", "[FILE] east.md", "[FILE] north.md"],
        "truncated": False,
    }
    assert text == "[DIR] cold frame\n[FILE] east.md\n[FILE] north.md"
    root, root_text = call(tools, "list_directory")  # the root by default
    assert root["path"] == "."
    assert root["entries"] == [
        "[DIR] beds",
        "[FILE] plan.md",
        "[DIR] secret",
        "[FILE] seed.bin",
        "[DIR] shed",
    ]
    assert call(tools, "list_directory", path=".")[1] == root_text


def test_list_directory_shows_a_symlink_as_what_it_points_to(garden: agentfs.Workspace) -> None:
    garden.mkdir("/links")
    garden.symlink("/beds", "/links/to-beds")
    garden.symlink("../plan.md", "/links/to-plan")
    garden.symlink("/compost", "/links/dangling")
    tools = Toolset(garden, profile="baf")
    assert call(tools, "list_directory", path="links")[0]["entries"] == [
        "[FILE] dangling",
        "[DIR] to-beds",
        "[FILE] to-plan",
    ]


def test_list_directory_errors_and_empty(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf")
    data, text = call(tools, "list_directory", path="shed")
    assert data["entries"] == [] and text == "shed is an empty directory."
    code, message = error(tools, "list_directory", path="plan.md")
    assert code == "not_directory" and message == "plan.md is a file; call read_file on it"
    code, message = error(tools, "list_directory", path="beds/south")
    assert code == "not_found" and message == (
        "beds/south does not exist; call list_directory to look"
    )


def test_list_directory_is_capped_by_the_policys_max_results(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf", policy=Policy(limits=Limits(max_results=2)))
    data, text = call(tools, "list_directory")
    assert data["entries"] == ["[DIR] beds", "[FILE] plan.md"] and data["truncated"]
    assert text == "[DIR] beds\n[FILE] plan.md\n... only the first 2 entries are shown"
    # exactly as many as the cap: not truncated
    whole = Toolset(garden, profile="baf", policy=Policy(limits=Limits(max_results=5)))
    data, text = call(whole, "list_directory")
    assert len(data["entries"]) == 5 and not data["truncated"] and "only the first" not in text


# --- read_file ----------------------------------------------------------------------------------


def test_read_file_returns_the_whole_text(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf")
    data, text = call(tools, "read_file", path="plan.md")
    assert data == {
        "path": "plan.md",
        "content": PLAN,
        "size": len(PLAN),
        "truncated": False,
        "binary": False,
    }
    assert text == PLAN


def test_read_file_cuts_at_the_spaces_cap_on_a_character_boundary(
    garden: agentfs.Workspace,
) -> None:
    # 24 ASCII bytes, then "é" (2 bytes) across the 25-byte cap
    garden.write("/long.md", "abcdefghijklmnopqrstuvwx\u00e9 and the rest")
    tools = Workspaces([Space(garden, "notes", max_read_bytes=25)])
    data, text = call(tools, "read_file", path="long.md")
    size = len("abcdefghijklmnopqrstuvwx\u00e9 and the rest".encode())
    assert data["content"] == "abcdefghijklmnopqrstuvwx" and data["truncated"]
    assert data["size"] == size == 39
    assert text == (
        "abcdefghijklmnopqrstuvwx\n[truncated: the first 24 of 39 bytes of long.md are shown]"
    )
    # a cap at the character's end keeps it
    wider = Workspaces([Space(garden, "notes", max_read_bytes=26)])
    assert call(wider, "read_file", path="long.md")[0]["content"] == (
        "abcdefghijklmnopqrstuvwx\u00e9"
    )
    under = call(tools, "read_file", path="beds/north.md")[0]  # 16 bytes: under the cap
    assert under["content"] == "tomatoes, basil\n" and not under["truncated"]


def test_read_file_cap_is_200000_bytes_by_default(garden: agentfs.Workspace) -> None:
    garden.write("/big.txt", "0123456789" * 25_000)
    data, text = call(Toolset(garden, profile="baf"), "read_file", path="big.txt")
    assert len(data["content"]) == 200_000 and data["truncated"] and data["size"] == 250_000
    assert text.endswith("\n[truncated: the first 200,000 of 250,000 bytes of big.txt are shown]")


def test_read_file_the_policys_smaller_cap_wins(garden: agentfs.Workspace) -> None:
    policy = Policy(limits=Limits(max_read_bytes=6))
    tools = Workspaces([Space(garden, "notes", max_read_bytes=25)], policy=policy)
    data, text = call(tools, "read_file", path="plan.md")
    assert data["content"] == "- repo" and data["truncated"]
    assert text == f"- repo\n[truncated: the first 6 of {len(PLAN)} bytes of plan.md are shown]"
    looser = Workspaces([Space(garden, "notes", max_read_bytes=4)], policy=policy)
    assert call(looser, "read_file", path="plan.md")[0]["content"] == "- re"


def test_read_file_describes_a_binary_file_and_refuses_a_directory(
    garden: agentfs.Workspace,
) -> None:
    garden.write("/latin1.txt", "caf\u00e9".encode("latin-1"))
    tools = Toolset(garden, profile="baf")
    data, text = call(tools, "read_file", path="seed.bin")
    assert data == {
        "path": "seed.bin",
        "content": "",
        "size": 10,
        "truncated": False,
        "binary": True,
    }
    assert text == "seed.bin is a binary file (10 bytes); it is not shown."
    assert call(tools, "read_file", path="latin1.txt")[0]["binary"]  # not UTF-8
    code, message = error(tools, "read_file", path="beds")
    assert code == "is_directory" and message == "beds is a directory; call list_directory"
    assert error(tools, "read_file", path="beds/south.md")[0] == "not_found"


def test_read_file_is_the_read_that_read_before_write_asks_for(
    garden: agentfs.Workspace, manual: agentfs.Workspace
) -> None:
    strict = Policy(defaults=ToolPolicy(require_read_before_write=True))
    tools = Workspaces([Space(manual, "docs"), Space(garden, "notes")], policy=strict)
    code = error(tools, "write_file", workspace="notes", path="plan.md", content="x\n")[0]
    assert code == "read_required"
    assert garden.read("/plan.md") == PLAN.encode()
    # a read of the same path in the other workspace does not count
    manual.write("/plan.md", "other\n")
    call(tools, "read_file", workspace="docs", path="plan.md")
    code = error(tools, "write_file", workspace="notes", path="plan.md", content="x\n")[0]
    assert code == "read_required"
    call(tools, "read_file", workspace="notes", path="plan.md")
    call(tools, "write_file", workspace="notes", path="plan.md", content="x\n")
    assert garden.read("/plan.md") == b"x\n"
    # a plain toolset's read counts too
    plain = Toolset(garden, profile="baf", policy=strict, thread="t2")
    assert error(plain, "write_file", path="beds/north.md", content="kale\n")[0] == (
        "read_required"
    )
    call(plain, "read_file", path="beds/north.md")
    call(plain, "write_file", path="beds/north.md", content="kale\n")
    assert garden.read("/beds/north.md") == b"kale\n"


# --- write_file, create_file, delete_file -------------------------------------------------------


def test_write_file_replaces_and_creates_parents(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf")
    data, text = call(tools, "write_file", path="plan.md", content="- rest\n")
    assert data == {"path": "plan.md", "bytes": 7, "created": False}
    assert text == "Wrote plan.md (7 bytes)."
    assert garden.read("/plan.md") == b"- rest\n"
    data, text = call(tools, "write_file", path="seasons/2025/spring.md", content="s\u00e8me\n")
    assert data == {"path": "seasons/2025/spring.md", "bytes": 6, "created": True}
    assert garden.read("/seasons/2025/spring.md") == "s\u00e8me\n".encode()
    code, message = error(tools, "write_file", path="beds", content="x")
    assert code == "is_directory" and message == "beds is a directory; give a file's path"
    assert garden.stat("/beds").is_dir()


def test_create_file_refuses_an_existing_path(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf")
    code, message = error(tools, "create_file", path="plan.md", content="- nothing\n")
    assert code == "exists"
    assert message == "plan.md already exists; use write_file to replace its content"
    assert garden.read("/plan.md") == PLAN.encode() and len(garden.history("/plan.md")) == 1
    assert error(tools, "create_file", path="shed")[0] == "exists"
    garden.symlink("/nowhere", "/ghost")  # a dangling symlink is something there too
    assert error(tools, "create_file", path="ghost", content="x")[0] == "exists"


def test_create_file_makes_a_new_file_empty_by_default(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf")
    data, text = call(tools, "create_file", path="shed/inventory/list.md")
    assert data == {"path": "shed/inventory/list.md", "bytes": 0, "created": True}
    assert text == "Created shed/inventory/list.md (0 bytes)."
    assert garden.read("/shed/inventory/list.md") == b""
    call(tools, "create_file", path="harvest.md", content="12 courgettes\n")
    assert garden.read("/harvest.md") == b"12 courgettes\n"


def test_delete_file_deletes_a_file_and_keeps_its_history(garden: agentfs.Workspace) -> None:
    garden.write("/plan.md", "- second draft\n")
    tools = Toolset(garden, profile="baf")
    data, text = call(tools, "delete_file", path="plan.md")
    assert data == {"path": "plan.md"} and text == "Deleted plan.md."
    assert not garden.exists("/plan.md")
    assert [v.op for v in garden.history("/plan.md")] == ["write", "write", "delete"]
    assert garden.read_version("/plan.md", 1) == PLAN.encode()


def test_delete_file_refuses_a_directory_and_a_missing_path(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf")
    code, message = error(tools, "delete_file", path="beds")
    assert code == "is_directory"
    assert message == "beds is a directory; only files are deleted"
    assert garden.read("/beds/north.md") == b"tomatoes, basil\n"
    assert error(tools, "delete_file", path="shed")[0] == "is_directory"
    assert garden.stat("/shed").is_dir()
    code, message = error(tools, "delete_file", path="beds/west.md")
    assert code == "not_found" and message.startswith("beds/west.md does not exist")


def test_delete_file_deletes_a_symlink_not_its_target(garden: agentfs.Workspace) -> None:
    garden.symlink("/beds", "/shortcut")
    call(Toolset(garden, profile="baf"), "delete_file", path="shortcut")
    assert not garden.exists("/shortcut") and garden.stat("/beds").is_dir()


# --- the system prompt --------------------------------------------------------------------------


def test_the_system_prompt_presents_each_workspace(spaces: Workspaces) -> None:
    prompt = spaces.system_prompt()
    assert prompt.startswith("<workspaces>\n") and prompt.endswith("\n</workspaces>")
    assert (
        '<workspace name="docs" writable="false">\n'
        "<description>The appliance manuals</description>\n"
        "<root>\n[FILE] README.md\n[DIR] kettle\n</root>\n"
        "</workspace>"
    ) in prompt
    assert (
        '<workspace name="notes" writable="true">\n'
        "<description>The garden notebook</description>\n"
        "<root>\n[DIR] beds\n[FILE] plan.md\n[DIR] secret\n[FILE] seed.bin\n[DIR] shed\n</root>\n"
        "</workspace>"
    ) in prompt
    assert prompt.index('name="docs"') < prompt.index('name="notes"')
    assert (
        "Use list_directory, read_file, write_file, create_file, delete_file on these"
        " workspaces, passing the workspace's name as `workspace`"
    ) in prompt


def test_the_system_prompt_escapes_descriptions(garden: agentfs.Workspace) -> None:
    garden.write("/<odd> & name.md", "x")
    tools = Workspaces([Space(garden, "notes", "Beds <north> & <south>")])
    prompt = tools.system_prompt()
    assert "<description>Beds &lt;north&gt; &amp; &lt;south&gt;</description>" in prompt
    assert "<north>" not in prompt
    assert "[FILE] &lt;odd&gt; &amp; name.md" in prompt
    assert "<description>" not in Workspaces([Space(garden, "bare")]).system_prompt()


def test_the_system_prompt_shows_at_most_50_root_entries(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "many.db") as many:
        for i in range(53):
            many.write(f"/sample-{i:02}.csv", "x")
        prompt = Workspaces([Space(many, "samples")]).system_prompt()
        root = prompt.split("<root>\n")[1].split("\n</root>")[0].splitlines()
        assert root == [f"[FILE] sample-{i:02}.csv" for i in range(50)] + [
            "... more: call list_directory"
        ]
        for i in range(3):
            many.remove(f"/sample-{i:02}.csv")
        prompt = Workspaces([Space(many, "samples")]).system_prompt()
        root = prompt.split("<root>\n")[1].split("\n</root>")[0].splitlines()
        assert len(root) == 50 and "more" not in prompt  # exactly 50: nothing more to say
        empty = agentfs.open(tmp_path / "empty.db")
        with empty:
            assert "<root>\n(empty)\n</root>" in Workspaces([Space(empty, "e")]).system_prompt()


def test_the_system_prompt_keeps_to_the_policy(garden: agentfs.Workspace) -> None:
    deny = Policy(defaults=ToolPolicy(deny=["/secret", "/seed.bin"]))
    prompt = Workspaces([Space(garden, "notes")], policy=deny).system_prompt()
    assert "<root>\n[DIR] beds\n[FILE] plan.md\n[DIR] shed\n</root>" in prompt
    assert "secret" not in prompt and "seed.bin" not in prompt
    no_ls = Policy(tools={"ls": ToolPolicy(enabled=False)})
    prompt = Workspaces([Space(garden, "notes", "The notebook")], policy=no_ls).system_prompt()
    assert "<root>" not in prompt and "plan.md" not in prompt
    assert "Use read_file, write_file, create_file, delete_file on" in prompt
    assert '<workspace name="notes" writable="true">' in prompt
    assert "<description>The notebook</description>" in prompt
    frozen = Workspaces([Space(garden, "notes")], policy=Policy(read_only=True))
    assert '<workspace name="notes" writable="false">' in frozen.system_prompt()
    assert "Use list_directory, read_file on" in frozen.system_prompt()


# --- a plain toolset ----------------------------------------------------------------------------


def test_a_plain_toolset_is_one_workspace_named_workspace(garden: agentfs.Workspace) -> None:
    tools = Toolset(garden, profile="baf")
    assert call(tools, "read_file", workspace="workspace", path="plan.md")[0]["content"] == PLAN
    assert call(tools, "read_file", path="plan.md")[0]["content"] == PLAN
    code, message = error(tools, "write_file", workspace="notes", path="plan.md", content="x")
    assert code == "invalid_argument"
    assert message == "there is no workspace 'notes' here; the workspaces are: workspace"
    assert garden.read("/plan.md") == PLAN.encode()
    one = Workspaces([Space(garden)])  # the same default name through Workspaces
    assert call(one, "read_file", workspace="workspace", path="plan.md")[0]["content"] == PLAN


# --- the spaces file ----------------------------------------------------------------------------


def test_a_spaces_file_gives_paths_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    spaces_file = tmp_path / "conf" / "spaces.toml"
    spaces_file.write_text(
        """
[[workspace]]
name = "docs"
path = "../manual.db"
description = "The appliance manuals"
writable = false
max_read_bytes = 1000

[[workspace]]
name = "notes"
path = "garden.db"
""",
        encoding="utf-8",
    )
    docs, notes = SpacesFile.load(spaces_file)
    assert (docs.name, docs.path, docs.description, docs.writable, docs.max_read_bytes) == (
        "docs",
        tmp_path / "conf" / ".." / "manual.db",
        "The appliance manuals",
        False,
        1000,
    )
    assert (notes.name, notes.path, notes.description, notes.writable, notes.max_read_bytes) == (
        "notes",
        tmp_path / "conf" / "garden.db",
        None,
        True,
        200_000,
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[[workspace]]\nname = "a"\npath = "a.db"\ncolour = "red"\n', "extra inputs"),
        ('[[workspace]]\npath = "a.db"\n', "workspace.0.name: field required"),
        ("workspace = []\n", "workspace: list should have at least 1 item"),
        ("", "workspace: field required"),
        ('[[workspace]\nname = "a"\n', "not valid toml"),
        ('[[workspace]]\nname = "a"\npath = "a.db"\nmax_read_bytes = 0\n', "max_read_bytes"),
    ],
)
def test_a_bad_spaces_file_is_one_error_naming_it(tmp_path: Path, text: str, says: str) -> None:
    bad = tmp_path / "bad-spaces.toml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as raised:
        SpacesFile.load(bad)
    message = str(raised.value)
    assert message.startswith(f"{bad}: ") and says in message.lower()
    assert "\n" not in message


# --- the CLI ------------------------------------------------------------------------------------


def _spaces_toml(tmp_path: Path) -> Path:
    """Two workspace files and a spaces file serving them: ``docs`` (not writable) and
    ``notes``."""
    with agentfs.open(tmp_path / "manual.db") as docs:
        docs.write("/README.md", "The appliance manuals.\n")
    with agentfs.open(tmp_path / "garden.db") as notes:
        notes.write("/plan.md", PLAN)
    spaces_file = tmp_path / "spaces.toml"
    spaces_file.write_text(
        '[[workspace]]\nname = "docs"\npath = "manual.db"\n'
        'description = "The appliance manuals"\nwritable = false\n\n'
        '[[workspace]]\nname = "notes"\npath = "garden.db"\ndescription = "The garden notebook"\n',
        encoding="utf-8",
    )
    return spaces_file


def test_the_cli_refuses_spaces_without_the_baf_profile(tmp_path: Path) -> None:
    spaces_file = _spaces_toml(tmp_path)
    result = run("serve", "mcp", "--spaces", spaces_file)
    assert_user_error(result, "--spaces serves baf's named workspaces", "give --profile baf")
    result = run("serve", "mcp", "--profile", "agentos", "--spaces", spaces_file)
    assert_user_error(result, "give --profile baf")


def test_the_cli_needs_a_workspace_or_a_spaces_file_not_both(tmp_path: Path) -> None:
    spaces_file = _spaces_toml(tmp_path)
    neither = run("serve", "mcp", "--profile", "baf")
    assert_user_error(neither, "give the workspace WS, or --spaces FILE with --profile baf")
    both = run("serve", "mcp", tmp_path / "garden.db", "--profile", "baf", "--spaces", spaces_file)
    assert_user_error(both, "give the workspace WS, or --spaces FILE with --profile baf")


def test_the_cli_refuses_a_bad_spaces_file(tmp_path: Path) -> None:
    bad = tmp_path / "spaces.toml"
    bad.write_text('[[workspace]]\nname = "docs"\n', encoding="utf-8")
    assert_user_error(
        run("serve", "mcp", "--profile", "baf", "--spaces", bad),
        str(bad),
        "workspace.0.path: field required",
    )


@pytest.mark.anyio
async def test_served_with_a_spaces_file(tmp_path: Path) -> None:
    spaces_file = _spaces_toml(tmp_path)
    with anyio.fail_after(60):
        async with served(None, "baf", ["--spaces", str(spaces_file)]) as session:
            hello = await session.initialize()  # the result of the handshake, kept
            instructions = hello.instructions or ""
            assert instructions.startswith("<workspaces>")
            assert '<workspace name="docs" writable="false">' in instructions
            assert '<workspace name="notes" writable="true">' in instructions
            assert "<root>\n[FILE] plan.md\n</root>" in instructions
            listed = (await session.list_tools()).tools
            assert [t.name for t in listed] == NAMES
            assert all("workspace" in t.input_schema["properties"] for t in listed)
            wrote = await session.call_tool(
                "write_file", {"workspace": "notes", "path": "log.md", "content": "sowed\n"}
            )
            assert not wrote.is_error
            assert wrote.structured_content == {"path": "log.md", "bytes": 6, "created": True}
            refused = await session.call_tool(
                "write_file", {"workspace": "docs", "path": "log.md", "content": "sowed\n"}
            )
            assert refused.is_error
            assert "read-only" in refused.content[0].text  # type: ignore[union-attr]
            read = await session.call_tool("read_file", {"workspace": "docs", "path": "README.md"})
            assert read.content[0].text == "The appliance manuals.\n"  # type: ignore[union-attr]
    with agentfs.open(tmp_path / "garden.db") as notes:
        assert notes.read("/log.md") == b"sowed\n"
    with agentfs.open(tmp_path / "manual.db") as docs:
        assert not docs.exists("/log.md")


@pytest.mark.anyio
async def test_served_with_one_workspace(garden: agentfs.Workspace, tmp_path: Path) -> None:
    garden.close()
    with anyio.fail_after(60):
        async with served(tmp_path / "garden.db", "baf") as session:
            instructions = (await session.initialize()).instructions or ""
            assert '<workspace name="workspace" writable="true">' in instructions
            assert [t.name for t in (await session.list_tools()).tools] == NAMES
            got = await session.call_tool("read_file", {"path": "plan.md"})
            assert got.content[0].text == PLAN  # type: ignore[union-attr]
            named = await session.call_tool(
                "create_file", {"workspace": "workspace", "path": "new.md"}
            )
            assert not named.is_error
            other = await session.call_tool("read_file", {"workspace": "docs", "path": "plan.md"})
            assert other.is_error
    with agentfs.open(tmp_path / "garden.db") as reopened:
        assert reopened.read("/new.md") == b""
