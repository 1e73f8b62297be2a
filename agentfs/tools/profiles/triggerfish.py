"""The ``triggerfish`` profile: Triggerfish's filesystem and shell tools (``read_file``,
``write_file``, ``edit_file``, ``list_directory``, ``search_files``, ``run_command``) over a
workspace, by their names and parameters, each run by a ``Toolset`` under the policy entry of
the agentfs tool doing the same job (``read_file``, ``write_file``, ``edit_file``, ``ls``,
``search_files``, ``execute_command``).

Paths: the workspace is the agent's whole filesystem. An absolute path names a workspace path
(``/src/app.py``); a relative one is relative to the root (``src/app.py``). Writes are scoped to
the workspace: a path whose ``..`` would climb above the root is refused (``invalid_path``)
rather than quietly held at the root; the other tools refuse it too, so one path means the
same to every tool.

Gaps: where Triggerfish's description says nothing, this profile does what agentfs's own
tools do:

- ``read_file`` returns the whole text of the file (no line numbers, no paging); a binary file
  (a NUL byte in its first 8 KiB, or not UTF-8) is described, not dumped; the policy's
  ``max_read_bytes`` cuts the text, with a line saying so. It is a tracked read
  (read-before-write relies on it).
- ``write_file`` creates or replaces a file without asking, and makes missing parent
  directories (as agentfs's ``write_file`` with ``overwrite=true``); the result is agentfs's
  (``Created``/``Replaced`` with the size and version). A directory at the path is
  ``is_directory``; the policy's ``max_write_bytes`` and read-before-write rules hold.
- ``edit_file`` is agentfs's ``edit_file`` replacing one occurrence, in this profile's words
  (``editing.replace``): an ``old_text`` that is missing fails with ``no_match`` and shows
  the closest lines of the file; one found N times fails with ``not_unique`` saying N and the
  lines; an empty ``old_text``, or one equal to ``new_text``, is ``invalid_argument``; in
  each case nothing changes. A file
  with CRLF line ends accepts ``\\n`` in both texts and keeps its CRLFs. The result is a
  unified diff, as agentfs's ``edit_file`` gives.
- ``list_directory`` lists names in name order, one a line, a directory's with a trailing
  ``/`` (a symlink is listed by its own name, unmarked); an empty directory says so; at most
  1,000 entries (fewer if the policy's ``max_results`` says so), then a line saying more exist.
- ``search_files`` by name treats ``pattern`` as a glob only (``*``, ``?``, ``[...]``,
  ``{a,b}``, ``**``): without a ``/`` it matches a file's name at any depth below ``path``,
  with one it matches the path relative to ``path``; files only, in path order. With
  ``content_search=true`` it gives the matching lines as ``path:line:text`` (ripgrep's layout),
  the pattern a regular expression (RE2 syntax) or, where it is not a valid one, plain text;
  binary files are skipped. At most 1,000 results either way. The content search also answers
  to the policy's ``grep`` entry: it is refused when ``grep`` is disabled, and leaves out what
  ``grep`` may not read.
- ``run_command`` is agentfs's ``execute_command`` (its command denylist, the sandbox, the
  mount, the snapshot taken first, approval by default) run at the root with its default
  timeout (10 s) and output limit (64 KiB of each stream); the result is the exit code, then
  stdout, then stderr marked ``[stderr]``; a killed command says it timed out.
- Errors are ``ToolError``s with agentfs's codes (``not_found``, ``denied``, ...), their
  advice naming this profile's tools; unknown arguments are refused (``invalid_argument``),
  and paths the policy denies are refused or left out of listings and searches.
"""

from __future__ import annotations

import errno
import itertools
from typing import Any

from pydantic import Field

