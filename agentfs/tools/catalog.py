"""Every tool, found by name or alias: importing this module imports the modules that declare
them (each registers its tools in ``agentfs.tools.spec.REGISTRY`` as it is imported)."""

from __future__ import annotations

from agentfs.tools import (
    commands,
    editing,
    files,
    finding,
    kv,
    listing,
    patching,
    reading,
    skills,
    syncing,
    timeline,
)
from agentfs.tools.spec import REGISTRY, Tool

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
)
_RANK = {module.__name__: rank for rank, module in enumerate(_MODULES)}
_ORDERED = sorted(REGISTRY.values(), key=lambda spec: _RANK[spec.run.__module__])
_ALIASES = {alias: spec.name for spec in REGISTRY.values() for alias in spec.aliases}


def find(name: str) -> Tool | None:
    """The tool called ``name`` (or aliased so), or None."""
    return REGISTRY.get(_ALIASES.get(name, name))


def all_tools() -> list[Tool]:
    return list(_ORDERED)
