"""The ``agentos`` profile, behaviour by behaviour: each tool's result shape and values,
``maxBytes``, paths kept inside the workspace (``..`` and symlinks), a patch applying whole or
not at all, the policy of the agentfs tool ruling each tool, the audit under the profile's
names, and the profile served over MCP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import agentfs
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import Limits, ToolPolicy
from agentfs.tools.profiles.agentos import SURFACE
from tests.tools.calling import call, error, served

NAMES = ["file_read", "file_write", "file_list", "apply_patch"]
RULED_BY = {
    "file_read": "read_file",
    "file_write": "write_file",
    "file_list": "ls",
    "apply_patch": "apply_patch",
}
RECIPE = "flour 200g\nsugar 50g\neggs 2\nsalt 1 pinch\n"


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as workspace:
        workspace.write("/kitchen/recipe.txt", RECIPE, parents=True)
        workspace.write("/kitchen/pantry/jar.txt", "rice\n", parents=True)
        workspace.write("/secret/pin.txt", "1234\n", parents=True)
        workspace.write("/photo.raw", b"\x00\xffraw", parents=True)
        yield workspace


def test_the_profile_offers_exactly_its_tools_each_ruled_by_its_agentfs_tool(
    ws: agentfs.Workspace,
) -> None:
    tools = Toolset(ws, profile="agentos")
    assert tools.surface is SURFACE
    assert [t.name for t in tools.tools()] == NAMES
    assert {t.name: t.policy_name for t in tools.tools()} == RULED_BY
    params = {t.name: sorted(t.input.model_fields) for t in tools.tools()}
    assert params == {
        "file_read": ["maxBytes", "path"],
        "file_write": ["content", "path"],
        "file_list": ["path", "recursive"],
        "apply_patch": ["patch", "path"],
    }
    assert SURFACE.find("file_read").tracks_reads  # type: ignore[union-attr]
    assert not SURFACE.find("file_list").mutates  # type: ignore[union-attr]


def test_file_read_gives_content_path_and_size(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="agentos")
    data, text = call(tools, "file_read", path="kitchen/recipe.txt")
    assert data == {
        "content": RECIPE,
        "path": "/kitchen/recipe.txt",
        "size": len(RECIPE),
        "truncated": False,
        "binary": False,
    }
    assert text == RECIPE
    assert call(tools, "file_read", path="/kitchen/./pantry/../recipe.txt")[0]["content"] == RECIPE
    binary = call(tools, "file_read", path="photo.raw")[0]
    assert binary["binary"] and binary["content"] == "" and binary["size"] == 5
    code, message = error(tools, "file_read", path="kitchen/cake.txt")
    assert code == "not_found" and "file_list" in message
    assert error(tools, "file_read", path="kitchen")[0] == "is_directory"


def test_max_bytes_cuts_the_content_and_says_so(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="agentos")
    data, text = call(tools, "file_read", path="kitchen/recipe.txt", maxBytes=10)
    assert data["content"] == "flour 200g" and data["truncated"]
    assert data["size"] == len(RECIPE)  # the whole file's size, so size > len(content)
    assert text == f"flour 200g\n... cut at 10 of {len(RECIPE)} bytes"
    whole = call(tools, "file_read", path="kitchen/recipe.txt", maxBytes=len(RECIPE))[0]
    assert whole["content"] == RECIPE and not whole["truncated"]
    assert call(tools, "file_read", path="kitchen/recipe.txt", maxBytes=0)[0]["content"] == ""
    # cut back to a whole character
    ws.write("/menu.txt", "crème brûlée")
    assert call(tools, "file_read", path="menu.txt", maxBytes=4)[0]["content"] == "cr\u00e8"
    assert call(tools, "file_read", path="menu.txt", maxBytes=3)[0]["content"] == "cr"
    assert error(tools, "file_read", path="menu.txt", maxBytes=-1)[0] == "invalid_argument"


def test_file_write_creates_parents_and_replaces(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="agentos")
    data, text = call(tools, "file_write", path="orders/today.json", content='{"tea": 2}')
    assert data == {"written": True, "path": "/orders/today.json", "size": 10}
    assert text.startswith("Created /orders/today.json")
    data, text = call(tools, "file_write", path="/orders/today.json", content="thé")
    assert data == {"written": True, "path": "/orders/today.json", "size": 4}  # bytes
    assert text.startswith("Replaced /orders/today.json")
    assert ws.read("/orders/today.json") == "thé".encode()
    assert error(tools, "file_write", path="kitchen", content="x")[0] == "is_directory"


def test_file_list_gives_entries_with_metadata(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="agentos")
    data, text = call(tools, "file_list", path="kitchen")
    assert data["path"] == "/kitchen" and not data["truncated"]
    entries = data["entries"]
    assert [(e["name"], e["type"], e["size"]) for e in entries] == [
        ("pantry", "directory", entries[0]["size"]),
        ("recipe.txt", "file", len(RECIPE)),
    ]
    assert all(e["modified"].endswith("Z") and "T" in e["modified"] for e in entries)
    assert text.splitlines()[1].endswith("\trecipe.txt")
    root = call(tools, "file_list")[0]
    assert root["path"] == "/"
    assert [e["name"] for e in root["entries"]] == ["kitchen", "photo.raw", "secret"]
    ws.mkdir("/bare")
    assert call(tools, "file_list", path="bare")[1] == "/bare is empty."
    assert error(tools, "file_list", path="kitchen/recipe.txt")[0] == "not_directory"
    assert error(tools, "file_list", path="cellar")[0] == "not_found"


def test_file_list_recursive_names_the_subtree_by_path(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="agentos")
    data = call(tools, "file_list", path="/kitchen", recursive=True)[0]
    assert [(e["name"], e["type"]) for e in data["entries"]] == [
        ("pantry", "directory"),
        ("pantry/jar.txt", "file"),
        ("recipe.txt", "file"),
    ]
    capped = Toolset(ws, profile="agentos", policy=Policy(limits=Limits(max_results=2)))
    cut = call(capped, "file_list", recursive=True)[0]
    assert len(cut["entries"]) == 2 and cut["truncated"]


@pytest.mark.parametrize(
    "path", ["../x", "a/../../x", "/../x", "..", "kitchen/../../kitchen/recipe.txt"]
)
def test_a_path_climbing_out_of_the_workspace_is_refused(ws: agentfs.Workspace, path: str) -> None:
    tools = Toolset(ws, profile="agentos")
    for name, args in [
        ("file_read", {"path": path}),
        ("file_write", {"path": path, "content": "x"}),
        ("file_list", {"path": path}),
        ("apply_patch", {"path": path, "patch": "@@ -1 +1 @@\n-a\n+b\n"}),
    ]:
        code, message = error(tools, name, **args)
        assert code == "invalid_path" and "path traversal denied" in message, name
    assert not ws.exists("/x")
    # a `..` that stays inside is an ordinary path
    assert call(tools, "file_write", path="a/b/../ok.txt", content="x")[0]["path"] == "/a/ok.txt"


def test_a_symlink_out_of_the_workspace_is_refused(ws: agentfs.Workspace) -> None:
    ws.symlink("../../../etc/passwd", "/kitchen/passwd")
    ws.symlink("../..", "/kitchen/up")
    ws.symlink("recipe.txt", "/kitchen/link.txt")
    ws.symlink("/kitchen/pantry", "/pantry")
    tools = Toolset(ws, profile="agentos")
    for path in ["kitchen/passwd", "kitchen/up/secret/pin.txt", "kitchen/up"]:
        code, message = error(tools, "file_read", path=path)
        assert code == "invalid_path" and "through a symlink" in message, path
    assert error(tools, "file_write", path="kitchen/up/x.txt", content="x")[0] == "invalid_path"
    assert error(tools, "file_list", path="kitchen/up")[0] == "invalid_path"
    assert not ws.exists("/x.txt")
    # links that stay inside are followed
    assert call(tools, "file_read", path="kitchen/link.txt")[0]["content"] == RECIPE
    assert [e["name"] for e in call(tools, "file_list", path="pantry")[0]["entries"]] == ["jar.txt"]
    # a listing shows a link as a link, without following it
    listed = {e["name"]: e["type"] for e in call(tools, "file_list", path="kitchen")[0]["entries"]}
    assert listed["passwd"] == "symlink" and listed["up"] == "symlink"


def test_apply_patch_applies_bare_hunks_or_a_diff_of_the_file(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="agentos")
    hunk = "@@ -2,2 +2,2 @@\n-sugar 50g\n+sugar 80g\n eggs 2\n"
    data, text = call(tools, "apply_patch", path="kitchen/recipe.txt", patch=hunk)
    assert data == {"patched": True, "path": "/kitchen/recipe.txt"}
    assert text.startswith("Patched /kitchen/recipe.txt.\n") and "+sugar 80g" in text
    assert ws.read("/kitchen/recipe.txt") == RECIPE.replace("50g", "80g").encode()
    diff = (
        "--- a/kitchen/recipe.txt\n+++ b/kitchen/recipe.txt\n"
        "@@ -3,2 +3,3 @@\n eggs 2\n salt 1 pinch\n+milk 1l\n"
    )
    call(tools, "apply_patch", path="/kitchen/recipe.txt", patch=diff)
    assert ws.read("/kitchen/recipe.txt").endswith(b"salt 1 pinch\nmilk 1l\n")


@pytest.mark.parametrize(
    ("patch", "code"),
    [
        ("@@ -1,2 +1,2 @@\n flour 200g\n-sugar 99g\n+sugar 0g\n", "patch_failed"),
        # the first hunk applies, the second does not: neither is written
        (
            "@@ -1 +1 @@\n-flour 200g\n+flour 300g\n@@ -4 +4 @@\n-pepper\n+salt\n",
            "patch_failed",
        ),
        ("just some words\n", "invalid_argument"),
        ("--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-a\n+b\n", "invalid_argument"),
    ],
)
def test_a_patch_that_does_not_apply_changes_nothing(
    ws: agentfs.Workspace, patch: str, code: str
) -> None:
    tools = Toolset(ws, profile="agentos")
    assert error(tools, "apply_patch", path="kitchen/recipe.txt", patch=patch)[0] == code
    assert ws.read("/kitchen/recipe.txt") == RECIPE.encode()
    assert len(ws.history("/kitchen/recipe.txt")) == 1


def test_apply_patch_needs_an_existing_file(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="agentos")
    patch = "@@ -1 +1 @@\n-a\n+b\n"
    assert error(tools, "apply_patch", path="kitchen/none.txt", patch=patch)[0] == "not_found"
    assert error(tools, "apply_patch", path="kitchen", patch=patch)[0] == "is_directory"
    assert not ws.exists("/kitchen/none.txt")


def test_the_policy_of_the_ruling_tools_holds(ws: agentfs.Workspace) -> None:
    policy = Policy(defaults=ToolPolicy(deny=["/secret/**"]))
    tools = Toolset(ws, profile="agentos", policy=policy)
    assert error(tools, "file_read", path="secret/pin.txt")[0] == "denied"
    assert error(tools, "file_write", path="secret/new.txt", content="x")[0] == "denied"
    patch = "@@ -1 +1 @@\n-1234\n+0000\n"
    assert error(tools, "apply_patch", path="secret/pin.txt", patch=patch)[0] == "denied"
    assert call(tools, "file_list", path="secret")[0]["entries"] == []
    names = [e["name"] for e in call(tools, "file_list", recursive=True)[0]["entries"]]
    assert "secret/pin.txt" not in names and "kitchen/recipe.txt" in names
    assert ws.read("/secret/pin.txt") == b"1234\n" and not ws.exists("/secret/new.txt")

    # one agentfs tool's entry rules its profile tool alone
    tools = Toolset(ws, profile="agentos", policy=Policy(tools={"ls": ToolPolicy(enabled=False)}))
    assert "file_list" not in [t.name for t in tools.tools()]
    assert error(tools, "file_list")[0] == "denied"
    assert call(tools, "file_read", path="kitchen/recipe.txt")[0]["content"] == RECIPE

    no_patch = Policy(tools={"apply_patch": ToolPolicy(enabled=False)})
    tools = Toolset(ws, profile="agentos", policy=no_patch)
    assert [t.name for t in tools.tools()] == ["file_read", "file_write", "file_list"]


def test_the_policys_limits_hold(ws: agentfs.Workspace) -> None:
    policy = Policy(limits=Limits(max_read_bytes=5, max_write_bytes=4))
    tools = Toolset(ws, profile="agentos", policy=policy)
    data = call(tools, "file_read", path="kitchen/recipe.txt", maxBytes=100)[0]
    assert data["content"] == "flour" and data["truncated"]
    assert call(tools, "file_read", path="kitchen/recipe.txt", maxBytes=3)[0]["content"] == "flo"
    assert error(tools, "file_write", path="big.txt", content="12345")[0] == "too_large"
    assert not ws.exists("/big.txt")


def test_read_only_offers_and_runs_no_change(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="agentos", policy=Policy(read_only=True))
    assert [t.name for t in tools.tools()] == ["file_read", "file_list"]
    assert error(tools, "file_write", path="x.txt", content="x")[0] == "read_only"
    patch = "@@ -1 +1 @@\n-flour 200g\n+flour 1kg\n"
    assert error(tools, "apply_patch", path="kitchen/recipe.txt", patch=patch)[0] == "read_only"
    assert not ws.exists("/x.txt") and ws.read("/kitchen/recipe.txt") == RECIPE.encode()


def test_calls_are_audited_under_the_profiles_names(ws: agentfs.Workspace) -> None:
    with Toolset(ws, profile="agentos") as tools:
        call(tools, "file_read", path="kitchen/recipe.txt")
        call(tools, "file_write", path="a.txt", content="a\n")
        call(tools, "file_list")
        call(tools, "apply_patch", path="a.txt", patch="@@ -1 +1 @@\n-a\n+b\n")
        error(tools, "apply_patch", path="a.txt", patch="@@ -1 +1 @@\n-zzz\n+y\n")
    for name in ["file_read", "file_write", "file_list"]:
        assert len(ws.tool_calls.list(name=name)) == 1, name
    assert len(ws.tool_calls.list(name="apply_patch")) == 2
    # recorded as the profile's names, not the ruling tools'
    assert not ws.tool_calls.list(name="ls") and not ws.tool_calls.list(name="read_file")


@pytest.mark.anyio
async def test_served_over_mcp_under_its_names(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.close()
    with anyio.fail_after(60):
        async with served(tmp_path / "ws.db", "agentos") as session:
            listed = (await session.list_tools()).tools
            assert [t.name for t in listed] == NAMES
            schema = {t.name: t.input_schema for t in listed}
            assert schema["file_read"]["required"] == ["path"]
            assert "maxBytes" in schema["file_read"]["properties"]
            assert schema["apply_patch"]["required"] == ["path", "patch"]
            got = await session.call_tool(
                "file_read", {"path": "kitchen/recipe.txt", "maxBytes": 5}
            )
            assert got.structured_content == {
                "content": "flour",
                "path": "/kitchen/recipe.txt",
                "size": len(RECIPE),
                "truncated": True,
                "binary": False,
            }
            wrote = await session.call_tool("file_write", {"path": "n.txt", "content": "hi"})
            assert wrote.structured_content == {"written": True, "path": "/n.txt", "size": 2}
            out = await session.call_tool("file_read", {"path": "../n.txt"})
            assert out.is_error
            assert "path traversal denied" in out.content[0].text  # type: ignore[union-attr]
