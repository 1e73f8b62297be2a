"""The audit: every tool call becomes a row of the spec's ``tool_calls``, and every version a
call wrote a row of ``ws_tool_write`` pointing at it.

A call that changes the workspace is logged inside its own transaction, so the change and
its log row commit together or not at all. A call that changes no file (a listing, a search,
a read, whose only write is its read-tracking record, a refused call) would pay for its log
row in its own commit, a large part of the call's cost; those rows wait in memory and are
written in one transaction with the next changing call, when ``BATCH`` of them wait, when the
oldest is ``MAX_DELAY`` seconds old, or at ``flush()``. A crash may lose the last second of
such calls' rows, never a change's.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from agentfs.toolcalls import CallRecord
from agentfs.tools.errors import ToolError

if TYPE_CHECKING:
    from agentfs.layered import AnyWorkspace

#: Strings longer than this are cut in the log (the content itself is in the versions).
STRING_LIMIT = 4096
#: Items of a list kept in the log (a listing of 500 entries is summarised, not copied).
LIST_LIMIT = 50
#: Read-only calls logged together at most.
BATCH = 64
#: Seconds a read-only call's row may wait.
MAX_DELAY = 1.0

_SCALARS = (int, float, bool, type(None))


class AuditLog:
    """The log of one ``Toolset`` (see the module docstring)."""

    def __init__(self, ws: AnyWorkspace) -> None:
        self.ws = ws
        self._waiting: list[CallRecord] = []

    def record(
        self,
        name: str,
        arguments: dict[str, Any],
        result: dict[str, Any] | None,
        error: ToolError | None,
        started: float,
        writes: list[tuple[str, int]] | None = None,
    ) -> int | None:
        """Log one call. ``writes`` (even empty) means the caller holds the call's write
        transaction: the row is written now, after every waiting one, and its id returned.
        Otherwise the row waits (None is returned)."""
        if self.ws.readonly:
            return None  # a read-only handle writes nothing, the audit included
        row = CallRecord(
            name,
            _cut(arguments),
            None if result is None else _cut(result),
            None if error is None else json.dumps(error.as_dict(), ensure_ascii=False),
            started,
            time.time(),
        )
        if writes is None:
            self._waiting.append(row)
            oldest = self._waiting[0].started_at
            if len(self._waiting) >= BATCH or row.completed_at - oldest > MAX_DELAY:
                self.flush()
            return None
        self._write_waiting()
        return self._write(row, writes)

    def flush(self) -> None:
        """Write every waiting row now."""
        if self._waiting and not self.ws.readonly:
            with self.ws.transaction():
                self._write_waiting()

    def _write_waiting(self) -> None:
        if self._waiting:
            self.ws.tool_calls.record_many(self._waiting)
            self._waiting.clear()

    def _write(self, row: CallRecord, writes: list[tuple[str, int]]) -> int:
        return self.ws.tool_calls.record(
            row.name,
            row.parameters,
            result=row.result,
            error=row.error,
            started_at=row.started_at,
            completed_at=row.completed_at,
            writes=writes,
        )


def _cut(value: Any) -> Any:
    """``value`` with long strings and long lists cut, so the log stays small: a file's
    content is kept by the versions the call links to, not copied into every log row."""
    if isinstance(value, str):
        if len(value) <= STRING_LIMIT:
            return value
        return value[:STRING_LIMIT] + f"...[{len(value) - STRING_LIMIT:,} more chars]"
    if isinstance(value, dict):
        if all(
            isinstance(v, _SCALARS) or (isinstance(v, str) and len(v) <= STRING_LIMIT)
            for v in value.values()
        ):
            return value  # the common case: nothing to cut, nothing to copy
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) <= LIST_LIMIT:
            return [_cut(v) for v in value]
        return [_cut(v) for v in value[:LIST_LIMIT]] + [f"...[{len(value) - LIST_LIMIT:,} more]"]
    return value
