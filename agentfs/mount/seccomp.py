"""The system calls a sandboxed command may not make: a seccomp-BPF program for bubblewrap.

bubblewrap loads the program (``--seccomp FD``) just before it starts the command, so it holds
for the command and everything the command starts. It is built with libseccomp (Debian's
``libseccomp2``, through PyPI's ``pyseccomp``), which writes the architecture check and the
syscall numbers for this machine: a call made through another ABI (32-bit ``int 0x80`` on
x86-64, x32) kills the process instead of slipping past the numbers.

What it refuses, and why (the rest of the sandbox already makes most of these fail; the
filter is the second wall, as in Flatpak's and Chrome's sandboxes):

- mounting and the new mount API, ``pivot_root``: the command's view of the filesystem
  stays what bubblewrap built;
- ``unshare``, ``setns``, a ``clone`` with ``CLONE_NEWUSER``: no new namespaces, whose
  capabilities are the first step of most kernel exploits; ``clone3`` is answered ENOSYS,
  so the C library falls back to ``clone``, whose flags the filter can read;
- the kernel keyrings, ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring``: large
  kernel surfaces that a build or a test never needs;
- ``ptrace`` and ``process_vm_readv``/``writev``: no reading or steering another process;
- ``TIOCSTI`` and ``TIOCLINUX`` ioctls: no typing into a terminal;
- loading kernel modules, ``kexec``, ``reboot``, swap, ``acct``, quotas, ``syslog``,
  ``open_by_handle_at``, ``iopl``/``ioperm``.
"""

from __future__ import annotations

import errno
import functools
import tempfile

#: Refused with EPERM, whatever their arguments.
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
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "open_by_handle_at",
    "iopl",
    "ioperm",
)
#: Answered ENOSYS, as if this kernel had no such call: programs fall back to another way.
ABSENT = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")
CLONE_NEWUSER = 0x10000000
#: ioctl requests that push characters into a terminal's input.
TIOCSTI = 0x5412
TIOCLINUX = 0x541C


def unavailable() -> str | None:
    """Why the filter cannot be built here (None: it can)."""
    try:
        import pyseccomp  # noqa: F401  (loads libseccomp)
    except (ImportError, OSError) as exc:
        return f"libseccomp is missing (Debian package libseccomp2, PyPI pyseccomp): {exc}"
    return None


@functools.cache
def program() -> bytes:
    """The filter as a BPF program, the form ``bwrap --seccomp`` reads."""
    import pyseccomp as sc

    rules = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in REFUSED:
        _add(rules, sc.ERRNO(errno.EPERM), name)
    for name in ABSENT:
        _add(rules, sc.ERRNO(errno.ENOSYS), name)
    newuser = sc.Arg(0, sc.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
    rules.add_rule(sc.ERRNO(errno.EPERM), "clone", newuser)
    for request in (TIOCSTI, TIOCLINUX):
        # the kernel reads the request as 32 bits: compare only those
        rules.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    with tempfile.TemporaryFile() as exported:
        rules.export_bpf(exported)
        exported.seek(0)
        return exported.read()


def _add(rules: object, action: int, name: str) -> None:
    """Refuse ``name`` where this machine has it (libseccomp knows each architecture's calls:
    some have no ``iopl``, an older one may lack the newest calls)."""
    import pyseccomp as sc

    try:
        number = sc.resolve_syscall(sc.Arch.NATIVE, name)
    except (OSError, ValueError):
        return
    if number >= 0:
        rules.add_rule(action, number)  # type: ignore[attr-defined]
