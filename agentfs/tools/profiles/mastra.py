"""The ``mastra`` profile: the tools a Mastra agent is given for its workspace
(``workspace_read_file``, ``workspace_write_file``, ``workspace_list_files``,
``workspace_delete_file``, ``workspace_file_exists``, ``workspace_mkdir``,
``workspace_search``, ``workspace_index``, ``workspace_execute_code``,
``workspace_execute_command``), by their names, camelCase parameters and result shapes, each
run by a ``Toolset`` under the policy entry of the agentfs tool doing the same job
(``read_file``, ``write_file``, ``ls``, ``delete_file``, ``stat``, ``mkdir``,
``workspace_search``, ``workspace_index_content``, ``execute_command``).

Paths: ``/data/config.json`` is a workspace path; a relative one is read from the root. A
``..`` that would climb above the root is refused (``invalid_path``), as Mastra refuses a path
that escapes its base directory.

Gaps: Mastra's design names the tools and the workspace's methods but not every parameter,
limit or edge; where it says nothing, this profile does what agentfs's own tools do:

- ``workspace_read_file`` returns ``{content, size, path}``. ``encoding`` (``utf-8``, the
  default, or ``utf8``, ``base64``, ``hex``, ``binary``: Latin-1) says how the bytes become
  ``content``. A binary file (a NUL byte in its first 8 KiB, or not UTF-8) read as UTF-8 is
  refused (``invalid_argument``) with advice to ask for ``base64``, rather than mangled. Text
  over the policy's ``max_read_bytes`` is cut on a character boundary and ``truncated`` is
  true; an encoded read over it is refused (``too_large``). It is a tracked read.
- ``workspace_write_file`` writes UTF-8 text and makes missing directories; ``overwrite``
  defaults to true, and false refuses an existing file (``exists``). The policy's
  ``max_write_bytes`` and read-before-write rules hold.
- ``workspace_list_files`` gives ``{name, type, size}`` entries in name order (``size`` for
  files only), with ``recursive`` every entry below ``path``, each ``name`` its path from
  ``path`` (``lib/util.py``), a directory before what it holds. ``extension`` (``.json`` or
  ``json``) keeps only the files with that ending. A symlink is listed as what it points to
  (a dangling one as a file without a size). At most 1,000 entries (fewer if the policy's
  ``max_results`` says so); then ``truncated`` is true.
- ``workspace_delete_file`` deletes a file or a symlink, never a directory
  (``is_directory``); ``force`` makes a missing path a success.
- ``workspace_file_exists`` follows symlinks: a dangling or looping link does not exist,
  nor does a path through a file.
- ``workspace_mkdir`` succeeds on an existing directory; without ``recursive`` a missing
  parent is ``not_found``.
- ``workspace_search`` is agentfs's ranked search: ``mode`` left out is hybrid when the
  workspace has vectors, else bm25; ``minScore`` is on agentfs's 0..1 scale; ``path`` (from
  the design's search options) scopes it to a directory. Each result's ``id`` is the file's
  path, ``content`` its best passage, ``lineRange`` that passage's lines. The design's
  ``filter`` (metadata) is not offered: agentfs's index has no metadata fields.
- ``workspace_index`` stores ``content`` as the file at ``path`` and indexes it
  (agentfs's ``workspace_index_content``; a file written any other way is indexed too);
  ``metadata`` is kept as the file's ``user.mastra.metadata`` extended attribute (JSON: a
  NaN or an infinity is refused, ``invalid_argument``).
- ``workspace_execute_code`` runs ``code`` with ``node -e``, ``python3 -c``, ``bash -c``,
  ``sh -c`` (``shell``) or ``ruby -e``; ``workspace_execute_command`` runs ``command`` (a
  shell command line) followed by ``args``, each quoted, from ``cwd``. Both are agentfs's
  ``execute_command``: its command denylist (checked against the code too), the sandbox, the
  mount, the snapshot taken first (``snapshot`` in the result undoes the run), approval by
  default; ``timeout`` is in milliseconds (default 10 s). A command line over the 128 KiB
  Linux takes in one argument (the code quoted: each ``'`` takes 5 bytes) is refused
  (``too_large``: write the code to a file and run that), and a NUL or a lone surrogate in
  the code, ``command`` or ``args`` is ``invalid_argument``, both before anything runs.
- ``workspace_install_package`` is not offered: commands run without network by default;
  an agent installs with ``npm`` or ``pip`` through ``workspace_execute_command`` where the
  policy allows network.
- Errors are ``ToolError``s with agentfs's codes (``not_found``, ``denied``, ...), their
  advice naming this profile's tools; unknown arguments are refused (``invalid_argument``),
  and paths the policy denies are refused or left out of listings and searches.
"""

