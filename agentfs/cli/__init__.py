"""The ``agentfs`` command line: thin click commands over the Python API.

Every command names the workspace file first (``agentfs cat WS.db /notes.txt``; for the
key-value store, ``agentfs kv WS.db get KEY``), makes one library call and prints the result
through ``render``: lines for people, ``--json`` for programs. The logic lives in the library.

Exit status: 0 on success; 1 for a user error (printed as one line, ``agentfs: <reason>``, on
stderr) and when ``fsck`` finds problems; 2 for a usage error (click's default). User errors
are converted in exactly one place, ``AgentFSGroup.invoke`` (``agentfs.cli.base``).

Each module of this package registers its commands on the group of ``agentfs.cli.base``;
this one imports them all and is the console script's entry point. They import ``base`` and
nothing of each other.
"""

from __future__ import annotations

from agentfs.cli import files, history, mount, search, serve, sync, tools  # noqa: F401
from agentfs.cli.base import cli

__all__ = ["cli", "main"]


def main() -> None:
    """Console-script entry point (``agentfs``)."""
    cli(prog_name="agentfs")
