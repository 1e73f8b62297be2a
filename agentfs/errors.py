"""The error model: every filesystem failure is an ``OSError`` carrying an errno and the path.

``OSError(errno, message, path)`` already returns the matching subclass (``FileNotFoundError``
for ENOENT, ``IsADirectoryError`` for EISDIR, ...), so callers can catch the standard classes
they know from ``os``. Failures that are not about the filesystem (a policy, a malformed value)
subclass ``AgentFSError``.
"""

from __future__ import annotations

import errno
import os


def fs_error(code: int, path: str, detail: str | None = None) -> OSError:
    """Build the OSError subclass for ``code``; the message names the errno and the path."""
    message = os.strerror(code) if detail is None else f"{os.strerror(code)}: {detail}"
    return OSError(code, message, path)


def not_found(path: str) -> OSError:
    return fs_error(errno.ENOENT, path)


class AgentFSError(Exception):
    """Base of agentfs failures that are not filesystem errors."""


class InvalidValueError(AgentFSError, ValueError):
    """A value given to the API cannot be stored (a kv value that is not JSON, say)."""


class KeyNotFoundError(AgentFSError, KeyError):
    """A key-value lookup of a key that is not set (also a ``KeyError``, as for a dict)."""

    def __str__(self) -> str:
        return f"no such key: {self.args[0]!r}"
