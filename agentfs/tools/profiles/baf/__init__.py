"""The ``baf`` profile: baf's workspace tools (``list_directory``, ``read_file``,
``write_file``, ``create_file``, ``delete_file``), each taking a ``workspace`` argument that
chooses among several named workspaces (``Workspaces``), over agentfs's engine, policy and
audit. ``tools`` has the tools and their rules; ``spaces`` the set of named workspaces and the
system-prompt text that presents them."""

from agentfs.tools.profiles.baf.space import Space
from agentfs.tools.profiles.baf.spaces import SpaceSetting, SpacesFile, Workspaces
from agentfs.tools.profiles.baf.tools import SURFACE

__all__ = ["SURFACE", "Space", "SpaceSetting", "SpacesFile", "Workspaces"]
