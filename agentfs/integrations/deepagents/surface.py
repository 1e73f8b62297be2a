"""The tools behind ``AgentFSBackend``: deepagents' file operations over a workspace, as a
``Surface`` a ``Toolset`` runs (policy, audit linked to versions, read tracking).

Each tool answers what deepagents' ``FilesystemBackend(root_dir, virtual_mode=True)`` answers
for the same files (tests/integrations/test_deepagents_differential.py): the window and
pagination of a read, the empty-file reminder, the messages of a failed edit (deepagents'
own ``perform_string_replacement``), glob's contract (deepagents' own matcher: a bare
pattern matches names at any depth), and ripgrep's view of a tree for grep (hidden names
and binary files skipped below the searched directory; a file named directly is searched
whole). A failure is a ``ToolError`` whose message is deepagents' error text: the call is
audited as failed and changes nothing.
"""

from __future__ import annotations

import base64
import errno
import functools
import os
import stat as statmod
from collections.abc import Callable
from datetime import datetime
from typing import Any

from deepagents.backends.protocol import FileInfo, GrepMatch
from deepagents.backends.utils import (
    MAX_VIDEO_INPUT_BYTES,
    InvalidGlobPatternError,
    _get_backend_read_file_type,
    check_empty_content,
    compile_grep_include_glob,
    perform_string_replacement,
    slice_read_response,
)
from pydantic import Field
from wcmatch import glob as wcglob

from agentfs.core import paths
from agentfs.core.inodes import Stat
from agentfs.search.lines import split_lines
from agentfs.tools.commands import ExecuteCommandInput, execute_command
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError, from_exception
from agentfs.tools.spec import Surface, ToolInput, ToolOutput

DEEPAGENTS = Surface("deepagents")


def virtual(ctx: Context, key: str, *, write: bool = False) -> str:
    """``key`` as the workspace path deepagents' virtual mode makes of it (``/`` added in
    front, ``.`` and repeated slashes dropped), once the policy has accepted it. The backend
    has already refused ``..`` as deepagents does (``ValueError``)."""
    return ctx.path(key if key.startswith("/") else "/" + key, write=write)


def _stat(ctx: Context, path: str) -> Stat | None:
    """What ``path`` is, symlinks followed (deepagents' ``exists``), or None."""
    try:
        return ctx.ws.stat(path)
    except OSError:
        return None


def _modified(mtime_ns: int) -> str:
    """deepagents' ``modified_at``: the local time, naive, in ISO form."""
    return datetime.fromtimestamp(mtime_ns / 1e9).isoformat()


# --- ls ----------------------------------------------------------------------------------------


class LsInput(ToolInput):
    path: str


class LsOutput(ToolOutput):
    entries: list[dict[str, Any]]


@DEEPAGENTS.tool(
    "ls", title="List a directory", description="Direct children of a directory.", governed_by="ls"
)
def ls(ctx: Context, args: LsInput) -> LsOutput:
    path = virtual(ctx, args.path)
    st = _stat(ctx, path)
    if st is None:
        raise ToolError("not_found", f"Path '{args.path}': path_not_found")
    if not statmod.S_ISDIR(st.st_mode):
        raise ToolError("not_directory", f"Path '{args.path}': not_a_directory")
    entries: list[FileInfo] = []
    for name, child in ctx.ws.readdir_plus(path):
        where = paths.join(path, name)
        if statmod.S_ISLNK(child.st_mode):
            followed = _stat(ctx, where)
            if followed is None:
                continue
            child = followed
        if not ctx.visible(where):
            continue
        if statmod.S_ISREG(child.st_mode):
            entries.append(
                {
                    "path": where,
                    "is_dir": False,
                    "size": child.st_size,
                    "modified_at": _modified(child.st_mtime_ns),
                }
            )
        elif statmod.S_ISDIR(child.st_mode):
            entries.append(
                {
                    "path": where + "/",
                    "is_dir": True,
                    "size": 0,
                    "modified_at": _modified(child.st_mtime_ns),
                }
            )
    entries.sort(key=lambda entry: entry["path"])
    return LsOutput(entries=list(map(dict, entries)))


# --- read_file ---------------------------------------------------------------------------------

#: deepagents' choice between reading a path as text and as base64, by its extension: its
#: own function, remembered per path (it builds two ``PurePosixPath`` objects a call).
_read_type = functools.lru_cache(maxsize=4096)(_get_backend_read_file_type)


