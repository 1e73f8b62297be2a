"""The spec's tool-call log: an insert-only audit trail of what an agent's tools did."""

from __future__ import annotations

import builtins
import json
import time
from dataclasses import dataclass
from typing import Any

import apsw

from agentfs.db import write_transaction
from agentfs.errors import InvalidValueError

_COLUMNS = "id, name, parameters, result, error, started_at, completed_at, duration_ms"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One logged call; ``parameters`` and ``result`` are decoded JSON."""

    id: int
    name: str
    parameters: Any
    result: Any
    error: str | None
    started_at: int
    completed_at: int
    duration_ms: int

    @classmethod
    def from_row(cls, row: tuple) -> ToolCall:
        id_, name, params, result, error, started, completed, duration = row
        return cls(id_, name, _loads(params), _loads(result), error, started, completed, duration)

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class ToolStats:
    """Per-tool totals, as the spec's "Analyze Tool Performance" query defines them."""

    name: str
    total_calls: int
    successful: int
    failed: int
    avg_duration_ms: float

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


class ToolCallLog:
    """``tool_calls`` of one workspace. Rows are never updated or deleted."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        # agentfs-sdk's own table has a ``status`` column ('pending'/'success'/'error',
        # default 'pending') that the spec does not; a finished call must not read as pending.
        columns = {row[1] for row in conn.execute("PRAGMA table_info(tool_calls)")}
        self._status_column = "status" in columns

    def record(
        self,
        name: str,
        parameters: Any = None,
        *,
        result: Any = None,
        error: str | None = None,
        started_at: float,
        completed_at: float | None = None,
    ) -> int:
        """Log a finished call (times in epoch seconds, floats welcome); returns its id.

        Exactly one of ``result`` and ``error`` describes the outcome (the spec's rule 1): a
        call with an error stores no result. ``duration_ms`` is measured from the float times,
        so it agrees with the whole-second columns to within their rounding (rule 3).
        """
        completed_at = time.time() if completed_at is None else completed_at
        if completed_at < started_at:
            raise InvalidValueError("completed_at is before started_at")
        values: tuple[object, ...] = (
            name,
            _dumps(parameters),
            None if error is not None else _dumps(result),
            error,
            int(started_at),
            int(completed_at),
            round((completed_at - started_at) * 1000),
        )
        columns = "name, parameters, result, error, started_at, completed_at, duration_ms"
        if self._status_column:
            columns += ", status"
            values += ("error" if error is not None else "success",)
        marks = ", ".join("?" * len(values))
        with write_transaction(self.conn):
            return self.conn.execute(
                f"INSERT INTO tool_calls({columns}) VALUES ({marks}) RETURNING id", values
            ).get

    def list(
        self, *, name: str | None = None, since: int | None = None, limit: int | None = None
    ) -> list[ToolCall]:
        """Calls, newest first; filtered by tool name and/or start time (epoch seconds)."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM tool_calls WHERE (?1 IS NULL OR name = ?1)"
            " AND (?2 IS NULL OR started_at > ?2) ORDER BY started_at DESC, id DESC LIMIT ?3",
            (name, since, -1 if limit is None else limit),
        )
        return [ToolCall.from_row(row) for row in rows]

    def stats(self) -> builtins.list[ToolStats]:
        rows = self.conn.execute(
            "SELECT name, count(*), sum(error IS NULL), sum(error IS NOT NULL), avg(duration_ms)"
            " FROM tool_calls GROUP BY name ORDER BY count(*) DESC, name"
        )
        return [ToolStats(*row) for row in rows]


def _dumps(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"tool-call value is not JSON-serialisable: {exc}") from None


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
