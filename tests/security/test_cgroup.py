"""Where the memory cgroup of a sandboxed command is made, what is said where it cannot be,
and a command that cannot enter its cgroup never running (``agentfs.mount.cgroup``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentfs.mount import cgroup
from agentfs.mount.sandbox import Limits, Sandbox, SandboxError


def _find_with(variable: str) -> str:
    """What a fresh process finds with ``AGENTFS_CGROUP`` set to ``variable``."""
    code = "from agentfs.mount import cgroup; print(cgroup.find())"
    env = os.environ | {cgroup.ENV: variable}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_named_directory_that_is_no_cgroup_is_said_so(tmp_path: Path) -> None:
    assert _find_with(str(tmp_path)) == (
        f"{cgroup.ENV}={tmp_path} is not a directory of a memory cgroup hierarchy"
    )


def test_doctor_reports_a_missing_cgroup_without_failing(tmp_path: Path) -> None:
    """The sandbox runs without a memory cgroup (each process's limits hold), so doctor
    marks it ``--``, says what its absence leaves unbounded, and does not fail for it."""
    env = os.environ | {cgroup.ENV: str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "agentfs.cli", "doctor"], env=env, capture_output=True, text=True
    )
    line = next(x for x in done.stdout.splitlines() if "memory cgroup" in x)
    assert line.startswith("--"), done.stdout
    assert "only each process's own memory is bounded" in done.stdout
    others_ok = all(x.startswith("ok") for x in done.stdout.splitlines() if x[:2] in ("ok", "NO"))
    assert done.returncode == (0 if others_ok else 1), done.stdout


@pytest.mark.parametrize(
    ("root", "path", "expected"),
    [
        ("/", "/", "/m"),
        ("/", "/a/b", "/m/a/b"),
        ("/a", "/a/b", "/m/b"),  # a container's hierarchy, mounted from its own cgroup
        ("/a", "/a", "/m"),
    ],
)
def test_a_cgroup_path_is_found_under_its_mount(root: str, path: str, expected: str) -> None:
    assert cgroup._under((root, Path("/m")), path) == Path(expected)


def test_mountinfo_escapes_are_undone() -> None:
    assert cgroup._unescape("/sys/fs/a\\040b\\134c") == "/sys/fs/a b\\c"


def test_a_command_that_cannot_enter_its_cgroup_never_runs(tmp_path: Path) -> None:
    """Fail closed: the cgroup removed before bubblewrap's PID 1 is moved into it, the run
    is refused, PID 1 is killed while it waits, and the command never started."""
    place = cgroup.find()
    if isinstance(place, str):
        pytest.skip(f"no memory cgroup here: {place}")
    tmp_path.chmod(0o777)  # root's command runs as a user of its own
    with Sandbox(tmp_path, cwd=None, network=False, env=None, limits=Limits()) as box:
        assert box.cgroup is not None
        box.cgroup.path.rmdir()
        proc = subprocess.Popen(box.command(["touch", "ran"]), **box.popen_options())
        with pytest.raises(SandboxError, match="cannot enter its memory cgroup"):
            box.started(proc)
        assert proc.wait(timeout=30) != 0
    assert not (tmp_path / "ran").exists()


def test_a_cgroup_left_by_a_killed_process_with_our_pid_is_replaced() -> None:
    place = cgroup.find()
    if isinstance(place, str):
        pytest.skip(f"no memory cgroup here: {place}")
    first = cgroup.MemoryCgroup(place, 64 << 20)
    first.close()
    pid, serial = first.path.name.split("-")[1:]
    stale = place.parent / f"agentfs-{pid}-{int(serial) + 1}"
    stale.mkdir()  # as a killed agentfs of the same pid would have left it
    try:
        second = cgroup.MemoryCgroup(place, 64 << 20)
        assert second.path == stale and (stale / place.limit_file).read_text().strip() == str(
            64 << 20
        )
        second.close()
        assert not stale.exists()
    finally:
        if stale.exists():
            stale.rmdir()