class ReadInput(ToolInput):
    file_path: str
    offset: int = 0
    limit: int = 2000


class ReadOutput(ToolOutput):
    file_data: dict[str, str] | None = None
    total_lines: int | None = None
    start_line: int | None = None
    end_line: int | None = None
    next_offset: int | None = None
    no_lines_requested: bool = False


@DEEPAGENTS.tool(
    "read_file",
    title="Read a file",
    description="A window of a text file's lines, or a media file whole (base64).",
    tracks_reads=True,
    governed_by="read_file",
)
def read_file(ctx: Context, args: ReadInput) -> ReadOutput:
    path = virtual(ctx, args.file_path)
    kind = _read_type(args.file_path)
    try:
        if kind == "video" and ctx.ws.stat(path).st_size > MAX_VIDEO_INPUT_BYTES:
            raise ToolError(
                "too_large",
                f"Video file exceeds maximum input size of {MAX_VIDEO_INPUT_BYTES} bytes",
            )
        data = ctx.ws.read(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise ToolError("not_found", f"File '{args.file_path}' not found") from None
    if kind != "text":
        ctx.check_read_size(len(data), path, "it cannot be read here")
        encoded = base64.standard_b64encode(data).decode("ascii")
        return ReadOutput(file_data={"content": encoded, "encoding": "base64"})
    text = _text(data, f"Error reading file '{args.file_path}'")
    empty = check_empty_content(text)
    if empty is not None:
        return ReadOutput(file_data={"content": empty, "encoding": "utf-8"})
    window = slice_read_response({"content": text, "encoding": "utf-8"}, args.offset, args.limit)
    if window.error is not None:
        raise ToolError("invalid_argument", window.error)
    shown = window.file_data["content"] if window.file_data else ""
    ctx.check_read_size(len(shown.encode("utf-8")), path, "read fewer lines (offset, limit)")
    return ReadOutput(
        file_data=dict(window.file_data or {}),
        total_lines=window.total_lines,
        start_line=window.start_line,
        end_line=window.end_line,
        next_offset=window.next_offset,
        no_lines_requested=window.no_lines_requested,
    )


def _text(data: bytes, failing: str) -> str:
    """``data`` as deepagents reads a text file: UTF-8, every CRLF and CR made a LF."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError("invalid_argument", f"{failing}: {exc}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _failed(ctx: Context, failing: str, exc: OSError, path: str) -> ToolError:
    """A failed change in deepagents' words: what failed, then the error the system gives
    the reference, whose ``mkdir -p`` of the parent meets a file first (``EEXIST`` where the
    parent itself is one, ``ENOTDIR`` below one)."""
    number, where = exc.errno or errno.EIO, path
    if number == errno.ENOTDIR:
        parent = paths.parent_and_name(path)[0]
        where = _first_not_directory(ctx, parent)
        number = errno.EEXIST if where == parent else errno.ENOTDIR
    code = from_exception(OSError(number, os.strerror(number), where)).code
    return ToolError(code, f"{failing}: [Errno {number}] {os.strerror(number)}: '{where}'")


def _first_not_directory(ctx: Context, path: str) -> str:
    """The path just below the deepest directory on the way to ``path``: the first thing in
    the way of making ``path`` a directory."""
    parts = [part for part in path.split("/") if part]
    here = "/"
    for part in parts:
        here = paths.join(here, part)
        st = _stat(ctx, here)
        if st is None or not statmod.S_ISDIR(st.st_mode):
            return here
    return here


# --- write_file, edit_file, delete -------------------------------------------------------------


class WriteInput(ToolInput):
    file_path: str
    content: str


class WriteOutput(ToolOutput):
    path: str


@DEEPAGENTS.tool(
    "write_file",
    title="Write a file",
    description="Create a file or overwrite it, with its parent directories.",
    mutates=True,
    destructive=True,
    governed_by="write_file",
)
def write_file(ctx: Context, args: WriteInput) -> WriteOutput:
    failing = f"Error writing file '{args.file_path}'"
    path = virtual(ctx, args.file_path, write=True)
    try:
        data = args.content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError("invalid_argument", f"{failing}: {exc}") from None
    ctx.check_size(len(data), path)
    try:
        ctx.write(path, data, parents=True)
    except OSError as exc:
        raise _failed(ctx, failing, exc, path) from None
    return WriteOutput(path=args.file_path)


class EditInput(ToolInput):
    file_path: str
    old_string: str
    new_string: str
    replace_all: bool = False


class EditOutput(ToolOutput):
    path: str
    occurrences: int


@DEEPAGENTS.tool(
    "edit_file",
    title="Edit a file",
    description="Replace an exact string in a file (every occurrence with replace_all).",
    mutates=True,
    destructive=True,
    governed_by="edit_file",
)
def edit_file(ctx: Context, args: EditInput) -> EditOutput:
    failing = f"Error editing file '{args.file_path}'"
    path = virtual(ctx, args.file_path, write=True)
    st = _stat(ctx, path)
    if st is None or not statmod.S_ISREG(st.st_mode):
        raise ToolError("not_found", f"Error: File '{args.file_path}' not found")
    text = _text(ctx.ws.read(path), failing)
    old = args.old_string.replace("\r\n", "\n").replace("\r", "\n")
    new = args.new_string.replace("\r\n", "\n").replace("\r", "\n")
    replaced = perform_string_replacement(text, old, new, args.replace_all)
    if isinstance(replaced, str):
        raise ToolError("no_match", replaced)
    edited, occurrences = replaced
    try:
        data = edited.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError("invalid_argument", f"{failing}: {exc}") from None
    ctx.check_size(len(data), path)
    try:
        ctx.write(path, data)
    except OSError as exc:
        raise _failed(ctx, failing, exc, path) from None
    return EditOutput(path=args.file_path, occurrences=occurrences)


class DeleteInput(ToolInput):
    file_path: str


class DeleteOutput(ToolOutput):
    path: str


@DEEPAGENTS.tool(
    "delete",
    title="Delete a path",
    description="Delete a file, or a directory with everything in it.",
    mutates=True,
    destructive=True,
    governed_by="delete_file",
)
def delete(ctx: Context, args: DeleteInput) -> DeleteOutput:
    path = virtual(ctx, args.file_path, write=True)
    try:
        st = ctx.ws.lstat(path)
    except OSError:
        raise ToolError("not_found", f"Error: '{args.file_path}' not found") from None
    if statmod.S_ISDIR(st.st_mode):
        ctx.check_tree(path, write=True)
        # deepagents removes the root directory itself; a workspace keeps its root, emptied
        targets = (
            [paths.join(path, name) for name in ctx.ws.listdir(path)] if path == "/" else [path]
        )
        for target in targets:
            ctx.ws.remove(target, recursive=True)
    else:
        ctx.ws.remove(path)
    return DeleteOutput(path=args.file_path)


# --- glob, grep --------------------------------------------------------------------------------


class GlobInput(ToolInput):
    pattern: str
    path: str | None = None


class GlobOutput(ToolOutput):
    matches: list[dict[str, Any]]


def _matcher(pattern: str) -> Any:
    """deepagents' own glob matcher (a bare pattern matches names at any depth); a pattern it
    refuses is a failed call whose message is its own."""
    try:
        return compile_grep_include_glob(pattern)
    except InvalidGlobPatternError as exc:
        raise ToolError("invalid_argument", str(exc)) from None


def _files_below(ctx: Context, base: str) -> list[tuple[str, int, int]]:
    """Every regular file below directory ``base`` (symlinks to one included, as deepagents'
    walk sees them): its path relative to ``base``, size and mtime (ns)."""
    prefix = "/" if base == "/" else base + "/"
    found = []
    for match in ctx.ws.glob("**", base, sort="name"):
        if match.type == "file":
            found.append((match.path[len(prefix) :], match.size, match.mtime_ns))
        elif match.type == "symlink":
            st = _stat(ctx, match.path)
            if st is not None and statmod.S_ISREG(st.st_mode):
                found.append((match.path[len(prefix) :], st.st_size, st.st_mtime_ns))
    return found


@DEEPAGENTS.tool(
    "glob",
    title="Find files",
    description="Files below a directory whose path matches a glob pattern.",
    governed_by="glob",
)
def glob(ctx: Context, args: GlobInput) -> GlobOutput:
    matches = _matcher(args.pattern)
    base = "/" if args.path in (None, "/") else virtual(ctx, args.path)
    st = _stat(ctx, base)
    if st is None or not statmod.S_ISDIR(st.st_mode):
        return GlobOutput(matches=[])
    prefix = "/" if base == "/" else base + "/"
    found: list[FileInfo] = [
        {"path": prefix + rel, "is_dir": False, "size": size, "modified_at": _modified(mtime_ns)}
        for rel, size, mtime_ns in _files_below(ctx, base)
        if matches(rel) and ctx.visible(prefix + rel)
    ]
    found.sort(key=lambda info: info["path"])
    return GlobOutput(matches=list(map(dict, found)))


class GrepInput(ToolInput):
    pattern: str
    path: str | None = None
    glob: str | None = None
    max_count: int | None = Field(None, ge=0)


class GrepOutput(ToolOutput):
    matches: list[dict[str, Any]]
    truncated: bool = False


@DEEPAGENTS.tool(
    "grep",
    title="Search file contents",
    description="Lines holding a literal text, in the files below a directory or in one file.",
    governed_by="grep",
)
def grep(ctx: Context, args: GrepInput) -> GrepOutput:
    """ripgrep's answer, as deepagents runs it (``rg --json -F``): below a directory, binary
    files are skipped, ``glob`` filters, and hidden names are skipped unless ``glob`` names
    them; a file named directly is searched whole. The workspace's trigram index finds the
    text files; the files it skips as binary or not UTF-8 are read here as ripgrep reads
    them: up to the line holding the first NUL byte, where it stops (a line that is not UTF-8
    is reported with an empty text, as deepagents reads ripgrep's output)."""
    if args.glob is not None:
        _matcher(args.glob)  # deepagents refuses what its own matcher refuses
    key = args.path or "."
    if ".." in key or "\0" in key:
        return GrepOutput(matches=[])  # deepagents finds nothing where it may not look
    base = virtual(ctx, key)
    st = _stat(ctx, base)
    if st is None:
        return GrepOutput(matches=[])
    needle = args.pattern.encode("utf-8")
    if not statmod.S_ISDIR(st.st_mode):
        found = _lines_holding(needle, base, ctx.ws.read(base))
    else:
        found = _grep_tree(ctx, args.pattern, needle, base, args.glob)
    found.sort(key=lambda match: (match["path"], match["line"]))
    if args.max_count is not None and len(found) > args.max_count:
        return GrepOutput(matches=list(map(dict, found[: args.max_count])), truncated=True)
    return GrepOutput(matches=list(map(dict, found)))


def _grep_tree(
    ctx: Context, pattern: str, needle: bytes, base: str, include: str | None
) -> list[GrepMatch]:
    prefix = "/" if base == "/" else base + "/"
    included = None if include is None else _ripgrep_glob(include)

    def searched(path: str) -> bool:
        *folders, name = path[len(prefix) :].split("/")
        for depth, folder in enumerate(folders, 1):
            if folder.startswith(".") and not (included and included("/".join(folders[:depth]))):
                return False  # a hidden directory the glob does not name is not entered
        if included is not None:
            return included(path[len(prefix) :]) and ctx.visible(path)
        return not name.startswith(".") and ctx.visible(path)

    result = ctx.ws.grep(pattern, base, fixed_strings=True)
    found: list[GrepMatch] = [
        {"path": line.path, "line": line.line, "text": line.text}
        for line in result.lines
        if searched(line.path)
    ]
    for path in result.skipped:
        if searched(path):
            found += _lines_holding(needle, path, _before_binary(ctx.ws.read(path)))
    return found


def _ripgrep_glob(pattern: str) -> Callable[[str], bool]:
    """ripgrep's ``--glob`` (gitignore's rules) as a test of a path relative to the searched
    directory: without a slash it names a file or directory at any depth, with one a path
    from the top; ``*`` and ``**`` match names starting with a dot too. deepagents' own
    matcher, used for ``glob``, does not let them: ripgrep is what its grep runs."""
    compiled = wcglob.compile(
        pattern.lstrip("/"), flags=wcglob.BRACE | wcglob.GLOBSTAR | wcglob.DOTMATCH
    )
    if "/" in pattern:
        return lambda rel: bool(compiled.match(rel))
    return lambda rel: bool(compiled.match(rel.rsplit("/", 1)[-1]))


def _before_binary(data: bytes) -> bytes:
    """The lines ripgrep searches in a file found below a directory: those before the line
    holding the first NUL byte."""
    nul = data.find(b"\0")
    return data if nul < 0 else data[: data.rfind(b"\n", 0, nul) + 1]


def _lines_holding(needle: bytes, path: str, data: bytes) -> list[GrepMatch]:
    """The lines of ``data`` (split at LF) that hold ``needle``."""
    found: list[GrepMatch] = []
    for number, line in enumerate(split_lines(data), 1):
        if needle in line:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                text = ""
            found.append({"path": path, "line": number, "text": text})
    return found


# --- execute -----------------------------------------------------------------------------------


class ExecuteInput(ToolInput):
    command: str = Field(min_length=1)
    timeout: int = Field(ge=1, le=3600)
    #: the caller chose ``timeout`` (the timeout's message then says so)
    chosen: bool = False
    max_output_bytes: int = Field(ge=1, le=10 * 1024 * 1024)


class ExecuteOutput(ToolOutput):
    output: str
    exit_code: int
    truncated: bool
    snapshot: str | None = Field(description="restore this snapshot to undo the command")


@DEEPAGENTS.tool(
    "execute",
    title="Run a shell command",
    description="Run a shell command in the workspace, mounted, sandboxed.",
    mutates=True,
    destructive=True,
    elsewhere=True,
    governed_by="execute_command",
)
def execute(ctx: Context, args: ExecuteInput) -> ExecuteOutput:
    """agentfs's ``execute_command`` (snapshot first, the mount, the sandbox, the policy's
    command rules), its result in the shape deepagents' ``LocalShellBackend`` gives: stdout,
    then each stderr line marked ``[stderr]``, the exit code after a non-zero exit."""
    ran = execute_command(
        ctx,
        ExecuteCommandInput(
            command=args.command,
            timeout_ms=args.timeout * 1000,
            max_output_kb=-(-args.max_output_bytes // 1024),
        ),
    )
    if ran.timed_out:
        advice = (
            " (custom timeout). The command may be stuck or require more time."
            if args.chosen
            else ". For long-running commands, re-run using the timeout parameter."
        )
        return ExecuteOutput(
            output=f"Error: Command timed out after {args.timeout} seconds{advice}",
            exit_code=124,
            truncated=False,
            snapshot=ran.snapshot,
        )
    parts = [ran.stdout] if ran.stdout else []
    if ran.stderr:
        parts += [f"[stderr] {line}" for line in ran.stderr.strip().split("\n")]
    output = "\n".join(parts) if parts else "<no output>"
    encoded = output.encode("utf-8")
    truncated = len(encoded) > args.max_output_bytes or ran.stdout_truncated or ran.stderr_truncated
    if len(encoded) > args.max_output_bytes:
        output = encoded[: args.max_output_bytes].decode("utf-8", errors="ignore")
        output += f"\n\n... Output truncated at {args.max_output_bytes} bytes."
    if ran.exit_code != 0:
        output = f"{output.rstrip()}\n\nExit code: {ran.exit_code}"
    return ExecuteOutput(
        output=output, exit_code=ran.exit_code, truncated=truncated, snapshot=ran.snapshot
    )


# --- upload_file, download_file ----------------------------------------------------------------


class UploadInput(ToolInput):
    path: str
    content_base64: str


class UploadOutput(ToolOutput):
    path: str


@DEEPAGENTS.tool(
    "upload_file",
    title="Upload a file",
    description="Write bytes to a file, creating its parent directories.",
    mutates=True,
    destructive=True,
    governed_by="write_file",
)
def upload_file(ctx: Context, args: UploadInput) -> UploadOutput:
    path = virtual(ctx, args.path, write=True)
    data = base64.standard_b64decode(args.content_base64)
    ctx.check_size(len(data), path)
    ctx.write(path, data, parents=True)
    return UploadOutput(path=args.path)


class DownloadInput(ToolInput):
    path: str


class DownloadOutput(ToolOutput):
    content_base64: str


@DEEPAGENTS.tool(
    "download_file",
    title="Download a file",
    description="A file's bytes.",
    tracks_reads=True,
    governed_by="read_file",
)
def download_file(ctx: Context, args: DownloadInput) -> DownloadOutput:
    path = virtual(ctx, args.path)
    data = ctx.ws.read(path)
    ctx.check_read_size(len(data), path, "it cannot be downloaded here")
    return DownloadOutput(content_base64=base64.standard_b64encode(data).decode("ascii"))