from __future__ import annotations

import base64
import errno
import itertools
import json
import shlex
from collections.abc import Iterator
from typing import Literal

from pydantic import Field, PrivateAttr
from typing_extensions import TypedDict

from agentfs.core import paths
from agentfs.core.inodes import Stat
from agentfs.tools import commands, finding
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.files import WriteFileInput
from agentfs.tools.files import write_file as agentfs_write_file
from agentfs.tools.profiles.scope import resolve
from agentfs.tools.reading import whole_text
from agentfs.tools.spec import Surface, ToolInput, ToolOutput, absent

SURFACE = Surface("mastra")

#: Most entries a listing returns unless the policy says fewer.
MOST_ENTRIES = 1000

PATH_DOC = "a workspace path (/data/config.json)"


def _stat(ctx: Context, path: str) -> Stat:
    try:
        return ctx.ws.stat(path)
    except FileNotFoundError:
        raise ToolError(
            "not_found", f"{path} does not exist; call workspace_list_files to see what does"
        ) from None


# --- workspace_read_file ------------------------------------------------------------------------


Encoding = Literal["utf-8", "utf8", "base64", "hex", "binary"]


class ReadInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    encoding: Encoding = Field(
        "utf-8", description="how to give the bytes: utf-8 text (default), base64, hex, binary"
    )


class ReadOutput(ToolOutput):
    content: str = Field(description="the file's content in the encoding asked for")
    size: int = Field(description="bytes in the file")
    path: str
    truncated: bool | None = Field(
        None, description="the policy's read limit cut the text", exclude_if=absent
    )

    def text(self) -> str:
        if self.truncated:
            return f"{self.content}\n... cut at the policy's read limit ({self.size:,} bytes)"
        return self.content


def _encode(data: bytes, encoding: Encoding) -> str:
    if encoding == "base64":
        return base64.b64encode(data).decode("ascii")
    if encoding == "hex":
        return data.hex()
    return data.decode("latin-1")


@SURFACE.tool(
    "workspace_read_file",
    title="Read a file",
    description="""Read a file of the workspace: its content, size in bytes and path.
    `encoding` is utf-8 for text (default); base64 or hex for binary files.""",
    tracks_reads=True,
    idempotent=True,
    governed_by="read_file",
)
def workspace_read_file(ctx: Context, args: ReadInput) -> ReadOutput:
    path = resolve(ctx, args.path)
    if _stat(ctx, path).is_dir():
        raise ToolError("is_directory", f"{path} is a directory; call workspace_list_files")
    if args.encoding not in ("utf-8", "utf8"):
        data = ctx.ws.read(path)
        ctx.check_read_size(len(data), path, "it cannot be read whole here")
        return ReadOutput(content=_encode(data, args.encoding), size=len(data), path=path)
    read = whole_text(ctx, path)
    if read.binary:
        raise ToolError(
            "invalid_argument",
            f"{path} is a binary file ({read.size:,} bytes, {read.mime}), not UTF-8 text;"
            " read it with encoding=base64",
        )
    return ReadOutput(
        content=read.content, size=read.size, path=path, truncated=read.truncated or None
    )


# --- workspace_write_file -----------------------------------------------------------------------


class WriteInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    content: str = Field(description="the whole content of the file (UTF-8 text)")
    overwrite: bool = Field(True, description="replace the file if it exists")


class Done(ToolOutput):
    success: bool = True
    path: str
    _said: str = PrivateAttr("")

    @classmethod
    def saying(cls, path: str, said: str) -> Done:
        """Success at ``path``, the model reading ``said``."""
        done = cls(path=path)
        done._said = said
        return done

    def text(self) -> str:
        return self._said


class WriteOutput(Done):
    size: int = Field(description="bytes written")


@SURFACE.tool(
    "workspace_write_file",
    title="Write a file",
    description="""Write text to a file, creating missing directories. An existing file is
    replaced unless `overwrite` is false.""",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="write_file",
)
def workspace_write_file(ctx: Context, args: WriteInput) -> WriteOutput:
    path = resolve(ctx, args.path, write=True)
    if not args.overwrite and ctx.ws.exists(path):
        raise ToolError("exists", f"{path} already exists; pass overwrite=true to replace it")
    wrote = agentfs_write_file(
        ctx, WriteFileInput(path=path, content=args.content, overwrite=args.overwrite)
    )
    out = WriteOutput(path=path, size=wrote.size)
    out._said = wrote.text()
    return out


# --- workspace_list_files -----------------------------------------------------------------------


