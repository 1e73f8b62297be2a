"""``AgentFSEditor`` against the real SDK: each operation's text is what the SDK's
``agents.apply_diff.apply_diff`` makes of the same text, and a sequence of operations leaves the
workspace as the SDK's own editor (``agents.sandbox.apply_patch.WorkspaceEditor`` on a local
sandbox) leaves a temporary directory, failures included; a failure changes nothing; the
policy for ``apply_patch`` rules every operation, and each is audited."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from agents.apply_diff import apply_diff
from agents.editor import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult
from agents.sandbox.apply_patch import WorkspaceEditor
from agents.sandbox.manifest import Manifest
from agents.sandbox.sandboxes.unix_local import UnixLocalSandboxClient
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.integrations.openai_agents import AgentFSEditor
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import ToolPolicy
from agentfs.tools.toolset import ToolCallRequest
from tests.trees import host_tree, workspace_tree

#: Lines that collide, differ only in whitespace, or look like V4A syntax.
LINES = ["a", "b", "c", "", " a", "a ", "\ta", "def f():", "    return 1", "@@ x", "-", "+"]
#: Paths whose operations meet: a directory that is also a file's name, nested parents.
PATHS = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "d"]

Op = Literal["create_file", "update_file", "delete_file"]


def _text(lines: list[str], newline: str, trailing: bool) -> str:
    return newline.join(lines) + (newline if trailing and lines else "")


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.sampled_from(LINES), max_size=10))
    return _text(lines, draw(st.sampled_from(["\n", "\r\n"])), draw(st.booleans()))


@st.composite
def update_diffs(draw: st.DrawFn, text: str) -> str:
    """A V4A update diff made from ``text``'s own lines (so most apply), then perhaps broken:
    a line replaced, dropped or added, which most often makes it fail."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[str] = []
    pos = 0
    for n in range(draw(st.integers(0, 3))):
        if pos > len(lines):
            break
        start = draw(st.integers(pos, len(lines)))
        if n or draw(st.booleans()):
            anchor = draw(st.sampled_from(["@@", "@@ " + (lines[start - 1] if start else "a")]))
            out.append(anchor)
        before = draw(st.integers(0, min(3, start - pos)))
        out += [" " + line for line in lines[start - before : start]]
        deleted = draw(st.integers(0, min(3, len(lines) - start)))
        out += ["-" + line for line in lines[start : start + deleted]]
        out += ["+" + line for line in draw(st.lists(st.sampled_from(LINES), max_size=3))]
        after = draw(st.integers(0, min(3, len(lines) - start - deleted)))
        out += [" " + line for line in lines[start + deleted : start + deleted + after]]
        pos = start + deleted + after
    if draw(st.booleans()):
        out.append("*** End of File")
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.integers(0, len(out)))
        how = draw(st.sampled_from(["replace", "drop", "insert"]))
        line = draw(st.sampled_from(["", "x", "***", "@@"])) + draw(st.sampled_from(LINES))
        line = draw(st.sampled_from([" ", "-", "+", ""])) + line
        if how == "insert" or where == len(out):
            out.insert(where, line)
        elif how == "replace":
            out[where] = line
        else:
            del out[where]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(out) + (newline if draw(st.booleans()) else "")


@st.composite
def create_diffs(draw: st.DrawFn) -> str:
    lines = ["+" + line for line in draw(st.lists(st.sampled_from(LINES), max_size=6))]
    if draw(st.integers(0, 4)) == 0:  # a line without its '+': not a valid new file
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(LINES[:3])))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + (newline if draw(st.booleans()) else "")


def _reference(text: str, diff: str, mode: Literal["default", "create"]) -> str | None:
    try:
        return apply_diff(text, diff, mode)
    except ValueError:
        return None


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        yield opened


def _op(
    kind: Op, path: str, diff: str | None = None, move_to: str | None = None
) -> ApplyPatchOperation:
    return ApplyPatchOperation(type=kind, path=path, diff=diff, move_to=move_to)


