"""The ``Toolset`` behind an adapter: the one every framework's calls go through.

A framework has its own way to ask a person before a command runs (deepagents'
``interrupt_on``, the OpenAI Agents SDK's ``needs_approval``, LangChain's human-in-the-loop
middleware), so an adapter's default policy asks no approval of its own for commands; an
operator's policy, when given, applies as written.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentfs.protocol import WorkspaceAPI
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
    ``policy`` (``adapter_policy()`` by default). Given a ``Toolset``, that one, as it is:
    its thread, policy and approval are the caller's choice."""
    if isinstance(ws, Toolset):
        return ws
    return Toolset(
        ws,
        surface=surface,
        thread=thread,
        actor=actor,
        policy=adapter_policy() if policy is None else policy,
        approve=approve,
        tools=names,
    )
