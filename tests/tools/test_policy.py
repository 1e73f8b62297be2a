"""Policies through ``Toolset.call``: approval, read-only, allow and deny globs against ``..``,
symlinks and case tricks, read-before-write, per-tool settings, limits, policy files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agentfs
from agentfs.tools import Limits, Policy, ToolPolicy, Toolset, catalog
from agentfs.tools.policy import OFF_UNLESS_ENABLED
from agentfs.tools.toolset import ToolCallRequest

MUTATING = {spec.name for spec in catalog.all_tools() if spec.mutates}


@pytest.fixture
def project(ws: agentfs.Workspace) -> agentfs.Workspace:
    ws.write("/src/app.py", "print('hi')\n", parents=True)
    ws.write("/secrets/key.txt", "hunter2\n", parents=True)
    ws.write("/.env", "TOKEN=abc\n")
    ws.symlink("/secrets", "/src/innocent")
    return ws


def snapshot_bytes(ws: agentfs.Workspace) -> tuple[dict[str, bytes], list[Any]]:
    """Every file's bytes and every version row: what "byte-identical" compares."""
    files = {
        f"{d.rstrip('/')}/{n}": ws.read(f"{d.rstrip('/')}/{n}", track=False)
        for d, _, names in ws.walk("/")
        for n in names
        if ws.lstat(f"{d.rstrip('/')}/{n}").type == "file"
    }
    versions = ws.conn.execute("SELECT * FROM ws_version ORDER BY 1, 2").fetchall()
    return files, versions


def denying(*globs: str, **tool_settings: ToolPolicy) -> Policy:
    return Policy(defaults=ToolPolicy(deny=list(globs)), tools=tool_settings)


def test_a_denied_approval_changes_nothing(project: agentfs.Workspace) -> None:
    asked: list[ToolCallRequest] = []

    def refuse(request: ToolCallRequest) -> bool:
        asked.append(request)
        return False

    policy = Policy(defaults=ToolPolicy(needs_approval=True))
    tools = Toolset(project, thread="t1", actor="bot", policy=policy, approve=refuse)
    before = snapshot_bytes(project)
    calls = [
        ("write_file", {"path": "/src/app.py", "content": "x", "overwrite": True}),
        ("delete_file", {"path": "/src/app.py"}),
        ("apply_patch", {"patch": "*** Begin Patch\n*** Delete File: src/app.py\n*** End Patch"}),
        ("snapshot_restore", {"name": "none"}),
        ("kv_set", {"key": "k", "value": 1}),
    ]
    for name, args in calls:
        result = tools.call(name, args)
        assert result["error"]["code"] == "approval_denied", result
        assert "nothing was changed" in result["error"]["message"]
    assert snapshot_bytes(project) == before
    assert project.kv.list() == []
    assert [(r.tool, r.thread, r.actor) for r in asked][:2] == [
        ("write_file", "t1", "bot"),
        ("delete_file", "t1", "bot"),
    ]
    tools.flush()
    refused = [c for c in project.tool_calls.list() if c.error is not None]
    assert len(refused) == len(calls)  # a denied call is recorded


def test_approval_granted_or_failing(project: agentfs.Workspace) -> None:
    policy = Policy(tools={"delete_file": ToolPolicy(needs_approval=True)})
    granted = Toolset(project, policy=policy, approve=lambda request: True)
    assert "error" not in granted.call("delete_file", {"path": "/.env"})

    def broken(request: ToolCallRequest) -> bool:
        raise RuntimeError("the approval UI crashed")

    failing = Toolset(project, policy=policy, approve=broken)
    result = failing.call("delete_file", {"path": "/src/app.py"})
    assert result["error"]["code"] == "approval_denied" and "crashed" in result["error"]["message"]
    no_callback = Toolset(project, policy=policy)
    assert no_callback.call("delete_file", {"path": "/src/app.py"})["error"]["code"] == (
        "approval_denied"
    )
    assert project.exists("/src/app.py")
    assert not no_callback.needs_approval("read_file") and no_callback.needs_approval("delete_file")


def test_read_only_lists_no_mutating_tool_and_refuses_them(project: agentfs.Workspace) -> None:
    tools = Toolset(project, policy=Policy(read_only=True))
    offered = {t.name for t in tools.tools()}
    assert offered and not offered & MUTATING
    assert {t["function"]["name"] for t in tools.openai_tools()} == offered
    assert {t["name"] for t in tools.anthropic_tools()} == offered
    before = snapshot_bytes(project)
    for name in sorted(MUTATING):
        # a tool off unless its own entry enables it is refused as disabled first
        refusal = "denied" if name in OFF_UNLESS_ENABLED else "read_only"
        assert tools.call(name, {})["error"]["code"] == refusal, name
    assert snapshot_bytes(project) == before
    assert "print" in tools.call("read_file", {"path": "/src/app.py"})["content"]