class ListInput(ToolInput):
    path: str = Field("/", description="the directory to list (" + PATH_DOC + ")")
    recursive: bool = Field(False, description="also list everything below it")
    extension: str | None = Field(None, description="only files with this ending (.json)")


class ListEntry(TypedDict, total=False):
    name: str
    type: Literal["file", "directory"]
    size: int


class ListOutput(ToolOutput):
    entries: list[ListEntry] = Field(
        description="name (from path), type (file or directory), size (files)"
    )
    path: str
    count: int
    truncated: bool | None = Field(
        None, description="more entries exist than are listed", exclude_if=absent
    )

    def text(self) -> str:
        if not self.entries:
            return f"{self.path} holds nothing to list."
        rows = [
            e["name"] + ("/" if e["type"] == "directory" else f"  ({e.get('size', 0):,} bytes)")
            for e in self.entries
        ]
        if self.truncated:
            rows.append(f"... only the first {self.count:,} entries are shown")
        return "\n".join(rows)


def _entries(ctx: Context, top: str, recursive: bool) -> Iterator[ListEntry]:
    """The entries below ``top`` the policy lets this tool show, in name order, a directory
    before what it holds, each named by its path from ``top`` (a stack, not recursion: a
    tree may be deeper than Python's recursion limit)."""
    stack = [(iter(ctx.ws.readdir_plus(top)), top, "")]
    while stack:
        listing, here, shown = stack[-1]
        item = next(listing, None)
        if item is None:
            stack.pop()
            continue
        name, st = item
        path = paths.join(here, name)
        if not ctx.visible(path):
            continue
        link = st.is_symlink()  # readdir_plus gives lstat: a link is listed as its target
        if link:
            try:
                st = ctx.ws.stat(path)
            except OSError:  # dangling: a name that holds nothing
                yield {"name": shown + name, "type": "file"}
                continue
        if st.is_dir():
            yield {"name": shown + name, "type": "directory"}
            if recursive and not link:  # a linked directory is listed, not walked
                stack.append((iter(ctx.ws.readdir_plus(path)), path, shown + name + "/"))
        else:
            yield {"name": shown + name, "type": "file", "size": st.st_size}


@SURFACE.tool(
    "workspace_list_files",
    title="List files",
    description="""List the files and directories in a directory (the root by default):
    each entry's name, type and size. `recursive` lists everything below; `extension`
    (.json) keeps only files with that ending.""",
    idempotent=True,
    governed_by="ls",
)
def workspace_list_files(ctx: Context, args: ListInput) -> ListOutput:
    path = resolve(ctx, args.path)
    if not _stat(ctx, path).is_dir():
        raise ToolError("not_directory", f"{path} is not a directory; call workspace_read_file")
    found = _entries(ctx, path, args.recursive)
    if args.extension:
        ending = args.extension if args.extension.startswith(".") else "." + args.extension
        found = (e for e in found if e["type"] == "file" and e["name"].endswith(ending))
    cap = ctx.cap(MOST_ENTRIES)
    kept = list(itertools.islice(found, cap + 1))
    shown = kept[:cap]
    return ListOutput(entries=shown, path=path, count=len(shown), truncated=len(kept) > cap or None)


# --- workspace_delete_file, workspace_file_exists, workspace_mkdir ------------------------------


class DeleteInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    force: bool = Field(False, description="succeed when the file does not exist")


@SURFACE.tool(
    "workspace_delete_file",
    title="Delete a file",
    description="""Delete a file (not a directory). Its versions stay in the workspace's
    history. `force` makes a missing file a success.""",
    mutates=True,
    destructive=True,
    governed_by="delete_file",
)
def workspace_delete_file(ctx: Context, args: DeleteInput) -> Done:
    path = resolve(ctx, args.path, write=True)
    try:
        st = ctx.ws.lstat(path)
    except FileNotFoundError:
        if not args.force:
            raise ToolError(
                "not_found", f"{path} does not exist; pass force=true to accept that"
            ) from None
        return Done.saying(path, f"{path} did not exist; nothing to delete.")
    if st.is_dir():
        raise ToolError("is_directory", f"{path} is a directory; this tool deletes files")
    ctx.ws.remove(path)
    return Done.saying(path, f"Deleted {path} (its versions stay in the history).")


class PathInput(ToolInput):
    path: str = Field(description=PATH_DOC)


class ExistsOutput(ToolOutput):
    exists: bool
    type: Literal["file", "directory", "none"]

    def text(self) -> str:
        return f"a {self.type} is there" if self.exists else "nothing is there"


