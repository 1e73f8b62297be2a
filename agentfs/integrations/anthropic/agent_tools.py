"""The ``agent_toolset_20260401`` tools (``bash``, ``read``, ``write``, ``edit``, ``glob``,
``grep``) over a workspace, with the names, schemas and result texts of the SDK's reference
``beta_agent_toolset_20260401(ctx)``, whose working directory is here the workspace's root.

``read``, ``write`` and ``edit`` are ``read_file``, ``write_file`` and ``edit_file`` to the
policy; ``glob`` and ``grep`` are ``glob`` and ``grep``; ``bash`` is ``execute_command``, and
runs the command with ``/bin/bash`` in the mounted workspace, sandboxed, after a snapshot.
``grep`` answers as the reference does where ``rg`` is installed (ripgrep's layout, hidden
files skipped), with agentfs's RE2 grep. ``agent_toolset(ws)`` gives tools the sync tool
runner takes (the reference's are async only); ``async_agent_toolset(ws)`` the async twins.
"""

from __future__ import annotations

import base64
import errno
import fnmatch
import functools
import posixpath
import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Any

from anthropic.lib.tools import (
    BetaAsyncBuiltinFunctionTool,
    BetaBuiltinFunctionTool,
    BetaFunctionToolResultType,
)
from anthropic.types.beta import (
    BetaManagedAgentsAgentToolset20260401BashInput,
    BetaManagedAgentsAgentToolset20260401EditInput,
    BetaManagedAgentsAgentToolset20260401GlobInput,
    BetaManagedAgentsAgentToolset20260401GrepInput,
    BetaManagedAgentsAgentToolset20260401ReadInput,
    BetaManagedAgentsAgentToolset20260401WriteInput,
    BetaToolParam,
)
from pydantic import BaseModel

from agentfs.core.inodes import S_IFDIR, S_IFLNK, S_IFMT, S_IFREG
from agentfs.integrations.anthropic.common import (
    ACTOR,
    SURFACE,
    Input,
    TextOutput,
    run,
)
from agentfs.integrations.toolsets import toolset_for
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.commands import ExecuteCommandInput, execute_command
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.policy import Policy
from agentfs.tools.toolset import Approve, Toolset

MAX_FILE_BYTES = 256 * 1024
MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024
MAX_PDF_BYTES = 20 * 1024 * 1024
MEDIA_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
}
BASH_TIMEOUT_S = 120.0
BASH_OUTPUT_BYTES = 100 * 1024
GREP_OUTPUT_LIMIT = 100 * 1024
GLOB_RESULT_LIMIT = 200
WALK_MAX_ENTRIES = 50_000
NOT_TEXT = "(binary files are only supported for image/PDF extensions)"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")

#: Each tool's description and schema, as the reference declares them.
SCHEMAS: dict[str, tuple[str, type[BaseModel]]] = {
    "bash": (
        "Run a command in a persistent bash shell.",
        BetaManagedAgentsAgentToolset20260401BashInput,
    ),
    "read": (
        "Read a file rooted at the working directory.",
        BetaManagedAgentsAgentToolset20260401ReadInput,
    ),
    "write": (
        "Write a file, creating parent directories as needed.",
        BetaManagedAgentsAgentToolset20260401WriteInput,
    ),
    "edit": (
        "Replace text in a file by exact string match.",
        BetaManagedAgentsAgentToolset20260401EditInput,
    ),
    "glob": (
        "List files matching a glob pattern, newest first.",
        BetaManagedAgentsAgentToolset20260401GlobInput,
    ),
    "grep": (
        "Search file contents for a regular expression.",
        BetaManagedAgentsAgentToolset20260401GrepInput,
    ),
}


def _fail(message: str) -> ToolError:
    return ToolError("invalid_argument", message)


_REASONS = {
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "not a directory",
    errno.EISDIR: "is a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EEXIST: "file already exists",
    errno.ELOOP: "too many levels of symbolic links",
}


def _reason(exc: OSError) -> str:
    """An ``OSError`` in the reference's words."""
    return _REASONS.get(exc.errno or 0) or (exc.strerror or "i/o error").lower()


