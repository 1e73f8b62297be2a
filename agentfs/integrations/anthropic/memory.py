"""The memory tool (``memory_20250818``) over a workspace: ``AgentFSMemoryTool`` and its async
twin, subclasses of the SDK's ``BetaAbstractMemoryTool``.

The model's ``/memories`` is the workspace's ``/memories`` directory: a path the model names
is the workspace path, so the memories are ordinary files every other tool, the mount and
the history see. Each command answers with the text and the errors of the SDK's
``BetaLocalFilesystemMemoryTool`` on the same files (tests/integrations/
test_anthropic_memory.py compares them on random command sequences), and runs through a
``Toolset``: ``view`` as ``read_file`` to the policy, ``create`` as ``write_file``,
``str_replace`` and ``insert`` as ``edit_file``, ``delete`` as ``delete_file``, ``rename`` as
``move_file``; each call is audited under ``memory_<command>``.
"""

from __future__ import annotations

import posixpath
from typing import Any

from anthropic.lib.tools import (
    BetaAbstractMemoryTool,
    BetaAsyncAbstractMemoryTool,
    BetaFunctionToolResultType,
)
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from agentfs.core.inodes import S_IFDIR, S_IFMT, S_IFREG
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

#: The memory directory, as the model names it and as the workspace holds it.
ROOT = "/memories"
#: What a directory's size reads as in a listing: ext4's, which the reference shows on most
#: hosts (a workspace directory has no size of its own).
DIRECTORY_BYTES = 4096
MAX_LINES = 999_999


class PathInput(Input):
    path: str


class ViewInput(PathInput):
    view_range: list[int] | None = None


class CreateInput(PathInput):
    file_text: str


class StrReplaceInput(PathInput):
    old_str: str
    new_str: str


class InsertInput(PathInput):
    insert_line: int
    insert_text: str


class RenameInput(Input):
    old_path: str
    new_path: str


def _error(message: str) -> ToolError:
    return ToolError("invalid_argument", message)


def _resolve(ctx: Context, raw: str, *, write: bool) -> str:
    """The workspace path of the memory path ``raw``, as the reference resolves it: under
    ``/memories`` (``/memoriesX`` is ``/memories/X``), ``..`` collapsed, symlinks followed."""
    if not raw.startswith(ROOT):
        raise _error(f"Path must start with /memories, got: {raw}")
    rest = raw[len(ROOT) :].lstrip("/")
    full = posixpath.normpath(f"{ROOT}/{rest}") if rest else ROOT
    if full.startswith("//"):
        full = full[1:]
    real = ctx.ws.realpath(full) if _inside(full) else full
    if not _inside(real):
        raise _error(f"Path {raw} would escape /memories directory")
    return ctx.path(real, write=write)


def _inside(path: str) -> bool:
    return path == ROOT or path.startswith(ROOT + "/")


def _kind(ctx: Context, path: str) -> int | None:
    """The file type at ``path`` (symlinks followed), or None where nothing is."""
    try:
        return ctx.ws.stat(path).st_mode & S_IFMT
    except OSError:
        return S_IFDIR if path == ROOT else None  # the reference's root always exists


