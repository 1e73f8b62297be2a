"""The ``mcp-filesystem`` profile: the tools of the reference MCP filesystem server (npm
``@modelcontextprotocol/server-filesystem``, 2026.8.31) over a workspace, by their names, with
their parameters (camelCase where the server has it), defaults and result texts, run by a
``Toolset`` under the policy entry of the agentfs tool doing the same job.

The workspace root ``/`` plays the server's one allowed directory: each tool answers what the
server started with ``/`` as its allowed directory answers for the same tree. A relative path
is resolved against ``/``; ``..`` stops at ``/``, as it does on a host at its root, so no path
is outside. Every absolute path the server would show (a search hit, the diff's file name, a
path in an error, the allowed directories) is shown as the workspace path: where the server
started on host directory ``D`` writes ``D/src/a.py`` this profile writes ``/src/a.py``, and
``D`` itself is ``/``. Errors carry the server's texts, Node's ``fs`` messages included
(``ENOENT: no such file or directory, open '/a.txt'``); each is a ``ToolError`` whose code is
agentfs's for the same failure.

Where the workspace cannot be the host, or the server's answer depends on its host:

- ``~`` and ``~/...`` name the root and what is below it (the server expands them to the
  user's home directory).
- Entries are listed in name order (the server lists them in the order the host's directory
  gives, which has no meaning); ``list_directory_with_sizes`` sorts names as ICU's root
  collation does for ordinary names (punctuation, then digits, then letters, lower case before
  upper case), as the server's ``localeCompare``, and a directory's size is the workspace's.
- ``get_file_info`` shows times in UTC (the server's Node shows them in its time zone: the same
  text when that zone is UTC); ``created`` is the time the file's status last changed, as a
  workspace keeps no birth time.
- ``read_media_file`` returns the server's content block as its structured result, and that
  block as JSON as its text (a tool here returns text, not an image or audio block).
- Unknown arguments are refused (``invalid_argument``), as every agentfs tool refuses them;
  the server drops them. A call the server's input schema refuses is refused too, with agentfs's
  message for it.
- A path the policy denies is refused with the policy's message, and listings and searches
  leave it out.
"""

from __future__ import annotations

import base64
import codecs
import json
import math
import posixpath
import re
import secrets
import stat as statmod
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal
from urllib.parse import quote

from pydantic import Field

from agentfs.core.inodes import Stat
from agentfs.tools.context import Context
from agentfs.tools.errors import ErrorCode, ToolError
from agentfs.tools.spec import Surface, ToolInput, ToolOutput

SURFACE = Surface("mcp-filesystem")

#: What the root directory is called in the server's texts: the allowed directory.
ROOT = "/"

# --- Node's fs errors ------------------------------------------------------------------------

#: errno name -> (libuv's description, agentfs's code).
_NODE_ERRORS: dict[str, tuple[str, ErrorCode]] = {
    "ENOENT": ("no such file or directory", "not_found"),
    "ENOTDIR": ("not a directory", "not_directory"),
    "EISDIR": ("illegal operation on a directory", "is_directory"),
    "EEXIST": ("file already exists", "exists"),
    "EINVAL": ("invalid argument", "invalid_argument"),
    "ELOOP": ("too many symbolic links encountered", "invalid_path"),
    "ENOTEMPTY": ("directory not empty", "not_empty"),
    "ENAMETOOLONG": ("name too long", "invalid_path"),
}

_ERRNO_NAMES = {2: "ENOENT", 20: "ENOTDIR", 21: "EISDIR", 17: "EEXIST", 22: "EINVAL", 40: "ELOOP"}


def _node_error(
    name: str, syscall: str, path: str | None = None, dest: str | None = None
) -> ToolError:
    """The error Node's ``fs`` raises: ``CODE: description, syscall 'path' -> 'dest'``."""
    description, code = _NODE_ERRORS.get(name, ("unknown error", "internal_error"))
    message = f"{name}: {description}, {syscall}"
    if path is not None:
        message += f" '{path}'"
    if dest is not None:
        message += f" -> '{dest}'"
    return ToolError(code, message)


def _from_os(exc: OSError, syscall: str, path: str, dest: str | None = None) -> ToolError:
    name = _ERRNO_NAMES.get(exc.errno or 0)
    if name is None:
        raise exc
    return _node_error(name, syscall, path, dest)


# --- paths --------------------------------------------------------------------------------------

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:(?:[\\/]|$)")


