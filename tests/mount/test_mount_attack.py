"""The mount under attack: a hypothesis state machine runs random system calls through a real
mount and a tmpfs directory side by side, compares every result and errno, then the trees.

What it throws at the mount is what a careless or hostile program would: offsets and sizes
up to 10**15 and 2**62, directories nested past the kernel's PATH_MAX (reached through
directory descriptors and ``fchdir``, since one path argument may hold 4,095 bytes at most),
renames and unlinks of files that are open and then read and written through their old
descriptors, and many descriptors at once writing interleaved. The workspace's largest file
is set to ``LIMIT`` first: below it the mount must answer as tmpfs does; past it, where tmpfs
would grow the file, the mount must answer EFBIG and change nothing.

After each run the daemon must still serve a write and a read, have logged no traceback,
have kept its peak memory within its budget (``VmHWM``, as ``test_mount_limits`` reads it),
and the workspace must be fsck-clean.
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    multiple,
    rule,
    run_state_machine_as_test,
)

import agentfs
from tests.model import assert_clean, machine_settings
from tests.mount.conftest import Mounted, fresh_mount
from tests.mount.test_conformance import STEP
from tests.mount.test_mount_limits import GROWTH, _alive, _peak_rss
from tests.mount.test_mount_model import FLAGS, _stat, tree
from tests.syscalls import RENAME_EXCHANGE, RENAME_NOREPLACE, renameat2

pytestmark = pytest.mark.runs_first

MiB = 1 << 20
#: The workspace's largest file: small, so that a run can reach it and pass it cheaply.
LIMIT = 8 * MiB
#: Where a dive stops: past the longest path the API takes (TREE_PATH_MAX), which the mount,
#: addressing files by inode, does not ask for; a bound on a run's time only.
DEPTH_MAX = 100_000
#: Names looked up from a directory's descriptor: two files and a directory with two more.
NAMES = ["a", "b", "s", "s/a", "s/b"]
_runs = itertools.count()

names = st.sampled_from(NAMES)
#: Offsets and sizes: small ones, the limit's edges, and those of an attack.
sizes = st.one_of(
    st.integers(0, 70_000),
    st.integers(LIMIT - 4096, LIMIT + 4096),
    st.sampled_from([LIMIT, LIMIT + 1, 2**32, 2**62]),
    st.integers(0, 2**62),
)
offsets = st.one_of(
    st.integers(0, 70_000),
    st.integers(LIMIT - 4096, LIMIT + 16),
    st.sampled_from([LIMIT, 10**15]),
    st.integers(0, 10**15),
)
data = st.binary(max_size=3000) | st.builds(
    lambda b, n: b * n, st.binary(min_size=1, max_size=3), st.integers(1, MiB)
)
Outcome = tuple[str, object]


class Side:
    """One directory tree (tmpfs or the mount) and the descriptors open in it."""

    def __init__(self, root: Path, mount: bool) -> None:
        self.root = root
        self.mount = mount
        self.open: set[int] = set()
        self.last = -1

    def keep(self, fd: int) -> None:
        """Hold a descriptor a call opened; its number is no result to compare."""
        self.open.add(fd)
        self.last = fd

    def close_all(self) -> None:
        for fd in self.open:
            os.close(fd)
        self.open.clear()


@dataclass(frozen=True)
class Handle:
    """A descriptor opened alike on both sides (a file's or a directory's)."""

    ref: int
    ours: int
    flags: int = os.O_RDONLY
    depth: int = 0  # a directory's: its path's length below the run's root, in bytes

    def on(self, side: Side) -> int:
        return self.ours if side.mount else self.ref


def run(side: Side, call: Callable[[Side], object]) -> Outcome:
    """``call`` on ``side``: ("ok", what it returned) or (the errno's name, None)."""
    try:
        return "ok", call(side)
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc.errno)), None


def in_dir(d: Handle, call: Callable[[], object]) -> Callable[[Side], object]:
    """``call`` with the working directory ``d`` (``fchdir``): how a program reaches a tree
    deeper than one path argument may be, with calls that take no directory descriptor."""

    def inside(side: Side) -> object:
        here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fchdir(d.on(side))
            return call()
        finally:
            os.fchdir(here)
            os.close(here)

    return inside


