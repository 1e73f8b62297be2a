"""Tool calls answered at the transport: the hot request skips the SDK's generic pipeline.

A ``tools/call`` through the ``mcp`` SDK's low-level server crosses a memory stream, a task
spawned for it, a middleware chain, a surface validation of the params, the handler, and
three passes over the result (dump, validate against the protocol version's surface, dump
again) before it is written: most of a small call's round trip, several times the tool's own
work (docs/mcp.md, "What a call costs", has the figures).

``DirectCalls`` sits between the pipe and the SDK. Each incoming line it can answer is
answered on the spot; every other line, and every line it has any doubt about, goes to the
SDK unchanged, so the SDK still owns the protocol: the handshake and its negotiation, the
tool list, errors, notifications, cancellation, elicitation. A line is answered here only
when all of these hold:

* the SDK has answered ``initialize`` (seen on the way out) with a protocol version whose
  ``CallToolResult`` shape is the one written here (``DIRECT_VERSIONS``: 2025-06-18 and
  2025-11-25; older versions have no structured content, the 2026 envelope stamps results);
* the line is a JSON-RPC request for ``tools/call`` that pydantic's JSON parser (the SDK's)
  reads, without the 2026 protocol-version envelope in its ``_meta`` (which the SDK refuses
  on a handshake connection), and whose params the SDK's own ``CallToolRequestParams`` model
  accepts;
* the server's ``answer`` takes it (a call that needs the user's approval is not: asking
  needs the SDK's request machinery).

The result is the same ``CallToolResult`` model the SDK would have been handed, dumped the
way the SDK dumps it, so the client sees the same JSON either way (tests/tools compare
the two paths message by message); an exception while answering becomes the JSON-RPC error
the SDK's dispatcher makes of one (code 0, the message), and the server goes on. What the
direct path does not do: open an OpenTelemetry span per call (the SDK's middleware does; a
server started under ``opentelemetry-instrument`` can turn the direct path off with
``AGENTFS_MCP_DIRECT=0``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import mcp_types as types
from pydantic import ValidationError
from pydantic_core import from_json

log = logging.getLogger(__name__)

#: Protocol versions whose tools/call result is written here (see the module docstring).
DIRECT_VERSIONS = frozenset({"2025-06-18", "2025-11-25"})

Answer = Callable[[types.CallToolRequestParams], "types.CallToolResult | None"]


class DirectCalls:
    """Answers the ``tools/call`` lines it can (see the module docstring)."""

    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._version: str | None = None  # negotiated protocol version, once answered

    @property
    def active(self) -> bool:
        return self._version in DIRECT_VERSIONS

    def outgoing(self, text: str) -> None:
        """Watch what the SDK writes until it has answered ``initialize``."""
        if self._version is None and '"protocolVersion"' in text:
            try:
                message = json.loads(text)
                version = message["result"]["protocolVersion"]
                message["result"]["serverInfo"]  # an InitializeResult, not a tool's output
            except (ValueError, KeyError, TypeError):
                return
            self._version = version if isinstance(version, str) else None

    def take(self, line: str) -> str | None:
        """The response line to ``line`` when it is answered here, else None (the line
        goes to the SDK)."""
        if not self.active or '"tools/call"' not in line:
            return None
        try:
            message = from_json(line)  # the SDK's parser: what it refuses is refused here too
        except ValueError:
            return None
        if not (
            isinstance(message, dict)
            and message.get("jsonrpc") == "2.0"
            and message.get("method") == "tools/call"
            and isinstance(message.get("id"), (int, str))
            and not isinstance(message.get("id"), bool)
        ):
            return None
        raw = message.get("params") or {}
        if isinstance(raw, dict) and types.PROTOCOL_VERSION_META_KEY in (raw.get("_meta") or {}):
            return None  # a 2026 envelope on a handshake connection: the SDK refuses it
        try:
            params = types.CallToolRequestParams.model_validate(raw, by_name=False)
        except ValidationError:
            return None
        request_id = json.dumps(message["id"], ensure_ascii=False)
        try:
            result = self._answer(params)
            if result is None:
                return None
            body = result.model_dump_json(by_alias=True, exclude_none=True, exclude={"result_type"})
        except Exception as exc:  # the tool ran: answer, as the SDK's dispatcher does
            log.exception("tools/call %s failed", params.name)
            error = json.dumps({"code": 0, "message": str(exc)})
            return f'{{"jsonrpc":"2.0","id":{request_id},"error":{error}}}\n'
        return f'{{"jsonrpc":"2.0","id":{request_id},"result":{body}}}\n'