def _absolute(raw: str) -> str:
    """``raw`` resolved against the root as Node's ``path.resolve`` does (``..`` stops at
    ``/``, a trailing slash is dropped)."""
    if raw == "~" or raw.startswith("~/"):
        raw = ROOT + raw[1:]
    parts: list[str] = []
    for part in raw.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


def _join(base: str, *names: str) -> str:
    return posixpath.join(base, *names)


def _lstat(ctx: Context, path: str) -> Stat | None:
    try:
        return ctx.ws.lstat(path)
    except OSError:
        return None


def _stat(ctx: Context, path: str) -> Stat | None:
    try:
        return ctx.ws.stat(path)
    except OSError:
        return None


def _real(ctx: Context, absolute: str) -> str | None:
    """``absolute`` with its symlinks resolved, if it exists (else None); ``ENOTDIR`` where a
    file stands before its last name (Node's ``realpath``)."""
    try:
        resolved = ctx.ws.realpath(absolute)
    except OSError as exc:
        raise _from_os(exc, "realpath", absolute) from None
    names = [part for part in resolved.split("/") if part]
    here = "/"
    for index, name in enumerate(names):
        here = _join(here, name)
        st = _lstat(ctx, here)
        if st is None:
            return None
        if index < len(names) - 1 and not statmod.S_ISDIR(st.st_mode):
            raise _node_error("ENOTDIR", "realpath", absolute)
    return resolved


def _unicode_equivalent(ctx: Context, absolute: str) -> str:
    """The path a new name will take: each existing directory on the way found by its name,
    or by a name equal to it in Unicode's composed form (the server's rule)."""
    names = [part for part in absolute.split("/") if part]
    here = "/"
    for index, name in enumerate(names):
        try:
            entries = ctx.ws.listdir(here)
        except FileNotFoundError:
            raise ToolError(
                "not_found", f"Parent directory does not exist: {posixpath.dirname(absolute)}"
            ) from None
        except NotADirectoryError:
            raise _node_error("ENOTDIR", "scandir", here) from None
        if name in entries:
            found = [name]
        else:
            composed = unicodedata.normalize("NFC", name)
            found = [e for e in entries if unicodedata.normalize("NFC", e) == composed]
        if len(found) > 1:
            raise ToolError("invalid_argument", f"Ambiguous Unicode path component: {name}")
        if not found:
            return _join(here, *names[index:])
        here = ctx.ws.realpath(_join(here, found[0]))
    return here


def _valid(ctx: Context, raw: str, *, write: bool = False) -> str:
    """The workspace path ``raw`` names, as the server validates a path: resolved, its
    symlinks followed, a new name matched to an existing one in composed form; the policy
    judges it as written and as found."""
    if _WINDOWS_DRIVE.match(raw):
        raise ToolError(
            "denied", f"Access denied - Windows-style path received on a POSIX host: {raw}"
        )
    absolute = _absolute(raw)
    if "\0" in absolute:
        raise ToolError(
            "denied", f"Access denied - path outside allowed directories: {absolute} not in {ROOT}"
        )
    ctx.path(absolute, write=write)
    real = _real(ctx, absolute)
    if real is None:
        real = _unicode_equivalent(ctx, absolute)
    if real != absolute:
        ctx.path(real, write=write)
    return real


# --- reading ------------------------------------------------------------------------------------


def _decode(data: bytes) -> str:
    """Bytes as Node decodes UTF-8: each bad sequence becomes U+FFFD, a BOM is kept."""
    return data.decode("utf-8", errors="replace")