class Attack(RuleBasedStateMachine):
    """Both sides start with a directory of their own; every rule runs on tmpfs, then on the
    mount, and their outcomes must be equal (or EFBIG on the mount past ``LIMIT``)."""

    files = Bundle("files")
    dirs = Bundle("dirs")

    def __init__(self, mounted: Mounted, start_rss: int) -> None:
        super().__init__()
        self.mounted = mounted
        self.start_rss = start_rss
        n = next(_runs)
        self.ref = Side(Path("/dev/shm") / f"agentfs-attack-{os.getpid()}-{n}", mount=False)
        self.ours = Side(mounted.dir / f"attack{n}", mount=True)
        for side in (self.ref, self.ours):
            side.root.mkdir()
            (side.root / "a").write_bytes(bytes(range(256)) * 40)

    # --- comparing -----------------------------------------------------------------------

    def same(self, what: str, call: Callable[[Side], object]) -> Outcome:
        expected = run(self.ref, call)
        got = run(self.ours, call)
        assert got == expected, f"{what}: the mount gave {got}, tmpfs {expected}"
        return expected

    def opened(
        self, what: str, call: Callable[[Side], object], flags: int, depth: int = 0
    ) -> Handle | None:
        """Open on both sides alike (``call`` keeps its descriptor on the side)."""
        if self.same(what, call)[0] != "ok":
            return None
        return Handle(self.ref.last, self.ours.last, flags, depth)

    def refused(
        self, what: str, probe: Callable[[Side], object], call: Callable[[Side], object]
    ) -> None:
        """A call that would take a file past ``LIMIT``: it is not run on tmpfs (where it would
        succeed, sparse); ``probe``, the same call at a size that changes nothing, tells
        whether tmpfs would refuse it for another reason first (a read-only descriptor, a
        directory, a missing name). Otherwise the mount must answer EFBIG."""
        expected = run(self.ref, probe)
        if expected[0] == "ok":
            expected = ("EFBIG", None)
        got = run(self.ours, call)
        assert got == expected, f"{what} past the limit: the mount gave {got}, want {expected}"

    @staticmethod
    def position(fd: Handle) -> int:
        """Where a write through ``fd`` lands on tmpfs: the end with O_APPEND."""
        if fd.flags & os.O_APPEND:
            return os.fstat(fd.ref).st_size
        return os.lseek(fd.ref, 0, os.SEEK_CUR)

    def sizes_agree(self, fd: Handle) -> None:
        self.same("fstat", lambda s: _stat(os.fstat(fd.on(s))))

    # --- the rules -------------------------------------------------------------------------

    @initialize(target=dirs)
    def top(self) -> Handle:
        """The run's own directory."""
        for side in (self.ref, self.ours):
            side.keep(os.open(side.root, os.O_RDONLY | os.O_DIRECTORY))
        return Handle(self.ref.last, self.ours.last)

    @initialize(target=files)
    def first(self) -> Handle:
        """A file to work on, open."""
        for side in (self.ref, self.ours):
            side.keep(os.open(side.root / "a", os.O_RDWR))
        return Handle(self.ref.last, self.ours.last, os.O_RDWR)

    @rule(target=files, d=dirs, name=names, flags=st.sampled_from(FLAGS))
    def open_file(self, d: Handle, name: str, flags: int) -> object:
        def call(s: Side) -> None:
            s.keep(os.open(name, flags | os.O_NONBLOCK, 0o644, dir_fd=d.on(s)))

        fd = self.opened(f"open {name} {flags:o}", call, flags)
        return multiple() if fd is None else fd

    @rule(target=files, d=dirs, name=names, flags=st.sampled_from(FLAGS), count=st.integers(2, 40))
    def open_many(self, d: Handle, name: str, flags: int, count: int) -> object:
        """Many descriptors of one file at once (each with its own position)."""
        opened = []
        for _ in range(count):
            fd = self.open_file(d, name, flags)
            if not isinstance(fd, Handle):
                break
            opened.append(fd)
        return multiple(*opened)

    @rule(fd=consumes(files))
    def close(self, fd: Handle) -> None:
        def call(s: Side) -> None:
            s.open.discard(fd.on(s))
            os.close(fd.on(s))

        self.same("close", call)

    def written(
        self, what: str, fd: Handle, at: int, payload: bytes, call: Callable[[Side, bytes], int]
    ) -> None:
        """A write of ``payload`` at ``at``: one that starts past ``LIMIT`` is EFBIG on the
        mount, one that crosses it writes what fits and returns the short count (as tmpfs
        would with ``LIMIT`` for its largest file, so tmpfs is given what fits)."""
        if payload and at >= LIMIT:
            event("a write past the limit")
            self.refused(what, lambda s: call(s, b""), lambda s: call(s, payload))
        elif at + len(payload) > LIMIT:
            event("a write across the limit")
            expected = run(self.ref, lambda s: call(s, payload[: LIMIT - at]))
            got = run(self.ours, lambda s: call(s, payload))
            assert got == expected, (
                f"{what} across the limit: the mount gave {got}, want {expected}"
            )
        else:
            self.same(what, lambda s: call(s, payload))

    @rule(fd=files, payload=data, offset=offsets)
    def pwrite(self, fd: Handle, payload: bytes, offset: int) -> None:
        at = os.fstat(fd.ref).st_size if fd.flags & os.O_APPEND else offset
        self.written(
            f"pwrite {len(payload)} at {offset}",
            fd,
            at,
            payload,
            lambda s, b: os.pwrite(fd.on(s), b, offset),
        )
        self.sizes_agree(fd)

    @rule(fd=files, payload=data)
    def write(self, fd: Handle, payload: bytes) -> None:
        self.written(
            f"write {len(payload)}",
            fd,
            self.position(fd),
            payload,
            lambda s, b: os.write(fd.on(s), b),
        )
        self.same("position", lambda s: os.lseek(fd.on(s), 0, os.SEEK_CUR))

    @rule(writes=st.lists(st.tuples(files, data, st.integers(0, LIMIT)), min_size=2, max_size=12))
    def interleave(self, writes: list[tuple[Handle, bytes, int]]) -> None:
        """Writes through several descriptors in turn, none yet closed: each sees the others'
        bytes, on the mount as on tmpfs, whatever its open files hold uncommitted."""
        for fd, payload, offset in writes:
            self.pwrite(fd, payload, offset)
            self.pread(fd, 64, offset)

    @rule(fd=files, offset=offsets)
    def lseek(self, fd: Handle, offset: int) -> None:
        self.same(f"lseek {offset}", lambda s: os.lseek(fd.on(s), offset, os.SEEK_SET))

    @rule(fd=files, count=st.integers(0, 100_000), offset=offsets)
    def pread(self, fd: Handle, count: int, offset: int) -> None:
        self.same(f"pread {count} at {offset}", lambda s: os.pread(fd.on(s), count, offset))

    @rule(fd=files, count=st.integers(0, 100_000))
    def read(self, fd: Handle, count: int) -> None:
        self.same(f"read {count}", lambda s: os.read(fd.on(s), count))

    @rule(fd=files, size=sizes)
    def ftruncate(self, fd: Handle, size: int) -> None:
        if size > LIMIT:
            event("a truncate past the limit")
            self.refused(
                f"ftruncate {size}",
                lambda s: os.ftruncate(fd.on(s), os.fstat(fd.on(s)).st_size),
                lambda s: os.ftruncate(fd.on(s), size),
            )
        else:
            self.same(f"ftruncate {size}", lambda s: os.ftruncate(fd.on(s), size))
        self.sizes_agree(fd)

    @rule(d=dirs, name=names, size=sizes)
    def truncate(self, d: Handle, name: str, size: int) -> None:
        """By name, from the directory as the working one (``truncate`` has no ``at`` form)."""

        def current() -> None:
            os.truncate(name, os.stat(name).st_size if os.path.exists(name) else 0)

        if size > LIMIT:
            event("a truncate past the limit")
            self.refused(
                f"truncate {name} {size}",
                in_dir(d, current),
                in_dir(d, lambda: os.truncate(name, size)),
            )
        else:
            self.same(f"truncate {name} {size}", in_dir(d, lambda: os.truncate(name, size)))

    @rule(fd=files)
    def fstat(self, fd: Handle) -> None:
        self.sizes_agree(fd)

    @rule(fd=files)
    def fsync(self, fd: Handle) -> None:
        self.same("fsync", lambda s: os.fsync(fd.on(s)))

    @rule(src=dirs, a=names, dst=dirs, b=names)
    def rename(self, src: Handle, a: str, dst: Handle, b: str) -> None:
        """Also over a file that is open, and of a directory a descriptor is held in."""
        self.same(
            f"rename {a} {b}",
            lambda s: os.rename(a, b, src_dir_fd=src.on(s), dst_dir_fd=dst.on(s)),
        )

    @rule(d=dirs, a=names, b=names, flags=st.sampled_from([RENAME_NOREPLACE, RENAME_EXCHANGE]))
    def rename2(self, d: Handle, a: str, b: str, flags: int) -> None:
        self.same(f"renameat2 {a} {b} {flags}", in_dir(d, lambda: renameat2(a, b, flags)))

    @rule(src=dirs, a=names, dst=dirs, b=names)
    def link(self, src: Handle, a: str, dst: Handle, b: str) -> None:
        self.same(
            f"link {a} {b}",
            lambda s: os.link(a, b, src_dir_fd=src.on(s), dst_dir_fd=dst.on(s)),
        )

    @rule(d=dirs, name=names)
    def unlink(self, d: Handle, name: str) -> None:
        self.same(f"unlink {name}", lambda s: os.unlink(name, dir_fd=d.on(s)))

    @rule(d=dirs, name=names)
    def mkdir(self, d: Handle, name: str) -> None:
        self.same(f"mkdir {name}", lambda s: os.mkdir(name, dir_fd=d.on(s)))

    @rule(d=dirs, name=names)
    def rmdir(self, d: Handle, name: str) -> None:
        self.same(f"rmdir {name}", lambda s: os.rmdir(name, dir_fd=d.on(s)))

    @rule(d=dirs, name=names)
    def lstat(self, d: Handle, name: str) -> None:
        self.same(
            f"stat {name}", lambda s: _stat(os.stat(name, dir_fd=d.on(s), follow_symlinks=False))
        )

    @rule(d=dirs)
    def listdir(self, d: Handle) -> None:
        self.same("listdir", lambda s: sorted(os.listdir(d.on(s))))

    def subdir(self, d: Handle, name: str, depth: int) -> Handle | None:
        """``mkdirat`` then ``openat`` of ``name`` in ``d``, compared; the new directory's
        descriptor, None when it could not be opened (on both sides)."""
        self.same(f"mkdir {name[:8]} at {depth}", lambda s: os.mkdir(name, dir_fd=d.on(s)))

        def call(s: Side) -> None:
            s.keep(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=d.on(s)))

        return self.opened(f"open {name[:8]} at {depth}", call, os.O_RDONLY, depth)

    @rule(target=dirs, d=dirs, levels=st.integers(1, 3) | st.integers(20, 26))
    def dive(self, d: Handle, levels: int) -> object:
        """``s`` in ``d``, then ``levels`` directories of 199-byte names inside it, made and
        opened one name at a time (``mkdirat``, ``openat``): past about 20 of them the tree
        is deeper than any path the kernel takes whole. The deepest is kept open."""
        here = d
        depth = d.depth
        for name in ["s", *[STEP] * levels]:
            depth += len(name) + 1
            if depth > DEPTH_MAX:
                break
            inner = self.subdir(here, name, depth)
            if inner is None:
                break
            if depth > 4096:
                event("a directory deeper than PATH_MAX")
            if here is not d:
                for side in (self.ref, self.ours):
                    os.close(here.on(side))
                    side.open.discard(here.on(side))
            here = inner
        return multiple() if here is d else here

    @rule(d=dirs, name=names, payload=data)
    def create_deep(self, d: Handle, name: str, payload: bytes) -> None:
        """A whole file written and read back from the working directory ``d``."""

        def call() -> bytes:
            with open(name, "wb") as f:
                f.write(payload)
            with open(name, "rb") as f:
                return f.read()

        self.same(f"write {name} whole", in_dir(d, call))

    # --- after each run ----------------------------------------------------------------------

    def teardown(self) -> None:
        try:
            event(f"descriptors open at the end: {len(self.ours.open) // 10 * 10}+")
            for side in (self.ref, self.ours):
                side.close_all()
            assert tree(self.ours.root) == tree(self.ref.root)
            m = self.mounted
            _alive(m)
            assert "Traceback" not in m.log.read_text(), m.log.read_text()
            grew = _peak_rss(m) - self.start_rss
            assert grew < GROWTH, f"the daemon grew by {grew // MiB} MiB"
        finally:
            for side in (self.ref, self.ours):
                side.close_all()
                shutil.rmtree(side.root, ignore_errors=not side.mount)
        with agentfs.open(self.mounted.db, readonly=True) as ws:
            assert_clean(ws)


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mounted]:
    """One mount for every run (each in a directory of its own), its files limited to
    ``LIMIT``."""

    def limit(ws: agentfs.Workspace) -> None:
        ws.set_limits(file_size=LIMIT)

    with fresh_mount(tmp_path_factory.mktemp("attack"), populate=limit) as m:
        yield m


def test_the_mount_answers_as_tmpfs_under_attack(attacked: Mounted) -> None:
    start = _peak_rss(attacked)

    class OnThisMount(Attack):
        def __init__(self) -> None:
            super().__init__(attacked, start)

    run_state_machine_as_test(
        OnThisMount,
        settings=machine_settings(40, 40, fixed=False, suppress=[HealthCheck.filter_too_much]),
    )
