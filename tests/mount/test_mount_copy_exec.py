"""``exec`` in a copy of the workspace (``ws.run(mode="copy")``, ``agentfs exec --copy``, the
fallback where FUSE is missing): real commands, what they change carried back in one
transaction, the conflict rule, clean-up whatever happens. None of this needs /dev/fuse."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from tests.mount.conftest import close_checked


@pytest.fixture
def ws(tmp_path: Path, scratch: Path) -> Iterator[agentfs.Workspace]:
    workspace = agentfs.open(tmp_path / "ws.db", thread="t1")
    workspace.write("/src/app.py", "print('v1')\n", parents=True)
    workspace.write("/notes.txt", "keep me\n")
    workspace.write("/same.txt", "never touched\n")
    yield workspace
    close_checked(workspace, scratch)


def versions(ws: agentfs.Workspace, path: str) -> int:
    return len(ws.history(path))


def test_changes_land_and_untouched_files_get_no_version(ws: agentfs.Workspace) -> None:
    ws.symlink("notes.txt", "/link")
    ws.link("/notes.txt", "/hard")
    script = (
        "cat notes.txt; echo new > made.txt; echo v2 >> src/app.py; rm link;"
        " ln -s made.txt link2; mkdir -p out/deep/er; chmod 600 notes.txt; mkfifo pipe;"
        " touch -d @1000000000 made.txt; ln made.txt made-too; exit 3"
    )
    r = ws.run(script, mode="copy")
    assert (r.mode, r.stdout, r.exit_code, r.conflicts, r.skipped) == (
        "copy",
        "keep me\n",
        3,
        (),
        (),
    )
    assert ws.read("/src/app.py") == b"print('v1')\nv2\n"
    assert ws.read("/made.txt") == b"new\n"
    assert ws.lstat("/made.txt").st_mtime_ns == 1_000_000_000 * 10**9
    assert ws.lstat("/made-too").st_ino == ws.lstat("/made.txt").st_ino
    assert not ws.exists("/link") and ws.readlink("/link2") == "made.txt"
    assert ws.stat("/out/deep/er").is_dir()
    assert ws.lstat("/notes.txt").st_mode & 0o7777 == 0o600
    assert ws.lstat("/hard").st_ino == ws.lstat("/notes.txt").st_ino  # still one inode
    assert stat.S_ISFIFO(ws.lstat("/pipe").st_mode)
    assert versions(ws, "/same.txt") == 1 and versions(ws, "/notes.txt") == 1
    assert versions(ws, "/src/app.py") == 2


def test_deleting_files_and_directories(ws: agentfs.Workspace) -> None:
    ws.write("/tree/a/b/c.txt", "c", parents=True)
    ws.mkdir("/tree/empty")
    r = ws.run("rm -r tree/a notes.txt && rmdir tree/empty", mode="copy")
    assert r.exit_code == 0
    assert ws.listdir("/tree") == [] and not ws.exists("/notes.txt")
    assert [v.op for v in ws.history("/notes.txt")][-1] == "delete"


def test_a_file_changed_behind_the_same_size_and_mtime_is_seen(ws: agentfs.Workspace) -> None:
    """ctime, not size and mtime, says a file was untouched: cp -p and touch -r restore both."""
    r = ws.run(
        "cp -p notes.txt .t && printf KEEP | dd of=notes.txt conv=notrunc 2>/dev/null"
        " && touch -r .t notes.txt && rm .t",
        mode="copy",
    )
    assert r.exit_code == 0
    assert ws.read("/notes.txt") == b"KEEP me\n"


def test_a_file_replaced_by_rename_keeps_its_other_hard_links(ws: agentfs.Workspace) -> None:
    ws.link("/notes.txt", "/hard")
    ws.run("sed -i s/keep/kept/ notes.txt", mode="copy")  # a new inode for notes.txt
    assert ws.read("/notes.txt") == b"kept me\n" and ws.read("/hard") == b"keep me\n"
    assert ws.lstat("/hard").st_nlink == 1
    ws.run("echo both >> hard", mode="copy")  # written in place: one inode, one write


def test_modes_times_and_read_only_directories(ws: agentfs.Workspace) -> None:
    ws.write("/locked/inner.txt", "x", parents=True)
    ws.chmod("/locked", 0o555)
    r = ws.run(
        "mkdir ro && echo y > ro/f && chmod 000 ro/f && chmod 500 ro && chmod 4755 src/app.py"
        " && touch -d @1500000000 ro",
        mode="copy",
    )
    assert r.exit_code == 0
    assert ws.lstat("/ro/f").st_mode & 0o7777 == 0
    assert ws.lstat("/ro").st_mode & 0o7777 == 0o500
    assert ws.lstat("/ro").st_mtime_ns == 1_500_000_000 * 10**9
    assert ws.lstat("/src/app.py").st_mode & 0o7777 == 0o4755
    assert ws.lstat("/locked").st_mode & 0o7777 == 0o555
    # the copy holds the setuid bit as the workspace does (a normal user's write after the
    # mode would clear it), so a command that clears it is seen to
    r = ws.run("stat -c %a src/app.py && chmod 755 src/app.py", mode="copy")
    assert r.stdout == "4755\n" and ws.lstat("/src/app.py").st_mode & 0o7777 == 0o755


def test_extended_attributes_travel_both_ways(ws: agentfs.Workspace) -> None:
    ws.setxattr("/notes.txt", "user.keep", b"1")
    ws.setxattr("/notes.txt", "user.gone", b"x")
    ws.setxattr("/same.txt", "user.change", b"old")
    ws.setxattr("/src", "user.dir", b"d")
    ws.setxattr("/", "user.top", b"t")
    ws.setxattr("/src/app.py", "trusted.root-only", b"r")
    before = versions(ws, "/same.txt")
    r = ws.run(
        "getfattr --absolute-names --only-values -n user.keep notes.txt; echo;"
        " getfattr --absolute-names --only-values -n user.top .; echo;"
        " setfattr -x user.gone notes.txt && setfattr -n user.change -v new same.txt"
        " && echo made > made.txt && setfattr -n user.made -v m made.txt"
        " && setfattr -n user.dir -v changed src && mkdir d && setfattr -n user.new -v n d"
        " && setfattr -x user.top .",
        mode="copy",
    )
    # a host file holds trusted. names for root only: a normal user's copy cannot
    unheld = () if os.geteuid() == 0 else ("trusted.root-only",)
    skipped = tuple(
        f"/src/app.py: attribute {n} not copied: Operation not permitted" for n in unheld
    )
    assert (r.exit_code, r.stdout, r.stderr, r.skipped, r.conflicts) == (
        0,
        "1\nt\n",
        "",
        skipped,
        (),
    )
    assert ws.listxattr("/notes.txt") == ["user.keep"]
    assert ws.getxattr("/same.txt", "user.change") == b"new"
    assert versions(ws, "/same.txt") == before  # an attribute is not new content
    assert ws.getxattr("/made.txt", "user.made") == b"m"
    assert ws.getxattr("/src", "user.dir") == b"changed"
    assert ws.getxattr("/d", "user.new") == b"n"
    assert ws.listxattr("/") == []
    assert ws.getxattr("/src/app.py", "trusted.root-only") == b"r"  # untouched, kept


def test_an_attribute_the_copy_could_not_hold_is_reported_and_kept(
    ws: agentfs.Workspace, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host filesystem that refuses an attribute: the copy says so, and the workspace's
    value stays (the command never saw it, so it cannot have removed it)."""
    ws.setxattr("/notes.txt", "user.kept", b"v")
    refuse = os.setxattr

    def setxattr(path: object, name: str, *args: object, **kwargs: object) -> None:
        if name == "user.kept":
            raise OSError(95, "Operation not supported")
        refuse(path, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "setxattr", setxattr)
    r = ws.run("echo more >> notes.txt", mode="copy")
    assert r.exit_code == 0 and r.conflicts == ()
    assert r.skipped == ("/notes.txt: attribute user.kept not copied: Operation not supported",)
    assert ws.getxattr("/notes.txt", "user.kept") == b"v"
    assert ws.read_text("/notes.txt") == "keep me\nmore\n"


