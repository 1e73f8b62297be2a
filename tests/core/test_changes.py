"""The core's hooks (``core.changes``): a bare ``FileSystem`` keeps no history, the hooks are
called at the points the contract names, and a hook that refuses leaves nothing changed.

These pin the seam history attaches through, which every writer reaches (the API, the mount
and a sync pull all change files through ``FileSystem``): if the core stopped calling a hook,
or called it outside the operation's transaction, history would silently miss a change; the
history suites would catch most of that, these say which hook."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs import db
from agentfs.core.changes import Change, Changes, Place, Rewrite
from agentfs.core.fs import FileSystem, WriteTarget
from agentfs.core.inodes import Stat


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[FileSystem]:
    """A migrated workspace file opened as nothing but the core."""
    conn = db.connect(tmp_path / "bare.db")
    db.migrate(conn)
    yield FileSystem(conn)
    conn.close()


def _count(fs: FileSystem, table: str) -> int:
    return int(fs.conn.execute(f"SELECT count(*) FROM {table}").get)


def test_a_bare_filesystem_keeps_no_history(bare: FileSystem) -> None:
    bare.write("/a.txt", b"one", parents=True)
    bare.write("/a.txt", b"two")
    bare.pwrite("/a.txt", b"T", 0)
    bare.append("/a.txt", b"!")
    bare.truncate("/a.txt", 3)
    with bare.open("/b.bin", "wb") as f:
        f.write(b"x" * 5000)
    bare.link("/a.txt", "/c.txt")
    bare.rename("/a.txt", "/d.txt")
    bare.mkdir("/dir/sub", parents=True)
    bare.write("/dir/sub/e", b"e")
    bare.remove("/dir", recursive=True)
    assert bare.read("/d.txt") == b"Two"
    assert bare.read("/c.txt") == b"Two"
    assert bare.read("/b.bin") == b"x" * 5000
    assert bare.listdir("/") == ["b.bin", "c.txt", "d.txt"]
    for table in ("ws_version", "ws_kept", "ws_dirty", "ws_read"):
        assert _count(bare, table) == 0, table


def _told(change: Change) -> tuple[object, ...]:
    """What a ``Change`` says, in short: the whole new content, or where it leaves bytes
    unchanged and what it appended, and whether a handle made it (its first commit?)."""
    if change.data is not None:
        return ("whole", change.data)
    return (change.unchanged_below, change.appended, change.by_handle and change.first)


class Recorder(Changes):
    """Records the hooks called on it, with what identifies each call."""

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        self.calls: list[tuple[object, ...]] = []
        self.refuse = False

    def guard(self, target: WriteTarget) -> None:
        self.calls.append(("guard", self._path(target)))
        if self.refuse:
            raise PermissionError("refused by the hook")

    def changing(self, target: WriteTarget, change: Change) -> Rewrite:
        self.calls.append(("changing", self._path(target), *_told(change)))
        return Rewrite(target.size, "memo")

    def changed(self, target: WriteTarget, change: Change, size: int, memo: object = None) -> None:
        self.calls.append(("changed", self._path(target), size, memo, *_told(change)))

    def closed(self, target: WriteTarget, size: int, hash_: bytes | None) -> None:
        self.calls.append(("closed", self._path(target), size, hash_ is not None))

    def touched(self, target: WriteTarget) -> None:
        self.calls.append(("touched", self._path(target)))

    def _path(self, target: WriteTarget) -> str:
        return self.fs.path_in(target.parent_ino, target.name)

    def linked(self, parent_ino: int, name: str, ino: int) -> None:
        path = self.fs.path_in(parent_ino, name)
        self.calls.append(("linked", path))

    def deleting(self, parent_ino: int, name: str, mode: int) -> None:
        path = self.fs.path_in(parent_ino, name)
        self.calls.append(("deleting", path))

    def moving(self, src: Place, dst: Place, ino: int, mode: int) -> None:
        self.calls.append(("moving", self.fs.path_in(*src), self.fs.path_in(*dst)))

    def reader(self) -> str | None:
        return "t1"

    def read(self, reader: str, path: str, st: Stat, whole: bytes | None) -> None:
        self.calls.append(("read", reader, path, whole))


@pytest.fixture
def recorded(bare: FileSystem) -> Recorder:
    bare.hooks = Recorder(bare)
    return bare.hooks


def test_each_operation_calls_its_hooks(bare: FileSystem, recorded: Recorder) -> None:
    bare.write("/f", b"new")
    bare.write("/f", b"newer")
    bare.write("/f", b"newer")  # the recorder always answers "write it"
    bare.pwrite("/f", b"N", 0)
    bare.pwrite("/f", b"N", 0)  # changes no byte: times only
    bare.append("/f", b"+")
    bare.truncate("/f", 2)
    assert bare.read("/f") == b"Ne"
    bare.link("/f", "/g")
    bare.rename("/g", "/h")
    bare.remove("/h")
    with bare.open("/f", "r+b") as f:
        f.seek(2)
        f.write(b"w!")
    assert recorded.calls == [
        ("changed", "/f", 3, None, "whole", b"new"),  # a new file: nothing to keep first
        ("guard", "/f"),
        ("changing", "/f", "whole", b"newer"),
        ("changed", "/f", 5, "memo", "whole", b"newer"),
        ("guard", "/f"),
        ("changing", "/f", "whole", b"newer"),
        ("changed", "/f", 5, "memo", "whole", b"newer"),
        ("guard", "/f"),
        ("changing", "/f", 0, None, False),
        ("changed", "/f", 5, None, 0, None, False),
        ("guard", "/f"),
        ("touched", "/f"),
        ("guard", "/f"),
        ("changing", "/f", 5, b"+", False),  # an append leaves every old byte in place
        ("changed", "/f", 6, None, 5, b"+", False),
        ("guard", "/f"),
        ("changing", "/f", 2, None, False),
        ("changed", "/f", 2, None, 2, None, False),
        ("read", "t1", "/f", b"Ne"),
        ("linked", "/g"),
        ("moving", "/g", "/h"),
        ("deleting", "/h"),
        ("guard", "/f"),
        ("changing", "/f", 2, None, True),  # the handle wrote past the end only
        ("changed", "/f", 4, None, 2, None, True),
        ("closed", "/f", 4, False),
    ]
    assert bare.read("/f") == b"New!"


@pytest.mark.parametrize(
    "operation",
    [
        lambda fs: fs.write("/f", b"other"),
        lambda fs: fs.pwrite("/f", b"X", 1),
        lambda fs: fs.append("/f", b"more"),
        lambda fs: fs.truncate("/f", 1),
    ],
    ids=["write", "pwrite", "append", "truncate"],
)
def test_a_refusing_guard_changes_nothing(
    bare: FileSystem, recorded: Recorder, operation: object
) -> None:
    bare.write("/f", b"kept")
    before = bare.stat("/f")
    recorded.refuse = True
    with pytest.raises(PermissionError, match="refused by the hook"):
        operation(bare)  # type: ignore[operator]
    assert bare.read("/f") == b"kept"
    assert bare.stat("/f") == before


class TakesTheChunks(Changes):
    """A layer above that takes a file's chunks away before every whole rewrite (as
    history's copy-down does) and answers that none are left in place."""

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        self.taken: list[int] = []

    def _take(self, target: WriteTarget) -> int:
        self.fs.conn.execute("DELETE FROM fs_data WHERE ino = ?", (target.ino,))
        self.taken.append(target.ino)
        return 0

    def changing(self, target: WriteTarget, change: Change) -> Rewrite:
        whole = change.data is not None or change.whole
        return Rewrite(self._take(target) if whole else target.size)


