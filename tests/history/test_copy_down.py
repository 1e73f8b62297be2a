"""Copy-down: a live file keeps its inode number for life.

When history must keep a file's current bytes (a snapshot holds them, or versions do and the
file is over ``KEPT_MAX``), the bytes go to a new nameless inode that every snapshot entry
and version naming the file names from then on, and the file itself changes in place. These
tests check the number never moves (after a snapshot, on every way of writing, for both names
of a hard link, across versioned overwrites of a large file), that every old snapshot and
version still reads its exact bytes (read back, and restored), and that fsck finds the
workspace clean after each step.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck
from agentfs.core.chunks import Chunks
from agentfs.history.versions import KEPT_MAX
from tests.history.test_versions import history_problems

#: A file of one partial chunk, one just over KEPT_MAX, and one of two 64 KiB chunks.
SIZES = [1000, KEPT_MAX + 1, 100 * 1024]


@pytest.fixture
def ws(ws: agentfs.Workspace) -> Iterator[agentfs.Workspace]:
    yield ws
    assert history_problems(ws) == []


def content(size: int, seed: int) -> bytes:
    """``size`` bytes that differ at every position from another seed's."""
    return bytes((i * 7 + seed) % 251 for i in range(size))


def clean(ws: agentfs.Workspace) -> None:
    report = fsck.check(ws)
    assert report.clean, report.problems


def nlink_of(ws: agentfs.Workspace, ino: int) -> int:
    return int(ws.conn.execute("SELECT nlink FROM fs_inode WHERE ino = ?", (ino,)).get)


def inode_rows(ws: agentfs.Workspace) -> int:
    return int(ws.conn.execute("SELECT count(*) FROM fs_inode").get)


def entry_ino(ws: agentfs.Workspace, snapshot: str, path: str) -> int:
    ((_, entry),) = ws.snapshots.show(snapshot, path)
    return entry.ino


def _handle(
    mode: str, offset: int, data: bytes, path: str = "/f"
) -> Callable[[agentfs.Workspace], object]:
    def change(ws: agentfs.Workspace) -> None:
        with ws.open(path, mode) as f:
            assert isinstance(f, io.RawIOBase)
            f.seek(offset)
            f.write(data)

    return change


#: Each way of changing /f, and the bytes it leaves, from the old bytes.
CHANGES: dict[str, tuple[Callable[[agentfs.Workspace], object], Callable[[bytes], bytes]]] = {
    "write": (lambda ws: ws.write("/f", b"new"), lambda old: b"new"),
    "write-large": (
        lambda ws: ws.write("/f", content(70_000, 9)),
        lambda old: content(70_000, 9),
    ),
    "pwrite": (lambda ws: ws.pwrite("/f", b"XY", 500), lambda old: old[:500] + b"XY" + old[502:]),
    "append": (lambda ws: ws.append("/f", b"tail"), lambda old: old + b"tail"),
    "truncate": (lambda ws: ws.truncate("/f", 10), lambda old: old[:10]),
    "truncate-longer": (
        lambda ws: ws.truncate("/f", len(ws.read("/f")) + 5),
        lambda old: old + bytes(5),
    ),
    "open-r+b": (_handle("r+b", 3, b"Q"), lambda old: old[:3] + b"Q" + old[4:]),
    "open-wb": (_handle("wb", 0, b"whole"), lambda old: b"whole"),
    "open-ab": (_handle("ab", 0, b"++"), lambda old: old + b"++"),
}


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "unversioned"])
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", list(CHANGES))
def test_the_inode_number_survives_a_snapshot_and_any_change(
    ws: agentfs.Workspace, name: str, size: int, versioned: bool
) -> None:
    """Snapshot, change the file (each way), change it again: the number never moves, the
    snapshot still reads and restores its exact bytes, and fsck is clean at each step."""
    change, result = CHANGES[name]
    if not versioned:
        ws.configure_history(keep="none")
    old = content(size, 1)
    ws.write("/f", old)
    ino = ws.stat("/f").st_ino
    ws.snapshots.create("s")
    change(ws)
    new = result(old)
    assert ws.stat("/f").st_ino == ino and ws.read("/f") == new
    frozen = entry_ino(ws, "s", "/f")
    assert frozen != ino and nlink_of(ws, frozen) == 0  # the snapshot names the copy now
    clean(ws)
    rows = inode_rows(ws)
    ws.append("/f", b"!")  # no snapshot or version holds the file now: in place, no copy
    assert ws.stat("/f").st_ino == ino and inode_rows(ws) == rows
    assert ws.snapshots.read("s", "/f") == old
    clean(ws)
    ws.snapshots.create("t")  # records the file again, under its own number
    assert entry_ino(ws, "t", "/f") == ino
    assert ws.snapshots.diff("s", "t").modified == ["/f"]
    clean(ws)
    ws.snapshots.restore("s")
    assert ws.read("/f") == old and ws.stat("/f").st_ino == frozen
    clean(ws)
    ws.snapshots.restore("t")
    assert ws.read("/f") == new + b"!" and ws.stat("/f").st_ino == ino
    if versioned:
        assert ws.read_version("/f", 1) == old
    clean(ws)


