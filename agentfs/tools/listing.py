"""``ls``, ``list_tree`` (alias ``list_files``) and ``stat``: what is where, without reading
content. Listings are capped (the policy's ``max_results`` lowers the cap) and say so when
cut; entries the policy denies are left out."""

from __future__ import annotations

import itertools
from typing import Annotated, Any, get_args

from pydantic import Field
from typing_extensions import TypedDict

from agentfs.core import paths
from agentfs.tools.common import PATH_DOC, EntryType, entry_type, iso, version_of
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.spec import ToolInput, ToolOutput, tool

#: Most entries ``ls`` returns unless the policy says fewer.
LS_LIMIT = 1000
#: Most entries ``list_tree`` returns unless the policy says fewer.
TREE_LIMIT = 500


class Entry(TypedDict):
    """One entry of the directory."""

    # A plain dict, not a model: a listing has up to 1,000 of them, and building a pydantic
    # model per entry was most of ls's time (500 entries: 3.9 ms).

    name: str
    type: EntryType
    size: int
    modified: Annotated[str, Field(description="last modification, ISO 8601 UTC")]


#: Each entry type padded to the longest, for the text's first column.
_PADDED = {kind: kind.ljust(9) for kind in get_args(EntryType)}


class LsInput(ToolInput):
    path: str = Field("/", description=PATH_DOC)


class LsOutput(ToolOutput):
    path: str
    entries: list[Entry]
    truncated: bool = False

    def text(self) -> str:
        if not self.entries:
            return f"{self.path} is empty."
        sizes = [f"{e['size']:,}" for e in self.entries]
        width = max(map(len, sizes))
        rows = [
            f"{_PADDED[e['type']]} {size.rjust(width)} {e['modified']} {e['name']}"
            + ("/" if e["type"] == "directory" else "")
            for e, size in zip(self.entries, sizes, strict=True)
        ]
        if self.truncated:
            rows.append(f"... only the first {len(self.entries):,} entries are shown")
        return "\n".join(rows)

    def data(self) -> dict[str, Any]:  # built of JSON values already: no dump
        return {"path": self.path, "entries": self.entries, "truncated": self.truncated}


@tool(
    "ls",
    title="List a directory",
    idempotent=True,
    description="""List one directory's entries: name, type, size in bytes, modification
    time. For a whole subtree use list_tree; to find files by name, glob.""",
)
def ls(ctx: Context, args: LsInput) -> LsOutput:
    path = ctx.path(args.path)
    cap = ctx.cap(LS_LIMIT)
    listing = ctx.ws.readdir_plus(path)
    if ctx.filters_paths:  # the policy is asked about the entries shown, and one more
        visible = ((name, st) for name, st in listing if ctx.visible(paths.join(path, name)))
        listing = list(itertools.islice(visible, cap + 1))
    entries: list[Entry] = [
        {
            "name": name,
            "type": entry_type(st),
            "size": st.st_size,
            "modified": iso(st.st_mtime_ns),
        }
        for name, st in listing[:cap]
    ]
    truncated = len(listing) > cap
    # built from our own values: not validated again
    return LsOutput.model_construct(path=path, entries=entries, truncated=truncated)


class ListTreeInput(ToolInput):
    path: str = Field("/", description=PATH_DOC)
    max_depth: int = Field(4, ge=1, le=64, description="levels below path to show")


class TreeEntry(TypedDict):
    """One entry below the directory."""

    # A plain dict, like ls's Entry.

    path: str
    type: EntryType
    size: int
    depth: Annotated[int, Field(description="1 for the entries of path itself")]


class ListTreeOutput(ToolOutput):
    path: str
    tree: str = Field(description="the tree, indented two spaces a level, directories end in /")
    entries: list[TreeEntry]
    truncated: bool = Field(description="entries were left out (max_depth or the cap)")

    def text(self) -> str:
        return self.tree

    def data(self) -> dict[str, Any]:  # built of JSON values already: no dump
        return {
            "path": self.path,
            "tree": self.tree,
            "entries": self.entries,
            "truncated": self.truncated,
        }


