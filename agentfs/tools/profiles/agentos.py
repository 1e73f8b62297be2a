"""The ``agentos`` profile: AgentOS's file tools (``file_read``, ``file_write``, ``file_list``,
``apply_patch``) over a workspace, by their names, camelCase parameters and result shapes,
each run by a ``Toolset`` under the policy entry of the agentfs tool doing the same job
(``read_file``, ``write_file``, ``ls``, ``apply_patch``).

Paths: the workspace root is AgentOS's workspace root. A relative path is relative to it
(``src/index.ts``); an absolute one is a workspace path (``/src/index.ts``), never the host's.
Every path must stay inside the root: a ``..`` that would climb above it is refused
(``invalid_path``, "path traversal denied"), not held at the root, and so is a path that
reaches outside through a symlink (a link whose relative target climbs above the root);
links inside the workspace are followed. The ``path`` of every result is the resolved
workspace path (``/src/index.ts``), as AgentOS gives its resolved absolute path.

Gaps: where AgentOS's description says nothing, this profile does what agentfs's own tools
do:

- ``file_read`` returns the text; ``size`` is always the whole file's size in bytes. With
  ``maxBytes`` (or the policy's ``max_read_bytes``, whichever is smaller) a longer file's
  ``content`` is cut to at most that many bytes, back to a whole UTF-8 character, and the
  result's ``truncated`` is true (so ``size`` > the bytes of ``content`` too, as AgentOS's
  advice has it); the text read by a model ends with a line saying where it was cut. A binary
  file (a NUL byte in its first 8 KiB, or not UTF-8) is not dumped: ``content`` is empty,
  ``binary`` true and ``mime`` a guess. It is a tracked read (read-before-write relies on it).
- ``file_write`` creates or replaces the file and makes missing parent directories (agentfs's
  ``write_file`` with ``overwrite=true``); ``size`` is the bytes written (UTF-8). A directory
  at the path is ``is_directory``; the policy's ``max_write_bytes`` and read-before-write
  rules hold.
- ``file_list`` (``path`` defaults to the root) gives agentfs ``ls``'s entries, in name order:
  ``type`` is ``file`` or ``directory``, and ``symlink`` for a link (not followed, so a link
  out of the root reveals nothing). AgentOS has not implemented ``recursive``; here
  ``recursive=true`` lists the whole subtree, each entry's ``name`` its path from ``path``
  (``lib/util.py``), a directory before its content. At most 1,000 entries (fewer if the
  policy's ``max_results`` says so); ``truncated`` says when more exist.
- ``apply_patch`` takes a unified diff for the one file ``path``: bare ``@@`` hunks (as
  AgentOS's examples write them) or with ``---``/``+++`` headers, which must then name that
  file. It is agentfs's patching (``agentfs.tools.patch``): hunks are placed by their context
  and removed lines, not by position alone, and the patch applies whole or not at all: a hunk
  that does not match fails with ``patch_failed`` (the closest lines shown) and the file is
  left as it was. The file must exist (``not_found``). The model reads the diff of the change.
- AgentOS's content search has no tool of its own (it is run as ``grep`` by its shell tool)
  and ``file_watch`` has no parameters or result (a watch is a stream, not a call): neither
  is offered.
- Errors are ``ToolError``s with agentfs's codes (``not_found``, ``denied``, ...), their
  advice naming this profile's tools; unknown arguments are refused (``invalid_argument``),
  and paths the policy denies are refused or left out of listings.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Iterator

from pydantic import Field, PrivateAttr
from typing_extensions import TypedDict

from agentfs.core import paths
from agentfs.core.inodes import Stat
from agentfs.history.api import unified_diff
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.common import EntryType, entry_type, iso, text_to_change
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.files import WriteFileInput
from agentfs.tools.files import write_file as agentfs_write_file
from agentfs.tools.listing import LsInput, ls
from agentfs.tools.patch import HunkFailed, PatchSyntaxError, parse
from agentfs.tools.patch import apply_hunks as apply_hunks_to
from agentfs.tools.reading import whole_text
from agentfs.tools.spec import Surface, ToolInput, ToolOutput, absent

SURFACE = Surface("agentos")

#: Most entries a listing returns unless the policy says fewer.
MOST_ENTRIES = 1000
#: Most symlinks one path may pass through.
MOST_LINKS = 40

PATH_DOC = "a path relative to the workspace root (src/index.ts); it cannot leave the workspace"


def _names(text: str) -> list[str]:
    return [name for name in text.split("/") if name not in ("", ".")]


def _outside(raw: str, why: str = "") -> ToolError:
    return ToolError(
        "invalid_path",
        f"path traversal denied: {raw} resolves outside the workspace{why}; give a path inside"
        " it (src/a.txt)",
    )


def _inside(ws: WorkspaceAPI, raw: str) -> str:
    """``raw`` as a workspace path, ``.`` and ``..`` resolved as written; ``_outside`` when a
    ``..`` climbs above the root, as written or in the target of a symlink on the way."""
    if paths.climbs_above_root(raw):
        raise _outside(raw)
    written = _names(posixpath.normpath("/" + raw))
    # Follow the symlinks the path passes through, as the workspace will, to where it leads.
    pending, links, exists = written[::-1], 0, True
    reached: list[str] = []
    while pending:
        name = pending.pop()
        if name == "..":
            if not reached:
                raise _outside(raw, " through a symlink")
            reached.pop()
            continue
        reached.append(name)
        if not exists:
            continue
        here = "/" + "/".join(reached)
        try:
            st = ws.lstat(here)
        except OSError:
            exists = False  # nothing below a missing name is a link
            continue
        if not st.is_symlink():
            continue
        links += 1
        if links > MOST_LINKS:
            raise ToolError("invalid_path", f"{raw}: more than {MOST_LINKS} symlinks on the way")
        target = ws.readlink(here)
        reached.pop()
        if target.startswith("/"):
            reached = []
        pending.extend(_names(target)[::-1])
    return "/" + "/".join(written)


def resolve(ctx: Context, raw: str, *, write: bool = False) -> str:
    """The workspace path ``raw`` names, kept inside the root, once the policy accepts it."""
    if raw == "":
        raise ToolError("invalid_path", "the path is empty; give a path such as src/a.txt")
    return ctx.path(_inside(ctx.ws, raw), write=write)


def _stat(ctx: Context, path: str) -> Stat:
    try:
        return ctx.ws.stat(path)
    except FileNotFoundError:
        raise ToolError(
            "not_found", f"{path} does not exist; call file_list to see what is there"
        ) from None


# --- file_read ----------------------------------------------------------------------------------


class FileReadInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    maxBytes: int | None = Field(  # AgentOS's camelCase name
        None, ge=0, description="read at most this many bytes; a longer file is cut"
    )


class FileReadOutput(ToolOutput):
    content: str = Field(description="the file's text (UTF-8); empty for a binary file")
    path: str = Field(description="the resolved workspace path")
    size: int = Field(description="the whole file's size in bytes")
    truncated: bool = Field(False, description="content was cut (maxBytes or the policy)")
    binary: bool = False
    mime: str | None = Field(None, description="type guess for a binary file", exclude_if=absent)

    def text(self) -> str:
        if self.binary:
            return f"{self.path} is a binary file ({self.size:,} bytes, {self.mime}); not shown."
        if self.truncated:
            shown = len(self.content.encode("utf-8"))
            return f"{self.content}\n... cut at {shown:,} of {self.size:,} bytes"
        return self.content


@SURFACE.tool(
    "file_read",
    title="Read a file",
    description="""Read a file's text. `path` is relative to the workspace root. With
    `maxBytes` a longer file is cut to that many bytes (`truncated` is then true); `size` is
    always the whole file's size.""",
    tracks_reads=True,
    idempotent=True,
    governed_by="read_file",
)
def file_read(ctx: Context, args: FileReadInput) -> FileReadOutput:
    path = resolve(ctx, args.path)
    if _stat(ctx, path).is_dir():
        raise ToolError("is_directory", f"{path} is a directory; call file_list on it")
    return FileReadOutput(path=path, **whole_text(ctx, path, args.maxBytes)._asdict())