def _encode(text: str) -> bytes:
    """Text as Node writes it: UTF-8, an unpaired surrogate as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        paired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return paired.encode("utf-8")


def _file_bytes(ctx: Context, path: str, syscall: str = "open") -> bytes:
    """A file's bytes, or Node's error for opening (``syscall``) and reading it."""
    try:
        st = ctx.ws.stat(path)
    except OSError as exc:
        raise _from_os(exc, syscall, path) from None
    if statmod.S_ISDIR(st.st_mode):
        raise _node_error("EISDIR", "read")
    return ctx.ws.read(path)


def _read_text(ctx: Context, path: str) -> str:
    return _decode(_file_bytes(ctx, path))


def _js_slice(items: list[str], start: float) -> list[str]:
    """``items.slice(start)`` as JavaScript computes it (a fraction truncated)."""
    begin = int(start)
    if begin < 0:
        begin = max(len(items) + begin, 0)
    return items[begin:]


_CHUNK = 1024


def _tail(ctx: Context, path: str, lines: float) -> str:
    """The last ``lines`` lines: the server reads 1 KiB blocks from the end until it has seen
    enough newlines, then keeps the last ``lines`` parts of what it read."""
    data = _file_bytes(ctx, path, "stat")
    if not data:
        return ""
    position, newlines = len(data), 0
    while position > 0 and newlines < lines:
        size = min(_CHUNK, position)
        position -= size
        newlines += data.count(b"\n", position, position + size)
    text = _decode(data[position:]).replace("\r\n", "\n")
    return "\n".join(_js_slice(text.split("\n"), -lines))


def _head(ctx: Context, path: str, lines: float) -> str:
    """The first ``lines`` lines: whole lines as 1 KiB blocks complete them, then what is left
    of the file if it ends without a newline."""
    data = _file_bytes(ctx, path)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    found: list[str] = []
    pending, offset = "", 0
    while len(found) < lines:
        block = data[offset : offset + _CHUNK]
        if not block:
            break
        offset += len(block)
        pending += decoder.decode(block)
        end = pending.rfind("\n")
        if end != -1:
            complete, pending = pending[:end].split("\n"), pending[end + 1 :]
            for line in complete:
                found.append(line)
                if len(found) >= lines:
                    break
    pending += decoder.decode(b"", final=True)
    if pending and len(found) < lines:
        found.append(pending)
    return "\n".join(found)


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
    path = _valid(ctx, args.path)
    if args.head and args.tail:
        raise ToolError(
            "invalid_argument", "Cannot specify both head and tail parameters simultaneously"
        )
    if args.tail:
        return TextOutput(content=_tail(ctx, path, args.tail))
    if args.head:
        return TextOutput(content=_head(ctx, path, args.head))
    return TextOutput(content=_read_text(ctx, path))


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
    path = _valid(ctx, args.path)
    mime = _MIME_TYPES.get(posixpath.splitext(path)[1].lower(), "application/octet-stream")
    data = base64.b64encode(_file_bytes(ctx, path)).decode("ascii")
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
            parts.append(f"{raw}:\n{_read_text(ctx, _valid(ctx, raw))}\n")
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
    path = _valid(ctx, args.path, write=True)
    data = _encode(args.content)
    ctx.check_size(len(data), path)
    st = _stat(ctx, path)
    if st is not None and statmod.S_ISDIR(st.st_mode):
        # the server writes a temporary file beside it and renames it over the directory
        temporary = f"{path}.{secrets.token_hex(16)}.tmp"
        raise _node_error("EISDIR", "rename", temporary, path)
    try:
        ctx.write(path, data)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise _from_os(exc, "open", path) from None
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
    path = _valid(ctx, args.path, write=True)
    original = _read_text(ctx, path).replace("\r\n", "\n")
    edited = original
    for edit in args.edits:
        edited = _apply_edit(edited, edit)
    diff = unified_diff(path, original, edited)
    fence = 3
    while "`" * fence in diff:
        fence += 1
    if not args.dryRun:
        data = _encode(edited)
        ctx.check_size(len(data), path)
        ctx.write(path, data)
    return TextOutput(content=f"{'`' * fence}diff\n{diff}{'`' * fence}\n\n")


# --- the diff -----------------------------------------------------------------------------------

#: A run of the diff: (lines, added, removed, the run before it).
_Run = tuple[int, bool, bool, Any]


def _line_tokens(text: str) -> list[str]:
    """The text's lines, each with its newline."""
    tokens = text.split("\n")
    lines = [line + "\n" for line in tokens[:-1]]
    if tokens[-1]:
        lines.append(tokens[-1])
    return lines


