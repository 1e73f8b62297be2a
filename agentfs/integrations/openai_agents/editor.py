"""The SDK's ``apply_patch`` tool over a workspace: ``AgentFSEditor``, an ``ApplyPatchEditor``.

The model sends one operation at a time (``create_file``, ``update_file`` with an optional
``move_to``, ``delete_file``), each with a V4A diff for one file. The new text is what the SDK's
own ``agents.apply_diff.apply_diff`` makes of the file's text, so a diff means here exactly what
it means to the SDK's editors; agentfs adds the rest. Each operation is a tool of the
``SURFACE`` below, governed by agentfs's ``apply_patch`` (an operator's rules for it hold), run
by a ``Toolset`` in one transaction with its audit row: a diff that does not apply, a refused
path or a missing file changes nothing and comes back as a failed result the model can read.
"""

from __future__ import annotations

from typing import Literal

from agents.apply_diff import apply_diff
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from pydantic import Field

from agentfs.core import paths
from agentfs.integrations.toolsets import Flushing, toolset_for
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.policy import Policy
from agentfs.tools.spec import Surface, ToolInput, ToolOutput
from agentfs.tools.toolset import Approve, Toolset

#: Who the workspace records as acting, unless told otherwise.
ACTOR = "openai-agents"

#: The SDK's tools under their own names and result shapes (the shell runs agentfs's own
#: ``execute_command``, whose shape the executor converts).
SURFACE = Surface("openai-agents")

#: The surface's tool for each operation type of the SDK's ``apply_patch``.
OPERATION_TOOLS = {
    "create_file": "apply_patch.create_file",
    "update_file": "apply_patch.update_file",
    "delete_file": "apply_patch.delete_file",
}

_PATH = "the file's path in the workspace: from its root (src/app.py) or absolute (/src/app.py)"


class CreateInput(ToolInput):
    path: str = Field(description=_PATH)
    diff: str = Field(description="the new file's lines, each prefixed with '+' (V4A)")


class UpdateInput(ToolInput):
    path: str = Field(description=_PATH)
    diff: str = Field(description="a V4A diff: '@@' anchors, ' ', '-' and '+' lines")
    move_to: str | None = Field(None, description="write the result there, and remove path")


class DeleteInput(ToolInput):
    path: str = Field(description=_PATH)


class EditorOutput(ToolOutput):
    action: Literal["created", "updated", "moved", "deleted"]
    path: str
    move_to: str | None = None
    version: int | None = Field(
        None, description="the file's version after the operation (None: deleted)"
    )

    def text(self) -> str:
        if self.action == "moved":
            return f"Updated {self.path}\nMoved {self.path} to {self.move_to}"
        return f"{self.action.capitalize()} {self.path}"


def _applied(text: str, diff: str, mode: Literal["default", "create"], path: str) -> str:
    try:
        return apply_diff(text, diff, mode)
    except ValueError as exc:
        raise ToolError(
            "patch_failed",
            f"the diff does not apply to {path}; nothing was changed: {exc}. Read the file"
            " again and send a diff against its current text",
            path=path,
        ) from None


def _text(ctx: Context, path: str) -> str:
    """The file's text to apply a diff to: an untracked read (the editor reading the file is
    not the model reading it), refused unless it is a regular file of UTF-8 text."""
    ws = ctx.ws
    if not ws.exists(path):
        raise ToolError("not_found", f"{path} does not exist; create it with create_file")
    if ws.stat(path).is_dir():
        raise ToolError("is_directory", f"{path} is a directory, not a file")
    try:
        return ws.read(path, track=False).decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            "invalid_argument", f"{path} is not UTF-8 text; a diff cannot be applied to it"
        ) from None


@SURFACE.tool(
    OPERATION_TOOLS["create_file"],
    title="Create a file (apply_patch)",
    description="Create a file from a V4A diff of '+' lines; it must not exist yet.",
    mutates=True,
    governed_by="apply_patch",
)
def create_file(ctx: Context, args: CreateInput) -> EditorOutput:
    path = ctx.path(args.path, write=True)
    text = _applied("", args.diff, "create", path)
    data = text.encode("utf-8")
    ctx.check_size(len(data), path)
    if ctx.ws.exists(path) or _is_link(ctx.ws, path):
        raise ToolError(
            "exists",
            f"{path} already exists; change it with update_file, or delete it first",
        )
    version, _ = ctx.put(path, data, parents=True, exclusive=True)
    return EditorOutput(action="created", path=path, version=version)


