"""The ``agentfs`` command line: thin click commands over the Python API.

Each module of this package registers its commands on the group of ``agentfs.cli.base`` (whose
docstring gives the conventions: arguments, output, exit status); this one imports them all and
is the console script's entry point. They import ``base`` and nothing of each other.
"""

from __future__ import annotations

from agentfs.cli import files, history, mount, search, serve, sync, tools  # noqa: F401
from agentfs.cli.base import cli

__all__ = ["cli", "main"]


def main() -> None:
    """Console-script entry point (``agentfs``)."""
    cli(prog_name="agentfs")