@pytest.mark.parametrize(
    "change",
    [
        lambda ws, data: ws.write("/big", data),
        lambda ws, data: ws.pwrite("/big", data[:1000], 65_000),  # across the chunk edge
        lambda ws, data: _handle("wb", 0, data, "/big")(ws),
        lambda ws, data: _handle("r+b", 70_000, data[:100], "/big")(ws),
    ],
    ids=["write", "pwrite", "open-wb", "open-r+b"],
)
def test_versioned_overwrites_of_a_large_file_keep_its_number(
    ws: agentfs.Workspace, change: Callable[[agentfs.Workspace, bytes], object]
) -> None:
    """Over KEPT_MAX every versioned change below the end copies the content down; the file
    keeps its number through all of them, and each old version reads (and restores to) its
    exact bytes."""
    contents = [content(100 * 1024, 0)]
    ws.write("/big", contents[0])
    ino = ws.stat("/big").st_ino
    for seed in range(1, 6):
        change(ws, content(100 * 1024, seed))
        contents.append(ws.read("/big"))
        assert ws.stat("/big").st_ino == ino
        clean(ws)
    history = ws.history("/big")
    assert [ws.read_version("/big", v.n) for v in history] == contents
    assert history[-1].ino == ino
    assert len({v.ino for v in history}) == len(history)  # each old content on its own inode
    for v in history[:-1]:
        ws.restore_version("/big", v.n)
        assert ws.read("/big") == contents[v.n - 1]
        clean(ws)


def test_both_names_of_a_hard_link_keep_the_inode(ws: agentfs.Workspace) -> None:
    ws.write("/a", content(100 * 1024, 1))
    ws.mkdir("/d")
    ws.link("/a", "/d/b")
    ino = ws.stat("/a").st_ino
    ws.snapshots.create("s")
    ws.write("/d/b", b"through the second name")
    ws.pwrite("/a", b"T", 0)
    for path in ("/a", "/d/b"):
        st = ws.stat(path)
        assert (st.st_ino, st.st_nlink) == (ino, 2)
        assert ws.read(path) == b"Through the second name"
    clean(ws)
    assert ws.snapshots.read("s", "/a") == ws.snapshots.read("s", "/d/b") == content(102400, 1)
    ws.snapshots.create("t")
    clean(ws)
    ws.snapshots.restore("s")
    a, b = ws.stat("/a"), ws.stat("/d/b")
    assert a.st_ino == b.st_ino != ino and a.st_nlink == 2  # the snapshot's copy, still linked
    assert ws.read("/a") == content(100 * 1024, 1)
    clean(ws)
    ws.snapshots.restore("t")
    assert ws.stat("/a").st_ino == ws.stat("/d/b").st_ino == ino
    clean(ws)


