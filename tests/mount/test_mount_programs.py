"""Real programs in the mount: git, a venv with pip, pytest, tar, sqlite, cp -a."""

from __future__ import annotations

import filecmp
import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import agentfs
from tests.mount.conftest import Mounted


def _run(*args: str | Path, cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done.stdout


def test_git_workflow(mounted: Mounted) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = mounted.dir / "repo"
    repo.mkdir()
    git = ("git", "-c", "user.email=a@example.com", "-c", "user.name=agent")
    _run(*git, "init", "-q", "-b", "main", cwd=repo)
    for i in range(20):
        (repo / f"file{i}.py").write_text(f"value = {i}\n")
    _run(*git, "add", ".", cwd=repo)
    _run(*git, "commit", "-qm", "first", cwd=repo)
    _run(*git, "checkout", "-qb", "feature", cwd=repo)
    (repo / "file3.py").write_text("value = 'changed'\n")
    (repo / "file4.py").unlink()
    _run(*git, "commit", "-qam", "second", cwd=repo)
    _run(*git, "checkout", "-q", "main", cwd=repo)
    assert (repo / "file3.py").read_text() == "value = 3\n" and (repo / "file4.py").exists()
    assert _run(*git, "status", "--porcelain", cwd=repo) == ""
    _run(*git, "gc", "-q", cwd=repo)
    _run(*git, "fsck", "--strict", cwd=repo)
    assert _run(*git, "status", "--porcelain", cwd=repo) == ""
    log = _run(*git, "log", "--oneline", "--all", cwd=repo)
    assert "first" in log and "second" in log
    with agentfs.open(mounted.db, readonly=True) as ws:  # the workspace holds the repository
        assert ws.read("/repo/file3.py") == b"value = 3\n"


def test_tar_extract_and_rm_rf(mounted: Mounted, tmp_path: Path) -> None:
    source = tmp_path / "tree"
    for i in range(5000):
        p = source / f"pkg{i % 50}" / "lib" / f"m{i}.js"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"module.exports = {i};\n")
    archive = tmp_path / "tree.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(source, arcname="tree")
    _run("tar", "xf", archive, cwd=mounted.dir)
    assert not filecmp.dircmp(source, mounted.dir / "tree").diff_files
    count = sum(len(files) for _, _, files in os.walk(mounted.dir / "tree"))
    assert count == 5000
    _run("rm", "-rf", "tree", cwd=mounted.dir)
    assert os.listdir(mounted.dir) == []


def test_cp_a_out_and_back(mounted: Mounted, tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "d").mkdir(parents=True)
    (source / "d" / "x.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(source / "d" / "x.sh", 0o755)
    (source / "data.bin").write_bytes(os.urandom(300_000))
    os.symlink("d/x.sh", source / "link")
    os.utime(source / "data.bin", ns=(1_500_000_000_123_456_789, 1_600_000_000_987_654_321))
    _run("cp", "-a", source, mounted.dir / "copy", cwd=tmp_path)
    _run("cp", "-a", mounted.dir / "copy", tmp_path / "back", cwd=tmp_path)
    for rel in ("d/x.sh", "data.bin", "link"):
        a, b = os.lstat(source / rel), os.lstat(tmp_path / "back" / rel)
        assert (a.st_mode, a.st_size, a.st_mtime_ns) == (b.st_mode, b.st_size, b.st_mtime_ns), rel
    assert (tmp_path / "back" / "data.bin").read_bytes() == (source / "data.bin").read_bytes()
    assert os.readlink(tmp_path / "back" / "link") == "d/x.sh"


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_sqlite_database_inside(mounted: Mounted, journal: str) -> None:
    path = mounted.dir / f"app-{journal}.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.execute("CREATE TABLE t(x INTEGER PRIMARY KEY, y TEXT)")
    with conn:
        conn.executemany("INSERT INTO t(y) VALUES (?)", [(f"row {i}",) for i in range(2000)])
    other = sqlite3.connect(path)  # a second connection sees the committed rows
    assert other.execute("SELECT count(*) FROM t").fetchone() == (2000,)
    other.close()
    conn.close()
    check = sqlite3.connect(path)
    try:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        check.close()


def test_venv_pip_install_and_pytest(mounted: Mounted, tmp_path: Path) -> None:
    """A venv in the mount, a local wheel installed into it with pip, and pytest run on a
    small project there."""
    wheel = tmp_path / "tinypkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("tinypkg/__init__.py", "def double(x):\n    return 2 * x\n")
        zf.writestr(
            "tinypkg-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
        )
        zf.writestr(
            "tinypkg-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        zf.writestr("tinypkg-1.0.dist-info/RECORD", "")
    project = mounted.dir / "project"
    project.mkdir()
    _run(sys.executable, "-m", "venv", "--without-pip", ".venv", cwd=project)
    python = project / ".venv" / "bin" / "python"
    # pip and pytest from the packages this test runs with, wherever they are installed
    purelib = _run(
        python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=project
    )
    ours = sysconfig.get_path("purelib")
    Path(purelib.strip(), "tests-packages.pth").write_text(
        f"import site; site.addsitedir({ours!r})\n"
    )
    _run(python, "-m", "pip", "install", "--no-index", "--quiet", wheel, cwd=project)
    (project / "test_double.py").write_text(
        "import tinypkg\n\ndef test_double():\n    assert tinypkg.double(21) == 42\n"
    )
    out = _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert "1 passed" in out
