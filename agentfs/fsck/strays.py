"""Stray rows: rows of one table that point at nothing (a dentry whose inode is gone, chunks or
extended attributes of a missing inode, a link to a call never logged, ...) or that hold what no
reader can use (a malformed read record or active skill).

One table, ``STRAYS``, says for each such check which table holds the rows, what a sound row
points at (or holds), what each problem says and what the repair says; one loop makes the check
and the repair of each. The repair deletes the strays: nothing can reach or use them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import apsw

from agentfs.core.inodes import S_IFLNK
from agentfs.fsck.report import INODE_COUNTER, CheckFn, RepairFn, _check, _Finding, _is


class Stray(NamedTuple):
    """Rows of ``table`` that are not ``sound`` are strays. ``problem`` and ``fixed`` are
    formatted with a stray's ``shows`` columns by name; a ``fixed`` that names ``{keys}`` (every
    stray's first column) or ``{rows}`` (how many there are) is one line for all of them."""

    name: str  # the check is check_<name>, its repair repair_<name>
    rule: str  # the check's docstring
    table: str  # the table, and how it is read (NOT INDEXED: the table is the truth)
    sound: str  # SQL: what a sound row's column points at (or what a sound row holds)
    shows: str  # SQL: the columns the messages name
    problem: str  # one problem per stray (or per group of them, with ``by``)
    fixed: str  # what the repair says, a line per stray (or group)
    by: str = ""  # GROUP BY: one problem for all the strays with one value of this column


_INODE = "ino IN (SELECT ino FROM fs_inode)"

#: In the order ``CHECKS`` runs them.
STRAYS = (
    Stray(
        "fs_dentry_inode",
        "Every dentry names an inode that exists.",
        "fs_dentry",
        _INODE,
        "id, name, parent_ino, ino",
        "dentry {id} ({name!r} in directory {parent_ino}) names missing inode {ino}",
        "removed dentries {keys} that named missing inodes",
    ),
    Stray(
        "fs_symlink_inode",
        "fs_symlink rows belong to existing symlink inodes only.",
        "fs_symlink",
        f"ino IN (SELECT ino FROM fs_inode WHERE {_is(S_IFLNK)})",
        "ino, coalesce((SELECT printf('a non-symlink (mode 0o%o)', i.mode) FROM fs_inode i"
        " WHERE i.ino = fs_symlink.ino), 'a missing inode') AS state",
        "fs_symlink row for inode {ino}, {state}",
        "removed fs_symlink rows of non-symlink inodes {keys}",
    ),
    Stray(
        "fs_data_inode",
        "Every chunk belongs to an inode that exists.",
        "fs_data NOT INDEXED",
        _INODE,
        "ino, count(*) AS count",
        "{count} chunks belong to missing inode {ino}",
        "deleted {count} chunks of missing inode {ino}",
        by="ino",
    ),
    Stray(
        "ws_xattr_inode",
        "Every extended attribute belongs to an inode that exists (they go with the inode).",
        "ws_xattr",
        _INODE,
        "ino, count(*) AS count",
        "{count} extended attributes belong to missing inode {ino}",
        "deleted {count} extended attributes of missing inode {ino}",
        by="ino",
    ),
    Stray(
        "ws_read_values",
        "Read records hold a thread, a size >= 0 and a 0/1 ranged flag.",
        "ws_read",
        "thread <> '' AND size >= 0 AND ranged IN (0, 1)",
        "thread, path",
        "read record of {path} by thread {thread!r} is malformed",
        "dropped the malformed read record of {path} by {thread!r}",
    ),
    Stray(
        "ws_index_queue_issued",
        "Queued inode numbers were issued (a queued inode may since have gone: that is legal).",
        "ws_index_queue",
        f"ino <= {INODE_COUNTER}",
        "ino",
        "queued inode {ino} was never issued",
        "dropped {rows} never-issued inodes from the index queue",
    ),
    Stray(  # the calls are insert-only: a link to a missing one can only be dropped
        "ws_tool_write_call",
        "Every link from a tool call to a version names a logged call and a version >= 1.",
        "ws_tool_write",
        "call_id IN (SELECT id FROM tool_calls) AND n >= 1",
        "call_id, path, n",
        "ws_tool_write links call {call_id} (not logged) to {path} v{n}",
        "dropped the link of missing call {call_id} to {path} v{n}",
    ),
    Stray(  # who made a call that is not logged says nothing
        "ws_tool_call_who_call",
        "Who made a call is kept for a logged call only.",
        "ws_tool_call_who",
        "call_id IN (SELECT id FROM tool_calls)",
        "call_id, thread, actor",
        "ws_tool_call_who names call {call_id} (not logged), thread {thread!r}",
        "dropped who made missing call {call_id}",
    ),
    Stray(
        "ws_skill_active_values",
        "Active skills name a skill directory (no '/') and carry an activation time.",
        "ws_skill_active",
        "skill_id <> '' AND instr(skill_id, '/') = 0 AND at_ns > 0",
        "thread, skill_id",
        "active skill {skill_id!r} of thread {thread!r} is malformed",
        "deactivated the malformed skill {skill_id!r} of thread {thread!r}",
    ),
)


def _strays(conn: apsw.Connection, s: Stray) -> list[dict[str, Any]]:
    group = f" GROUP BY {s.by}" if s.by else ""
    rows = conn.execute(f"SELECT {s.shows} FROM {s.table} WHERE NOT ({s.sound}){group}")
    return [dict(zip((d[0] for d in rows.get_description()), row, strict=True)) for row in rows]


def _made(s: Stray) -> tuple[CheckFn, RepairFn]:
    def check(conn: apsw.Connection) -> _Finding:
        for row in _strays(conn, s):
            yield s.problem.format(**row), True

    def repair(conn: apsw.Connection) -> list[str]:
        rows = _strays(conn, s)
        conn.execute(f"DELETE FROM {s.table} WHERE NOT ({s.sound})")
        keys = [next(iter(row.values())) for row in rows]
        if "{keys}" in s.fixed or "{rows}" in s.fixed:
            return [s.fixed.format(keys=keys, rows=len(rows))]
        return [s.fixed.format(**row) for row in rows]

    check.__name__ = check.__qualname__ = f"check_{s.name}"
    repair.__name__ = repair.__qualname__ = f"repair_{s.name}"
    check.__doc__, repair.__doc__ = s.rule, "Delete the stray rows: nothing can reach or use them."
    return _check(check), repair


#: Each stray check by name (``check_<name>``), and its repair.
STRAY_CHECKS: dict[str, CheckFn] = {}
STRAY_REPAIRS: dict[CheckFn, RepairFn] = {}
for _stray in STRAYS:
    _found, STRAY_REPAIRS[_found] = _made(_stray)
    STRAY_CHECKS[_found.__name__] = _found