from agentfs.core import paths
from agentfs.core.inodes import Stat
from agentfs.history.api import unified_diff
from agentfs.tools.commands import ExecuteCommandInput, execute_command
from agentfs.tools.common import text_to_change
from agentfs.tools.context import Context
from agentfs.tools.editing import Edit, replace
from agentfs.tools.errors import ToolError
from agentfs.tools.files import WriteFileInput, WriteFileOutput
from agentfs.tools.files import write_file as agentfs_write_file
from agentfs.tools.profiles.scope import resolve
from agentfs.tools.reading import whole_text
from agentfs.tools.spec import Surface, ToolInput, ToolOutput, absent

SURFACE = Surface("triggerfish")

#: Most entries a listing or a search returns unless the policy says fewer.
MOST_RESULTS = 1000

PATH_DOC = "a workspace path: absolute (/src/app.py) or from the root (src/app.py)"


def _stat(ctx: Context, path: str) -> Stat:
    """``path``'s status; ``not_found`` in this profile's words (its tools, not agentfs's)."""
    try:
        return ctx.ws.stat(path)
    except FileNotFoundError:
        raise _not_found(path) from None


def _not_found(path: str) -> ToolError:
    return ToolError(
        "not_found",
        f"{path} does not exist; call list_directory or search_files to find the right path",
    )


# --- read_file ----------------------------------------------------------------------------------


class PathInput(ToolInput):
    path: str = Field(description=PATH_DOC)


class ReadOutput(ToolOutput):
    path: str
    content: str = Field(description="the file's whole text; empty for a binary file")
    size: int = Field(description="bytes in the file")
    binary: bool = False
    mime: str | None = Field(None, description="type guess for a binary file", exclude_if=absent)
    truncated: bool = Field(False, description="the policy's max_read_bytes cut the text")

    def text(self) -> str:
        if self.binary:
            return f"{self.path} is a binary file ({self.size:,} bytes, {self.mime}); not shown."
        if self.truncated:
            return (
                f"{self.content}\n... cut at {len(self.content.encode()):,} of {self.size:,}"
                " bytes by the policy's read limit"
            )
        return self.content


@SURFACE.tool(
    "read_file",
    title="Read a file",
    description="""Read the whole text of a file. `path` is a workspace path (/src/app.py, or
    src/app.py from the root). A binary file is described, not shown.""",
    tracks_reads=True,
    idempotent=True,
    governed_by="read_file",
)
def read_file(ctx: Context, args: PathInput) -> ReadOutput:
    path = resolve(ctx, args.path)
    if _stat(ctx, path).is_dir():
        raise ToolError("is_directory", f"{path} is a directory; call list_directory on it")
    return ReadOutput(path=path, **whole_text(ctx, path)._asdict())


# --- write_file ---------------------------------------------------------------------------------


class WriteInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    content: str = Field(description="the whole content of the file (UTF-8 text)")


@SURFACE.tool(
    "write_file",
    title="Write a file",
    description="""Write `content` to a file in the workspace, creating it (and any missing
    directories) or replacing what it held. `path` is relative to the workspace (a leading /
    is its root); it cannot leave the workspace.""",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="write_file",
)
def write_file(ctx: Context, args: WriteInput) -> WriteFileOutput:
    path = resolve(ctx, args.path, write=True)
    return agentfs_write_file(ctx, WriteFileInput(path=path, content=args.content, overwrite=True))


# --- edit_file ----------------------------------------------------------------------------------


class EditInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    old_text: str = Field(description="the exact text to replace; it must occur once")
    new_text: str = Field(description="the text to put in its place")


class EditOutput(ToolOutput):
    path: str
    diff: str = Field(description="unified diff of the change")
    version: int = Field(description="the file's version after the edit (0: none kept)")

    def text(self) -> str:
        return f"Edited {self.path} (now version {self.version}).\n{self.diff}"