def _myers(old: list[str], new: list[str]) -> list[tuple[bool, bool, list[str]]]:
    """Myers's greedy diff of two lists of lines, exploring the diagonals in the order, and
    choosing between an insertion and a deletion by the rule, of the ``diff`` package that
    the server uses (so its hunks are the same): runs of (added, removed, lines)."""
    n_old, n_new = len(old), len(new)

    def common(path: list[Any], diagonal: int) -> int:
        old_pos = path[0]
        new_pos = old_pos - diagonal
        count = 0
        while new_pos + 1 < n_new and old_pos + 1 < n_old and old[old_pos + 1] == new[new_pos + 1]:
            new_pos, old_pos, count = new_pos + 1, old_pos + 1, count + 1
        if count:
            path[1] = (count, False, False, path[1])
        path[0] = old_pos
        return new_pos

    def extend(path: list[Any], added: bool, step: int) -> list[Any]:
        last: _Run | None = path[1]
        if last is not None and last[1] == added and last[2] == (not added):
            return [path[0] + step, (last[0] + 1, added, not added, last[3])]
        return [path[0] + step, (1, added, not added, last)]

    def runs(last: _Run | None) -> list[tuple[bool, bool, list[str]]]:
        chain = []
        while last is not None:
            chain.append(last)
            last = last[3]
        chain.reverse()
        out, old_pos, new_pos = [], 0, 0
        for count, added, removed, _ in chain:
            if removed:
                out.append((False, True, old[old_pos : old_pos + count]))
                old_pos += count
            else:
                out.append((added, False, new[new_pos : new_pos + count]))
                new_pos += count
                if not added:
                    old_pos += count
        return out

    best: dict[int, list[Any] | None] = {0: [-1, None]}
    start = best[0]
    assert start is not None
    new_pos = common(start, 0)
    if start[0] + 1 >= n_old and new_pos + 1 >= n_new:
        return runs(start[1])
    far = n_old + n_new + 2
    low, high = -far, far
    for edits in range(1, n_old + n_new + 1):
        for diagonal in range(max(low, -edits), min(high, edits) + 1, 2):
            remove, add = best.get(diagonal - 1), best.get(diagonal + 1)
            if remove is not None:
                best[diagonal - 1] = None
            can_add = add is not None and 0 <= add[0] - diagonal < n_new
            can_remove = remove is not None and remove[0] + 1 < n_old
            if not can_add and not can_remove:
                best[diagonal] = None
                continue
            if not can_remove or (can_add and remove[0] < add[0]):  # type: ignore[index]
                path = extend(add, True, 0)  # type: ignore[arg-type]
            else:
                path = extend(remove, False, 1)  # type: ignore[arg-type]
            new_pos = common(path, diagonal)
            if path[0] + 1 >= n_old and new_pos + 1 >= n_new:
                return runs(path[1])
            best[diagonal] = path
            if path[0] + 1 >= n_old:
                high = min(high, diagonal - 1)
            if new_pos + 1 >= n_new:
                low = max(low, diagonal + 1)
    raise AssertionError("the diff did not reach the end of both texts")  # pragma: no cover


def unified_diff(name: str, before: str, after: str, context: int = 4) -> str:
    """The unified diff the server shows (the ``diff`` package's ``createTwoFilesPatch`` with
    headers ``original`` and ``modified``): an ``Index:`` line, four lines of context, and
    ``\\ No newline at end of file`` after a last line without one."""
    changes: list[tuple[bool, bool, list[str]]] = _myers(_line_tokens(before), _line_tokens(after))
    changes.append((False, False, []))
    hunks: list[tuple[int, int, int, int, list[str]]] = []
    old_start = new_start = 0
    current: list[str] = []
    old_line = new_line = 1
    for index, (added, removed, lines) in enumerate(changes):
        if added or removed:
            if not old_start:
                old_start, new_start = old_line, new_line
                if index > 0:
                    before_lines = changes[index - 1][2][-context:] if context > 0 else []
                    current = [" " + line for line in before_lines]
                    old_start -= len(current)
                    new_start -= len(current)
            current += [("+" if added else "-") + line for line in lines]
            if added:
                new_line += len(lines)
            else:
                old_line += len(lines)
            continue
        if old_start:
            if len(lines) <= context * 2 and index < len(changes) - 2:
                current += [" " + line for line in lines]
            else:
                shown = min(len(lines), context)
                current += [" " + line for line in lines[:shown]]
                hunks.append(
                    (
                        old_start,
                        old_line - old_start + shown,
                        new_start,
                        new_line - new_start + shown,
                        current,
                    )
                )
                old_start = new_start = 0
                current = []
        old_line += len(lines)
        new_line += len(lines)
    out = [f"Index: {name}", "=" * 67, f"--- {name}\toriginal", f"+++ {name}\tmodified"]
    for old_from, old_count, new_from, new_count, lines in hunks:
        old_from -= old_count == 0
        new_from -= new_count == 0
        out.append(f"@@ -{old_from},{old_count} +{new_from},{new_count} @@")
        for line in lines:
            if line.endswith("\n"):
                out.append(line[:-1])
            else:
                out += [line, "\\ No newline at end of file"]
    return "\n".join(out) + "\n"


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
    path = _valid(ctx, args.path, write=True)
    st = _stat(ctx, path)
    if st is None:
        ctx.ws.mkdir(path, parents=True, exist_ok=True)
    elif not statmod.S_ISDIR(st.st_mode):
        raise _node_error("EEXIST", "mkdir", path)
    return TextOutput(content=f"Successfully created directory {args.path}")


