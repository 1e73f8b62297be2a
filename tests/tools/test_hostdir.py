"""``workspace_changes`` and ``workspace_apply``: offered over a workspace with a base
directory only; apply disabled unless the policy's own entry enables it, then approved first;
the policy's path rules hold for both."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentfs
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import ToolPolicy
from tests.tools.calling import call, error

ENABLED = Policy(tools={"workspace_apply": ToolPolicy(enabled=True)})


@pytest.fixture
def host(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("app\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("key\n")
    return root


@pytest.fixture
def ws(tmp_path: Path, host: Path) -> agentfs.Workspace:
    workspace = agentfs.open(tmp_path / "ws.db", base=host)
    workspace.write("/src/app.py", "app v2\n")
    workspace.write("/secrets/key.txt", "leaked\n")
    yield workspace
    workspace.close()


def names(tools: Toolset) -> set[str]:
    return {spec.name for spec in tools.tools()}


def test_offered_only_over_a_base_and_apply_only_when_the_policy_says(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    with agentfs.open(tmp_path / "plain.db") as plain:
        assert not names(Toolset(plain)) & {"workspace_changes", "workspace_apply"}
        assert error(Toolset(plain), "workspace_changes")[0] == "unsupported"
    assert "workspace_changes" in names(Toolset(ws))
    assert "workspace_apply" not in names(Toolset(ws))  # off by default
    defaults_on = Policy(defaults=ToolPolicy(enabled=True))
    assert "workspace_apply" not in names(Toolset(ws, policy=defaults_on))  # its own entry only
    tools = Toolset(ws, policy=ENABLED)
    assert "workspace_apply" in names(tools) and tools.needs_approval("workspace_apply")
    assert error(Toolset(ws), "workspace_apply")[0] == "denied"


def test_changes_lists_and_patches(ws: agentfs.Workspace) -> None:
    data, text = call(Toolset(ws), "workspace_changes", patch=True)
    assert [(c["kind"], c["path"]) for c in data["changes"]] == [
        ("modified", "/secrets/key.txt"),
        ("modified", "/src/app.py"),
    ]
    assert "-app\n+app v2\n" in data["patch"] and text.startswith("M /secrets/key.txt (+1 -1)")


def test_apply_needs_approval_then_writes(ws: agentfs.Workspace, host: Path) -> None:
    assert error(Toolset(ws, policy=ENABLED), "workspace_apply")[0] == "approval_denied"
    assert (host / "src" / "app.py").read_text() == "app\n"
    tools = Toolset(ws, policy=ENABLED, approve=lambda _call: True)
    data, _ = call(tools, "workspace_apply", paths=["/src"])
    assert (data["written"], data["conflicts"]) == (["/src/app.py"], [])
    assert (host / "src" / "app.py").read_text() == "app v2\n"
    assert (host / "secrets" / "key.txt").read_text() == "key\n"  # not asked for


def test_a_host_change_stops_the_apply(ws: agentfs.Workspace, host: Path) -> None:
    (host / "src" / "app.py").write_text("the user's\n")
    tools = Toolset(ws, policy=ENABLED, approve=lambda _call: True)
    data, text = call(tools, "workspace_apply")
    assert data["conflicts"] == [
        {"path": "/src/app.py", "reason": "changed on the host since the workspace read it"}
    ]
    assert "Nothing was written" in text
    assert (host / "secrets" / "key.txt").read_text() == "key\n"


def test_the_policys_paths_hold(ws: agentfs.Workspace, host: Path) -> None:
    deny = Policy(
        defaults=ToolPolicy(deny=["/secrets/**"]),
        tools={"workspace_apply": ToolPolicy(enabled=True, deny=["/secrets/**"])},
    )
    tools = Toolset(ws, policy=deny, approve=lambda _call: True)
    listed, _ = call(tools, "workspace_changes")
    assert [c["path"] for c in listed["changes"]] == ["/src/app.py"]
    applied, _ = call(tools, "workspace_apply")
    assert applied["written"] == ["/src/app.py"]
    assert applied["skipped"] == []  # left out without being named: the policy hides it
    assert (host / "secrets" / "key.txt").read_text() == "key\n"
