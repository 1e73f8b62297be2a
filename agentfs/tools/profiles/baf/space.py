"""One of baf's named workspaces: its settings (``Space``) and the ``Toolset`` that runs the
tools on it (``Member``), from which a tool learns the workspace's name and read cap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentfs.protocol import WorkspaceAPI
from agentfs.tools.toolset import Toolset

#: The name of a workspace that was given none (baf's default).
DEFAULT_NAME = "workspace"
#: Most bytes ``read_file`` returns of one file unless the workspace says otherwise.
DEFAULT_MAX_READ_BYTES = 200_000


@dataclass(frozen=True)
class Space:
    """A workspace as baf presents it to the model.

    Args:
        ws: the workspace.
        name: what the model passes as the tools' ``workspace`` argument; unique in a
            ``Workspaces``.
        description: what it holds, for the system prompt, so the model knows when to
            look in it.
        writable: False refuses the tools that change it (and they are not offered at all
            unless another workspace is writable).
        max_read_bytes: most bytes ``read_file`` returns; the rest is replaced by a marker.
    """

    ws: WorkspaceAPI
    name: str = DEFAULT_NAME
    description: str | None = None
    writable: bool = True
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES

    def __post_init__(self) -> None:
        if not self.name or not self.name.isprintable():
            raise ValueError(f"a workspace's name must be printable and not empty: {self.name!r}")
        if self.max_read_bytes < 1:
            raise ValueError(f"max_read_bytes must be at least 1, not {self.max_read_bytes}")


class Member(Toolset):
    """The toolset of one ``Space`` of a ``Workspaces``: the baf tools run on its workspace
    with its name and read cap, under the set's thread, actor and policy (read-only when the
    space is not writable). Its calls are logged in its own workspace."""

    def __init__(self, space: Space, **options: Any) -> None:
        super().__init__(space.ws, **options)
        self.space = space
