"""Versioned appends: a change that only adds bytes past a file's end leaves the file's
inode in place, and every version that named it keeps reading its bytes as the inode's
first ones, so a growing file's history costs what it adds, not a copy per append.

Each test runs on the conftest ``ws`` (fsck clean afterwards) and ends with
``test_versions.history_problems`` empty: every version's first ``size`` bytes still hash to
the digest recorded with it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck
from agentfs.history import hashing
from agentfs.tools.common import version_of
from tests.history.test_versions import history_problems

MIB = 1 << 20


@pytest.fixture
def ws(ws: agentfs.Workspace) -> Iterator[agentfs.Workspace]:
    yield ws
    assert history_problems(ws) == []


def stored_bytes(ws: agentfs.Workspace) -> int:
    return int(ws.conn.execute("SELECT coalesce(sum(length(data)), 0) FROM fs_data").get)


def inodes(ws: agentfs.Workspace) -> int:
    return int(ws.conn.execute("SELECT count(*) FROM fs_inode").get)


def blake(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def test_appends_keep_the_inode_and_store_each_byte_once(ws: agentfs.Workspace) -> None:
    pieces = [os.urandom(300_000) for _ in range(8)]  # each over KEPT_MAX, still in place
    ws.write("/log", pieces[0])
    ino, count = ws.stat("/log").st_ino, inodes(ws)
    for piece in pieces[1:4]:
        ws.append("/log", piece)
    for k, piece in enumerate(pieces[4:], start=4):
        ws.pwrite("/log", piece, k * 300_000)
    ws.truncate("/log", 8 * 300_000 + 10)  # growing: zeros past the end
    assert ws.stat("/log").st_ino == ino
    assert inodes(ws) == count
    assert stored_bytes(ws) == 8 * 300_000 + 10  # no version holds a copy
    history = ws.history("/log")
    assert [v.ino for v in history] == [ino] * 9
    whole = b"".join(pieces) + bytes(10)
    for v in history:
        assert ws.read_version("/log", v.n) == whole[: v.size]
        assert v.hash == blake(whole[: v.size])


def test_a_change_below_the_end_keeps_every_grown_version(ws: agentfs.Workspace) -> None:
    """After appends, a rewrite in the middle or a shrinking truncate must not touch the
    bytes of the versions that name the inode (their sizes differ): it copies the content
    down to a new inode that all of them name from then on; the file keeps its number."""
    ws.write("/f", b"a" * 40_000)
    ws.append("/f", b"b" * 40_000)
    ws.append("/f", b"c" * 40_000)
    ino = ws.stat("/f").st_ino
    ws.pwrite("/f", b"X", 10)
    assert ws.stat("/f").st_ino == ino
    frozen = {v.ino for v in ws.history("/f")[:3]}
    assert len(frozen) == 1 and ino not in frozen
    assert ws.version("/f", 4).ino == ino
    ws.truncate("/f", 5)
    assert ws.stat("/f").st_ino == ino
    assert [ws.read_version("/f", n) for n in (1, 2, 3)] == [
        b"a" * 40_000,
        b"a" * 40_000 + b"b" * 40_000,
        b"a" * 40_000 + b"b" * 40_000 + b"c" * 40_000,
    ]
    assert ws.read_version("/f", 4) == b"a" * 10 + b"X" + b"a" * 39_989 + b"b" * 40_000 + (
        b"c" * 40_000
    )
    assert ws.read("/f") == b"aaaaa"


def test_a_small_file_keeps_each_grown_version_its_own_size(ws: agentfs.Workspace) -> None:
    """Under KEPT_MAX a change in place keeps every version's bytes aside: a version that is
    a shorter prefix of the inode gets only its own bytes."""
    ws.write("/f", b"12345")
    ws.append("/f", b"678")
    ws.write("/f", b"new")  # in place: both versions naming the inode are kept aside
    assert [ws.read_version("/f", n) for n in (1, 2, 3)] == [b"12345", b"12345678", b"new"]
    assert [v.ino for v in ws.history("/f")[:2]] == [None, None]


@pytest.mark.parametrize("deleted", [False, True], ids=["live", "deleted"])
def test_restoring_a_shorter_version_of_a_grown_file(ws: agentfs.Workspace, deleted: bool) -> None:
    ws.write("/f", b"x" * 50_000)
    ws.append("/f", b"y" * 50_000)
    if deleted:
        ws.remove("/f")
    restored = ws.restore_version("/f", 1)
    assert ws.read("/f") == b"x" * 50_000
    assert restored.size == 50_000
    assert ws.read_version("/f", 2) == b"x" * 50_000 + b"y" * 50_000


def test_the_current_version_after_an_unversioned_append(ws: agentfs.Workspace) -> None:
    """An append with versioning off leaves the newest version a prefix: it no longer
    describes the file (read tracking and ``expected_version`` must not say it does), and the
    next versioned change records the appended content first."""
    ws.write("/f", b"versioned")
    ws.configure_history(keep="none")
    ws.append("/f", b" and more")
    ws.configure_history(keep="all")
    assert version_of(ws, "/f", ws.stat("/f")) == 0
    ws.write("/f", b"next")
    assert [ws.read_version("/f", n) for n in (1, 2, 3)] == [
        b"versioned",
        b"versioned and more",
        b"next",
    ]


def test_digests_continue_across_appends(ws: agentfs.Workspace) -> None:
    """Large files' appends hash only what they add (``history.hashing``), and the digest is
    the whole content's, whatever happened between: another handle's change in the middle,
    an unversioned append, a restore."""
    ws.write("/big", os.urandom(hashing.MIN_BYTES))
    with agentfs.open(ws.path) as other:
        for round_ in range(3):
            ws.append("/big", os.urandom(1000))
            other.pwrite("/big", b"changed elsewhere", 100 + round_)
            ws.append("/big", os.urandom(1000))
            other.append("/big", os.urandom(10))
    ws.configure_history(keep="none")
    ws.append("/big", b"unversioned")
    ws.configure_history(keep="all")
    ws.append("/big", b"versioned again")
    ws.restore_version("/big", 2)
    ws.append("/big", b"after the restore")
    for v in ws.history("/big"):
        if v.has_content:
            assert blake(ws.read_version("/big", v.n)) == v.hash


@pytest.mark.damages_workspace
def test_fsck_finds_an_inode_shorter_than_its_version(ws_path: Path) -> None:
    """A version may name an inode longer than itself, never a shorter one."""
    with agentfs.open(ws_path) as ws:
        ws.write("/f", b"a" * 30_000)
        ws.append("/f", b"b" * 30_000)
        ino = ws.stat("/f").st_ino
        assert fsck.check(ws).clean
        with ws.transaction():
            ws.conn.execute("UPDATE fs_inode SET size = 20000 WHERE ino = ?", (ino,))
            ws.conn.execute(
                "UPDATE fs_data SET data = substr(data, 1, 20000) WHERE ino = ?", (ino,)
            )
        ws.drop_caches()
        found = [p.message for p in fsck.check(ws).problems if p.check == "check_ws_version_inode"]
        assert found == [
            f"version 1 of /f: inode {ino} has 20000 bytes, recorded 30000",
            f"version 2 of /f: inode {ino} has 20000 bytes, recorded 60000",
        ]


def test_a_handle_that_appends_keeps_the_inode(ws: agentfs.Workspace) -> None:
    """``open(path, "ab")`` (what ``>>`` does through the mount) adds its bytes in place: each
    close makes one version, none copies the file."""
    ws.write("/log", b"0" * 100_000)
    ino, count = ws.stat("/log").st_ino, inodes(ws)
    for k in range(1, 4):
        with ws.open("/log", "ab") as f:
            f.write(str(k).encode() * 50_000)
    assert ws.stat("/log").st_ino == ino
    assert inodes(ws) == count
    assert stored_bytes(ws) == 250_000
    expected = b"0" * 100_000 + b"1" * 50_000 + b"2" * 50_000 + b"3" * 50_000
    assert ws.read("/log") == expected
    assert [v.size for v in ws.history("/log")] == [100_000, 150_000, 200_000, 250_000]


def test_a_handle_append_takes_the_last_chunk_as_it_is_now(ws: agentfs.Workspace) -> None:
    """A handle loads the last chunk when it first writes into it; if another writer changes
    that chunk's committed bytes before the handle commits, the append must not write the
    handle's stale copy back under the versions that name the inode."""
    ws.write("/f", b"a" * 100_000)
    with ws.open("/f", "ab") as f:
        f.write(b"tail")
        f.flush()  # loads the last chunk and commits: in place
        f.write(b"more")
        with agentfs.open(ws.path) as other:  # meanwhile, a change in that chunk
            other.pwrite("/f", b"Z", 99_000)
    assert ws.read("/f") == b"a" * 99_000 + b"Z" + b"a" * 999 + b"tailmore"
    versions = ws.history("/f")
    assert ws.read_version("/f", versions[0].n) == b"a" * 100_000
    assert ws.read_version("/f", versions[-1].n) == ws.read("/f")