def _resolve(ctx: Context, op: str, raw: str, *, write: bool = False) -> str:
    """``raw`` against the working directory (the root), symlinks followed, then judged by
    the policy."""
    absolute = raw if raw.startswith("/") else "/" + raw
    try:
        real = ctx.ws.realpath(posixpath.normpath(absolute).replace("//", "/"))
    except OSError as exc:
        raise _fail(f"{op}: path {raw!r}: {_reason(exc)}") from None
    return ctx.path(real, write=write)


def _stat_file(ctx: Context, op: str, path: str, shown: str) -> int:
    """The size of the regular file at ``path``."""
    try:
        st = ctx.ws.stat(path)
    except OSError as exc:
        raise ToolError("not_found", f"{op}: {shown}: {_reason(exc)}") from None
    if st.st_mode & S_IFMT != S_IFREG:
        raise ToolError("is_directory", f"{op}: {shown}: not a regular file")
    return st.st_size


class ReadInput(Input):
    file_path: str
    view_range: list[int] | None = None


class WriteInput(Input):
    file_path: str
    content: str


class EditInput(Input):
    file_path: str
    old_string: str
    new_string: str
    replace_all: bool | None = None


class FindInput(Input):
    pattern: str
    path: str | None = None


class BashInput(Input):
    command: str | None = None
    restart: bool | None = None
    timeout_ms: int | None = None


@SURFACE.tool(
    "read",
    title="Read",
    description=SCHEMAS["read"][0],
    tracks_reads=True,
    governed_by="read_file",
)
def read(ctx: Context, args: ReadInput) -> TextOutput:
    shown, view = args.file_path, args.view_range
    path = _resolve(ctx, "read", shown)
    if view and len(view) != 2:
        raise _fail("read: view_range must be [start_line, end_line]")
    size = _stat_file(ctx, "read", path, shown)
    media = MEDIA_TYPES.get(PurePosixPath(path).suffix.lower())
    if media is not None:
        if view:
            raise _fail("read: view_range is not supported for image/PDF files")
        return _media(ctx, path, shown, size, media)
    data = ctx.ws.read(path)
    if size > MAX_FILE_BYTES:
        if not view:
            raise ToolError(
                "too_large",
                f"read: {shown} is {size} bytes, exceeds {MAX_FILE_BYTES}-byte limit. Use the"
                " view_range parameter to read specific line ranges, e.g. view_range: [1, 500].",
            )
        text = _large_range(data, shown, view[0], view[1])
        ctx.check_read_size(len(text.encode("utf-8")), path, "read fewer lines (view_range)")
        return TextOutput(result=text)
    text = _decode(
        data,
        f"read: {shown}: not valid UTF-8 text {NOT_TEXT}",
    )
    if view:
        lines = text.split("\n")
        start, end = max(0, view[0] - 1), view[1] if view[1] > 0 else len(lines)
        text = "\n".join(lines[start:end])
    ctx.check_read_size(len(text.encode("utf-8")), path, "read fewer lines (view_range)")
    return TextOutput(result=text)


