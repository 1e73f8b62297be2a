"""Extended attributes: named byte values on an inode (``ws_xattr``), under Linux's rules.

They belong to the inode (hard links share them, a rename keeps them, ``Orphans`` frees them)
and follow tmpfs's rules as root, so a program sees the same answers through the FUSE mount as
on a local disk. The names, limits and errnos are in docs/api.md, "Extended attributes";
``security.capability`` is never set, so that a workspace an agent writes grants no program
privileges (and the mount answers the kernel's probe of it without a query).
"""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

import apsw

from agentfs.core.errors import fs_error
from agentfs.core.inodes import S_IFDIR, S_IFMT, S_IFREG, now_ns, split_ns

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem

#: ``setxattr`` flags, as ``os`` and the kernel number them.
XATTR_CREATE = os.XATTR_CREATE
XATTR_REPLACE = os.XATTR_REPLACE
#: Longest name, in bytes (XATTR_NAME_MAX).
NAME_MAX = 255
#: Largest value, in bytes (XATTR_SIZE_MAX), and most bytes of names an inode may list.
SIZE_MAX = 65536
#: The namespaces stored; ``system.`` is not (ACLs are off).
NAMESPACES = ("user.", "trusted.", "security.")
_USER = "user."
#: File capabilities: never stored, so a program run from the mount can gain none, and the
#: mount answers the kernel's probe of it before every write without a query.
CAPABILITY = "security.capability"
#: The namespace only a privileged caller may see (the FUSE mount hides it from others).
TRUSTED = "trusted."

_GET = "SELECT value FROM ws_xattr WHERE ino = ? AND name = ?"
_LIST = "SELECT name FROM ws_xattr WHERE ino = ? ORDER BY name"
_NAMES_BYTES = "SELECT coalesce(sum(length(CAST(name AS BLOB)) + 1), 0) FROM ws_xattr WHERE ino = ?"
_PUT = "INSERT OR REPLACE INTO ws_xattr(ino, name, value) VALUES (?, ?, ?)"
_DELETE = "DELETE FROM ws_xattr WHERE ino = ? AND name = ? RETURNING 1"
_CTIME = "UPDATE fs_inode SET ctime = ?, ctime_nsec = ? WHERE ino = ?"


def valid_name(name: str | bytes, where: str) -> str:
    """``name`` as stored, or the errno the kernel gives for it before it looks at a file:
    EINVAL for a NUL or bytes that are not UTF-8, ERANGE when empty or over 255 bytes."""
    if isinstance(name, bytes):
        raw = name
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise fs_error(errno.EINVAL, where, "attribute names are UTF-8") from None
    else:
        try:
            raw = name.encode("utf-8")
        except UnicodeEncodeError:
            raise fs_error(errno.EINVAL, where, "attribute names are UTF-8") from None
    if "\0" in name:
        raise fs_error(errno.EINVAL, where, "an attribute name cannot hold NUL")
    if not raw or len(raw) > NAME_MAX:
        raise fs_error(errno.ERANGE, where, "an attribute name is 1..255 bytes")
    return name


def valid_setting(name: str | bytes, value: bytes, flags: int, where: str) -> tuple[str, bytes]:
    """(name, value) as stored for a ``setxattr``, checked in the kernel's order: EINVAL for
    an unknown flag, then the name (``valid_name``), then E2BIG for a value over 64 KiB."""
    if flags & ~(XATTR_CREATE | XATTR_REPLACE):
        raise fs_error(errno.EINVAL, where, f"unknown setxattr flags {flags:#x}")
    key = valid_name(name, where)
    value = bytes(value)
    if len(value) > SIZE_MAX:
        raise fs_error(errno.E2BIG, where, "an attribute value is at most 64 KiB")
    return key, value


def copy_all(conn: apsw.Connection, src: int, dst: int) -> None:
    """Give inode ``dst`` a copy of ``src``'s attributes (history's frozen copies), inside the
    caller's transaction; ``dst`` has none yet."""
    conn.execute(
        "INSERT INTO ws_xattr(ino, name, value) SELECT ?, name, value FROM ws_xattr WHERE ino = ?",
        (dst, src),
    )


def drop_all(conn: apsw.Connection, inodes: str, bindings: tuple[object, ...] = ()) -> None:
    """Delete the attributes of the inodes the SQL ``inodes`` selects (an inode being freed)."""
    conn.execute(f"DELETE FROM ws_xattr WHERE ino IN ({inodes})", bindings)