@pytest.mark.parametrize(
    "path",
    [
        "/secrets/key.txt",
        "secrets/key.txt",
        "/src/../secrets/key.txt",
        "/../../secrets/key.txt",
        "/SECRETS/key.txt",
        "/src/innocent/key.txt",  # a symlink into the denied tree
        "/\uff53\uff45\uff43\uff52\uff45\uff54\uff53/key.txt",  # fullwidth, NFKC: /secrets
    ],
)
def test_deny_globs_hold_against_tricks(project: agentfs.Workspace, path: str) -> None:
    tools = Toolset(project, policy=denying("/secrets/**"))
    for name, args in [
        ("read_file", {"path": path}),
        ("write_file", {"path": path, "content": "x", "overwrite": True}),
        ("stat", {"path": path}),
        ("delete_file", {"path": path}),
    ]:
        result = tools.call(name, args)
        assert result["error"]["code"] == "denied", (name, result)
    assert project.read("/secrets/key.txt") == b"hunter2\n"


def test_a_move_or_copy_makes_no_name_under_a_denied_subtree(project: agentfs.Workspace) -> None:
    """``/private/**`` does not match ``/private`` itself: a directory moved or copied there
    passes the check of its new name and would put every file it holds under the rule. Each
    name the operation makes is judged; a refusal undoes the whole call."""
    tools = Toolset(project, policy=denying("/private/**", "/held/**"))
    before = snapshot_bytes(project)
    for name, args in [
        ("copy_file", {"source": "/src", "destination": "/private", "recursive": True}),
        ("move_file", {"source": "/src", "destination": "/held"}),
    ]:
        result = tools.call(name, args)
        assert result["error"]["code"] == "denied", (name, result)
    assert not project.exists("/private") and not project.exists("/held")
    assert snapshot_bytes(project) == before
    moved = tools.call("move_file", {"source": "/src", "destination": "/elsewhere/src"})
    assert "error" not in moved and project.exists("/elsewhere/src/app.py")


def test_a_write_makes_no_denied_directory_above_it(project: agentfs.Workspace) -> None:
    """``/made`` is denied but ``/made/x.txt`` matches no rule: a write that would create the
    missing directory ``/made`` on its way is refused, and nothing is made."""
    tools = Toolset(project, policy=denying("/made", "/deep/er"))
    for name, args in [
        ("write_file", {"path": "/made/x.txt", "content": "x", "create_parent_dirs": True}),
        ("create_file", {"path": "/made/x.txt"}),
        ("mkdir", {"path": "/deep/er/still"}),
        ("copy_file", {"source": "/src/app.py", "destination": "/made/app.py"}),
    ]:
        assert tools.call(name, args)["error"]["code"] == "denied", name
    assert not project.exists("/made") and not project.exists("/deep")
    assert "error" not in tools.call("mkdir", {"path": "/deep/ok"})  # /deep itself is allowed


def test_denied_files_never_show_in_listings_or_searches(project: agentfs.Workspace) -> None:
    tools = Toolset(project, policy=denying("/secrets/**", "**/.env"))
    shown = json.dumps(
        [
            tools.call("ls", {"path": "/"}),
            tools.call("list_tree", {}),
            tools.call("glob", {"pattern": "**/*"}),
            tools.call("grep", {"pattern": "hunter2|TOKEN", "output_mode": "content"}),
            tools.call("search_files", {"pattern": "key"}),
            tools.call("workspace_search", {"query": "hunter2 TOKEN"}),
        ]
    )
    assert "hunter2" not in shown and "key.txt" not in shown and "TOKEN" not in shown
    moved = tools.call("move_file", {"source": "/src", "destination": "/elsewhere"})
    assert "error" not in moved  # the symlink moves; what it points at stays denied
    recursive = tools.call(
        "copy_file", {"source": "/secrets", "destination": "/x", "recursive": True}
    )
    assert recursive["error"]["code"] == "denied"


def test_allow_lists_confine_a_tool(project: agentfs.Workspace) -> None:
    policy = Policy(tools={"write_file": ToolPolicy(allow=["/src/**"])})
    tools = Toolset(project, policy=policy)
    assert "error" not in tools.call("write_file", {"path": "/src/new.py", "content": "x"})
    assert tools.call("write_file", {"path": "/top.txt", "content": "x"})["error"]["code"] == (
        "denied"
    )
    # a symlink inside the allowed tree that leads out of it leads nowhere
    escaped = tools.call("write_file", {"path": "/src/innocent/new.txt", "content": "x"})
    assert escaped["error"]["code"] == "denied"
    assert not project.exists("/secrets/new.txt")
    assert "error" not in tools.call("read_file", {"path": "/.env"})  # other tools unaffected


