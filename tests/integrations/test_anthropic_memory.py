"""The memory tool over a workspace answers as the SDK's own ``BetaLocalFilesystemMemoryTool``
does on a directory: the same command sequences, random ones included, give the same texts,
the same errors and the same tree."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.integrations.anthropic.memory import AgentFSMemoryTool, AsyncAgentFSMemoryTool
from agentfs.tools.policy import Policy, ToolPolicy
from tests.trees import host_tree, workspace_tree

Command = dict[str, Any]


def outcome(tool: Any, command: Command) -> tuple[str, str]:
    """What a call gives the model: ("ok", text), ("error", message), or ("crash", type) for
    the exceptions the reference lets escape (the runner shows their repr)."""
    try:
        return "ok", str(tool.call(command))
    except ToolError as exc:
        return "error", str(exc)
    except Exception as exc:
        return "crash", type(exc).__name__


def compare(commands: list[Command]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        reference = BetaLocalFilesystemMemoryTool(base_path=str(Path(tmp) / "ref"))
        with agentfs.open(Path(tmp) / "ws.db") as ws:
            adapter = AgentFSMemoryTool(ws, thread="t")
            for i, command in enumerate(commands):
                want = outcome(reference, command)
                got = outcome(adapter, command)
                if want[0] == "crash":  # the reference fails without a message of its own
                    assert got[0] == "error", (i, command, want, got)
                else:
                    assert got == want, (i, command)
                assert workspace_tree(ws, "/memories") == host_tree(
                    reference.memory_root, "/memories"
                ), (i, command)
            adapter.toolset.flush()
            assert len(ws.tool_calls.list(limit=10_000)) == len(commands)


# --- random sequences ------------------------------------------------------------------------

NAMES = st.sampled_from(["a.md", "notes", "é ü.md", ".hidden"])
SEGMENTS = st.one_of(NAMES, st.sampled_from(["..", ".", ""]))


@st.composite
def memory_paths(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["hot"] * 5 + ["plain"] * 4 + ["odd"] * 1))
    if kind == "hot":  # the same few files, so that commands meet what others made
        return draw(st.sampled_from(["/memories/a.md", "/memories/notes/a.md"]))
    parts = draw(st.lists(NAMES if kind == "plain" else SEGMENTS, min_size=0, max_size=2))
    path = "/memories" + "".join("/" + p for p in parts)
    if kind == "odd":
        path = draw(st.sampled_from([path, path + "/", "/other/a.md", "memories/a.md", path]))
    return path


TEXTS = st.one_of(
    st.sampled_from(
        [
            "",
            "one\n",
            "one\ntwo\nthree\n",
            "a\na\n",
            "no newline",
            "x\r\ny\n",
            "one\ntwo\nthree\nfour\nfive\nsix\nseven\n",
            "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
        ]
    ),
    st.text(alphabet="ab\n é\t", max_size=30),
)
SNIPPETS = st.one_of(
    st.sampled_from(["one", "a", "two\n", "\n", "", "zzz", "é", "four", "five\n", "7"]), TEXTS
)

COMMANDS = st.one_of(
    st.builds(
        lambda p, r: {"command": "view", "path": p, **({"view_range": r} if r else {})},
        memory_paths(),
        st.one_of(
            st.none(),
            st.lists(st.integers(-3, 8), min_size=0, max_size=3),
        ),
    ),
    st.builds(lambda p, t: {"command": "create", "path": p, "file_text": t}, memory_paths(), TEXTS),
    st.builds(
        lambda p, o, n: {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
        memory_paths(),
        SNIPPETS,
        SNIPPETS,
    ),
    st.builds(
        lambda p, line, t: {
            "command": "insert",
            "path": p,
            "insert_line": line,
            "insert_text": t,
        },
        memory_paths(),
        st.integers(-1, 5),
        SNIPPETS,
    ),
    st.builds(lambda p: {"command": "delete", "path": p}, memory_paths()),
    st.builds(
        lambda a, b: {"command": "rename", "old_path": a, "new_path": b},
        memory_paths(),
        memory_paths(),
    ),
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(TEXTS, TEXTS, st.lists(COMMANDS, min_size=1, max_size=14))
def test_random_command_sequences_answer_as_the_reference(
    first: str, second: str, commands: list[Command]
) -> None:
    seeded = [
        {"command": "create", "path": "/memories/a.md", "file_text": first},
        {"command": "create", "path": "/memories/notes/a.md", "file_text": second},
    ]
    compare(seeded + commands)


# --- named cases -------------------------------------------------------------------------------


def test_a_session_of_every_command_and_error() -> None:
    compare(
        [
            {"command": "view", "path": "/memories"},
            {"command": "create", "path": "/memories/notes/todo.md", "file_text": "a\nb\nc\n"},
            {"command": "create", "path": "/memories/notes/todo.md", "file_text": "again"},
            {"command": "create", "path": "/memories/big.md", "file_text": "x" * 3000},
            {"command": "view", "path": "/memories"},
            {"command": "view", "path": "/memories/notes/todo.md", "view_range": [2, -1]},
            {"command": "view", "path": "/memories/notes/todo.md", "view_range": [0, 99]},
            {"command": "view", "path": "/memories/missing.md"},
            {"command": "view", "path": "/tmp/x"},
            {"command": "view", "path": "/memories/../etc/passwd"},
            {
                "command": "str_replace",
                "path": "/memories/notes/todo.md",
                "old_str": "b",
                "new_str": "B",
            },
            {
                "command": "str_replace",
                "path": "/memories/notes/todo.md",
                "old_str": "q",
                "new_str": "B",
            },
            {"command": "create", "path": "/memories/dup.md", "file_text": "x\nx\n"},
            {"command": "str_replace", "path": "/memories/dup.md", "old_str": "x", "new_str": "y"},
            {"command": "str_replace", "path": "/memories/notes", "old_str": "x", "new_str": "y"},
            {
                "command": "insert",
                "path": "/memories/notes/todo.md",
                "insert_line": 1,
                "insert_text": "inserted\n",
            },
            {
                "command": "insert",
                "path": "/memories/notes/todo.md",
                "insert_line": 9,
                "insert_text": "no",
            },
            {
                "command": "rename",
                "old_path": "/memories/dup.md",
                "new_path": "/memories/notes/todo.md",
            },
            {
                "command": "rename",
                "old_path": "/memories/gone.md",
                "new_path": "/memories/new/place.md",
            },
            {
                "command": "rename",
                "old_path": "/memories/notes",
                "new_path": "/memories/archive/notes",
            },
            {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
            {"command": "delete", "path": "/memories"},
            {"command": "delete", "path": "/memories/archive"},
            {"command": "delete", "path": "/memories/archive"},
            {"command": "view", "path": "/memories"},
        ]
    )


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        yield opened


def test_the_memories_are_workspace_files_audited_and_versioned(ws: agentfs.Workspace) -> None:
    tool = AgentFSMemoryTool(ws, thread="chat")
    tool.call({"command": "create", "path": "/memories/me.md", "file_text": "likes tea\n"})
    tool.call(
        {"command": "str_replace", "path": "/memories/me.md", "old_str": "tea", "new_str": "coffee"}
    )
    tool.toolset.flush()
    assert ws.read_text("/memories/me.md") == "likes coffee\n"
    assert [v.n for v in ws.history("/memories/me.md")] == [1, 2]
    writer = ws.tool_calls.writer("/memories/me.md", 2)
    assert writer is not None and writer.name == "memory_str_replace"
    assert ws.version("/memories/me.md").thread == "chat"
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}


def test_the_operators_policy_rules_the_memory_tool(ws: agentfs.Workspace) -> None:
    ws.write("/memories/secret/key.md", "k\n", parents=True)
    policy = Policy(
        defaults=ToolPolicy(deny=["/memories/secret/**"]),
        tools={"delete_file": ToolPolicy(enabled=False)},
    )
    tool = AgentFSMemoryTool(ws, policy=policy)
    with pytest.raises(ToolError, match="does not let memory_view read"):
        tool.call({"command": "view", "path": "/memories/secret/key.md"})
    listing = str(tool.call({"command": "view", "path": "/memories"}))
    assert "secret/" in listing and "key.md" not in listing
    with pytest.raises(ToolError, match="disabled"):
        tool.call({"command": "delete", "path": "/memories/secret"})
    assert ws.exists("/memories/secret/key.md")
    reader = AgentFSMemoryTool(ws, policy=Policy(read_only=True))
    with pytest.raises(ToolError, match="read-only"):
        reader.call({"command": "create", "path": "/memories/n.md", "file_text": "x"})


def test_the_async_tool_runs_in_place(ws: agentfs.Workspace) -> None:
    import asyncio

    tool = AsyncAgentFSMemoryTool(ws)

    async def session() -> str:
        await tool.call({"command": "create", "path": "/memories/a.md", "file_text": "hi\n"})
        return str(await tool.call({"command": "view", "path": "/memories/a.md"}))

    assert asyncio.run(session()) == (
        "Here's the content of /memories/a.md with line numbers:\n     1\thi\n     2\t"
    )
    assert asyncio.run(tool.clear_all_memory()) == "All memory cleared"
    assert ws.listdir("/memories") == []
