"""Fixtures of the attacks on the sandbox: ``box`` gives each test a fresh workspace twice,
as agentfs run by root and as agentfs run by an unprivileged user (``security_bench``)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from security_bench import HOST_PATH, SYSTEM_PYTHON, USER_UID, Box, UserSetup, missing

from agentfs import fsck
from agentfs.mount import cgroup
from agentfs.mount.identity import SANDBOX_IDS


@pytest.fixture(scope="session")
def machine() -> None:
    """Skip (saying why) where the machine lacks what a sandboxed mount needs."""
    if os.geteuid() == 0 and os.path.exists("/dev/fuse"):
        mode = os.stat("/dev/fuse").st_mode
        if mode & 0o006 != 0o006:
            # Standard hosts (udev's rules) make /dev/fuse 0666 so that any user can mount
            # with fusermount3; some containers make it 0600. The "user" variant needs what
            # standard hosts have.
            os.chmod("/dev/fuse", stat.S_IMODE(mode) | 0o666)
    reason = missing()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def user_setup(machine: None) -> Iterator[UserSetup]:
    """A venv of the system Python that sees this venv's packages, in a directory every user
    can reach (this venv's interpreter lives under root's private home), and a copy of
    ``/etc/passwd`` and ``/etc/group`` naming uid 2345."""
    if os.geteuid() != 0:
        pytest.skip("dropping privileges to another uid needs root")
    for tool in ("setpriv", "unshare", "mount"):
        if shutil.which(tool, path=HOST_PATH) is None:
            pytest.skip(f"{tool} is missing (Debian package util-linux)")
    if not SYSTEM_PYTHON.exists():
        pytest.skip(f"{SYSTEM_PYTHON} is missing: no interpreter uid {USER_UID} can execute")
    version = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import sys; print(*sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if tuple(map(int, version)) != sys.version_info[:2]:
        pytest.skip(f"{SYSTEM_PYTHON} is {'.'.join(version)}, not this venv's Python")
    base = Path(tempfile.mkdtemp(prefix="agentfs-security-", dir="/tmp"))
    try:
        base.chmod(0o755)
        venv = base / "venv"
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", venv], check=True)
        purelib = subprocess.run(
            [
                venv / "bin" / "python",
                "-c",
                "import sysconfig; print(sysconfig.get_path('purelib'))",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        ours = sysconfig.get_path("purelib")
        Path(purelib, "agentfs-tests.pth").write_text(
            f"import site; site.addsitedir({ours!r})\n", encoding="utf-8"
        )
        subprocess.run(["chmod", "-R", "a+rX", venv], check=True)
        passwd, group = base / "passwd", base / "group"
        passwd.write_text(
            Path("/etc/passwd").read_text(encoding="utf-8")
            + f"agentfs-test:x:{USER_UID}:{USER_UID}::/nonexistent:/usr/sbin/nologin\n",
            encoding="utf-8",
        )
        group.write_text(
            Path("/etc/group").read_text(encoding="utf-8") + f"agentfs-test:x:{USER_UID}:\n",
            encoding="utf-8",
        )
        passwd.chmod(0o644)
        group.chmod(0o644)
        yield UserSetup(base, venv / "bin" / "python", passwd, group)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=["root", "user"])
def box(
    request: pytest.FixtureRequest, machine: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Box]:
    """A fresh workspace of the identity in the test's id; afterwards it must be fsck-clean
    (whatever the command did, the workspace survived it)."""
    identity = request.param
    if identity == "root":
        if os.geteuid() != 0:
            pytest.skip("the 'root' variant is agentfs run by root")
        made = Box("root", tmp_path_factory.mktemp("root"), 0, SANDBOX_IDS[0], None)
    elif os.geteuid() != 0:  # the tests already run as an unprivileged user: that user
        uid = os.geteuid()
        made = Box("user", tmp_path_factory.mktemp("user"), uid, uid, None)
    else:
        user = request.getfixturevalue("user_setup")
        directory = Path(tempfile.mkdtemp(prefix="box-", dir=user.base))
        os.chown(directory, USER_UID, USER_UID)
        directory.chmod(0o755)
        made = Box("user", directory, USER_UID, USER_UID, user)
    yield made
    if made.db.exists():
        with made.workspace() as ws:
            report = fsck.check(ws)
        assert report.clean, f"fsck after the attack: {report.problems}"


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A host directory every user can read (mode 0755 up to ``/``): a secret placed here
    is one the sandbox's user could read if nothing but file modes kept it out."""
    directory = Path(tempfile.mkdtemp(prefix="agentfs-host-", dir="/tmp"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def memory_cgroup(box: Box) -> Iterator[dict[str, str]]:
    """The environment in which ``box``'s agentfs makes memory cgroups: as it is for root
    and for a normal user who runs these tests; for uid 2345 (no cgroup is its own), a
    directory of root's cgroup delegated to it, as an operator would, named by
    ``AGENTFS_CGROUP``. Afterwards the directory must be empty: every command's cgroup was
    removed."""
    place = cgroup.find()
    if box.user is None:
        if isinstance(place, str):
            pytest.skip(f"no memory cgroup here: {place}")
        yield {}
        return
    if isinstance(place, str):
        pytest.skip(f"no memory cgroup to delegate: {place}")
    if place.version != 1:
        pytest.skip("delegating a cgroup v2 subtree needs the user's processes moved into it")
    delegated = place.parent / f"agentfs-tests-{os.getpid()}"
    delegated.mkdir()
    try:
        for entry in (delegated, *delegated.iterdir()):
            os.chown(entry, USER_UID, USER_UID)
        yield {cgroup.ENV: str(delegated)}
        assert [p.name for p in delegated.iterdir() if p.is_dir()] == []
    finally:
        delegated.rmdir()
