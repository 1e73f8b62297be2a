"""The text editor tool (``text_editor_20250728``, named ``str_replace_based_edit_tool``) over
a workspace: ``view`` (a file with ``cat -n`` numbers, or a directory two levels deep),
``create``, ``str_replace`` and ``insert``; no ``undo_edit`` (the workspace's versions keep
every earlier content).

The SDK has no reference for this tool; its texts are those of Anthropic's reference
implementation (``EditTool20250728`` in anthropic-quickstarts' computer-use demo), which a
model trained on the tool expects. Paths are workspace paths. ``view`` is ``read_file`` to
the policy, ``create`` is ``write_file``, ``str_replace`` and ``insert`` are ``edit_file``;
each call is audited under ``text_editor_<command>``.
"""

from __future__ import annotations

import posixpath
from pathlib import PurePosixPath
from typing import Any, Literal

from anthropic.lib.tools import (
    BetaAsyncBuiltinFunctionTool,
    BetaBuiltinFunctionTool,
    BetaFunctionToolResultType,
)
from anthropic.lib.tools import (
    ToolError as SDKToolError,
)
from anthropic.types.beta import BetaToolTextEditor20250728Param

from agentfs.core.inodes import S_IFDIR, S_IFMT
from agentfs.integrations.anthropic.common import (
    ACTOR,
    SURFACE,
    Input,
    TextOutput,
    numbered,
    run,
)
from agentfs.integrations.toolsets import Flushing, toolset_for
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.policy import Policy
from agentfs.tools.toolset import Approve, Toolset

NAME: Literal["str_replace_based_edit_tool"] = "str_replace_based_edit_tool"
COMMANDS = ("view", "create", "str_replace", "insert")
SNIPPET_LINES = 4
CLIPPED = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you."
    " You should retry this tool after you have searched inside the file with `grep -n` in"
    " order to find the line numbers of what you are looking for.</NOTE>"
)


class EditorInput(Input):
    path: str
    max_characters: int | None = None


class ViewInput(EditorInput):
    view_range: list[int] | None = None


class CreateInput(EditorInput):
    file_text: str | None = None


class StrReplaceInput(EditorInput):
    old_str: str | None = None
    new_str: str | None = None


class InsertInput(EditorInput):
    insert_line: int | None = None
    insert_text: str | None = None
    new_str: str | None = None  # what earlier versions of the tool called insert_text


def _fail(message: str) -> ToolError:
    return ToolError("invalid_argument", message)


def _target(ctx: Context, raw: str, command: str, *, write: bool) -> tuple[str, str, int | None]:
    """The workspace path, the path as the messages show it and the type of what is there,
    once the reference's checks of the path and the command pass."""
    shown = str(PurePosixPath(raw))
    if not shown.startswith("/"):
        raise _fail(
            f"The path {shown} is not an absolute path, it should start with `/`. Maybe you"
            f" meant {shown}?"
        )
    path = ctx.path(raw, write=write)
    try:
        kind: int | None = ctx.ws.stat(path).st_mode & S_IFMT
    except OSError:
        kind = None
    if kind is None and command != "create":
        raise ToolError(
            "not_found", f"The path {shown} does not exist. Please provide a valid path."
        )
    if kind is not None and command == "create":
        raise ToolError(
            "exists",
            f"File already exists at: {shown}. Cannot overwrite files using command `create`.",
        )
    if kind == S_IFDIR and command != "view":
        raise ToolError(
            "is_directory",
            f"The path {shown} is a directory and only the `view` command can be used on"
            " directories",
        )
    return path, shown, kind


def _output(content: str, described: str, first: int, most: int | None) -> str:
    if most and len(content) > most:
        content = content[:most] + CLIPPED
    lines = content.expandtabs().split("\n")
    return (
        f"Here's the result of running `cat -n` on {described}:\n" + numbered(lines, first) + "\n"
    )