@SURFACE.tool(
    "workspace_file_exists",
    title="Check a path",
    description="""Whether a file or directory exists at `path`, and which.""",
    idempotent=True,
    governed_by="stat",
)
def workspace_file_exists(ctx: Context, args: PathInput) -> ExistsOutput:
    path = resolve(ctx, args.path)
    try:
        is_dir = ctx.ws.stat(path).is_dir()
    except OSError as exc:  # nothing there, a path through a file, a looping link
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise
        return ExistsOutput(exists=False, type="none")
    return ExistsOutput(exists=True, type="directory" if is_dir else "file")


class MkdirInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    recursive: bool = Field(True, description="also make missing parent directories")


@SURFACE.tool(
    "workspace_mkdir",
    title="Make a directory",
    description="""Make a directory, and its missing parents unless `recursive` is false.
    An existing directory is a success.""",
    mutates=True,
    idempotent=True,
    governed_by="mkdir",
)
def workspace_mkdir(ctx: Context, args: MkdirInput) -> Done:
    path = resolve(ctx, args.path, write=True)
    try:
        st = ctx.ws.stat(path)
    except FileNotFoundError:
        parent = paths.parent_and_name(path)[0]
        if not args.recursive and not ctx.ws.exists(parent):
            raise ToolError(
                "not_found", f"{parent} does not exist; pass recursive=true to make it too"
            ) from None
        ctx.ws.mkdir(path, parents=args.recursive)
        return Done.saying(path, f"Made {path}/")
    if not st.is_dir():
        raise ToolError("exists", f"{path} exists and is a file")
    return Done.saying(path, f"{path}/ already exists.")


# --- workspace_search, workspace_index ----------------------------------------------------------


class SearchInput(ToolInput):
    query: str = Field(description="what to look for, in words or code terms")
    topK: int = Field(5, ge=1, le=100, description="most results")
    mode: Literal["bm25", "vector", "hybrid"] | None = Field(
        None,
        description="bm25: keywords; vector: meaning; hybrid: both (default: hybrid when the"
        " workspace has vectors, else bm25)",
    )
    minScore: float | None = Field(None, ge=0.0, le=1.0, description="drop results below this")
    path: str | None = Field(None, description="only files below this directory")


class LineRange(TypedDict):
    start: int
    end: int


class SearchResult(TypedDict):
    id: str
    content: str
    score: float
    lineRange: LineRange


class SearchOutput(ToolOutput):
    results: list[SearchResult] = Field(
        description="best first: id (the file's path), content (its best passage), score"
        " (0..1), lineRange (that passage's lines)"
    )
    count: int
    mode: str = Field(description="the mode used")
    note: str | None = Field(
        None, description="why the mode differs from the one asked for", exclude_if=absent
    )
    _said: str = PrivateAttr("")

    def text(self) -> str:
        return self._said


@SURFACE.tool(
    "workspace_search",
    title="Search the workspace",
    description="""Ranked search over the workspace's files for a question or topic, best
    first: each file's path (id), best passage, score and line range. mode: bm25
    (keywords), vector (meaning) or hybrid (both).""",
    idempotent=True,
    governed_by="workspace_search",
)
def workspace_search(ctx: Context, args: SearchInput) -> SearchOutput:
    asked = finding.WorkspaceSearchInput(
        query=args.query,
        mode=args.mode,
        top_k=args.topK,
        min_score=args.minScore or 0.0,
        path=None if args.path is None else resolve(ctx, args.path),
        include_content=True,
    )
    found = finding.workspace_search(ctx, asked)
    results: list[SearchResult] = [
        {
            "id": hit.path,
            "content": hit.content or "",
            "score": hit.score,
            "lineRange": {"start": hit.line_range[0], "end": hit.line_range[1]},
        }
        for hit in found.hits
    ]
    out = SearchOutput(results=results, count=len(results), mode=found.mode, note=found.note)
    out._said = found.text()
    return out


class IndexInput(ToolInput):
    path: str = Field(description="the file to keep the content in (" + PATH_DOC + ")")
    content: str = Field(description="the text to make searchable")
    metadata: dict[str, str | int | float | bool | None] | None = Field(
        None, description="kept with the file (its user.mastra.metadata attribute, JSON)"
    )


#: The extended attribute ``workspace_index`` keeps a document's metadata in.
METADATA_XATTR = "user.mastra.metadata"