def test_require_read_before_write(project: agentfs.Workspace) -> None:
    policy = Policy(defaults=ToolPolicy(require_read_before_write=["/src/**"]))
    tools = Toolset(project, thread="t1", policy=policy)
    edit = {"path": "/src/app.py", "old_string": "hi", "new_string": "bye"}
    unread = tools.call("edit_file", edit)
    assert unread["error"]["code"] == "read_required"
    assert "read_file" in unread["error"]["message"]
    tools.call("read_file", {"path": "/src/app.py"})
    project.thread = "other"
    project.write("/src/app.py", "print('changed')\n")
    stale = tools.call("edit_file", {**edit, "old_string": "changed"})
    assert stale["error"]["code"] == "stale_read"
    tools.call("read_file", {"path": "/src/app.py"})
    assert "error" not in tools.call("edit_file", {**edit, "old_string": "changed"})
    # outside the globs, no read is needed
    assert "error" not in tools.call(
        "write_file", {"path": "/.env", "content": "x", "overwrite": True}
    )
    other = Toolset(project, thread="t2", policy=policy)  # another thread has read nothing
    assert (
        other.call("write_file", {"path": "/src/app.py", "content": "x", "overwrite": True})[
            "error"
        ]["code"]
        == "read_required"
    )


def test_disabled_tools_and_a_chosen_subset(project: agentfs.Workspace) -> None:
    policy = Policy(tools={"delete_file": ToolPolicy(enabled=False)})
    tools = Toolset(project, policy=policy)
    assert "delete_file" not in {t.name for t in tools.tools()}
    assert tools.call("delete_file", {"path": "/.env"})["error"]["code"] == "denied"
    subset = Toolset(project, tools=["read_file", "list_files"])
    assert [t.name for t in subset.tools()] == ["list_tree", "read_file"]
    assert subset.call("write_file", {"path": "/x", "content": ""})["error"]["code"] == "denied"
    with pytest.raises(ValueError, match="unknown tools: nope"):
        Toolset(project, tools=["nope"])


def test_limits(project: agentfs.Workspace) -> None:
    tools = Toolset(
        project,
        policy=Policy(limits=Limits(max_write_bytes=10, max_read_bytes=5, max_results=1)),
    )
    big = tools.call("write_file", {"path": "/big.txt", "content": "x" * 11})
    assert big["error"]["code"] == "too_large" and not project.exists("/big.txt")
    grow = tools.call(
        "edit_file", {"path": "/src/app.py", "old_string": "hi", "new_string": "hi" * 9}
    )
    assert grow["error"]["code"] == "too_large"
    assert project.read("/src/app.py") == b"print('hi')\n"
    read = tools.call("read_file", {"path": "/src/app.py"})
    assert read["content"].startswith("     1\t... [line cut at character 0 of 11")  # no byte
    # of the file over the limit
    assert len(tools.call("glob", {"pattern": "**/*"})["matches"]) == 1
    workspace_cap = Toolset(project, policy=Policy(limits=Limits(max_workspace_bytes=4096)))
    full = workspace_cap.call("write_file", {"path": "/f.bin", "content": "y" * 100_000})
    assert full["error"]["code"] == "too_large" and not project.exists("/f.bin")


@pytest.mark.parametrize(("cap", "truncated"), [(2, True), (3, False), (4, False)])
def test_a_filtered_listing_is_cut_at_its_cap_of_visible_entries(
    ws: agentfs.Workspace, cap: int, truncated: bool
) -> None:
    """Denied names are skipped before the cap counts, and the listing says it was cut only
    when a visible entry was left out."""
    for name in ("a", "b.secret", "c", "d.secret", "e", "f.secret"):
        ws.write(f"/dir/{name}", "x", parents=True)
    policy = denying("**/*.secret")
    policy.limits = Limits(max_results=cap)
    listing = Toolset(ws, policy=policy).call("ls", {"path": "/dir"})
    assert [e["name"] for e in listing["entries"]] == ["a", "c", "e"][:cap]
    assert listing["truncated"] is truncated


def test_policy_files(tmp_path: Path) -> None:
    toml = tmp_path / "policy.toml"
    toml.write_text(
        "read_only = false\n[defaults]\ndeny = ['/secrets/**']\n"
        "[tools.delete_file]\nneeds_approval = true\n[limits]\nmax_write_bytes = 1024\n"
    )
    policy = Policy.load(toml)
    assert policy.for_tool("delete_file").needs_approval
    assert policy.for_tool("delete_file").deny == ("/secrets/**",)  # inherited
    assert not policy.for_tool("read_file").needs_approval
    as_json = tmp_path / "policy.json"
    as_json.write_text(policy.model_dump_json())
    assert Policy.load(as_json) == policy
    for text, problem in [
        ("[defaults]\nnope = 1\n", "defaults.nope: extra inputs are not permitted"),
        ("[limits]\nmax_write_bytes = -1\n", "limits.max_write_bytes"),
        ("[defaults]\ndeny = 'not-a-list'\n", "defaults.deny"),
        ("read_only = \n", "not valid toml"),
    ]:
        toml.write_text(text)
        with pytest.raises(ValueError) as raised:
            Policy.load(toml)
        assert str(toml) in str(raised.value) and problem in str(raised.value)
        assert "\n" not in str(raised.value)


