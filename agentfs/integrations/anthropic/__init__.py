"""Anthropic: a workspace behind the Anthropic SDK's tools (the ``anthropic`` extra).

- ``AgentFSMemoryTool`` / ``AsyncAgentFSMemoryTool``: the memory tool (``memory_20250818``),
  subclasses of the SDK's ``BetaAbstractMemoryTool``, over the workspace's ``/memories``.
- ``AgentFSTextEditorTool`` / ``AsyncAgentFSTextEditorTool``: the text editor tool
  (``text_editor_20250728``, ``str_replace_based_edit_tool``).
- ``agent_toolset(ws)`` / ``async_agent_toolset(ws)``: the ``agent_toolset_20260401`` tools
  (``bash``, ``read``, ``write``, ``edit``, ``glob``, ``grep``), ``bash`` run in the mounted
  workspace by ``execute_command``.

Each is a tool ``client.beta.messages.tool_runner(tools=[...])`` runs, answers with the texts
and errors of the SDK's reference tools, and runs every call through a ``Toolset`` over
``SURFACE`` (policy, approval, one transaction per change with its audit row, read
tracking): a model trained on these tools meets what it expects, and the operator's rules
for the agentfs tool each one is governed by hold.
"""

from agentfs.integrations.anthropic.agent_tools import (
    AgentTool,
    AsyncAgentTool,
    agent_toolset,
    async_agent_toolset,
)
from agentfs.integrations.anthropic.common import ACTOR, SURFACE
from agentfs.integrations.anthropic.editor import (
    AgentFSTextEditorTool,
    AsyncAgentFSTextEditorTool,
)
from agentfs.integrations.anthropic.memory import AgentFSMemoryTool, AsyncAgentFSMemoryTool

__all__ = [
    "ACTOR",
    "SURFACE",
    "AgentFSMemoryTool",
    "AgentFSTextEditorTool",
    "AgentTool",
    "AsyncAgentFSMemoryTool",
    "AsyncAgentFSTextEditorTool",
    "AsyncAgentTool",
    "agent_toolset",
    "async_agent_toolset",
]