@SURFACE.tool(
    "workspace_index",
    title="Index content for search",
    description="""Keep `content` as the file `path` (replacing it) and index it, so
    workspace_search finds it by that path. `metadata` is kept with the file.""",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="workspace_index_content",
)
def workspace_index(ctx: Context, args: IndexInput) -> Done:
    path = resolve(ctx, args.path, write=True)
    metadata = None
    if args.metadata is not None:
        try:
            metadata = json.dumps(args.metadata, allow_nan=False).encode("utf-8")
        except ValueError:
            raise ToolError(
                "invalid_argument", "metadata: NaN and Infinity are not JSON; give a number"
            ) from None
    stored = finding.workspace_index_content(
        ctx, finding.IndexContentInput(path=path, content=args.content, source="mastra")
    )
    if metadata is not None:
        ctx.ws.setxattr(path, METADATA_XATTR, metadata)
    return Done.saying(path, stored.text())


# --- workspace_execute_code, workspace_execute_command ------------------------------------------


class RunOutput(ToolOutput):
    success: bool = Field(description="the exit code was 0")
    stdout: str
    stderr: str
    exitCode: int = Field(description="the exit status; -9 when the timeout killed it")
    executionTimeMs: int
    snapshot: str | None = Field(
        None, description="the snapshot taken before the run: restoring it undoes the run"
    )
    _said: str = PrivateAttr("")

    def text(self) -> str:
        return self._said


def _run(ctx: Context, line: str, timeout: int | None, cwd: str | None) -> RunOutput:
    """``line`` run by agentfs's ``execute_command``, its result in Mastra's shape (the line
    checked first, as that tool's input could not be made of every line)."""
    commands.check_line(line)
    asked = commands.ExecuteCommandInput(command=line, cwd=cwd)
    if timeout is not None:
        asked = asked.model_copy(update={"timeout_ms": timeout})
    ran = commands.execute_command(ctx, asked)
    out = RunOutput(
        success=ran.exit_code == 0 and not ran.timed_out,
        stdout=ran.stdout,
        stderr=ran.stderr,
        exitCode=ran.exit_code,
        executionTimeMs=ran.duration_ms,
        snapshot=ran.snapshot,
    )
    out._said = ran.text()
    return out


#: How each runtime is given code on its command line.
RUNTIMES = {
    "node": ("node", "-e"),
    "python": ("python3", "-c"),
    "bash": ("bash", "-c"),
    "shell": ("sh", "-c"),
    "ruby": ("ruby", "-e"),
}

TIMEOUT_DOC = "kill it after this many milliseconds (default 10,000)"


class CodeInput(ToolInput):
    code: str = Field(min_length=1, description="the code to run")
    runtime: Literal["node", "python", "bash", "shell", "ruby"] = Field(
        "node", description="what runs it"
    )
    timeout: int | None = Field(None, ge=1, le=3_600_000, description=TIMEOUT_DOC)


@SURFACE.tool(
    "workspace_execute_code",
    title="Run code",
    description="""Run a piece of code with node, python, bash, sh (shell) or ruby in the
    workspace's sandbox, from its root, and get stdout, stderr and the exit code. Files it
    writes land in the workspace.""",
    mutates=True,
    destructive=True,
    elsewhere=True,
    governed_by="execute_command",
)
def workspace_execute_code(ctx: Context, args: CodeInput) -> RunOutput:
    # the code itself, not only its quoted command line: quoted, a pattern anchored to the
    # start or end of a command (su, rm -rf /) cannot match it
    pattern = ctx.toolset.policy.commands.denied(args.code)
    if pattern is not None:
        raise ToolError("denied", f"the policy forbids this code (it matches {pattern!r}); not run")
    program, flag = RUNTIMES[args.runtime]
    line = f"{program} {flag} {shlex.quote(args.code)}"
    return _run(ctx, line, args.timeout, None)


class CommandInput(ToolInput):
    command: str = Field(min_length=1, description="the command (a shell command line: ls -la)")
    args: list[str] = Field(default_factory=list, description="arguments, each quoted for you")
    timeout: int | None = Field(None, ge=1, le=3_600_000, description=TIMEOUT_DOC)
    cwd: str | None = Field(None, description="the directory to run in (default: the root)")


@SURFACE.tool(
    "workspace_execute_command",
    title="Run a command",
    description="""Run a shell command (npm test, python script.py, ls) in the workspace's
    sandbox and get stdout, stderr and the exit code. Files it writes land in the
    workspace.""",
    mutates=True,
    destructive=True,
    elsewhere=True,
    governed_by="execute_command",
)
def workspace_execute_command(ctx: Context, args: CommandInput) -> RunOutput:
    line = " ".join([args.command, *map(shlex.quote, args.args)])
    cwd = None if args.cwd is None else resolve(ctx, args.cwd)
    return _run(ctx, line, args.timeout, cwd)
