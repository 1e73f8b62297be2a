"""Running ``agentfs`` in-process for the CLI tests, the installed script for the tests that
need a real process, and the shape of a user error."""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner, Result

from agentfs.cli import cli

#: The installed ``agentfs`` script of this environment: what a user or an MCP client starts.
AGENTFS = Path(sys.executable).parent / "agentfs"


def run(*args: object, input: bytes | str | None = None, thread: str | None = None) -> Result:
    """``agentfs ARGS...`` in-process, with ``AGENTFS_THREAD`` set to ``thread`` (or unset)."""
    return CliRunner().invoke(
        cli, [str(a) for a in args], input=input, env={"AGENTFS_THREAD": thread}
    )


def ok(*args: object, input: bytes | str | None = None, thread: str | None = None) -> Result:
    """``agentfs ARGS...`` that must succeed."""
    result = run(*args, input=input, thread=thread)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def assert_user_error(result: Result, *fragments: str) -> None:
    """Exit 1, one ``agentfs: ...`` line on stderr naming ``fragments``, no traceback."""
    assert result.exit_code == 1, (result.stdout, result.stderr, result.exception)
    assert result.stderr.startswith("agentfs: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for fragment in fragments:
        assert fragment in result.stderr
