"""Every row of every table of a workspace file, read through a connection of its own: the
tests of failed operations compare it before and after to prove nothing changed."""

from __future__ import annotations

from pathlib import Path

import apsw


def all_rows(db_path: Path) -> dict[str, list[tuple]]:
    conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return rows_seen_by(conn)
    finally:
        conn.close()


def rows_seen_by(conn: apsw.Connection) -> dict[str, list[tuple]]:
    """Every row of every table as ``conn`` sees them (inside its own transaction too)."""
    tables = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
        )
    ]
    # Every column in order: WITHOUT ROWID tables have no rowid to order by.
    return {t: sorted(conn.execute(f'SELECT * FROM "{t}"'), key=repr) for t in tables}
