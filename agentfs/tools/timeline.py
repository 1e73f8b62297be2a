"""The history tools: every version of a file, and snapshots of the whole tree per thread.

They let an agent undo its own mistakes without a human: a restore is itself recorded (a
restore version, a ``before-restore`` snapshot), so every step back can be stepped forward.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field

from agentfs.history.snapshots import SnapshotInfo as SnapshotRow
from agentfs.tools.common import PATH_DOC, VersionNumber, iso
from agentfs.tools.context import Context
from agentfs.tools.spec import ToolInput, ToolOutput, tool


class FileHistoryInput(ToolInput):
    path: str = Field(description=PATH_DOC)


class VersionInfo(ToolOutput):
    version: int
    op: str = Field(description="write, rename, move, link, restore or delete")
    size: int | None = Field(description="bytes of content (none for a delete or move)")
    at: str = Field(description="when, ISO 8601 UTC")
    actor: str | None = None
    thread: str | None = None
    other: str | None = Field(
        None, description="the other path of a rename/move, or the version a restore restored"
    )


class FileHistoryOutput(ToolOutput):
    path: str
    versions: list[VersionInfo] = Field(description="oldest first")

    def text(self) -> str:
        if not self.versions:
            return f"{self.path} has no history."
        rows = [f"History of {self.path} (oldest first):"]
        for v in self.versions:
            who = "/".join(x for x in (v.actor, v.thread) if x)
            size = f" {v.size:,} bytes" if v.size is not None else ""
            other = f" ({v.other})" if v.other else ""
            rows.append(f"  v{v.version} {v.op}{other}{size} {v.at}{' by ' + who if who else ''}")
        return "\n".join(rows)


@tool(
    "file_history",
    title="Versions of a file",
    idempotent=True,
    description="""List every version of a file, oldest first: what happened, size, when,
    who. Deleted files keep their history. Read an old version with read_file(version=N),
    compare with file_diff, bring one back with restore_version.""",
)
def file_history(ctx: Context, args: FileHistoryInput) -> FileHistoryOutput:
    path = ctx.path(args.path)
    versions = [
        VersionInfo(
            version=v.n,
            op=v.op,
            size=v.size,
            at=iso(v.at_ns),
            actor=v.actor,
            thread=v.thread,
            other=v.other,
        )
        for v in ctx.ws.history(path)
    ]
    return FileHistoryOutput(path=path, versions=versions)


class FileDiffInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    a: VersionNumber | None = Field(
        None, description="older version (default: the one before the newest)"
    )
    b: VersionNumber | None = Field(
        None, description="newer version (default: the file as it is now)"
    )


class DiffOutput(ToolOutput):
    path: str
    diff: str = Field(description="unified diff; empty when there is no difference")

    def text(self) -> str:
        return self.diff or f"No difference in {self.path}."


@tool(
    "file_diff",
    title="Diff two versions of a file",
    idempotent=True,
    description="""Unified diff of a file between two versions (numbers from
    file_history).""",
)
def file_diff(ctx: Context, args: FileDiffInput) -> DiffOutput:
    path = ctx.path(args.path)
    return DiffOutput(path=path, diff=ctx.ws.diff(path, args.a, args.b))


class RestoreVersionInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    version: VersionNumber = Field(description="the version to bring back (see file_history)")


class RestoreVersionOutput(ToolOutput):
    path: str
    restored: int = Field(description="the version brought back")
    version: int = Field(description="the file's new version (a restore)")

    def text(self) -> str:
        return (
            f"Restored {self.path} to version {self.restored}; it is now version"
            f" {self.version} (restore version {self.version - 1} to undo)."
        )


@tool(
    "restore_version",
    title="Restore a version of a file",
    mutates=True,
    destructive=True,
    description="""Make an old version of a file its current content again, a deleted
    file's too. The restore is itself a new version, so it can be undone.""",
)
def restore_version(ctx: Context, args: RestoreVersionInput) -> RestoreVersionOutput:
    path = ctx.path(args.path, write=True)
    restored = ctx.ws.restore_version(path, args.version)
    return RestoreVersionOutput(path=path, restored=args.version, version=restored.n)


class SnapshotCreateInput(ToolInput):
    name: str = Field(min_length=1, max_length=255, description="a name for the snapshot")


class SnapshotInfo(ToolOutput):
    name: str
    thread: str | None
    label: str | None = None
    created: str
    files: int
    bytes: int


class SnapshotCreateOutput(SnapshotInfo):
    def text(self) -> str:
        return (
            f"Snapshot {self.name!r} taken ({self.files:,} files, {self.bytes:,} bytes);"
            f" snapshot_restore(name={self.name!r}) brings this state back."
        )


