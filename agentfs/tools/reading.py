"""``read_file`` and ``read_multiple_files``: a file as a model should see it.

Numbered like ``cat -n`` (the number right-aligned in six columns, a tab, the line), so a
model can cite lines and aim ``edit_file``; cut at ``limit`` lines or ``max_bytes`` with a
marker saying exactly which call reads on; over-long lines cut; a binary file described, not
dumped. Reading is a tracked read for the toolset's thread (read-before-write relies on it).
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import Field

from agentfs.tools.common import PATH_DOC, VersionNumber, version_of
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError, from_exception
from agentfs.tools.spec import ToolInput, ToolOutput, tool

#: Longest line shown whole; longer ones are cut with a marker.
MAX_LINE_CHARS = 2000
#: Bytes looked at to tell text from binary (as git and grep do).
SNIFF_BYTES = 8192

#: Leading bytes of common binary formats, for a type guess (first match wins).
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"BZh", "application/x-bzip2"),
    (b"\xfd7zXZ\x00", "application/x-xz"),
    (b"\x28\xb5\x2f\xfd", "application/zstd"),
    (b"\x7fELF", "application/x-executable"),
    (b"SQLite format 3\x00", "application/vnd.sqlite3"),
    (b"\x00asm", "application/wasm"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"fLaC", "audio/flac"),
    (b"\xca\xfe\xba\xbe", "application/java-vm"),
)


def sniff_type(head: bytes) -> str:
    """A MIME type guess for binary content from its first bytes."""
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE"):
        return "image/webp" if head[8:12] == b"WEBP" else "audio/wav"
    if len(head) > 262 and head[257:262] == b"ustar":
        return "application/x-tar"
    return "application/octet-stream"


class ReadFileInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    offset: int = Field(1, ge=1, description="first line to show (1-based)")
    limit: int = Field(2000, ge=1, description="most lines to show")
    column: int = Field(
        1,
        ge=1,
        description="first character of line `offset` to show, from 1: to read on in a line"
        " too long to show whole (its cut says where)",
    )
    max_bytes: int = Field(200_000, ge=1, description="most bytes of text to show")
    version: VersionNumber | None = Field(
        None, description="read this old version instead (file_history lists them)"
    )


class ReadFileOutput(ToolOutput):
    path: str
    content: str = Field(description="the lines, numbered like cat -n; empty for binary")
    size: int = Field(description="bytes in the file")
    total_lines: int
    line_range: tuple[int, int] | None = Field(
        description="first and last line shown (null when none is)"
    )
    truncated: bool = Field(description="more of the file exists than is shown")
    next_offset: int | None = Field(None, description="offset that reads on, when truncated")
    version: int = Field(description="the file's version; pass it as expected_version")
    binary: bool = False
    mime: str | None = Field(None, description="type guess for a binary file")

    def text(self) -> str:
        if self.binary:
            return (
                f"{self.path} is a binary file ({self.size:,} bytes, {self.mime}); its content"
                " is not shown."
            )
        if self.total_lines == 0:
            return f"{self.path} is empty (0 lines)."
        body = self.content
        if self.truncated and self.line_range is not None:
            first, last = self.line_range
            body += (
                f"\n... truncated: lines {first}-{last} of {self.total_lines:,} shown;"
                f" call read_file with offset={self.next_offset}"
            )
        return body


def _number(
    lines: list[str], first: int, limit: int, max_bytes: int, column: int = 1
) -> tuple[str, int]:
    """``cat -n`` text of ``lines[first-1:]`` (the first from its character ``column``), at
    most ``limit`` lines and about ``max_bytes`` bytes (at least one line, so a read always
    moves on: a first line over ``max_bytes`` is cut to fit); the text and the number of lines
    in it. A line over ``MAX_LINE_CHARS`` is cut, saying where to read on.

    Built in bulk, with no Python step per line: a whole page is the common case."""
    chosen = lines[first - 1 : first - 1 + limit]
    shown = chosen
    if column > 1 or max(map(len, chosen), default=0) > MAX_LINE_CHARS:
        shown = [
            _cut_line(line, first + i, column if i == 0 else 1) for i, line in enumerate(chosen)
        ]
    prefixes = _prefixes(first, len(shown))
    text = _numbered(prefixes, shown)
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    if size + 1 <= max_bytes:  # each row costs its bytes and a newline, as below
        return text, len(shown)
    rows = list(map(str.__add__, prefixes, shown))
    kept: list[str] = []
    used = 0
    for row in rows:  # the page is over max_bytes: keep the rows that fit
        cost = len(row.encode("utf-8")) + 1
        if kept and used + cost > max_bytes:
            break
        if not kept and cost > max_bytes:  # the one row a read always shows must fit too
            row = _fit(first, chosen[0], column, max_bytes)
        kept.append(row)
        used += cost
    return "\n".join(kept), len(kept)


#: ``cat -n`` prefixes of the first lines, made once: most reads start at line 1.
_PREFIXES = [f"{n:>6}\t" for n in range(1, 10_001)]


def _numbered(prefixes: list[str], lines: list[str]) -> str:
    """Each prefix followed by its line, the rows joined by newlines: the pieces are laid out
    in one list by slice assignment and joined once, which makes no string per row."""
    if not lines:
        return ""
    parts = ["\n"] * (3 * len(lines) - 1)
    parts[0::3] = prefixes
    parts[1::3] = lines
    return "".join(parts)


def _prefixes(first: int, count: int) -> list[str]:
    """The prefixes of lines ``first .. first + count - 1``, sliced from those made once
    for the first 10,000 lines."""
    if first + count - 1 <= len(_PREFIXES):
        return _PREFIXES[first - 1 : first - 1 + count]
    return [f"{n:>6}\t" for n in range(first, first + count)]


def _cut_line(line: str, number: int, start: int, keep: int = MAX_LINE_CHARS) -> str:
    """Line ``number`` from its character ``start``: at most ``keep`` characters, and where
    to read on when more of it remains."""
    if start == 1 and len(line) <= keep:
        return line
    return _with_cut(line[start - 1 : start - 1 + keep], line, number, start)


def _with_cut(piece: str, line: str, number: int, start: int) -> str:
    """``piece`` (line ``number`` from its character ``start``), marked where the line goes
    on beyond it."""
    end = start - 1 + len(piece)
    if end >= len(line):
        return piece
    return (
        f"{piece}... [line cut at character {end:,} of {len(line):,}; read on with"
        f" offset={number}, column={end + 1}]"
    )


def _fit(number: int, line: str, start: int, max_bytes: int) -> str:
    """The row of line ``number`` (from its character ``start``) cut so its text takes at
    most ``max_bytes`` bytes."""
    prefix = f"{number:>6}\t"
    budget = max(0, max_bytes - len(prefix) - 1)
    piece = line[start - 1 : start - 1 + MAX_LINE_CHARS]
    kept = piece.encode("utf-8")[:budget].decode("utf-8", "ignore")
    return prefix + _with_cut(kept, line, number, start)


def read_one(ctx: Context, args: ReadFileInput) -> ReadFileOutput:
    """``read_file`` itself, shared with ``read_multiple_files``."""
    ws = ctx.ws
    path = ctx.path(args.path)
    st = ws.stat(path)
    if st.is_dir():
        raise ToolError("is_directory", f"{path} is a directory; call ls or list_tree on it")
    if args.version is not None:
        data = ws.read_version(path, args.version)
        version = args.version
    else:
        data = ws.read(path)  # the tracked read
        version = version_of(ws, path, st)
    max_bytes = args.max_bytes
    if ctx.limits.max_read_bytes is not None:
        max_bytes = min(max_bytes, ctx.limits.max_read_bytes)
    text = text_of(data)
    lines = [] if text is None else text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another
    total = len(lines)
    if total == 0:  # nothing to show: a binary file (described) or an empty one
        binary = text is None
        return ReadFileOutput(
            path=path,
            content="",
            size=len(data),
            total_lines=0,
            line_range=None,
            truncated=False,
            version=version,
            binary=binary,
            mime=sniff_type(data[:SNIFF_BYTES]) if binary else None,
        )
    if args.offset > total:
        raise ToolError(
            "invalid_argument",
            f"offset {args.offset} is past the end of {path}: it has {total:,} lines",
        )
    if args.column > len(lines[args.offset - 1]) + 1:
        raise ToolError(
            "invalid_argument",
            f"column {args.column} is past the end of line {args.offset} of {path}: it has"
            f" {len(lines[args.offset - 1]):,} characters",
        )
    content, shown = _number(lines, args.offset, args.limit, max_bytes, args.column)
    last = args.offset + shown - 1
    truncated = last < total
    return ReadFileOutput(
        path=path,
        content=content,
        size=len(data),
        total_lines=total,
        line_range=(args.offset, last),
        truncated=truncated,
        next_offset=last + 1 if truncated else None,
        version=version,
    )


def text_of(data: bytes) -> str | None:
    """The text of ``data``, or None for binary content (a NUL byte in its first 8 KiB, as
    git judges, or not UTF-8)."""
    if b"\0" in data[:SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class WholeText(NamedTuple):
    """A file's whole text as a tool shows it (``whole_text``)."""

    content: str
    size: int
    truncated: bool = False
    binary: bool = False
    mime: str | None = None


