"""The server's tools (see the package's docstring), each a tool of ``SURFACE``."""

from __future__ import annotations

import base64
import json
import posixpath
import secrets
import stat as statmod
from collections.abc import Iterator
from typing import Any, Literal
from urllib.parse import quote

from pydantic import Field

from agentfs.core.inodes import Stat
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.profiles.mcp_filesystem.diff import unified_diff
from agentfs.tools.profiles.mcp_filesystem.minimatch import minimatch
from agentfs.tools.profiles.mcp_filesystem.nodefs import (
    ROOT,
    encode,
    file_bytes,
    from_os,
    head,
    lstat,
    node_error,
    read_text,
    stat,
    tail,
    valid,
)
from agentfs.tools.profiles.mcp_filesystem.texts import (
    collation_key,
    format_size,
    js_date,
    js_length,
)
from agentfs.tools.spec import Surface, ToolInput, ToolOutput

SURFACE = Surface("mcp-filesystem")


class TextOutput(ToolOutput):
    """The server's structured result: its text as ``content``."""

    content: str

    def text(self) -> str:
        return self.content


class ReadTextInput(ToolInput):
    path: str
    tail: float | None = Field(None, description="If given, only the last N lines of the file")
    head: float | None = Field(None, description="If given, only the first N lines of the file")


def _read_text_file(ctx: Context, args: ReadTextInput) -> TextOutput:
    path = valid(ctx, args.path)
    if args.head and args.tail:
        raise ToolError(
            "invalid_argument", "Cannot specify both head and tail parameters simultaneously"
        )
    if args.tail:
        return TextOutput(content=tail(ctx, path, args.tail))
    if args.head:
        return TextOutput(content=head(ctx, path, args.head))
    return TextOutput(content=read_text(ctx, path))


_READ_TEXT = (
    "Read a whole file as text (UTF-8), whatever its extension, or only its first `head` or last"
    " `tail` lines. Use it to look at one file. Paths are resolved against the root directory."
)

SURFACE.tool(
    "read_text_file",
    title="Read Text File",
    description=_READ_TEXT,
    tracks_reads=True,
    idempotent=True,
    governed_by="read_file",
)(_read_text_file)

SURFACE.tool(
    "read_file",
    title="Read File (Deprecated)",
    description="Read a whole file as text. Deprecated: call read_text_file.",
    tracks_reads=True,
    idempotent=True,
    governed_by="read_file",
)(_read_text_file)


class PathInput(ToolInput):
    path: str


class MediaOutput(ToolOutput):
    """The server's structured result: one content block (image, audio, or a resource)."""

    content: list[dict[str, Any]]

    def text(self) -> str:
        return json.dumps(self.content)


_MIME_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".flac": "audio/flac",
}


def _file_url(path: str) -> str:
    """Node's ``pathToFileURL(path).href``: the path percent-encoded as a URL's path."""
    return "file://" + quote(path, safe="/!$&'()*+,-.:;=@[]^_|~")


@SURFACE.tool(
    "read_media_file",
    title="Read Media File",
    description="Read a file as base64 with its MIME type (from its extension): an image or an"
    " audio block for images and sound, an embedded resource for anything else.",
    tracks_reads=True,
    idempotent=True,
    governed_by="read_file",
)
def read_media_file(ctx: Context, args: PathInput) -> MediaOutput:
    path = valid(ctx, args.path)
    mime = _MIME_TYPES.get(posixpath.splitext(path)[1].lower(), "application/octet-stream")
    data = base64.b64encode(file_bytes(ctx, path)).decode("ascii")
    kind = mime.split("/", 1)[0]
    if kind in ("image", "audio"):
        block: dict[str, Any] = {"type": kind, "data": data, "mimeType": mime}
    else:
        block = {
            "type": "resource",
            "resource": {"uri": _file_url(path), "mimeType": mime, "blob": data},
        }
    return MediaOutput(content=[block])


class ReadManyInput(ToolInput):
    paths: list[str] = Field(
        min_length=1, description="The files to read: each path names a file below the root."
    )


@SURFACE.tool(
    "read_multiple_files",
    title="Read Multiple Files",
    description="Read several files in one call, each one's text after its path; a file that"
    " cannot be read gets its error in its place and the others are still read.",
    tracks_reads=True,
    idempotent=True,
    governed_by="read_multiple_files",
)
def read_multiple_files(ctx: Context, args: ReadManyInput) -> TextOutput:
    parts = []
    for raw in args.paths:
        try:
            parts.append(f"{raw}:\n{read_text(ctx, valid(ctx, raw))}\n")
        except ToolError as error:
            parts.append(f"{raw}: Error - {error.message}")
    return TextOutput(content="\n---\n".join(parts))