def _entries(ctx: Context, path: str) -> list[tuple[str, Stat]]:
    """The entries of directory ``path`` the policy lets this tool show (``lstat``), in name
    order, or Node's error for reading it."""
    try:
        listed = ctx.ws.readdir_plus(path)
    except OSError as exc:
        raise _from_os(exc, "scandir", path) from None
    listed.sort(key=lambda entry: entry[0])
    return [(name, st) for name, st in listed if ctx.visible(_join(path, name))]


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
    path = _valid(ctx, args.path)
    lines = [f"{'[DIR]' if _is_dir(st) else '[FILE]'} {name}" for name, st in _entries(ctx, path)]
    return TextOutput(content="\n".join(lines))


def format_size(size: int) -> str:
    """A size as the server writes it: bytes below 1 KiB, else KB, MB, GB or TB with two
    decimals (rounded half up, as JavaScript's ``toFixed``)."""
    units = ["B", "KB", "MB", "GB", "TB"]
    if size <= 0:
        return "0 B"
    power = math.floor(math.log(size) / math.log(1024))
    if power <= 0:
        return f"{size} B"
    power = min(power, len(units) - 1)
    value = Decimal(size / 1024**power).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{value} {units[power]}"


def _js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


#: Punctuation and symbols in the order ICU's root collation puts them (before digits).
_SYMBOLS = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def collation_key(name: str) -> tuple[Any, ...]:
    """An approximation of ICU's root collation (``localeCompare``): white space, then
    punctuation and symbols, then digits, then letters without regard to case or accents;
    ties go to the unaccented, then to the lower case."""
    primary: list[tuple[int, Any]] = []
    accents: list[str] = []
    cases: list[int] = []
    for char in name:
        decomposed = unicodedata.normalize("NFD", char)
        base, marks = decomposed[0], decomposed[1:]
        if base.isspace():
            primary.append((0, ord(base)))
        elif base in _SYMBOLS:
            primary.append((1, _SYMBOLS.index(base)))
        elif base.isdigit():
            primary.append((3, unicodedata.digit(base, ord(base))))
        elif base.isalpha():
            primary.append((4, base.casefold()))
        else:
            primary.append((2, ord(base)))
        accents.append(marks)
        cases.append(0 if base == base.lower() else 1)
    return (primary, accents, cases, name)


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
    path = _valid(ctx, args.path)
    entries = []
    for name, st in _entries(ctx, path):
        target = _stat(ctx, _join(path, name))
        entries.append((name, _is_dir(st), target.st_size if target is not None else 0))
    if args.sortBy == "size":
        ordered = sorted(entries, key=lambda entry: -entry[2])
    else:
        ordered = sorted(entries, key=lambda entry: collation_key(entry[0]))
    lines = []
    for name, is_dir, size in ordered:
        padded = name + " " * max(0, 30 - _js_length(name))
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
                entry["children"] = build(_valid(ctx, _join(path, name)), below)
            tree.append(entry)
        return tree

    tree = build(_valid(ctx, args.path), "")
    return TextOutput(content=json.dumps(tree, indent=2, ensure_ascii=False))


# --- moving -------------------------------------------------------------------------------------


class MoveInput(ToolInput):
    source: str
    destination: str


