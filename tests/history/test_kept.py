"""Versioned writes in place: a small file keeps its inode when it is overwritten, and every
older version that named that inode gets its bytes kept aside (``ws_kept``) first.

Each test runs on the conftest ``ws`` (fsck clean afterwards) and ends with
``test_versions.history_problems`` empty: every version's bytes, on an inode or kept aside,
still hash to the digest recorded with it, so no in-place write changed a version.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs import db, fsck
from agentfs.core.chunks import Chunks
from agentfs.history.versions import KEPT_MAX
from tests.history.test_versions import history_problems, ops
from tests.old_schema import index_as_schema_6


@pytest.fixture
def ws(ws: agentfs.Workspace) -> Iterator[agentfs.Workspace]:
    yield ws
    assert history_problems(ws) == []


def inode_counter(ws: agentfs.Workspace) -> int:
    return int(ws.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'fs_inode'").get)


def kept_rows(ws: agentfs.Workspace) -> int:
    return int(ws.conn.execute("SELECT count(*) FROM ws_kept").get)


def test_an_overwrite_keeps_the_inode_and_the_old_bytes_aside(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"one")
    ino, counter = ws.stat("/f").st_ino, inode_counter(ws)
    ws.write("/f", b"two")
    ws.write("/f", b"three")
    assert ws.stat("/f").st_ino == ino  # the name never moved: no inode was allocated
    assert inode_counter(ws) == counter
    first, second, third = ws.history("/f")
    assert (first.ino, second.ino, third.ino) == (None, None, ino)
    assert first.kept is not None and second.kept is not None
    assert [ws.read_version("/f", n) for n in (1, 2, 3)] == [b"one", b"two", b"three"]
    assert kept_rows(ws) == 2


def _write_through_a_handle(ws: agentfs.Workspace, data: bytes) -> None:
    with ws.open("/f", "r+b") as handle:
        assert isinstance(handle, io.RawIOBase)  # binary mode: the raw handle
        handle.write(data)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda ws: ws.pwrite("/f", b"XY", 2), b"abXYef"),
        (lambda ws: ws.append("/f", b"++"), b"abcdef++"),
        (lambda ws: ws.truncate("/f", 3), b"abc"),
        (lambda ws: _write_through_a_handle(ws, b"Z"), b"Zbcdef"),
    ],
    ids=["pwrite", "append", "truncate", "open"],
)
def test_partial_changes_keep_the_inode_too(
    ws: agentfs.Workspace, change: Callable[[agentfs.Workspace], object], expected: bytes
) -> None:
    ws.write("/f", b"abcdef")
    ino = ws.stat("/f").st_ino
    change(ws)
    assert ws.read("/f") == expected and ws.stat("/f").st_ino == ino
    assert ws.read_version("/f", 1) == b"abcdef"
    assert ws.read_version("/f", 2) == expected


def nlink_of(ws: agentfs.Workspace, ino: int) -> int:
    return int(ws.conn.execute("SELECT nlink FROM fs_inode WHERE ino = ?", (ino,)).get)


def test_a_file_over_kept_max_is_copied_down(ws: agentfs.Workspace) -> None:
    """Too large to keep aside: its content goes to a new nameless inode that the version
    names from then on; the file keeps its inode number and changes in place."""
    big = b"x" * (KEPT_MAX + 1)
    ws.write("/f", big)
    ino = ws.stat("/f").st_ino
    ws.write("/f", b"small now")
    assert ws.stat("/f").st_ino == ino
    frozen = ws.version("/f", 1).ino
    assert frozen is not None and frozen != ino and ws.version("/f", 1).kept is None
    assert nlink_of(ws, frozen) == 0
    assert ws.read_version("/f", 1) == big
    assert ws.version("/f", 2).ino == ino
    ws.write("/f", b"and again")  # small now: in place, its version kept aside
    assert ws.stat("/f").st_ino == ino
    assert ws.version("/f", 2).kept is not None
    assert ws.read_version("/f", 2) == b"small now"
    assert ws.read_version("/f", 1) == big


def test_a_file_a_snapshot_holds_is_copied_down(ws: agentfs.Workspace) -> None:
    """Snapshots name inodes: a small file in one has its content copied down once (the
    snapshot names the copy from then on), then is written in place; it keeps its number."""
    ws.write("/f", b"in the snapshot")
    ws.snapshots.create("s")
    ino = ws.stat("/f").st_ino
    ws.write("/f", b"after")
    assert ws.stat("/f").st_ino == ino
    (_, entry), *_ = ws.snapshots.show("s", "/f")
    assert entry.ino != ino and nlink_of(ws, entry.ino) == 0
    counter = inode_counter(ws)
    ws.write("/f", b"after again")
    assert ws.stat("/f").st_ino == ino and inode_counter(ws) == counter  # in place now
    assert ws.snapshots.read("s", "/f") == b"in the snapshot"
    assert [ws.read_version("/f", n) for n in (1, 2, 3)] == [
        b"in the snapshot",
        b"after",
        b"after again",
    ]
    ws.snapshots.restore("s")  # the old bytes come back, on the inode that kept them
    assert ws.read("/f") == b"in the snapshot" and ws.stat("/f").st_ino == entry.ino


def test_a_hard_link_made_in_the_same_transaction_keeps_its_bytes(
    ws: agentfs.Workspace,
) -> None:
    """The link's version is this transaction's, but of another path: a write through the
    first name must keep its bytes, not rewrite them."""
    ws.write("/a", b"before")
    with ws.transaction():
        ws.link("/a", "/b")
        ws.write("/a", b"after")
    assert ws.read("/b") == b"after"
    assert ws.read_version("/b", 1) == b"before"
    assert [ws.read_version("/a", n) for n in (1, 2)] == [b"before", b"after"]


def test_several_writes_in_one_transaction_make_one_version_and_keep_once(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/f", b"v1")
    with ws.transaction():
        for i in range(5):
            ws.write("/f", f"draft {i}".encode())
    assert ops(ws, "/f") == [(1, "write"), (2, "write")]
    assert ws.read_version("/f", 1) == b"v1" and ws.read_version("/f", 2) == b"draft 4"
    assert kept_rows(ws) == 1


def test_a_rename_then_a_write_in_one_transaction(ws: agentfs.Workspace) -> None:
    ws.write("/a", b"old")
    with ws.transaction():
        ws.rename("/a", "/b")
        ws.write("/b", b"new")
    assert ws.read_version("/a", 1) == b"old"
    assert ws.read_version("/b", ws.version("/b").n) == b"new"


def test_untracked_content_is_kept_before_the_first_versioned_change(
    ws: agentfs.Workspace,
) -> None:
    ws.configure_history(keep="none")
    ws.write("/f", b"written while versioning was off")
    ws.configure_history(keep="all")
    ino = ws.stat("/f").st_ino
    ws.write("/f", b"now")
    assert ws.stat("/f").st_ino == ino
    assert ws.read_version("/f", 1) == b"written while versioning was off"
    assert ws.version("/f", 1).kept is not None


def test_an_unversioned_write_still_keeps_what_old_versions_need(ws: agentfs.Workspace) -> None:
    """Versioning off stops new versions, not old ones from being readable."""
    ws.write("/f", b"versioned")
    ws.configure_history(keep="none")
    ws.write("/f", b"unversioned")
    assert ws.read_version("/f", 1) == b"versioned"
    assert len(ws.history("/f")) == 1


def test_restore_of_kept_bytes_makes_a_new_inode_with_the_mode_of_the_file(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/f", b"first")
    ws.write("/f", b"second")
    ws.chmod("/f", 0o600)
    restored = ws.restore_version("/f", 1)
    assert ws.read("/f") == b"first"
    assert ws.stat("/f").st_mode & 0o7777 == 0o600
    assert (restored.op, restored.other, restored.ino) == ("restore", "1", ws.stat("/f").st_ino)
    assert ws.read_version("/f", 2) == b"second"  # the replaced content has its version
    ws.remove("/f")
    again = ws.restore_version("/f", 1)  # a deleted file comes back with the default mode
    assert ws.read("/f") == b"first" and ws.stat("/f").st_mode & 0o7777 == 0o644
    assert again.op == "restore"


def test_retention_frees_kept_bytes_as_it_prunes(ws: agentfs.Workspace) -> None:
    ws.configure_history(keep=2)
    for i in range(6):
        ws.write("/f", f"v{i}".encode())
    assert [v.n for v in ws.history("/f")] == [5, 6]
    assert kept_rows(ws) == 1  # version 5's bytes; version 6 is the live file


def test_a_failed_write_keeps_nothing(
    ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes kept aside commit with the write or not at all."""
    ws.write("/f", b"one")

    def fail(self: Chunks, ino: int, data: bytes, old_size: int) -> None:
        raise RuntimeError("injected")

    monkeypatch.setattr(Chunks, "replace", fail)
    with pytest.raises(RuntimeError):
        ws.write("/f", b"two")
    assert kept_rows(ws) == 0 and ws.version("/f", 1).ino == ws.stat("/f").st_ino
    assert ws.read("/f") == b"one"


