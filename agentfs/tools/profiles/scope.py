"""Paths for the profiles whose agents treat the workspace as their whole filesystem: an
absolute path is a workspace path, a relative one is read from the root, and a ``..`` that
would climb above the root is an error the agent reads, not a path quietly held at the root
(which would make the agent believe it wrote somewhere it did not)."""

from __future__ import annotations

from agentfs.core import paths
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError


def resolve(ctx: Context, raw: str, *, write: bool = False) -> str:
    """The workspace path ``raw`` names, once the policy accepts it: relative to the root,
    ``.`` and ``..`` resolved; a ``..`` that would climb above the root is refused."""
    if raw == "":
        raise ToolError("invalid_path", "the path is empty; give a workspace path such as /a.txt")
    if paths.climbs_above_root(raw):
        raise ToolError(
            "invalid_path",
            f"{raw}: '..' climbs above the workspace root; every path stays inside the"
            " workspace (/a.txt or a.txt is a file at its root)",
        )
    return ctx.path(raw, write=write)