def _below(ctx: Context, top: str) -> Iterator[str]:
    """The paths below ``top`` (nothing if it is not a directory), relative to it."""
    st = _lstat(ctx, top)
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
    source = _valid(ctx, args.source, write=True)
    destination = _valid(ctx, args.destination, write=True)
    if _lstat(ctx, destination) is not None:
        raise ToolError("exists", f"Destination already exists: {destination}")
    if _lstat(ctx, source) is None or _stat(ctx, posixpath.dirname(destination)) is None:
        raise _node_error("ENOENT", "rename", source, destination)
    if destination.startswith(source.rstrip("/") + "/") or source == "/":
        raise _node_error("EINVAL", "rename", source, destination)
    ctx.check_tree(source, write=True)
    for relative in _below(ctx, source):  # what lands below the destination is judged there
        ctx.path(_join(destination, relative), write=True)
    try:
        ctx.ws.rename(source, destination)
    except OSError as exc:
        raise _from_os(exc, "rename", source, destination) from None
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
    top = _valid(ctx, args.path)
    found: list[str] = []

    def search(path: str, relative: str) -> None:
        for name, st in _entries(ctx, path):
            below = f"{relative}/{name}" if relative else name
            if any(minimatch(below, pattern) for pattern in args.excludePatterns):
                continue
            if minimatch(below, args.pattern):
                found.append(_join(path, name))
            if _is_dir(st):
                search(_join(path, name), below)

    search(top, "")
    return TextOutput(content="\n".join(found) if found else "No matches found")


# --- information --------------------------------------------------------------------------------