def _text(ctx: Context, path: str) -> str:
    try:
        return ctx.ws.read(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(f"The file {path} is not valid UTF-8: {exc}") from None


def _size(n: int) -> str:
    """A size as the reference lists it: ``0B``, ``512B``, ``1.5K``, ``4.0K``, ``2M``."""
    if n == 0:
        return "0B"
    unit = min((n.bit_length() - 1) // 10, 3)
    value = n / 1024**unit
    shown = f"{int(value)}" if value == int(value) else f"{value:.1f}"
    return shown + "BKMG"[unit]


def _listing(ctx: Context, top: str, shown: str) -> str:
    lines = [f"{_size(DIRECTORY_BYTES)}\t{shown}"]

    def collect(directory: str, relative: str, depth: int) -> None:
        try:
            names = sorted(ctx.ws.listdir(directory))
        except OSError:
            return
        for name in names:
            if name.startswith("."):
                continue
            path = posixpath.join(directory, name)
            rel = f"{relative}/{name}" if relative else name
            try:
                if not _inside(ctx.ws.realpath(path)) or not ctx.visible(path):
                    continue
                st = ctx.ws.stat(path)
            except OSError:
                continue
            kind = st.st_mode & S_IFMT
            if kind == S_IFDIR:
                lines.append(f"{_size(DIRECTORY_BYTES)}\t{shown}/{rel}/")
                if depth < 2:
                    collect(path, rel, depth + 1)
            elif kind == S_IFREG:
                lines.append(f"{_size(st.st_size)}\t{shown}/{rel}")

    collect(top, "", 1)
    header = (
        f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
    )
    return header + "\n" + "\n".join(lines)


@SURFACE.tool(
    "memory_view",
    title="Memory: view",
    description="The memory tool's view: a file with line numbers, or a directory's listing.",
    tracks_reads=True,
    governed_by="read_file",
)
def memory_view(ctx: Context, args: ViewInput) -> TextOutput:
    path = _resolve(ctx, args.path, write=False)
    try:
        st = ctx.ws.lstat(path)
    except OSError:
        if path == ROOT:  # the reference's root always exists
            return TextOutput(result=_listing(ctx, path, args.path))
        raise _error(f"The path {args.path} does not exist. Please provide a valid path.") from None
    kind = st.st_mode & S_IFMT
    if kind == S_IFDIR:
        return TextOutput(result=_listing(ctx, path, args.path))
    if kind != S_IFREG:
        raise _error(f"Unsupported file type for {args.path}")
    lines = _text(ctx, path).split("\n")
    if len(lines) > MAX_LINES:
        raise _error(f"File {args.path} exceeds maximum line limit of 999,999 lines.")
    first = 1
    if args.view_range and len(args.view_range) == 2:
        start = max(1, args.view_range[0]) - 1
        end = len(lines) if args.view_range[1] == -1 else args.view_range[1]
        lines, first = lines[start:end], start + 1
    size = sum(len(line.encode("utf-8")) + 1 for line in lines)
    ctx.check_read_size(size, path, "view fewer lines (view_range)")
    return TextOutput(
        result=f"Here's the content of {args.path} with line numbers:\n" + numbered(lines, first)
    )


def _make_parents(ctx: Context, path: str, shown: str) -> None:
    """Make the missing directories above ``path``, as the reference does before it writes."""
    parent = posixpath.dirname(path)
    try:
        ctx.ws.stat(parent)
        return  # whatever stands there: the reference leaves it
    except OSError:
        pass
    try:
        ctx.ws.mkdir(parent, parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(
            "not_directory", f"Cannot write {shown}: a file stands where a directory must be"
        ) from exc


@SURFACE.tool(
    "memory_create",
    title="Memory: create",
    description="The memory tool's create: a new file; an existing path is refused.",
    mutates=True,
    governed_by="write_file",
)
def memory_create(ctx: Context, args: CreateInput) -> TextOutput:
    path = _resolve(ctx, args.path, write=True)
    if path == ROOT or ctx.ws.exists(path):  # the reference's root always exists
        raise ToolError("exists", f"File {args.path} already exists")
    data = args.file_text.encode("utf-8")
    ctx.check_size(len(data), path)
    _make_parents(ctx, path, args.path)
    try:
        ctx.put(path, data, exclusive=True)
    except FileExistsError:
        raise ToolError("exists", f"File {args.path} already exists") from None
    except OSError as exc:
        raise ToolError("not_directory", f"Cannot write {args.path}: {exc.strerror}") from None
    return TextOutput(result=f"File created successfully at: {args.path}")


def _existing_file(ctx: Context, raw: str) -> tuple[str, str]:
    """The workspace path of the file ``raw`` names, and its text."""
    path = _resolve(ctx, raw, write=True)
    kind = _kind(ctx, path)
    if kind is None:
        raise ToolError("not_found", f"The path {raw} does not exist. Please provide a valid path.")
    if kind != S_IFREG:
        raise ToolError("is_directory", f"The path {raw} is not a file.")
    return path, _text(ctx, path)


def _save(ctx: Context, path: str, text: str) -> None:
    data = text.encode("utf-8")
    ctx.check_size(len(data), path)
    ctx.write(path, data)


def _occurrence_lines(content: str, old: str) -> list[int]:
    """The line of every occurrence of ``old``, overlapping ones included."""
    found: list[int] = []
    at = content.find(old)
    while at != -1:
        found.append(content.count("\n", 0, at) + 1)
        at = content.find(old, at + 1)
    return found


@SURFACE.tool(
    "memory_str_replace",
    title="Memory: str_replace",
    description="The memory tool's str_replace: replace text that occurs once in a file.",
    mutates=True,
    governed_by="edit_file",
)
def memory_str_replace(ctx: Context, args: StrReplaceInput) -> TextOutput:
    path, content = _existing_file(ctx, args.path)
    count = content.count(args.old_str)
    if count == 0:
        raise ToolError(
            "no_match",
            f"No replacement was performed, old_str `{args.old_str}` did not appear verbatim"
            f" in {args.path}.",
        )
    if count > 1:
        found = ", ".join(map(str, _occurrence_lines(content, args.old_str)))
        raise ToolError(
            "not_unique",
            f"No replacement was performed. Multiple occurrences of old_str `{args.old_str}`"
            f" in lines: {found}. Please ensure it is unique",
        )
    changed = content.count("\n", 0, content.find(args.old_str))
    new = content.replace(args.old_str, args.new_str)
    _save(ctx, path, new)
    lines = new.split("\n")
    start, end = max(0, changed - 2), min(len(lines), changed + 3)
    return TextOutput(
        result="The memory file has been edited. Here is the snippet showing the change (with"
        " line numbers):\n" + numbered(lines[start:end], start + 1)
    )


@SURFACE.tool(
    "memory_insert",
    title="Memory: insert",
    description="The memory tool's insert: text inserted after a line (0: at the top).",
    mutates=True,
    governed_by="edit_file",
)
def memory_insert(ctx: Context, args: InsertInput) -> TextOutput:
    path, content = _existing_file(ctx, args.path)
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not 0 <= args.insert_line <= len(lines):
        raise _error(
            f"Invalid `insert_line` parameter: {args.insert_line}. It should be within the"
            f" range [0, {len(lines)}]."
        )
    lines.insert(args.insert_line, args.insert_text.rstrip("\n"))
    new = "\n".join(lines)
    _save(ctx, path, new if new.endswith("\n") else new + "\n")
    return TextOutput(result=f"The file {args.path} has been edited.")


@SURFACE.tool(
    "memory_delete",
    title="Memory: delete",
    description="The memory tool's delete: a file, or a directory with all it holds.",
    mutates=True,
    destructive=True,
    governed_by="delete_file",
)
def memory_delete(ctx: Context, args: PathInput) -> TextOutput:
    path = _resolve(ctx, args.path, write=True)
    if path == ROOT:
        raise _error("Cannot delete the /memories directory itself")
    kind = _kind(ctx, path)
    if kind not in (S_IFREG, S_IFDIR):
        raise ToolError("not_found", f"The path {args.path} does not exist")
    ctx.check_tree(path, write=True)
    ctx.ws.remove(path, recursive=kind == S_IFDIR)
    return TextOutput(result=f"Successfully deleted {args.path}")


@SURFACE.tool(
    "memory_rename",
    title="Memory: rename",
    description="The memory tool's rename: a file or directory to a path that does not exist.",
    mutates=True,
    destructive=True,
    governed_by="move_file",
)
def memory_rename(ctx: Context, args: RenameInput) -> TextOutput:
    old = _resolve(ctx, args.old_path, write=True)
    new = _resolve(ctx, args.new_path, write=True)
    if old == ROOT:
        raise _error("Cannot rename the /memories directory itself")
    if _kind(ctx, new) is not None or new == ROOT:
        raise ToolError("exists", f"The destination {args.new_path} already exists")
    ctx.check_tree(old, write=True)
    # The reference makes the destination's directories before it moves, and keeps them
    # when the move then fails: so does this (the call's change, with a failed result).
    _make_parents(ctx, new, args.new_path)
    try:
        ctx.ws.rename(old, new)
    except FileNotFoundError:
        return TextOutput(result=f"The path {args.old_path} does not exist", failed=True)
    except OSError as exc:
        return TextOutput(
            result=f"Cannot rename {args.old_path} to {args.new_path}: {exc.strerror}",
            failed=True,
        )
    # what was in a directory now stands at new paths, which the policy must accept as well
    ctx.check_tree(new, write=True)
    return TextOutput(result=f"Successfully renamed {args.old_path} to {args.new_path}")


@SURFACE.tool(
    "memory_clear",
    title="Memory: clear",
    description="Remove every memory (the SDK's clear_all_memory).",
    mutates=True,
    destructive=True,
    governed_by="delete_file",
)
def memory_clear(ctx: Context, args: Input) -> TextOutput:
    ctx.check_tree(ROOT, write=True)
    if ctx.ws.exists(ROOT):
        ctx.ws.remove(ROOT, recursive=True)
    ctx.ws.mkdir(ROOT, parents=True)
    return TextOutput(result="All memory cleared")


def _dump(command: Any) -> dict[str, Any]:
    values: dict[str, Any] = command.to_dict()
    values.pop("command", None)
    return values


class AgentFSMemoryTool(Flushing, BetaAbstractMemoryTool):
    """The memory tool over ``ws`` (its ``/memories`` directory), every command through a
    ``Toolset`` (``toolset``): the policy is ``adapter_policy()`` unless given; given a
    ``Toolset`` instead, its thread, policy and audit log (``toolset_for``)."""

    def __init__(
        self,
        ws: WorkspaceAPI | Toolset,
        *,
        thread: str = "main",
        actor: str | None = ACTOR,
        policy: Policy | None = None,
        approve: Approve | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.toolset = toolset_for(
            ws, surface=SURFACE, thread=thread, actor=actor, policy=policy, approve=approve
        )

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> BetaFunctionToolResultType:
        return run(self.toolset, "memory_view", _dump(command))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> BetaFunctionToolResultType:
        return run(self.toolset, "memory_create", _dump(command))

    def str_replace(
        self, command: BetaMemoryTool20250818StrReplaceCommand
    ) -> BetaFunctionToolResultType:
        return run(self.toolset, "memory_str_replace", _dump(command))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> BetaFunctionToolResultType:
        return run(self.toolset, "memory_insert", _dump(command))

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> BetaFunctionToolResultType:
        return run(self.toolset, "memory_delete", _dump(command))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> BetaFunctionToolResultType:
        return run(self.toolset, "memory_rename", _dump(command))

    def clear_all_memory(self) -> BetaFunctionToolResultType:
        return run(self.toolset, "memory_clear", {})


class AsyncAgentFSMemoryTool(Flushing, BetaAsyncAbstractMemoryTool):
    """``AgentFSMemoryTool`` for the async tool runner. Each command runs in place, on the
    event loop's thread: a workspace handle belongs to the thread that opened it."""

    def __init__(
        self,
        ws: WorkspaceAPI | Toolset,
        *,
        thread: str = "main",
        actor: str | None = ACTOR,
        policy: Policy | None = None,
        approve: Approve | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.sync = AgentFSMemoryTool(
            ws, thread=thread, actor=actor, policy=policy, approve=approve
        )
        self.toolset = self.sync.toolset

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> BetaFunctionToolResultType:
        return self.sync.view(command)

    async def create(
        self, command: BetaMemoryTool20250818CreateCommand
    ) -> BetaFunctionToolResultType:
        return self.sync.create(command)

    async def str_replace(
        self, command: BetaMemoryTool20250818StrReplaceCommand
    ) -> BetaFunctionToolResultType:
        return self.sync.str_replace(command)

    async def insert(
        self, command: BetaMemoryTool20250818InsertCommand
    ) -> BetaFunctionToolResultType:
        return self.sync.insert(command)

    async def delete(
        self, command: BetaMemoryTool20250818DeleteCommand
    ) -> BetaFunctionToolResultType:
        return self.sync.delete(command)

    async def rename(
        self, command: BetaMemoryTool20250818RenameCommand
    ) -> BetaFunctionToolResultType:
        return self.sync.rename(command)

    async def clear_all_memory(self) -> BetaFunctionToolResultType:
        return self.sync.clear_all_memory()
