"""The ``Toolset`` each part of the adapter runs its calls through."""

from __future__ import annotations

from typing import Self

from agentfs.integrations.toolsets import toolset_for
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.catalog import AGENTFS
from agentfs.tools.policy import Policy
from agentfs.tools.spec import Surface
from agentfs.tools.toolset import Approve, Toolset

#: Who the workspace records as acting, unless told otherwise.
ACTOR = "openai-agents"


def surface_toolset(
    ws: WorkspaceAPI | Toolset,
    surface: Surface | None,
    *,
    thread: str,
    actor: str | None,
    policy: Policy | None,
    approve: Approve | None,
) -> Toolset:
    """A ``Toolset`` running ``surface`` (None: agentfs's own) over ``ws``. Given a
    ``Toolset`` of that surface, that one; of another, one over its workspace with its
    thread, actor, policy, approval and audit log, so both judge and record calls alike."""
    surface = AGENTFS if surface is None else surface
    if isinstance(ws, Toolset):
        if ws.surface is surface:
            return ws
        made = Toolset(
            ws.ws,
            surface=surface,
            thread=ws.thread,
            actor=ws.actor,
            policy=ws.policy,
            approve=ws.approve,
        )
        made.audit = ws.audit  # one log: closing the given Toolset publishes both's rows
        return made
    return toolset_for(
        ws, surface=surface, thread=thread, actor=actor, policy=policy, approve=approve
    )


class Flushing:
    """Publishing the audit rows still waiting (read-only and failed calls': see
    ``agentfs.tools.audit``): ``flush``, ``close`` or leaving a ``with`` block."""

    toolset: Toolset

    def flush(self) -> None:
        self.toolset.flush()

    close = flush

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
