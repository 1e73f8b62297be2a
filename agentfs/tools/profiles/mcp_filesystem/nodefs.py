"""How the server sees paths and files, as Node's ``fs`` shows them: its error texts, its
path checks against the allowed directory (the workspace root), and its ways of reading a
file (head and tail included)."""

from __future__ import annotations

import codecs
import posixpath
import re
import stat as statmod
import unicodedata

from agentfs.core.inodes import Stat
from agentfs.tools.context import Context
from agentfs.tools.errors import ErrorCode, ToolError

#: What the root directory is called in the server's texts: the allowed directory.
ROOT = "/"


# --- Node's fs errors ------------------------------------------------------------------------

#: errno name -> (libuv's description, agentfs's code).
_NODE_ERRORS: dict[str, tuple[str, ErrorCode]] = {
    "ENOENT": ("no such file or directory", "not_found"),
    "ENOTDIR": ("not a directory", "not_directory"),
    "EISDIR": ("illegal operation on a directory", "is_directory"),
    "EEXIST": ("file already exists", "exists"),
    "EINVAL": ("invalid argument", "invalid_argument"),
    "ELOOP": ("too many symbolic links encountered", "invalid_path"),
    "ENOTEMPTY": ("directory not empty", "not_empty"),
    "ENAMETOOLONG": ("name too long", "invalid_path"),
}

_ERRNO_NAMES = {2: "ENOENT", 20: "ENOTDIR", 21: "EISDIR", 17: "EEXIST", 22: "EINVAL", 40: "ELOOP"}


def node_error(
    name: str, syscall: str, path: str | None = None, dest: str | None = None
) -> ToolError:
    """The error Node's ``fs`` raises: ``CODE: description, syscall 'path' -> 'dest'``."""
    description, code = _NODE_ERRORS.get(name, ("unknown error", "internal_error"))
    message = f"{name}: {description}, {syscall}"
    if path is not None:
        message += f" '{path}'"
    if dest is not None:
        message += f" -> '{dest}'"
    return ToolError(code, message)


def from_os(exc: OSError, syscall: str, path: str, dest: str | None = None) -> ToolError:
    name = _ERRNO_NAMES.get(exc.errno or 0)
    if name is None:
        raise exc
    return node_error(name, syscall, path, dest)


# --- paths --------------------------------------------------------------------------------------

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:(?:[\\/]|$)")


def _absolute(raw: str) -> str:
    """``raw`` resolved against the root as Node's ``path.resolve`` does (``..`` stops at
    ``/``, a trailing slash is dropped)."""
    if raw == "~" or raw.startswith("~/"):
        raw = ROOT + raw[1:]
    return posixpath.normpath("/" + raw.lstrip("/"))  # at the root, ".." stays there


def lstat(ctx: Context, path: str) -> Stat | None:
    try:
        return ctx.ws.lstat(path)
    except OSError:
        return None


def stat(ctx: Context, path: str) -> Stat | None:
    try:
        return ctx.ws.stat(path)
    except OSError:
        return None


def _real(ctx: Context, absolute: str) -> str | None:
    """``absolute`` with its symlinks resolved, if it exists (else None); ``ENOTDIR`` where a
    file stands before its last name (Node's ``realpath``)."""
    try:
        resolved = ctx.ws.realpath(absolute)
    except OSError as exc:
        raise from_os(exc, "realpath", absolute) from None
    names = [part for part in resolved.split("/") if part]
    here = "/"
    for index, name in enumerate(names):
        here = posixpath.join(here, name)
        st = lstat(ctx, here)
        if st is None:
            return None
        if index < len(names) - 1 and not statmod.S_ISDIR(st.st_mode):
            raise node_error("ENOTDIR", "realpath", absolute)
    return resolved


