"""baf's five workspace tools, each run by a ``Toolset`` under the policy entry of the agentfs
tool doing the same job; the package's docstring gives their rules."""

from __future__ import annotations

import contextlib

from pydantic import Field

from agentfs.core import paths
from agentfs.tools import files
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.profiles.baf.space import DEFAULT_MAX_READ_BYTES, DEFAULT_NAME, Member
from agentfs.tools.reading import whole_text
from agentfs.tools.spec import Surface, ToolInput, ToolOutput

SURFACE = Surface("baf")

#: Most entries a listing returns unless the policy says fewer.
MOST_ENTRIES = 1000

WORKSPACE_DOC = "the workspace to use, by name; may be left out when there is only one"
PATH_DOC = "a path relative to the workspace root (notes/todo.md)"


class Located(ToolInput):
    workspace: str | None = Field(None, description=WORKSPACE_DOC)
    path: str = Field(description=PATH_DOC)


def _resolve(ctx: Context, args: Located, *, write: bool = False) -> str:
    """The workspace path of ``args.path``, once the workspace's name and the path are
    accepted: relative, never climbing above the root."""
    name = ctx.toolset.space.name if isinstance(ctx.toolset, Member) else DEFAULT_NAME
    if args.workspace is not None and args.workspace != name:
        raise ToolError(
            "invalid_argument",
            f"there is no workspace {args.workspace!r} here; the workspaces are: {name}",
        )
    raw = args.path
    if raw == "" or raw.startswith("/") or paths.climbs_above_root(raw):
        raise ToolError(
            "invalid_path",
            f"{raw!r} leaves the workspace or is not relative to it; give a path relative to"
            " its root (notes/todo.md, or . for the root itself)",
        )
    return ctx.path(raw, write=write)


def _not_found(path: str) -> ToolError:
    return ToolError(
        "not_found", f"{path.lstrip('/') or '.'} does not exist; call list_directory to look"
    )


def _is_dir(ctx: Context, path: str) -> bool:
    """Is ``path`` a directory (a symlink followed)? ``not_found`` in this profile's words
    when nothing is there."""
    try:
        return ctx.ws.stat(path).is_dir()
    except FileNotFoundError:
        raise _not_found(path) from None


def _shown(path: str) -> str:
    """A workspace path as this profile's paths are written: relative to the root."""
    return path.lstrip("/") or "."


# --- list_directory -----------------------------------------------------------------------------


class ListInput(Located):
    path: str = Field(".", description=PATH_DOC + "; . is the root")


class ListOutput(ToolOutput):
    path: str
    entries: list[str] = Field(description="one entry each, '[DIR] name' or '[FILE] name'")
    truncated: bool = False

    def text(self) -> str:
        if not self.entries:
            return f"{self.path} is an empty directory."
        more = [f"... only the first {len(self.entries):,} entries are shown"]
        return "\n".join(self.entries + (more if self.truncated else []))


def listing(ctx: Context, path: str, most: int) -> tuple[list[str], bool]:
    """The first ``most`` entries of directory ``path`` this tool may show, as
    ``[DIR] name`` or ``[FILE] name``, and whether there were more."""
    rows = []
    for name, st in ctx.ws.readdir_plus(path):
        here = paths.join(path, name)
        if not ctx.visible(here):
            continue
        if st.is_symlink():
            with contextlib.suppress(OSError):  # dangling: a name that holds nothing, a file
                st = ctx.ws.stat(here)
        rows.append(f"[{'DIR' if st.is_dir() else 'FILE'}] {name}")
        if len(rows) > most:
            return rows[:most], True
    return rows, False


@SURFACE.tool(
    "list_directory",
    title="List a directory",
    description="""List the files and folders in a directory of a workspace, one a line,
    marked [DIR] or [FILE].""",
    idempotent=True,
    governed_by="ls",
)
def list_directory(ctx: Context, args: ListInput) -> ListOutput:
    path = _resolve(ctx, args)
    if not _is_dir(ctx, path):
        raise ToolError("not_directory", f"{_shown(path)} is a file; call read_file on it")
    entries, more = listing(ctx, path, ctx.cap(MOST_ENTRIES))
    return ListOutput(path=_shown(path), entries=entries, truncated=more)


# --- read_file ----------------------------------------------------------------------------------


