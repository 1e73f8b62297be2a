"""Who a workspace's inodes belong to: whoever made them (the API: this process's effective
ids), and, in a file a normal user owns, root's old records given to that user (migration 13).
The unprivileged side of this (a normal user's workspace, mount and sandbox) is exercised as
such a user in tests/security."""

from __future__ import annotations

import os
from pathlib import Path

import apsw

import agentfs
from tests.old_schema import as_schema_12


def test_the_root_and_new_inodes_belong_to_this_process(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db") as ws:
        ws.write("/d/f.txt", "x", parents=True)
        ws.symlink("/d/f.txt", "/link")
        ids = {(st.st_uid, st.st_gid) for st in map(ws.lstat, ["/", "/d", "/d/f.txt", "/link"])}
    assert ids == {(os.geteuid(), os.getegid())}


def test_new_inodes_take_the_handles_owner(tmp_path: Path) -> None:
    """The core records ``FileSystem.owner`` on every inode it makes: files, and the
    directories a snapshot restore brings back."""
    with agentfs.open(tmp_path / "ws.db") as ws:
        ws.mkdir("/gone")
        snap = ws.snapshots.create()
        ws.remove("/gone")
        ws.owner = (4321, 8765)
        ws.snapshots.restore(snap.name)
        ws.write("/f2", "y")
        owned = {p: (ws.lstat(p).st_uid, ws.lstat(p).st_gid) for p in ("/gone", "/f2")}
    assert owned == {"/gone": (4321, 8765), "/f2": (4321, 8765)}


def test_migration_13_gives_roots_inodes_to_the_user_who_owns_the_file(tmp_path: Path) -> None:
    """Before it, the API recorded root whoever wrote: in a file a normal user owns, those
    records become that user's; an inode someone chowned to another user stays theirs; in a
    file root owns nothing changes."""
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        ws.write("/a/b.txt", "b", parents=True)
        ws.write("/theirs.txt", "t")
        theirs = ws.stat("/theirs.txt").st_ino
    mine = ("/", "/a", "/a/b.txt")

    def as_written_before() -> None:
        as_schema_12(path)
        conn = apsw.Connection(str(path))
        with conn:
            conn.execute("UPDATE fs_inode SET uid = 777, gid = 778 WHERE ino = ?", (theirs,))
        conn.close()

    as_written_before()
    with agentfs.open(path) as ws:  # root owns the file: root's records stay
        assert {(ws.stat(p).st_uid, ws.stat(p).st_gid) for p in mine} == {(0, 0)}
    as_written_before()
    os.chown(path, 2345, 2346)
    with agentfs.open(path) as ws:
        assert {(ws.stat(p).st_uid, ws.stat(p).st_gid) for p in mine} == {(2345, 2346)}
        assert (ws.stat("/theirs.txt").st_uid, ws.stat("/theirs.txt").st_gid) == (777, 778)