def _chunk_rows(fs: FileSystem, ino: int) -> list[tuple[int, int]]:
    return [
        (index, length)  # type: ignore[misc]
        for index, length in fs.conn.execute(
            "SELECT chunk_index, length(data) FROM fs_data WHERE ino = ? ORDER BY chunk_index",
            (ino,),
        )
    ]


@pytest.mark.parametrize("old_size", [0, 10, 70_000, 200_000])
@pytest.mark.parametrize("new_size", [0, 5, 65_536, 150_000])
def test_a_rewrite_with_no_chunk_left_in_place_writes_all_of_it(
    bare: FileSystem, old_size: int, new_size: int
) -> None:
    """When the layer above answers that no committed byte is left (``Rewrite.in_place`` 0
    for a whole rewrite), the core writes the whole new content as fresh
    chunks into the same inode, whatever its row still says, by ``write`` and by a
    handle's rewrite from 0."""
    bare.write("/f", bytes(range(256)) * (old_size // 256) + b"x" * (old_size % 256))
    bare.write("/g", b"y" * old_size)
    ino, other = bare.stat("/f").st_ino, bare.stat("/g").st_ino
    bare.hooks = hooks = TakesTheChunks(bare)
    new = bytes(range(255, -1, -1)) * (new_size // 256) + b"z" * (new_size % 256)
    assert bare.write("/f", new).st_ino == ino
    with bare.open("/g", "wb") as f:
        f.write(new)
    assert hooks.taken == [ino, other]
    cs = bare.chunks.size
    layout = [(i, min(cs, new_size - i * cs)) for i in range(-(-new_size // cs))]
    for path, number in (("/f", ino), ("/g", other)):
        st = bare.stat(path)
        assert (st.st_ino, st.st_size, bare.read(path)) == (number, new_size, new)
        assert _chunk_rows(bare, number) == layout


def test_hooks_run_inside_the_operations_transaction(tmp_path: Path) -> None:
    """A hook that fails after the core wrote makes the whole operation roll back."""

    class FailsAfterWriting(Changes):
        def changed(
            self, target: WriteTarget, change: Change, size: int, memo: object = None
        ) -> None:
            raise RuntimeError("history could not record it")

    conn = db.connect(tmp_path / "w.db")
    db.migrate(conn)
    fs = FileSystem(conn)
    fs.write("/f", b"old")
    fs.hooks = FailsAfterWriting()
    with pytest.raises(RuntimeError):
        fs.write("/f", b"new")
    assert fs.read("/f") == b"old"
    conn.close()


def test_the_workspace_installs_history_hooks(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "w.db") as ws:
        assert type(ws.hooks).__name__ == "HistoryHooks"
        ws.write("/f", b"1")
        ws.write("/f", b"2")
        assert [v.n for v in ws.history("/f")] == [1, 2]
