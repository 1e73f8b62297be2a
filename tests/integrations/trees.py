"""Whole trees as dicts, to compare an adapter's workspace with its framework's reference
directory after each step: every path, None for a directory, the bytes of a file."""

from __future__ import annotations

from pathlib import Path

import agentfs


def host_tree(root: Path, under: str = "") -> dict[str, bytes | None]:
    """Everything below ``root``, each path as ``under`` + its path from ``root``."""
    return {
        f"{under}/{p.relative_to(root)}": None if p.is_dir() else p.read_bytes()
        for p in root.rglob("*")
    }


def workspace_tree(ws: agentfs.Workspace, top: str = "/") -> dict[str, bytes | None]:
    """Everything below ``top`` in ``ws`` (nothing if ``top`` is not there)."""
    found: dict[str, bytes | None] = {}
    if not ws.exists(top):
        return found
    for where, folders, files in ws.walk(top):
        base = where.rstrip("/")
        found.update({f"{base}/{name}": None for name in folders})
        found.update({f"{base}/{name}": ws.read(f"{base}/{name}") for name in files})
    return found
