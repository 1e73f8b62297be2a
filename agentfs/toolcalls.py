"""The spec's tool-call log: an insert-only audit trail of what an agent's tools did."""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import apsw
from pydantic_core import to_json

from agentfs.core.errors import InvalidValueError
from agentfs.db import INT_MAX, table_columns, write_transaction

_COLUMNS = "id, name, parameters, result, error, started_at, completed_at, duration_ms"
#: The order in which ``publish`` moves staged rows: the calls' start, then staging. The
#: calls' insert and the links' numbering must agree on it, or a link names another call.
_START_ORDER = "started_at, id"
_PREFIXED = ", ".join(f"t.{column}" for column in _COLUMNS.split(", ")) + ", w.thread, w.actor"
#: Who made each call, joined to ``tool_calls t`` (a call logged with neither has no row).
_WHO = "LEFT JOIN ws_tool_call_who w ON w.call_id = t.id"


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
    thread: str | None = None
    actor: str | None = None

    @classmethod
    def from_row(cls, row: tuple) -> ToolCall:
        id_, name, params, result, error, started, completed, duration, thread, actor = row
        return cls(
            id_,
            name,
            _loads(params),
            _loads(result),
            error,
            started,
            completed,
            duration,
            thread,
            actor,
        )

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


class CallRecord(NamedTuple):
    """A finished call to log (times in epoch seconds)."""

    name: str
    parameters: Any
    result: Any
    error: str | None
    started_at: float
    completed_at: float

    def stored(self) -> StoredCall:
        """The call as it is stored: its JSON as text, made now (so later changes to the
        values are not logged), no result when it failed (rule 1)."""
        if self.completed_at < self.started_at:
            raise InvalidValueError("completed_at is before started_at")
        return StoredCall(
            self.name,
            json_text(self.parameters),
            None if self.error is not None else json_text(self.result),
            self.error,
            self.started_at,
            self.completed_at,
        )


