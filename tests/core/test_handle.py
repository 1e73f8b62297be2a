"""``ws.open()``: file objects whose writes commit atomically at flush/close, one version each.

A hypothesis state machine drives a workspace handle and a real file on disk with the same
random calls (write, seek, truncate, read, flush) and requires the same answers; a second
connection reads the path after every step and must see exactly the content of the last
flush (never a mix); after close both files hold the same bytes and the handle made one
version, and fsck finds the workspace clean.
"""

from __future__ import annotations

import errno
import io
import os

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule

import agentfs
from agentfs.core.digests import digest
from agentfs.core.errors import StaleReadError
from tests.model import WorkspaceMachine, assert_clean, machine_settings

CHUNK = 512  # the smallest chunk size: small writes cross chunk boundaries often


class HandleAgainstARealFile(WorkspaceMachine):
    def __init__(self) -> None:
        super().__init__(chunk_size=CHUNK)
        self.other = self.open_workspace()  # a second connection
        self.real_path = os.path.join(self.tmp, "real")
        self.ours: io.RawIOBase | None = None
        self.real: io.FileIO | None = None
        self.flushed: bytes | None = None  # what other readers must see

    def teardown(self) -> None:
        for f in (self.ours, self.real):
            if f is not None and not f.closed:
                f.close()
        super().teardown()

    @initialize(
        initial=st.none() | st.binary(max_size=3 * CHUNK),
        mode=st.sampled_from(["r+b", "w+b", "a+b", "x+b"]),
    )
    def open_both(self, initial: bytes | None, mode: str) -> None:
        if initial is not None and mode == "x+b":
            mode = "w+b"
        if initial is None and mode == "r+b":
            mode = "w+b"
        if initial is not None:
            self.ws.write("/f", initial)
            with open(self.real_path, "wb") as f:
                f.write(initial)
        self.flushed = initial
        self._open(mode)

    def _open(self, mode: str) -> None:
        self.mode = mode
        self.ours = self.ws.open("/f", mode)  # type: ignore[assignment]
        self.real = open(self.real_path, mode, buffering=0)  # noqa: SIM115  # closed in teardown
        self.versions_before = len(self.ws.history("/f")) if self.ws.exists("/f") else 0

    @precondition(lambda self: self.ours is not None and self.ours.closed)
    @rule(mode=st.sampled_from(["r+b", "w+b", "a+b", "rb"]))
    def reopen(self, mode: str) -> None:
        self._open(mode)

    @precondition(lambda self: self.ours is not None and not self.ours.closed and self.writing)
    @rule(data=st.binary(max_size=2 * CHUNK + 3))
    def write(self, data: bytes) -> None:
        assert self.ours.write(data) == self.real.write(data)

    @precondition(lambda self: self.ours is not None and not self.ours.closed)
    @rule(offset=st.integers(0, 4 * CHUNK), whence=st.sampled_from([0, 1, 2]))
    def seek(self, offset: int, whence: int) -> None:
        if whence:
            offset -= min(offset, self.real.tell() if whence == 1 else self._real_size())
        assert self.ours.seek(offset, whence) == self.real.seek(offset, whence)

    @precondition(lambda self: self.ours is not None and not self.ours.closed and self.writing)
    @rule(size=st.none() | st.integers(0, 4 * CHUNK))
    def truncate(self, size: int | None) -> None:
        assert self.ours.truncate(size) == self.real.truncate(size)

    @precondition(lambda self: self.ours is not None and not self.ours.closed)
    @rule(size=st.integers(-1, 3 * CHUNK))
    def read(self, size: int) -> None:
        assert self.ours.read(size) == self.real.read(size)

    @precondition(lambda self: self.ours is not None and not self.ours.closed)
    @rule()
    def flush(self) -> None:
        self.ours.flush()
        self.real.flush()
        with open(self.real_path, "rb") as f:
            self.flushed = f.read()

    @precondition(lambda self: self.ours is not None and not self.ours.closed)
    @rule()
    def close(self) -> None:
        self.ours.close()
        self.real.close()
        with open(self.real_path, "rb") as f:
            self.flushed = f.read()
        assert self.ws.read("/f") == self.flushed
        history = self.ws.history("/f")
        assert len(history) - self.versions_before <= 1, "one version per handle at most"
        if self.writing:
            assert history[-1].hash == digest(self.flushed)
        assert_clean(self.ws)

    @invariant()
    def others_see_the_last_flush_whole(self) -> None:
        if self.ours is None:
            return
        try:
            seen = self.other.read("/f")
        except FileNotFoundError:
            seen = None
        assert seen == self.flushed

    @invariant()
    def positions_agree(self) -> None:
        if self.ours is not None and not self.ours.closed:
            assert self.ours.tell() == self.real.tell()

    @property
    def writing(self) -> bool:
        return self.mode != "rb"

    def _real_size(self) -> int:
        self.real.flush()
        return os.fstat(self.real.fileno()).st_size


