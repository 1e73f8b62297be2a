"""Naming a live process so that another process can tell whether it is still running.

A durable pin (``ws_pin``) must stop counting once its process is gone: the boot id, pid and
start time name a process uniquely, where a pid alone is reused. Processes in another pid
namespace cannot be looked up from here, so their pins are taken as live.
"""

from __future__ import annotations

import functools
import os
import secrets


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/PID/stat`` (counted after the command name, which may hold spaces
    and parentheses: split after its last ')'), or None if there is no such process."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").removeprefix("pid:").strip("[]")
    except OSError:
        return "?"


@functools.cache
def _boot_and_namespace() -> tuple[str, str]:
    return _read("/proc/sys/kernel/random/boot_id") or "?", _namespace()


def this_process() -> str:
    """``boot:pidns:pid:start`` of the calling process (computed per call: a fork has its own
    pid and start time)."""
    boot, namespace = _boot_and_namespace()
    pid = os.getpid()
    return f"{boot}:{namespace}:{pid}:{_start_time(pid) or '?'}"


def this_connection() -> str:
    """``this_process()`` plus a tag telling this process's connections apart (each clears
    only its own pins of files it has closed: ``Orphans.clear_stale_pins``)."""
    return f"{this_process()}/{secrets.token_hex(4)}"


def alive(holder: str) -> bool:
    """Is the process of ``holder`` (``this_process`` or ``this_connection``) still running?
    False for one of an earlier boot, one that exited (its pid gone or reused), and a
    malformed name."""
    parts = holder.split("/", 1)[0].split(":")
    if len(parts) != 4 or not parts[2].isdigit():
        return False
    boot, namespace, pid, start = parts
    here_boot, here_namespace = _boot_and_namespace()
    if boot != here_boot:
        return False
    if namespace != here_namespace:
        return True  # not ours to look up (see the module docstring)
    return _start_time(int(pid)) == start
