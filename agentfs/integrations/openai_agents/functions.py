"""agentfs's own tools as the SDK's ``FunctionTool``s, with strict JSON schemas
(``agentfs.tools.strict``: the schemas, and the arguments given in their form made the
tool's own again before the call).

Everything else about the call is the ``Toolset``'s: validation (bad arguments are a result
the model reads, and are audited), policy, approval, transaction, audit, read tracking.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from agents.tool import FunctionTool
from agents.tool_context import ToolContext

from agentfs.integrations.openai_agents.editor import ACTOR
from agentfs.integrations.toolsets import toolset_for
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.export import json_schema
from agentfs.tools.policy import Policy
from agentfs.tools.spec import Tool
from agentfs.tools.strict import strict_schema
from agentfs.tools.toolset import Approve, Toolset


def function_tools(
    ws: WorkspaceAPI | Toolset,
    *,
    thread: str = "main",
    actor: str | None = ACTOR,
    policy: Policy | None = None,
    approve: Approve | None = None,
    names: Sequence[str] | None = None,
    exclude: Collection[str] = (),
    needs_approval: Collection[str] = (),
) -> list[FunctionTool]:
    """The tools a ``Toolset`` over ``ws`` offers (``names``: only these; ``exclude``: not
    these, e.g. ``apply_patch`` and ``execute_command`` beside the SDK's ``ApplyPatchTool``
    and ``ShellTool``), as ``FunctionTool``s with strict schemas. The SDK asks for approval
    before a call of a tool in ``needs_approval`` (its ``needs_approval=True``); the policy
    is ``adapter_policy()`` unless given. Given a ``Toolset``, its tools, thread, policy and
    approval: close it to publish the audit rows of the last read-only calls at once."""
    toolset = toolset_for(ws, thread=thread, actor=actor, policy=policy, approve=approve)
    found = {name: toolset.surface.find(name) for name in names or ()}
    unknown = [name for name, spec in found.items() if spec is None]
    if unknown:
        raise ValueError(f"unknown tools: {', '.join(unknown)}")
    wanted = None if names is None else {spec.name for spec in found.values() if spec}
    return [
        _function_tool(toolset, spec, spec.name in needs_approval)
        for spec in toolset.tools()
        if (wanted is None or spec.name in wanted) and spec.name not in exclude
    ]


def _function_tool(toolset: Toolset, spec: Tool, approval: bool) -> FunctionTool:
    schema, decode = strict_schema(json_schema(spec.input))

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return toolset.invoke(spec.name, arguments).text  # the Toolset says what is wrong
        return toolset.invoke(spec.name, decode(parsed)).text

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=schema,
        on_invoke_tool=invoke,
        strict_json_schema=True,
        needs_approval=approval,
    )