@tool(
    "snapshot_create",
    title="Snapshot the workspace",
    mutates=True,
    description="""Record the whole workspace under a name, e.g. before a risky change;
    snapshot_restore brings it back. Cheap: it costs what changed since the last snapshot.""",
)
def snapshot_create(ctx: Context, args: SnapshotCreateInput) -> SnapshotCreateOutput:
    info = ctx.ws.snapshots.create(args.name, thread=ctx.thread)
    return SnapshotCreateOutput(**_snapshot(info).model_dump())


def _snapshot(info: SnapshotRow) -> SnapshotInfo:
    return SnapshotInfo(
        name=info.name,
        thread=info.thread,
        label=info.label,
        created=iso(info.created_ns),
        files=info.files,
        bytes=info.bytes,
    )


class SnapshotListInput(ToolInput):
    pass


class SnapshotListOutput(ToolOutput):
    snapshots: list[SnapshotInfo] = Field(description="oldest first")

    def text(self) -> str:
        if not self.snapshots:
            return "No snapshots."
        return "\n".join(
            f"{s.name}  {s.created}  {s.files:,} files"
            + (f"  thread {s.thread}" if s.thread else "")
            + (f"  ({s.label})" if s.label else "")
            for s in self.snapshots
        )


@tool(
    "snapshot_list",
    title="List snapshots",
    idempotent=True,
    description="""List the workspace's snapshots, oldest first, with their thread and
    size, including the automatic before-restore ones.""",
)
def snapshot_list(ctx: Context, args: SnapshotListInput) -> SnapshotListOutput:
    return SnapshotListOutput(snapshots=[_snapshot(info) for info in ctx.ws.snapshots.list()])


class SnapshotDiffInput(ToolInput):
    # ``name`` as its siblings (snapshot_create, snapshot_restore) name a snapshot; ``a`` and
    # ``b``, the two's first names, are still taken (deprecated). (A docstring here would be
    # the schema's description.)
    name: str = Field(
        validation_alias=AliasChoices("name", "a"), description="the older snapshot's name"
    )
    other: str | None = Field(
        None,
        validation_alias=AliasChoices("other", "b"),
        description="the newer snapshot's name (default: now)",
    )


class SnapshotDiffOutput(ToolOutput):
    added: list[str]
    removed: list[str]
    modified: list[str]

    def text(self) -> str:
        rows = [f"A {p}" for p in self.added]
        rows += [f"D {p}" for p in self.removed]
        rows += [f"M {p}" for p in self.modified]
        return "\n".join(sorted(rows, key=lambda r: r[2:])) or "No differences."


@tool(
    "snapshot_diff",
    title="Compare snapshots",
    idempotent=True,
    description="""List the paths added (A), removed (D) and modified (M) between two
    snapshots, or a snapshot and now.""",
)
def snapshot_diff(ctx: Context, args: SnapshotDiffInput) -> SnapshotDiffOutput:
    changes = ctx.ws.snapshots.diff(args.name, args.other)
    return SnapshotDiffOutput(
        added=[p for p in changes.added if ctx.visible(p)],
        removed=[p for p in changes.removed if ctx.visible(p)],
        modified=[p for p in changes.modified if ctx.visible(p)],
    )


class SnapshotRestoreInput(ToolInput):
    name: str = Field(description="the snapshot to bring back")


class SnapshotRestoreOutput(SnapshotDiffOutput):
    undo: str = Field(description="the snapshot of the state before; restore it to undo")

    def text(self) -> str:
        changed = len(self.added) + len(self.removed) + len(self.modified)
        return (
            f"Restored; {changed} paths changed. snapshot_restore(name={self.undo!r}) undoes"
            f" it.\n{super().text()}"
        )


@tool(
    "snapshot_restore",
    title="Restore a snapshot",
    mutates=True,
    destructive=True,
    description="""Bring the whole workspace back to a snapshot in one step; the state before
    is snapshotted first (its name is returned), so it can be undone. Refused (denied) if it
    would change paths the policy protects.""",
)
def snapshot_restore(ctx: Context, args: SnapshotRestoreInput) -> SnapshotRestoreOutput:
    ws = ctx.ws
    if ctx.policy.deny or ctx.policy.allow:
        pending = ws.snapshots.diff(args.name)
        for path in [*pending.added, *pending.removed, *pending.modified]:
            ctx.path(path, write=True)  # every path the restore would change must be allowed
    result = ws.snapshots.restore(args.name)
    changes = result.changes
    return SnapshotRestoreOutput(
        added=changes.added, removed=changes.removed, modified=changes.modified, undo=result.undo
    )
