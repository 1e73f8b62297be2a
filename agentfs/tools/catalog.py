"""agentfs's own tools, found by name or alias: importing this module imports the modules that
declare them (each registers its tools in ``agentfs.tools.spec.TOOLS`` as it is imported).
And the profiles: the surfaces a ``Toolset`` may offer by name, each imported when first
asked for (``profile``)."""

from __future__ import annotations

import importlib

from agentfs.tools import (
    commands,
    editing,
    files,
    finding,
    hostdir,
    kv,
    listing,
    patching,
    reading,
    skills,
    syncing,
    timeline,
)
from agentfs.tools.spec import TOOLS, Surface, Tool

#: The order clients list the tools in: look, read, write, edit, find, run, history, memory,
#: skills, sync.
_MODULES = (
    listing,
    reading,
    files,
    editing,
    patching,
    finding,
    commands,
    timeline,
    kv,
    skills,
    syncing,
    hostdir,
)
_RANK = {module.__name__: rank for rank, module in enumerate(_MODULES)}
TOOLS.sort(key=lambda spec: _RANK[spec.run.__module__])
#: The surface a ``Toolset`` offers unless given another.
AGENTFS: Surface = TOOLS


def find(name: str) -> Tool | None:
    """The tool called ``name`` (or aliased so), or None."""
    return AGENTFS.find(name)


def all_tools() -> list[Tool]:
    return AGENTFS.all_tools()


#: The profiles, by name: where each one's surface is (``module:attribute``). ``agentfs`` is
#: agentfs's own tools; the others offer one ecosystem's names and shapes over the same engine.
PROFILES = {
    "agentfs": "agentfs.tools.catalog:AGENTFS",
    "agentos": "agentfs.tools.profiles.agentos:SURFACE",
    "baf": "agentfs.tools.profiles.baf:SURFACE",
    "mastra": "agentfs.tools.profiles.mastra:SURFACE",
    "mcp-filesystem": "agentfs.tools.profiles.mcp_filesystem:SURFACE",
    "triggerfish": "agentfs.tools.profiles.triggerfish:SURFACE",
    "voltagent": "agentfs.tools.profiles.voltagent:SURFACE",
}


#: The presets: the tools of one kind of agent, by the agentfs tools that rule them (a
#: profile's tool is in a preset when the tool it is governed by is). A shorter tool list
#: is a shorter prompt: every call carries every schema.
PRESETS: dict[str, frozenset[str]] = {
    "coding": frozenset(
        {
            "ls",
            "list_tree",
            "stat",
            "read_file",
            "read_multiple_files",
            "write_file",
            "create_file",
            "delete_file",
            "mkdir",
            "move_file",
            "edit_file",
            "multi_edit",
            "apply_patch",
            "glob",
            "grep",
            "search_files",
            "workspace_search",
            "execute_command",
            "file_history",
            "file_diff",
            "restore_version",
            "snapshot_create",
            "snapshot_list",
            "snapshot_diff",
            "snapshot_restore",
        }
    ),
    "memory": frozenset(
        {
            "ls",
            "list_tree",
            "read_file",
            "write_file",
            "create_file",
            "edit_file",
            "delete_file",
            "move_file",
            "search_files",
            "workspace_search",
            "kv_get",
            "kv_set",
            "kv_delete",
            "kv_list",
            "file_history",
            "restore_version",
        }
    ),
}


def preset(name: str) -> frozenset[str]:
    """The agentfs tools of preset ``name``; an unknown name is a ``ValueError`` that lists
    the presets."""
    tools = PRESETS.get(name)
    if tools is None:
        raise ValueError(f"no preset {name!r}; the presets are: {', '.join(PRESETS)}")
    return tools


def profile(name: str) -> Surface:
    """The surface of the profile called ``name``; an unknown name is a ``ValueError`` that
    lists the profiles."""
    where = PROFILES.get(name)
    if where is None:
        raise ValueError(f"no profile {name!r}; the profiles are: {', '.join(PROFILES)}")
    module, attribute = where.split(":")
    surface: Surface = getattr(importlib.import_module(module), attribute)
    return surface
