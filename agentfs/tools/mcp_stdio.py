"""stdin/stdout for the MCP server as event-loop pipes, not thread-wrapped files.

The SDK's ``stdio_server()`` hops to a worker thread for every line read and every write,
most of a small call's round trip (docs/mcp.md); when stdin and stdout are pipes or sockets we
hand it streams the event loop reads and writes itself, else the SDK's own are used. As in the
SDK, fd 0 and fd 1 are moved aside while serving, so a stray ``print`` cannot corrupt the
protocol.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.stdio import stdio_server

from agentfs.tools.mcp_direct import DirectCalls

#: Longest protocol line read (a write_file call carries the whole file in one line).
MAX_LINE = 1 << 30


class _Lines:
    """What the SDK iterates for incoming messages: decoded lines from a pipe, less those
    ``direct`` answers itself (written straight to ``writer``)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: _Writer, direct: DirectCalls | None
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._direct = direct

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._reader.readline()
            if not line:
                raise StopAsyncIteration
            text = line.decode("utf-8", errors="replace")
            answer = self._direct.take(text) if self._direct is not None else None
            if answer is None:
                return text
            await self._writer.write(answer)
            await self._writer.flush()


class _Writer:
    """What the SDK writes outgoing messages to: a pipe, drained at each flush."""

    def __init__(self, writer: asyncio.StreamWriter, direct: DirectCalls | None) -> None:
        self._writer = writer
        self._direct = direct

    async def write(self, text: str) -> None:
        if self._direct is not None and not self._direct.active:
            self._direct.outgoing(text)
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _is_pipe(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def serve_streams(direct: DirectCalls | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) message streams of ``mcp.server.stdio.stdio_server``, on loop pipes
    when stdin and stdout are pipes (see the module docstring), with ``direct`` answering
    the tool calls it can before the SDK sees them. Otherwise (a terminal, a file) the SDK's
    own transport serves, and every call goes through the SDK."""
    if not (_is_pipe(0) and _is_pipe(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)  # the protocol's: the transports own and close them
    saved_in, saved_out = os.dup(0), os.dup(1)  # to put fd 0 and fd 1 back afterwards
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=MAX_LINE)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        transports.append(write_transport)
        writer = _Writer(asyncio.StreamWriter(write_transport, protocol, None, loop), direct)
        async with stdio_server(_Lines(reader, writer, direct), writer) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        for transport in transports:
            transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