def _js_date(ns: int) -> str:
    """A time as JavaScript's ``Date.prototype.toString`` writes it, in UTC."""
    moment = datetime.fromtimestamp(ns // 1_000_000_000, UTC)
    return moment.strftime("%a %b %d %Y %H:%M:%S") + " GMT+0000 (Coordinated Universal Time)"


@SURFACE.tool(
    "get_file_info",
    title="Get File Info",
    description="A file's or a directory's metadata without reading it: size, times,"
    " whether it is a directory or a file, and its permission bits.",
    idempotent=True,
    governed_by="stat",
)
def get_file_info(ctx: Context, args: PathInput) -> TextOutput:
    path = _valid(ctx, args.path)
    try:
        st = ctx.ws.stat(path)
    except OSError as exc:
        raise _from_os(exc, "stat", path) from None
    info = {
        "size": str(st.st_size),
        "created": _js_date(st.st_ctime_ns),
        "modified": _js_date(st.st_mtime_ns),
        "accessed": _js_date(st.st_atime_ns),
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


# --- minimatch ----------------------------------------------------------------------------------

_GLOBSTAR = None  # a ``**`` segment
_Segment = re.Pattern[str] | None


def minimatch(path: str, pattern: str) -> bool:
    """Does ``path`` (relative, ``/``-separated) match ``pattern`` as the server's ``minimatch``
    (options ``{dot: true}``) says: braces expanded, ``**`` for any number of names, ``*``
    ``?`` ``[...]`` and the extended ``@(a|b)`` ``?()`` ``*()`` ``+()`` ``!()`` within a name,
    a leading ``!`` negating, a leading ``#`` matching nothing."""
    if pattern.startswith("#"):
        return False
    negated = False
    while pattern.startswith("!"):
        negated, pattern = not negated, pattern[1:]
    if not pattern:
        return (path == "") != negated
    names = path.split("/")
    matched = any(
        _match_names(names, 0, _compile_pattern(expanded), 0) for expanded in braces(pattern)
    )
    return matched != negated


def _closing(text: str, start: int, opening: str, closing: str) -> int:
    """The index of the bracket closing the one at ``start`` (nesting, ``\\`` escapes), or -1."""
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


def _split_top(text: str, separator: str) -> list[str]:
    """``text`` split at the ``separator`` outside any brackets or escapes."""
    parts, depth, start, index = [], 0, 0, 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char in "{(":
            depth += 1
        elif char in "})":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
        index += 1
    parts.append(text[start:])
    return parts


_RANGE = re.compile(r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$")


def _sequence(inner: str) -> list[str] | None:
    """``{1..3}``, ``{a..c}``, ``{01..10..2}``: the items, or None if it is not a range."""
    match = _RANGE.match(inner)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    numeric = first.lstrip("-").isdigit() and last.lstrip("-").isdigit()
    if not numeric and (first.lstrip("-").isdigit() or last.lstrip("-").isdigit()):
        return None
    a, b = (int(first), int(last)) if numeric else (ord(first), ord(last))
    values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
    if not numeric:
        return [chr(value) for value in values]
    padded = any(len(t.lstrip("-")) > 1 and t.lstrip("-").startswith("0") for t in (first, last))
    width = max(len(first), len(last)) if padded else 0
    return [
        str(value).zfill(width) if value >= 0 else "-" + str(-value).zfill(width - 1)
        for value in values
    ]


def braces(pattern: str) -> list[str]:
    """``pattern`` with its braces expanded (``a{b,c}`` is ``ab`` and ``ac``)."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            end = _closing(pattern, index, "{", "}")
            if end == -1:
                return [pattern]
            inner = pattern[index + 1 : end]
            options = _split_top(inner, ",")
            if len(options) == 1:
                sequence = _sequence(inner)
                if sequence is None:
                    index += 1
                    continue
                options = sequence
            head, tails = pattern[:index], braces(pattern[end + 1 :])
            return [
                head + middle + tail
                for option in options
                for middle in braces(option)
                for tail in tails
            ]
        index += 1
    return [pattern]


_MAGIC = re.compile(r"[*?\[]|[@+!]\(")


def _compile_pattern(pattern: str) -> list[_Segment]:
    segments: list[_Segment] = []
    for part in pattern.split("/"):
        if part == "**":
            if not segments or segments[-1] is not _GLOBSTAR:
                segments.append(_GLOBSTAR)
            continue
        if _MAGIC.search(part) is None:  # a name as it is, its escapes undone
            segments.append(re.compile(re.escape(re.sub(r"\\(.)", r"\1", part)), re.DOTALL))
            continue
        segments.append(re.compile(_segment_regex(part), re.DOTALL))
    return segments


def _match_names(names: list[str], at: int, segments: list[_Segment], seg: int) -> bool:
    while at < len(names) and seg < len(segments):
        segment = segments[seg]
        if segment is _GLOBSTAR:
            if seg + 1 == len(segments):
                return all(name not in (".", "..") for name in names[at:])
            for start in range(at, len(names)):
                if _match_names(names, start, segments, seg + 1):
                    return True
                if names[start] in (".", ".."):
                    return False
            return False
        if segment.fullmatch(names[at]) is None:
            return False
        at, seg = at + 1, seg + 1
    if at == len(names) and seg == len(segments):
        return True
    if at == len(names):
        return False
    return at == len(names) - 1 and names[at] == ""


_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\r\\n\\v\\f",
    "upper": "A-Z",
    "word": "\\w",
    "xdigit": "A-Fa-f0-9",
}


def _char_class(part: str, start: int) -> tuple[str, int] | None:
    """The regex of the ``[...]`` class at ``start`` and the index after it, or None when it
    does not close (then ``[`` is itself)."""
    index = start + 1
    negated = index < len(part) and part[index] in "!^"
    if negated:
        index += 1
    body: list[str] = []
    first = True
    while index < len(part):
        char = part[index]
        if char == "]" and not first:
            inner = "".join(body)
            return (f"[^{inner}]" if negated else f"[{inner}]"), index + 1
        first = False
        if char == "[" and part.startswith("[:", index):
            end = part.find(":]", index + 2)
            if end != -1 and part[index + 2 : end] in _POSIX_CLASSES:
                body.append(_POSIX_CLASSES[part[index + 2 : end]])
                index = end + 2
                continue
        if char == "\\" and index + 1 < len(part):
            index += 1
            char = part[index]
        if index + 2 < len(part) and part[index + 1] == "-" and part[index + 2] != "]":
            body.append(f"{re.escape(char)}-{re.escape(part[index + 2])}")
            index += 3
            continue
        body.append(re.escape(char))
        index += 1
    return None


def _segment_regex(part: str) -> str:
    """The regex of one name's pattern."""
    out: list[str] = []
    index = 0
    while index < len(part):
        char = part[index]
        if char == "\\" and index + 1 < len(part):
            out.append(re.escape(part[index + 1]))
            index += 2
            continue
        if char in "?*+@!" and part.startswith("(", index + 1):
            end = _closing(part, index + 1, "(", ")")
            if end != -1:
                inner = "|".join(
                    _segment_regex(alt) for alt in _split_top(part[index + 2 : end], "|")
                )
                if char == "!":
                    rest = _segment_regex(part[end + 1 :])
                    out.append(f"(?:(?!(?:{inner}){rest}$)[^/]*?)")
                else:
                    suffix = {"@": "", "?": "?", "*": "*", "+": "+"}[char]
                    out.append(f"(?:{inner}){suffix}")
                index = end + 1
                continue
        if char == "*":
            while index < len(part) and part[index] == "*":
                index += 1
            out.append("[^/]*?")
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            parsed = _char_class(part, index)
            if parsed is not None:
                out.append(parsed[0])
                index = parsed[1]
                continue
            out.append(re.escape(char))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)
