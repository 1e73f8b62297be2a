"""System calls Python's ``os`` has no wrapper for, through libc (ctypes)."""

from __future__ import annotations

import ctypes
import os

#: ``renameat2`` flags (linux/fs.h).
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
#: "Relative to the working directory" for the *at calls.
AT_FDCWD = -100

_libc = ctypes.CDLL(None, use_errno=True)
_libc.renameat2.argtypes = [
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.c_uint,
]
_libc.renameat2.restype = ctypes.c_int


def renameat2(old: str, new: str, flags: int) -> None:
    """``renameat2(AT_FDCWD, old, AT_FDCWD, new, flags)``; OSError with the errno on failure."""
    if _libc.renameat2(AT_FDCWD, os.fsencode(old), AT_FDCWD, os.fsencode(new), flags) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), old, None, new)
