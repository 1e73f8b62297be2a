"""Pins every connection sees (``ws_pin``): an inode a connection holds open and then unlinks
survives another connection's purge while its holder runs, and not after the holder is gone.
The mount's own tests (tests/mount/test_mount_unlinked.py) run the same through real
processes; here two connections of one process, and the holder name of a process that exited.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs import db, fsck
from agentfs.core import holders
from agentfs.core.by_inode import ByInode
from tests.old_schema import as_schema_7
from tests.table_rows import all_rows


@pytest.fixture
def other(ws_path: Path, ws: agentfs.Workspace) -> Iterator[agentfs.Workspace]:
    """A second connection to ``ws``'s file (another process, as far as SQLite knows)."""
    with agentfs.open(ws_path) as workspace:
        yield workspace


def _exists(ws: agentfs.Workspace, ino: int) -> bool:
    return ws.conn.execute("SELECT 1 FROM fs_inode WHERE ino = ?", (ino,)).get is not None


def _pins(ws: agentfs.Workspace) -> list[tuple[int, str]]:
    return ws.conn.execute("SELECT ino, holder FROM ws_pin").fetchall()  # type: ignore[return-value]


def _dead_holder() -> str:
    """The holder name of a process that has exited."""
    code = "from agentfs.core.holders import this_process; print(this_process())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    holder = done.stdout.strip()
    assert not holders.alive(holder)
    return holder


def test_this_process_is_alive_and_malformed_names_are_not() -> None:
    assert holders.alive(holders.this_process())
    for bad in ("", "x", "a:b:c", "a:b:notapid:1"):
        assert not holders.alive(bad)
    boot, namespace, pid, start = holders.this_process().split(":")
    assert not holders.alive(f"another-boot:{namespace}:{pid}:{start}")
    assert holders.alive(f"{boot}:another-namespace:{pid}:{start}")  # not ours to judge


