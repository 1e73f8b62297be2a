"""agentfs.core.readers: a read-only holder's lock is seen by every other process and by this
one, goes when it is released or its process dies, and stops purging while held."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import agentfs
from agentfs.core import readers

HOLD = """
import sys, time
from agentfs.core.readers import ReaderHold
hold = ReaderHold(sys.argv[1])
print("held", flush=True)
time.sleep(600)
"""


def test_a_hold_is_seen_until_it_is_released(tmp_path: Path) -> None:
    db = str(tmp_path / "ws.db")
    assert not readers.held(db)  # no side file yet
    hold = readers.ReaderHold(db)
    assert readers.held(db) and readers.held(db)  # asking takes nothing away
    hold.release()
    hold.release()  # twice is harmless
    assert not readers.held(db)


def test_a_killed_holder_holds_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "ws.db")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, db], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert readers.held(db)
    finally:
        holder.kill()
        holder.wait()
    assert not readers.held(db)


def test_no_purge_while_a_reader_holds_the_workspace(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        ws.configure_history(keep="none")
        ino = ws.write("/f", b"x" * 100_000).st_ino
        hold = readers.ReaderHold(str(path))
        try:
            ws.remove("/f")
            assert ws.orphans.purge() == 0
            assert ws.conn.execute("SELECT 1 FROM ws_orphan WHERE ino = ?", (ino,)).get
        finally:
            hold.release()
        assert ws.orphans.purge() == 1
