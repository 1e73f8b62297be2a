"""The OpenAI Agents SDK over a workspace (the ``openai-agents`` extra): the SDK's
``apply_patch`` tool (``AgentFSEditor``), its ``shell`` tool (``ShellExecutor``, in the
mounted workspace, sandboxed) and agentfs's own tools as ``FunctionTool``s with strict
schemas (``function_tools``). Every call goes through a ``Toolset``: the operator's policy,
approval, one transaction per change with its audit row, the thread's read tracking.

    agent = Agent(
        name="coder",
        tools=[
            *function_tools(ws, exclude=["apply_patch", "execute_command"]),
            ApplyPatchTool(editor=AgentFSEditor(ws)),
            ShellTool(executor=ShellExecutor(ws), needs_approval=True),
        ],
    )
"""

from __future__ import annotations

from agentfs.integrations.openai_agents.editor import SURFACE, AgentFSEditor
from agentfs.integrations.openai_agents.functions import function_tools
from agentfs.integrations.openai_agents.shell import ShellExecutor
from agentfs.tools.strict import strict_schema

__all__ = ["SURFACE", "AgentFSEditor", "ShellExecutor", "function_tools", "strict_schema"]
