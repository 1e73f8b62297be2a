"""What a check is and how it reports: ``Problem``, ``FsckReport`` and the ``_check`` decorator.

Every other fsck module builds on these. A check body yields ``(message, repairable)`` pairs and
``_check`` turns them into ``Problem``s named after the check; a repair takes the connection and
returns one line per action. ``_rows``, ``_is`` and ``INODE_COUNTER`` are the SQL all checks share;
``_settings`` and ``_set_setting`` read and repair ``ws_config``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import apsw

from agentfs.core.inodes import S_IFMT

#: SQL: the last inode number issued (no inode above it can have existed).
INODE_COUNTER = "(SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'fs_inode')"


def _is(kind: int, mode: str = "mode") -> str:
    """SQL: the ``mode`` column holds file type ``kind`` (no octal literals in SQLite)."""
    return f"({mode} & {S_IFMT}) = {kind}"


@dataclass(frozen=True)
class Problem:
    """One broken invariant: which check found it, what is wrong, and whether repair fixes it."""

    check: str
    message: str
    repairable: bool


@dataclass
class FsckReport:
    """What ``check`` found (and, after ``repair``, what was done before the re-check)."""

    problems: list[Problem] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, object]:
        """JSON-ready (``agentfs fsck --json``)."""
        return {
            "clean": self.clean,
            "problems": [asdict(p) for p in self.problems],
            "repaired": list(self.repaired),
        }


CheckFn = Callable[[apsw.Connection], Iterator[Problem]]
RepairFn = Callable[[apsw.Connection], list[str]]
_Finding = Iterator[tuple[str, bool]]


def _check(fn: Callable[[apsw.Connection], _Finding]) -> CheckFn:
    """A check body yields (message, repairable); this names each Problem after the check."""

    @functools.wraps(fn)
    def run(conn: apsw.Connection) -> Iterator[Problem]:
        for message, repairable in fn(conn):
            yield Problem(fn.__name__, message, repairable)

    return run


def _rows(conn: apsw.Connection, sql: str, bindings: tuple = ()) -> list[tuple]:
    return conn.execute(sql, bindings).fetchall()


def _settings(
    conn: apsw.Connection, keys: Iterable[str], valid: Callable[[str, str], bool]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The ws_config values, and (key, what is wrong) for each of ``keys`` missing or not valid."""
    values = dict(conn.execute("SELECT key, value FROM ws_config"))
    return values, [
        (key, "is missing" if value is None else f"has an invalid value {value!r}")
        for key in keys
        if (value := values.get(key)) is None or not valid(key, value)
    ]


def _set_setting(conn: apsw.Connection, key: str, value: str) -> str:
    conn.execute("INSERT OR REPLACE INTO ws_config(key, value) VALUES (?, ?)", (key, value))
    return f"set ws_config {key} to {value}"