# --- writing ------------------------------------------------------------------------------------


class WriteInput(ToolInput):
    path: str
    content: str


@SURFACE.tool(
    "write_file",
    title="Write File",
    description="Create a file, or replace an existing file's whole content without asking."
    " The directory it goes in must exist.",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="write_file",
)
def write_file(ctx: Context, args: WriteInput) -> TextOutput:
    path = valid(ctx, args.path, write=True)
    data = encode(args.content)
    ctx.check_size(len(data), path)
    st = stat(ctx, path)
    if st is not None and statmod.S_ISDIR(st.st_mode):
        # the server writes a temporary file beside it and renames it over the directory
        temporary = f"{path}.{secrets.token_hex(16)}.tmp"
        raise node_error("EISDIR", "rename", temporary, path)
    try:
        ctx.write(path, data)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise from_os(exc, "open", path) from None
    return TextOutput(content=f"Successfully wrote to {args.path}")


class Edit(ToolInput):
    oldText: str = Field(description="The text to replace, exactly as it is in the file")
    newText: str = Field(description="The text to put in its place")


class EditInput(ToolInput):
    path: str
    edits: list[Edit]
    dryRun: bool = Field(False, description="Only show the diff; change nothing")


#: What JavaScript's ``trim`` and ``\s`` take for white space.
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(_JS_SPACE))]


def _apply_edit(content: str, edit: Edit) -> str:
    """One edit: the first exact occurrence replaced; else the first run of lines equal to the
    old text's once both are stripped, replaced with the new text re-indented (the first line
    takes the run's indentation, the others keep theirs relative to the old text's)."""
    old = edit.oldText.replace("\r\n", "\n")
    new = edit.newText.replace("\r\n", "\n")
    if old in content:
        return content.replace(old, new, 1)
    old_lines = old.split("\n")
    lines = content.split("\n")
    for start in range(len(lines) - len(old_lines) + 1):
        window = lines[start : start + len(old_lines)]
        if all(
            a.strip(_JS_SPACE) == b.strip(_JS_SPACE) for a, b in zip(old_lines, window, strict=True)
        ):
            indent = _indent(lines[start])
            replaced = []
            for index, line in enumerate(new.split("\n")):
                if index == 0:
                    replaced.append(indent + line.lstrip(_JS_SPACE))
                    continue
                old_indent = _indent(old_lines[index]) if index < len(old_lines) else ""
                new_indent = _indent(line)
                if old_indent and new_indent:
                    extra = max(0, len(new_indent) - len(old_indent))
                    replaced.append(indent + " " * extra + line.lstrip(_JS_SPACE))
                else:
                    replaced.append(line)
            lines[start : start + len(old_lines)] = replaced
            return "\n".join(lines)
    raise ToolError("no_match", f"Could not find exact match for edit:\n{edit.oldText}")


@SURFACE.tool(
    "edit_file",
    title="Edit File",
    description="Apply edits to a text file in order, each replacing its oldText (matched"
    " exactly, else line by line ignoring indentation) with its newText; answers with a"
    " git-style diff of the change. With dryRun, only the diff.",
    mutates=True,
    destructive=True,
    governed_by="edit_file",
)
def edit_file(ctx: Context, args: EditInput) -> TextOutput:
    path = valid(ctx, args.path, write=True)
    original = read_text(ctx, path).replace("\r\n", "\n")
    edited = original
    for edit in args.edits:
        edited = _apply_edit(edited, edit)
    diff = unified_diff(path, original, edited)
    fence = 3
    while "`" * fence in diff:
        fence += 1
    if not args.dryRun:
        data = encode(edited)
        ctx.check_size(len(data), path)
        ctx.write(path, data)
    return TextOutput(content=f"{'`' * fence}diff\n{diff}{'`' * fence}\n\n")


# --- directories --------------------------------------------------------------------------------


@SURFACE.tool(
    "create_directory",
    title="Create Directory",
    description="Create a directory with any missing parents; an existing directory is left as"
    " it is and the call still succeeds.",
    mutates=True,
    idempotent=True,
    governed_by="mkdir",
)
def create_directory(ctx: Context, args: PathInput) -> TextOutput:
    path = valid(ctx, args.path, write=True)
    st = stat(ctx, path)
    if st is None:
        ctx.ws.mkdir(path, parents=True, exist_ok=True)
    elif not statmod.S_ISDIR(st.st_mode):
        raise node_error("EEXIST", "mkdir", path)
    return TextOutput(content=f"Successfully created directory {args.path}")


