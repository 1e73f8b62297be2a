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


class UnsupportedError(AgentFSError, NotImplementedError):
    """An operation this kind of workspace cannot do; the message says why and what to do
    instead."""


class InvalidValueError(AgentFSError, ValueError):
    """A value given to the API cannot be stored (a kv value that is not JSON, say)."""


class KeyNotFoundError(AgentFSError, KeyError):
    """A key-value lookup of a key that is not set (also a ``KeyError``, as for a dict)."""

    def __str__(self) -> str:
        return f"no such key: {self.args[0]!r}"


class HistoryNotFoundError(AgentFSError, LookupError):
    """A snapshot name or a version number that the workspace does not have."""


class StaleReadError(AgentFSError, PermissionError):
    """The read-before-write policy refused a write: this thread never read the file, or the
    file changed since it did. Also a ``PermissionError`` (EACCES), so code that handles
    ``OSError`` sees it; the message says which version was read and which is current.
    ``reason`` is ``"unread"`` (never read) or ``"changed"`` (changed since), so a caller
    such as the agent tools can tell the two apart without parsing the message."""

    def __init__(self, path: str, message: str, reason: str = "changed") -> None:
        super().__init__(errno.EACCES, message, path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class EmbedderMismatchError(AgentFSError, ValueError):
    """An embedder whose model id or dimension differs from the one the workspace's vectors
    were made with: vectors of two models are not comparable, so it is refused."""
