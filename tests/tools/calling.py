"""Calling a tool in a test: its structured result and text, or its error's code and message;
or serving a profile to the ``mcp`` SDK's client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from agentfs.tools import Toolset, catalog
from tests.clirun import AGENTFS

#: The tools a ``Toolset`` offers over a workspace without a base directory (the usual one).
PLAIN = [spec for spec in catalog.all_tools() if not spec.needs_base]


def call(tools: Toolset, name: str, **args: Any) -> tuple[dict[str, Any], str]:
    """A call expected to succeed: its structured result and the text a model reads."""
    result = tools.invoke(name, args)
    assert result.error is None, result.text
    return result.data, result.text


def error(tools: Toolset, name: str, **args: Any) -> tuple[str, str]:
    """A call expected to fail: its error's code and message."""
    result = tools.invoke(name, args)
    assert result.error is not None, result.data
    return result.error.code, result.error.message


@asynccontextmanager
async def served(
    db: Path | None, profile: str, extra: Sequence[str] = ()
) -> AsyncIterator[ClientSession]:
    """A session of the ``mcp`` SDK's own client with ``agentfs serve mcp DB --profile
    PROFILE EXTRA...`` (no ``DB`` when it is None), initialized. Bound its time where it is
    used (``anyio.fail_after``)."""
    workspace = [] if db is None else [str(db)]
    params = StdioServerParameters(
        command=str(AGENTFS), args=["serve", "mcp", *workspace, "--profile", profile, *extra]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session
