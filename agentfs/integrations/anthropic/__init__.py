"""Anthropic: a workspace behind the Anthropic SDK's tools (the ``anthropic`` extra)."""

from agentfs.integrations.anthropic.common import ACTOR, SURFACE
from agentfs.integrations.anthropic.memory import AgentFSMemoryTool, AsyncAgentFSMemoryTool

__all__ = ["ACTOR", "SURFACE", "AgentFSMemoryTool", "AsyncAgentFSMemoryTool"]
