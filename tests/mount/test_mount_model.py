"""The mount against a tmpfs directory: the same random system calls on both, every result
and errno compared, then the trees (hypothesis)."""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.mount.conftest import Mounted, fresh_mount
from tests.syscalls import RENAME_EXCHANGE, RENAME_NOREPLACE, renameat2

NAMES = ["a", "b", "d", "d/a", "d/b", "e", "e/a"]
FLAGS = [
    os.O_RDONLY,
    os.O_RDWR,
    os.O_WRONLY | os.O_CREAT,
    os.O_RDWR | os.O_CREAT | os.O_EXCL,
    os.O_WRONLY | os.O_TRUNC,
    os.O_RDWR | os.O_CREAT | os.O_TRUNC,
    os.O_WRONLY | os.O_APPEND | os.O_CREAT,
    os.O_RDWR | os.O_APPEND,
]
_counter = itertools.count()

name = st.sampled_from(NAMES)
offset = st.integers(0, 70_000)
data = st.binary(min_size=0, max_size=3000) | st.builds(
    lambda b, n: b * n, st.binary(min_size=1, max_size=3), st.integers(1, 30_000)
)
fd_index = st.integers(0, 3)
op = st.one_of(
    st.tuples(st.just("open"), name, st.sampled_from(FLAGS)),
    st.tuples(st.just("pwrite"), fd_index, data, offset),
    st.tuples(st.just("write"), fd_index, data),
    st.tuples(st.just("pread"), fd_index, st.integers(0, 5000), offset),
    st.tuples(st.just("ftruncate"), fd_index, offset),
    st.tuples(st.just("close"), fd_index),
    st.tuples(st.just("truncate"), name, offset),
    st.tuples(st.just("rename"), name, name),
    st.tuples(
        st.just("renameat2"), name, name, st.sampled_from([RENAME_NOREPLACE, RENAME_EXCHANGE])
    ),
    st.tuples(st.just("link"), name, name),
    st.tuples(st.just("unlink"), name),
    st.tuples(st.just("mkdir"), name),
    st.tuples(st.just("rmdir"), name),
    st.tuples(st.just("mkfifo"), name),
    st.tuples(st.just("symlink"), st.sampled_from(["a", "d/a", "../a", "nowhere"]), name),
    st.tuples(st.just("chmod"), name, st.sampled_from([0o600, 0o644, 0o755, 0o700])),
    st.tuples(st.just("utime"), name, st.integers(0, 2**40)),
    st.tuples(st.just("stat"), name),
    st.tuples(st.just("listdir"), st.sampled_from(["", "d", "e"])),
)