@SURFACE.tool(
    "edit_file",
    title="Edit a file",
    description="""Replace one exact, unique piece of a file: `old_text` (whitespace included)
    becomes `new_text`. `old_text` must occur exactly once in the file: when it is missing or
    occurs more than once the edit fails and the file is left as it was; add surrounding lines
    to make it unique. Returns a unified diff of the change.""",
    mutates=True,
    destructive=True,
    governed_by="edit_file",
)
def edit_file(ctx: Context, args: EditInput) -> EditOutput:
    path = resolve(ctx, args.path, write=True)
    if _stat(ctx, path).is_dir():
        raise ToolError("is_directory", f"{path} is a directory; edit_file edits a file")
    before = text_to_change(ctx.ws, path)
    change = Edit(old_string=args.old_text, new_string=args.new_text)
    after, _ = replace(path, before, change, names=("old_text", "new_text"))
    data = after.encode("utf-8")
    ctx.check_size(len(data), path)
    diff = unified_diff(before.encode("utf-8"), data, f"a{path}", f"b{path}")
    version = ctx.write(path, data)
    return EditOutput(path=path, diff=diff, version=version)


# --- list_directory -----------------------------------------------------------------------------


class ListOutput(ToolOutput):
    path: str
    entries: list[str] = Field(description="names in the directory, a directory's ending in /")
    truncated: bool = False

    def text(self) -> str:
        if not self.entries:
            return f"{self.path} is empty."
        more = [f"... only the first {len(self.entries):,} entries are shown"]
        return "\n".join(self.entries + (more if self.truncated else []))


@SURFACE.tool(
    "list_directory",
    title="List a directory",
    description="""List the files and directories in a directory, one name a line; the names
    of directories end with /.""",
    idempotent=True,
    governed_by="ls",
)
def list_directory(ctx: Context, args: PathInput) -> ListOutput:
    path = resolve(ctx, args.path)
    if not _stat(ctx, path).is_dir():
        raise ToolError("not_directory", f"{path} is not a directory; call read_file on it")
    cap = ctx.cap(MOST_RESULTS)
    listing = (
        (name, st) for name, st in ctx.ws.readdir_plus(path) if ctx.visible(paths.join(path, name))
    )
    kept = list(itertools.islice(listing, cap + 1))
    entries = [name + ("/" if st.is_dir() else "") for name, st in kept[:cap]]
    return ListOutput(path=path, entries=entries, truncated=len(kept) > cap)


# --- search_files -------------------------------------------------------------------------------


class SearchInput(ToolInput):
    path: str = Field(description="the directory to search in (" + PATH_DOC + ")")
    pattern: str = Field(
        min_length=1,
        description="a glob for file names (*.py matches at any depth, src/*.py from path), or"
        " with content_search=true a text or regular expression to find in the files",
    )
    content_search: bool = Field(
        False, description="search the files' contents instead of their names"
    )


class SearchOutput(ToolOutput):
    files: list[str] = Field(description="the files whose names match (a name search)")
    lines: list[dict[str, Any]] = Field(
        description="the matching lines, each {path, line, text} (a content search)"
    )
    content_search: bool
    truncated: bool = False

    def text(self) -> str:
        if self.content_search:
            rows = [f"{hit['path']}:{hit['line']}:{hit['text']}" for hit in self.lines]
        else:
            rows = list(self.files)
        if not rows:
            return "No matches."
        more = ["... more matches: narrow the pattern or the path"] if self.truncated else []
        return "\n".join(rows + more)


def _directory(ctx: Context, raw: str) -> str:
    path = resolve(ctx, raw)
    if not _stat(ctx, path).is_dir():
        raise ToolError("not_directory", f"{path} is not a directory; search_files searches one")
    return path