def _read(ctx: Context, path: str, shown: str) -> str:
    try:
        return ctx.ws.read(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(f"Ran into {exc} while trying to read {shown}") from None


def _tree(ctx: Context, top: str, shown: str) -> str:
    """``find PATH -maxdepth 2 -not -path '*/.*'``: the directory, then what is in it two
    levels deep, hidden names left out."""
    found = [] if "/." in shown else [shown]

    def walk(directory: str, depth: int) -> None:
        try:
            names = sorted(ctx.ws.listdir(directory))
        except OSError:
            return
        for name in names:
            path = posixpath.join(directory, name)
            if name.startswith(".") or not ctx.visible(path):
                continue
            found.append(posixpath.join(shown, posixpath.relpath(path, top)))
            if depth < 2 and ctx.ws.lstat(path).st_mode & S_IFMT == S_IFDIR:
                walk(path, depth + 1)

    walk(top, 1)
    listing = "".join(f"{line}\n" for line in found)
    return (
        f"Here's the files and directories up to 2 levels deep in {shown}, excluding hidden"
        f" items:\n{listing}\n"
    )


@SURFACE.tool(
    "text_editor_view",
    title="Text editor: view",
    description="The text editor's view: a file with line numbers, or a directory's tree.",
    tracks_reads=True,
    governed_by="read_file",
)
def text_editor_view(ctx: Context, args: ViewInput) -> TextOutput:
    path, shown, kind = _target(ctx, args.path, "view", write=False)
    view = args.view_range
    if kind == S_IFDIR:
        if view:
            raise _fail(
                "The `view_range` parameter is not allowed when `path` points to a directory."
            )
        return TextOutput(result=_tree(ctx, path, shown))
    content = _read(ctx, path, shown)
    first = 1
    if view:
        if len(view) != 2:
            raise _fail("Invalid `view_range`. It should be a list of two integers.")
        lines = content.split("\n")
        first, last = view
        if not 1 <= first <= len(lines):
            raise _fail(
                f"Invalid `view_range`: {view}. Its first element `{first}` should be within"
                f" the range of lines of the file: {[1, len(lines)]}"
            )
        if last > len(lines):
            raise _fail(
                f"Invalid `view_range`: {view}. Its second element `{last}` should be smaller"
                f" than the number of lines in the file: `{len(lines)}`"
            )
        if last != -1 and last < first:
            raise _fail(
                f"Invalid `view_range`: {view}. Its second element `{last}` should be larger or"
                f" equal than its first `{first}`"
            )
        content = "\n".join(lines[first - 1 :] if last == -1 else lines[first - 1 : last])
    most = args.max_characters
    clipped = content[:most] if most and len(content) > most else content
    ctx.check_read_size(len(clipped.encode("utf-8")), path, "view fewer lines (view_range)")
    return TextOutput(result=_output(content, shown, first, args.max_characters))


@SURFACE.tool(
    "text_editor_create",
    title="Text editor: create",
    description="The text editor's create: a new file; an existing path is refused.",
    mutates=True,
    governed_by="write_file",
)
def text_editor_create(ctx: Context, args: CreateInput) -> TextOutput:
    path, shown, _ = _target(ctx, args.path, "create", write=True)
    if args.file_text is None:
        raise _fail("Parameter `file_text` is required for command: create")
    data = args.file_text.encode("utf-8")
    ctx.check_size(len(data), path)
    ctx.put(path, data, parents=True, exclusive=True)
    return TextOutput(result=f"File created successfully at: {shown}")


def _save(ctx: Context, path: str, text: str) -> None:
    data = text.encode("utf-8")
    ctx.check_size(len(data), path)
    ctx.write(path, data)


@SURFACE.tool(
    "text_editor_str_replace",
    title="Text editor: str_replace",
    description="The text editor's str_replace: replace text that occurs once in a file.",
    mutates=True,
    governed_by="edit_file",
)
def text_editor_str_replace(ctx: Context, args: StrReplaceInput) -> TextOutput:
    path, shown, _ = _target(ctx, args.path, "str_replace", write=True)
    old, new = args.old_str, args.new_str or ""
    if old is None:
        raise _fail("Parameter `old_str` is required for command: str_replace")
    content = _read(ctx, path, shown)
    count = content.count(old)
    if count == 0:
        raise ToolError(
            "no_match",
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {shown}.",
        )
    if count > 1:
        lines = [n + 1 for n, line in enumerate(content.split("\n")) if old in line]
        raise ToolError(
            "not_unique",
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines"
            f" {lines}. Please ensure it is unique",
        )
    edited = content.replace(old, new)
    _save(ctx, path, edited)
    at = content.split(old)[0].count("\n")
    start, end = max(0, at - SNIPPET_LINES), at + SNIPPET_LINES + new.count("\n")
    snippet = "\n".join(edited.split("\n")[start : end + 1])
    return TextOutput(
        result=f"The file {shown} has been edited. "
        + _output(snippet, f"a snippet of {shown}", start + 1, args.max_characters)
        + "Review the changes and make sure they are as expected. Edit the file again if"
        " necessary."
    )


@SURFACE.tool(
    "text_editor_insert",
    title="Text editor: insert",
    description="The text editor's insert: text inserted after a line (0: at the top).",
    mutates=True,
    governed_by="edit_file",
)
def text_editor_insert(ctx: Context, args: InsertInput) -> TextOutput:
    path, shown, _ = _target(ctx, args.path, "insert", write=True)
    text = args.insert_text if args.insert_text is not None else args.new_str
    if args.insert_line is None:
        raise _fail("Parameter `insert_line` is required for command: insert")
    if text is None:
        raise _fail("Parameter `insert_text` is required for command: insert")
    lines = _read(ctx, path, shown).split("\n")
    at = args.insert_line
    if not 0 <= at <= len(lines):
        raise _fail(
            f"Invalid `insert_line` parameter: {at}. It should be within the range of lines of"
            f" the file: {[0, len(lines)]}"
        )
    added = text.split("\n")
    _save(ctx, path, "\n".join(lines[:at] + added + lines[at:]))
    snippet = "\n".join(
        lines[max(0, at - SNIPPET_LINES) : at] + added + lines[at : at + SNIPPET_LINES]
    )
    return TextOutput(
        result=f"The file {shown} has been edited. "
        + _output(
            snippet,
            "a snippet of the edited file",
            max(1, at - SNIPPET_LINES + 1),
            args.max_characters,
        )
        + "Review the changes and make sure they are as expected (correct indentation, no"
        " duplicate lines, etc). Edit the file again if necessary."
    )


def _arguments(input: object, most: int | None) -> tuple[str, dict[str, Any]]:
    """The surface tool a call goes to, and its arguments."""
    if not isinstance(input, dict):
        raise SDKToolError(f"the {NAME} tool takes an object, not {type(input).__name__}")
    arguments = dict(input)
    command = arguments.pop("command", None)
    if command not in COMMANDS:
        raise SDKToolError(
            f"Unrecognized command {command}. The allowed commands for the {NAME} tool are:"
            f" {', '.join(COMMANDS)}"
        )
    if most is not None:
        arguments["max_characters"] = most
    return f"text_editor_{command}", arguments


class AgentFSTextEditorTool(Flushing, BetaBuiltinFunctionTool):
    """The text editor tool over ``ws``, every command through a ``Toolset`` (``toolset``);
    ``max_characters`` clips what ``view`` shows, as the API's parameter of that name asks."""

    def __init__(
        self,
        ws: WorkspaceAPI | Toolset,
        *,
        max_characters: int | None = None,
        thread: str = "main",
        actor: str | None = ACTOR,
        policy: Policy | None = None,
        approve: Approve | None = None,
    ) -> None:
        self.max_characters = max_characters
        self.toolset = toolset_for(
            ws, surface=SURFACE, thread=thread, actor=actor, policy=policy, approve=approve
        )

    def to_dict(self) -> BetaToolTextEditor20250728Param:
        param: BetaToolTextEditor20250728Param = {"type": "text_editor_20250728", "name": NAME}
        if self.max_characters is not None:
            param["max_characters"] = self.max_characters
        return param

    def call(self, input: object) -> BetaFunctionToolResultType:
        name, arguments = _arguments(input, self.max_characters)
        return run(self.toolset, name, arguments)


class AsyncAgentFSTextEditorTool(Flushing, BetaAsyncBuiltinFunctionTool):
    """``AgentFSTextEditorTool`` for the async tool runner; each call runs in place."""

    def __init__(
        self,
        ws: WorkspaceAPI | Toolset,
        *,
        max_characters: int | None = None,
        thread: str = "main",
        actor: str | None = ACTOR,
        policy: Policy | None = None,
        approve: Approve | None = None,
    ) -> None:
        self.sync = AgentFSTextEditorTool(
            ws,
            max_characters=max_characters,
            thread=thread,
            actor=actor,
            policy=policy,
            approve=approve,
        )
        self.toolset = self.sync.toolset

    def to_dict(self) -> BetaToolTextEditor20250728Param:
        return self.sync.to_dict()

    async def call(self, input: object) -> BetaFunctionToolResultType:
        return self.sync.call(input)
