"""Whole trees as dicts, to compare a workspace with a host directory, or a host directory with
itself before and after, in one assertion that names every path that differs."""

from __future__ import annotations

import os
from pathlib import Path

import agentfs


def host_tree(root: Path, under: str = "") -> dict[str, bytes | None]:
    """Everything below ``root``, each path as ``under`` + its path from ``root``: None for a
    directory, the bytes of a file (through a symlink, as a program reading it sees them)."""
    return {
        f"{under}/{p.relative_to(root)}": None if p.is_dir() else p.read_bytes()
        for p in root.rglob("*")
    }


def workspace_tree(ws: agentfs.Workspace, top: str = "/") -> dict[str, bytes | None]:
    """Everything below ``top`` in ``ws`` (nothing if ``top`` is not there), as ``host_tree``
    gives a directory. Untracked reads: looking at the tree is not an agent reading a file."""
    found: dict[str, bytes | None] = {}
    if not ws.exists(top):
        return found
    for where, folders, files in ws.walk(top):
        base = where.rstrip("/")
        found.update({f"{base}/{name}": None for name in folders})
        found.update({f"{base}/{name}": ws.read(f"{base}/{name}", track=False) for name in files})
    return found


def host_files(root: Path, *, symlinks: bool = True) -> dict[str, bytes | str]:
    """Every file below ``root`` by its path from ``root``, as a base directory's tests check
    it: a regular file's bytes, a symlink's target (not what it leads to: a link replaced by a
    copy must show), no entry for a directory; without ``symlinks``, the regular files alone."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            if symlinks:
                found[key] = os.readlink(path)
        elif path.is_file():
            found[key] = path.read_bytes()
    return found