# --- file_write ---------------------------------------------------------------------------------


class FileWriteInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    content: str = Field(description="the whole content of the file (UTF-8 text)")


class FileWriteOutput(ToolOutput):
    written: bool = Field(description="true: the file was written")
    path: str = Field(description="the resolved workspace path")
    size: int = Field(description="bytes written")
    _said: str = PrivateAttr("")

    def text(self) -> str:
        return self._said


@SURFACE.tool(
    "file_write",
    title="Write a file",
    description="""Write `content` to a file, creating it (and any missing parent
    directories) or replacing it. `path` is relative to the workspace root.""",
    mutates=True,
    destructive=True,
    idempotent=True,
    governed_by="write_file",
)
def file_write(ctx: Context, args: FileWriteInput) -> FileWriteOutput:
    path = resolve(ctx, args.path, write=True)
    done = agentfs_write_file(ctx, WriteFileInput(path=path, content=args.content, overwrite=True))
    out = FileWriteOutput(written=True, path=done.path, size=done.size)
    out._said = done.text()
    return out


# --- file_list ----------------------------------------------------------------------------------


class FileListInput(ToolInput):
    path: str = Field(".", description="the directory, relative to the workspace root")
    recursive: bool = Field(False, description="list the whole subtree, names as paths")


class ListEntry(TypedDict):
    name: str
    type: EntryType
    size: int
    modified: str