def test_it_is_an_editor_the_sdk_accepts(ws: agentfs.Workspace) -> None:
    from agents import ApplyPatchTool

    editor = AgentFSEditor(ws)
    assert isinstance(editor, ApplyPatchEditor)
    assert ApplyPatchTool(editor=editor).editor is editor


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), text=texts())
def test_an_update_is_what_apply_diff_makes_of_the_text(
    ws: agentfs.Workspace, data: st.DataObject, text: str
) -> None:
    diff = data.draw(update_diffs(text))
    ws.write("/f.txt", text.encode())
    before = ws.version("/f.txt").n
    expected = _reference(text, diff, "default")
    result = AgentFSEditor(ws).update_file(_op("update_file", "f.txt", diff))
    event("the diff applies" if expected is not None else "the diff fails")
    if expected is None:
        assert result.status == "failed" and "[patch_failed]" in (result.output or "")
        assert ws.read("/f.txt") == text.encode() and ws.version("/f.txt").n == before
    else:
        assert result.status == "completed", result.output
        assert ws.read("/f.txt") == expected.encode()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(diff=create_diffs(), n=st.integers(0, 10**6))
def test_a_created_file_is_what_apply_diff_makes_of_the_diff(
    ws: agentfs.Workspace, diff: str, n: int
) -> None:
    path = f"/new/{n}.txt"
    if ws.exists(path):
        ws.remove(path)
    expected = _reference("", diff, "create")
    result = AgentFSEditor(ws).create_file(_op("create_file", path.lstrip("/"), diff))
    if expected is None:
        assert result.status == "failed" and not ws.exists(path)
    else:
        assert result.status == "completed", result.output
        assert ws.read(path) == expected.encode()


# --- the whole editor against the SDK's own, on a temporary directory -----------------------


