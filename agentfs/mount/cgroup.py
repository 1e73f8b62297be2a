"""A memory cgroup per sandboxed command: the memory of all its processes together.

Per-process limits cannot bound what many processes hold between them, nor shared memory; a
cgroup's limit can, and past it the kernel's OOM killer ends a process of this command and of
nothing else. Where no cgroup can be made (``find``: ``$AGENTFS_CGROUP``, else a delegated
place below this process's own), commands run with the per-process limits alone
(docs/security.md, "Memory in all").
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import time
from dataclasses import dataclass
from pathlib import Path

#: Names the directory a delegated cgroup hierarchy lets agentfs make its cgroups in.
ENV = "AGENTFS_CGROUP"
#: How long removing a cgroup waits for the kernel to finish with its last processes.
REMOVE_TIMEOUT = 5.0
_serial = itertools.count()


@dataclass(frozen=True)
class Place:
    """A directory of a cgroup hierarchy (v1's memory one, or v2's) where we may make
    cgroups, and the names of its files, which differ between the two versions."""

    parent: Path
    version: int

    @property
    def limit_file(self) -> str:
        return "memory.limit_in_bytes" if self.version == 1 else "memory.max"

    @property
    def swap_file(self) -> str:
        """Swap is bounded with the memory: v1 bounds both together, v2 swap alone."""
        return "memory.memsw.limit_in_bytes" if self.version == 1 else "memory.swap.max"

    @property
    def events_file(self) -> str:
        """Where the kernel counts the processes it killed at the limit (``oom_kill N``)."""
        return "memory.oom_control" if self.version == 1 else "memory.events"

    def describe(self) -> str:
        return f"cgroup v{self.version}, in {self.parent}"


class MemoryCgroup:
    """One command's cgroup, limited to ``limit`` bytes of memory and none of swap beyond
    them; ``close`` removes it (the command has ended by then)."""

    def __init__(self, place: Place, limit: int) -> None:
        self.place = place
        self.path = place.parent / f"agentfs-{os.getpid()}-{next(_serial)}"
        try:
            self.path.mkdir(mode=0o755)
        except FileExistsError:  # left by a killed agentfs that had our pid; its commands
            self.path.rmdir()  # died with it (--die-with-parent), so it is empty
            self.path.mkdir(mode=0o755)
        try:
            self._write(place.limit_file, str(limit))
            if (self.path / place.swap_file).exists():  # absent where swap is not accounted
                self._write(place.swap_file, str(limit) if place.version == 1 else "0")
        except BaseException:
            self.close()
            raise

    def _write(self, name: str, value: str) -> None:
        (self.path / name).write_text(value)

    def adopt(self, pid: int) -> None:
        """Move process ``pid`` into the cgroup (its children are born there)."""
        self._write("cgroup.procs", str(pid))

    def oom_kills(self) -> int:
        """How many of the command's processes the kernel killed at the limit."""
        for line in (self.path / self.place.events_file).read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def close(self) -> None:
        """Remove the cgroup, waiting briefly for the kernel to let go of its processes
        (they are dead; a cgroup with processes cannot be removed)."""
        deadline = time.monotonic() + REMOVE_TIMEOUT
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)


def make(limit: int) -> MemoryCgroup | None:
    """A cgroup limited to ``limit`` bytes for one command, where this host allows it."""
    place = find()
    return None if isinstance(place, str) else MemoryCgroup(place, limit)


@functools.cache
def find() -> Place | str:
    """Where commands' cgroups go, or why nowhere (looked up once per process)."""
    named = os.environ.get(ENV)
    if named:
        return _named(Path(named))
    mounts = _mounts()
    own: dict[str, str] = {}  # this process's cgroup in each hierarchy, by controller ("" for v2's)
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, controllers, path = line.split(":", 2)
        own |= dict.fromkeys(controllers.split(","), path)
    if "memory" in own and "memory" in mounts:
        return _writable(Place(_under(mounts["memory"], own["memory"]), 1))
    if "" in own and "" in mounts:
        return _v2(_under(mounts[""], own[""]), mounts[""][1])
    return "no memory cgroup controller is mounted"


def _named(parent: Path) -> Place | str:
    if (parent / "cgroup.controllers").exists():
        return _writable(Place(parent, 2))
    if (parent / "memory.limit_in_bytes").exists():
        return _writable(Place(parent, 1))
    return f"{ENV}={parent} is not a directory of a memory cgroup hierarchy"


def _v2(own: Path, mountpoint: Path) -> Place | str:
    """The nearest cgroup at or above ``own`` whose children get the memory controller."""
    for candidate in (own, *own.parents):
        if not candidate.is_relative_to(mountpoint):
            break
        with contextlib.suppress(OSError):
            if "memory" in (candidate / "cgroup.subtree_control").read_text().split():
                return _writable(Place(candidate, 2))
    return "cgroup v2 hands no memory controller down to this process's cgroups"


def _writable(place: Place) -> Place | str:
    if os.access(place.parent, os.W_OK) and os.access(place.parent / "cgroup.procs", os.W_OK):
        return place
    return f"{place.describe()} is not writable by this user (not delegated; see {ENV})"


def _mounts() -> dict[str, tuple[str, Path]]:
    """The cgroup hierarchies mounted here, by controller ("" for v2's): the root they show
    and where they are mounted."""
    found: dict[str, tuple[str, Path]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, after = line.partition(" - ")
        parts, kinds = fields.split(), after.split()
        if kinds[0] == "cgroup2":
            found.setdefault("", (_unescape(parts[3]), Path(_unescape(parts[4]))))
        elif kinds[0] == "cgroup":
            for option in kinds[2].split(","):
                found.setdefault(option, (_unescape(parts[3]), Path(_unescape(parts[4]))))
    return found


def _under(mount: tuple[str, Path], path: str) -> Path:
    """The directory of cgroup ``path`` (as /proc/self/cgroup names it) in a hierarchy
    mounted at ``mount`` (whose root is itself a cgroup, in a container)."""
    root, mountpoint = mount
    relative = os.path.relpath(path, root) if path.startswith(root) else path.lstrip("/")
    return mountpoint / relative if relative != "." else mountpoint


def _unescape(field: str) -> str:
    """mountinfo writes a space, tab, newline and backslash in octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field