class FileListOutput(ToolOutput):
    path: str = Field(description="the resolved workspace path of the directory")
    entries: list[ListEntry] = Field(description="{name, type, size, modified (ISO 8601)}")
    truncated: bool = Field(False, description="more entries exist than are listed")

    def text(self) -> str:
        if not self.entries:
            return f"{self.path} is empty."
        rows = [f"{e['type']}\t{e['size']}\t{e['modified']}\t{e['name']}" for e in self.entries]
        if self.truncated:
            rows.append(f"... only the first {len(self.entries):,} entries are listed")
        return "\n".join(rows)


def _subtree(ctx: Context, top: str, prefix: str = "") -> Iterator[ListEntry]:
    """The entries below ``top`` the policy lets be shown, depth first, a directory before
    what it holds; each named by its path from where the listing started."""
    for name, st in ctx.ws.readdir_plus(top):
        path = paths.join(top, name)
        if not ctx.visible(path):
            continue
        kind = entry_type(st)
        shown = prefix + name
        yield {"name": shown, "type": kind, "size": st.st_size, "modified": iso(st.st_mtime_ns)}
        if kind == "directory":
            yield from _subtree(ctx, path, shown + "/")


@SURFACE.tool(
    "file_list",
    title="List a directory",
    description="""List a directory's entries with their type (file, directory, symlink),
    size in bytes and modification time. `path` defaults to the workspace root;
    `recursive=true` lists the whole subtree, each name a path from `path`.""",
    idempotent=True,
    governed_by="ls",
)
def file_list(ctx: Context, args: FileListInput) -> FileListOutput:
    path = resolve(ctx, args.path)
    if not _stat(ctx, path).is_dir():
        raise ToolError("not_directory", f"{path} is not a directory; call file_read on it")
    if not args.recursive:
        listed = ls(ctx, LsInput(path=path))
        return FileListOutput(path=path, entries=listed.entries, truncated=listed.truncated)
    cap = ctx.cap(MOST_ENTRIES)
    kept = list(itertools.islice(_subtree(ctx, path), cap + 1))
    return FileListOutput(path=path, entries=kept[:cap], truncated=len(kept) > cap)


# --- apply_patch --------------------------------------------------------------------------------


class ApplyPatchInput(ToolInput):
    path: str = Field(description="the file to patch, relative to the workspace root")
    patch: str = Field(
        description="a unified diff of that file: @@ -l,n +l,n @@ hunks of ' ' context,"
        " '-' removed and '+' added lines (--- and +++ headers optional)"
    )


class ApplyPatchOutput(ToolOutput):
    patched: bool = Field(description="true: every hunk applied and the file was written")
    path: str = Field(description="the resolved workspace path")
    _diff: str = PrivateAttr("")

    def text(self) -> str:
        return f"Patched {self.path}.\n{self._diff}"


def _with_headers(patch: str, path: str) -> str:
    """``patch`` with file headers for ``path`` when it is bare hunks."""
    for line in patch.split("\n"):
        if line.startswith("--- ") or line.startswith("*** "):
            return patch
        if line.startswith("@@"):
            break
    return f"--- a{path}\n+++ b{path}\n{patch}"


@SURFACE.tool(
    "apply_patch",
    title="Apply a patch to a file",
    description="""Apply a unified diff to the file `path`: @@ hunks of ' ' context, '-'
    removed and '+' added lines (--- and +++ headers may be left out). Give a few lines of
    context around each change. Every hunk applies or nothing is written: on patch_failed
    re-read the file with file_read and regenerate the patch.""",
    mutates=True,
    destructive=True,
    governed_by="apply_patch",
)
def apply_patch(ctx: Context, args: ApplyPatchInput) -> ApplyPatchOutput:
    path = resolve(ctx, args.path, write=True)
    try:
        patches = parse(_with_headers(args.patch, path))
    except PatchSyntaxError as exc:
        raise ToolError("invalid_argument", f"not a valid patch: {exc}", line=exc.line) from None
    if len(patches) != 1 or patches[0].action != "update" or patches[0].move_to:
        raise ToolError(
            "invalid_argument",
            "the patch must change the one file `path` names (no other file, no adding,"
            " deleting or renaming)",
        )
    named = _inside(ctx.ws, patches[0].path)
    if named != path:
        raise ToolError("invalid_argument", f"the patch is for {named}, not {path}")
    if _stat(ctx, path).is_dir():
        raise ToolError("is_directory", f"{path} is a directory; apply_patch patches a file")
    before = text_to_change(ctx.ws, path)
    try:
        after, _ = apply_hunks_to(path, before, patches[0].hunks)
    except HunkFailed as exc:
        raise ToolError(
            "patch_failed",
            exc.message,
            hunk=exc.hunk,
            expected=exc.expected,
            closest_line=exc.closest_line,
        ) from None
    data = after.encode("utf-8")
    ctx.check_size(len(data), path)
    ctx.write(path, data)
    out = ApplyPatchOutput(patched=True, path=path)
    out._diff = unified_diff(before.encode("utf-8"), data, f"a{path}", f"b{path}")
    return out
