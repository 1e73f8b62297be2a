"""``sync_status``: where this workspace stands against its sync server (docs/sync.md), so an
agent resuming a thread can tell whether another machine's work has arrived."""

from __future__ import annotations

from pydantic import Field
from typing_extensions import TypedDict

from agentfs import sync
from agentfs.tools.common import iso
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.spec import ToolInput, ToolOutput, tool


class SyncStatusInput(ToolInput):
    offline: bool = Field(
        False,
        description="do not ask the server, e.g. when it cannot be reached (behind is"
        " then unknown)",
    )


class SyncConflict(TypedDict):
    """A path both sides changed: the later change is live, the other a version of it."""

    path: str
    reason: str


class SyncStatusOutput(ToolOutput):
    remote: str | None = Field(description="the sync server's URL; null: this does not sync")
    changed: int = Field(description="paths changed here since the last sync")
    unpushed: int = Field(description="commits made here that the server does not have yet")
    behind: int | None = Field(description="commits others pushed not merged here (offline: null)")
    last_push: str | None = Field(description="ISO 8601 UTC, or null: never")
    last_pull: str | None = Field(description="ISO 8601 UTC, or null: never")
    conflicts: list[SyncConflict]

    def text(self) -> str:
        if self.remote is None:
            return (
                "This workspace does not sync with a server (`agentfs sync setup WS --remote"
                " URL` sets that up); all its work is here."
            )
        behind = "unknown (offline)" if self.behind is None else f"{self.behind} commits"
        lines = [
            f"Syncs with {self.remote}: {self.changed} paths changed here since the last sync,"
            f" {self.unpushed} commits not pushed, behind by {behind}.",
            f"Last push {self.last_push or 'never'}, last pull {self.last_pull or 'never'}.",
        ]
        lines += [f"Conflict: {c['path']}: {c['reason']}" for c in self.conflicts]
        return "\n".join(lines)


@tool(
    "sync_status",
    title="Sync status",
    idempotent=True,
    description="""Where this workspace stands against its sync server: paths changed and
    commits not pushed here, others' commits not merged here yet, the last push and pull, and
    conflicts (a path both sides changed: the later change is live, the other a version in
    file_history).""",
)
def sync_status(ctx: Context, args: SyncStatusInput) -> SyncStatusOutput:
    if sync.remote(ctx.ws.path) is None:
        return SyncStatusOutput(
            remote=None,
            changed=0,
            unpushed=0,
            behind=None,
            last_push=None,
            last_pull=None,
            conflicts=[],
        )
    try:
        state = sync.status(ctx.ws.path, offline=args.offline)
    except sync.SyncError as exc:
        raise ToolError("unsupported", str(exc)) from None
    return SyncStatusOutput(
        remote=state["remote"],
        changed=state["changed"],
        unpushed=len(state["unpushed"]),
        behind=state["behind"],
        last_push=_when(state["last_push"]),
        last_pull=_when(state["last_pull"]),
        conflicts=[{"path": c["path"], "reason": c["reason"]} for c in state["conflicts"]],
    )


def _when(seconds: int | None) -> str | None:
    return None if seconds is None else iso(seconds * 1_000_000_000)
