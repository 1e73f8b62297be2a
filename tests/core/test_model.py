"""The workspace behaves like a real directory: a hypothesis state machine runs every operation
on a workspace and, through ``os``, on a plain directory on disk, and compares.

Each rule performs one operation on both and requires that both succeed or both fail with the
same errno. One rule switches between two Workspace objects on the same file, so each one's
cached directory paths are tested against the other's changes. After every step the whole trees
must be identical (names, types, permission bits, nlink of files, directories and symlinks, file
bytes, symlink targets) and fsck must find the workspace clean. Paths use a three-letter
alphabet and depth <= 3, so operations collide often.

Where the host legitimately differs, the model stays out of the way:
- symlink targets are relative and never contain ``..``: an absolute host target would escape
  the temporary directory, and agentfs resolves ``..`` lexically (fs.py's documented caveat)
  while the kernel resolves it physically; both are covered by test_namespace instead.
- the root is never operated on (the host's root is the temporary directory, not ``/``).
- no set-id bits in chmod: the kernel clears them on writes by unprivileged users.
- the tests run as root (as the project's CI does), so permission bits never deny access on the
  host, as they never do in agentfs.
"""

from __future__ import annotations

import os
import shutil
import stat

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule

from tests.model import NAMES, HostMachine, machine_settings, paths
from tests.syscalls import RENAME_EXCHANGE, renameat2

PATHS = paths(depth=3)
TARGETS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map("/".join)
DATA = st.binary(max_size=1300)  # up to three chunks of 512 bytes
OFFSETS = st.integers(min_value=0, max_value=1200)
MODES = st.sampled_from([0o000, 0o444, 0o600, 0o640, 0o644, 0o700, 0o755, 0o777])
CHUNK = 512