class StoredCall(NamedTuple):
    """A finished call with its parameters and result as JSON text, ready to be written,
    and who made it (``ws_tool_call_who``)."""

    name: str
    parameters: str | None
    result: str | None
    error: str | None
    started_at: float
    completed_at: float
    thread: str | None = None
    actor: str | None = None


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
        self._status_column = "status" in table_columns(conn, "tool_calls")
        self._readonly = conn.readonly("main")
        columns_in = "name, parameters, result, error, started_at, completed_at, duration_ms"
        params, status = "?, ?, ?, ?, ?, ?, ?", ""
        if self._status_column:
            columns_in += ", status"
            params += ", ?"
            status = ", CASE WHEN error IS NULL THEN 'success' ELSE 'error' END"
        #: The rows of calls that changed nothing, waiting to be published with the next
        #: batch (``agentfs.tools.audit``): one list for every ``Toolset`` over this handle,
        #: so ``close`` publishes them all, a dropped toolset's included.
        self.waiting: builtins.list[StoredCall] = []
        #: One row in (``_with_status``'s values), giving its id.
        self._insert = f"INSERT INTO tool_calls({columns_in}) VALUES ({params}) RETURNING id"
        #: Every staged row in, in the order the calls started: whole-second times, the
        #: duration from the fractional ones rounded half up (as ``_spec_row``), ``status``
        #: where agentfs-sdk's table has it.
        self._publish_calls = (
            f"INSERT INTO tool_calls({columns_in}) SELECT name, parameters, result, error,"
            " CAST(started_at AS INTEGER), CAST(completed_at AS INTEGER),"
            f" CAST(round((completed_at - started_at) * 1000) AS INTEGER){status}"
            f" FROM ws_tool_call_staged ORDER BY {_START_ORDER}"
        )

    def close(self) -> None:
        """Publish the rows still waiting in memory (``waiting``)."""
        if self.waiting and not self._readonly:
            self.publish_waiting()

    def publish_waiting(self) -> None:
        """``publish`` the waiting rows, in their own transaction; rows a call adds while
        it runs wait for the next one."""
        rows = self.waiting[:]
        self.publish(rows)
        del self.waiting[: len(rows)]

    def record(
        self,
        name: str,
        parameters: Any = None,
        *,
        result: Any = None,
        error: str | None = None,
        started_at: float,
        completed_at: float | None = None,
        writes: Iterable[tuple[str, int]] = (),
        thread: str | None = None,
        actor: str | None = None,
    ) -> int:
        """Log a finished call (times in epoch seconds, floats welcome); returns its id.

        Exactly one of ``result`` and ``error`` describes the outcome (the spec's rule 1): a
        call with an error stores no result. ``duration_ms`` is measured from the float times,
        so it agrees with the whole-second columns to within their rounding (rule 3).
        ``writes``: the ``(path, version)`` pairs the call made, linked to it in
        ``ws_tool_write`` (call it inside the call's own transaction so both commit together).
        ``thread`` and ``actor``: who made it (``ws_tool_call_who``).
        """
        completed_at = time.time() if completed_at is None else completed_at
        call = CallRecord(name, parameters, result, error, started_at, completed_at)
        values = self._values(call)
        links = list(writes)
        with write_transaction(self.conn):
            call_id: int = self.conn.execute(self._insert, values).get
            if thread is not None or actor is not None:
                self.conn.execute(_RECORD_WHO, (call_id, thread, actor))
            if links:
                self.conn.executemany(
                    "INSERT OR IGNORE INTO ws_tool_write(call_id, path, n) VALUES (?, ?, ?)",
                    [(call_id, path, n) for path, n in links],
                )
            return call_id

    def stage(
        self,
        name: str,
        parameters: str | None,
        result: str | None,
        error: str | None,
        started_at: float,
        completed_at: float,
        writes: Sequence[tuple[str, int]],
        thread: str | None = None,
        actor: str | None = None,
    ) -> None:
        """Log a finished call that changed the workspace as a staged row, inside the caller's
        transaction, so the change and its row commit together; ``publish`` moves it later.
        ``thread`` and ``actor``: who made it.

        A staged row is one B-tree append instead of five (migrations 11 and 12); its values
        come one by one, as this runs on every changing tool call.
        """
        if not writes:
            path = n = None
            rest = "[]"
        else:
            path, n = writes[0]
            rest = "[]" if len(writes) == 1 else to_json(writes[1:]).decode()
        self.conn.execute(
            _STAGE,
            (
                name,
                parameters,
                result,
                error,
                started_at,
                completed_at,
                thread,
                actor,
                path,
                n,
                rest,
            ),
        )

    def publish(self, waiting: Iterable[StoredCall] = ()) -> None:
        """Move every staged row (any process's) and ``waiting`` (calls that wrote nothing) into
        ``tool_calls``, in the order the calls started, with their links; one transaction.

        Nothing to move costs one read and no lock; a staged row with malformed links goes in
        without them. Two ``INSERT ... SELECT`` statements move the rows, not a Python loop.
        """
        waiting = builtins.list(waiting)
        if not waiting and (self._readonly or not self._any_staged()):
            return
        with write_transaction(self.conn):
            linked = self._any_staged()  # asked under the lock: another process may stage
            if waiting:  # they join the staged rows and are moved with them, in start order
                self.conn.executemany(_STAGE, [(*call, None, None, "[]") for call in waiting])
            self.conn.execute(self._publish_calls)
            moved = self.conn.changes()
            # one statement's rows take consecutive ids (nothing else writes in between)
            first_id = self.conn.last_insert_rowid() - moved + 1
            self.conn.execute(_PUBLISH_WHO, (first_id,))
            if linked:  # waiting rows have no links: a batch of read-only calls skips these
                self.conn.execute(_PUBLISH_FIRST_LINKS, (first_id,))
                if self.conn.execute(_ANY_MORE_LINKS).get:  # seldom: most calls make one
                    self.conn.execute(_PUBLISH_MORE_LINKS, (first_id,))
            self.conn.execute("DELETE FROM ws_tool_call_staged")  # all: a truncation

    def _any_staged(self) -> bool:
        return bool(self.conn.execute("SELECT 1 FROM ws_tool_call_staged LIMIT 1").get)

    def staged(self) -> int:
        """How many staged rows wait to be published."""
        count: int = self.conn.execute("SELECT count(*) FROM ws_tool_call_staged").get
        return count

    def rows_after(self, after_id: int) -> builtins.list[tuple[Any, ...]]:
        """The stored rows with an id above ``after_id``, oldest first, as ``insert_rows``
        takes them: (id, name, parameters, result, error, started_at, completed_at,
        duration_ms) with the JSON columns as stored text (what sync carries)."""
        return self.conn.execute(
            f"SELECT {_COLUMNS} FROM tool_calls WHERE id > ? ORDER BY id", (after_id,)
        ).fetchall()

    def insert_rows(self, rows: Iterable[tuple[Any, ...]]) -> builtins.list[int]:
        """Store rows another copy of the workspace logged (as ``rows_after`` gives them,
        their ids ignored), unchanged; the new ids, in order."""
        ids = []
        with write_transaction(self.conn):
            for row in rows:
                values = self._with_status(tuple(row[1:]), row[4])  # row[4]: error
                ids.append(self.conn.execute(self._insert, values).get)
        return ids

    def callers(self, first_id: int, last_id: int) -> builtins.list[tuple[int, Any, Any]]:
        """(call id, thread, actor) of the calls from ``first_id`` to ``last_id`` that were
        made with a thread or an actor (what sync carries beside the calls)."""
        rows = self.conn.execute(
            "SELECT call_id, thread, actor FROM ws_tool_call_who WHERE call_id BETWEEN ? AND ?"
            " ORDER BY call_id",
            (first_id, last_id),
        )
        return [(int(call_id), thread, actor) for call_id, thread, actor in rows]  # type: ignore[arg-type]

    def add_callers(self, rows: Iterable[tuple[int, Any, Any]]) -> None:
        """Keep who made calls stored from another copy: (local call id, thread, actor)."""
        self.conn.executemany(_RECORD_WHO, rows)

    def _values(self, call: CallRecord) -> tuple[object, ...]:
        return self._with_status(_spec_row(call.stored()), call.error)

    def _with_status(self, values: tuple[object, ...], error: object) -> tuple[object, ...]:
        """``values`` for ``_insert``, with agentfs-sdk's ``status`` where the table has it."""
        if self._status_column:
            return (*values, "error" if error is not None else "success")
        return values

    def writes(self, call_id: int) -> builtins.list[tuple[str, int]]:
        """The ``(path, version)`` pairs call ``call_id`` wrote, by path."""
        return self.writes_of([call_id])[call_id]

    def writer(self, path: str, n: int) -> ToolCall | None:
        """The tool call that wrote version ``n`` of ``path`` (None: not a tool's write, or
        ``n`` no version number at all)."""
        if not 1 <= n <= INT_MAX:
            return None
        row = self.conn.execute(
            f"SELECT {_PREFIXED} FROM tool_calls t JOIN ws_tool_write x ON x.call_id = t.id"
            f" {_WHO} WHERE x.path = ? AND x.n = ?",
            (path, n),
        ).get
        return None if row is None else ToolCall.from_row(row)

    def list(
        self,
        *,
        name: str | None = None,
        since: int | None = None,
        limit: int | None = None,
        path: str | None = None,
    ) -> list[ToolCall]:
        """Calls, newest first; filtered by tool name, start time (epoch seconds) and the
        path they wrote a version of."""
        rows = self.conn.execute(
            f"SELECT {_PREFIXED} FROM tool_calls t {_WHO} WHERE (?1 IS NULL OR t.name = ?1)"
            " AND (?2 IS NULL OR t.started_at > ?2) AND (?4 IS NULL OR t.id IN"
            " (SELECT call_id FROM ws_tool_write WHERE path = ?4))"
            " ORDER BY t.started_at DESC, t.id DESC LIMIT ?3",
            (name, since, -1 if limit is None else limit, path),
        )
        return [ToolCall.from_row(row) for row in rows]

    def writes_of(self, call_ids: Iterable[int]) -> dict[int, builtins.list[tuple[str, int]]]:
        """The ``(path, version)`` pairs each of ``call_ids`` wrote (one query)."""
        wanted = set(call_ids)
        out: dict[int, builtins.list[tuple[str, int]]] = {i: [] for i in wanted}
        if not wanted:
            return out
        for call_id, path, n in self.conn.execute(
            "SELECT call_id, path, n FROM ws_tool_write WHERE call_id BETWEEN ? AND ?"
            " ORDER BY call_id, path, n",
            (min(wanted), max(wanted)),
        ):
            if call_id in wanted:
                out[call_id].append((path, n))
        return out

    def stats(self) -> builtins.list[ToolStats]:
        rows = self.conn.execute(
            "SELECT name, count(*), sum(error IS NULL), sum(error IS NOT NULL), avg(duration_ms)"
            " FROM tool_calls GROUP BY name ORDER BY count(*) DESC, name"
        )
        return [ToolStats(*row) for row in rows]