def _entries(ctx: Context, path: str) -> list[tuple[str, Stat]]:
    """The entries of directory ``path`` the policy lets this tool show (``lstat``), in name
    order, or Node's error for reading it."""
    try:
        listed = ctx.ws.readdir_plus(path)
    except OSError as exc:
        raise from_os(exc, "scandir", path) from None
    listed.sort(key=lambda entry: entry[0])
    return [(name, st) for name, st in listed if ctx.visible(posixpath.join(path, name))]


def _is_dir(st: Stat) -> bool:
    return statmod.S_ISDIR(st.st_mode)


@SURFACE.tool(
    "list_directory",
    title="List Directory",
    description="The entries of a directory, one a line, each marked [DIR] or [FILE].",
    idempotent=True,
    governed_by="ls",
)
def list_directory(ctx: Context, args: PathInput) -> TextOutput:
    path = valid(ctx, args.path)
    lines = [f"{'[DIR]' if _is_dir(st) else '[FILE]'} {name}" for name, st in _entries(ctx, path)]
    return TextOutput(content="\n".join(lines))


class SizesInput(ToolInput):
    path: str
    sortBy: Literal["name", "size"] = Field("name", description="Sort by name or by size")


@SURFACE.tool(
    "list_directory_with_sizes",
    title="List Directory with Sizes",
    description="The entries of a directory marked [DIR] or [FILE], files with their sizes,"
    " sorted by name or by size (largest first), then how many files and directories and"
    " their total size.",
    idempotent=True,
    governed_by="ls",
)
def list_directory_with_sizes(ctx: Context, args: SizesInput) -> TextOutput:
    path = valid(ctx, args.path)
    entries = []
    for name, st in _entries(ctx, path):
        target = stat(ctx, posixpath.join(path, name))
        entries.append((name, _is_dir(st), target.st_size if target is not None else 0))
    if args.sortBy == "size":
        ordered = sorted(entries, key=lambda entry: -entry[2])
    else:
        ordered = sorted(entries, key=lambda entry: collation_key(entry[0]))
    lines = []
    for name, is_dir, size in ordered:
        padded = name + " " * max(0, 30 - js_length(name))
        shown = "" if is_dir else format_size(size).rjust(10)
        lines.append(f"{'[DIR]' if is_dir else '[FILE]'} {padded} {shown}")
    files = [size for _, is_dir, size in entries if not is_dir]
    lines += [
        "",
        f"Total: {len(files)} files, {len(entries) - len(files)} directories",
        f"Combined size: {format_size(sum(files))}",
    ]
    return TextOutput(content="\n".join(lines))


class TreeInput(ToolInput):
    path: str
    excludePatterns: list[str] = Field(default_factory=list)


def _tree_excluded(relative: str, patterns: list[str]) -> bool:
    """directory_tree's exclusion: a pattern with ``*`` matches the path below the listed
    directory; one without also matches a name at any depth, or anything below it."""
    for pattern in patterns:
        if minimatch(relative, pattern):
            return True
        if "*" not in pattern and (
            minimatch(relative, f"**/{pattern}") or minimatch(relative, f"**/{pattern}/**")
        ):
            return True
    return False


@SURFACE.tool(
    "directory_tree",
    title="Directory Tree",
    description="The tree below a directory as JSON (2-space indented): each entry has a name"
    " and a type (file or directory), a directory its children (maybe empty); excludePatterns"
    " leave out matching paths.",
    idempotent=True,
    governed_by="list_tree",
)
def directory_tree(ctx: Context, args: TreeInput) -> TextOutput:
    def build(path: str, relative: str) -> list[dict[str, Any]]:
        tree: list[dict[str, Any]] = []
        for name, st in _entries(ctx, path):
            below = f"{relative}/{name}" if relative else name
            if _tree_excluded(below, args.excludePatterns):
                continue
            entry: dict[str, Any] = {
                "name": name,
                "type": "directory" if _is_dir(st) else "file",
            }
            if _is_dir(st):
                entry["children"] = build(valid(ctx, posixpath.join(path, name)), below)
            tree.append(entry)
        return tree

    tree = build(valid(ctx, args.path), "")
    return TextOutput(content=json.dumps(tree, indent=2, ensure_ascii=False))