def test_an_open_file_unlinked_survives_another_connections_purge(
    plain_ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws = plain_ws
    ino = ws.write("/open", b"bytes still read").st_ino
    ws.orphans.enable_pins()
    ws.orphans.pin(ino)
    assert _pins(ws) == []  # pinning alone writes nothing
    ws.remove("/open")
    assert _pins(ws) == [(ino, ws.orphans.holder)]  # written with the unlink
    assert other.orphans.purge() == 0
    assert _exists(other, ino)
    assert ByInode(ws).read(ino, 0, 100) == b"bytes still read"
    ws.orphans.unpin(ino)  # writes nothing: the holder's next purge drops its pin
    assert other.orphans.purge() == 0
    assert ws.orphans.purge() == 1
    assert _pins(ws) == [] and not _exists(other, ino)


def test_a_keeper_frees_what_another_connection_unlinked_under_its_open_file(
    plain_ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    """The gap pins leave (the unlink is another connection's, so no pin is written) is
    closed by the keeper: while it runs, only it purges, and it spares what it holds open."""
    ws = plain_ws
    ws.configure_history(keep="none")
    ino = ws.write("/open", b"bytes still read").st_ino
    spare = ws.write("/spare", b"nobody has this open").st_ino
    ws.orphans.enable_pins()
    ws.orphans.keep()
    ws.orphans.pin(ino)
    other.remove("/open")
    other.remove("/spare")
    assert _pins(ws) == []  # not this connection's unlink: no pin
    assert other.orphans.purge() == 0  # left to the keeper
    assert _exists(other, ino) and _exists(other, spare)
    assert fsck.check(other).clean
    assert ws.orphans.purge() == 1  # the keeper frees what it does not hold open
    assert _exists(ws, ino) and not _exists(ws, spare)
    assert ByInode(ws).read(ino, 0, 100) == b"bytes still read"
    ws.orphans.unpin(ino)
    assert ws.orphans.purge() == 1 and not _exists(ws, ino)
    ws.orphans.unkeep()
    assert ws.conn.execute("SELECT count(*) FROM ws_keeper").get == 0


def test_a_dead_keeper_stops_counting(
    plain_ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws = plain_ws
    ws.configure_history(keep="none")
    ino = ws.write("/gone", b"x").st_ino
    with ws.transaction():
        ws.conn.execute("INSERT INTO ws_keeper(holder) VALUES (?)", (_dead_holder(),))
    report = fsck.check(ws)
    assert [p.check for p in report.problems] == ["check_ws_keeper_holder"]
    ws.remove("/gone")
    assert other.orphans.purge() == 1 and not _exists(other, ino)  # and drops the keeper
    assert other.conn.execute("SELECT count(*) FROM ws_keeper").get == 0
    with ws.transaction():
        ws.conn.execute("INSERT INTO ws_keeper(holder) VALUES (?)", (_dead_holder(),))
    fsck.repair(ws)
    assert fsck.check(ws).clean


def test_a_rename_over_an_open_file_and_a_tree_removal_pin_it_too(
    plain_ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws = plain_ws
    replaced = ws.write("/target", b"old").st_ino
    below = ws.write("/tree/deep/file", b"deep", parents=True).st_ino
    ws.write("/source", b"new")
    ws.orphans.enable_pins()
    ws.orphans.pin(replaced)
    ws.orphans.pin(below)
    ws.rename("/source", "/target")
    ws.remove("/tree", recursive=True)
    assert sorted(ino for ino, _ in _pins(ws)) == sorted([replaced, below])
    other.orphans.purge()
    assert _exists(other, replaced) and _exists(other, below)


def test_a_dead_holders_pins_are_cleared_by_the_next_purge(
    plain_ws: agentfs.Workspace, ws_path: Path
) -> None:
    ws = plain_ws
    ino = ws.write("/f", b"x").st_ino
    ws.orphans.enable_pins()
    ws.orphans.pin(ino)
    ws.remove("/f")
    with ws.conn:
        ws.conn.execute("UPDATE ws_pin SET holder = ?", (_dead_holder(),))
    ws.orphans.unpin(ino)  # its own pin was the dead one's: nothing of ours is left
    with agentfs.open(ws_path) as again:  # an open purges
        assert _pins(again) == [] and not _exists(again, ino)


def test_fsck_reports_and_drops_pins_that_keep_nothing(ws: agentfs.Workspace) -> None:
    ino = ws.write("/f", b"x").st_ino
    with ws.conn:
        ws.conn.execute("INSERT INTO ws_pin(ino, holder) VALUES (?, ?)", (ino, _dead_holder()))
        ws.conn.execute("INSERT INTO ws_pin VALUES (?, ?)", (99999, holders.this_process()))
    report = fsck.check(ws)
    assert {p.check for p in report.problems} == {"check_ws_pin_holder"}
    assert len(report.problems) == 2
    fsck.repair(ws)
    assert _pins(ws) == [] and fsck.check(ws).clean


def test_a_live_pin_on_a_queued_orphan_is_no_fsck_problem(
    plain_ws: agentfs.Workspace,
) -> None:
    ino = plain_ws.write("/f", b"x").st_ino
    plain_ws.orphans.enable_pins()
    plain_ws.orphans.pin(ino)
    plain_ws.remove("/f")
    assert fsck.check(plain_ws).clean
    plain_ws.orphans.unpin(ino)


def test_pins_need_enabling_outside_a_transaction(ws: agentfs.Workspace) -> None:
    with pytest.raises(RuntimeError):
        ws.orphans.pin(1)
    with ws.transaction(), pytest.raises(RuntimeError):
        ws.orphans.enable_pins()


def test_a_schema_7_workspace_gains_the_pin_table(ws_path: Path) -> None:
    with agentfs.open(ws_path) as ws:
        ws.write("/f", b"kept")
    as_schema_7(ws_path)
    before = all_rows(ws_path)
    assert "ws_pin" not in before
    with agentfs.open(ws_path) as ws:
        assert db.schema_version(ws.conn) == db.SCHEMA_VERSION
        assert ws.read("/f") == b"kept" and _pins(ws) == []
        assert fsck.check(ws).clean
    after = all_rows(ws_path)
    assert after.pop("ws_pin") == []
    assert after["fs_inode"] == before["fs_inode"]


def test_an_unlinked_inode_gets_no_new_name(plain_ws: agentfs.Workspace) -> None:
    """An inode held open after its last name went waits in the orphan queue: a link by its
    number (what the mount would be asked) must not give it a name the purge then frees."""
    ws = plain_ws
    ino = ws.write("/open", b"bytes").st_ino
    ws.orphans.enable_pins()
    ws.orphans.pin(ino)
    ws.remove("/open")
    by = ByInode(ws)
    with pytest.raises(FileNotFoundError):
        by.link(ino, ws.stat("/").st_ino, "again")
    assert not ws.exists("/again") and by.read(ino, 0, 10) == b"bytes"
    ws.orphans.unpin(ino)
    assert ws.orphans.purge() == 1 and not _exists(ws, ino)