def _unicode_equivalent(ctx: Context, absolute: str) -> str:
    """The path a new name will take: each existing directory on the way found by its name,
    or by a name equal to it in Unicode's composed form (the server's rule)."""
    names = [part for part in absolute.split("/") if part]
    here = "/"
    for index, name in enumerate(names):
        try:
            entries = ctx.ws.listdir(here)
        except FileNotFoundError:
            raise ToolError(
                "not_found", f"Parent directory does not exist: {posixpath.dirname(absolute)}"
            ) from None
        except NotADirectoryError:
            raise node_error("ENOTDIR", "scandir", here) from None
        if name in entries:
            found = [name]
        else:
            composed = unicodedata.normalize("NFC", name)
            found = [e for e in entries if unicodedata.normalize("NFC", e) == composed]
        if len(found) > 1:
            raise ToolError("invalid_argument", f"Ambiguous Unicode path component: {name}")
        if not found:
            return posixpath.join(here, *names[index:])
        here = ctx.ws.realpath(posixpath.join(here, found[0]))
    return here


def valid(ctx: Context, raw: str, *, write: bool = False) -> str:
    """The workspace path ``raw`` names, as the server validates a path: resolved, its
    symlinks followed, a new name matched to an existing one in composed form; the policy
    judges it as written and as found."""
    if _WINDOWS_DRIVE.match(raw):
        raise ToolError(
            "denied", f"Access denied - Windows-style path received on a POSIX host: {raw}"
        )
    absolute = _absolute(raw)
    if "\0" in absolute:
        raise ToolError(
            "denied", f"Access denied - path outside allowed directories: {absolute} not in {ROOT}"
        )
    ctx.path(absolute, write=write)
    real = _real(ctx, absolute)
    if real is None:
        real = _unicode_equivalent(ctx, absolute)
    if real != absolute:
        ctx.path(real, write=write)
    return real


# --- reading ------------------------------------------------------------------------------------


def _decode(data: bytes) -> str:
    """Bytes as Node decodes UTF-8: each bad sequence becomes U+FFFD, a BOM is kept."""
    return data.decode("utf-8", errors="replace")


def encode(text: str) -> bytes:
    """Text as Node writes it: UTF-8, an unpaired surrogate as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        paired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return paired.encode("utf-8")


def file_bytes(ctx: Context, path: str, syscall: str = "open") -> bytes:
    """A file's bytes, or Node's error for opening (``syscall``) and reading it."""
    try:
        st = ctx.ws.stat(path)
    except OSError as exc:
        raise from_os(exc, syscall, path) from None
    if statmod.S_ISDIR(st.st_mode):
        raise node_error("EISDIR", "read")
    return ctx.ws.read(path)


def read_text(ctx: Context, path: str) -> str:
    return _decode(file_bytes(ctx, path))


def _js_slice(items: list[str], start: float) -> list[str]:
    """``items.slice(start)`` as JavaScript computes it (a fraction truncated)."""
    begin = int(start)
    if begin < 0:
        begin = max(len(items) + begin, 0)
    return items[begin:]


_CHUNK = 1024


def tail(ctx: Context, path: str, lines: float) -> str:
    """The last ``lines`` lines: the server reads 1 KiB blocks from the end until it has seen
    enough newlines, then keeps the last ``lines`` parts of what it read."""
    data = file_bytes(ctx, path, "stat")
    if not data:
        return ""
    position, newlines = len(data), 0
    while position > 0 and newlines < lines:
        size = min(_CHUNK, position)
        position -= size
        newlines += data.count(b"\n", position, position + size)
    text = _decode(data[position:]).replace("\r\n", "\n")
    return "\n".join(_js_slice(text.split("\n"), -lines))


def head(ctx: Context, path: str, lines: float) -> str:
    """The first ``lines`` lines: whole lines as 1 KiB blocks complete them, then what is left
    of the file if it ends without a newline."""
    data = file_bytes(ctx, path)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    found: list[str] = []
    pending, offset = "", 0
    while len(found) < lines:
        block = data[offset : offset + _CHUNK]
        if not block:
            break
        offset += len(block)
        pending += decoder.decode(block)
        end = pending.rfind("\n")
        if end != -1:
            complete, pending = pending[:end].split("\n"), pending[end + 1 :]
            for line in complete:
                found.append(line)
                if len(found) >= lines:
                    break
    pending += decoder.decode(b"", final=True)
    if pending and len(found) < lines:
        found.append(pending)
    return "\n".join(found)
