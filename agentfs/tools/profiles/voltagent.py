"""The ``voltagent`` profile: VoltAgent's workspace toolkits (filesystem, search, sandbox,
skills) over a workspace, by their tool names, parameters and result fields. VoltAgent's
names are agentfs's own, so each tool here is run by a ``Toolset`` under the policy entry of
the agentfs tool of the same name, and runs that tool's function: only the parameters and the
result fields VoltAgent names differently are changed.

Differences from agentfs's own surface:

- Paths are workspace paths that start with ``/``: a relative path (``src/a.ts``) is refused
  (``invalid_path``) where agentfs reads it from the root. This holds for every ``path`` of
  the filesystem and search tools; ``execute_command``'s ``cwd`` is agentfs's.
- Fewer parameters: each tool takes only VoltAgent's. ``read_file`` has no ``column``,
  ``max_bytes`` or ``version``; ``write_file``, ``edit_file`` and ``delete_file`` no
  ``expected_version``; ``edit_file`` no ``dry_run``; ``glob`` no paging (``limit``,
  ``offset``); ``grep`` none of its modes and options (``output_mode``, context lines, case,
  paging, ...); ``workspace_search`` no ``path`` or ``glob``; the skill file readers no
  ``offset``, ``limit`` or ``max_bytes``. Any other argument is ``invalid_argument``.
- ``ls``, ``list_tree`` and ``workspace_index`` require ``path`` (agentfs's default to the
  root): VoltAgent marks no default for it.
- ``workspace_search``'s ``mode`` defaults to ``hybrid`` (agentfs picks hybrid when the
  workspace has vectors, else bm25); without vectors the search answers from keywords and its
  ``note`` says so. Each hit's ``score_details`` and ``line_range`` are ``scoreDetails`` and
  ``lineRange``; ``content`` is left out when ``include_content`` is false (agentfs gives null).
- ``execute_command``'s ``exit_code``, ``duration_ms``, ``timed_out``, ``stdout_truncated``
  and ``stderr_truncated`` are ``exitCode``, ``durationMs``, ``timedOut``,
  ``stdoutTruncated`` and ``stderrTruncated``.

Where VoltAgent's description says nothing, this profile does what agentfs's own tools do:

- ``read_file``'s ``offset`` (the first line, from 1) and ``limit`` (most lines, 2,000) take
  agentfs's defaults when left out, and its result is agentfs's (``content`` numbered by
  line, ``total_lines``, ``line_range``, ``next_offset``, ...). It is a tracked read: the
  policy's ``require_read_before_write`` holds for the writes, and a file changed since it was
  read must be read again.
- ``glob`` and ``grep`` search from the root when ``path`` is left out; ``grep`` gives
  agentfs's default, the files with a match (``files``), and both give at most 250 results,
  ``truncated`` saying when more exist.
- Every other result (``ls``, ``stat``, ``write_file``, ``edit_file``'s diff, ``list_tree``,
  the index and skill tools, ...) is agentfs's, field for field, snake_case; so are the fields
  of a result VoltAgent does not name (a search's ``mode``, ``note`` and ``pending``, a hit's
  ``path``, a command's ``snapshot``, ``mode``, ``conflicts``, ``skipped``, ``out_of_memory``,
  ``denied``, ``denied_total``).
- ``list_files`` is an alias of ``list_tree``, as in agentfs. Read-only mode hides and refuses
  every tool that changes the workspace: the filesystem writes, ``workspace_index_content``
  and ``execute_command``. ``execute_command`` asks for approval by default, as agentfs's.
- Errors are ``ToolError``s with agentfs's codes (``not_found``, ``denied``, ...); paths the
  policy denies are refused or left out of listings and searches.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from pydantic import Field, PrivateAttr
from typing_extensions import TypedDict

from agentfs.tools import commands, editing, files, finding, listing, reading, skills
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.spec import TOOLS, Surface, Tool, ToolInput, ToolOutput, absent

SURFACE = Surface("voltagent")

PATH_DOC = "a workspace path starting with / (/src/index.ts)"


def rooted(raw: str) -> str:
    """``raw`` when it is a workspace path (it starts with ``/``); ``invalid_path`` if not."""
    if not raw.startswith("/"):
        raise ToolError(
            "invalid_path", f"{raw!r} is not a workspace path: paths start with / (/{raw})"
        )
    return raw


class PathInput(ToolInput):
    path: str = Field(description=PATH_DOC)


# --- filesystem ---------------------------------------------------------------------------------


@SURFACE.tool(
    "ls",
    title="List a directory",
    description="""List the directory `path`: each entry's name, type (file, directory,
    symlink), size and modification time.""",
    idempotent=True,
    governed_by="ls",
)
def ls(ctx: Context, args: PathInput) -> listing.LsOutput:
    return listing.ls(ctx, listing.LsInput(path=rooted(args.path)))


class ReadFileInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    offset: int | None = Field(None, ge=1, description="first line to show, from 1 (default 1)")
    limit: int | None = Field(None, ge=1, description="most lines to show (default 2000)")


@SURFACE.tool(
    "read_file",
    title="Read a file",
    description="""Read a text file, its lines numbered. `offset` is the first line (from 1)
    and `limit` the most lines; a longer file says where to read on (next_offset). A binary
    file is described, not shown.""",
    tracks_reads=True,
    idempotent=True,
    governed_by="read_file",
)
def read_file(ctx: Context, args: ReadFileInput) -> reading.ReadFileOutput:
    given = args.model_dump(exclude_none=True)
    return reading.read_file(ctx, reading.ReadFileInput(**given | {"path": rooted(args.path)}))


class WriteFileInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    content: str = Field(description="the whole content of the file (UTF-8 text)")
    overwrite: bool = Field(False, description="replace the file if it exists")
    create_parent_dirs: bool = Field(True, description="make missing parent directories")


@SURFACE.tool(
    "write_file",
    title="Write a file",
    description="""Write `content` to the file `path`. An existing file is replaced only with
    `overwrite=true`; missing parent directories are made unless `create_parent_dirs=false`.""",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="write_file",
)
def write_file(ctx: Context, args: WriteFileInput) -> files.WriteFileOutput:
    rooted(args.path)
    return files.write_file(ctx, files.WriteFileInput(**args.model_dump()))


class EditFileInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    old_string: str = Field(description="the exact text to replace")
    new_string: str = Field(description="the text to put in its place")
    replace_all: bool = Field(False, description="replace every occurrence, not just one")


@SURFACE.tool(
    "edit_file",
    title="Edit a file",
    description="""Replace `old_string` with `new_string` in the file `path`. `old_string`
    must occur once unless `replace_all=true`. Returns the diff.""",
    mutates=True,
    destructive=True,
    governed_by="edit_file",
)
def edit_file(ctx: Context, args: EditFileInput) -> editing.EditOutput:
    rooted(args.path)
    return editing.edit_file(ctx, editing.EditFileInput(**args.model_dump()))


class DeleteFileInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    recursive: bool = Field(False, description="also delete a directory and all it holds")


@SURFACE.tool(
    "delete_file",
    title="Delete a file",
    description="""Delete the file `path` (a directory only with `recursive=true`).""",
    mutates=True,
    destructive=True,
    governed_by="delete_file",
)
def delete_file(ctx: Context, args: DeleteFileInput) -> files.RemovedOutput:
    rooted(args.path)
    return files.delete_file(ctx, files.DeleteFileInput(**args.model_dump()))


@SURFACE.tool(
    "stat",
    title="Describe a path",
    description="""The type, size, mode, times and version of `path`.""",
    idempotent=True,
    governed_by="stat",
)
def stat(ctx: Context, args: PathInput) -> listing.StatOutput:
    return listing.stat(ctx, listing.StatInput(path=rooted(args.path)))


@SURFACE.tool(
    "mkdir",
    title="Make a directory",
    description="""Make the directory `path`, and its missing parents unless
    `recursive=false`.""",
    mutates=True,
    idempotent=True,
    governed_by="mkdir",
)
def mkdir(ctx: Context, args: files.MkdirInput) -> files.MkdirOutput:
    rooted(args.path)
    return files.mkdir(ctx, args)


@SURFACE.tool(
    "rmdir",
    title="Remove a directory",
    description="""Remove the directory `path`: an empty one, or with `recursive=true` one
    and all it holds.""",
    mutates=True,
    destructive=True,
    governed_by="rmdir",
)
def rmdir(ctx: Context, args: files.RmdirInput) -> files.RemovedOutput:
    rooted(args.path)
    return files.rmdir(ctx, args)


class ListTreeInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    max_depth: int = Field(4, ge=1, le=64, description="levels below path to show")


@SURFACE.tool(
    "list_tree",
    title="Show a directory tree",
    description="""The tree of directories and files below `path`, `max_depth` levels
    deep.""",
    idempotent=True,
    aliases=("list_files",),
    governed_by="list_tree",
)
def list_tree(ctx: Context, args: ListTreeInput) -> listing.ListTreeOutput:
    rooted(args.path)
    return listing.list_tree(ctx, listing.ListTreeInput(**args.model_dump()))


class GlobInput(ToolInput):
    pattern: str = Field(description="glob: ** any depth, * and ? within a name, {a,b}")
    path: str | None = Field(None, description="directory to search in (default: /)")


@SURFACE.tool(
    "glob",
    title="Find files by name",
    description="""The paths matching the glob `pattern` (**/*.ts) below `path` (the root
    when left out).""",
    idempotent=True,
    governed_by="glob",
)
def glob(ctx: Context, args: GlobInput) -> finding.GlobOutput:
    path = rooted(args.path) if args.path is not None else "/"
    return finding.glob(ctx, finding.GlobInput(pattern=args.pattern, path=path))


class GrepInput(ToolInput):
    pattern: str = Field(description="regular expression (RE2 syntax)")
    path: str | None = Field(None, description="file or directory to search (default: /)")
    glob: str | None = Field(None, description="only files matching this glob, e.g. *.ts")


@SURFACE.tool(
    "grep",
    title="Find files by content",
    description="""The files below `path` (the root when left out) with a line matching the
    regular expression `pattern`, only those matching `glob` if given.""",
    idempotent=True,
    governed_by="grep",
)
def grep(ctx: Context, args: GrepInput) -> finding.GrepOutput:
    path = rooted(args.path) if args.path is not None else "/"
    return finding.grep(ctx, finding.GrepInput(pattern=args.pattern, path=path, glob=args.glob))


# --- search -------------------------------------------------------------------------------------


class WorkspaceIndexInput(ToolInput):
    path: str = Field(description="directory whose files to index (" + PATH_DOC + ")")
    glob: str = Field("**/*", description="only files matching this glob")
    max_files: int = Field(200, ge=1, description="most files to report on")


@SURFACE.tool(
    "workspace_index",
    title="Index files for search",
    description="""Index the files below `path` matching `glob` for workspace_search, and
    report on at most `max_files` of them.""",
    idempotent=True,
    governed_by="workspace_index",
)
def workspace_index(ctx: Context, args: WorkspaceIndexInput) -> finding.WorkspaceIndexOutput:
    rooted(args.path)
    return finding.workspace_index(ctx, finding.WorkspaceIndexInput(**args.model_dump()))


@SURFACE.tool(
    "workspace_index_content",
    title="Index content for search",
    description="""Store `content` at the workspace path `path` (from `source`) so that
    workspace_search finds it.""",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="workspace_index_content",
)
def workspace_index_content(
    ctx: Context, args: finding.IndexContentInput
) -> finding.IndexContentOutput:
    rooted(args.path)
    return finding.workspace_index_content(ctx, args)


class WorkspaceSearchInput(ToolInput):
    query: str = Field(description="what you are looking for, in words or code terms")
    mode: Literal["hybrid", "bm25", "vector"] = Field(
        "hybrid", description="hybrid: keywords and meaning; bm25: keywords; vector: meaning"
    )
    top_k: int = Field(5, ge=1, le=100, description="most files to return")
    min_score: float = Field(0.0, ge=0.0, le=1.0, description="drop hits scoring below this")
    include_content: bool = Field(True, description="include each hit's best passage")
    snippet_length: int = Field(200, ge=1, description="characters of snippet per hit")
    vector_weight: float = Field(0.6, ge=0.0, le=1.0, description="weight of meaning in hybrid")


class SearchHit(TypedDict):
    path: str
    score: float
    scoreDetails: dict[str, float | None]
    lineRange: tuple[int, int]
    snippet: str
    content: NotRequired[str]


class WorkspaceSearchOutput(ToolOutput):
    mode: str = Field(description="the mode used")
    hits: list[SearchHit] = Field(
        description="best first: path, score (0..1), scoreDetails, lineRange (1-based),"
        " snippet, content"
    )
    note: str | None = Field(
        None, description="why the mode differs from the one asked for", exclude_if=absent
    )
    pending: int = Field(0, description="passages still waiting to be embedded")
    _said: str = PrivateAttr("")

    def text(self) -> str:
        return self._said


def _hit(found: Any) -> SearchHit:
    hit: SearchHit = {
        "path": found.path,
        "score": found.score,
        "scoreDetails": found.score_details,
        "lineRange": found.line_range,
        "snippet": found.snippet,
    }
    if found.content is not None:
        hit["content"] = found.content
    return hit


@SURFACE.tool(
    "workspace_search",
    title="Search the workspace",
    description="""Ranked search over the indexed workspace for a question or topic, best
    first, one hit per file: its score (0..1), scoreDetails, lineRange and snippet, and its
    passage unless `include_content=false`. `mode` is hybrid (keywords and meaning, the
    default), bm25 (keywords) or vector (meaning).""",
    idempotent=True,
    governed_by="workspace_search",
)
def workspace_search(ctx: Context, args: WorkspaceSearchInput) -> WorkspaceSearchOutput:
    found = finding.workspace_search(ctx, finding.WorkspaceSearchInput(**args.model_dump()))
    out = WorkspaceSearchOutput(
        mode=found.mode, hits=[_hit(h) for h in found.hits], note=found.note, pending=found.pending
    )
    out._said = found.text()
    return out


# --- sandbox ------------------------------------------------------------------------------------


class ExecuteCommandOutput(ToolOutput):
    stdout: str
    stderr: str
    exitCode: int = Field(description="the command's exit status; -9 when its timeout killed it")
    durationMs: int
    timedOut: bool
    aborted: bool
    stdoutTruncated: bool
    stderrTruncated: bool
    snapshot: str | None = Field(description="restore this snapshot to undo the command")
    mode: str = Field(description="mount or copy: how the command saw the workspace")
    conflicts: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    out_of_memory: bool = False
    denied: list[str] = Field(default_factory=list)
    denied_total: int = 0
    _said: str = PrivateAttr("")

    def text(self) -> str:
        return self._said


#: agentfs's result fields VoltAgent names in camelCase.
CAMEL = {
    "exit_code": "exitCode",
    "duration_ms": "durationMs",
    "timed_out": "timedOut",
    "stdout_truncated": "stdoutTruncated",
    "stderr_truncated": "stderrTruncated",
}


@SURFACE.tool(
    "execute_command",
    title="Run a shell command",
    description="""Run `command` in the workspace (from `cwd`), killed after `timeout_ms`;
    `env` adds variables; each output stream is cut at `max_output_kb`. Returns stdout,
    stderr, exitCode, durationMs, timedOut and whether the output was cut.""",
    mutates=True,
    destructive=True,
    elsewhere=True,
    governed_by="execute_command",
)
def execute_command(ctx: Context, args: commands.ExecuteCommandInput) -> ExecuteCommandOutput:
    ran = commands.execute_command(ctx, args)
    out = ExecuteCommandOutput.of({CAMEL.get(k, k): v for k, v in ran.data().items()})
    out._said = ran.text()
    return out


# --- skills -------------------------------------------------------------------------------------


def _own(name: str) -> Tool:
    """agentfs's own tool ``name`` (its module is imported above)."""
    spec = TOOLS.find(name)
    if spec is None:
        raise LookupError(f"agentfs has no tool {name!r}")
    return spec


# the skills tools are agentfs's own, name, parameters and result alike
SURFACE.include(
    *(
        _own(name)
        for name in (
            "workspace_list_skills",
            "workspace_search_skills",
            "workspace_read_skill",
            "workspace_activate_skill",
            "workspace_deactivate_skill",
        )
    )
)


class SkillFileInput(ToolInput):
    skill_id: str = Field(description="the skill's id")
    file: str = Field(description="a file the skill's SKILL.md lists")


#: The skill file readers: VoltAgent's name, the kind of file, agentfs's function.
SKILL_FILES = (
    ("workspace_read_skill_reference", "reference", skills.workspace_read_skill_reference),
    ("workspace_read_skill_script", "script", skills.workspace_read_skill_script),
    ("workspace_read_skill_asset", "asset", skills.workspace_read_skill_asset),
)


def _skill_file_tool(name: str, kind: str, read: Any) -> None:
    def run(ctx: Context, args: SkillFileInput) -> reading.ReadFileOutput:
        output: reading.ReadFileOutput = read(ctx, skills.SkillFileInput(**args.model_dump()))
        return output

    SURFACE.tool(
        name,
        title=f"Read a skill's {kind}",
        description=f"""A {kind} file of the skill `skill_id`; `file` must be listed in its
        SKILL.md.""",
        tracks_reads=True,
        governed_by=name,
    )(run)


for _name, _kind, _read in SKILL_FILES:
    _skill_file_tool(_name, _kind, _read)