@SURFACE.tool(
    OPERATION_TOOLS["update_file"],
    title="Update a file (apply_patch)",
    description="Apply a V4A diff to a file; with move_to, the result is written there.",
    mutates=True,
    destructive=True,
    governed_by="apply_patch",
)
def update_file(ctx: Context, args: UpdateInput) -> EditorOutput:
    path = ctx.path(args.path, write=True)
    target = ctx.path(args.move_to, write=True) if args.move_to is not None else path
    text = _applied(_text(ctx, path), args.diff, "default", path)
    data = text.encode("utf-8")
    ctx.check_size(len(data), target)
    if target == path:
        version = ctx.write(path, data)
        return EditorOutput(action="updated", path=path, version=version)
    ws = ctx.ws
    if ws.exists(target) and ws.stat(target).is_dir():
        raise ToolError("is_directory", f"{target} is a directory; cannot move {path} there")
    parent = paths.parent_and_name(target)[0]
    ws.mkdir(parent, parents=True, exist_ok=True)
    if _is_link(ws, path):
        # A link is not moved: a relative one would lead somewhere else from target, which
        # the policy never judged. The text goes to target, and the link is removed.
        ws.remove(path)
    else:
        ws.rename(path, target)  # the file keeps its history under its new name
    version = ctx.write(target, data)
    return EditorOutput(action="moved", path=path, move_to=target, version=version)


@SURFACE.tool(
    OPERATION_TOOLS["delete_file"],
    title="Delete a file (apply_patch)",
    description="Delete a file (not a directory).",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="apply_patch",
)
def delete_file(ctx: Context, args: DeleteInput) -> EditorOutput:
    path = ctx.path(args.path, write=True)
    ws = ctx.ws
    if not _is_link(ws, path):
        if not ws.exists(path):
            raise ToolError("not_found", f"{path} does not exist")
        if ws.stat(path).is_dir():
            raise ToolError("is_directory", f"{path} is a directory; apply_patch deletes files")
    ws.remove(path)
    return EditorOutput(action="deleted", path=path)


def _is_link(ws: WorkspaceAPI, path: str) -> bool:
    try:
        return ws.lstat(path).type == "symlink"
    except OSError:
        return False


class AgentFSEditor(Flushing):
    """An ``agents.ApplyPatchEditor`` that applies each operation to the workspace::

        ApplyPatchTool(editor=AgentFSEditor(ws, thread="chat-42"))

    Each operation runs through a ``Toolset`` (the operator's policy for ``apply_patch``,
    approval, one transaction with its audit row, versions under ``thread`` and ``actor``);
    the new text is ``agents.apply_diff.apply_diff``'s. Its result is an ``ApplyPatchResult``:
    ``completed`` with what was done, or ``failed`` with why, nothing having changed.
    Given a ``Toolset``, its workspace, thread, actor, policy and approval. Close it (or
    leave its ``with`` block) to publish the audit rows of the last failed calls at once.
    """

    def __init__(
        self,
        ws: WorkspaceAPI | Toolset,
        *,
        thread: str = "main",
        actor: str | None = ACTOR,
        policy: Policy | None = None,
        approve: Approve | None = None,
    ) -> None:
        self.toolset = toolset_for(
            ws, surface=SURFACE, thread=thread, actor=actor, policy=policy, approve=approve
        )

    def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._run("create_file", operation)

    def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._run("update_file", operation)

    def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._run("delete_file", operation)

    def _run(self, kind: str, operation: ApplyPatchOperation) -> ApplyPatchResult:
        arguments: dict[str, str] = {"path": operation.path}
        if kind != "delete_file":
            if operation.diff is None:
                return ApplyPatchResult(
                    status="failed",
                    output=f"Error [invalid_argument]: {kind} of {operation.path} needs a diff;"
                    " nothing was changed",
                )
            arguments["diff"] = operation.diff
        if kind == "update_file" and operation.move_to is not None:
            arguments["move_to"] = operation.move_to
        result = self.toolset.invoke(OPERATION_TOOLS[kind], arguments)
        return ApplyPatchResult(
            status="failed" if result.is_error else "completed", output=result.text
        )
