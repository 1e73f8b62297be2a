"""Per-path version history: what each write, rename, link and delete records, reading old
versions back byte-exact, restoring them, diffs, retention and garbage collection.

Every test runs on the ``ws`` fixture, so fsck must find the workspace clean afterwards; this
module's ``ws`` also checks the rules of ``ws_version`` that fsck does not
(see ``history_problems``): consecutive numbers, content exactly for content events, and every
version's bytes (on an inode or kept aside) still hashing to the digest recorded with it, which
proves no write in place ever changed a version's content.
"""

from __future__ import annotations

import errno
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck
from agentfs.core.errors import HistoryNotFoundError
from agentfs.history.api import GcReport
from agentfs.history.versions import KEPT_MAX

#: Four 64 KiB chunks and a partial one: a copy-down must carry every chunk across.
BIG = bytes(range(256)) * 1100
CONTENT_OPS = {"write", "rename", "link", "restore"}


def blake(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def ops(ws: agentfs.Workspace, path: str) -> list[tuple[int, str]]:
    """(n, op) of every event of ``path``, oldest first."""
    return [(v.n, v.op) for v in ws.history(path)]


def inode_count(ws: agentfs.Workspace) -> int:
    return ws.conn.execute("SELECT count(*) FROM fs_inode").get


def kept_count(ws: agentfs.Workspace) -> int:
    return ws.conn.execute("SELECT count(*) FROM ws_kept").get


def history_problems(ws: agentfs.Workspace) -> list[str]:
    """Rules of migration 3 that fsck leaves unchecked: per path, numbers are consecutive;
    ino (and hash) is set exactly for content events; every content version's inode exists and
    its first bytes (a file may grow under its versions) have the recorded size and digest;
    every file or symlink inode a snapshot entry names exists."""
    problems = []
    conn = ws.conn
    by_path: dict[str, list[int]] = {}
    for path, n, op, ino, kept, size, hash_ in conn.execute(
        "SELECT path, n, op, ino, kept, size, hash FROM ws_version ORDER BY path, n"
    ):
        by_path.setdefault(path, []).append(n)
        content = (ino is not None) + (kept is not None)
        if content != (op in CONTENT_OPS) or (hash_ is not None) != bool(content):
            problems.append(f"{path}@{n}: op {op} with ino {ino}, kept {kept}, hash {hash_!r}")
            continue
        if kept is not None:
            data = conn.execute("SELECT data FROM ws_kept WHERE id = ?", (kept,)).get
            if data is None or len(data) != size or blake(data) != hash_:
                problems.append(f"{path}@{n}: kept bytes {kept} are not the recorded content")
            continue
        if ino is None:
            continue
        row = conn.execute("SELECT size FROM fs_inode WHERE ino = ?", (ino,)).get
        if row is None:
            problems.append(f"{path}@{n}: inode {ino} is missing")
        elif row < size or blake(ws.chunks.read(ino, size)) != hash_:  # a prefix of a grown file
            problems.append(f"{path}@{n}: inode {ino} no longer holds the recorded content")
    for path, numbers in by_path.items():
        if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
            problems.append(f"{path}: version numbers {numbers} have a gap")
    for (ino,) in conn.execute(  # a deleted directory is re-created by restore: not those
        "SELECT DISTINCT ino FROM ws_entry WHERE (mode & 61440) <> 16384"
        " AND ino NOT IN (SELECT ino FROM fs_inode)"
    ):
        problems.append(f"a snapshot entry names missing inode {ino}")
    return problems


@pytest.fixture
def ws(ws: agentfs.Workspace, request: pytest.FixtureRequest) -> Iterator[agentfs.Workspace]:
    """The conftest workspace; afterwards the history tables must obey their rules too."""
    yield ws
    if request.node.get_closest_marker("damages_workspace") is None:
        assert history_problems(ws) == []


# --- numbering and unchanged content -------------------------------------------------------------


def test_versions_are_numbered_from_one_per_path(ws: agentfs.Workspace) -> None:
    """Each path counts its own events 1, 2, 3 ..., in the order they happened."""
    ws.write("/a", b"1")
    ws.write("/b", b"1")
    ws.write("/a", b"2")
    ws.write("/a", b"3")
    assert [v.n for v in ws.history("/a")] == [1, 2, 3]
    assert [v.n for v in ws.history("/b")] == [1]
    times = [v.at_ns for v in ws.history("/a")]
    assert times == sorted(times)
    assert ws.version("/a").n == 3
    assert ws.version("/a", 2).size == 1
    assert ws.history("/never") == []


def test_identical_bytes_make_no_version(ws: agentfs.Workspace) -> None:
    """Rewriting the same bytes (whole, or a pwrite of a range with what it already holds)
    records nothing and copies nothing: the inode stays the same."""
    ws.write("/f", b"hello world")
    ino = ws.stat("/f").st_ino
    ws.write("/f", b"hello world")
    assert ws.pwrite("/f", b"world", 6) == 5
    ws.truncate("/f", 11)
    assert ops(ws, "/f") == [(1, "write")]
    assert ws.stat("/f").st_ino == ino
    assert inode_count(ws) == 2  # the root and /f


def test_overwrite_copies_down_and_keeps_the_old_version_byte_exact(
    ws: agentfs.Workspace,
) -> None:
    """A large versioned file (over ``KEPT_MAX``) is copied down: a new write moves the old
    chunks to a new nameless inode that the old version names from then on (every byte, of
    several chunks here), and the file keeps its inode number. Small files keep their old
    versions' bytes aside instead: tests/history/test_kept.py."""
    ws.write("/f", BIG)
    first = ws.stat("/f").st_ino
    ws.write("/f", b"short")
    assert ws.stat("/f").st_ino == first
    assert ws.read("/f") == b"short"
    assert ws.read_version("/f", 1) == BIG
    frozen = ws.version("/f", 1).ino
    assert frozen is not None and frozen != first
    assert ws.conn.execute("SELECT nlink FROM fs_inode WHERE ino = ?", (frozen,)).get == 0
    assert ws.version("/f", 2).ino == first
    assert ws.read_version("/f", 2) == b"short"
    ws.restore_version("/f", 1)
    assert ws.read("/f") == BIG


@pytest.mark.parametrize(
    ("change", "expected", "appends"),
    [
        (lambda ws: ws.pwrite("/f", b"XYZ", 70_000), BIG[:70_000] + b"XYZ" + BIG[70_003:], False),
        (lambda ws: ws.pwrite("/f", b"end", len(BIG) + 5), BIG + b"\0" * 5 + b"end", True),
        (lambda ws: ws.append("/f", b"tail"), BIG + b"tail", True),
        (lambda ws: ws.truncate("/f", 65_537), BIG[:65_537], False),
        (lambda ws: ws.truncate("/f", len(BIG) + 3), BIG + b"\0\0\0", True),
    ],
    ids=["pwrite-middle", "pwrite-past-end", "append", "truncate-shorter", "truncate-longer"],
)
def test_partial_writes_make_a_version_with_the_right_digest(
    ws: agentfs.Workspace,
    change: Callable[[agentfs.Workspace], object],
    expected: bytes,
    appends: bool,
) -> None:
    """pwrite, append and truncate record a version whose size and BLAKE2b-128 digest are
    those of the whole new file, and the old version keeps its bytes: a change below the old
    end copies the (large) file up and changes the copy; one that only adds bytes past the end
    changes the file in place, the old version naming its first bytes."""
    ws.write("/f", BIG)
    change(ws)
    assert ws.read("/f") == expected
    first, second = ws.history("/f")
    assert (first.op, first.size, first.hash) == ("write", len(BIG), blake(BIG))
    assert (second.op, second.size, second.hash) == ("write", len(expected), blake(expected))
    assert second.ino == ws.stat("/f").st_ino
    assert (first.ino == second.ino) is appends
    assert ws.read_version("/f", 1) == BIG
    assert ws.read_version("/f", 2) == expected


def test_a_transaction_writing_an_existing_file_several_times_makes_one_version(
    ws: agentfs.Workspace,
) -> None:
    """Writes, appends and truncates of one file in one transaction leave one version with
    the final content (the row is updated, not repeated)."""
    ws.write("/f", b"0")
    with ws.transaction():
        ws.write("/f", b"a")
        ws.append("/f", b"b")
        ws.pwrite("/f", b"c", 2)
        ws.truncate("/f", 4)
        ws.write("/f", b"final")
    assert ops(ws, "/f") == [(1, "write"), (2, "write")]
    assert ws.version("/f", 2).hash == blake(b"final")
    assert ws.read_version("/f", 1) == b"0"
    assert ws.read_version("/f", 2) == b"final"


def test_a_transaction_creating_and_rewriting_a_file_makes_one_version(
    ws: agentfs.Workspace,
) -> None:
    """A file created in a transaction and written again in it has one version: nothing
    outside the transaction ever saw the first content. (The creating write's own row is
    pending, not committed: it must not freeze the new inode and leave two versions.)"""
    with ws.transaction():
        ws.write("/new", b"a")
        ws.append("/new", b"b")
        ws.write("/new", b"final")
    assert ops(ws, "/new") == [(1, "write")]
    assert inode_count(ws) == 2  # no frozen copy of the intermediate content


# --- names: rename, remove, link -----------------------------------------------------------------


def test_rename_records_move_at_the_old_path_and_rename_at_the_new(
    ws: agentfs.Workspace,
) -> None:
    """A rename is two events: 'move' (no content, other = where to) at the old path and
    'rename' (the same frozen inode, other = where from) at the new one."""
    ws.write("/f", b"content")
    ws.rename("/f", "/g")
    moved, arrived = ws.history("/f")[-1], ws.history("/g")[-1]
    assert (moved.op, moved.ino, moved.other) == ("move", None, "/g")
    assert (arrived.op, arrived.other, arrived.hash) == ("rename", "/f", blake(b"content"))
    assert arrived.ino == ws.version("/f", 1).ino == ws.stat("/g").st_ino
    assert ws.read_version("/g", 1) == b"content"
    with pytest.raises(HistoryNotFoundError):
        ws.read_version("/f", 2)


def test_rename_over_an_existing_file_records_both_sides(ws: agentfs.Workspace) -> None:
    """The replaced file's history goes on at its path: the next event there is the arrival."""
    ws.write("/src", b"new")
    ws.write("/dst", b"old")
    ws.rename("/src", "/dst")
    assert ops(ws, "/dst") == [(1, "write"), (2, "rename")]
    assert ws.read_version("/dst", 1) == b"old"
    assert ws.read_version("/dst", 2) == b"new"


def test_directory_rename_moves_the_history_of_every_file_inside(ws: agentfs.Workspace) -> None:
    """Renaming a directory records a move/rename pair for each file with history below it."""
    ws.write("/d/a", b"A", parents=True)
    ws.write("/d/sub/b", b"B", parents=True)
    ws.rename("/d", "/e")
    for old, new, data in (("/d/a", "/e/a", b"A"), ("/d/sub/b", "/e/sub/b", b"B")):
        assert ops(ws, old) == [(1, "write"), (2, "move")]
        assert ws.version(old).other == new
        first = ws.history(new)[0]
        assert (first.n, first.op, first.ino) == (1, "rename", ws.stat(new).st_ino)
        assert ws.version(new).other == old
        assert ws.read_version(new, 1) == data


def test_remove_records_delete_and_old_versions_stay_readable(ws: agentfs.Workspace) -> None:
    """A deleted file's versions outlive it; the 'delete' event itself has no content."""
    ws.write("/f", b"one")
    ws.write("/f", b"two")
    ws.remove("/f")
    assert ops(ws, "/f") == [(1, "write"), (2, "write"), (3, "delete")]
    assert ws.version("/f").ino is None
    assert ws.read_version("/f", 1) == b"one"
    assert ws.read_version("/f", 2) == b"two"


def test_recursive_remove_records_a_delete_for_every_file(ws: agentfs.Workspace) -> None:
    """Every versioned file below the removed directory gets its 'delete' (symlinks and
    directories have no history)."""
    files = {"/t/a": b"a", "/t/b/c": b"c", "/t/b/d/e": b"e"}
    for path, data in files.items():
        ws.write(path, data, parents=True)
    ws.symlink("a", "/t/link")
    ws.remove("/t", recursive=True)
    for path, data in files.items():
        assert ops(ws, path) == [(1, "write"), (2, "delete")]
        assert ws.read_version(path, 1) == data
    assert ws.history("/t/link") == []
    assert ws.history("/t") == []


def test_write_through_a_hard_link_keeps_the_old_version(ws: agentfs.Workspace) -> None:
    """Both names of a hard-linked file see a write through either (the file changes in
    place), while the versions of both names keep the old bytes aside."""
    ws.write("/a", b"shared")
    ws.link("/a", "/b")
    link = ws.version("/b")
    assert (link.op, link.ino) == ("link", ws.stat("/a").st_ino)
    ws.write("/b", b"changed through b")
    assert ws.read("/a") == b"changed through b"
    assert ws.stat("/a").st_ino == ws.stat("/b").st_ino == link.ino
    assert ws.version("/a", 1).kept is not None and ws.version("/b", 1).kept is not None
    assert ws.stat("/a").st_nlink == 2
    assert ws.read_version("/a", 1) == b"shared"
    assert ws.read_version("/b", 1) == b"shared"
    assert ops(ws, "/b") == [(1, "link"), (2, "write")]


# --- restore_version -----------------------------------------------------------------------------


def test_restore_version_relinks_the_frozen_inode(ws: agentfs.Workspace) -> None:
    """Restoring copies no byte: the name points at the version's inode again, and a
    'restore' event (other = the restored number) is added."""
    ws.write("/f", BIG)
    ws.write("/f", b"later")
    before = inode_count(ws)
    restored = ws.restore_version("/f", 1)
    assert ws.read("/f") == BIG
    assert ws.stat("/f").st_ino == ws.version("/f", 1).ino
    assert (restored.n, restored.op, restored.other) == (3, "restore", "1")
    assert (restored.size, restored.hash) == (len(BIG), blake(BIG))
    assert ws.version("/f") == restored
    assert inode_count(ws) == before  # relinked, not copied
    ws.append("/f", b"+")  # a write after a restore copies up as usual
    assert ws.read_version("/f", 1) == BIG
    assert ws.read("/f") == BIG + b"+"


def test_restore_version_of_the_current_content_changes_nothing(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"x")
    assert ws.restore_version("/f", 1).n == 1
    assert ops(ws, "/f") == [(1, "write")]


def test_restore_version_recreates_a_deleted_file_and_its_directories(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/d/e/f", b"gone", parents=True)
    ws.remove("/d", recursive=True)
    restored = ws.restore_version("/d/e/f", 1)
    assert ws.read("/d/e/f") == b"gone"
    assert ws.stat("/d/e").is_dir()
    assert ops(ws, "/d/e/f") == [(1, "write"), (2, "delete"), (3, "restore")]
    assert restored.n == 3


def test_restore_version_refuses_a_directory_and_content_free_events(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/f", b"x")
    ws.remove("/f")
    with pytest.raises(HistoryNotFoundError):
        ws.restore_version("/f", 2)  # the delete
    ws.mkdir("/f")
    with pytest.raises(IsADirectoryError):
        ws.restore_version("/f", 1)
    assert ops(ws, "/f") == [(1, "write"), (2, "delete")]


def test_restore_version_does_not_tie_the_file_to_another_path(ws: agentfs.Workspace) -> None:
    """After /f was renamed to /g, restoring /f's first version gives /f a copy of its own
    (the inode is named by /g): writing /f leaves /g alone. (The two paths must not become
    hard links of the one frozen inode.)"""
    ws.write("/f", b"orig")
    ws.rename("/f", "/g")
    restored = ws.restore_version("/f", 1)
    assert ws.stat("/f").st_ino != ws.stat("/g").st_ino
    assert ws.stat("/f").st_nlink == ws.stat("/g").st_nlink == 1
    assert restored.ino == ws.stat("/f").st_ino
    assert restored.hash == blake(b"orig")
    ws.write("/f", b"edited /f")
    assert ws.read("/g") == b"orig"
    assert ws.read_version("/f", 3) == b"orig"


def test_restore_version_with_versioning_off_keeps_the_history(ws: agentfs.Workspace) -> None:
    """keep='none' stops new versions; restoring an old one still works, records nothing,
    returns the restored version, and the existing history stays (only gc prunes it).
    (The restore must not prune the path's rows.)"""
    ws.write("/f", b"one")
    ws.write("/f", b"two")
    ws.configure_history(keep="none")
    assert ws.restore_version("/f", 1) == ws.version("/f", 1)
    assert ws.read("/f") == b"one"
    assert ops(ws, "/f") == [(1, "write"), (2, "write")]
    assert ws.read_version("/f", 2) == b"two"


@pytest.mark.damages_workspace  # the test runs fsck itself
@pytest.mark.parametrize("remove", ["/d/f", "/d"], ids=["file", "its-directory"])
def test_removing_a_restored_file_after_its_versions_were_pruned_leaks_nothing(
    ws: agentfs.Workspace, remove: str
) -> None:
    """A deleted file's version is restored after a snapshot that did not contain it; with
    keep=1 the removal prunes the version that held the inode, so the inode must be freed
    (once an inode below the snapshot watermark was assumed to be held, and leaked)."""
    ws.write("/d/f", b"one", parents=True)
    ws.remove("/d/f")
    ws.configure_history(keep=1)
    ws.snapshots.create("s")  # /d/f does not exist now: its inode is not in the snapshot
    ws.restore_version("/d/f", 1)
    ws.remove(remove, recursive=True)  # its 'delete' prunes the row that held the inode
    assert ops(ws, "/d/f") == [(4, "delete")]
    assert fsck.check(ws).problems == []


# --- diff ----------------------------------------------------------------------------------------


def test_diff_against_the_current_file_is_unified(ws: agentfs.Workspace) -> None:
    """Default: from the version before the newest one to the file as it is now."""
    ws.write("/t.txt", "one\ntwo\nthree\n")
    ws.write("/t.txt", "one\n2\nthree\n")
    assert ws.diff("/t.txt") == (
        "--- /t.txt@1\n+++ /t.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    )


def test_diff_between_two_versions_names_both(ws: agentfs.Workspace) -> None:
    ws.write("/t", "a\n")
    ws.write("/t", "a\nb\n")
    ws.write("/t", "c")
    assert ws.diff("/t", 1, 2) == "--- /t@1\n+++ /t@2\n@@ -1 +1,2 @@\n a\n+b\n"
    assert ws.diff("/t", 2, 3) == (
        "--- /t@2\n+++ /t@3\n@@ -1,2 +1 @@\n-a\n-b\n+c\n\\ No newline at end of file\n"
    )
    assert ws.diff("/t", 3, 3) == ""


def test_diff_of_a_first_version_is_against_dev_null(ws: agentfs.Workspace) -> None:
    ws.write("/t", "x\n")
    assert ws.diff("/t") == "--- /dev/null\n+++ /t\n@@ -0,0 +1 @@\n+x\n"


def test_diff_of_binary_content_is_one_summary_line(ws: agentfs.Workspace) -> None:
    ws.write("/b", b"\xff\x00")
    ws.write("/b", b"\xfe\x00")
    assert ws.diff("/b") == "Binary files /b@1 and /b differ\n"
    assert ws.diff("/b", 1, 2) == "Binary files /b@1 and /b@2 differ\n"
    assert ws.diff("/b", 2, 2) == ""


def test_diff_of_a_path_without_history_raises(ws: agentfs.Workspace) -> None:
    with pytest.raises(HistoryNotFoundError):
        ws.diff("/nothing")


@pytest.mark.parametrize("n", [2**63, 2**64, -(2**63) - 1, -1, 0])
def test_a_version_number_no_version_can_have_is_not_found_and_changes_nothing(
    ws: agentfs.Workspace, n: int
) -> None:
    """Past SQLite's 64-bit integers (where apsw raises OverflowError), or below 1: "no
    version N", like any number the file never reached."""
    ws.write("/a.txt", b"one\n")
    ws.write("/a.txt", b"two\n")
    before = ws.history("/a.txt")
    for call in (
        lambda: ws.version("/a.txt", n),
        lambda: ws.read_version("/a.txt", n),
        lambda: ws.diff("/a.txt", n),
        lambda: ws.diff("/a.txt", 1, n),
        lambda: ws.restore_version("/a.txt", n),
    ):
        with pytest.raises(HistoryNotFoundError, match=f"no version {n}"):
            call()
    assert ws.tool_calls.writer("/a.txt", n) is None
    assert (ws.history("/a.txt"), ws.read("/a.txt")) == (before, b"two\n")


# --- retention and gc ----------------------------------------------------------------------------


def test_keep_n_prunes_each_path_to_n_rows_as_it_is_written(ws: agentfs.Workspace) -> None:
    """With keep=2 each new event drops the oldest rows beyond two; numbers are not reused."""
    ws.configure_history(keep=2)
    for i in range(5):
        ws.write("/f", f"v{i}".encode())
    assert [v.n for v in ws.history("/f")] == [4, 5]
    assert ws.read_version("/f", 4) == b"v3"
    with pytest.raises(HistoryNotFoundError):
        ws.read_version("/f", 3)
    ws.gc()
    assert inode_count(ws) == 2  # root, the live file (= version 5)
    assert kept_count(ws) == 1  # version 4's bytes


def test_gc_prunes_to_keep_and_frees_the_inodes(ws: agentfs.Workspace) -> None:
    """Lowering keep prunes nothing until gc, which drops the extra rows of every path and
    frees exactly the storage only they held: kept bytes of small files, frozen inodes of
    large ones."""
    for path in ("/a", "/b"):
        for i in range(4):
            ws.write(path, f"{path}{i}".encode())
    for i in range(3):
        ws.write("/big", bytes([i]) * (KEPT_MAX + 1))
    assert (inode_count(ws), kept_count(ws)) == (1 + 2 + 3, 6)
    ws.configure_history(keep=1)
    assert len(ws.history("/a")) == 4
    report = ws.gc()
    assert (report.versions_pruned, report.inodes_freed, report.kept_freed) == (8, 2, 6)
    assert (inode_count(ws), kept_count(ws)) == (1 + 3, 0)
    assert [v.n for v in ws.history("/a")] == [4]
    assert ws.read("/a") == b"/a3"
    assert ws.gc() == GcReport(0, 0, 0, 0)


def test_gc_keeps_what_a_snapshot_holds(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"in snapshot")
    ws.snapshots.create("s")
    ws.write("/f", b"later")
    ws.configure_history(keep=1)
    ws.gc()
    assert ws.snapshots.read("s", "/f") == b"in snapshot"


def test_keep_none_stops_versioning(ws: agentfs.Workspace) -> None:
    """keep='none': no event of any kind is recorded; the existing ones stay until gc."""
    ws.write("/old", b"1")
    ws.configure_history(keep="none")
    assert ws.history_settings.versioning is False
    ws.write("/old", b"2")
    ws.write("/new", b"1")
    ws.append("/new", b"2")
    ws.rename("/new", "/renamed")
    ws.remove("/renamed")
    ino = ws.stat("/old").st_ino
    ws.write("/old", b"3")  # the inode is no longer frozen by a version: changed in place
    assert ws.stat("/old").st_ino == ino
    assert ops(ws, "/old") == [(1, "write")]
    assert ws.history("/new") == ws.history("/renamed") == []
    assert ws.read_version("/old", 1) == b"1"


def test_max_bytes_leaves_bigger_files_unversioned(ws: agentfs.Workspace) -> None:
    """Files over max_bytes get no new version (a write or an append that crosses the limit);
    the versions they had before survive, and small files still get theirs."""
    ws.configure_history(max_bytes=8)
    ws.write("/f", b"1234")
    ws.write("/f", b"123456789")
    ws.append("/f", b"0")
    ws.write("/g", b"12345678")
    ws.append("/g", b"9")
    ws.write("/small", b"ok")
    assert ops(ws, "/f") == [(1, "write")]
    assert ws.read_version("/f", 1) == b"1234"
    assert ws.read("/f") == b"1234567890"
    assert ops(ws, "/g") == [(1, "write")]
    assert ws.read("/g") == b"123456789"
    assert ops(ws, "/small") == [(1, "write")]


def test_growing_past_max_bytes_inside_a_transaction_drops_its_version(
    ws: agentfs.Workspace,
) -> None:
    ws.configure_history(max_bytes=4)
    ws.write("/f", b"abc")
    with ws.transaction():
        ws.write("/f", b"abcd")
        ws.append("/f", b"e")
    assert ops(ws, "/f") == [(1, "write")]
    assert ws.read("/f") == b"abcde"


# --- where and by whom ---------------------------------------------------------------------------


def test_a_write_through_a_symlinked_directory_is_recorded_under_the_real_path(
    ws: agentfs.Workspace,
) -> None:
    ws.mkdir("/real")
    ws.symlink("/real", "/via")
    ws.write("/via/f", b"1")
    ws.write("/real/f", b"2")
    ws.append("/via/f", b"3")
    assert ops(ws, "/real/f") == [(1, "write"), (2, "write"), (3, "write")]
    assert ws.history("/via/f") == ws.history("/real/f")  # looked up by its real path too
    assert ws.conn.execute("SELECT DISTINCT path FROM ws_version").fetchall() == [("/real/f",)]


def test_actor_and_thread_are_recorded(ws_path: Path) -> None:
    """Each event carries the handle's actor and thread at the time; both can change."""
    with agentfs.open(ws_path, actor="alice", thread="t1") as ws:
        ws.write("/f", b"1")
        ws.actor, ws.thread = "bob", "t2"
        ws.write("/f", b"2")
        ws.actor = ws.thread = None
        ws.remove("/f")
        rows = [(v.actor, v.thread) for v in ws.history("/f")]
        assert rows == [("alice", "t1"), ("bob", "t2"), (None, None)]
        assert fsck.check(ws).clean


# --- bad input -----------------------------------------------------------------------------------


def test_unknown_version_numbers_raise(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"x")
    for n in (0, 2, 99):
        with pytest.raises(HistoryNotFoundError):
            ws.version("/f", n)
        with pytest.raises(HistoryNotFoundError):
            ws.read_version("/f", n)
        with pytest.raises(HistoryNotFoundError):
            ws.restore_version("/f", n)
    with pytest.raises(HistoryNotFoundError):
        ws.version("/nothing")


def test_reading_a_delete_or_move_event_raises(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"x")
    ws.rename("/f", "/g")
    ws.remove("/g")
    with pytest.raises(HistoryNotFoundError, match="move"):
        ws.read_version("/f", 2)
    with pytest.raises(HistoryNotFoundError, match="delete"):
        ws.read_version("/g", 2)


@pytest.mark.parametrize(
    "options",
    [{"keep": "bogus"}, {"keep": -1}, {"keep": "1.5"}, {"keep": ""}, {"max_bytes": -1}],
)
def test_bad_history_settings_are_einval(ws: agentfs.Workspace, options: dict) -> None:
    before = ws.history_settings
    with pytest.raises(OSError) as caught:
        ws.configure_history(**options)
    assert caught.value.errno == errno.EINVAL
    assert ws.history_settings == before


def test_history_settings_round_trip(ws: agentfs.Workspace) -> None:
    assert ws.configure_history(keep=3, max_bytes=10).keep == 3
    assert ws.configure_history(keep="all").keep is None
    assert ws.configure_history(keep=0).keep == 0
    assert ws.history_settings.max_bytes == 10


@pytest.mark.parametrize("change", ["write", "pwrite", "append", "truncate"])
def test_a_file_without_history_keeps_its_previous_content_when_versioning_is_on(
    ws: agentfs.Workspace, change: str
) -> None:
    """A file written while versioning was off (or adopted, or older than history) has no
    version; the first change with versioning on keeps what it replaces as version 1."""
    ws.configure_history(keep="none")
    ws.write("/f", b"before history")
    ws.configure_history(keep="all")
    {
        "write": lambda: ws.write("/f", b"after"),
        "pwrite": lambda: ws.pwrite("/f", b"AFTER", 0),
        "append": lambda: ws.append("/f", b"+"),
        "truncate": lambda: ws.truncate("/f", 3),
    }[change]()
    rows = ws.history("/f")
    assert [(v.n, v.op) for v in rows] == [(1, "write"), (2, "write")]
    assert ws.read_version("/f", 1) == b"before history"
    assert ws.read_version("/f", 2) == ws.read("/f")


def test_a_file_over_max_bytes_is_not_kept_when_it_shrinks(ws: agentfs.Workspace) -> None:
    """Content over history.max_bytes is never versioned, not even as the previous content."""
    ws.configure_history(max_bytes=10)
    ws.write("/f", b"x" * 20)
    ws.write("/f", b"small")
    assert [(v.n, v.size) for v in ws.history("/f")] == [(1, 5)]