def test_a_handle_that_writes_below_the_end_still_copies_down(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"b" * 100_000)
    ino = ws.stat("/f").st_ino
    with ws.open("/f", "r+b") as f:
        f.seek(99_999)
        f.write(b"XY")  # one byte below the old end
    assert ws.stat("/f").st_ino == ino
    assert ws.version("/f", 1).ino not in (None, ino)
    assert ws.version("/f", 2).ino == ino
    assert ws.read_version("/f", 1) == b"b" * 100_000
    assert ws.read("/f") == b"b" * 99_999 + b"XY"


def test_a_handle_past_the_version_limit_records_the_right_digest(ws: agentfs.Workspace) -> None:
    """A handle stops hashing once its content outgrows ``history.max_bytes`` (no version
    will need the digest); cut back under the limit before close, the version's digest is
    read back, not taken from the abandoned hash."""
    ws.configure_history(max_bytes=1000)
    with ws.open("/f", "wb") as f:
        f.write(b"a" * 600)
        f.write(b"b" * 600)  # 1,200 bytes: past the limit
    assert ws.history("/f") == []
    with ws.open("/g", "wb") as f:
        f.write(b"a" * 600)
        f.write(b"b" * 600)
        f.truncate(700)
    (version,) = ws.history("/g")
    assert (version.size, version.hash) == (700, blake(b"a" * 600 + b"b" * 100))