class ReadOutput(ToolOutput):
    path: str
    content: str = Field(description="the file's text (empty for a binary file)")
    size: int = Field(description="bytes in the file")
    truncated: bool = Field(False, description="only the first bytes are in content")
    binary: bool = False

    def text(self) -> str:
        if self.binary:
            return f"{self.path} is a binary file ({self.size:,} bytes); it is not shown."
        if self.truncated:
            shown = len(self.content.encode("utf-8"))
            return (
                f"{self.content}\n[truncated: the first {shown:,} of {self.size:,} bytes of"
                f" {self.path} are shown]"
            )
        return self.content


@SURFACE.tool(
    "read_file",
    title="Read a file",
    description="""Read a text file of a workspace. A long file is cut, with a marker at
    the end saying how much is shown.""",
    tracks_reads=True,
    idempotent=True,
    governed_by="read_file",
)
def read_file(ctx: Context, args: Located) -> ReadOutput:
    path = _resolve(ctx, args)
    if _is_dir(ctx, path):
        raise ToolError("is_directory", f"{_shown(path)} is a directory; call list_directory")
    most = ctx.toolset.space.max_read_bytes if isinstance(ctx.toolset, Member) else None
    read = whole_text(ctx, path, DEFAULT_MAX_READ_BYTES if most is None else most)
    return ReadOutput(
        path=_shown(path),
        content=read.content,
        size=read.size,
        truncated=read.truncated,
        binary=read.binary,
    )


# --- write_file, create_file, delete_file -------------------------------------------------------


class WriteInput(Located):
    content: str = Field(description="the whole content of the file (UTF-8 text)")


class Written(ToolOutput):
    path: str
    bytes: int = Field(description="bytes written")
    created: bool = Field(description="the file did not exist before")

    def text(self) -> str:
        verb = "Created" if self.created else "Wrote"
        return f"{verb} {self.path} ({self.bytes:,} bytes)."


def _refuse_directory(ctx: Context, path: str) -> None:
    if ctx.ws.exists(path) and ctx.ws.stat(path).is_dir():
        raise ToolError("is_directory", f"{_shown(path)} is a directory; give a file's path")


@SURFACE.tool(
    "write_file",
    title="Write a file",
    description="""Write text to a file of a workspace, replacing what it held; the file
    and its missing folders are created. Use create_file to fail instead when the file
    exists.""",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="write_file",
)
def write_file(ctx: Context, args: WriteInput) -> Written:
    path = _resolve(ctx, args, write=True)
    _refuse_directory(ctx, path)
    wrote = files.write_file(
        ctx, files.WriteFileInput(path=path, content=args.content, overwrite=True)
    )
    return Written(path=_shown(path), bytes=wrote.size, created=wrote.created)


class CreateInput(Located):
    content: str = Field("", description="the content of the new file (UTF-8 text)")


@SURFACE.tool(
    "create_file",
    title="Create a file",
    description="""Create a new file in a workspace (and its missing folders); fails if the
    path exists. Use write_file to replace a file.""",
    mutates=True,
    governed_by="create_file",
)
def create_file(ctx: Context, args: CreateInput) -> Written:
    path = _resolve(ctx, args, write=True)
    if _lexists(ctx, path):
        raise ToolError(
            "exists", f"{_shown(path)} already exists; use write_file to replace its content"
        )
    made = files.create_file(ctx, files.CreateFileInput(path=path, content=args.content))
    return Written(path=_shown(path), bytes=made.size, created=True)


def _lexists(ctx: Context, path: str) -> bool:
    """Is there anything at ``path``, a dangling symlink included?"""
    try:
        ctx.ws.lstat(path)
    except FileNotFoundError:
        return False
    return True


class DeletedOutput(ToolOutput):
    path: str

    def text(self) -> str:
        return f"Deleted {self.path}."


@SURFACE.tool(
    "delete_file",
    title="Delete a file",
    description="""Delete a file of a workspace (never a folder).""",
    mutates=True,
    destructive=True,
    governed_by="delete_file",
)
def delete_file(ctx: Context, args: Located) -> DeletedOutput:
    path = _resolve(ctx, args, write=True)
    try:
        is_dir = ctx.ws.lstat(path).is_dir()
    except FileNotFoundError:
        raise _not_found(path) from None
    if is_dir:
        raise ToolError("is_directory", f"{_shown(path)} is a directory; only files are deleted")
    files.delete_file(ctx, files.DeleteFileInput(path=path))
    return DeletedOutput(path=_shown(path))
