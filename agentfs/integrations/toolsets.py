"""The ``Toolset`` behind an adapter: the one every framework's calls go through.

A framework has its own way to ask a person before a command runs (deepagents'
``interrupt_on``, the OpenAI Agents SDK's ``needs_approval``, LangChain's human-in-the-loop
middleware), so an adapter's default policy asks no approval of its own for commands; an
operator's policy, when given, applies as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from agentfs.protocol import WorkspaceAPI
from agentfs.tools.catalog import AGENTFS
from agentfs.tools.policy import Policy, ToolPolicy
from agentfs.tools.spec import Surface
from agentfs.tools.toolset import Approve, Toolset


def adapter_policy() -> Policy:
    """The default policy of an adapter: agentfs's defaults, commands run without asking."""
    return Policy(tools={"execute_command": ToolPolicy(needs_approval=False)})


def toolset_for(
    ws: WorkspaceAPI | Toolset,
    *,
    surface: Surface | None = None,
    thread: str = "main",
    actor: str | None = None,
    policy: Policy | None = None,
    approve: Approve | None = None,
    names: Sequence[str] | None = None,
) -> Toolset:
    """A ``Toolset`` over ``ws`` running ``surface`` (agentfs's own by default) under
    ``policy`` (``adapter_policy()`` by default).

    Given a ``Toolset``, its choices hold (thread, actor, policy, approval): that one if it
    runs ``surface``, else one over its workspace with its choices and its audit log, so
    that several adapters (an editor, a shell, function tools) share one conversation's
    settings, and closing the given one publishes every row."""
    surface = AGENTFS if surface is None else surface
    if not isinstance(ws, Toolset):
        return Toolset(
            ws,
            surface=surface,
            thread=thread,
            actor=actor,
            policy=adapter_policy() if policy is None else policy,
            approve=approve,
            tools=names,
        )
    if ws.surface is surface and names is None:
        return ws
    made = Toolset(
        ws.ws,
        surface=surface,
        thread=ws.thread,
        actor=ws.actor,
        policy=ws.policy,
        approve=ws.approve,
        tools=names,
    )
    made.audit = ws.audit
    return made


class Flushing:
    """An adapter whose ``toolset`` keeps the audit rows of read-only calls waiting (see
    ``agentfs.tools.audit``): ``flush``, ``close`` or leaving a ``with`` block publishes
    them."""

    toolset: Toolset

    def flush(self) -> None:
        self.toolset.flush()

    close = flush

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
