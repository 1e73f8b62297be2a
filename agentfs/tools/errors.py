"""Tool errors: a stable code the agent loop can branch on, and a message the model can act on.

A tool never raises into the agent loop. Whatever goes wrong (a missing file, a policy, a
hunk that does not apply, a bug) becomes ``ToolError(code, message)``, which the ``Toolset``
returns as ``{"error": {"code": ..., "message": ...}}``. Each message says what happened and
what to call next, because the reader is a model deciding its next tool call.
"""

from __future__ import annotations

import errno
from typing import Any, Literal, get_args

from agentfs.core.errors import (
    EmbedderMismatchError,
    HistoryNotFoundError,
    InvalidValueError,
    KeyNotFoundError,
    StaleReadError,
)

ErrorCode = Literal[
    "not_found",
    "is_directory",
    "not_directory",
    "not_empty",
    "exists",
    "no_match",
    "not_unique",
    "read_required",
    "stale_read",
    "read_only",
    "denied",
    "approval_denied",
    "too_large",
    "invalid_path",
    "invalid_argument",
    "patch_failed",
    "busy",
    "unsupported",
    "unknown_tool",
    "internal_error",
]

#: Every code, in the order docs/tools.md lists them.
ERROR_CODES: tuple[str, ...] = get_args(ErrorCode)

#: What each code means and what the agent should do next (docs/tools.md's table).
ERROR_MEANINGS: dict[str, str] = {
    "not_found": "the path, version, snapshot, key or skill does not exist; list or search first",
    "is_directory": "a file was expected and the path is a directory",
    "not_directory": "a directory was expected, or a file stands where a directory must be",
    "not_empty": "the directory has entries; pass recursive=true to remove it all",
    "exists": "the destination already exists; pass overwrite=true or choose another name",
    "no_match": "old_string is not in the file; the closest lines come in details.closest",
    "not_unique": "old_string occurs more than once; details.lines lists every occurrence",
    "read_required": "the policy requires reading the file (read_file) before writing it",
    "stale_read": "the file changed since it was read, or since expected_version; read again",
    "read_only": "the workspace (or the layer holding the path) cannot be changed here",
    "denied": "the policy does not let this tool touch this path or run this command line, or"
    " the tool is disabled",
    "approval_denied": "the tool needs a human's approval and did not get it; nothing changed",
    "too_large": "a limit (write size, workspace size) would be exceeded; nothing changed",
    "invalid_path": "the path has a NUL byte, a name over 255 bytes or is over 4095 bytes",
    "invalid_argument": "an argument is missing, of the wrong type or out of range",
    "patch_failed": "a hunk of the patch does not apply; details say where; nothing was written",
    "busy": "another process holds the workspace's write lock too long; retry shortly",
    "unsupported": "this host or workspace cannot do it (no FUSE device for execute_command)",
    "unknown_tool": "there is no tool of that name; the message lists the tools",
    "internal_error": "a bug in agentfs; the message has the exception, the workspace is as before",
}


class ToolError(Exception):
    """A failed tool call. ``details`` carries structured help (the closest lines for
    ``no_match``, every occurrence for ``not_unique``, the hunk for ``patch_failed``)."""

    def __init__(self, code: ErrorCode, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


#: errno -> (code, what the model should do next); the path is put in front of the message.
_ERRNO: dict[int, tuple[ErrorCode, str]] = {
    errno.ENOENT: ("not_found", "does not exist; call ls or glob to find the right path"),
    errno.EISDIR: ("is_directory", "is a directory; call ls to see what it holds"),
    errno.ENOTDIR: ("not_directory", "a component of the path is not a directory"),
    errno.ENOTEMPTY: ("not_empty", "directory is not empty; pass recursive=true to remove it"),
    errno.EEXIST: ("exists", "already exists"),
    errno.EROFS: ("read_only", "the workspace is read-only"),
    errno.EACCES: ("denied", "permission denied"),
    errno.EPERM: ("denied", "operation not permitted"),
    errno.EBUSY: ("busy", "the workspace is busy (another writer holds it); try again"),
    errno.ENAMETOOLONG: ("invalid_path", "name too long (255 bytes a name, 65535 a path)"),
    errno.ELOOP: ("invalid_path", "too many levels of symbolic links"),
    errno.EILSEQ: ("invalid_path", "not valid UTF-8"),
    errno.EFBIG: ("too_large", "file too large"),
    errno.ENOSPC: ("too_large", "the workspace is full"),
}


def from_exception(exc: BaseException, *, reader: str = "read_file") -> ToolError:
    """The ``ToolError`` for anything a workspace call raised. ``reader``: the tool that
    reads a file first when read-before-write refuses a change (a profile's own name)."""
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, StaleReadError):
        code: ErrorCode = "read_required" if exc.reason == "unread" else "stale_read"
        return ToolError(code, f"{exc}: call {reader} on it, then redo your change")
    if isinstance(exc, HistoryNotFoundError):
        return ToolError(
            "not_found", f"{exc}; call file_history or snapshot_list to see what exists"
        )
    if isinstance(exc, KeyNotFoundError):
        return ToolError("not_found", f"{exc}; call kv_list to see the keys")
    if isinstance(exc, EmbedderMismatchError | InvalidValueError):
        return ToolError("invalid_argument", str(exc))
    if isinstance(exc, OSError) and exc.errno is not None:
        path = exc.filename if exc.filename is not None else ""
        if exc.errno == errno.EINVAL:
            return ToolError("invalid_argument", f"{path}: {exc.strerror}" if path else str(exc))
        code, advice = _ERRNO.get(exc.errno, ("invalid_argument", exc.strerror or str(exc)))
        detail = exc.strerror or ""
        # the core's strerror may carry a detail after a colon that says more than the advice
        extra = detail.split(": ", 1)[1] if ": " in detail else ""
        message = f"{path}: {advice}" if path else advice
        return ToolError(code, f"{message} ({extra})" if extra else message)
    if isinstance(exc, ValueError | TypeError):
        return ToolError("invalid_argument", str(exc))
    return ToolError("internal_error", f"{type(exc).__name__}: {exc}")
