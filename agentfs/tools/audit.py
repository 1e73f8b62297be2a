"""The audit: every tool call becomes a row of the spec's ``tool_calls``, and every version a
call wrote a row of ``ws_tool_write`` pointing at it.

A changing call stages its row in its own transaction (one small append), so the change and
its log row commit together; a call that changes nothing keeps its row in memory. Both are
published into ``tool_calls`` in batches (``ToolCallLog.publish``), so a crash may lose the
last second of read-only calls' rows, never a change's (docs/schema.md, "tool_calls semantics").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError, to_json

from agentfs.core.errors import InvalidValueError
from agentfs.toolcalls import CallRecord, StoredCall, json_text
from agentfs.tools.errors import ToolError

if TYPE_CHECKING:
    from agentfs.protocol import WorkspaceAPI

#: A value (a call's arguments, its result) whose JSON is at most this long is logged whole;
#: a longer one is cut as the limits below say.
WHOLE_BYTES = 1024
#: Strings longer than this are cut in the log.
STRING_LIMIT = 4096
#: Characters of a file's text kept in the log (the version keeps all of it).
CONTENT_LIMIT = 256
#: Items of a list kept in the log (a listing of 500 entries is summarised, not copied).
LIST_LIMIT = 50
#: Read-only calls' rows waiting in memory at most.
BATCH = 256
#: Seconds a read-only call's row may wait.
MAX_DELAY = 1.0
#: Changing calls' rows staged at most (they are durable: only the staged table's size
#: bounds them).
STAGED_BATCH = 1024


class AuditLog:
    """The log of one ``Toolset`` (see the module docstring)."""

    def __init__(self, ws: WorkspaceAPI) -> None:
        self.ws = ws
        self._readonly = ws.readonly  # a handle's mode never changes
        self._log = ws.tool_calls
        self._waiting = self._log.waiting  # the handle's: its close publishes what waits
        self._staged = 0  # rows this log staged since its last publish

    def record(
        self,
        name: str,
        arguments: dict[str, Any],
        result: dict[str, Any] | None,
        error: ToolError | None,
        started: float,
        writes: list[tuple[str, int]] | None = None,
        who: tuple[str | None, str | None] = (None, None),
    ) -> None:
        """Log one call. ``writes`` (even empty) means the caller holds the call's write
        transaction: the row is staged in it. Otherwise the row waits in memory. ``who``: the
        thread and actor that made it.

        The common case is one flat path: each tool call runs with its code evicted from the caches
        by SQLite's, so Python costs more here than its work does (docs/mcp.md).
        """
        if self._readonly:
            return  # a read-only handle writes nothing, the audit included
        error_text = None if error is None else json_text(error.as_dict())
        completed = max(time.time(), started)
        parameters: str | None
        try:
            parameters = _logged(arguments)
            logged_result = None if result is None else _logged(result)
        except PydanticSerializationError:
            row = _escaped(name, arguments, result, error_text, started, completed)
            name, parameters, logged_result = row.name, row.parameters, row.result
        thread, actor = who
        if writes is None:
            self._waiting.append(
                StoredCall(
                    name, parameters, logged_result, error_text, started, completed, thread, actor
                )
            )
        else:
            self._log.stage(
                name, parameters, logged_result, error_text, started, completed, writes, *who
            )
            self._staged += 1
        if (
            len(self._waiting) >= BATCH
            or self._staged >= STAGED_BATCH
            or (self._waiting and completed - self._waiting[0].started_at > MAX_DELAY)
        ):
            self.flush()

    def flush(self) -> None:
        """Move every pending row into ``tool_calls`` now (staged ones left by another
        process too)."""
        if self._readonly or not (self._waiting or self._staged):
            return
        with self.ws.transaction():
            self._log.publish_waiting()
        self._staged = 0


def _escaped(
    name: str, arguments: Any, result: Any, error: str | None, started: float, completed: float
) -> StoredCall:
    """The call's row when pydantic's encoder cannot write a value (a lone surrogate a client
    sent, an object JSON has no form for): ``CallRecord.stored`` escapes what it can and
    otherwise logs a note, so one call's odd value never stops the others' rows."""
    cut = None if result is None else _cut(result)
    call = CallRecord(name, _cut(arguments), cut, error, started, completed)
    try:
        return call.stored()
    except InvalidValueError as exc:
        note = {"unlogged": str(exc)}
        return call._replace(parameters=note, result=None if call.result is None else note).stored()


def _logged(value: dict[str, Any]) -> str:
    """``value``'s JSON text for the log, made now, by pydantic's encoder (a NaN as "NaN").

    A top-level ``content`` (a file's text, which the version keeps whole) is cut to
    ``CONTENT_LIMIT`` characters; a JSON text over ``WHOLE_BYTES`` is cut further by ``_cut``.
    """
    content = value.get("content")
    text_cut = None
    if content.__class__ is str and len(content) > CONTENT_LIMIT:
        text_cut = _CUT_TEXT.format(content[:CONTENT_LIMIT], len(content) - CONTENT_LIMIT)
        value = {**value, "content": text_cut}
    text = to_json(value, inf_nan_mode="strings")
    if len(text) <= WHOLE_BYTES:
        return text.decode()
    cut = _cut(value)
    if text_cut is not None:
        cut["content"] = text_cut
    return to_json(cut, inf_nan_mode="strings").decode()


#: A string cut to its first characters (the first field), and how many more it had.
_CUT_TEXT = "{}...[{:,} more chars]"


def _cut(value: Any, limit: int = STRING_LIMIT) -> Any:
    """A copy of ``value`` with long strings and long lists cut, so the log stays small. A
    file's text (``content``: what a write wrote, what a read showed) is kept by the version
    the call wrote or read, so only its first ``CONTENT_LIMIT`` characters are copied into
    the row. Used on values over ``WHOLE_BYTES`` of JSON (``_logged``), and on those
    pydantic cannot encode (``_escaped``)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return _CUT_TEXT.format(value[:limit], len(value) - limit)
    if isinstance(value, dict):
        return {
            key: _cut(item, CONTENT_LIMIT if key == "content" else limit)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        kept = [_cut(item, limit) for item in value[:LIST_LIMIT]]
        if len(value) > LIST_LIMIT:
            kept.append(f"...[{len(value) - LIST_LIMIT:,} more]")
        return kept
    return value
