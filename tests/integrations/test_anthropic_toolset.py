"""The ``agent_toolset_20260401`` tools over a workspace answer as the SDK's reference
``beta_agent_toolset_20260401(ctx)`` does on a directory (read, write, edit, glob, grep on
random operation sequences), and ``bash`` runs in the mounted workspace."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools.agent_toolset import AgentToolContext, beta_agent_toolset_20260401
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.integrations.anthropic import agent_toolset, async_agent_toolset
from agentfs.tools.policy import Policy, ToolPolicy
from tests.trees import host_tree, workspace_tree

Op = tuple[str, dict[str, Any]]


def reference_outcome(tools: dict[str, Any], op: Op, root: Path) -> tuple[str, str]:
    name, args = op
    try:
        text = str(asyncio.run(tools[name].call(args)))
        kind = "ok"
    except ToolError as exc:
        text, kind = str(exc), "error"
    text = text.replace(str(root) + "/", "/")
    lines = ["/" if line == str(root) else line for line in text.split("\n")]
    return kind, "\n".join(lines)


def outcome(tools: dict[str, Any], op: Op) -> tuple[str, str]:
    name, args = op
    try:
        return "ok", str(tools[name].call(args))
    except ToolError as exc:
        return "error", str(exc)


def unordered(name: str, result: tuple[str, str]) -> tuple[str, Any]:
    """glob's ties and ripgrep's threads order lines as they come: compare them as sets."""
    kind, text = result
    if name in ("glob", "grep") and kind == "ok":
        return kind, sorted(text.split("\n"))
    return kind, text


def compare(ops: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "work").resolve()
        root.mkdir()
        reference = {t.name: t for t in beta_agent_toolset_20260401(AgentToolContext(workdir=root))}
        with agentfs.open(Path(tmp) / "ws.db") as ws:
            adapter = {t.name: t for t in agent_toolset(ws, thread="t")}
            for i, op in enumerate(ops):
                want = unordered(op[0], reference_outcome(reference, op, root))
                got = unordered(op[0], outcome(adapter, op))
                assert got == want, (i, op)
                assert workspace_tree(ws) == host_tree(root), (i, op)


PATHS = st.sampled_from(
    [
        "a.txt",
        "b.py",
        "src/c.py",
        "src/deep/d.md",
        ".hidden/e.txt",
        "é.txt",
        "src",
        "./b.py",
        "src//c.py",
        "a.txt/x",
        "missing.txt",
    ]
)
TEXTS = st.one_of(
    st.sampled_from(["", "one\ntwo\nthree\n", "x = 1\nprint(x)\n", "línea é\n", "aaa", "a\r\nb"]),
    st.text(alphabet="abx\n 1é", max_size=24),
)
SNIPPETS = st.sampled_from(["one", "a", "x", "\n", "two\nthree", "é", "zzz", ""])
RANGES = st.one_of(st.none(), st.lists(st.integers(-2, 5), min_size=0, max_size=3))
GLOBS = st.sampled_from(
    [
        "*",
        "**",
        "**/*.py",
        "src/*",
        "*.txt",
        "src/",
        "**/",
        "?.py",
        "[ab]*",
        "",
        "../x",
        "/abs",
        "a**",
        "src/**",
        "**/*",
        "*/",
        "./*.py",
        "nothing*",
    ]
)
GREPS = st.sampled_from(["a", "^x", "o+", "[0-9]", "é", "e$", "(?i)A", "print", "zz"])
WHERE = st.one_of(st.none(), st.sampled_from(["src", "a.txt", "missing", ".hidden", "."]))

OPS = st.one_of(
    st.tuples(st.just("write"), st.fixed_dictionaries({"file_path": PATHS, "content": TEXTS})),
    st.tuples(
        st.just("edit"),
        st.fixed_dictionaries(
            {"file_path": PATHS, "old_string": SNIPPETS, "new_string": SNIPPETS},
            optional={"replace_all": st.booleans()},
        ),
    ),
    st.tuples(
        st.just("read"),
        st.fixed_dictionaries({"file_path": PATHS}, optional={"view_range": RANGES}),
    ),
    st.tuples(st.just("glob"), st.fixed_dictionaries({"pattern": GLOBS}, optional={"path": WHERE})),
    st.tuples(st.just("grep"), st.fixed_dictionaries({"pattern": GREPS}, optional={"path": WHERE})),
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(OPS, min_size=1, max_size=12))
def test_random_operations_answer_as_the_reference(ops: list[Op]) -> None:
    compare(ops)


def test_a_session_of_each_tool() -> None:
    compare(
        [
            ("write", {"file_path": "src/app.py", "content": "x = 1\nprint(x)\n"}),
            ("write", {"file_path": "notes.md", "content": "one\ntwo\nthree\n"}),
            ("read", {"file_path": "notes.md", "view_range": [2, 0]}),
            ("read", {"file_path": "notes.md", "view_range": [1]}),
            ("read", {"file_path": "src"}),
            ("read", {"file_path": "nope.md"}),
            ("edit", {"file_path": "notes.md", "old_string": "two", "new_string": "2"}),
            ("edit", {"file_path": "notes.md", "old_string": "o", "new_string": "0"}),
            (
                "edit",
                {
                    "file_path": "notes.md",
                    "old_string": "o",
                    "new_string": "0",
                    "replace_all": True,
                },
            ),
            ("edit", {"file_path": "notes.md", "old_string": "q", "new_string": "0"}),
            ("glob", {"pattern": "**/*.py"}),
            ("glob", {"pattern": "*.md", "path": "src"}),
            ("grep", {"pattern": "print"}),
            ("grep", {"pattern": "print", "path": "src/app.py"}),
            ("grep", {"pattern": "nothing here"}),
            ("grep", {"pattern": "x", "path": "missing"}),
            ("write", {"file_path": "notes.md/x", "content": "no"}),
            ("write", {"file_path": "src", "content": "no"}),
        ]
    )


def test_large_files_are_read_by_line_range() -> None:
    line = "y" * 1000
    compare(
        [
            ("write", {"file_path": "big.txt", "content": "\n".join([line] * 300) + "\n"}),
            ("read", {"file_path": "big.txt"}),
            ("read", {"file_path": "big.txt", "view_range": [2, 3]}),
            ("read", {"file_path": "big.txt", "view_range": [1, 0]}),
            ("edit", {"file_path": "big.txt", "old_string": "y", "new_string": "z"}),
            ("write", {"file_path": "wide.txt", "content": "w" * 300_000}),
            ("read", {"file_path": "wide.txt", "view_range": [1, 1]}),
        ]
    )


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        yield opened


def test_the_schemas_are_the_references(ws: agentfs.Workspace) -> None:
    reference = [t.to_dict() for t in beta_agent_toolset_20260401(AgentToolContext())]
    assert [t.to_dict() for t in agent_toolset(ws)] == reference
    assert [t.to_dict() for t in async_agent_toolset(ws)] == reference


def test_glob_lists_the_newest_first(ws: agentfs.Workspace) -> None:
    tools = {t.name: t for t in agent_toolset(ws)}
    for name in ("old.py", "mid.py", "new.py"):
        tools["write"].call({"file_path": name, "content": name})
    assert tools["glob"].call({"pattern": "*.py"}) == "/new.py\n/mid.py\n/old.py"


def test_the_policy_rules_the_toolset(ws: agentfs.Workspace) -> None:
    ws.write("/secrets/key.txt", "token=1\n", parents=True)
    ws.write("/src/a.py", "token = 2\n", parents=True)
    tools = {
        t.name: t
        for t in agent_toolset(ws, policy=Policy(defaults=ToolPolicy(deny=["/secrets/**"])))
    }
    with pytest.raises(ToolError, match="does not let read read"):
        tools["read"].call({"file_path": "secrets/key.txt"})
    assert tools["grep"].call({"pattern": "token"}) == "/src/a.py:1:token = 2\n"
    assert tools["glob"].call({"pattern": "**/*.txt"}) == "no matches"
    with pytest.raises(ToolError, match="does not let write write"):
        tools["write"].call({"file_path": "/secrets/key.txt", "content": "x"})
    assert ws.read_text("/secrets/key.txt") == "token=1\n"


def test_bash_runs_in_the_mounted_workspace_and_is_audited(ws: agentfs.Workspace) -> None:
    tools = {t.name: t for t in agent_toolset(ws, thread="build")}
    ws.write("/src/a.py", "print('hi')\n", parents=True)
    out = tools["bash"].call({"command": "ls src && echo made > src/out.txt && echo err >&2"})
    assert out == "a.py\nerr"
    assert ws.read_text("/src/out.txt") == "made\n"
    with pytest.raises(ToolError, match=r"^oops$"):
        tools["bash"].call({"command": "echo oops; exit 3"})
    assert tools["bash"].call({"restart": True}) == "bash session restarted"
    with pytest.raises(ToolError, match="bash: command is required"):
        tools["bash"].call({})
    tools["bash"].toolset.flush()
    calls = [c for c in ws.tool_calls.list() if c.name == "bash"]
    assert len(calls) == 4
    ran = next(c for c in calls if "out.txt" in str(c.parameters))
    assert ran.result is not None and ran.result["result"] == "a.py\nerr"
    failed = next(c for c in calls if "exit 3" in str(c.parameters))
    assert failed.result is not None and failed.result["failed"] is True