def test_every_snapshot_keeps_its_own_content(ws: agentfs.Workspace) -> None:
    """Snapshot, write, snapshot, write ...: each snapshot names the content it had (copied
    down by the write after it), the file keeps its number, and each restores exactly."""
    ino = ws.write("/f", content(30_000, 0)).st_ino
    for k in range(1, 5):
        ws.snapshots.create(f"s{k}")
        ws.write("/f", content(30_000, k))
        assert ws.stat("/f").st_ino == ino
    named = [entry_ino(ws, f"s{k}", "/f") for k in range(1, 5)]
    assert len(set(named)) == 4 and ino not in named
    for k in range(1, 5):
        assert ws.snapshots.read(f"s{k}", "/f") == content(30_000, k - 1)
    for k in (2, 4, 1, 3):
        ws.snapshots.restore(f"s{k}")
        assert ws.read("/f") == content(30_000, k - 1)
        clean(ws)


def test_a_frozen_copy_is_freed_with_the_last_history_holding_it(
    ws: agentfs.Workspace,
) -> None:
    """Born nameless and held only by history: deleting the snapshot frees it (versioning
    off), and with versions on it lives until retention prunes the version naming it."""
    ws.configure_history(keep="none")
    ino = ws.write("/f", content(100 * 1024, 0)).st_ino
    ws.snapshots.create("s")
    ws.write("/f", b"new")
    frozen = entry_ino(ws, "s", "/f")
    ws.snapshots.delete("s")
    ws.orphans.purge()
    exists = "SELECT 1 FROM fs_inode WHERE ino = ?"
    assert ws.conn.execute(exists, (frozen,)).get is None
    assert ws.conn.execute("SELECT 1 FROM fs_data WHERE ino = ?", (frozen,)).get is None
    clean(ws)
    ws.configure_history(keep=1)
    ws.write("/f", content(100 * 1024, 1))  # b"new" becomes version 1 first (untracked)
    ws.write("/f", content(100 * 1024, 2))  # copies version 2's content down, then prunes it
    assert [v.n for v in ws.history("/f")] == [3]
    ws.orphans.purge()
    assert ws.conn.execute("SELECT count(*) FROM fs_inode").get == 2  # the root and /f
    assert ws.stat("/f").st_ino == ino
    clean(ws)