def test_commands_limits_come_from_the_policy_with_defaults_for_the_rest() -> None:
    from agentfs.mount.sandbox import Limits as SandboxLimits

    policy = Policy.model_validate({"commands": {"memory_mb": 512, "processes": 64}})
    assert policy.commands.limits() == SandboxLimits(memory_mb=512, processes=64)
    assert Policy().commands.limits() == SandboxLimits()
    assert not Policy().commands.copy_fallback and Policy().commands.sandbox
    for bad in ({"processes": 0}, {"memory_mb": -1}, {"tmp_mb": "lots"}, {"cpu": 5}):
        with pytest.raises(ValueError):
            Policy.model_validate({"commands": bad})


def test_a_denied_file_is_denied_by_every_name(project: agentfs.Workspace) -> None:
    """A hard link is the denied file under another name: every route refuses it or leaves it
    out, its content and that name alike, and a write through it is refused; a file with one
    name is judged by that name."""
    project.link("/secrets/key.txt", "/src/hard.txt")
    project.snapshots.create("before")
    project.write("/secrets/key.txt", "hunter3\n")
    tools = Toolset(project, policy=denying("/secrets/**"))
    patch = "--- a/src/hard.txt\n+++ b/src/hard.txt\n@@ -1 +1 @@\n-hunter3\n+x\n"
    refused = {
        "read_file": {"path": "/src/hard.txt"},
        "stat": {"path": "/src/hard.txt"},
        "write_file": {"path": "/src/hard.txt", "content": "x", "overwrite": True},
        "edit_file": {"path": "/src/hard.txt", "old_string": "hunter", "new_string": "x"},
        "multi_edit": {
            "path": "/src/hard.txt",
            "edits": [{"old_string": "hunterX", "new_string": "x"}],
        },
        "delete_file": {"path": "/src/hard.txt"},
        "move_file": {"source": "/src/hard.txt", "destination": "/src/moved.txt"},
        "copy_file": {"source": "/src/hard.txt", "destination": "/src/copy.txt"},
        "copy_file (its directory)": {
            "source": "/src",
            "destination": "/src2",
            "recursive": True,
        },
        "file_history": {"path": "/src/hard.txt"},
        "file_diff": {"path": "/src/hard.txt", "a": 1},
        "restore_version": {"path": "/src/hard.txt", "version": 1},
        "apply_patch": {"patch": patch},
    }
    for route, args in refused.items():
        result = tools.call(route.split(" ")[0], args)
        assert result.get("error", {}).get("code") == "denied", (route, result)
    quiet = [
        tools.call("ls", {"path": "/src"}),
        tools.call("list_tree", {}),
        tools.call("glob", {"pattern": "**/*"}),
        tools.call("grep", {"pattern": "hunter", "output_mode": "content"}),
        tools.call("search_files", {"pattern": "hunter", "content_search": True}),
        tools.call("search_files", {"pattern": "hard"}),
        tools.call("workspace_search", {"query": "hunter3"}),
        tools.call("snapshot_diff", {"a": "before"}),
    ]
    shown = json.dumps(quiet)
    assert "hunter" not in shown and "hard.txt" not in shown and "key.txt" not in shown, shown
    several = tools.call("read_multiple_files", {"paths": ["/src/hard.txt", "/src/app.py"]})
    assert several["files"][0]["error"]["code"] == "denied" and "hunter" not in json.dumps(several)
    assert project.read("/secrets/key.txt") == b"hunter3\n" and not project.exists("/src2")
    project.remove("/secrets/key.txt")  # one name left, outside the rule: allowed again
    assert tools.call("read_file", {"path": "/src/hard.txt"})["content"].endswith("hunter3")


def test_a_write_through_a_name_needs_every_name_allowed(project: agentfs.Workspace) -> None:
    project.write("/other/shared.txt", "shared\n", parents=True)
    project.link("/other/shared.txt", "/src/shared.txt")
    tools = Toolset(project, policy=Policy(tools={"write_file": ToolPolicy(allow=["/src/**"])}))
    args = {"path": "/src/shared.txt", "content": "changed\n", "overwrite": True}
    assert tools.call("write_file", args)["error"]["code"] == "denied"
    assert project.read("/other/shared.txt") == b"shared\n"
    assert "error" not in tools.call("write_file", {"path": "/src/own.txt", "content": "x"})