@tool(
    "list_tree",
    title="List a directory tree",
    idempotent=True,
    aliases=("list_files",),
    description="""Show the tree below a directory as indented text (directories end in /):
    a project's layout. At most 500 entries; a marker says when it is cut: then call it on a
    subdirectory.""",
)
def list_tree(ctx: Context, args: ListTreeInput) -> ListTreeOutput:
    top = ctx.path(args.path)
    if not ctx.ws.stat(top).is_dir():
        raise ToolError("not_directory", f"{top} is not a directory; call stat or read_file")
    walk = _TreeWalk(ctx, args.max_depth, ctx.cap(TREE_LIMIT))
    walk.lines.append(top if top == "/" else top + "/")
    walk.visit(top, 1)
    if walk.cut:
        walk.lines.append(
            f"... truncated at {len(walk.entries):,} entries; call list_tree on a subdirectory"
        )
    elif walk.deeper:
        walk.lines.append(f"(directories marked ... hold more below depth {args.max_depth})")
    return ListTreeOutput.model_construct(  # built from our own values: not validated again
        path=top,
        tree="\n".join(walk.lines),
        entries=walk.entries,
        truncated=walk.cut or walk.deeper,
    )


class _TreeWalk:
    """Depth first in name order, so the text reads like ``tree``; stops at the cap."""

    def __init__(self, ctx: Context, max_depth: int, cap: int) -> None:
        self.ctx = ctx
        self.max_depth = max_depth
        self.cap = cap
        self.entries: list[TreeEntry] = []
        self.lines: list[str] = []
        self.deeper = False  # something lies below max_depth
        self.cut = False  # the cap stopped the walk

    def visit(self, directory: str, depth: int) -> None:
        ws = self.ctx.ws
        filtered = self.ctx.filters_paths
        for name, st in ws.readdir_plus(directory):
            full = paths.join(directory, name)
            if filtered and not self.ctx.visible(full):
                continue
            if len(self.entries) == self.cap:
                self.cut = True
                return
            kind = entry_type(st)
            self.entries.append({"path": full, "type": kind, "size": st.st_size, "depth": depth})
            self.lines.append("  " * depth + name + ("/" if kind == "directory" else ""))
            if kind != "directory":
                continue
            if depth < self.max_depth:
                self.visit(full, depth + 1)
                if self.cut:
                    return
            elif ws.listdir(full):
                self.deeper = True
                self.lines[-1] += " ..."


class StatInput(ToolInput):
    path: str = Field(description=PATH_DOC)


class StatOutput(ToolOutput):
    path: str
    type: EntryType
    size: int
    mode: str = Field(description="permission bits in octal, e.g. 0644")
    modified: str
    changed: str = Field(description="last change of content or metadata, ISO 8601 UTC")
    nlink: int
    ino: int
    version: int = Field(description="the file's version; pass it as expected_version")
    target: str | None = Field(None, description="where a symlink points")


@tool(
    "stat",
    title="File information",
    idempotent=True,
    description="""Information about one path without reading it: type, size, permissions,
    times, a file's version (to pass as expected_version). A symlink is described itself, with
    its target.""",
)
def stat(ctx: Context, args: StatInput) -> StatOutput:
    path = ctx.path(args.path)
    with ctx.ws.read_transaction():  # the entry and its version, as one state
        st = ctx.ws.lstat(path)
        kind = entry_type(st)
        return StatOutput(
            path=path,
            type=kind,
            size=st.st_size,
            mode=f"{st.st_mode & 0o7777:04o}",
            modified=iso(st.st_mtime_ns),
            changed=iso(st.st_ctime_ns),
            nlink=st.st_nlink,
            ino=st.st_ino,
            version=version_of(ctx.ws, path, st) if kind == "file" else 0,
            target=ctx.ws.readlink(path) if kind == "symlink" else None,
        )
