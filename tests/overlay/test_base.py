"""A workspace over a host directory (``base=``): each directory of the host comes in the first
time it is needed, as the host has it (modes, times, symlinks, hard links), and nothing the
workspace does writes the host."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from tests.trees import host_files


@pytest.fixture
def host(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "lib").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / "src" / "lib" / "util.py").write_text("def util():\n    return 1\n")
    (root / "README.md").write_text("# project\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / "data.bin").write_bytes(bytes(range(256)) * 3)
    os.symlink("src/app.py", root / "app-link")
    os.link(root / "README.md", root / "README-copy.md")
    os.utime(root / "src" / "app.py", ns=(1_600_000_000_000_000_000, 1_600_000_000_123_456_789))
    (root / ".agentfs").mkdir()  # where a workspace over it may live: never brought in
    (root / ".agentfs" / "state.db").write_bytes(b"not part of the project")
    return root


def test_the_workspace_shows_the_host_tree(ws: agentfs.Workspace, host: Path) -> None:
    assert ws.listdir("/") == [
        "README-copy.md",
        "README.md",
        "app-link",
        "data.bin",
        "run.sh",
        "src",
    ]
    assert ws.read("/src/lib/util.py") == (host / "src" / "lib" / "util.py").read_bytes()
    assert ws.read("/data.bin") == (host / "data.bin").read_bytes()
    assert ws.stat("/run.sh").st_mode & 0o777 == 0o755
    assert ws.stat("/src/app.py").st_mtime_ns == 1_600_000_000_123_456_789
    assert ws.readlink("/app-link") == "src/app.py"
    assert ws.read("/app-link") == b"print('app')\n"
    assert ws.stat("/README.md").st_ino == ws.stat("/README-copy.md").st_ino  # a hard link
    assert ws.stat("/README.md").st_nlink == 2


def test_a_directory_comes_in_only_when_needed(ws: agentfs.Workspace) -> None:
    unlisted = "SELECT path FROM ws_origin WHERE present = 0 AND mode & 61440 = 16384"
    assert [row for (row,) in ws.conn.execute(unlisted)] == [""]  # nothing read yet
    ws.listdir("/")
    assert [row for (row,) in ws.conn.execute(unlisted)] == ["src"]
    ws.stat("/src/app.py")
    assert [row for (row,) in ws.conn.execute(unlisted)] == ["src/lib"]


def test_the_hidden_directory_never_comes_in(ws: agentfs.Workspace) -> None:
    assert not ws.exists("/.agentfs")
    ws.mkdir("/.agentfs")  # the workspace may make its own
    assert ws.listdir("/.agentfs") == []


def test_what_was_seen_is_recorded(ws: agentfs.Workspace, host: Path) -> None:
    ws.read("/src/app.py")
    path, size, mtime, digest = ws.conn.execute(
        "SELECT path, size, mtime_ns, hash FROM ws_origin WHERE ino = ?",
        (ws.stat("/src/app.py").st_ino,),
    ).fetchall()[0]
    seen = (host / "src" / "app.py").stat()
    assert (path, size, mtime) == ("src/app.py", seen.st_size, seen.st_mtime_ns)
    assert digest == hashlib.sha256(b"print('app')\n").digest()


def test_changes_stay_in_the_workspace(ws: agentfs.Workspace, host: Path) -> None:
    before = host_files(host, symlinks=False)
    ws.write("/src/app.py", "print('changed')\n")
    ws.remove("/README-copy.md")
    ws.rename("/src/lib", "/src/library")
    ws.write("/NEW.md", "new\n")
    ws.remove("/data.bin")
    ws.chmod("/run.sh", 0o700)
    assert host_files(host, symlinks=False) == before
    assert (host / "run.sh").stat().st_mode & 0o777 == 0o755
    assert ws.listdir("/src") == ["app.py", "library"]
    assert ws.read("/src/library/util.py") == before["src/lib/util.py"]
    assert not ws.exists("/data.bin") and ws.read("/NEW.md") == b"new\n"


def test_history_starts_from_the_hosts_content(ws: agentfs.Workspace) -> None:
    ws.write("/src/app.py", "print('changed')\n")
    first, second = ws.history("/src/app.py")
    assert ws.read_version("/src/app.py", first.n) == b"print('app')\n"
    assert ws.read_version("/src/app.py", second.n) == b"print('changed')\n"


def test_a_reopened_workspace_keeps_its_base_and_its_changes(
    tmp_path: Path, host: Path, ws: agentfs.Workspace
) -> None:
    ws.remove("/README.md")
    ws.close()
    with agentfs.open(tmp_path / "ws.db") as again:
        assert again.base is not None and again.base.root == str(host)
        assert "README.md" not in again.listdir("/")  # a deleted host file stays deleted
        assert again.read("/src/lib/util.py") == b"def util():\n    return 1\n"
    with pytest.raises(OSError) as moved:
        agentfs.open(tmp_path / "ws.db", base=tmp_path)
    assert moved.value.errno == errno.EINVAL and str(host) in str(moved.value)


def test_a_base_goes_under_an_empty_workspace_only(tmp_path: Path, host: Path) -> None:
    with agentfs.open(tmp_path / "full.db") as full:
        full.write("/x", "x")
    with pytest.raises(OSError) as refused:
        agentfs.open(tmp_path / "full.db", base=host)
    assert refused.value.errno == errno.ENOTEMPTY
    with pytest.raises(OSError) as not_dir:
        agentfs.open(tmp_path / "file.db", base=host / "README.md")
    assert not_dir.value.errno == errno.ENOTDIR


def test_a_read_only_handle_reads_what_came_in_and_says_what_did_not(
    tmp_path: Path, host: Path, ws: agentfs.Workspace
) -> None:
    ws.read("/README.md")
    ws.close()
    with agentfs.open(tmp_path / "ws.db", readonly=True) as reader:
        assert reader.read("/README.md") == b"# project\n"
        for not_in_yet in (lambda: reader.listdir("/src"), lambda: reader.read("/run.sh")):
            with pytest.raises(OSError) as refused:
                not_in_yet()
            assert refused.value.errno == errno.EROFS and "open it writable" in str(refused.value)


def test_two_handles_bring_a_directory_in_once(tmp_path: Path, host: Path) -> None:
    with (
        agentfs.open(tmp_path / "ws.db", base=host) as one,
        agentfs.open(tmp_path / "ws.db") as two,
    ):
        assert one.listdir("/") == two.listdir("/")
        assert two.listdir("/src") == one.listdir("/src") == ["app.py", "lib"]
        count = "SELECT count(*) FROM fs_dentry WHERE name = 'app.py'"
        assert one.conn.execute(count).get == 1


def test_a_snapshot_holds_what_comes_in_after_it(ws: agentfs.Workspace) -> None:
    """A snapshot taken before a directory came in holds the base's entries as they were:
    bringing them in is no change, and restoring it undoes what was done to them since."""
    snap = ws.snapshots.create(thread="t", label="before anything came in")
    ws.listdir("/src/lib")  # brought in now
    assert ws.snapshots.diff(snap.name).as_dict() == {"added": [], "removed": [], "modified": []}
    ws.remove("/src/app.py")
    ws.write("/src/lib/util.py", "changed\n")
    ws.remove("/data.bin")
    ws.snapshots.restore(snap.name)
    assert ws.read("/src/app.py") == b"print('app')\n"
    assert ws.read("/src/lib/util.py") == b"def util():\n    return 1\n"
    assert ws.read("/data.bin") == bytes(range(256)) * 3


def test_a_snapshot_holds_the_hosts_content_without_versions(tmp_path: Path, host: Path) -> None:
    with agentfs.open(tmp_path / "ws.db", base=host) as ws:
        ws.configure_history(keep=0)  # no versions: the snapshot alone must hold the bytes
        snap = ws.snapshots.create(thread="t")
        ws.write("/README.md", "changed\n")  # brought in, then changed in place
        ws.snapshots.restore(snap.name)
        assert ws.read("/README.md") == b"# project\n"
        assert ws.read("/README-copy.md") == b"# project\n"


@pytest.mark.skipif(fuse_available() is not None, reason=f"no FUSE here: {fuse_available()}")
def test_git_status_and_diff_see_the_host_repository_through_the_mount(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("v = 1\n")
    (repo / "README.md").write_text("# repo\n")
    git = ["git", "-c", "user.email=a@example.org", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=repo, check=True)
    with agentfs.open(tmp_path / "ws.db", base=repo) as ws:
        script = "echo 'v = 2' > pkg/mod.py; echo new > added.txt; git status --short"
        done = ws.run(["sh", "-c", script], mode="mount", timeout=60)
        assert done.exit_code == 0, done.stderr
        assert done.stdout.splitlines() == [" M pkg/mod.py", "?? added.txt"]
        diff = ws.run(["git", "diff", "--no-color", "--", "pkg"], mode="mount", timeout=60)
        assert diff.exit_code == 0, diff.stderr
        assert [line for line in diff.stdout.splitlines() if line[:1] in "+-"] == [
            "--- a/pkg/mod.py",
            "+++ b/pkg/mod.py",
            "-v = 1",
            "+v = 2",
        ]
    assert (repo / "pkg" / "mod.py").read_text() == "v = 1\n"  # the host is untouched
    assert not (repo / "added.txt").exists()
    clean = subprocess.run(["git", "status", "--short"], cwd=repo, capture_output=True, text=True)
    assert clean.stdout == ""


def test_glob_grep_and_search_see_the_whole_host_tree(ws: agentfs.Workspace) -> None:
    """They query the tables, which hold only what came in: each brings in the directories
    below its path first, so no host file is missed."""
    assert [m.path for m in ws.glob("**/*.py", sort="name")] == ["/src/app.py", "/src/lib/util.py"]
    found = ws.grep("return 1", "/src")
    assert [(hit.path, hit.line) for hit in found.lines if hit.is_match] == [
        ("/src/lib/util.py", 2)
    ]
    assert [hit.path for hit in ws.search("util").hits][:1] == ["/src/lib/util.py"]


@pytest.mark.skipif(fuse_available() is not None, reason=f"no FUSE here: {fuse_available()}")
def test_pytest_runs_a_host_projects_tests_in_the_mount(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    with agentfs.open(tmp_path / "ws.db", base=project) as ws:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        env = {"PYTHONPATH": "."}
        done = ws.run(command, mode="mount", timeout=120, env=env)
        assert done.exit_code == 0, done.stdout + done.stderr
        assert "1 passed" in done.stdout
        ws.write("/calc.py", "def add(a, b):\n    return a - b\n")  # the agent breaks it
        broken = ws.run(command, mode="mount", timeout=120, env=env)
        assert broken.exit_code == 1 and "1 failed" in broken.stdout
    assert "a + b" in (project / "calc.py").read_text()  # the host's copy is untouched


def test_a_host_directory_not_yet_in_is_not_empty(ws: agentfs.Workspace) -> None:
    ws.listdir("/")  # /src is there, what it holds not yet
    with pytest.raises(OSError) as removed:
        ws.remove("/src")
    assert removed.value.errno == errno.ENOTEMPTY
    ws.mkdir("/empty")
    with pytest.raises(OSError) as replaced:
        ws.rename("/empty", "/src")
    assert replaced.value.errno == errno.ENOTEMPTY
    ws.remove("/src", recursive=True)  # everything the host holds there goes, recorded
    origins = ws.conn.execute("SELECT path FROM ws_origin WHERE path LIKE 'src/%' ORDER BY path")
    assert [row for (row,) in origins] == ["src/app.py", "src/lib", "src/lib/util.py"]


def test_an_entry_that_cannot_come_in_is_left_out(tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "ok.txt").write_text("ok\n")
    with open(os.fsencode(host) + b"/bad\xff.txt", "wb") as bad:
        bad.write(b"a name no workspace holds")
    with agentfs.open(host / "work.db", base=host) as ws:  # the workspace file inside it
        assert ws.listdir("/") == ["ok.txt"]  # neither the bad name nor its own database
        assert ws.read("/ok.txt") == b"ok\n"