def _decode(data: bytes, message: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _fail(message) from None


def _large_range(data: bytes, shown: str, first: int, last: int) -> str:
    """Lines ``first..last`` of a file over the size cap, the cap applying to them."""
    start, end = max(0, first - 1), last if last > 0 else None
    if end is not None and end <= start:
        return ""
    selected = b"\n".join(data.split(b"\n")[start:end])
    if len(selected) > MAX_FILE_BYTES:
        if end is not None and end - start == 1:
            raise ToolError(
                "too_large",
                f"read: line {start + 1} of {shown} alone exceeds {MAX_FILE_BYTES}-byte limit."
                " The read tool cannot return part of a line, so view_range cannot narrow this"
                " further.",
            )
        raise ToolError(
            "too_large",
            f"read: view_range [{first}, {last}] of {shown} exceeds {MAX_FILE_BYTES}-byte"
            " limit. Narrow the view_range to read a smaller portion.",
        )
    return _decode(
        selected,
        f"read: {shown}: not valid UTF-8 text {NOT_TEXT}",
    )


def _media(ctx: Context, path: str, shown: str, size: int, media: str) -> TextOutput:
    pdf = media == "application/pdf"
    limit = MAX_PDF_BYTES if pdf else (MAX_IMAGE_BASE64_BYTES // 4) * 3
    if size > limit:
        raise ToolError(
            "too_large",
            f"read: {shown} is {size} bytes, exceeds {limit}-byte limit for image/PDF files.",
        )
    ctx.check_read_size(size, path, "it cannot be read here")
    data = base64.standard_b64encode(ctx.ws.read(path)).decode("ascii")
    source = {"type": "base64", "media_type": media, "data": data}
    block = {"type": "document" if pdf else "image", "source": source}
    return TextOutput(result=f"[{block['type']} {shown}]", blocks=[block])


@SURFACE.tool(
    "write",
    title="Write",
    description=SCHEMAS["write"][0],
    mutates=True,
    destructive=True,
    governed_by="write_file",
)
def write(ctx: Context, args: WriteInput) -> TextOutput:
    shown = args.file_path
    path = _resolve(ctx, "write", shown, write=True)
    parent = posixpath.dirname(path)
    try:
        kind: int | None = ctx.ws.stat(parent).st_mode & S_IFMT
    except OSError:
        kind = None
    try:
        if kind is None:
            ctx.ws.mkdir(parent, parents=True, exist_ok=True)
        elif kind != S_IFDIR:
            raise FileExistsError(errno.EEXIST, "File exists", parent)
        data = args.content.encode("utf-8")
        ctx.check_size(len(data), path)
        ctx.write(path, data)
    except OSError as exc:
        raise ToolError("not_directory", f"write: {shown}: {_reason(exc)}") from None
    return TextOutput(result=f"wrote {len(args.content)} bytes to {shown}")


@SURFACE.tool(
    "edit",
    title="Edit",
    description=SCHEMAS["edit"][0],
    mutates=True,
    destructive=True,
    governed_by="edit_file",
)
def edit(ctx: Context, args: EditInput) -> TextOutput:
    shown = args.file_path
    path = _resolve(ctx, "edit", shown, write=True)
    size = _stat_file(ctx, "edit", path, shown)
    if size > MAX_FILE_BYTES:
        raise ToolError(
            "too_large",
            f"edit: {shown} is {size} bytes, exceeds {MAX_FILE_BYTES}-byte limit. The edit"
            " tool loads the whole file and cannot modify a file this large.",
        )
    text = _decode(
        ctx.ws.read(path), f"edit: {shown}: not valid UTF-8 text (cannot edit binary files)"
    )
    count = text.count(args.old_string)
    if count == 0:
        raise ToolError("no_match", f"edit: old_string not found in {shown}")
    if not args.replace_all and count > 1:
        raise ToolError(
            "not_unique", f"edit: old_string appears {count} times in {shown} (must be unique)"
        )
    once = -1 if args.replace_all else 1
    data = text.replace(args.old_string, args.new_string, once).encode("utf-8")
    ctx.check_size(len(data), path)
    ctx.write(path, data)
    return TextOutput(result=f"edited {shown} ({count if args.replace_all else 1} replacement(s))")


# --- glob: pathlib's Path.glob over the workspace --------------------------------------------


class _Tree:
    """The workspace as one glob sees it: each directory's entries listed once with their
    file types (``scandir``: one query a directory, no ``stat`` an entry); a symlink is
    followed, and a time read, only where the answer needs it."""

    def __init__(self, ws: WorkspaceAPI) -> None:
        self.ws = ws
        self._listed: dict[str, dict[str, int]] = {}

    def entries(self, path: str) -> dict[str, int]:
        """``path``'s entries (name: mode), sorted; none when it is not a directory."""
        listed = self._listed.get(path)
        if listed is None:
            try:
                listed = {entry.name: entry.mode for entry in self.ws.scandir(path)}
            except OSError:
                listed = {}
            self._listed[path] = listed
        return listed

    def mode(self, path: str) -> int | None:
        """What is at ``path`` (a symlink followed), or None for nothing."""
        if path == "/":
            return S_IFDIR
        parent, name = posixpath.split(path)
        mode = self.entries(parent).get(name)
        if mode is None or mode & S_IFMT != S_IFLNK:
            return mode
        try:
            return self.ws.stat(path).st_mode
        except OSError:  # a dangling link leads nowhere
            return None

    def is_dir(self, path: str) -> bool:
        mode = self.mode(path)
        return mode is not None and mode & S_IFMT == S_IFDIR

    def directories(self, top: str) -> Iterator[str]:
        """``top`` and every directory below it, symlinks not followed (``**``), each before
        what it holds (a stack: a tree may be deeper than Python's recursion limit)."""
        stack = [top]
        while stack:
            here = stack.pop()
            yield here
            below = [n for n, mode in self.entries(here).items() if mode & S_IFMT == S_IFDIR]
            stack.extend(_child(here, name) for name in reversed(below))


def _child(path: str, name: str) -> str:
    return f"{path.rstrip('/')}/{name}"


def _mtime(ws: WorkspaceAPI, path: str) -> int:
    try:
        return ws.stat(path).st_mtime_ns
    except OSError:
        return 0


def _select(tree: _Tree, path: str, parts: tuple[str, ...]) -> Iterator[str]:
    """The paths below ``path`` that ``parts`` select, as pathlib's selectors do."""
    if not parts or parts[0] == "":
        yield path
        return
    part, rest = parts[0], parts[1:]
    if part == "**":
        seen: set[str] = set()
        for directory in tree.directories(path):
            for found in _select(tree, directory, rest):
                if found not in seen:
                    seen.add(found)
                    yield found
    elif any(c in part for c in "*?["):
        match = _matcher(part)
        for name in tree.entries(path):
            child = _child(path, name)
            if match(name) and (not rest or tree.is_dir(child)):
                yield from _select(tree, child, rest)
    else:
        child = _child(path, part)
        if tree.is_dir(child) if rest else tree.mode(child) is not None:
            yield from _select(tree, child, rest)


@functools.lru_cache(maxsize=64)
def _matcher(part: str) -> Callable[[str], re.Match[str] | None]:
    """A name pattern (``*.py``) as fnmatch reads it, compiled once."""
    return re.compile(fnmatch.translate(part)).fullmatch


@SURFACE.tool("glob", title="Glob", description=SCHEMAS["glob"][0], governed_by="glob")
def glob(ctx: Context, args: FindInput) -> TextOutput:
    pattern = args.pattern
    if pattern.startswith("/"):
        raise _fail(
            "glob: absolute pattern not permitted; pass a relative pattern (and optionally path)"
        )
    if ".." in PurePosixPath(pattern).parts:
        raise _fail("glob: '..' is not permitted in the pattern")
    root = _resolve(ctx, "glob", args.path) if args.path else "/"
    if not pattern:
        raise _fail("glob: Unacceptable pattern: ''")
    parts = [p for p in pattern.split("/") if p and p != "."]
    if pattern.endswith("/"):
        parts.append("")
    if not parts:
        raise _fail(f"glob: nothing to match in {pattern!r}")
    if any("**" in p and p != "**" for p in parts):
        raise _fail("glob: Invalid pattern: '**' can only be an entire path component")
    found: list[str] = []
    tree = _Tree(ctx.ws)
    if tree.is_dir(root):
        for path in _select(tree, root, tuple(parts)):
            if ctx.visible(path):
                found.append(path)
                if len(found) >= WALK_MAX_ENTRIES:
                    break
    if not found:
        return TextOutput(result="no matches")
    found.sort(key=lambda p: _mtime(ctx.ws, p), reverse=True)
    return TextOutput(result="\n".join(found[:GLOB_RESULT_LIMIT]))


# --- grep: ripgrep's answer, as the reference gives it ---------------------------------------


def _hidden(path: str, top: str) -> bool:
    below = path[len(top) :] if top != "/" else path
    return any(part.startswith(".") for part in below.split("/") if part)


@SURFACE.tool("grep", title="Grep", description=SCHEMAS["grep"][0], governed_by="grep")
def grep(ctx: Context, args: FindInput) -> TextOutput:
    top = _resolve(ctx, "grep", args.path) if args.path else "/"
    try:
        one_file = ctx.ws.stat(top).st_mode & S_IFMT != S_IFDIR
        result = ctx.ws.grep(args.pattern, top)
    except FileNotFoundError:
        raise _fail(f"grep: rg failed: {top}: No such file or directory (os error 2)\n") from None
    except OSError as exc:
        raise _fail(f"grep: rg failed: regex parse error: {exc.strerror}") from None
    lines = [
        (f"{hit.line}:{hit.text}" if one_file else f"{hit.path}:{hit.line}:{hit.text}")
        for hit in result.lines
        if hit.is_match and not _hidden(hit.path, top) and ctx.visible(hit.path)
    ]
    if not lines:
        return TextOutput(result="no matches")
    out = "\n".join(lines) + "\n"
    if len(out) > GREP_OUTPUT_LIMIT:
        out = out[:GREP_OUTPUT_LIMIT] + f"\n[output truncated at {GREP_OUTPUT_LIMIT} bytes]"
    return TextOutput(result=out)


# --- bash: execute_command in the mounted workspace ------------------------------------------


@SURFACE.tool(
    "bash",
    title="Bash",
    description=SCHEMAS["bash"][0],
    mutates=True,
    destructive=True,
    elsewhere=True,
    governed_by="execute_command",
)
def bash(ctx: Context, args: BashInput) -> TextOutput:
    if args.restart:
        return TextOutput(result="bash session restarted")
    if not args.command:
        raise _fail("bash: command is required")
    timeout = args.timeout_ms / 1000 if args.timeout_ms else BASH_TIMEOUT_S
    line = f"/bin/bash --noprofile --norc -c {shlex.quote(args.command)} </dev/null 2>&1"
    ran = execute_command(
        ctx,
        ExecuteCommandInput(
            command=line,
            timeout_ms=max(1, int(timeout * 1000)),
            max_output_kb=BASH_OUTPUT_BYTES // 1024,
        ),
    )
    if ran.timed_out:
        return TextOutput(result=f"bash: bash command timed out after {timeout}s", failed=True)
    out = _ANSI.sub("", ran.stdout + ran.stderr).rstrip("\n")
    if ran.stdout_truncated:
        out = "[output truncated]\n" + out
    return TextOutput(result=out, failed=ran.exit_code != 0)


# --- the SDK's tools ---------------------------------------------------------------------------

NAMES = ("bash", "read", "write", "edit", "glob", "grep")


def _param(name: str) -> BetaToolParam:
    description, model = SCHEMAS[name]
    return {"name": name, "description": description, "input_schema": model.model_json_schema()}


class AgentTool(BetaBuiltinFunctionTool):
    """One ``agent_toolset_20260401`` tool over a workspace, for the sync tool runner."""

    def __init__(self, toolset: Toolset, name: str) -> None:
        self.toolset = toolset
        self._param = _param(name)

    def to_dict(self) -> BetaToolParam:
        return self._param

    def call(self, input: object) -> BetaFunctionToolResultType:
        arguments: Any = input if isinstance(input, dict) else {"__invalid__": repr(input)}
        return run(self.toolset, self._param["name"], arguments)


class AsyncAgentTool(BetaAsyncBuiltinFunctionTool):
    """``AgentTool`` for the async tool runner: the call runs in place, on the event loop's
    thread, as a workspace handle belongs to the thread that opened it."""

    def __init__(self, toolset: Toolset, name: str) -> None:
        self.sync = AgentTool(toolset, name)

    def to_dict(self) -> BetaToolParam:
        return self.sync.to_dict()

    async def call(self, input: object) -> BetaFunctionToolResultType:
        return self.sync.call(input)


def agent_toolset(
    ws: WorkspaceAPI | Toolset,
    *,
    thread: str = "main",
    actor: str | None = ACTOR,
    policy: Policy | None = None,
    approve: Approve | None = None,
    names: tuple[str, ...] = NAMES,
) -> list[AgentTool]:
    """The ``agent_toolset_20260401`` tools over ``ws`` (``names``: only these), for
    ``client.beta.messages.tool_runner``; the policy is ``adapter_policy()`` unless given."""
    toolset = toolset_for(
        ws, surface=SURFACE, thread=thread, actor=actor, policy=policy, approve=approve
    )
    return [AgentTool(toolset, name) for name in names]


def async_agent_toolset(
    ws: WorkspaceAPI | Toolset,
    *,
    thread: str = "main",
    actor: str | None = ACTOR,
    policy: Policy | None = None,
    approve: Approve | None = None,
    names: tuple[str, ...] = NAMES,
) -> list[AsyncAgentTool]:
    """``agent_toolset`` for the async tool runner (``AsyncAnthropic``)."""
    toolset = toolset_for(
        ws, surface=SURFACE, thread=thread, actor=actor, policy=policy, approve=approve
    )
    return [AsyncAgentTool(toolset, name) for name in names]