# --- moving -------------------------------------------------------------------------------------


class MoveInput(ToolInput):
    source: str
    destination: str


def _below(ctx: Context, top: str) -> Iterator[str]:
    """The paths below ``top`` (nothing if it is not a directory), relative to it."""
    st = lstat(ctx, top)
    if st is None or not _is_dir(st):
        return
    for folder, dirnames, filenames in ctx.ws.walk(top):
        rest = folder[len(top) :].lstrip("/")
        for name in [*dirnames, *filenames]:
            yield f"{rest}/{name}" if rest else name


@SURFACE.tool(
    "move_file",
    title="Move File",
    description="Move or rename a file or a directory, within a directory or to another one;"
    " fails if the destination exists.",
    mutates=True,
    destructive=True,
    governed_by="move_file",
)
def move_file(ctx: Context, args: MoveInput) -> TextOutput:
    source = valid(ctx, args.source, write=True)
    destination = valid(ctx, args.destination, write=True)
    if lstat(ctx, destination) is not None:
        raise ToolError("exists", f"Destination already exists: {destination}")
    if lstat(ctx, source) is None or stat(ctx, posixpath.dirname(destination)) is None:
        raise node_error("ENOENT", "rename", source, destination)
    if destination.startswith(source.rstrip("/") + "/") or source == "/":
        raise node_error("EINVAL", "rename", source, destination)
    ctx.check_tree(source, write=True)
    for relative in _below(ctx, source):  # what lands below the destination is judged there
        ctx.path(posixpath.join(destination, relative), write=True)
    try:
        ctx.ws.rename(source, destination)
    except OSError as exc:
        raise from_os(exc, "rename", source, destination) from None
    return TextOutput(content=f"Successfully moved {args.source} to {args.destination}")


# --- searching ----------------------------------------------------------------------------------


class SearchInput(ToolInput):
    path: str
    pattern: str
    excludePatterns: list[str] = Field(default_factory=list)


@SURFACE.tool(
    "search_files",
    title="Search Files",
    description="Files and directories below a directory whose path relative to it matches a"
    " glob (`*.ext` there, `**/*.ext` at any depth), minus those matching excludePatterns"
    " (nothing below an excluded directory is searched); their full paths, one a line.",
    idempotent=True,
    governed_by="search_files",
)
def search_files(ctx: Context, args: SearchInput) -> TextOutput:
    top = valid(ctx, args.path)
    found: list[str] = []

    def search(path: str, relative: str) -> None:
        for name, st in _entries(ctx, path):
            below = f"{relative}/{name}" if relative else name
            if any(minimatch(below, pattern) for pattern in args.excludePatterns):
                continue
            if minimatch(below, args.pattern):
                found.append(posixpath.join(path, name))
            if _is_dir(st):
                search(posixpath.join(path, name), below)

    search(top, "")
    return TextOutput(content="\n".join(found) if found else "No matches found")


# --- information --------------------------------------------------------------------------------


@SURFACE.tool(
    "get_file_info",
    title="Get File Info",
    description="A file's or a directory's metadata without reading it: size, times,"
    " whether it is a directory or a file, and its permission bits.",
    idempotent=True,
    governed_by="stat",
)
def get_file_info(ctx: Context, args: PathInput) -> TextOutput:
    path = valid(ctx, args.path)
    try:
        st = ctx.ws.stat(path)
    except OSError as exc:
        raise from_os(exc, "stat", path) from None
    info = {
        "size": str(st.st_size),
        "created": js_date(st.st_ctime_ns),
        "modified": js_date(st.st_mtime_ns),
        "accessed": js_date(st.st_atime_ns),
        "isDirectory": str(statmod.S_ISDIR(st.st_mode)).lower(),
        "isFile": str(statmod.S_ISREG(st.st_mode)).lower(),
        "permissions": format(st.st_mode, "o")[-3:],
    }
    return TextOutput(content="\n".join(f"{key}: {value}" for key, value in info.items()))


class NoInput(ToolInput):
    pass


@SURFACE.tool(
    "list_allowed_directories",
    title="List Allowed Directories",
    description="The directories these tools may reach (everything below them too); call it"
    " first to know where paths may point.",
    idempotent=True,
    governed_by="ls",
)
def list_allowed_directories(ctx: Context, args: NoInput) -> TextOutput:
    return TextOutput(content=f"Allowed directories:\n{ROOT}")