class Side:
    """One directory and its open descriptors."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fds: list[int] = []

    def path(self, rel: str) -> str:
        return str(self.root / rel) if rel else str(self.root)

    def fd(self, index: int) -> int:
        if not self.fds:
            raise OSError(9, "no descriptor open")
        return self.fds[index % len(self.fds)]

    def apply(self, step: tuple) -> object:
        kind, *args = step
        calls: dict[str, Callable[..., object]] = {
            # O_NONBLOCK: opening a FIFO must not wait for a peer (no effect on other files)
            "open": lambda n, f: self.fds.append(os.open(self.path(n), f | os.O_NONBLOCK, 0o644)),
            "pwrite": lambda i, b, o: os.pwrite(self.fd(i), b, o),
            "write": lambda i, b: os.write(self.fd(i), b),
            "pread": lambda i, n, o: os.pread(self.fd(i), n, o),
            "ftruncate": lambda i, n: os.ftruncate(self.fd(i), n),
            "close": lambda i: os.close(self.fds.pop(i % len(self.fds)) if self.fds else -1),
            "truncate": lambda n, size: os.truncate(self.path(n), size),
            "rename": lambda a, b: os.rename(self.path(a), self.path(b)),
            "renameat2": lambda a, b, f: renameat2(self.path(a), self.path(b), f),
            "link": lambda a, b: os.link(self.path(a), self.path(b)),
            "unlink": lambda n: os.unlink(self.path(n)),
            "mkdir": lambda n: os.mkdir(self.path(n)),
            "rmdir": lambda n: os.rmdir(self.path(n)),
            "mkfifo": lambda n: os.mkfifo(self.path(n), 0o600),
            "symlink": lambda t, n: os.symlink(t, self.path(n)),
            "chmod": lambda n, m: os.chmod(self.path(n), m),
            "utime": lambda n, t: self._utime(self.path(n), t),
            "stat": lambda n: _stat(os.lstat(self.path(n))),
            "listdir": lambda n: sorted(os.listdir(self.path(n))),
        }
        try:
            return ("ok", calls[kind](*args))
        except OSError as exc:
            return ("error", exc.errno)

    @staticmethod
    def _utime(path: str, t: int) -> tuple[int, int]:
        """Set the times, and read them back (the only times both sides can agree on)."""
        os.utime(path, ns=(t, t + 1))
        s = os.stat(path)
        return s.st_atime_ns, s.st_mtime_ns

    def close_all(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


def _stat(s: os.stat_result) -> tuple:
    """What both sides must agree on: type, permissions, links and size of a file (not
    inode numbers, nor times the two sides stamped at different moments, nor a directory's
    size, which is the host filesystem's own business)."""
    if stat.S_ISDIR(s.st_mode):
        return (stat.S_IFMT(s.st_mode), stat.S_IMODE(s.st_mode))
    return (stat.S_IFMT(s.st_mode), stat.S_IMODE(s.st_mode), s.st_nlink, s.st_size)


def tree(root: Path) -> dict[str, tuple]:
    """Every entry below ``root``: kind, mode and content. A directory the steps made
    impassable to a normal user (root is not held by modes) is opened up once its mode is
    recorded, on both sides alike, so that what is inside can be compared too. Each entry is
    reached from its directory's descriptor (``fwalk``), never by its whole path, so a tree
    deeper than the kernel's PATH_MAX (4,096 bytes) is read whole too."""
    out = {}
    for dirpath, dirnames, filenames, dirfd in os.fwalk(root):
        for n in dirnames + filenames:
            s = os.stat(n, dir_fd=dirfd, follow_symlinks=False)
            if stat.S_ISDIR(s.st_mode) and not os.access(n, os.R_OK | os.X_OK, dir_fd=dirfd):
                os.chmod(n, s.st_mode | 0o500, dir_fd=dirfd)  # before fwalk goes into it
            content: object = None
            if stat.S_ISREG(s.st_mode):
                fd = os.open(n, os.O_RDONLY, dir_fd=dirfd)
                with open(fd, "rb") as f:
                    content = f.read()
            elif stat.S_ISLNK(s.st_mode):
                content = os.readlink(n, dir_fd=dirfd)
            out[os.path.relpath(os.path.join(dirpath, n), root)] = (
                stat.S_IFMT(s.st_mode),
                stat.S_IMODE(s.st_mode),
                content,
            )
    return out


@pytest.fixture(scope="module")
def shared_mount(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mounted]:
    """One mount for every example (each works in a directory of its own)."""
    with fresh_mount(tmp_path_factory.mktemp("model")) as m:
        yield m


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(op, min_size=1, max_size=40))
def test_same_results_as_tmpfs(shared_mount: Mounted, steps: list[tuple]) -> None:
    n = next(_counter)
    # each side's cases share a parent holding nothing else, so that a symlink out of a case
    # ("../a") names the same nothing on both
    reference_root = Path("/dev/shm") / f"agentfs-model-{os.getpid()}" / f"case{n}"
    ours_root = shared_mount.dir / f"case{n}"
    reference_root.mkdir(parents=True)
    ours_root.mkdir()
    reference, ours = Side(reference_root), Side(ours_root)
    try:
        for side in (reference, ours):  # something to work on: a small and a large file
            (side.root / "a").write_bytes(b"small")
            (side.root / "d").mkdir()
            (side.root / "d" / "a").write_bytes(bytes(range(256)) * 80)
            side.apply(("open", "a", os.O_RDWR))
            side.apply(("open", "d/a", os.O_RDWR))
        for i, step in enumerate(steps):
            expected = reference.apply(step)
            got = ours.apply(step)
            assert got == expected, f"step {i} {step[0]}{step[1:]!r}: {got} != {expected}"
            event(f"{step[0]} {expected[0]}")
        reference.close_all()
        ours.close_all()
        assert tree(ours_root) == tree(reference_root)
    finally:
        reference.close_all()
        ours.close_all()
        os.system(f"chmod -R u+rwX '{reference_root}'; rm -rf '{reference_root.parent}'")
