"""The ``voltagent`` profile, behaviour by behaviour: its tools and parameters, paths that must
start with ``/``, the search's hybrid default and camelCase hit fields, the command's
camelCase result, the skill tools, read-only mode, the policy of the agentfs tool ruling each
tool, the audit under the profile's names, and the profile served over MCP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import agentfs
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import ToolPolicy
from agentfs.tools.profiles.voltagent import SURFACE
from tests.tools.calling import call, error, served
from tests.tools.test_profile_triggerfish import NO_MOUNT

WRITES = ["write_file", "edit_file", "delete_file", "mkdir", "rmdir"]
NAMES = [
    "ls",
    "read_file",
    *WRITES[:3],
    "stat",
    *WRITES[3:],
    "list_tree",
    "glob",
    "grep",
    "workspace_index",
    "workspace_index_content",
    "workspace_search",
    "execute_command",
    "workspace_list_skills",
    "workspace_search_skills",
    "workspace_read_skill",
    "workspace_activate_skill",
    "workspace_deactivate_skill",
    "workspace_read_skill_reference",
    "workspace_read_skill_script",
    "workspace_read_skill_asset",
]
PARAMS = {
    "ls": {"path": ...},
    "read_file": {"path": ..., "offset": None, "limit": None},
    "write_file": {"path": ..., "content": ..., "overwrite": False, "create_parent_dirs": True},
    "edit_file": {"path": ..., "old_string": ..., "new_string": ..., "replace_all": False},
    "delete_file": {"path": ..., "recursive": False},
    "stat": {"path": ...},
    "mkdir": {"path": ..., "recursive": True},
    "rmdir": {"path": ..., "recursive": False},
    "list_tree": {"path": ..., "max_depth": 4},
    "glob": {"pattern": ..., "path": None},
    "grep": {"pattern": ..., "path": None, "glob": None},
    "workspace_index": {"path": ..., "glob": "**/*", "max_files": 200},
    "workspace_index_content": {"path": ..., "content": ..., "source": "manual"},
    "workspace_search": {
        "query": ...,
        "mode": "hybrid",
        "top_k": 5,
        "min_score": 0.0,
        "include_content": True,
        "snippet_length": 200,
        "vector_weight": 0.6,
    },
    "execute_command": {
        "command": ...,
        "cwd": None,
        "timeout_ms": 10000,
        "env": None,
        "max_output_kb": 64,
    },
    "workspace_list_skills": {},
    "workspace_search_skills": {"query": ..., "top_k": 10},
    "workspace_read_skill": {"skill_id": ...},
    "workspace_activate_skill": {"skill_id": ...},
    "workspace_deactivate_skill": {"skill_id": ...},
    "workspace_read_skill_reference": {"skill_id": ..., "file": ...},
    "workspace_read_skill_script": {"skill_id": ..., "file": ...},
    "workspace_read_skill_asset": {"skill_id": ..., "file": ...},
}
GARDEN = "tomatoes need sun\nbasil likes water\nmint spreads fast\n"
SKILL = """---
name: pruning
description: Prune fruit trees in late winter.
---
# Pruning

