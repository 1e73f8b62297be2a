"""Virtual paths: the single place that normalises them and refuses bad ones.

A workspace path is absolute inside the workspace; ``.`` and ``..`` are resolved lexically and
``..`` stops at ``/``, so no path can name anything outside it. NUL bytes, components over 255
bytes and paths of ``TREE_PATH_MAX`` bytes or more get the kernel's errno; that limit is far
above ``PATH_MAX`` because the mount asks for whole paths of files a program reached by steps
(``openat``, ``chdir``), and symlink targets keep ``PATH_MAX``.
"""

from __future__ import annotations

import errno
import os

from agentfs.core.errors import fs_error

NAME_MAX = 255
#: The kernel's limit on one path argument, and so on a symlink's target.
PATH_MAX = 4096
#: The longest whole path a workspace takes, plus one (see the module docstring).
TREE_PATH_MAX = 65536


def normalize(path: str | os.PathLike[str]) -> str:
    """``/a/./b/../c`` -> ``/a/c``; raises OSError for input no filesystem would accept.

    A trailing slash comes back as a ``DirPath`` (still a ``str``), which the core requires to
    be a directory.
    """
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"workspace paths are text, not {type(text).__name__}")
    if _already_normal(text):
        return text
    if "\0" in text:
        raise fs_error(errno.EINVAL, text.replace("\0", "\\0"), "embedded NUL byte in path")
    encoded = _utf8(text)
    if len(encoded) >= TREE_PATH_MAX:
        raise fs_error(errno.ENAMETOOLONG, text[:64] + "...", f"path of {TREE_PATH_MAX}+ bytes")
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        check_name(part)
        parts.append(part)
    if parts and text.endswith(("/", "/.")):
        return DirPath("/" + "/".join(parts))
    return "/" + "/".join(parts)


class DirPath(str):
    """A normalised path its caller wrote with a trailing slash (``a/``, ``a/.``): as in the
    kernel it must name a directory (after following a symlink), or the call fails ENOTDIR."""

    __slots__ = ()


def _already_normal(text: str) -> bool:
    """Fast path for the common case, an absolute ASCII path with nothing to resolve: short
    enough that no component can exceed NAME_MAX, no empty, '.' or '..' component ("/." also
    rules out dot-files, which then take the full path), no NUL, no trailing slash."""
    return (
        1 < len(text) <= NAME_MAX
        and text[0] == "/"
        and text[-1] != "/"
        and text.isascii()
        and "//" not in text
        and "/." not in text
        and "\0" not in text
    )


def climbs_above_root(path: str) -> bool:
    """Does a ``..`` in ``path`` go above the root (``normalize`` stops it there)? For the
    callers that must refuse such a path instead of reading it from the root."""
    depth = 0
    for name in path.split("/"):
        if name == "..":
            if depth == 0:
                return True
            depth -= 1
        elif name not in ("", "."):
            depth += 1
    return False


def check_name(name: str) -> str:
    """Validate one path component (a dentry name) and return it."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise fs_error(errno.EINVAL, name.replace("\0", "\\0"), "not a valid file name")
    if len(_utf8(name)) > NAME_MAX:
        raise fs_error(errno.ENAMETOOLONG, name[:64] + "...", f"name longer than {NAME_MAX} bytes")
    return name


def split(path: str) -> list[str]:
    """Components of a normalised path; ``/`` has none."""
    return [p for p in path.split("/") if p]


def parent_and_name(path: str) -> tuple[str, str]:
    """``/a/b/c`` -> (``/a/b``, ``c``); the root has no name and is refused (EINVAL)."""
    if path == "/":
        raise fs_error(errno.EINVAL, path, "the root has no parent")
    head, _, name = path.rpartition("/")
    return head or "/", name


def join(parent: str, name: str) -> str:
    return parent.rstrip("/") + "/" + name


def is_within(path: str, ancestor: str) -> bool:
    """True when ``path`` is ``ancestor`` or lies below it (both normalised)."""
    return ancestor == "/" or path == ancestor or path.startswith(ancestor + "/")


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        bad = text.encode("utf-8", "replace").decode()
        raise fs_error(errno.EILSEQ, bad, "not valid UTF-8") from None
