"""The mount's own tests once more, as an unprivileged user: every other test runs as root,
to whom no mode, owner or xattr namespace says no, so only this run shows that a normal user's
mount (and a copy run as one) works as the same user's tmpfs does."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from security_bench import HOST_PATH, USER_UID, UserSetup, as_user

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.runs_first
def test_the_mount_suite_passes_as_a_normal_user(user_setup: UserSetup) -> None:
    home = user_setup.base / "mount-suite"
    home.mkdir()
    os.chown(home, USER_UID, USER_UID)
    pytest_argv = [str(user_setup.python), "-m", "pytest", str(ROOT / "tests" / "mount")]
    # the attack machine asks sizes and depths of the daemon, which answers them alike for
    # every uid (the permission cases are the conformance suite's, run here too): root's run
    # is enough, and the suite's time is better spent elsewhere
    pytest_argv += ["--ignore", str(ROOT / "tests" / "mount" / "test_mount_attack.py")]
    pytest_argv += ["-p", "no:cacheprovider", "-p", "no:xdist", f"--basetemp={home / 'tmp'}"]
    env = {
        "PATH": HOST_PATH,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "HYPOTHESIS_STORAGE_DIRECTORY": str(home / "hypothesis"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    done = subprocess.run(
        as_user(user_setup, *pytest_argv),
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"as uid {USER_UID}:\n{done.stdout[-20000:]}{done.stderr}"
