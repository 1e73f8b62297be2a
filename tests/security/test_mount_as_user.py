"""The mount's own tests once more, as an unprivileged user: every other test runs as root,
to whom no mode, owner or xattr namespace says no, so only this run shows that a normal user's
mount (and a copy run as one) works as the same user's tmpfs does."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from security_bench import HOST_PATH, USER_UID, UserSetup, as_user

import agentfs
from agentfs.mount.daemon import unmount, wait_until

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


def test_the_users_namespace_keeps_no_copy_of_another_workspaces_mount(
    user_setup: UserSetup, tmp_path: Path
) -> None:
    """A workspace mounted when the bench makes its private namespace still ends at its
    unmount: its daemon exits while the namespace lives on. (A copy there would keep the
    mount's connection, and the daemon serving, until the namespace ended.)"""
    db, mnt = tmp_path / "ws.db", tmp_path / "mnt"
    agentfs.open(db).close()
    mnt.mkdir()
    daemon = subprocess.Popen([sys.executable, "-m", "agentfs.mountd", str(db), str(mnt)])
    namespace = None
    try:
        assert wait_until(mnt, True, 30), "not mounted"
        namespace = subprocess.Popen(as_user(user_setup, "sleep", "600"), env={"PATH": HOST_PATH})
        comm = Path(f"/proc/{namespace.pid}/comm")
        while comm.read_text().strip() != "sleep":  # unshare, sh and setpriv exec in turn
            assert namespace.poll() is None, "the namespace did not start"
            time.sleep(0.02)
        unmount(mnt)
        assert daemon.wait(timeout=120) == 0
        assert namespace.poll() is None, "the daemon outlived the namespace, not its unmount"
    finally:
        if namespace is not None:
            namespace.kill()
            namespace.wait()
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
            subprocess.run(["fusermount3", "-uz", str(mnt)], check=False)