HandleAgainstARealFile.TestCase.settings = machine_settings(150, 30, fixed=False)
test_handle_against_a_real_file = HandleAgainstARealFile.TestCase


# --- modes and errors -------------------------------------------------------------------------


def test_modes_refuse_what_open_refuses(ws: agentfs.Workspace) -> None:
    ws.write("/there", b"x")
    ws.mkdir("/dir")
    cases = [
        ("/missing", "r", errno.ENOENT),
        ("/missing", "rb+", errno.ENOENT),
        ("/there", "x", errno.EEXIST),
        ("/dir", "r", errno.EISDIR),
        ("/dir", "w", errno.EISDIR),
        ("/no/parent", "w", errno.ENOENT),
        ("/there/child", "w", errno.ENOTDIR),
        ("/there", "rw", errno.EINVAL),
        ("/there", "rbt", errno.EINVAL),
        ("/there", "q", errno.EINVAL),
    ]
    for path, mode, code in cases:
        with pytest.raises(OSError) as exc:
            ws.open(path, mode)
        assert exc.value.errno == code, (path, mode)
    assert ws.listdir("/") == ["dir", "there"] and ws.read("/there") == b"x"


def test_a_read_handle_cannot_write_and_a_write_handle_cannot_read(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"abc")
    with ws.open("/f", "rb") as f, pytest.raises(io.UnsupportedOperation):
        f.write(b"x")
    with ws.open("/f", "ab") as f, pytest.raises(io.UnsupportedOperation):
        f.read()
    f = ws.open("/f", "rb")
    f.close()
    with pytest.raises(ValueError):
        f.read()
    assert ws.read("/f") == b"abc" and len(ws.history("/f")) == 1


def test_a_read_only_workspace_opens_for_reading_only(ws: agentfs.Workspace) -> None:
    ws.write("/f", "text\n")
    with agentfs.open(ws.path, readonly=True) as reader:
        with reader.open("/f") as f:
            assert f.read() == "text\n"
        with pytest.raises(OSError) as exc:
            reader.open("/f", "a")
        assert exc.value.errno == errno.EROFS


# --- atomicity and versions ----------------------------------------------------------------------


def test_open_w_keeps_the_old_content_visible_until_the_flush(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"old content")
    with agentfs.open(ws.path) as other:
        with ws.open("/f", "wb") as f:
            f.write(b"new")
            assert other.read("/f") == b"old content"  # not truncated at open
            f.flush()
            assert other.read("/f") == b"new"
            f.write(b" and more")
            assert other.read("/f") == b"new"
        assert other.read("/f") == b"new and more"
    assert [v.size for v in ws.history("/f")] == [11, 12]  # one version for the handle


def test_a_handle_that_writes_nothing_makes_no_version(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"same")
    with ws.open("/f", "r+b") as f:
        assert f.read() == b"same"
    with ws.open("/f", "ab"):
        pass
    assert len(ws.history("/f")) == 1
    with ws.open("/new", "w"):
        pass
    assert ws.read("/new") == b""  # open("w") creates the file, as the built-in does


