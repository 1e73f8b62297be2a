"""LangChain: the workspace's agent tools as LangChain tools (``tools(ws)``), for
``create_agent``, LangGraph or any runnable that takes ``BaseTool``s (the ``langchain`` extra).

Each tool keeps its agentfs name, description and JSON Schema, and runs through one
``Toolset``, which validates the arguments itself: a call with bad arguments is a result the
model can act on, and is audited, as every other call is. What the model reads is the result's
text; the structured result is the tool message's artifact. The async form runs the call in
place, as a workspace handle belongs to its thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from agentfs.integrations.toolsets import toolset_for
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.export import json_schema
from agentfs.tools.policy import Policy
from agentfs.tools.spec import Tool
from agentfs.tools.toolset import Approve, Toolset

#: Who the workspace records as acting, unless told otherwise.
ACTOR = "langchain"


def tools(
    ws: WorkspaceAPI | Toolset,
    *,
    thread: str = "main",
    actor: str | None = ACTOR,
    policy: Policy | None = None,
    approve: Approve | None = None,
    names: Sequence[str] | None = None,
) -> list[BaseTool]:
    """The tools a ``Toolset`` over ``ws`` offers (``names``: only these), as LangChain tools;
    the policy is ``adapter_policy()`` unless given. Given a ``Toolset`` instead, its tools,
    thread, policy and approval: close it (or leave its ``with`` block) to publish the audit
    rows of the last read-only calls at once."""
    toolset = toolset_for(
        ws, thread=thread, actor=actor, policy=policy, approve=approve, names=names
    )
    return [_tool(toolset, spec) for spec in toolset.tools()]


def _tool(toolset: Toolset, spec: Tool) -> BaseTool:
    def run(**arguments: Any) -> tuple[str, dict[str, Any]]:
        result = toolset.invoke(spec.name, arguments)
        return result.text, result.data

    async def arun(**arguments: Any) -> tuple[str, dict[str, Any]]:
        return run(**arguments)

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=spec.name,
        description=spec.description,
        args_schema=json_schema(spec.input),  # a schema, not a model: the Toolset validates
        response_format="content_and_artifact",
    )
