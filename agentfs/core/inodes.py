"""Inode rows as Python values: ``Stat``, ``DirEntry``, file-type constants and timestamps.

The spec stores each timestamp as whole seconds plus a separate nanosecond column; the API
speaks nanoseconds since the epoch (``st_mtime_ns``), like ``os.stat``.
"""

from __future__ import annotations

import stat as statmod
import time
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import apsw

ROOT_INO = 1
S_IFMT = statmod.S_IFMT(0o177777)
S_IFREG = statmod.S_IFREG
S_IFDIR = statmod.S_IFDIR
S_IFLNK = statmod.S_IFLNK
S_IFIFO = statmod.S_IFIFO
S_IFSOCK = statmod.S_IFSOCK
S_IFCHR = statmod.S_IFCHR
S_IFBLK = statmod.S_IFBLK

NS = 1_000_000_000

#: fs_inode as the fields of ``Stat``, in order: SQLite joins each time's seconds and
#: nanoseconds, so a row becomes a Stat with no Python arithmetic (``Stat(*row)``). A time
#: before 1677 or after 2262 overflows SQLite's 64-bit integers into an inexact float, which
#: ``exact`` reads again.
STAT_COLUMNS = (
    "ino, mode, nlink, uid, gid, size, atime * 1000000000 + atime_nsec,"
    " mtime * 1000000000 + mtime_nsec, ctime * 1000000000 + ctime_nsec, rdev"
)

_TYPE_NAMES = {S_IFREG: "file", S_IFDIR: "dir", S_IFLNK: "symlink"}


def now_ns() -> int:
    return time.time_ns()


def split_ns(ns: int) -> tuple[int, int]:
    """Nanoseconds since the epoch -> (seconds, nanoseconds) as the spec's columns hold them."""
    return divmod(ns, NS)


def type_name(mode: int) -> str:
    """``file``, ``dir``, ``symlink`` or ``special`` (FIFOs, devices and sockets)."""
    return _TYPE_NAMES.get(mode & S_IFMT, "special")


def is_dir(mode: int) -> bool:
    return mode & S_IFMT == S_IFDIR


def is_symlink(mode: int) -> bool:
    return mode & S_IFMT == S_IFLNK


def is_file(mode: int) -> bool:
    return mode & S_IFMT == S_IFREG


class Stat(NamedTuple):
    """What ``stat``/``lstat`` return; field names follow ``os.stat_result``.

    A NamedTuple, like ``os.stat_result`` a tuple underneath: immutable and built in a fraction
    of a frozen dataclass's time, which matters on the mount's most frequent call.
    """

    st_ino: int
    st_mode: int
    st_nlink: int
    st_uid: int
    st_gid: int
    st_size: int
    st_atime_ns: int
    st_mtime_ns: int
    st_ctime_ns: int
    st_rdev: int = 0

    @property
    def type(self) -> str:
        return type_name(self.st_mode)

    @property
    def st_mtime(self) -> float:
        return self.st_mtime_ns / NS

    def is_dir(self) -> bool:
        return is_dir(self.st_mode)

    def is_file(self) -> bool:
        return is_file(self.st_mode)

    def is_symlink(self) -> bool:
        return is_symlink(self.st_mode)

    def as_dict(self) -> dict[str, int | str]:
        """A JSON-ready view (``--json`` output, tools)."""
        return {
            "ino": self.st_ino,
            "type": self.type,
            "mode": self.st_mode,
            "perm": f"{self.st_mode & 0o7777:04o}",
            "nlink": self.st_nlink,
            "uid": self.st_uid,
            "gid": self.st_gid,
            "size": self.st_size,
            "atime_ns": self.st_atime_ns,
            "mtime_ns": self.st_mtime_ns,
            "ctime_ns": self.st_ctime_ns,
        }


_EXACT_TIMES = (
    "SELECT atime, atime_nsec, mtime, mtime_nsec, ctime, ctime_nsec FROM fs_inode WHERE ino = ?"
)


def exact(st: Stat, conn: apsw.Connection) -> Stat:
    """``st`` as it is, unless a time of it lies outside 64-bit nanoseconds (1677-2262): then
    its times are read again as seconds and nanoseconds, and joined in Python. A type check
    on every stat; a query only for such a rare inode (tmpfs takes any 64-bit second). A
    time another program stored as text or a float (fsck reports it) is left as SQLite gave
    it: only integers are joined."""
    if type(st.st_atime_ns) is int is type(st.st_mtime_ns) is type(st.st_ctime_ns):
        return st
    row = conn.execute(_EXACT_TIMES, (st.st_ino,)).get
    if row is None or any(type(value) is not int for value in row):  # type: ignore[union-attr]
        return st
    a, a_ns, m, m_ns, c, c_ns = row  # type: ignore[misc]
    return st._replace(
        st_atime_ns=a * NS + a_ns, st_mtime_ns=m * NS + m_ns, st_ctime_ns=c * NS + c_ns
    )


class DirEntry(NamedTuple):
    """One entry of a directory listing: its name, inode and file type (from one JOIN)."""

    name: str
    ino: int
    mode: int

    @property
    def type(self) -> str:
        return type_name(self.mode)

    def is_dir(self) -> bool:
        return is_dir(self.mode)

    def is_symlink(self) -> bool:
        return is_symlink(self.mode)