class Xattrs:
    """The attributes of inodes, addressed by number (what a FUSE request carries); the
    path-based calls are ``FileSystem``'s. Names come through ``valid_name`` first."""

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        self.conn = fs.conn

    def get(self, ino: int, name: str, where: str = "") -> bytes:
        """The value of ``name``; ENODATA when ``ino`` has no such attribute."""
        with self.fs.read_transaction():
            user_ok = self._allowed(ino, name, where or f"inode {ino}")
            value = self.conn.execute(_GET, (ino, name)).get if user_ok else None
        if value is None:
            raise fs_error(errno.ENODATA, where or f"inode {ino}", name)
        return value  # type: ignore[return-value]

    def list(self, ino: int, where: str = "") -> list[str]:
        """Every attribute name of ``ino``, in code-point order."""
        with self.fs.read_transaction():
            self._mode(ino, where or f"inode {ino}")
            return [name for (name,) in self.conn.execute(_LIST, (ino,))]

    def every(self) -> dict[int, dict[str, bytes]]:
        """Every inode's attributes, by inode, in one query: what a copy of a whole tree
        needs, where asking inode by inode would cost a query per file that has none."""
        out: dict[int, dict[str, bytes]] = {}
        for ino, name, value in self.conn.execute("SELECT ino, name, value FROM ws_xattr"):
            out.setdefault(ino, {})[name] = value
        return out

    def set(self, ino: int, name: str, value: bytes, flags: int = 0, where: str = "") -> None:
        """Set ``name`` to ``value`` (``valid_setting`` first), honouring ``XATTR_CREATE`` and
        ``XATTR_REPLACE``."""
        where = where or f"inode {ino}"
        with self.fs.transaction():
            if not self._allowed(ino, name, where):
                raise fs_error(errno.EPERM, where, "user. attributes are for files and directories")
            if name == CAPABILITY:  # reads of it answer ENODATA, as for any name never set
                raise fs_error(errno.ENOTSUP, where, f"{name}: file capabilities are not stored")
            present = self.conn.execute(_GET, (ino, name)).get is not None
            if present and flags & XATTR_CREATE:
                raise fs_error(errno.EEXIST, where, name)
            if not present:
                if flags & XATTR_REPLACE:
                    raise fs_error(errno.ENODATA, where, name)
                listed = self.conn.execute(_NAMES_BYTES, (ino,)).get
                if listed + len(name.encode("utf-8")) + 1 > SIZE_MAX:  # type: ignore[operator]
                    raise fs_error(errno.ENOSPC, where, "the names of one inode fill 64 KiB")
            self.conn.execute(_PUT, (ino, name, value))
            self._changed(ino)

    def remove(self, ino: int, name: str, where: str = "") -> None:
        """Remove ``name``; ENODATA when ``ino`` has no such attribute."""
        where = where or f"inode {ino}"
        with self.fs.transaction():
            if not self._allowed(ino, name, where):
                raise fs_error(errno.EPERM, where, "user. attributes are for files and directories")
            if self.conn.execute(_DELETE, (ino, name)).get is None:
                raise fs_error(errno.ENODATA, where, name)
            self._changed(ino)

    def _mode(self, ino: int, where: str) -> int:
        mode = self.conn.execute("SELECT mode FROM fs_inode WHERE ino = ?", (ino,)).get
        if mode is None:
            raise fs_error(errno.ENOENT, where)
        return mode  # type: ignore[return-value]

    def _allowed(self, ino: int, name: str, where: str) -> bool:
        """Can ``name`` exist on ``ino``? False for a ``user.`` name on anything but a regular
        file or a directory (the caller answers EPERM or ENODATA, as the kernel does); ENOTSUP
        for a namespace not stored, EINVAL for a bare prefix."""
        mode = self._mode(ino, where)
        if name.startswith(_USER) and mode & S_IFMT not in (S_IFREG, S_IFDIR):
            return False
        prefix = next((p for p in NAMESPACES if name.startswith(p)), None)
        if prefix is None:
            raise fs_error(errno.ENOTSUP, where, f"{name}: namespace not supported")
        if name == prefix:
            raise fs_error(errno.EINVAL, where, f"{name}: a name after the namespace is needed")
        return True

    def _changed(self, ino: int) -> None:
        sec, nsec = split_ns(now_ns())
        self.conn.execute(_CTIME, (sec, nsec, ino))
