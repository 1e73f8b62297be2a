"""A normal user's workspace files are that user's and private: the other tests of the modes
run as root, and only a normal user's run shows what SQLite and agentfs make of a file that
root does not own."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from security_bench import HOST_PATH, USER_UID, UserSetup, as_user

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "private_files.py"


def test_a_users_workspace_files_are_private_and_the_users(user_setup: UserSetup) -> None:
    home = user_setup.base / "private-files"
    work = home / "work"
    for folder in (home, work):
        folder.mkdir()
        os.chown(folder, USER_UID, USER_UID)
    program = [str(user_setup.python), str(PROGRAM), str(work), "022"]
    done = subprocess.run(
        as_user(user_setup, *program),
        env={"PATH": HOST_PATH, "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"},
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    modes = json.loads(done.stdout)
    assert "ws.db-readers" in modes and "ws.db-wal" in modes
    assert {name: tuple(found) for name, found in modes.items()} == dict.fromkeys(
        modes, (0o600, USER_UID)
    )