def test_a_failed_write_after_a_copy_down_changes_nothing(
    ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The moved chunks, the new inode and the repointed history commit with the write or
    not at all."""
    old = content(100 * 1024, 0)
    ino = ws.write("/f", old).st_ino
    ws.snapshots.create("s")
    rows = inode_rows(ws)

    def fail(self: Chunks, ino: int, first_index: int, data: bytes) -> None:
        raise RuntimeError("injected")

    monkeypatch.setattr(Chunks, "append_new", fail)
    with pytest.raises(RuntimeError):
        ws.write("/f", b"new")
    monkeypatch.undo()
    assert ws.read("/f") == old and inode_rows(ws) == rows
    assert entry_ino(ws, "s", "/f") == ino
    assert ws.version("/f").ino == ino
    clean(ws)
    ws.write("/f", b"new")  # the settings rolled back too: frozen again, copied down again
    assert ws.snapshots.read("s", "/f") == old
    assert ws.read_version("/f", 1) == old


def test_a_restored_version_a_snapshot_holds_stays_frozen(ws: agentfs.Workspace) -> None:
    """A copy-down raises the snapshot watermark to the inode it made: restoring a version
    onto that inode relinks it, and a write after that must copy it down again, not change
    the snapshot's bytes."""
    old = content(2000, 0)
    ws.write("/f", old)
    ws.snapshots.create("s")
    ws.write("/f", b"second")  # copied down: the snapshot and version 1 name the copy
    frozen = entry_ino(ws, "s", "/f")
    assert ws.version("/f", 1).ino == frozen
    ws.restore_version("/f", 1)  # relinks the copy itself (no other name has it)
    assert ws.stat("/f").st_ino == frozen
    ws.write("/f", b"third")
    assert ws.stat("/f").st_ino == frozen
    assert ws.snapshots.read("s", "/f") == old
    assert [ws.read_version("/f", n) for n in (1, 2, 3, 4)] == [old, b"second", old, b"third"]
    clean(ws)


def found(ws: agentfs.Workspace, query: str) -> list[str]:
    return [hit.path for hit in ws.search(query, mode="bm25").hits]


def test_the_search_index_follows_the_live_file_only(ws: agentfs.Workspace) -> None:
    """The frozen copy is queued by the insert trigger like any new inode, and the drain
    skips it (nameless); the live file, rewritten in place, is indexed again."""
    ino = ws.write("/notes.txt", "the old words: marmalade\n" * 2000).st_ino
    assert found(ws, "marmalade") == ["/notes.txt"]
    ws.snapshots.create("s")
    ws.write("/notes.txt", "the new words: quince\n" * 2000)
    assert ws.stat("/notes.txt").st_ino == ino
    assert found(ws, "quince") == ["/notes.txt"]
    assert found(ws, "marmalade") == []
    files = [ino for (ino,) in ws.conn.execute("SELECT ino FROM ws_index_file")]
    assert files == [ino]
    clean(ws)


def test_a_stale_read_is_caught_with_the_number_unchanged(
    ws: agentfs.Workspace, ws_path: Path
) -> None:
    """Read tracking records (inode, ctime): a copy-down keeps the inode, and the change in
    place sets ctime, so another thread's write still makes this thread's read stale."""
    ws.thread = "mine"
    ws.write("/f", content(100 * 1024, 0))
    ws.snapshots.create("s")
    ws.read_before_write = True
    ws.read("/f")
    with agentfs.open(ws_path, thread="other") as other:
        other.write("/f", content(100 * 1024, 1))
    with pytest.raises(agentfs.StaleReadError):
        ws.write("/f", b"mine")
    assert ws.read("/f") == content(100 * 1024, 1)
    ws.write("/f", b"mine")
    assert ws.read("/f") == b"mine"


def chunk_rowids(ws: agentfs.Workspace, ino: int) -> list[int]:
    rows = ws.conn.execute("SELECT rowid FROM fs_data WHERE ino = ? ORDER BY chunk_index", (ino,))
    return [rowid for (rowid,) in rows]


def pad(ws: agentfs.Workspace, count: int) -> None:
    """Use up ``count`` inode numbers (files made and removed)."""
    with ws.transaction():
        for i in range(count):
            ws.write(f"/pad/{i}", b"", parents=True)
    ws.remove("/pad", recursive=True)


@pytest.mark.parametrize("wider", [False, True], ids=["same-width", "wider"])
def test_a_whole_rewrite_moves_the_chunks_when_the_numbers_are_as_wide(
    ws: agentfs.Workspace, wider: bool
) -> None:
    """A whole rewrite moves the chunk rows to the frozen inode (same rows, new number) when
    both numbers take as many bytes in a record; when the frozen one is wider (here the file
    is numbered below 128, the copy above) it copies them, and the file's own rows are then
    overwritten in place. Either way the bytes end up right."""
    if not wider:
        pad(ws, 130)
    old, new = content(100 * 1024, 1), content(100 * 1024, 2)
    ino = ws.write("/f", old).st_ino
    if wider:
        pad(ws, 130)
    ws.snapshots.create("s")
    rows = chunk_rowids(ws, ino)
    ws.write("/f", new)
    frozen = entry_ino(ws, "s", "/f")
    assert (ino < 128 <= frozen) is wider
    assert (chunk_rowids(ws, frozen) == rows) is not wider
    assert (chunk_rowids(ws, ino) == rows) is wider
    assert ws.read("/f") == new and ws.stat("/f").st_ino == ino
    assert ws.snapshots.read("s", "/f") == old
    with ws.open("/f", "wb") as f:  # a handle's rewrite from 0: the same rule
        f.write(old)
    assert ws.read("/f") == old and ws.read_version("/f", 2) == new
    clean(ws)