def whole_text(ctx: Context, path: str, most: int | None = None) -> WholeText:
    """The whole text of the file at ``path`` (a tracked read): a binary file described, not
    shown; the text cut on a character boundary at ``most`` bytes or the policy's
    ``max_read_bytes``, whichever is smaller. For the profiles whose read returns a file
    whole, unnumbered."""
    data = ctx.ws.read(path)
    text = text_of(data)
    if text is None:
        return WholeText("", len(data), binary=True, mime=sniff_type(data[:SNIFF_BYTES]))
    limit = min((n for n in (most, ctx.limits.max_read_bytes) if n is not None), default=None)
    if limit is not None and len(data) > limit:
        cut = data[:limit].decode("utf-8", errors="ignore")
        return WholeText(cut, len(data), truncated=True)
    return WholeText(text, len(data))


@tool(
    "read_file",
    title="Read a file",
    tracks_reads=True,
    idempotent=True,
    description="""Read a text file with line numbers (cat -n: number, tab, line). When more
    remains, the result ends with a marker giving the offset to read on from. Binary files are
    described, not shown. The result's `version` is what to pass as expected_version to a
    later write. The policy may require reading a file before overwriting or editing it.""",
)
def read_file(ctx: Context, args: ReadFileInput) -> ReadFileOutput:
    return read_one(ctx, args)