def test_a_workspace_from_before_migration_6_keeps_its_history(ws_path: Path) -> None:
    """A file written by the previous schema (versions on frozen inodes only) is migrated:
    its history reads back the same, and its next overwrite is in place."""
    with agentfs.open(ws_path) as ws:
        ws.write("/f", b"v1")
        ws.snapshots.create("s")  # so v2 copies the file up, as the previous release did
        ws.write("/f", b"v2")
        ws.snapshots.delete("s")
        assert ws.version("/f", 1).ino is not None and ws.version("/f", 2).ino is not None
        index_as_schema_6(ws)  # undo migrations 7 and 6: what the previous release wrote
        with ws.conn:
            ws.conn.execute("DROP TABLE ws_kept")
            ws.conn.execute("ALTER TABLE ws_version DROP COLUMN kept")
            ws.conn.execute("UPDATE fs_config SET value = '5' WHERE key = ?", (db.SCHEMA_KEY,))
    with agentfs.open(ws_path) as ws:
        assert db.schema_version(ws.conn) == db.SCHEMA_VERSION
        assert fsck.check(ws).clean
        assert ws.read("/f") == b"v2"
        ino = ws.stat("/f").st_ino
        ws.write("/f", b"v3")
        assert ws.stat("/f").st_ino == ino and ws.version("/f", 2).kept is not None
        assert [ws.read_version("/f", n) for n in (1, 2, 3)] == [b"v1", b"v2", b"v3"]
