"""The tools that find things: ``glob``, ``grep`` (ripgrep's options as Claude Code names them),
``search_files`` (the MCP filesystem server's), and ranked search over the index.

Everything runs inside the workspace, so a search is one call, not a walk from outside; results
are paged and say how to get the next page, and paths the policy denies never appear.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentfs.search.ranking import DEFAULTS, SearchHit
from agentfs.tools.common import PATH_DOC, EntryType, iso
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.spec import ToolInput, ToolOutput, absent, tool

#: Skipped (binary) files a grep result names; the rest are only counted.
SKIPPED_SHOWN = 20
#: Characters that make a ``search_files`` pattern a glob rather than a part of a name.
_GLOB_CHARS = frozenset("*?[{")


class GlobInput(ToolInput):
    pattern: str = Field(
        description="** any depth, * and ? within a name, [abc], {a,b}; relative to path"
        " unless it starts with /, e.g. **/*.py, src/**/test_*.py, *.{md,txt}"
    )
    path: str = Field("/", description="directory to search in (" + PATH_DOC + ")")
    limit: int = Field(250, ge=1, description="most paths to return")
    offset: int = Field(0, ge=0, description="paths to skip (for the next page)")


class GlobMatch(ToolOutput):
    path: str
    type: EntryType
    size: int
    modified: str


class GlobOutput(ToolOutput):
    matches: list[GlobMatch]
    total: int = Field(description="paths matching in all")
    truncated: bool
    next_offset: int | None = Field(None, description="offset of the next page")

    def text(self) -> str:
        if not self.matches:
            return "No files matched." if not self.total else "No more matches."
        lines = [m.path for m in self.matches]
        if self.truncated:
            lines.append(
                f"... {self.total:,} matches in all; call glob with offset={self.next_offset}"
                " for more"
            )
        return "\n".join(lines)


def _glob(ctx: Context, pattern: str, path: str, limit: int, offset: int) -> GlobOutput:
    base = ctx.path(path)
    found = [m for m in ctx.ws.glob(pattern, base) if ctx.visible(m.path)]
    limit = ctx.cap(limit)
    page = found[offset : offset + limit]
    more = offset + len(page) < len(found)
    return GlobOutput(
        matches=[
            GlobMatch(path=m.path, type=_kind(m.type), size=m.size, modified=iso(m.mtime_ns))
            for m in page
        ],
        total=len(found),
        truncated=more,
        next_offset=offset + len(page) if more else None,
    )


def _kind(name: str) -> EntryType:
    return {"file": "file", "dir": "directory", "symlink": "symlink"}.get(name, "other")  # type: ignore[return-value]


@tool(
    "glob",
    title="Find files by name",
    idempotent=True,
    description="""Find files whose path matches a glob pattern, newest first; to search
    inside files use grep.""",
)
def glob(ctx: Context, args: GlobInput) -> GlobOutput:
    return _glob(ctx, args.pattern, args.path, args.limit, args.offset)


OutputMode = Literal["files_with_matches", "content", "count"]


class GrepInput(ToolInput):
    pattern: str = Field(
        description="a regular expression (RE2, like ripgrep: no backreferences or"
        " lookaround; e.g. def \\w+\\(, TODO|FIXME)"
    )
    path: str = Field("/", description="file or directory to search (" + PATH_DOC + ")")
    glob: str | None = Field(None, description="only files matching this glob, e.g. *.py")
    output_mode: OutputMode = Field(
        "files_with_matches",
        description="files_with_matches: the paths; content: the matching lines"
        " (path:line:text) and any context lines; count: matching lines per file",
    )
    case_insensitive: bool = Field(False, description="ignore case")
    line_numbers: bool = Field(True, description="show line numbers (content mode)")
    context: int = Field(0, ge=0, le=50, description="lines of context around each match")
    before: int = Field(0, ge=0, le=50, description="lines of context before each match")
    after: int = Field(0, ge=0, le=50, description="lines of context after each match")
    fixed_strings: bool = Field(False, description="the pattern is a literal string")
    multiline: bool = Field(False, description=". matches newlines; matches may span lines")
    head_limit: int = Field(250, ge=1, description="most entries (lines, files) to return")
    offset: int = Field(0, ge=0, description="entries to skip (for the next page)")


class GrepHit(ToolOutput):
    path: str
    line: int
    content: str = Field(description="the line, without its newline")
    match: bool = Field(description="false for a context line")


class GrepOutput(ToolOutput):
    mode: OutputMode
    files: list[str] = Field(description="files with a match (files_with_matches mode)")
    counts: dict[str, int] = Field(description="matching lines per file (count mode)")
    lines: list[GrepHit] = Field(description="matching and context lines (content mode)")
    total: int = Field(description="output entries in all")
    truncated: bool
    next_offset: int | None = None
    skipped: list[str] = Field(
        description=f"binary or non-UTF-8 files that were not searched (the first {SKIPPED_SHOWN})"
    )
    skipped_total: int = Field(0, description="how many files were skipped in all")
    line_numbers: bool = True

    def text(self) -> str:
        if self.mode == "files_with_matches":
            rows = list(self.files)
        elif self.mode == "count":
            rows = [f"{path}:{n}" for path, n in self.counts.items()]
        else:
            rows = _rg_lines(self.lines, self.line_numbers)
        if not rows:
            return "No matches." if not self.total else "No more matches."
        if self.truncated:
            rows.append(
                f"... {self.total:,} entries in all; call grep with offset={self.next_offset}"
                " for more"
            )
        return "\n".join(rows)


def _rg_lines(lines: list[GrepHit], numbers: bool) -> list[str]:
    """ripgrep's layout: ``path:line:text`` for a match, ``path-line-text`` for context,
    ``--`` between groups that are not adjacent."""
    out: list[str] = []
    previous: tuple[str, int] | None = None
    has_context = any(not hit.match for hit in lines)
    for hit in lines:
        if has_context and previous is not None and previous != (hit.path, hit.line - 1):
            out.append("--")
        sep = ":" if hit.match else "-"
        number = f"{hit.line}{sep}" if numbers else ""
        out.append(f"{hit.path}{sep}{number}{hit.content}")
        previous = (hit.path, hit.line)
    return out


def _grep(ctx: Context, args: GrepInput) -> GrepOutput:
    path = ctx.path(args.path)
    head = ctx.cap(args.head_limit)
    before = max(args.before, args.context)
    after = max(args.after, args.context)
    output = {"files_with_matches": "files", "content": "content", "count": "count"}[
        args.output_mode
    ]
    # without a policy filter, the search may stop once it has the page and one more entry
    filtered = bool(ctx.policy.deny or ctx.policy.allow)
    enough = None if filtered else args.offset + head + 1
    found = ctx.ws.grep(
        args.pattern,
        path,
        glob=args.glob,
        ignore_case=args.case_insensitive,
        fixed_strings=args.fixed_strings,
        output=output,  # type: ignore[arg-type]
        before=before if output == "content" else 0,
        after=after if output == "content" else 0,
        max_results=enough,
        multiline=args.multiline,
    )
    files = [p for p in found.files if ctx.visible(p)]
    shown = set(files)
    hits = [
        GrepHit(path=g.path, line=g.line, content=g.text, match=g.is_match)
        for g in found.lines
        if g.path in shown
    ]
    skipped = [p for p in found.skipped if ctx.visible(p)]
    total = len(hits) if args.output_mode == "content" else len(files)
    start, end = args.offset, args.offset + head
    more = end < total or found.truncated
    result = GrepOutput(
        mode=args.output_mode,
        files=[],
        counts={},
        lines=[],
        total=total,
        truncated=more,
        next_offset=min(end, total) if more else None,
        skipped=skipped[:SKIPPED_SHOWN],
        skipped_total=len(skipped),
        line_numbers=args.line_numbers,
    )
    if args.output_mode == "content":
        result.lines = hits[start:end]
    elif args.output_mode == "count":
        result.counts = {p: found.counts[p] for p in files[start:end]}
    else:
        result.files = files[start:end]
    return result


@tool(
    "grep",
    title="Search file contents",
    idempotent=True,
    description="""Search the contents of text files, like ripgrep; binary files are
    skipped. For a question in natural language use workspace_search.""",
)
def grep(ctx: Context, args: GrepInput) -> GrepOutput:
    return _grep(ctx, args)


class SearchFilesInput(ToolInput):
    path: str = Field("/", description="directory to search in (" + PATH_DOC + ")")
    pattern: str = Field(
        description="names: a glob (**/*.py; one without /, such as *.py, matches at any"
        " depth) or a part of a file name (config); a regular expression with content_search"
    )
    content_search: bool = Field(False, description="search inside files instead of names")


class SearchFilesOutput(ToolOutput):
    paths: list[str]
    truncated: bool

    def text(self) -> str:
        if not self.paths:
            return "No matches."
        more = ["... more matches: narrow the pattern or the path"] if self.truncated else []
        return "\n".join(self.paths + more)


@tool(
    "search_files",
    title="Find files by name or content",
    idempotent=True,
    description="""Find files under a directory by name or by content; paths only: use grep
    for the matching lines.""",
)
def search_files(ctx: Context, args: SearchFilesInput) -> SearchFilesOutput:
    if args.content_search:
        grep_args = GrepInput(pattern=args.pattern, path=args.path, head_limit=1000)
        found = _grep(ctx, grep_args)
        return SearchFilesOutput(paths=found.files, truncated=found.truncated)
    pattern = args.pattern
    if not _GLOB_CHARS & set(pattern):
        pattern = f"**/*{pattern}*"
    elif "/" not in pattern:  # a name pattern (*.py) matches at any depth, as in find -name
        pattern = f"**/{pattern}"
    names = _glob(ctx, pattern, args.path, 1000, 0)
    return SearchFilesOutput(paths=[m.path for m in names.matches], truncated=names.truncated)


class WorkspaceSearchInput(ToolInput):
    query: str = Field(description="what you are looking for, in words or code terms")
    mode: Literal["hybrid", "bm25", "vector"] | None = Field(
        DEFAULTS.mode,
        description="hybrid: keywords and meaning; bm25: keywords; vector: meaning (default:"
        " hybrid); a workspace without vectors answers with bm25",
    )
    top_k: int = Field(DEFAULTS.top_k, ge=1, le=100, description="most files to return")
    min_score: float = Field(
        DEFAULTS.min_score, ge=0.0, le=1.0, description="drop hits scoring below this"
    )
    #: An agent reads the passage it will act on: on by default here, unlike the API.
    include_content: bool = Field(True, description="include each hit's best passage")
    snippet_length: int = Field(
        DEFAULTS.snippet_length, ge=1, description="characters of snippet per hit"
    )
    vector_weight: float = Field(
        DEFAULTS.vector_weight, ge=0.0, le=1.0, description="weight of meaning in hybrid"
    )
    path: str | None = Field(None, description="only files at or below this path")
    glob: str | None = Field(None, description="only files matching this glob")


class WorkspaceSearchOutput(ToolOutput):
    mode: str = Field(description="the mode used")
    hits: list[SearchHit] = Field(
        description="best first: path, score (0..1), score_details, line_range (1-based),"
        " snippet, content"
    )
    note: str | None = Field(
        None, description="why the mode differs from the one asked for", exclude_if=absent
    )
    pending: int = Field(0, description="passages still waiting to be embedded")

    def text(self) -> str:
        rows = [self.note] if self.note else []
        if not self.hits:
            rows.append("No results.")
        for hit in self.hits:
            first, last = hit.line_range
            rows.append(f"{hit.path}:{first}-{last} (score {hit.score:.2f})")
            body = hit.content if hit.content is not None else hit.snippet
            rows.extend("    " + line for line in body.rstrip("\n").split("\n"))
        return "\n".join(rows)


@tool(
    "workspace_search",
    title="Search the workspace by meaning",
    idempotent=True,
    description="""Ranked search of the workspace's files for a question or topic ("where
    are passwords hashed"), best first: one hit per file, with its best passage and line
    range. For an exact string or regular expression use grep; for names,
    glob.""",
)
def workspace_search(ctx: Context, args: WorkspaceSearchInput) -> WorkspaceSearchOutput:
    ws = ctx.ws
    base = ctx.path(args.path) if args.path is not None else "/"
    top_k = ctx.cap(args.top_k)
    found = ws.search(
        args.query,
        mode=args.mode,
        top_k=top_k,
        min_score=args.min_score,
        path=base,
        glob=args.glob,
        include_content=args.include_content,
        snippet_length=args.snippet_length,
        vector_weight=args.vector_weight,
    )
    hits = [h for h in found.hits if ctx.visible(h.path)]
    return WorkspaceSearchOutput(mode=found.mode, hits=hits, note=found.note, pending=found.pending)


class WorkspaceIndexInput(ToolInput):
    path: str = Field("/", description="directory whose files to index (" + PATH_DOC + ")")
    glob: str = Field("**/*", description="only files matching this glob")
    max_files: int = Field(200, ge=1, description="most files to report on")


class IndexedFile(ToolOutput):
    path: str
    state: str = Field(description="text (searchable), binary, too_large or off (not indexed)")


class WorkspaceIndexOutput(ToolOutput):
    files: list[IndexedFile]
    total_files: int = Field(description="files under path matching glob")
    chunks: int = Field(description="passages in the whole index")
    embedded: int = Field(description="passages with a vector")
    pending: int = Field(description="passages still waiting for a vector")

    def text(self) -> str:
        searchable = sum(f.state == "text" for f in self.files)
        rows = [
            f"{searchable} of {len(self.files)} files shown are searchable"
            f" ({self.total_files} match); index: {self.chunks:,} passages,"
            f" {self.embedded:,} with vectors, {self.pending:,} waiting"
        ]
        rows += [f"{f.path}: {f.state}" for f in self.files if f.state != "text"]
        return "\n".join(rows)


@tool(
    "workspace_index",
    title="Bring the search index up to date",
    idempotent=True,
    description="""Index and embed the files under a path for workspace_search, and report
    which are searchable (binary and very large files are not). Written files are indexed
    anyway: call this after bulk changes, or to see why a file is not found.""",
)
def workspace_index(ctx: Context, args: WorkspaceIndexInput) -> WorkspaceIndexOutput:
    ws = ctx.ws
    base = ctx.path(args.path)
    # the index is derived data: bringing it up to date changes no file, so a read-only
    # toolset may do it too; it runs outside the call's transaction (embedding takes time)
    status = ws.index_status() if ws.readonly else ws.index()
    states = dict(status.skipped)
    matches = [m for m in ws.glob(args.glob, base, sort="name") if m.type == "file"]
    visible = [m for m in matches if ctx.visible(m.path)]
    files = [
        IndexedFile(path=m.path, state=states.get(m.path, "text"))
        for m in visible[: ctx.cap(args.max_files)]
    ]
    return WorkspaceIndexOutput(
        files=files,
        total_files=len(visible),
        chunks=status.chunks,
        embedded=status.embedded,
        pending=status.pending,
    )


class IndexContentInput(ToolInput):
    path: str = Field(description="where to keep the content (" + PATH_DOC + ")")
    content: str = Field(description="the text to make searchable")
    source: str = Field("manual", description="where the text came from (kept in the audit)")


class IndexContentOutput(ToolOutput):
    path: str
    size: int
    searchable: bool

    def text(self) -> str:
        if self.searchable:
            return (
                f"Indexed {self.path} ({self.size:,} bytes): keyword search finds it now,"
                " meaning search once it is embedded."
            )
        return (
            f"Stored {self.path} ({self.size:,} bytes), but it is not searchable: too large,"
            " binary, or indexing is off."
        )


@tool(
    "workspace_index_content",
    title="Add text to the search index",
    mutates=True,
    destructive=True,
    idempotent=True,
    description="""Store a text (notes, a fetched page, a summary) as a file and index it,
    so workspace_search finds it; replaces any file at path.""",
)
def workspace_index_content(ctx: Context, args: IndexContentInput) -> IndexContentOutput:
    ws = ctx.ws
    path = ctx.path(args.path, write=True)
    data = args.content.encode("utf-8")
    ctx.check_size(len(data), path)
    try:
        if ws.stat(path).is_dir():
            raise ToolError("is_directory", f"{path} is a directory; give a file path")
    except FileNotFoundError:
        pass
    ws.write(path, data, parents=True)
    settings = ws.index_status()
    searchable = settings.enabled and len(data) <= settings.max_bytes and b"\0" not in data
    return IndexContentOutput(path=path, size=len(data), searchable=searchable)
