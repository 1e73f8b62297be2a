"""Several connections on one file: two Workspaces in this process and one in a subprocess.

What one commits the others see at their next operation, even paths they had already resolved
and cached. Removing a tree queues orphaned inodes that are then purged, and an open finishes a
purge that a crash cut short.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs.core.orphans import Orphans


@pytest.fixture
def other(ws_path: Path, ws: agentfs.Workspace) -> Iterator[agentfs.Workspace]:
    """A second Workspace on the file ``ws`` opened."""
    with agentfs.open(ws_path) as second:
        yield second


def run_in_subprocess(ws_path: Path, body: str, returncode: int = 0) -> str:
    """Run ``body`` with ``ws`` open on the workspace in a fresh interpreter; its stdout."""
    script = f"import agentfs, os, sys\nws = agentfs.open(sys.argv[1])\n{textwrap.dedent(body)}"
    proc = subprocess.run(
        [sys.executable, "-c", script, str(ws_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == returncode, proc.stderr
    return proc.stdout


def test_writes_of_one_connection_are_seen_by_the_other(
    ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws.write("/d/f", b"from A", parents=True)
    assert other.read("/d/f") == b"from A"
    other.append("/d/f", b", then B")
    other.kv.set("who", "B")
    assert ws.read("/d/f") == b"from A, then B"
    assert ws.kv.get("who") == "B"


def test_directory_renamed_by_another_connection_is_not_resolved_by_its_old_path(
    ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws.write("/old/sub/f", b"x", parents=True)
    assert ws.listdir("/old/sub") == ["f"]  # A has now cached /old and /old/sub
    other.rename("/old", "/new")
    for call in (
        lambda: ws.read("/old/sub/f"),
        lambda: ws.listdir("/old/sub"),
        lambda: ws.write("/old/sub/g", b""),
        lambda: ws.mkdir("/old/sub/h"),
    ):
        with pytest.raises(FileNotFoundError):
            call()
    assert ws.read("/new/sub/f") == b"x"


def test_directory_replaced_by_another_connection_resolves_to_the_new_one(
    ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws.write("/d/f", b"old tree", parents=True)
    assert ws.listdir("/d") == ["f"]
    other.remove("/d", recursive=True)
    other.mkdir("/d")
    ws.write("/d/g", b"into the new /d")
    assert other.listdir("/d") == ["g"]


def test_directory_removed_by_another_connection_cannot_receive_files(
    ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws.mkdir("/gone")
    assert ws.listdir("/gone") == []
    other.remove("/gone")
    with pytest.raises(FileNotFoundError):
        ws.write("/gone/f", b"")
    assert ws.conn.execute("SELECT count(*) FROM fs_dentry").get == 0


def test_a_subprocess_sees_our_writes_and_we_see_its(ws: agentfs.Workspace, ws_path: Path) -> None:
    ws.write("/shared/in", b"parent wrote this", parents=True)
    out = run_in_subprocess(
        ws_path,
        """
        print(ws.read_text("/shared/in"))
        ws.write("/shared/out", "child wrote this")
        """,
    )
    assert out == "parent wrote this\n"
    assert ws.read("/shared/out") == b"child wrote this"


def test_directory_renamed_by_a_subprocess_is_not_resolved_by_its_old_path(
    ws: agentfs.Workspace, ws_path: Path
) -> None:
    ws.write("/shared/in", b"x", parents=True)
    assert ws.listdir("/shared") == ["in"]
    run_in_subprocess(ws_path, 'ws.rename("/shared", "/moved")')
    with pytest.raises(FileNotFoundError):
        ws.write("/shared/again", b"")
    assert ws.listdir("/moved") == ["in"]


def test_removing_a_big_tree_queues_orphans_and_purge_frees_them(
    small_ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = small_ws
    ws.configure_history(keep="none")  # unlinked files are freed, not kept as history
    baseline = ws.conn.execute("SELECT count(*) FROM fs_inode").get
    for i in range(40):
        ws.write(f"/tree/d{i % 4}/f{i}", bytes(700), parents=True)  # two chunks each
    ws.symlink("d0", "/tree/link")
    ws.write("/keep", b"hard-linked into the tree")
    ws.link("/keep", "/tree/d1/keep")
    monkeypatch.setattr(ws.orphans, "purge", lambda batch=0: 0)
    ws.remove("/tree", recursive=True)
    assert ws.orphans.pending() == 40 + 4 + 1  # files, subdirectories, the symlink
    assert ws.listdir("/") == ["keep"]
    monkeypatch.undo()
    assert ws.orphans.purge(batch=7) == 45
    assert ws.orphans.pending() == 0
    assert ws.conn.execute("SELECT count(*) FROM fs_inode").get == baseline + 1
    keep = ws.stat("/keep")
    assert ws.conn.execute("SELECT count(*) FROM fs_data").get == 1
    assert (keep.st_nlink, ws.read("/keep")) == (1, b"hard-linked into the tree")


def test_remove_purges_the_queue_before_returning(plain_ws: agentfs.Workspace) -> None:
    ws = plain_ws
    for i in range(300):  # more than one purge batch
        ws.write(f"/tree/f{i}", b"x", parents=True)
    ws.write("/big", bytes(3 * ws.chunks.size))  # over a chunk: queued, not freed inline
    ws.remove("/tree", recursive=True)
    ws.remove("/big")
    assert ws.orphans.pending() == 0
    assert ws.conn.execute("SELECT count(*) FROM fs_inode").get == 1
    assert ws.conn.execute("SELECT count(*) FROM fs_data").get == 0


def test_open_purges_orphans_left_by_a_crash_after_unlinking(ws_path: Path) -> None:
    with agentfs.open(ws_path) as ws:
        ws.configure_history(keep="none")
        ws.write("/tree/big", bytes(200_000), parents=True)
        ws.write("/tree/sub/small", b"x", parents=True)
    run_in_subprocess(
        ws_path,
        """
        ws.orphans.purge = lambda batch=0: os._exit(9)  # die right after the unlink commits
        ws.remove("/tree", recursive=True)
        """,
        returncode=9,
    )
    with agentfs.open(ws_path) as ws:
        assert ws.listdir("/") == []
        assert ws.orphans.pending() == 0
        assert ws.conn.execute("SELECT count(*) FROM fs_inode").get == 1
        assert ws.conn.execute("SELECT count(*) FROM fs_data").get == 0


def test_open_purges_queue_rows_written_by_raw_sql(ws_path: Path) -> None:
    with agentfs.open(ws_path) as ws:
        ws.configure_history(keep="none")  # a file no version holds
        ino = ws.write("/f", bytes(150_000)).st_ino
        with ws.conn:  # what a crashed unlink leaves: no dentry, nlink 0, a queue row
            ws.conn.execute("DELETE FROM fs_dentry WHERE ino = ?", (ino,))
            ws.conn.execute("UPDATE fs_inode SET nlink = 0 WHERE ino = ?", (ino,))
            ws.conn.execute("INSERT INTO ws_orphan(ino, queued_at) VALUES (?, 0)", (ino,))
    with agentfs.open(ws_path) as ws:
        assert ws.orphans.pending() == 0
        assert ws.conn.execute("SELECT count(*) FROM fs_inode WHERE ino = ?", (ino,)).get == 0
        assert ws.conn.execute("SELECT count(*) FROM fs_data WHERE ino = ?", (ino,)).get == 0
        assert ws.info().files == 0


def test_purge_never_frees_an_inode_history_holds(ws: agentfs.Workspace) -> None:
    """A queue row for a versioned file (a bug or a hand edit) is dropped, the bytes kept."""
    ino = ws.write("/f", b"kept by its version").st_ino
    ws.remove("/f")
    ws.conn.execute("INSERT INTO ws_orphan(ino, queued_at) VALUES (?, 0)", (ino,))
    ws.orphans.purge()
    assert ws.orphans.pending() == 0
    assert ws.read_version("/f", 1) == b"kept by its version"


def test_purge_of_an_empty_queue_takes_no_write_lock(
    ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws.conn.set_busy_timeout(50)  # a purge that wanted the lock would fail fast with BusyError
    with other.conn:  # another connection holds the write lock meanwhile
        other.conn.execute("INSERT INTO kv_store(key, value) VALUES ('lock', '1')")
        assert Orphans(ws.conn, ws.chunks.size).purge() == 0


def test_three_processes_writing_at_once_all_land(ws: agentfs.Workspace, ws_path: Path) -> None:
    """Writers in separate processes wait for each other (busy timeout), never fail."""
    body = """
        tag = sys.argv[2]
        for i in range(400):
            ws.write(f"/shared/{tag}-{i}", f"{tag} {i}", parents=True)
            if i % 4 == 0:
                ws.rename(f"/shared/{tag}-{i}", f"/shared/{tag}-{i}.done")
        """
    script = f"import agentfs, sys\nws = agentfs.open(sys.argv[1])\n{textwrap.dedent(body)}"
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(ws_path), tag], stderr=subprocess.PIPE)
        for tag in ("a", "b", "c")
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    names = ws.listdir("/shared")
    assert len(names) == 1200
    assert ws.read("/shared/b-4.done") == b"b 4" and ws.read("/shared/c-399") == b"c 399"