class WorkspaceVsHost(HostMachine):
    def __init__(self) -> None:
        self.old_umask = os.umask(0)  # modes given to os.open/mkdir apply verbatim, as in agentfs
        super().__init__(chunk_size=CHUNK)
        self.other = self.open_workspace()  # see switch_connection

    def teardown(self) -> None:
        super().teardown()
        os.umask(self.old_umask)

    # --- content ----------------------------------------------------------------------------

    @rule(path=PATHS, data=DATA, mode=MODES)
    def write(self, path: str, data: bytes, mode: int) -> None:
        def host() -> None:
            fd = os.open(self.h(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

        self.both(f"write {path}", lambda: self.ws.write(path, data, mode=mode), host)

    @rule(path=PATHS, data=DATA, offset=OFFSETS)
    def pwrite(self, path: str, data: bytes, offset: int) -> None:
        def host() -> int:
            fd = os.open(self.h(path), os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                return os.pwrite(fd, data, offset)
            finally:
                os.close(fd)

        written = self.both(
            f"pwrite {path}@{offset}", lambda: self.ws.pwrite(path, data, offset), host
        )
        assert written[0] == written[1]

    @rule(path=PATHS, data=DATA)
    def append(self, path: str, data: bytes) -> None:
        def host() -> None:
            fd = os.open(self.h(path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

        self.both(f"append {path}", lambda: self.ws.append(path, data), host)

    @rule(path=PATHS, size=st.integers(min_value=0, max_value=1600))
    def truncate(self, path: str, size: int) -> None:
        self.both(
            f"truncate {path} {size}",
            lambda: self.ws.truncate(path, size),
            lambda: os.truncate(self.h(path), size),
        )

    # --- namespace --------------------------------------------------------------------------

    @rule(path=PATHS, mode=MODES)
    def mkdir(self, path: str, mode: int) -> None:
        self.both(
            f"mkdir {path}", lambda: self.ws.mkdir(path, mode), lambda: os.mkdir(self.h(path), mode)
        )

    @rule(path=PATHS, recursive=st.booleans())
    def remove(self, path: str, recursive: bool) -> None:
        def host() -> None:
            if stat.S_ISDIR(os.lstat(self.h(path)).st_mode):
                (shutil.rmtree if recursive else os.rmdir)(self.h(path))
            else:
                os.unlink(self.h(path))

        self.both(
            f"remove {path} recursive={recursive}",
            lambda: self.ws.remove(path, recursive=recursive),
            host,
        )

    @rule(src=PATHS, dst=PATHS)
    def rename(self, src: str, dst: str) -> None:
        self.both(
            f"rename {src} {dst}",
            lambda: self.ws.rename(src, dst),
            lambda: os.rename(self.h(src), self.h(dst)),
        )

    @rule(a=PATHS, b=PATHS)
    def exchange(self, a: str, b: str) -> None:
        self.both(
            f"exchange {a} {b}",
            lambda: self.ws.exchange(a, b),
            lambda: renameat2(self.h(a), self.h(b), RENAME_EXCHANGE),
        )

    @rule(src=PATHS, dst=PATHS)
    def link(self, src: str, dst: str) -> None:
        self.both(
            f"link {src} {dst}",
            lambda: self.ws.link(src, dst),
            lambda: os.link(self.h(src), self.h(dst), follow_symlinks=False),
        )

    @rule(link_target=TARGETS, path=PATHS)
    def symlink(self, link_target: str, path: str) -> None:
        self.both(
            f"symlink {link_target} {path}",
            lambda: self.ws.symlink(link_target, path),
            lambda: os.symlink(link_target, self.h(path)),
        )

    @rule(path=PATHS, mode=MODES)
    def chmod(self, path: str, mode: int) -> None:
        self.both(
            f"chmod {path} {mode:o}",
            lambda: self.ws.chmod(path, mode),
            lambda: os.chmod(self.h(path), mode),
        )

    # --- lookups that follow symlinks (the tree comparison below never follows them) ---------

    @rule(path=PATHS)
    def read(self, path: str) -> None:
        def host() -> bytes:
            with open(self.h(path), "rb") as f:
                return f.read()

        ws_bytes, host_bytes = self.both(f"read {path}", lambda: self.ws.read(path), host)
        assert ws_bytes == host_bytes

    @rule(path=PATHS)
    def stat(self, path: str) -> None:
        def summary(s) -> tuple[int, int, int]:
            return s.st_mode, s.st_nlink, s.st_size if stat.S_ISREG(s.st_mode) else 0

        ws_st, host_st = self.both(
            f"stat {path}", lambda: self.ws.stat(path), lambda: os.stat(self.h(path))
        )
        if ws_st is not None:
            assert summary(ws_st) == summary(host_st)

    @rule(path=PATHS)
    def listdir(self, path: str) -> None:
        ws_names, host_names = self.both(
            f"listdir {path}", lambda: self.ws.listdir(path), lambda: os.listdir(self.h(path))
        )
        if ws_names is not None:
            assert ws_names == sorted(host_names)

    @rule()
    def switch_connection(self) -> None:
        """Go on through the other Workspace on the same file: its cached directory paths
        must not outlive what this one changed meanwhile."""
        self.ws, self.other = self.other, self.ws

    # --- the invariants (and fsck's, HostMachine's) -------------------------------------------

    @invariant()
    def trees_are_identical(self) -> None:
        assert self._ws_tree("/") == self._host_tree("/")

    def _host_tree(self, path: str) -> dict[str, tuple]:
        s = os.lstat(self.h(path))
        out = {path: self._entry(s, lambda: os.readlink(self.h(path)), self._host_bytes(path))}
        if stat.S_ISDIR(s.st_mode):
            for name in sorted(os.listdir(self.h(path))):
                out.update(self._host_tree(path.rstrip("/") + "/" + name))
        return out

    def _host_bytes(self, path: str):
        def read() -> bytes:
            with open(self.h(path), "rb") as f:
                return f.read()

        return read

    def _ws_tree(self, path: str) -> dict[str, tuple]:
        s = self.ws.lstat(path)
        out = {path: self._entry(s, lambda: self.ws.readlink(path), lambda: self.ws.read(path))}
        if stat.S_ISDIR(s.st_mode):
            for name in self.ws.listdir(path):
                out.update(self._ws_tree(path.rstrip("/") + "/" + name))
        return out

    @staticmethod
    def _entry(s, readlink, read) -> tuple:
        kind = stat.S_IFMT(s.st_mode)
        if kind == stat.S_IFLNK:
            body = readlink()
        elif kind == stat.S_IFREG:
            body = read()
        else:
            body = None
        return stat.filemode(s.st_mode), s.st_nlink, body


TestWorkspaceMatchesHostDirectory = WorkspaceVsHost.TestCase
TestWorkspaceMatchesHostDirectory.settings = machine_settings(120, 40)

#: Minutes of hypothesis: started before the rest of the suite (tests/conftest.py).
pytestmark = pytest.mark.runs_first
