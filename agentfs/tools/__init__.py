"""The agent tool surface: typed tools over a workspace, policies, audit, skills and MCP.

>>> from agentfs.tools import Policy, Toolset
>>> tools = Toolset(ws, thread="t1", policy=Policy(read_only=True))
>>> tools.call("grep", {"pattern": "TODO", "output_mode": "content"})
"""

from agentfs.tools.policy import Limits, Policy, ToolPolicy
from agentfs.tools.toolset import Toolset

__all__ = ["Limits", "Policy", "ToolPolicy", "Toolset"]
