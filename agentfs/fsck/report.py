"""What a check is and how it reports: ``Problem``, ``FsckReport`` and the ``_check`` decorator.

Every other fsck module builds on these. A check body yields ``(message, repairable)`` pairs and
``_check`` turns them into ``Problem``s named after the check; a repair takes the connection and
returns one line per action. ``_rows`` and ``_is`` are the two SQL helpers all checks share.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

import apsw

from agentfs.core.inodes import S_IFMT


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