def test_a_large_file_travels_in_blocks(ws: agentfs.Workspace) -> None:
    r = ws.run("head -c 9000000 /dev/urandom > big && cp big big2", mode="copy")
    assert r.exit_code == 0
    assert ws.stat("/big").st_size == 9_000_000 and ws.read("/big") == ws.read("/big2")


def test_root_and_cwd(ws: agentfs.Workspace) -> None:
    r = ws.run("pwd; ls; echo here > made", root="/src", mode="copy")
    assert r.stdout.splitlines()[1] == "app.py"
    assert ws.read("/src/made") == b"here\n" and not ws.exists("/made")
    r = ws.run("basename $(pwd); echo in > f", cwd="/src", mode="copy")
    assert r.stdout == "src\n" and ws.read("/src/f") == b"in\n"
    with pytest.raises(NotADirectoryError):
        ws.run("true", root="/notes.txt", mode="copy")
    with pytest.raises(FileNotFoundError):  # as in a mount: no such working directory
        ws.run("echo lost > f", cwd="/nope", mode="copy")
    assert not ws.exists("/f")


def test_a_real_git(ws: agentfs.Workspace) -> None:
    env = {
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    r = ws.run("git init -q && git add -A && git commit -qm first", env=env, mode="copy")
    assert r.exit_code == 0, r.stderr
    assert ws.stat("/.git/HEAD").is_file()
    r = ws.run(
        "git status --porcelain && git log --format=%s && git fsck 2>&1", env=env, mode="copy"
    )
    assert (r.exit_code, r.stdout) == (0, "first\n"), r.stderr
    ws.write("/notes.txt", "changed\n")
    r = ws.run("git status --porcelain", env=env, mode="copy")
    assert r.stdout == " M notes.txt\n"


def test_a_failed_or_killed_command_keeps_what_it_wrote(ws: agentfs.Workspace) -> None:
    r = ws.run("echo partial > out; false", mode="copy")
    assert r.exit_code == 1 and ws.read("/out") == b"partial\n"
    r = ws.run("echo before > timed; (sleep 30; echo after > late) & sleep 30", timeout=0.5,
               mode="copy")  # fmt: skip
    assert r.timed_out and r.exit_code < 0
    assert ws.read("/timed") == b"before\n" and not ws.exists("/late")


def test_ctrl_c_aborts_and_carries_back(ws: agentfs.Workspace) -> None:
    """SIGINT to this process (what Ctrl-C sends) stops the command, like a timeout. (The
    pause lets ``ws.run`` reach its wait: a SIGINT inside ``Popen`` itself escapes it, in
    either mode.)"""
    r = ws.run(f"echo seen > f; sleep 0.5; kill -INT {os.getpid()}; sleep 30", mode="copy")
    assert r.aborted and ws.read("/f") == b"seen\n"


def test_an_error_removes_the_copy_and_changes_nothing(ws: agentfs.Workspace) -> None:
    with pytest.raises(FileNotFoundError):
        ws.run(["/no/such/program"], mode="copy")
    assert ws.listdir("/") == ["notes.txt", "same.txt", "src"]


def test_restoring_the_snapshot_undoes_a_copy_mode_command(ws: agentfs.Workspace) -> None:
    r = ws.run("rm notes.txt; echo changed > src/app.py; mkdir out; echo x > out/y", mode="copy")
    assert not ws.exists("/notes.txt") and ws.exists("/out/y")
    ws.snapshots.restore(r.snapshot)
    assert ws.read("/notes.txt") == b"keep me\n"
    assert ws.read("/src/app.py") == b"print('v1')\n"
    assert not ws.exists("/out")


def test_a_concurrent_write_loses_to_the_command_but_stays_in_history(
    ws: agentfs.Workspace,
) -> None:
    """The command writes notes.txt in its copy while another process (here: a program the
    command starts, through the API) writes notes.txt and other.txt in the workspace."""
    other = (
        f"import agentfs; w = agentfs.open({str(ws.path)!r}); w.write('/notes.txt', 'theirs');"
        " w.write('/other.txt', 'theirs too'); w.close()"
    )
    r = ws.run(["sh", "-c", f'echo mine > notes.txt; "{sys.executable}" -c "{other}"'],
               mode="copy")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert r.conflicts == ("/notes.txt",)
    assert ws.read("/notes.txt") == b"mine\n" and ws.read("/other.txt") == b"theirs too"
    assert [ws.read_version("/notes.txt", v.n) for v in ws.history("/notes.txt")][-2:] == [
        b"theirs",
        b"mine\n",
    ]


def test_names_the_workspace_cannot_hold_are_skipped_and_reported(
    ws: agentfs.Workspace,
) -> None:
    r = ws.run("touch ok \"$(printf 'bad\\377')\"; mkdir \"$(printf 'd\\377')\"; touch "
               "\"$(printf 'd\\377')/inner\"", mode="copy")  # fmt: skip
    assert ws.exists("/ok")
    assert len(r.skipped) == 2 and all("not copied back" in s for s in r.skipped), r.skipped


def test_sandboxed_copy_cannot_see_the_host(ws: agentfs.Workspace, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    secret = tmp_path / "host-secret"
    secret.write_text("do not read")
    script = (
        f"cat {secret} 2>/dev/null && echo READ-HOST;"
        f" cat {ws.conn.filename} >/dev/null 2>&1 && echo READ-DB;"
        " pwd; cat notes.txt; echo sandboxed > out.txt"
    )
    r = ws.run(script, sandbox=True, mode="copy")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "/workspace\nkeep me\n"
    assert ws.read("/out.txt") == b"sandboxed\n"


def test_without_tmpdir_the_copy_is_made_in_memory(
    ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm here")
    monkeypatch.delenv("TMPDIR")
    r = ws.run("pwd; echo shm > f", mode="copy")
    where = Path(r.stdout.strip())
    assert where.parent.parent == Path("/dev/shm") and where.name == "workspace"
    assert not where.parent.exists() and ws.read("/f") == b"shm\n"
    if shutil.which("bwrap") is not None:
        sandboxed = ws.run("pwd; echo in > g", sandbox=True, mode="copy")
        assert sandboxed.stdout == "/workspace\n" and ws.read("/g") == b"in\n"


def _agentfs(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path}
    return subprocess.run(
        [sys.executable, "-m", "agentfs.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def _bin_without_fusermount(tmp_path: Path) -> str:
    """A PATH with sh and bwrap but no fusermount3: a host where FUSE cannot be used."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("sh", "bwrap"):
        found = shutil.which(program)
        if found is not None:
            (bin_dir / program).symlink_to(found)
    return str(bin_dir)


def test_agentfs_exec_falls_back_to_a_copy_and_says_so(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    path = _bin_without_fusermount(tmp_path)
    done = _agentfs("exec", str(ws.path), "--", "sh", "-c", "echo hi > hi; exit 4", path=path)
    assert done.returncode == 4, done.stderr
    assert "fusermount3 is missing" in done.stderr and "running in a copy" in done.stderr
    assert "agentfs snapshot restore" in done.stderr
    assert ws.read("/hi") == b"hi\n"
    forced = _agentfs("exec", str(ws.path), "--copy", "--", "sh", "-c", "echo a > a", path=path)
    assert forced.returncode == 0 and "running in a copy" not in forced.stderr
    assert ws.read("/a") == b"a\n"


def test_execute_command_runs_in_a_copy_only_where_the_policy_allows(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    """The tool, on a host without fusermount3, refuses to run unless the policy allows a
    copy: then it runs sandboxed in one."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    env = {**os.environ, "PATH": _bin_without_fusermount(tmp_path)}

    def call(policy: dict[str, object], command: str) -> dict[str, object]:
        script = (
            "import json, agentfs;"
            "from agentfs.tools.toolset import Toolset;"
            "from agentfs.tools.policy import Policy;"
            f"w = agentfs.open({str(ws.path)!r});"
            f"p = Policy.model_validate({policy!r});"
            "out = Toolset(w, thread='t1', policy=p, approve=lambda _call: True).call("
            f"'execute_command', {{'command': {command!r}, 'timeout_ms': 30000}});"
            "print(json.dumps(out))"
        )
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    refused = call({}, "echo no > no.txt")
    assert refused["error"]["code"] == "unsupported"  # type: ignore[index]
    assert "copy_fallback" in refused["error"]["message"]  # type: ignore[index]
    assert not ws.exists("/no.txt")
    result = call({"commands": {"copy_fallback": True}}, "echo tool > t.txt; cat notes.txt")
    assert (result["mode"], result["stdout"], result["exit_code"]) == ("copy", "keep me\n", 0)
    assert ws.read("/t.txt") == b"tool\n"


@pytest.mark.skipif(fuse_available() is not None, reason=f"no FUSE here: {fuse_available()}")
def test_mount_and_copy_give_the_same_workspace(tmp_path: Path) -> None:
    script = (
        "mkdir -p a/b && echo one > a/b/f && echo two >> notes.txt && rm gone.txt"
        " && ln -s a/b/f link && mv keep.txt a/moved.txt && chmod 700 a && ln notes.txt hard"
        " && mkfifo p && printf 'x' > empty-no-more && rmdir olddir"
    )
    trees = []
    for mode in ("mount", "copy"):
        with agentfs.open(tmp_path / f"{mode}.db") as w:
            for name, text in (("notes.txt", "n\n"), ("gone.txt", "g"), ("keep.txt", "k")):
                w.write(f"/{name}", text)
            w.write("/empty-no-more", "")
            w.mkdir("/olddir")
            r = w.run(script, mode=mode)  # type: ignore[arg-type]
            assert (r.mode, r.exit_code) == (mode, 0), r.stderr
            trees.append(_tree(w))
    assert trees[0] == trees[1]


def _tree(w: agentfs.Workspace) -> dict[str, tuple[object, ...]]:
    """Each entry's type, permissions, content or target, and link count."""
    out: dict[str, tuple[object, ...]] = {}
    for top, dirs, files in w.walk("/"):
        for name in dirs + files:
            path = f"{top.rstrip('/')}/{name}"
            st = w.lstat(path)
            body = w.read(path) if st.is_file() else w.readlink(path) if st.is_symlink() else None
            out[path] = (stat.S_IFMT(st.st_mode), st.st_mode & 0o7777, body, st.st_nlink)
    return out