def _tree_of_dir(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root``: a file's bytes, None for a directory; by its path as the
    operations name it (relative, like ``PATHS``), in order, for the next one to be drawn."""
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
    }


@st.composite
def operations(draw: st.DrawFn, files: dict[str, bytes | None]) -> ApplyPatchOperation:
    """One operation on ``PATHS``, its diff made from the file's text when it has one."""
    kind: Op = draw(st.sampled_from(["create_file", "update_file", "update_file", "delete_file"]))
    existing = [path for path, content in files.items() if content is not None]
    pick_existing: bool = draw(st.booleans())
    path = draw(st.sampled_from(existing if existing and pick_existing else PATHS))
    if kind == "create_file":
        return _op(kind, path, draw(create_diffs()))
    if kind == "delete_file":
        return _op(kind, path)
    content = files.get(path)
    text = content.decode() if content is not None else draw(texts())
    move_to = draw(st.one_of(st.none(), st.sampled_from(PATHS)))
    return _op(kind, path, draw(update_diffs(text)), move_to)


async def _sdk_editor(root: Path) -> WorkspaceEditor:
    session = await UnixLocalSandboxClient().create(manifest=Manifest(root=str(root)))
    await session.start()
    return WorkspaceEditor(session)


async def _sdk_apply(editor: WorkspaceEditor, operation: ApplyPatchOperation) -> bool:
    """Did the SDK's editor apply it? (It raises where ours returns a failed result.)"""
    try:
        await editor.apply_operation(operation)
    except Exception:
        return False
    return True


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_operations_leave_the_workspace_as_the_sdks_editor_leaves_a_directory(
    tmp_path: Path, data: st.DataObject
) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    db = Path(tempfile.mkdtemp(dir=tmp_path)) / "ws.db"

    async def run() -> None:
        reference = await _sdk_editor(root)
        with agentfs.open(db) as ws:
            editor = AgentFSEditor(ws)
            for _ in range(data.draw(st.integers(1, 10))):
                operation = data.draw(operations(_tree_of_dir(root)))
                applied = await _sdk_apply(reference, operation)
                before = workspace_tree(ws)
                result = getattr(editor, operation.type)(operation)
                event(f"{operation.type} {'applied' if applied else 'failed'}")
                assert (result.status == "completed") == applied, (operation, result.output)
                assert workspace_tree(ws) == host_tree(root), operation
                if not applied:
                    assert workspace_tree(ws) == before

    try:
        asyncio.run(run())
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- what agentfs adds: atomicity, the policy, the audit ------------------------------------


def test_operations_and_their_results(ws: agentfs.Workspace) -> None:
    editor = AgentFSEditor(ws, thread="t1")
    done = editor.create_file(_op("create_file", "src/app.py", "+def f():\n+    return 1\n"))
    assert done == ApplyPatchResult(status="completed", output="Created /src/app.py")
    assert ws.read("/src/app.py") == b"def f():\n    return 1"
    again = editor.create_file(_op("create_file", "src/app.py", "+x"))
    assert again.status == "failed" and "[exists]" in (again.output or "")
    moved = editor.update_file(
        _op("update_file", "src/app.py", "@@ def f():\n-    return 1\n+    return 2", "lib/app.py")
    )
    assert moved.status == "completed"
    assert moved.output == "Updated /src/app.py\nMoved /src/app.py to /lib/app.py"
    assert not ws.exists("/src/app.py") and ws.read("/lib/app.py") == b"def f():\n    return 2"
    missing = editor.update_file(_op("update_file", "nope.py", "@@\n-a\n+b"))
    assert missing.status == "failed" and "[not_found]" in (missing.output or "")
    no_diff = editor.update_file(_op("update_file", "lib/app.py"))
    assert no_diff.status == "failed" and "needs a diff" in (no_diff.output or "")
    ws.mkdir("/dir")
    assert "[is_directory]" in (editor.delete_file(_op("delete_file", "dir")).output or "")
    gone = editor.delete_file(_op("delete_file", "/lib/app.py"))
    assert gone == ApplyPatchResult(status="completed", output="Deleted /lib/app.py")
    assert not ws.exists("/lib/app.py")


def test_a_diff_that_does_not_apply_changes_nothing(ws: agentfs.Workspace) -> None:
    ws.write("/a.txt", "one\ntwo\n")
    versions = len(ws.history("/a.txt"))
    with AgentFSEditor(ws) as editor:
        result = editor.update_file(
            _op("update_file", "a.txt", "@@\n-one\n+1\n@@\n-three\n+3", move_to="b.txt")
        )
    assert result.status == "failed"
    assert "[patch_failed]" in (result.output or "") and "three" in (result.output or "")
    assert ws.read("/a.txt") == b"one\ntwo\n" and not ws.exists("/b.txt")
    assert len(ws.history("/a.txt")) == versions
    failed = ws.tool_calls.list()[0]
    assert failed.name == "apply_patch.update_file" and failed.error is not None


def test_the_policy_for_apply_patch_rules_the_editor(ws: agentfs.Workspace) -> None:
    ws.write("/secrets/key", "k\n", parents=True)
    ws.write("/a.txt", "a\n")
    guarded = AgentFSEditor(ws, policy=Policy(defaults=ToolPolicy(deny=["/secrets/**"])))
    refused = guarded.update_file(_op("update_file", "secrets/key", "@@\n-k\n+x"))
    assert refused.status == "failed" and "[denied]" in (refused.output or "")
    moved = guarded.update_file(_op("update_file", "a.txt", "@@\n-a\n+b", move_to="secrets/a"))
    assert moved.status == "failed" and "[denied]" in (moved.output or "")
    assert guarded.delete_file(_op("delete_file", "secrets/key")).status == "failed"
    assert ws.read("/secrets/key") == b"k\n" and ws.read("/a.txt") == b"a\n"
    off = AgentFSEditor(ws, policy=Policy(tools={"apply_patch": ToolPolicy(enabled=False)}))
    assert "[denied]" in (off.delete_file(_op("delete_file", "a.txt")).output or "")
    asked: list[str] = []

    def refuse(request: ToolCallRequest) -> bool:
        asked.append(request.tool)
        return False

    careful = AgentFSEditor(
        ws, policy=Policy(tools={"apply_patch": ToolPolicy(needs_approval=True)}), approve=refuse
    )
    no = careful.create_file(_op("create_file", "b.txt", "+b"))
    assert no.status == "failed" and "[approval_denied]" in (no.output or "")
    assert asked == ["apply_patch.create_file"] and not ws.exists("/b.txt")
    reader = AgentFSEditor(ws, policy=Policy(read_only=True))
    assert "[read_only]" in (reader.create_file(_op("create_file", "c.txt", "+c")).output or "")
    assert ws.read("/a.txt") == b"a\n" and not ws.exists("/c.txt")


def test_each_operation_is_audited_with_the_version_it_wrote(ws: agentfs.Workspace) -> None:
    with Toolset(ws, thread="t1", actor="coder") as toolset:
        editor = AgentFSEditor(toolset)  # the Toolset's thread, actor and policy
        editor.create_file(_op("create_file", "a.txt", "+one"))
        editor.update_file(_op("update_file", "a.txt", "@@\n-one\n+two"))
    latest = ws.version("/a.txt")
    assert (latest.n, latest.thread, latest.actor) == (2, "t1", "coder")
    writer = ws.tool_calls.writer("/a.txt", 2)
    assert writer is not None and writer.name == "apply_patch.update_file"
    assert writer.parameters == {"path": "a.txt", "diff": "@@\n-one\n+two"}
    creator = ws.tool_calls.writer("/a.txt", 1)
    assert creator is not None and creator.name == "apply_patch.create_file"
