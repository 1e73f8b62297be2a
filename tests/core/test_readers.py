"""agentfs.core.readers: a read-only holder's lock is seen by every other process and by this
one, goes when it is released or its process dies, and stops purging while held."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

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


NOBODY = """
import sys
sys.path.insert(0, sys.argv[2])
from agentfs.core import readers
try:
    readers.ReaderHold(sys.argv[1] + "/ws.db")
    print("held")
except PermissionError as exc:
    print("refused:", exc)
"""


def test_a_directory_a_reader_may_not_write_to_is_a_clear_error() -> None:
    """Run as nobody (setpriv): refused with a clear message when the lock file is missing,
    and the lock taken through a read-only descriptor when it is there."""
    root = Path(readers.__file__).resolve().parents[2]
    base = Path(tempfile.mkdtemp())  # in /tmp, which nobody may cross (pytest's may not be)
    base.chmod(0o755)
    directory = base / "ro"
    directory.mkdir()
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    command = [*as_nobody, sys.executable, "-c", NOBODY, str(directory), str(root)]
    probe = [
        *as_nobody,
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {str(root)!r}); import agentfs.core.readers",
    ]
    if os.geteuid() != 0 or subprocess.run(probe, capture_output=True).returncode != 0:
        shutil.rmtree(base)
        pytest.skip("needs root to run as nobody, and a checkout nobody may read")
    directory.chmod(0o555)
    try:
        refused = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        directory.chmod(0o755)
        (directory / "ws.db-readers").touch(0o644)
        directory.chmod(0o555)
        held = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    finally:
        directory.chmod(0o755)
        shutil.rmtree(base)
    assert refused.startswith("refused:") and "lock file beside the workspace" in refused
    assert held == "held\n"