def _grep_lines(ctx: Context, pattern: str, base: str) -> tuple[list[dict[str, Any]], bool]:
    """The lines matching ``pattern`` below ``base`` that both this tool's and ``grep``'s
    policy let be shown; and whether there were more than the cap."""
    rules = ctx.toolset.policy.for_tool("grep")
    if not rules.enabled:
        raise ToolError(
            "denied", "searching contents is disabled by the policy (grep); search names only"
        )
    as_grep = Context(ctx.ws, "grep", rules, ctx.limits, ctx.toolset)
    try:
        found = ctx.ws.grep(pattern, base, output="content")
    except OSError as exc:
        if exc.errno != errno.EINVAL:  # the core refuses every pattern RE2 cannot run so
            raise
        found = ctx.ws.grep(pattern, base, output="content", fixed_strings=True)  # plain text
    shown: dict[str, bool] = {}
    cap = ctx.cap(MOST_RESULTS)
    hits: list[dict[str, Any]] = []
    for hit in found.lines:
        if not hit.is_match:
            continue
        if hit.path not in shown:
            shown[hit.path] = ctx.visible(hit.path) and as_grep.visible(hit.path)
        if shown[hit.path]:
            if len(hits) == cap:
                return hits, True
            hits.append({"path": hit.path, "line": hit.line, "text": hit.text})
    return hits, found.truncated


@SURFACE.tool(
    "search_files",
    title="Search files by name or content",
    description="""Find files below a directory whose names match a glob pattern (*.py
    matches at any depth; a pattern with / is matched from `path`), or with
    content_search=true, the lines of files matching a text or regular expression, as
    path:line:text.""",
    idempotent=True,
    governed_by="search_files",
)
def search_files(ctx: Context, args: SearchInput) -> SearchOutput:
    base = _directory(ctx, args.path)
    if args.content_search:
        lines, more = _grep_lines(ctx, args.pattern, base)
        return SearchOutput(files=[], lines=lines, content_search=True, truncated=more)
    pattern = args.pattern.lstrip("/")
    if "/" not in pattern:  # a name: at any depth
        pattern = "**/" + pattern
    cap = ctx.cap(MOST_RESULTS)
    matches = (m.path for m in ctx.ws.glob(pattern, base, sort="name") if ctx.visible(m.path))
    files = list(itertools.islice(matches, cap + 1))
    return SearchOutput(
        files=files[:cap], lines=[], content_search=False, truncated=len(files) > cap
    )


# --- run_command --------------------------------------------------------------------------------


class CommandInput(ToolInput):
    command: str = Field(min_length=1, description="the shell command line (run by /bin/sh -c)")


class CommandOutput(ToolOutput):
    stdout: str
    stderr: str
    exit_code: int = Field(description="the command's exit status (-9: killed at its timeout)")
    timed_out: bool = False
    truncated: bool = Field(False, description="stdout or stderr was cut at 64 KiB")
    denied: list[str] = Field(
        default_factory=list,
        description="'operation path' for what the policy refused the command (the first 50)",
    )
    snapshot: str | None = Field(
        None, description="the snapshot taken before it ran: restoring it undoes the command"
    )

    def text(self) -> str:
        head = "timed out and was killed" if self.timed_out else f"exit code {self.exit_code}"
        parts = [head + (" (output cut at 64 KiB)" if self.truncated else "")]
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("[stderr]\n" + self.stderr.rstrip("\n"))
        parts += [f"[refused by the policy] {line}" for line in self.denied]
        return "\n".join(parts)


@SURFACE.tool(
    "run_command",
    title="Run a shell command",
    description="""Run a shell command in the workspace directory (sandboxed) and get its
    stdout, stderr and exit code. Files it writes land in the workspace. Command lines the
    policy forbids (sudo, rm -rf /, ...) are refused without running.""",
    mutates=True,
    destructive=True,
    elsewhere=True,
    governed_by="execute_command",
)
def run_command(ctx: Context, args: CommandInput) -> CommandOutput:
    ran = execute_command(ctx, ExecuteCommandInput(command=args.command))
    return CommandOutput(
        stdout=ran.stdout,
        stderr=ran.stderr,
        exit_code=ran.exit_code,
        timed_out=ran.timed_out,
        truncated=ran.stdout_truncated or ran.stderr_truncated,
        denied=ran.denied,
        snapshot=ran.snapshot,
    )
