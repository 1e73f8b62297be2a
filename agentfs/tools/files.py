"""The tools that create, replace, move, copy and remove files and directories.

Each runs in the call's one transaction (``Toolset``), so a refusal found half-way (a
size limit, a stale version) leaves the workspace as it was. Writes follow the conventions
agents are trained on: ``write_file`` refuses to replace a file unless asked
(``overwrite=true``), ``create_file`` never replaces, moves and copies refuse an existing
destination unless asked.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agentfs.core import paths
from agentfs.tools.common import (
    EXPECTED_VERSION,
    PATH_DOC,
    SeenVersion,
    check_expected,
)
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.spec import ToolInput, ToolOutput, absent, tool


class WriteFileInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    content: str = Field(description="the whole new content of the file (UTF-8 text)")
    overwrite: bool = Field(False, description="replace the file if it exists")
    create_parent_dirs: bool = Field(True, description="create missing parent directories")
    expected_version: SeenVersion | None = EXPECTED_VERSION


class WriteFileOutput(ToolOutput):
    path: str
    size: int
    created: bool = Field(description="the file did not exist before")
    version: int = Field(description="the file's new version (0: none was kept, see note)")
    note: str | None = Field(
        None, description="why no version was kept, when none was", exclude_if=absent
    )

    def text(self) -> str:
        verb = "Created" if self.created else "Replaced"
        done = f"{verb} {self.path} ({self.size:,} bytes, version {self.version})."
        return done if self.note is None else f"{done[:-1]}; {self.note}."

    def data(self) -> dict[str, Any]:  # JSON values already: no dump (on every write)
        data = {
            "path": self.path,
            "size": self.size,
            "created": self.created,
            "version": self.version,
        }
        if self.note is not None:
            data["note"] = self.note
        return data


def _write(
    ctx: Context, raw_path: str, content: str, *, replace: bool, parents: bool, expected: int | None
) -> WriteFileOutput:
    ws = ctx.ws
    path = ctx.path(raw_path, write=True)
    data = content.encode("utf-8")
    ctx.check_size(len(data), path)
    if expected is not None:  # the version is compared before anything changes
        _refuse_existing(ctx, path, replace, expected)
    # One walk of the path: the write says whether it created the file, and refuses what is
    # there when it must not replace it (no stat first: a tenth of the call). Its errors are
    # explained afterwards, when there is one.
    try:
        version, created = ctx.put(path, data, parents=parents, exclusive=not replace)
    except (FileExistsError, IsADirectoryError) as exc:
        if exc.filename != path:
            raise
        _refuse_existing(ctx, path, replace, None)
        # nothing to refuse (a dangling symlink, which the write follows): write
        version, created = ctx.put(path, data, parents=parents)
    except FileNotFoundError:
        parent = paths.parent_and_name(path)[0]
        if parents or ws.exists(parent):
            raise
        raise ToolError(
            "not_found",
            f"the directory {parent} does not exist; create it with mkdir or pass"
            " create_parent_dirs=true",
        ) from None
    output = {"path": path, "size": len(data), "created": created, "version": version}
    if version == 0:
        output["note"] = ws.history_settings.unversioned(len(data))
    return WriteFileOutput.of(output)


def _refuse_existing(ctx: Context, path: str, replace: bool, expected: int | None) -> None:
    """Fail if what is at ``path`` must not be written: a directory, a file not to be
    replaced, a file that moved on from version ``expected``."""
    try:
        st = ctx.ws.stat(path)
    except FileNotFoundError:
        return
    if st.is_dir():
        raise ToolError("is_directory", f"{path} is a directory; write to a file path")
    if not replace:
        raise ToolError(
            "exists",
            f"{path} already exists; to replace it pass overwrite=true (read it first), or"
            " change part of it with edit_file",
        )
    check_expected(ctx.ws, path, expected)


@tool(
    "write_file",
    title="Write a file",
    mutates=True,
    destructive=True,
    idempotent=True,
    description="""Create a file, or replace a whole one with overwrite=true. To change part
    of a file prefer edit_file or apply_patch. The policy may refuse to replace a file you
    have not read, or that changed since (read_required, stale_read): call read_file first.""",
)
def write_file(ctx: Context, args: WriteFileInput) -> WriteFileOutput:
    return _write(
        ctx,
        args.path,
        args.content,
        replace=args.overwrite,
        parents=args.create_parent_dirs,
        expected=args.expected_version,
    )


class CreateFileInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    content: str = Field("", description="the content of the new file (UTF-8 text)")


@tool(
    "create_file",
    title="Create a new file",
    mutates=True,
    description="""Create a new file and its missing parent directories. It never replaces
    anything: it fails with exists if something is at the path.""",
)
def create_file(ctx: Context, args: CreateFileInput) -> WriteFileOutput:
    try:
        return _write(ctx, args.path, args.content, replace=False, parents=True, expected=None)
    except ToolError as refused:
        if refused.code != "exists":
            raise
        raise ToolError(
            "exists",
            f"{ctx.path(args.path)} already exists and create_file never replaces a file:"
            " change part of it with edit_file, or replace it whole with write_file and"
            " overwrite=true (read it first)",
        ) from None


class DeleteFileInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    recursive: bool = Field(False, description="also delete a directory and all it holds")
    expected_version: SeenVersion | None = EXPECTED_VERSION


class RemovedOutput(ToolOutput):
    path: str
    type: str = Field(description="what was removed: file, directory or symlink")
    files: int = Field(description="files removed (inside a directory too)")

    def text(self) -> str:
        inside = f" and {self.files:,} files in it" if self.type == "directory" else ""
        return f"Deleted {self.type} {self.path}{inside} (file_history keeps its versions)."


def _remove(
    ctx: Context, raw_path: str, recursive: bool, expected: int | None, want_dir: bool | None
) -> RemovedOutput:
    ws = ctx.ws
    path = ctx.path(raw_path, write=True)
    if path == "/":
        raise ToolError("invalid_path", "the workspace root cannot be removed")
    st = ws.lstat(path)
    is_dir = st.is_dir()
    if want_dir is True and not is_dir:
        raise ToolError("not_directory", f"{path} is not a directory; use delete_file")
    if want_dir is False and is_dir and not recursive:
        raise ToolError("is_directory", f"{path} is a directory; pass recursive=true, or use rmdir")
    files = 0
    if is_dir:
        ctx.check_tree(path, write=True)
        files = sum(len(names) for _, _, names in ws.walk(path))
    elif st.type == "file":
        check_expected(ws, path, expected)
        files = 1
    ws.remove(path, recursive=recursive)
    kind = "directory" if is_dir else "symlink" if st.is_symlink() else "file"
    return RemovedOutput(path=path, type=kind, files=files)


@tool(
    "delete_file",
    title="Delete a file",
    mutates=True,
    destructive=True,
    description="""Delete a file or symlink. Old versions stay in file_history and
    snapshots.""",
)
def delete_file(ctx: Context, args: DeleteFileInput) -> RemovedOutput:
    return _remove(ctx, args.path, args.recursive, args.expected_version, want_dir=False)


class MkdirInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    recursive: bool = Field(True, description="also create missing parent directories")


class MkdirOutput(ToolOutput):
    path: str
    created: bool = Field(description="false when the directory already existed")

    def text(self) -> str:
        return f"{'Created' if self.created else 'Already exists:'} {self.path}/"


@tool(
    "mkdir",
    title="Create a directory",
    mutates=True,
    idempotent=True,
    description="""Create a directory; succeeds without change if it already exists.""",
)
def mkdir(ctx: Context, args: MkdirInput) -> MkdirOutput:
    path = ctx.path(args.path, write=True)
    try:
        st = ctx.ws.stat(path)
    except FileNotFoundError:
        ctx.ws.mkdir(path, parents=args.recursive)
        return MkdirOutput(path=path, created=True)
    if not st.is_dir():
        raise ToolError("exists", f"{path} exists and is not a directory")
    return MkdirOutput(path=path, created=False)


class RmdirInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    recursive: bool = Field(False, description="also remove everything inside")


@tool(
    "rmdir",
    title="Remove a directory",
    mutates=True,
    destructive=True,
    description="""Remove a directory: an empty one, or any with recursive=true.""",
)
def rmdir(ctx: Context, args: RmdirInput) -> RemovedOutput:
    return _remove(ctx, args.path, args.recursive, None, want_dir=True)


class MoveFileInput(ToolInput):
    source: str = Field(description="the file or directory to move (" + PATH_DOC + ")")
    destination: str = Field(description="its new path; missing parent directories are created")
    overwrite: bool = Field(False, description="replace an existing file at destination")


class MovedOutput(ToolOutput):
    source: str
    destination: str
    type: str

    def text(self) -> str:
        return f"Moved {self.source} to {self.destination}."


def _two_paths(
    ctx: Context, source: str, destination: str, overwrite: bool, move: bool
) -> tuple[str, str, bool]:
    """Checked (source, destination, source is a directory) for a move or a copy."""
    src = ctx.path(source, write=move)
    dst = ctx.path(destination, write=True)
    st = ctx.ws.lstat(src)
    is_dir = st.is_dir()
    if is_dir:
        ctx.check_tree(src, write=move)
    try:
        existing = ctx.ws.lstat(dst)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        if not overwrite:
            raise ToolError("exists", f"{dst} already exists; pass overwrite=true to replace it")
        if existing.is_dir():
            raise ToolError("is_directory", f"{dst} is a directory; it is never replaced")
    parent = paths.parent_and_name(dst)[0]
    if not ctx.ws.exists(parent):
        ctx.ws.mkdir(parent, parents=True)
    return src, dst, is_dir


@tool(
    "move_file",
    title="Move or rename",
    mutates=True,
    destructive=True,
    description="""Move or rename a file or directory; its history follows it. A directory
    at the destination is never replaced.""",
)
def move_file(ctx: Context, args: MoveFileInput) -> MovedOutput:
    src, dst, is_dir = _two_paths(ctx, args.source, args.destination, args.overwrite, True)
    ctx.ws.rename(src, dst)
    if is_dir:
        ctx.check_tree(dst, write=True)  # every name it made: a refusal undoes the move
    return MovedOutput(source=src, destination=dst, type="directory" if is_dir else "file")


class CopyFileInput(ToolInput):
    source: str = Field(description="the file or directory to copy (" + PATH_DOC + ")")
    destination: str = Field(description="the new path; missing parent directories are created")
    recursive: bool = Field(False, description="copy a directory and everything in it")
    overwrite: bool = Field(False, description="replace an existing file at destination")


class CopiedOutput(MovedOutput):
    def text(self) -> str:
        return f"Copied {self.source} to {self.destination}."


@tool(
    "copy_file",
    title="Copy",
    mutates=True,
    description="""Copy a file or directory to a new path.""",
)
def copy_file(ctx: Context, args: CopyFileInput) -> CopiedOutput:
    src, dst, is_dir = _two_paths(ctx, args.source, args.destination, args.overwrite, False)
    if is_dir and not args.recursive:
        raise ToolError("is_directory", f"{src} is a directory; pass recursive=true")
    if not is_dir:
        ctx.check_size(ctx.ws.stat(src).st_size, dst)
    ctx.ws.copy(src, dst, recursive=args.recursive)
    if is_dir:
        ctx.check_tree(dst, write=True)  # every name it made: a refusal undoes the copy
    return CopiedOutput(source=src, destination=dst, type="directory" if is_dir else "file")