Read references/cuts.md before cutting.
"""


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as workspace:
        workspace.write("/garden/beds.txt", GARDEN, parents=True)
        workspace.write("/garden/shed/tools.md", "rake\nhoe\n", parents=True)
        workspace.write("/private/keys.txt", "gate 42\n", parents=True)
        workspace.write("/skills/pruning/SKILL.md", SKILL, parents=True)
        workspace.write("/skills/pruning/references/cuts.md", "cut above a bud\n", parents=True)
        workspace.write("/skills/pruning/scripts/count.py", "print(3)\n", parents=True)
        workspace.write("/skills/pruning/assets/diagram.txt", "Y\n", parents=True)
        yield workspace


def test_the_profile_offers_exactly_its_tools_and_parameters(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent")
    assert tools.surface is SURFACE
    assert [t.name for t in tools.tools()] == NAMES
    # each is ruled by the agentfs tool of the same name
    assert {t.name: t.policy_name for t in tools.tools()} == {name: name for name in NAMES}
    params = {
        t.name: {
            name: ... if field.is_required() else field.default
            for name, field in t.input.model_fields.items()
        }
        for t in tools.tools()
    }
    assert params == PARAMS
    assert SURFACE.find("list_files") is SURFACE.find("list_tree")
    assert SURFACE.find("read_file").tracks_reads  # type: ignore[union-attr]
    assert SURFACE.find("execute_command").elsewhere  # type: ignore[union-attr]


def test_agentfs_parameters_beyond_voltagents_are_refused(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent")
    cases: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "/garden/beds.txt", "max_bytes": 5}),
        (
            "edit_file",
            {"path": "/garden/beds.txt", "old_string": "a", "new_string": "b", "dry_run": True},
        ),
        ("grep", {"pattern": "sun", "output_mode": "content"}),
        ("glob", {"pattern": "*", "limit": 1}),
        ("workspace_search", {"query": "sun", "glob": "*.txt"}),
        ("ls", {}),  # path is required
        ("list_tree", {}),
    ]
    for name, args in cases:
        assert error(tools, name, **args)[0] == "invalid_argument", name
    assert ws.read("/garden/beds.txt") == GARDEN.encode()


def test_paths_must_start_with_a_slash(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent")
    for name, args in [
        ("ls", {"path": "garden"}),
        ("read_file", {"path": "garden/beds.txt"}),
        ("write_file", {"path": "new.txt", "content": "x"}),
        ("stat", {"path": "garden"}),
        ("mkdir", {"path": "pots"}),
        ("list_tree", {"path": "."}),
        ("glob", {"pattern": "*.txt", "path": "garden"}),
        ("grep", {"pattern": "sun", "path": "garden"}),
        ("workspace_index", {"path": "garden"}),
        ("workspace_index_content", {"path": "note.md", "content": "x"}),
    ]:
        code, message = error(tools, name, **args)
        assert code == "invalid_path" and "start with /" in message, name
    assert not ws.exists("/new.txt") and not ws.exists("/pots") and not ws.exists("/note.md")


def test_the_filesystem_tools_are_agentfs_tools(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent")
    listed = call(tools, "ls", path="/garden")[0]
    assert [(e["name"], e["type"]) for e in listed["entries"]] == [
        ("beds.txt", "file"),
        ("shed", "directory"),
    ]
    data = call(tools, "read_file", path="/garden/beds.txt", offset=2, limit=1)[0]
    assert data["line_range"] == [2, 2] and "basil likes water" in data["content"]
    assert data["next_offset"] == 3 and data["total_lines"] == 3
    assert call(tools, "read_file", path="/garden/beds.txt")[0]["line_range"] == [1, 3]
    # write_file does not replace unless told to
    assert error(tools, "write_file", path="/garden/beds.txt", content="x")[0] == "exists"
    wrote = call(tools, "write_file", path="/pots/new/a.txt", content="seed\n")[0]
    assert wrote["created"] and ws.read("/pots/new/a.txt") == b"seed\n"
    edited = call(
        tools, "edit_file", path="/garden/beds.txt", old_string="sun", new_string="shade"
    )[0]
    assert edited["replacements"] == 1 and "+tomatoes need shade" in edited["diff"]
    assert call(tools, "stat", path="/garden/beds.txt")[0]["type"] == "file"
    assert call(tools, "mkdir", path="/pots/a/b")[0]["created"]
    assert error(tools, "rmdir", path="/pots")[0] == "not_empty"
    assert call(tools, "rmdir", path="/pots", recursive=True)[0]["files"] == 1
    assert error(tools, "delete_file", path="/garden/shed")[0] == "is_directory"
    call(tools, "delete_file", path="/garden/shed", recursive=True)
    assert not ws.exists("/garden/shed")


def test_list_tree_glob_and_grep(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent")
    tree = call(tools, "list_tree", path="/garden")[0]
    assert [e["path"] for e in tree["entries"]] == [
        "/garden/beds.txt",
        "/garden/shed",
        "/garden/shed/tools.md",
    ]
    assert call(tools, "list_files", path="/garden", max_depth=1)[0]["entries"][-1]["path"] == (
        "/garden/shed"
    )
    found = call(tools, "glob", pattern="**/*.md")[0]
    assert "/garden/shed/tools.md" in [m["path"] for m in found["matches"]]
    below = call(tools, "glob", pattern="*", path="/garden")[0]["matches"]
    assert [m["path"] for m in below] == ["/garden/beds.txt"]
    assert call(tools, "grep", pattern="ra.e")[0]["files"] == ["/garden/shed/tools.md"]
    assert call(tools, "grep", pattern="e", path="/garden", glob="*.txt")[0]["files"] == [
        "/garden/beds.txt"
    ]


def test_workspace_search_defaults_to_hybrid_and_names_hit_fields_in_camel_case(
    ws: agentfs.Workspace,
) -> None:
    tools = Toolset(ws, profile="voltagent")
    indexed = call(tools, "workspace_index", path="/garden", glob="**/*.txt")[0]
    assert [f["path"] for f in indexed["files"]] == ["/garden/beds.txt"]
    call(tools, "workspace_index_content", path="/notes/compost.md", content="compost weekly\n")
    data, text = call(tools, "workspace_search", query="basil water")
    # hybrid asked for; with no vectors the keywords answer, and the note says so
    assert data["mode"] == "bm25" and "hybrid" in data["note"]
    (hit,) = data["hits"]
    assert set(hit) == {"path", "score", "scoreDetails", "lineRange", "snippet", "content"}
    assert hit["path"] == "/garden/beds.txt" and 0 < hit["score"] <= 1
    assert hit["scoreDetails"]["bm25"] is not None and hit["lineRange"] == [1, 3]
    assert hit["content"] == GARDEN and "/garden/beds.txt:1-3" in text
    lean = call(tools, "workspace_search", query="basil", include_content=False, mode="bm25")[0]
    assert "content" not in lean["hits"][0] and "note" not in lean
    assert call(tools, "workspace_search", query="compost")[0]["hits"][0]["path"] == (
        "/notes/compost.md"
    )


def test_the_skill_tools(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent")
    assert [s["id"] for s in call(tools, "workspace_list_skills")[0]["skills"]] == ["pruning"]
    hits = call(tools, "workspace_search_skills", query="fruit trees")[0]["hits"]
    assert hits and hits[0]["id"] == "pruning"
    skill = call(tools, "workspace_read_skill", skill_id="pruning")[0]
    assert skill["instructions"].startswith("# Pruning")
    assert call(tools, "workspace_activate_skill", skill_id="pruning")[0]["active"]
    assert not call(tools, "workspace_deactivate_skill", skill_id="pruning")[0]["active"]
    for name, file, text in [
        ("workspace_read_skill_reference", "cuts.md", "cut above a bud"),
        ("workspace_read_skill_script", "count.py", "print(3)"),
        ("workspace_read_skill_asset", "diagram.txt", "Y"),
    ]:
        assert text in call(tools, name, skill_id="pruning", file=file)[0]["content"], name
    code = error(tools, "workspace_read_skill_reference", skill_id="pruning", file="../SKILL.md")
    assert code[0] in {"not_found", "invalid_argument", "denied"}


def test_read_only_hides_and_refuses_the_write_tools(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent", policy=Policy(read_only=True))
    offered = [t.name for t in tools.tools()]
    changing = [*WRITES, "workspace_index_content", "execute_command"]
    assert offered == [name for name in NAMES if name not in changing]
    assert error(tools, "write_file", path="/x.txt", content="x")[0] == "read_only"
    args = {"path": "/garden/beds.txt", "old_string": "sun", "new_string": "rain"}
    assert error(tools, "edit_file", **args)[0] == "read_only"
    assert error(tools, "delete_file", path="/garden/beds.txt")[0] == "read_only"
    assert not ws.exists("/x.txt") and ws.read("/garden/beds.txt") == GARDEN.encode()


def test_the_policy_of_the_ruling_tools_holds(ws: agentfs.Workspace) -> None:
    policy = Policy(defaults=ToolPolicy(deny=["/private/**"]))
    tools = Toolset(ws, profile="voltagent", policy=policy)
    assert error(tools, "read_file", path="/private/keys.txt")[0] == "denied"
    assert error(tools, "write_file", path="/private/new.txt", content="x")[0] == "denied"
    assert call(tools, "grep", pattern="gate")[0]["files"] == []
    assert "/private/keys.txt" not in [
        m["path"] for m in call(tools, "glob", pattern="**")[0]["matches"]
    ]
    assert not ws.exists("/private/new.txt")

    off = Policy(tools={"grep": ToolPolicy(enabled=False)})
    tools = Toolset(ws, profile="voltagent", policy=off)
    assert "grep" not in [t.name for t in tools.tools()]
    assert error(tools, "grep", pattern="sun")[0] == "denied"

    # read before write: the profile's read_file is the read the write needs
    strict = Policy(defaults=ToolPolicy(require_read_before_write=True))
    tools = Toolset(ws, profile="voltagent", policy=strict)
    args = {"path": "/garden/beds.txt", "old_string": "sun", "new_string": "rain"}
    assert error(tools, "edit_file", **args)[0] == "read_required"
    call(tools, "read_file", path="/garden/beds.txt")
    call(tools, "edit_file", **args)
    ws.write("/garden/beds.txt", "changed meanwhile\n")
    args = {"path": "/garden/beds.txt", "old_string": "changed", "new_string": "x"}
    assert error(tools, "edit_file", **args)[0] == "stale_read"


def test_execute_command_needs_approval(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent")
    assert error(tools, "execute_command", command="ls")[0] == "approval_denied"


@pytest.mark.skipif(NO_MOUNT is not None, reason=f"no FUSE mount here: {NO_MOUNT}")
def test_execute_command_names_its_result_fields_in_camel_case(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="voltagent", approve=lambda request: True)
    data, text = call(tools, "execute_command", command="wc -l < garden/beds.txt; echo no >&2")
    assert data["stdout"].strip() == "3" and data["stderr"] == "no\n"
    assert data["exitCode"] == 0 and not data["timedOut"] and not data["aborted"]
    assert isinstance(data["durationMs"], int)
    assert not data["stdoutTruncated"] and not data["stderrTruncated"]
    assert "exit_code" not in data and data["snapshot"]
    assert "exit code 0" in text
    data = call(tools, "execute_command", command="sleep 5", timeout_ms=200)[0]
    assert data["timedOut"]


def test_calls_are_audited_under_the_profiles_names(ws: agentfs.Workspace) -> None:
    with Toolset(ws, profile="voltagent") as tools:
        call(tools, "read_file", path="/garden/beds.txt")
        call(tools, "list_files", path="/")
        call(tools, "workspace_search", query="mint")
        error(tools, "ls", path="garden")
    for name in ["read_file", "list_tree", "workspace_search", "ls"]:
        assert len(ws.tool_calls.list(name=name)) == 1, name
    # recorded as the profile's names, not the alias
    assert not ws.tool_calls.list(name="list_files")


@pytest.mark.anyio
async def test_served_over_mcp_under_its_names(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.close()
    with anyio.fail_after(60):
        async with served(tmp_path / "ws.db", "voltagent") as session:
            listed = (await session.list_tools()).tools
            assert [t.name for t in listed] == NAMES
            schema = {t.name: t.input_schema for t in listed}
            assert schema["ls"]["required"] == ["path"]
            assert schema["workspace_search"]["properties"]["mode"]["default"] == "hybrid"
            assert set(schema["grep"]["properties"]) == {"pattern", "path", "glob"}
            got = await session.call_tool("workspace_search", {"query": "basil"})
            hit = got.structured_content["hits"][0]  # type: ignore[index]
            assert hit["path"] == "/garden/beds.txt" and "lineRange" in hit
            out = await session.call_tool("read_file", {"path": "garden/beds.txt"})
            assert out.is_error and "start with /" in out.content[0].text  # type: ignore[union-attr]
