"""The spec's key-value store: JSON values under text keys, with prefix listing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import apsw

from agentfs.core.errors import InvalidValueError, KeyNotFoundError
from agentfs.db import write_transaction

_MISSING = object()


@dataclass(frozen=True, slots=True)
class KVEntry:
    """A key with its decoded value and the spec's epoch-second timestamps."""

    key: str
    value: Any
    created_at: int
    updated_at: int

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


class KVStore:
    """``kv_store`` of one workspace. Values are anything ``json.dumps`` accepts."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def set(self, key: str, value: Any, *, updated_at: int | None = None) -> None:
        """Store ``value`` under ``key``; ``updated_at`` (epoch seconds, default now) is for
        a copy of an entry made elsewhere (sync keeps its time)."""
        if not isinstance(key, str):
            raise TypeError(f"kv keys are text, not {type(key).__name__}")
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidValueError(f"kv value for {key!r} is not JSON: {exc}") from None
        with write_transaction(self.conn):
            self.conn.execute(
                "INSERT INTO kv_store(key, value, updated_at)"
                " VALUES (?, ?, coalesce(?, unixepoch()))"
                " ON CONFLICT(key) DO UPDATE SET value = excluded.value,"
                " updated_at = excluded.updated_at",
                (key, text, updated_at),
            )

    def get(self, key: str, default: Any = _MISSING) -> Any:
        """The value of ``key``; KeyNotFoundError (a KeyError) when absent and no default."""
        text = self.conn.execute("SELECT value FROM kv_store WHERE key = ?", (key,)).get
        if text is None:
            if default is _MISSING:
                raise KeyNotFoundError(key)
            return default
        return json.loads(text)

    def delete(self, key: str) -> bool:
        """Remove ``key``; True when it existed."""
        with write_transaction(self.conn):
            self.conn.execute("DELETE FROM kv_store WHERE key = ?", (key,))
            return self.conn.changes() > 0

    def list(self, prefix: str = "") -> list[KVEntry]:
        """Entries whose key starts with ``prefix``, sorted by key (an index range scan)."""
        rows = self.conn.execute(
            "SELECT key, value, created_at, updated_at FROM kv_store"
            " WHERE key >= ? AND (?2 = '' OR key < ?2) ORDER BY key",
            (prefix, _prefix_end(prefix)),
        )
        return [KVEntry(k, json.loads(v), c, u) for k, v, c, u in rows]

    def __contains__(self, key: str) -> bool:
        return self.conn.execute("SELECT 1 FROM kv_store WHERE key = ?", (key,)).get is not None


def _prefix_end(prefix: str) -> str:
    """The smallest string greater than every string starting with ``prefix``."""
    stem = prefix.rstrip(chr(0x10FFFF))
    if not stem:
        return ""  # no upper bound: every key from ``prefix`` on
    following = ord(stem[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:  # surrogates cannot be stored; the next character is U+E000
        following = 0xE000
    return stem[:-1] + chr(following)
