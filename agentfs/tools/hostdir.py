"""``workspace_changes`` and ``workspace_apply``: for a workspace over a host directory
(docs/overlay.md), what the agent changed there, and carrying it back. Offered only over such
a workspace; ``workspace_apply`` writes outside the workspace, so it is disabled unless the
policy's own entry for it enables it, and then asks for approval by default."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from typing_extensions import TypedDict

from agentfs import overlay
from agentfs.core import paths
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.spec import ToolInput, ToolOutput, tool


def _require_base(ctx: Context) -> None:
    if getattr(ctx.ws, "base", None) is None:
        raise ToolError("unsupported", "this workspace has no base directory (init --base)")


class ChangesInput(ToolInput):
    path: str = Field("/", description="only changes at or below this path")
    patch: bool = Field(False, description="also give the unified diff against the base")


class ChangeEntry(TypedDict):
    kind: Literal["added", "modified", "deleted", "renamed"]
    path: str
    type: Literal["file", "symlink"]
    old_path: str | None
    insertions: int | None
    deletions: int | None


class ChangesOutput(ToolOutput):
    changes: list[ChangeEntry] = Field(description="by path; a rename names its old_path")
    patch: str | None = Field(None, description="the unified diff, when asked for")

    def text(self) -> str:
        if not self.changes:
            return "No changes against the base directory."
        letter = {"added": "A", "modified": "M", "deleted": "D", "renamed": "R"}
        rows = []
        for c in self.changes:
            where = f"{c['old_path']} -> {c['path']}" if c["old_path"] else c["path"]
            stats = "" if c["insertions"] is None else f" (+{c['insertions']} -{c['deletions']})"
            rows.append(f"{letter[c['kind']]} {where}{stats}")
        return "\n".join(rows + ([self.patch] if self.patch else []))


@tool(
    "workspace_changes",
    title="Changes against the base directory",
    idempotent=True,
    needs_base=True,
    description="""What this workspace changed against the host directory it works over:
    each file or symlink added, modified, deleted or renamed, with lines added and removed;
    with patch=true also the unified diff. Nothing reaches the host until it is applied.""",
)
def workspace_changes(ctx: Context, args: ChangesInput) -> ChangesOutput:
    _require_base(ctx)
    under = ctx.path(args.path)
    found = [c for c in overlay.changes(ctx.ws, under) if ctx.visible(c.path)]  # type: ignore[arg-type]
    entries: list[ChangeEntry] = [
        {
            "kind": c.kind,
            "path": c.path,
            "type": c.type,
            "old_path": c.old_path,
            "insertions": c.insertions,
            "deletions": c.deletions,
        }
        for c in found
    ]
    diff = overlay.patch(ctx.ws, found) if args.patch else None  # type: ignore[arg-type]
    return ChangesOutput(changes=entries, patch=diff)


class ApplyInput(ToolInput):
    paths: list[str] = Field(
        default_factory=list, description="only the changes at or below these (default: all)"
    )
    dry_run: bool = Field(False, description="say what would be written; write nothing")


class Conflict(TypedDict):
    path: str
    reason: str


class ApplyOutput(ToolOutput):
    written: list[str]
    deleted: list[str]
    skipped: list[str] = Field(description="'path: why' for what is never applied")
    conflicts: list[Conflict] = Field(description="when not empty, nothing was written")
    dry_run: bool

    def text(self) -> str:
        if self.conflicts:
            lines = [f"conflict {c['path']}: {c['reason']}" for c in self.conflicts]
            return "\n".join(
                [*lines, "Nothing was written: the user must resolve these (agentfs apply)."]
            )
        verb = "would write" if self.dry_run else "wrote"
        lines = [f"{verb} {p}" for p in self.written]
        lines += [f"{'would delete' if self.dry_run else 'deleted'} {p}" for p in self.deleted]
        lines += [f"skipped {line}" for line in self.skipped]
        return "\n".join(lines) or "No changes to apply."


@tool(
    "workspace_apply",
    title="Apply changes to the base directory",
    mutates=True,
    destructive=True,
    elsewhere=True,  # it commits its plan before touching the host, outside the call's
    needs_base=True,
    description="""Write this workspace's changes (all, or those at or below `paths`) into
    the host directory it works over. If the user changed a host file it would touch,
    nothing is written and each conflict is named. Git hooks and git config are never
    applied. Disabled unless the policy enables it; asks for approval.""",
)
def workspace_apply(ctx: Context, args: ApplyInput) -> ApplyOutput:
    _require_base(ctx)
    chosen = [ctx.path(p) for p in args.paths]
    allowed = []
    found = overlay.changes(ctx.ws, stats=False)  # type: ignore[arg-type]
    for change in found:
        names = [p for p in (change.path, change.old_path) if p is not None]
        if chosen and not any(paths.is_within(n, c) for n in names for c in chosen):
            continue
        # a path the policy does not let this tool write is left out, unnamed: the policy
        # hides it from the model too
        if all(_may_write(ctx, n) for n in names):
            allowed.append(change.path)
    if not allowed:
        return ApplyOutput(written=[], deleted=[], skipped=[], conflicts=[], dry_run=args.dry_run)
    done = overlay.apply(ctx.ws, allowed, dry_run=args.dry_run, found=found)  # type: ignore[arg-type]
    return ApplyOutput(
        written=done.written,
        deleted=done.deleted,
        skipped=[f"{path}: {why}" for path, why in done.skipped],
        conflicts=[{"path": c.path, "reason": c.reason} for c in done.conflicts],
        dry_run=done.dry_run,
    )


def _may_write(ctx: Context, path: str) -> bool:
    try:
        ctx.path(path, write=True)
    except ToolError:
        return False
    return True
