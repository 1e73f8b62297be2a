"""An untrusted agent against the framework adapters: every argument a framework passes is
the agent's (paths, contents, diffs, ranges), and the workspace may hold links it made
through a command. The operator's policy (deny and allow globs, limits) must hold through
every adapter operation, and a refused operation must change nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents.editor import ApplyPatchOperation
from anthropic.lib.tools import ToolError

import agentfs
from agentfs.integrations.anthropic import (
    AgentFSMemoryTool,
    AgentFSTextEditorTool,
    agent_toolset,
)
from agentfs.integrations.deepagents import AgentFSBackend
from agentfs.integrations.langchain import tools as langchain_tools
from agentfs.integrations.openai_agents import AgentFSEditor
from agentfs.tools import Policy
from agentfs.tools.policy import Limits, ToolPolicy

DENY = Policy(defaults=ToolPolicy(deny=["/secrets/**"]))


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        opened.write("/secrets/key", "TOPSECRET\n", parents=True)
        opened.write("/src/a.txt", "alpha\n", parents=True)
        yield opened


def _op(kind: Any, path: str, diff: str | None = None, move_to: str | None = None) -> Any:
    return ApplyPatchOperation(type=kind, path=path, diff=diff, move_to=move_to)


def _anthropic(ws: agentfs.Workspace, policy: Policy) -> dict[str, Any]:
    return {t.to_dict()["name"]: t for t in agent_toolset(ws, policy=policy)}


def _refused(call: Any) -> str:
    with pytest.raises(ToolError) as raised:
        call()
    return str(raised.value)


# --- holes that were open ---------------------------------------------------------------------


def test_deepagents_writes_keep_max_write_bytes(ws: agentfs.Workspace) -> None:
    backend = AgentFSBackend(ws, policy=Policy(limits=Limits(max_write_bytes=10)))
    assert "10-byte limit" in (backend.write("/big.txt", "x" * 11).error or "")
    assert "10-byte limit" in (backend.edit("/src/a.txt", "alpha", "a" * 20).error or "")
    assert backend.upload_files([("/up.bin", b"y" * 11)])[0].error == "permission_denied"
    assert not ws.exists("/big.txt") and not ws.exists("/up.bin")
    assert ws.read("/src/a.txt") == b"alpha\n"
    assert backend.write("/ok.txt", "x" * 10).error is None


def test_deepagents_reads_keep_max_read_bytes(ws: agentfs.Workspace) -> None:
    ws.write("/long.txt", "".join(f"line {n}\n" for n in range(100)))
    backend = AgentFSBackend(ws, policy=Policy(limits=Limits(max_read_bytes=64)))
    assert "64-byte limit" in (backend.read("/long.txt").error or "")
    assert backend.download_files(["/long.txt"])[0].error == "permission_denied"
    window = backend.read("/long.txt", offset=0, limit=3)
    assert window.error is None and window.file_data is not None
    assert window.file_data["content"] == "line 0\nline 1\nline 2\n"


def test_anthropic_reads_keep_max_read_bytes(ws: agentfs.Workspace) -> None:
    text = "".join(f"line {n}\n" for n in range(100))
    ws.write("/long.txt", text)
    ws.write("/memories/long.md", text, parents=True)
    policy = Policy(limits=Limits(max_read_bytes=64))
    read = _anthropic(ws, policy)["read"]
    assert "64-byte limit" in _refused(lambda: read.call({"file_path": "/long.txt"}))
    assert read.call({"file_path": "/long.txt", "view_range": [1, 2]}) == "line 0\nline 1"
    editor = AgentFSTextEditorTool(ws, policy=policy)
    assert "64-byte limit" in _refused(
        lambda: editor.call({"command": "view", "path": "/long.txt"})
    )
    assert "line 1" in str(
        editor.call({"command": "view", "path": "/long.txt", "view_range": [1, 2]})
    )
    memory = AgentFSMemoryTool(ws, policy=policy)
    assert "64-byte limit" in _refused(
        lambda: memory.call({"command": "view", "path": "/memories/long.md"})
    )


def test_apply_patch_move_of_a_relative_link_writes_no_denied_file(ws: agentfs.Workspace) -> None:
    # /a/link -> "key" is /a/key where it stands; moved to /b it would lead to /b/key
    ws.write("/a/key", "allowed\n", parents=True)
    ws.symlink("key", "/a/link")
    ws.write("/b/key", "denied\n", parents=True)
    editor = AgentFSEditor(ws, policy=Policy(defaults=ToolPolicy(deny=["/b/key"])))
    editor.update_file(_op("update_file", "/a/link", "@@\n-allowed\n+PWNED", move_to="/b/link"))
    assert ws.read("/b/key") == b"denied\n"
    assert ws.read("/a/key") == b"allowed\n"


def test_memory_rename_puts_nothing_under_a_denied_subtree(ws: agentfs.Workspace) -> None:
    ws.write("/memories/notes/a.md", "A\n", parents=True)
    policy = Policy(defaults=ToolPolicy(deny=["/memories/private/**"]))
    memory = AgentFSMemoryTool(ws, policy=policy)
    message = _refused(
        lambda: memory.call(
            {"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/private"}
        )
    )
    assert "deny '/memories/private/**'" in message
    assert ws.read("/memories/notes/a.md") == b"A\n" and not ws.exists("/memories/private")


def test_function_tools_move_and_copy_nothing_under_a_denied_subtree(
    ws: agentfs.Workspace,
) -> None:
    policy = Policy(defaults=ToolPolicy(deny=["/private/**", "/private2/**"]))
    tools = {t.name: t for t in langchain_tools(ws, policy=policy)}
    tools["copy_file"].invoke({"source": "/src", "destination": "/private", "recursive": True})
    tools["move_file"].invoke({"source": "/src", "destination": "/private2"})
    assert not ws.exists("/private/a.txt") and not ws.exists("/private2/a.txt")


# --- attacks that are refused -----------------------------------------------------------------


def test_links_to_a_denied_file_lead_nowhere_through_any_adapter(ws: agentfs.Workspace) -> None:
    ws.symlink("/secrets/key", "/src/soft")
    ws.symlink("/secrets", "/src/dir")
    ws.link("/secrets/key", "/src/hard")
    backend = AgentFSBackend(ws, policy=DENY)
    tools = _anthropic(ws, DENY)
    editor = AgentFSTextEditorTool(ws, policy=DENY)
    patcher = AgentFSEditor(ws, policy=DENY)
    for path in ("/src/soft", "/src/dir/key", "/src/hard"):
        assert backend.read(path).error
        assert backend.download_files([path])[0].error == "permission_denied"
        assert backend.write(path, "x").error and backend.edit(path, "TOP", "x").error
        assert backend.delete(path).error
        assert "TOPSECRET" not in _refused(lambda p=path: tools["read"].call({"file_path": p}))
        _refused(
            lambda p=path: tools["edit"].call(
                {"file_path": p, "old_string": "T", "new_string": "x"}
            )
        )
        _refused(lambda p=path: editor.call({"command": "view", "path": p}))
        assert (
            patcher.update_file(_op("update_file", path, "@@\n-TOPSECRET\n+x")).status == "failed"
        )
        assert patcher.delete_file(_op("delete_file", path)).status == "failed"
    shown = [str(backend.grep("TOPSECRET")), str(backend.grep("TOPSECRET", "/src"))]
    shown += [str(backend.glob("**")), str(backend.ls("/src"))]
    shown += [tools["grep"].call({"pattern": "TOP"}), tools["glob"].call({"pattern": "**/*"})]
    shown.append(str(editor.call({"command": "view", "path": "/src"})))
    assert not any("TOPSECRET" in s or "soft" in s or "hard" in s for s in shown)
    assert ws.read("/secrets/key") == b"TOPSECRET\n"


def test_a_dangling_link_creates_no_denied_file(ws: agentfs.Workspace) -> None:
    ws.symlink("/secrets/new", "/src/dangling")
    ws.mkdir("/memories")
    ws.symlink("/secrets/new", "/memories/dangling")
    backend = AgentFSBackend(ws, policy=DENY)
    assert backend.write("/src/dangling", "x").error
    assert backend.upload_files([("/src/dangling", b"x")])[0].error == "permission_denied"
    _refused(
        lambda: _anthropic(ws, DENY)["write"].call({"file_path": "/src/dangling", "content": "x"})
    )
    editor = AgentFSTextEditorTool(ws, policy=DENY)
    _refused(lambda: editor.call({"command": "create", "path": "/src/dangling", "file_text": "x"}))
    patcher = AgentFSEditor(ws, policy=DENY)
    assert patcher.create_file(_op("create_file", "/src/dangling", "+x")).status == "failed"
    memory = AgentFSMemoryTool(ws)  # no policy: /memories itself is the boundary
    assert "escape" in _refused(
        lambda: memory.call({"command": "create", "path": "/memories/dangling", "file_text": "x"})
    )
    assert ws.listdir("/secrets") == ["key"]


def test_the_memory_tool_stays_in_memories(ws: agentfs.Workspace) -> None:
    ws.write("/memories/a.md", "a\n", parents=True)
    ws.symlink("/secrets", "/memories/out")
    memory = AgentFSMemoryTool(ws)
    for path in ("/memories/../secrets/key", "/memories/out/key", "/memories//..//secrets/key"):
        assert "escape" in _refused(lambda p=path: memory.call({"command": "view", "path": p}))
    _refused(
        lambda: memory.call(
            {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/out/a.md"}
        )
    )
    _refused(lambda: memory.call({"command": "delete", "path": "/memories/out/key"}))
    assert "TOPSECRET" not in str(memory.call({"command": "view", "path": "/memories"}))
    assert ws.read("/secrets/key") == b"TOPSECRET\n" and ws.exists("/memories/a.md")


def test_spellings_of_a_denied_path_are_denied(ws: agentfs.Workspace) -> None:
    backend = AgentFSBackend(ws, policy=DENY)
    editor = AgentFSTextEditorTool(ws, policy=DENY)
    patcher = AgentFSEditor(ws, policy=DENY)
    for path in (
        "/secrets//key",
        "/./secrets/key",
        "secrets/key",
        "/SECRETS/key",
        "/\uff53\uff45\uff43\uff52\uff45\uff54\uff53/k",
    ):
        assert backend.write(path, "x").error
        _refused(
            lambda p=path: editor.call(
                {"command": "create", "path": "/" + p.lstrip("/"), "file_text": "x"}
            )
        )
        assert patcher.create_file(_op("create_file", path, "+x")).status == "failed"
    assert (
        patcher.update_file(_op("update_file", "/src/../secrets/key", "@@\n-TOPSECRET\n+x")).status
        == "failed"
    )
    assert ws.listdir("/") == ["secrets", "src"] and ws.listdir("/secrets") == ["key"]


def test_apply_patch_moves_neither_out_of_nor_onto_a_denied_file(ws: agentfs.Workspace) -> None:
    ws.link("/secrets/key", "/src/alias")
    patcher = AgentFSEditor(ws, policy=DENY)
    out = patcher.update_file(_op("update_file", "/secrets/key", "", move_to="/src/stolen"))
    onto = patcher.update_file(_op("update_file", "/src/a.txt", "", move_to="/src/alias"))
    assert out.status == onto.status == "failed"
    assert not ws.exists("/src/stolen") and ws.read("/src/alias") == b"TOPSECRET\n"
    assert ws.read("/src/a.txt") == b"alpha\n"


def test_a_failed_move_with_a_bad_diff_changes_nothing(ws: agentfs.Workspace) -> None:
    patcher = AgentFSEditor(ws)
    failed = patcher.update_file(_op("update_file", "/src/a.txt", "@@\n-nothere\n+x", "/new/b.txt"))
    assert failed.status == "failed"
    assert ws.read("/src/a.txt") == b"alpha\n" and not ws.exists("/new")


def test_deleting_a_directory_that_holds_a_denied_file_deletes_nothing(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/memories/keep/secret.md", "s\n", parents=True)
    ws.write("/memories/keep/other.md", "o\n")
    backend = AgentFSBackend(ws, policy=DENY)
    assert backend.delete("/").error and backend.delete("/secrets").error
    policy = Policy(defaults=ToolPolicy(deny=["**/secret.md"]))
    memory = AgentFSMemoryTool(ws, policy=policy)
    _refused(lambda: memory.call({"command": "delete", "path": "/memories/keep"}))
    _refused(lambda: memory.clear_all_memory())
    assert ws.exists("/memories/keep/other.md") and ws.exists("/src/a.txt")
    assert ws.exists("/secrets/key")
