"""The system calls a sandboxed command may not make: a seccomp-BPF program for bubblewrap.

The filter is the second wall (as in Flatpak's and Chrome's sandboxes): mounting, new
namespaces, large kernel surfaces, reading or steering other processes, unusual socket
families and terminal injection (docs/security.md lists them). It is built with libseccomp for
this machine, so a call through another ABI kills the process, and a call this libseccomp does
not know is fatal unless it is architecture-specific.
"""

from __future__ import annotations

import errno
import functools
import socket
import tempfile
from typing import Any

#: Refused with EPERM, whatever their arguments (every Linux architecture has them).
REFUSED = (
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "add_key",
    "keyctl",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "process_madvise",
    "kcmp",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "open_by_handle_at",
    "name_to_handle_at",
)
#: Refused with EPERM where this architecture has them.
REFUSED_HERE = ("kexec_file_load", "iopl", "ioperm", "modify_ldt")
#: Answered ENOSYS, as if this kernel had no such call: programs fall back to another way.
ABSENT = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")
CLONE_NEWUSER = 0x10000000
#: ioctl requests that push characters into a terminal's input.
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
#: The socket families a command may use.
FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)


class FilterError(OSError):
    """The filter cannot be built as written here (this libseccomp lacks a call)."""


def unavailable() -> str | None:
    """Why the filter cannot be built here (None: it can)."""
    try:
        program()
    except (ImportError, OSError) as exc:
        if isinstance(exc, FilterError):
            return str(exc)
        return f"libseccomp is missing (Debian package libseccomp2, PyPI pyseccomp): {exc}"
    return None


@functools.cache
def program() -> bytes:
    """The filter as a BPF program, the form ``bwrap --seccomp`` reads."""
    import pyseccomp as sc

    rules = sc.SyscallFilter(defaction=sc.ALLOW)
    eperm, enosys = sc.ERRNO(errno.EPERM), sc.ERRNO(errno.ENOSYS)
    for name in REFUSED:
        rules.add_rule(eperm, _number(name))
    for name in ABSENT:
        rules.add_rule(enosys, _number(name))
    for name in REFUSED_HERE:
        if sc.resolve_syscall(sc.Arch.NATIVE, name) >= 0:
            rules.add_rule(eperm, name)
    # s390's clone takes the stack first and the flags second
    flags = 1 if sc.system_arch() in (sc.Arch.S390, sc.Arch.S390X) else 0
    rules.add_rule(eperm, "clone", sc.Arg(flags, sc.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))
    for request in (TIOCSTI, TIOCLINUX):
        # the kernel reads the request as 32 bits: compare only those
        rules.add_rule(eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    _families(rules, sc)
    with tempfile.TemporaryFile() as exported:
        rules.export_bpf(exported)
        exported.seek(0)
        return exported.read()


def _families(rules: Any, sc: Any) -> None:
    """``socket`` and ``socketpair`` refused (EAFNOSUPPORT) for every family but
    ``FAMILIES`` (``socketpair``: Unix only). Each refused value below the largest allowed
    one is named; everything above it is refused at once, which also catches a family
    with high bits set that the kernel would read as a small one."""
    refuse = sc.ERRNO(errno.EAFNOSUPPORT)
    for name, allowed in (("socket", FAMILIES), ("socketpair", (socket.AF_UNIX,))):
        top = max(allowed)
        for family in range(top):
            if family not in allowed:
                rules.add_rule(refuse, name, sc.Arg(0, sc.EQ, family))
        rules.add_rule(refuse, name, sc.Arg(0, sc.GT, top))


def _number(name: str) -> int:
    """The number of a call every architecture has; FilterError where libseccomp does not
    know it (too old for this filter)."""
    import pyseccomp as sc

    number: int = sc.resolve_syscall(sc.Arch.NATIVE, name)
    if number < 0:
        raise FilterError(f"libseccomp does not know {name}: too old for the sandbox's filter")
    return number
