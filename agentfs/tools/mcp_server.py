"""The MCP server: a ``Toolset`` over stdio with the official ``mcp`` SDK's low-level server.

Every tool is listed with its input and output schemas and annotations; aliases are callable
though not listed. Calls run one at a time on the event loop's thread (the workspace is one
connection with caches of its own), plain ones answered at the transport (``mcp_direct``), a
call that needs approval put to the user by elicitation or else denied; idle time publishes
the audit rows and drains the index queue, and ``--sync-on-snapshot`` pushes after each
snapshot (docs/mcp.md).
"""

from __future__ import annotations

import json
import os
import time
from contextlib import ExitStack
from typing import Any, Protocol

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server

from agentfs.tools.export import json_schema, mcp_output_schema
from agentfs.tools.mcp_direct import DirectCalls
from agentfs.tools.mcp_stdio import serve_streams
from agentfs.tools.pusher import Pusher, took_snapshot
from agentfs.tools.spec import Tool
from agentfs.tools.toolset import Toolset

#: Seconds without a call after which waiting audit rows are written.
IDLE_FLUSH = 0.5

_APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Let the agent run this tool call",
        }
    },
    "required": ["approve"],
}


def mcp_tool(spec: Tool) -> types.Tool:
    """The MCP definition of one tool."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=json_schema(spec.input),
        output_schema=mcp_output_schema(spec.output),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=not spec.mutates,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )


#: What the server tells the client about itself, unless told other words.
INSTRUCTIONS = (
    "A workspace of files kept in one SQLite file, with every version of every file,"
    " snapshots and search. Read a file before editing it; use grep for exact text and"
    " workspace_search for questions in words."
)


class Toolsets(Protocol):
    """The toolset each request is served by (a client session's own, over HTTP)."""

    def of(self, ctx: ServerRequestContext[Any]) -> Toolset: ...

    def all(self) -> list[Toolset]: ...


class McpServer:
    """``toolset`` served over MCP (see the module docstring)."""

    def __init__(
        self,
        toolset: Toolset,
        name: str = "agentfs",
        *,
        pusher: Pusher | None = None,
        direct: bool = True,
        instructions: str | None = None,
        toolsets: Toolsets | None = None,
    ) -> None:
        self.toolset = toolset
        #: The toolset each request is served by, when it is not always ``toolset`` (over
        #: HTTP, each client session has its own: ``agentfs.serve.mcp_http``).
        self.toolsets = toolsets
        self.pusher = pusher
        self.direct = direct
        self._last_call = time.monotonic()
        self.server: Server[Any] = Server(
            name,
            version=_version(),
            instructions=instructions or INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    def _toolset_of(self, ctx: ServerRequestContext[Any]) -> Toolset:
        return self.toolset if self.toolsets is None else self.toolsets.of(ctx)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = self._toolset_of(ctx).tools()
        return types.ListToolsResult(tools=[mcp_tool(spec) for spec in tools])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        toolset = self._toolset_of(ctx)
        granted = True
        if toolset.needs_approval(params.name):
            self._last_call = time.monotonic()  # not idle while the user is asked
            granted = await self._ask(ctx, params.name, params.arguments or {})
        return self._run(toolset, params, granted)

    def answer_directly(
        self, params: types.CallToolRequestParams, toolset: Toolset | None = None
    ) -> types.CallToolResult | None:
        """A call the transport may answer itself (``mcp_direct``): any but one to approve
        (the user is asked through the SDK). ``toolset``: the one of the caller's session."""
        toolset = self.toolset if toolset is None else toolset
        if toolset.needs_approval(params.name):
            return None
        return self._run(toolset, params, True)

    def _run(
        self, toolset: Toolset, params: types.CallToolRequestParams, granted: bool
    ) -> types.CallToolResult:
        self._last_call = time.monotonic()  # not idle: idle work waits
        arguments = params.arguments or {}
        result = toolset.invoke(params.name, arguments, approve=lambda _request: granted)
        self._last_call = time.monotonic()
        if self.pusher is not None and took_snapshot(result.tool, result.data):
            toolset.flush()  # the calls' log rows travel with the push
            self.pusher.request()
        if result.is_error:
            return types.CallToolResult(
                content=[types.TextContent(text=result.text)], is_error=True
            )
        return types.CallToolResult.model_construct(  # the tool's own JSON: not walked again
            content=[types.TextContent(text=result.text)], structured_content=result.data
        )

    async def _ask(self, ctx: ServerRequestContext[Any], tool: str, arguments: dict) -> bool:
        """Put the call to the user; False when the client cannot be asked or says no."""
        session = ctx.session
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.elicitation is None or not session.can_send_request:
            return False
        shown = json.dumps(arguments, ensure_ascii=False, indent=1)
        if len(shown) > 2000:
            shown = shown[:2000] + "\n..."
        message = f"The agent wants to run {tool} with:\n{shown}\nAllow it?"
        try:
            answer = await session.elicit_form(
                message=message,
                requested_schema=_APPROVAL_SCHEMA,  # type: ignore[arg-type]
                related_request_id=ctx.request_id,
            )
        except Exception:  # a client that fails to answer has not approved
            return False
        return answer.action == "accept" and bool((answer.content or {}).get("approve"))

    async def run_stdio(self) -> None:
        """Serve on stdin/stdout until the client closes them."""
        direct = DirectCalls(self.answer_directly) if self.direct else None
        async with serve_streams(direct) as (read, write), anyio.create_task_group() as tasks:
            tasks.start_soon(self.flush_when_idle)
            try:
                await self.server.run(read, write, self.server.create_initialization_options())
            finally:
                tasks.cancel_scope.cancel()
                self.flush()

    def flush(self) -> None:
        """Write every toolset's waiting audit rows."""
        for toolset in [self.toolset] if self.toolsets is None else self.toolsets.all():
            toolset.flush()

    async def flush_when_idle(self) -> None:
        """Forever: once no call came for ``IDLE_FLUSH`` seconds, write the waiting audit
        rows and drain the search index's queue a batch at a time."""
        ws = self.toolset.ws
        while True:
            await anyio.sleep(IDLE_FLUSH)
            if not self._idle():
                continue
            self.flush()
            while self._idle() and ws.refresh_index(batches=1):  # 0 on a read-only handle
                await anyio.sleep(0)  # a call that came in meanwhile goes first

    def _idle(self) -> bool:
        return time.monotonic() - self._last_call >= IDLE_FLUSH


def serve_stdio(
    toolset: Toolset, *, sync_on_snapshot: bool = False, instructions: str | None = None
) -> None:
    """Run the MCP server on stdio (blocking), with the background embedder when the
    workspace has vectors, and with ``sync_on_snapshot`` a push after each snapshot (the
    last one is waited for before returning). ``instructions``: what the client is told
    about the server (its system-prompt text), if not agentfs's usual words."""
    pusher = Pusher(toolset.ws.path) if sync_on_snapshot else None
    with ExitStack() as stack:
        ws = toolset.ws
        if not ws.readonly and ws.embedder() is not None:
            stack.enter_context(ws.embed_in_background())
        direct = os.environ.get("AGENTFS_MCP_DIRECT", "1") != "0"
        server = McpServer(toolset, pusher=pusher, direct=direct, instructions=instructions)
        anyio.run(server.run_stdio)
    if pusher is not None:
        pusher.wait()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentfs-workspace")
    except PackageNotFoundError:
        return "0"
