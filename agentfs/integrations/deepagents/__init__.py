"""deepagents: a workspace as a deepagents backend (``AgentFSBackend``, the ``deepagents``
extra), for ``create_deep_agent(backend=...)`` alone or as one route of a ``CompositeBackend``.
docs/integrations.md shows both."""

from agentfs.integrations.deepagents.backend import AgentFSBackend

__all__ = ["AgentFSBackend"]