def _spec_row(call: StoredCall) -> tuple[object, ...]:
    """A ``tool_calls`` row without ``status``: whole-second times, and the duration measured
    from the fractional ones so it agrees with them to within their rounding (rule 3)."""
    name, parameters, result, error, started_at, completed_at = call[:6]
    return (
        name,
        parameters,
        result,
        error,
        int(started_at),
        int(completed_at),
        int((completed_at - started_at) * 1000 + 0.5),  # SQLite's round(): half up
    )


_STAGE = (
    "INSERT INTO ws_tool_call_staged(name, parameters, result, error, started_at, completed_at,"
    " thread, actor, path, n, writes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

#: Is a staged row's first link (its ``path`` and ``n`` columns) a well-formed one? (Both
#: are NULL when the call made no version; ``publish`` links only a well-formed pair, and
#: fsck reports a row with anything else.)
FIRST_LINK = "typeof(path) = 'text' AND typeof(n) = 'integer'"

#: Is ``j``, an element of a staged row's ``writes`` (a ``json_each`` row), a well-formed
#: ``[path, n]`` link? (``publish`` links only those; fsck reports a row with any other.)
LINK_PAIR = (
    "j.type = 'array' AND json_array_length(j.value) = 2"
    " AND json_type(j.value, '$[0]') = 'text' AND json_type(j.value, '$[1]') = 'integer'"
)

#: The staged rows in start order, numbered from 0 (every row counted, in the order
#: ``_publish_calls`` inserts them): the k-th became the ``tool_calls`` row ?1 + k.
_NUMBERED = (
    f"SELECT row_number() OVER (ORDER BY {_START_ORDER}) - 1 AS k, path, n, writes, thread,"
    " actor FROM ws_tool_call_staged"
)

_RECORD_WHO = "INSERT OR REPLACE INTO ws_tool_call_who(call_id, thread, actor) VALUES (?, ?, ?)"
#: Who made each staged call, for the rows that name anyone.
_PUBLISH_WHO = f"""
INSERT OR REPLACE INTO ws_tool_call_who(call_id, thread, actor)
SELECT ?1 + k, thread, actor FROM ({_NUMBERED}) WHERE thread IS NOT NULL OR actor IS NOT NULL
"""

#: The staged rows' first links, kept in their columns.
_PUBLISH_FIRST_LINKS = f"""
INSERT OR IGNORE INTO ws_tool_write(call_id, path, n)
SELECT ?1 + k, path, n FROM ({_NUMBERED}) WHERE {FIRST_LINK}
"""

#: Does any staged row hold links in ``writes`` (a call that made several versions, or a row
#: staged before migration 12)? A scan of the rows, a twentieth of parsing them.
_ANY_MORE_LINKS = "SELECT 1 FROM ws_tool_call_staged WHERE writes != '[]' LIMIT 1"

#: The staged rows' other links, kept in ``writes``. A hand-edited row goes in with only its
#: well-formed pairs, its ``writes`` read as ``[]`` when it is no JSON list, before
#: ``json_each`` sees it.
_PUBLISH_MORE_LINKS = f"""
INSERT OR IGNORE INTO ws_tool_write(call_id, path, n)
SELECT ?1 + s.k, j.value ->> 0, j.value ->> 1
FROM ({_NUMBERED}) AS s, json_each(
  CASE WHEN NOT json_valid(s.writes) THEN '[]' WHEN json_type(s.writes) = 'array' THEN s.writes
    ELSE '[]' END
) AS j
WHERE s.writes != '[]' AND {LINK_PAIR}
"""


#: One encoder for every row: ``json.dumps`` with options builds a new one per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def json_text(value: Any) -> str | None:
    """JSON text of ``value`` (None stays None); characters UTF-8 cannot hold (a lone
    surrogate a client sent) escaped, as SQLite stores text as UTF-8."""
    if value is None:
        return None
    try:
        text = _ENCODER.encode(value)
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"tool-call value is not JSON-serialisable: {exc}") from None
    return text


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
