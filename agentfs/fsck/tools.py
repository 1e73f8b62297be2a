"""fsck of the agent tools' tables: the links from tool calls to the versions they wrote, the
staged log rows of changing calls, and each thread's active skills. The rules are written next
to each table in ``schema/migrations/0005-tools.sql`` and ``0011-staged-calls.sql``."""

from __future__ import annotations

import apsw

from agentfs.fsck.report import _check, _Finding, _rows
from agentfs.toolcalls import FIRST_LINK, LINK_PAIR

_DANGLING_LINK = "call_id NOT IN (SELECT id FROM tool_calls) OR n < 1"
_BAD_SKILL = "skill_id = '' OR instr(skill_id, '/') > 0 OR at_ns <= 0"


@_check
def check_ws_tool_write_call(conn: apsw.Connection) -> _Finding:
    """Every link from a tool call to a version names a logged call and a version >= 1."""
    for call_id, path, n in conn.execute(
        f"SELECT call_id, path, n FROM ws_tool_write WHERE {_DANGLING_LINK}"
    ):
        yield f"ws_tool_write links call {call_id} (not logged) to {path} v{n}", True


def repair_ws_tool_write_call(conn: apsw.Connection) -> list[str]:
    """The calls are insert-only, so a link to a missing one can only be dropped."""
    rows = _rows(
        conn, f"DELETE FROM ws_tool_write WHERE {_DANGLING_LINK} RETURNING call_id, path, n"
    )
    return [f"dropped the link of missing call {c} to {p} v{n}" for c, p, n in rows]


@_check
def check_ws_tool_call_staged_values(conn: apsw.Connection) -> _Finding:
    """Staged log rows hold what ``publish`` moves: JSON texts, the first version written as
    a text ``path`` and an integer ``n`` (both NULL for none) and a JSON list of the others'
    ``[path, n]``, ordered times, and a result or an error, not both. Not repaired: a staged
    row is a change's only log row, so fsck reports it and leaves it."""
    for id_, name in conn.execute(
        "SELECT id, name FROM ws_tool_call_staged WHERE"
        f" NOT ((path IS NULL AND n IS NULL) OR ({FIRST_LINK})) OR NOT json_valid(writes)"
        " OR json_type(writes) != 'array' OR EXISTS (SELECT 1 FROM json_each(writes) j WHERE"
        f" NOT ({LINK_PAIR}))"
        " OR (parameters IS NOT NULL AND NOT"
        " json_valid(parameters)) OR (result IS NOT NULL AND NOT json_valid(result))"
        " OR (result IS NOT NULL AND error IS NOT NULL) OR completed_at < started_at"
    ):
        yield f"staged log row {id_} of a {name} call is malformed", False


@_check
def check_ws_skill_active_values(conn: apsw.Connection) -> _Finding:
    """Active skills name a skill directory (no '/') and carry an activation time."""
    for thread, skill in conn.execute(
        f"SELECT thread, skill_id FROM ws_skill_active WHERE {_BAD_SKILL}"
    ):
        yield f"active skill {skill!r} of thread {thread!r} is malformed", True


def repair_ws_skill_active_values(conn: apsw.Connection) -> list[str]:
    rows = _rows(conn, f"DELETE FROM ws_skill_active WHERE {_BAD_SKILL} RETURNING thread, skill_id")
    return [f"deactivated the malformed skill {s!r} of thread {t!r}" for t, s in rows]