@pytest.mark.parametrize("size", [100, 40_000])  # bytes kept aside, or a copied-down inode
def test_settle_records_a_version_that_later_writes_leave_alone(
    ws: agentfs.Workspace, size: int
) -> None:
    """``settle`` (what the mount does when a program sets an open file's times): the bytes
    so far become a version at once, the handle stays open, and what it writes after, in
    place, is the next version: the settled one keeps its bytes."""
    first = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    with ws.open("/f", "wb") as f:
        f.write(first)
        f.settle()
        assert [v.size for v in ws.history("/f")] == [size]
        f.seek(0)
        f.write(b"REWRITTEN")
        f.settle()
        statements: list[str] = []
        ws.conn.set_exec_trace(lambda _cursor, sql, _bindings: statements.append(sql) or True)
        f.settle()  # nothing written since: nothing to do, here nor at the close
    ws.conn.set_exec_trace(None)
    assert statements == []
    second = b"REWRITTEN" + first[9:]
    assert ws.read("/f") == second
    assert [ws.read_version("/f", v.n) for v in ws.history("/f")] == [first, second]


def test_text_mode_and_append(ws: agentfs.Workspace) -> None:
    with ws.open("/t.txt", "w", encoding="utf-8") as f:
        f.write("héllo\n")
    with ws.open("/t.txt", "a") as f:
        f.write("wörld\n")
    with ws.open("/t.txt") as f:
        assert f.readlines() == ["héllo\n", "wörld\n"]
    with ws.open("/t.txt", "r+") as f:
        f.seek(0, os.SEEK_END)
        f.write("!")
        f.flush()
        assert ws.read("/t.txt") == "héllo\nwörld\n!".encode()
    assert len(ws.history("/t.txt")) == 3


def test_a_snapshot_keeps_what_it_saw_while_a_handle_rewrites(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"A" * 3000)
    ws.snapshots.create("before")
    with ws.open("/f", "r+b") as f:
        f.seek(1000)
        f.write(b"B" * 10)
    with ws.open("/g", "wb") as g:
        g.write(b"fresh")
    expected = b"A" * 1000 + b"B" * 10 + b"A" * 1990
    assert ws.read("/f") == expected
    ws.snapshots.restore("before")
    assert ws.read("/f") == b"A" * 3000
    assert not ws.exists("/g")


def test_large_sequential_writes_hash_as_they_go(ws: agentfs.Workspace) -> None:
    data = os.urandom(5 * 65536 + 123)
    with ws.open("/big", "wb") as f:
        for i in range(0, len(data), 7000):
            f.write(data[i : i + 7000])
    assert ws.read("/big") == data
    assert ws.version("/big").hash == digest(data)


def test_the_buffer_limit_flushes_by_itself(ws: agentfs.Workspace) -> None:
    piece = b"z" * ws.chunks.size
    with ws.open("/f", "wb", buffer_limit=2 * len(piece)) as f:
        f.write(piece)
        assert not ws.exists("/f")
        f.write(piece)  # two dirty chunks: the limit
        assert ws.read("/f") == piece * 2
        f.write(b"tail")
    assert ws.read("/f") == piece * 2 + b"tail"
    assert len(ws.history("/f")) == 1


def test_sparse_writes_read_as_zeros(ws: agentfs.Workspace) -> None:
    with ws.open("/s", "w+b") as f:
        f.seek(200_000)
        f.write(b"end")
        f.seek(0)
        assert f.read(10) == bytes(10)
    assert ws.read("/s") == bytes(200_000) + b"end"


def test_read_before_write_holds_across_flushes(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"v1")
    ws.read_before_write = True
    ws.thread = "t1"
    ws.read("/f")
    with ws.open("/f", "r+b") as f:
        f.write(b"A")
        f.flush()
        f.write(b"B")  # its own flush above does not make this write stale
    assert ws.read("/f", track=False) == b"AB"
    ws.thread = "t2"  # never read it
    f = ws.open("/f", "ab")
    f.write(b"x")
    with pytest.raises(StaleReadError):
        f.close()
    assert f.closed and ws.read("/f", track=False) == b"AB"
