"""Tool calls answered at the transport: the hot request skips the SDK's generic pipeline.

The ``mcp`` SDK's per-request pipeline is most of a small call's round trip (docs/mcp.md,
"Behaviour of a long-running server"). ``DirectCalls`` answers a line itself only when it is a
plain ``tools/call`` the SDK's own models accept, on a connection that negotiated one of
``DIRECT_VERSIONS`` and needing no approval, with the same ``CallToolResult`` the SDK would
write; every other line, and any line in doubt, goes to the SDK unchanged, so the SDK keeps the
protocol. It opens no OpenTelemetry span: ``AGENTFS_MCP_DIRECT=0`` turns it off.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import mcp_types as types
from pydantic import ValidationError
from pydantic_core import from_json

log = logging.getLogger(__name__)

#: Protocol versions whose tools/call result is written here: older ones have no structured
#: content, and the 2026 envelope stamps results.
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
        if not self.active:
            return None
        answer = answer_call(line, self._answer)
        return None if answer is None else answer + "\n"


def answer_call(text: str, answer: Answer) -> str | None:
    """The JSON-RPC response to ``text`` when it is one plain ``tools/call`` that ``answer``
    takes (see the module docstring), else None: the message goes to the SDK. The caller
    checks the connection's protocol version (``DIRECT_VERSIONS``)."""
    if '"tools/call"' not in text:
        return None
    try:
        message = from_json(text)  # the SDK's parser: what it refuses is refused here too
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
        result = answer(params)
        if result is None:
            return None
        body = result.model_dump_json(by_alias=True, exclude_none=True, exclude={"result_type"})
    except Exception as exc:  # the tool ran: answer, as the SDK's dispatcher does
        log.exception("tools/call %s failed", params.name)
        error = json.dumps({"code": 0, "message": str(exc)})
        return f'{{"jsonrpc":"2.0","id":{request_id},"error":{error}}}'
    return f'{{"jsonrpc":"2.0","id":{request_id},"result":{body}}}'