class ReadMultipleFilesInput(ToolInput):
    paths: list[str] = Field(min_length=1, max_length=100, description="the files to read")


class FileError(ToolOutput):
    path: str
    error: dict[str, str]


class ReadMultipleFilesOutput(ToolOutput):
    files: list[ReadFileOutput | FileError]

    def text(self) -> str:
        parts = []
        for item in self.files:
            if isinstance(item, FileError):
                body = f"Error [{item.error['code']}]: {item.error['message']}"
            else:
                body = item.text()
            parts.append(f"==> {item.path} <==\n{body}")
        return "\n\n".join(parts)


@tool(
    "read_multiple_files",
    title="Read several files",
    tracks_reads=True,
    idempotent=True,
    description="""Read several text files at once, each as read_file would (line numbers,
    first 2000 lines). A file that fails is reported in its place without stopping the others.
    Prefer this over many read_file calls.""",
)
def read_multiple_files(ctx: Context, args: ReadMultipleFilesInput) -> ReadMultipleFilesOutput:
    files: list[ReadFileOutput | FileError] = []
    budget = ctx.limits.max_read_bytes
    for raw in args.paths:
        try:
            one = ReadFileInput(path=raw)
            if budget is not None:
                one.max_bytes = max(1, budget // len(args.paths))
            files.append(read_one(ctx, one))
        except Exception as exc:  # one failure must not stop the others
            error = from_exception(exc)
            files.append(FileError(path=raw, error={"code": error.code, "message": error.message}))
    return ReadMultipleFilesOutput(files=files)
