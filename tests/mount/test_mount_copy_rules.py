"""A command in a copy of the workspace under a policy (``ws.run(mode="copy", rules=...)``,
``agentfs exec --copy --policy``, ``execute_command`` with ``copy_fallback``): denied files
are not in the copy by any name, what comes back is judged before it lands and each refusal
is reported, size limits and read-only hold; and the same script leaves the same workspace
as it does through a mount under the same rules. None of this needs /dev/fuse but the
comparison with the mount."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.db import database_bytes
from agentfs.mount.exec import fuse_available
from agentfs.mount.rules import MountRules
from agentfs.transfer import import_tree
from tests.mount.conftest import close_checked
from tests.mount.test_mount_copy_exec import _tree
from tests.mount.test_mount_copy_model import build

RULES = MountRules(
    deny=("/secrets/**", "**/.env", "/private"),
    allow=("/src/**", "/secrets/**", "/.env"),
)
POLICY = """
[defaults]
deny = ["/secrets/**", "**/.env", "/private"]

[tools.execute_command]
allow = ["/src/**", "/secrets/**", "/.env"]
"""


@pytest.fixture
def project(tmp_path: Path, scratch: Path) -> Iterator[agentfs.Workspace]:
    """A workspace with secrets: a denied file, its hard link under an allowed name, a
    symlink to its directory, a denied .env and a denied directory."""
    ws = agentfs.open(tmp_path / "ws.db", thread="t1")
    ws.write("/src/app.py", "print('hi')\n", parents=True)
    ws.write("/src/lib.py", "", parents=True)
    ws.write("/src/d/x.txt", "x\n", parents=True)
    ws.write("/src/d/.env", "NESTED=1\n")
    ws.write("/secrets/key.txt", "hunter2\n", parents=True)
    ws.write("/.env", "TOKEN=abc\n")
    ws.write("/private/diary", "dear diary\n", parents=True)
    ws.write("/README", "read me\n")
    ws.write("/notes.txt", "notes\n")
    ws.write("/.gitignore", "*.pyc\n")
    ws.link("/secrets/key.txt", "/src/hard.txt")
    ws.symlink("../secrets", "/src/innocent")
    yield ws
    close_checked(ws, scratch)


def _state(ws: agentfs.Workspace) -> dict[str, tuple[object, ...]]:
    """Every entry (``_tree``) and each file's number of versions."""
    return {
        path: (*entry, len(ws.history(path)) if ws.lstat(path).is_file() else 0)
        for path, entry in _tree(ws).items()
    }


def test_denied_files_are_not_in_the_copy_by_any_name(project: agentfs.Workspace) -> None:
    """``cat``, ``ls -a``, ``find`` and ``grep -r`` find nothing of a denied file, by its own
    name, its hard link or a path through a symlink, and it fails as a missing file does."""
    before = _state(project)
    script = (
        "cat secrets/key.txt src/hard.txt src/innocent/key.txt .env src/d/.env private/diary"
        " no-such-file; ls -aR; find .; grep -r -e hunter2 -e TOKEN -e NESTED -e diary .; true"
    )
    r = project.run(script, mode="copy", rules=RULES)
    everything = r.stdout + r.stderr
    for secret in ("hunter2", "TOKEN", "NESTED", "dear diary", "key.txt", "hard.txt", "private"):
        assert secret not in r.stdout, secret
    assert "hunter2" not in everything and "TOKEN" not in everything
    missing = [line for line in r.stderr.splitlines() if line.startswith("cat: ")]
    assert missing == [
        f"cat: {name}: No such file or directory"
        for name in (
            "secrets/key.txt",
            "src/hard.txt",
            "src/innocent/key.txt",
            ".env",
            "src/d/.env",
            "private/diary",
            "no-such-file",
        )
    ]
    assert sorted(r.stdout.split("\n\n")[0].splitlines()[1:]) == sorted(
        [".", "..", ".gitignore", "README", "notes.txt", "secrets", "src"]
    )
    assert (r.skipped, r.conflicts, r.denied, r.denied_total) == ((), (), (), 0)
    assert _state(project) == before


def test_changes_the_rules_refuse_are_not_carried_back_and_are_reported(
    project: agentfs.Workspace,
) -> None:
    before = _state(project)
    script = (
        "echo x > top.txt; echo more >> README; rm .gitignore; chmod 600 README;"
        " mv src/app.py app.py; mv notes.txt src/notes.txt; mkdir out; ln -s src sl;"
        " ln src/lib.py hl; touch -d @1000000000 src/d; mv src/d src/e;"
        " echo ok > src/ok.txt"
    )
    r = project.run(script, mode="copy", rules=RULES)
    assert r.exit_code == 0, r.stderr
    assert set(r.denied) == {
        "create /top.txt",
        "unlink /.gitignore",
        "write /README",  # appended to and chmod-ed: one change of one file
        "rename /src/app.py",
        "rename /app.py",
        "rename /notes.txt",
        "rename /src/notes.txt",
        "mkdir /out",
        "symlink /sl",
        "link /hl",
        "rename /src/d",  # it holds .env, which the command was not shown: not moved
        "rename /src/d/x.txt",
        "rename /src/e",
    }, r.denied
    assert r.denied_total == len(r.denied) and r.conflicts == () and r.skipped == ()
    assert project.read("/src/ok.txt") == b"ok\n"
    after = _state(project)
    del after["/src/ok.txt"]
    assert after == before


def test_a_hidden_file_stays_untouched_whatever_the_command_does_at_its_path(
    project: agentfs.Workspace,
) -> None:
    """The copy has no file at a hidden path: one the command makes there is refused, not
    written over the hidden one, and the hidden one is not deleted for being absent, nor is
    its directory with it."""
    before = _state(project)
    script = (
        "echo mine > secrets/key.txt; echo mine > src/hard.txt; echo T=1 > .env;"
        " mkdir private; echo x > private/diary; rm -rf src/d; true"
    )
    r = project.run(script, mode="copy", rules=RULES)
    assert {
        "create /secrets/key.txt",
        "create /src/hard.txt",
        "create /.env",
        "mkdir /private",
    } <= set(r.denied), r.denied
    assert r.conflicts == ()  # a hidden file is no conflict: that would name it
    assert r.skipped == ("/src/d: not copied back: Directory not empty",)
    assert project.read("/secrets/key.txt") == b"hunter2\n"
    assert project.read("/private/diary") == b"dear diary\n"
    assert project.read("/src/d/.env") == b"NESTED=1\n" and not project.exists("/src/d/x.txt")
    after = _state(project)
    del before["/src/d/x.txt"]
    assert {p: e for p, e in after.items() if p != "/src/d"} == {
        p: e for p, e in before.items() if p != "/src/d"
    }


def test_size_limits(project: agentfs.Workspace) -> None:
    per_file = MountRules(max_file_bytes=1000)
    r = project.run(
        "head -c 2000 /dev/zero > big; head -c 1000 /dev/zero > fits", mode="copy", rules=per_file
    )
    assert r.denied == ("write /big",) and not project.exists("/big")
    assert project.read("/fits") == bytes(1000)
    room = database_bytes(project.conn) + 100_000
    whole = MountRules(max_workspace_bytes=room)
    script = "head -c 60000 /dev/urandom > a; head -c 60000 /dev/urandom > b; echo c > c"
    r = project.run(script, mode="copy", rules=whole)
    assert r.denied == ("write /b",), r.denied
    assert len(project.read("/a")) == 60000 and not project.exists("/b")
    assert project.read("/c") == b"c\n"


def test_read_only_carries_nothing_back(project: agentfs.Workspace) -> None:
    """The command runs (it may read, build, test) but nothing it changed lands, and the
    result lists each change."""
    before = _state(project)
    r = project.run(
        "cat notes.txt; echo x > new; rm README; echo y >> src/app.py",
        mode="copy",
        rules=MountRules(read_only=True),
    )
    assert r.stdout == "notes\n" and r.exit_code == 0
    assert set(r.denied) == {"create /new", "unlink /README", "write /src/app.py"}
    assert _state(project) == before


def test_exec_copy_with_a_policy(project: agentfs.Workspace, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    done = subprocess.run(
        [
            *(sys.executable, "-m", "agentfs.cli", "exec", str(project.path), "--copy"),
            *("--policy", str(policy), "--", "sh", "-c"),
            "cat secrets/key.txt; echo x > top.txt; echo y > src/ok.txt",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "hunter2" not in done.stdout + done.stderr
    assert "secrets/key.txt: No such file or directory" in done.stderr
    assert "refused by the policy: create /top.txt" in done.stderr, done.stderr
    assert project.read("/src/ok.txt") == b"y\n" and not project.exists("/top.txt")


def _bin_without_fusermount(tmp_path: Path) -> str:
    """A PATH without fusermount3 (a host where FUSE cannot be used), with what the
    commands below run."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("sh", "cat", "ls", "grep", "find", "rm", "echo"):
        found = shutil.which(program)
        assert found is not None, program
        (bin_dir / program).symlink_to(found)
    return str(bin_dir)


def test_execute_command_in_a_copy_sees_what_the_tools_see(
    project: agentfs.Workspace, tmp_path: Path
) -> None:
    """``copy_fallback`` where FUSE is missing: the copy hides what the policy denies and
    carries back only what it allows, and the refusals are in the result and the audit."""
    policy = {
        "defaults": {"deny": list(RULES.deny)},
        "tools": {"execute_command": {"allow": list(RULES.allow)}},
        "commands": {"copy_fallback": True, "sandbox": False},
    }
    attempts = (
        "cat secrets/key.txt src/hard.txt src/innocent/key.txt .env; ls -a; grep -r hunter2 .;"
        " rm README; echo y > src/ok.txt; echo done"
    )
    script = (
        "import json, agentfs;"
        "from agentfs.tools import Policy, Toolset;"
        f"w = agentfs.open({str(project.path)!r});"
        f"tools = Toolset(w, thread='t1', policy=Policy.model_validate({policy!r}),"
        " approve=lambda _call: True);"
        f"out = tools.call('execute_command', {{'command': {attempts!r}, 'timeout_ms': 30000}});"
        "tools.flush(); w.close();"
        "print(json.dumps(out))"
    )
    env = {**os.environ, "PATH": _bin_without_fusermount(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["mode"] == "copy" and result["stdout"].endswith("done\n"), result
    assert "hunter2" not in done.stdout and "TOKEN" not in done.stdout
    assert result["denied"] == ["unlink /README"] and result["denied_total"] == 1
    assert project.read("/README") == b"read me\n" and project.read("/src/ok.txt") == b"y\n"
    (call,) = project.tool_calls.list(name="execute_command")
    assert call.result["denied"] == ["unlink /README"]


# --- the same script through a mount and in a copy ------------------------------------------

NAMES = ("in", "out", "s")
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map("/".join)
TEXT = st.text(alphabet="xyz01", max_size=8)
#: Shown the command: /in and what is below it, less every file named s (hidden).
COMPARED = MountRules(deny=("**/s",), allow=("/in", "/in/**"))


@st.composite
def initial_trees(draw: st.DrawFn) -> list[tuple[str, str, str, int]]:
    kinds = st.sampled_from(["file", "file", "dir", "link", "hard"])
    modes = st.sampled_from([0o644, 0o600, 0o755])
    targets = st.one_of(TEXT, PATHS)
    return draw(st.lists(st.tuples(kinds, PATHS, targets, modes), max_size=12))


def scripts() -> st.SearchStrategy[str]:
    """Shell lines whose effect does not depend on whether an earlier line was refused.
    No ``mv``, ``ln`` or ``cp``: a copy carries what a refused file held where a mount had
    nothing to move. No line touches a path an earlier ``rm -rf`` or ``rmdir`` named: a
    mount refuses to remove a directory holding a hidden file when the command runs, a copy
    when it comes back, so the command goes on seeing the directory in one and not the other."""
    p = PATHS.map(shlex.quote)
    ops = st.one_of(
        st.tuples(TEXT.map(shlex.quote), p).map(lambda a: f"printf %s {a[0]} > {a[1]}"),
        st.tuples(TEXT.map(shlex.quote), p).map(lambda a: f"printf %s {a[0]} >> {a[1]}"),
        p.map(lambda f: f"rm -f {f}"),
        p.map(lambda f: f"rm -rf {f}"),
        p.map(lambda f: f"rmdir {f}"),
        p.map(lambda f: f"mkdir -p {f}"),
        st.tuples(st.sampled_from(["600", "755", "700"]), p).map(lambda a: f"chmod {a[0]} {a[1]}"),
    )
    return st.lists(ops, min_size=1, max_size=8).map(
        lambda lines: (
            "".join(f"{line} 2>/dev/null;\n" for line in _apart_from_removals(lines)) + "true"
        )
    )


def _apart_from_removals(lines: list[str]) -> list[str]:
    """``lines`` less each one whose path is at or below one another line removes recursively
    or as a directory: after it, or before it, since a copy carries back only where things
    ended, and a change to what the command then removed leaves no trace in it when the
    removal is refused (docs/policies.md, "Through a copy")."""
    removals = [
        (i, line.split()[-1])
        for i, line in enumerate(lines)
        if line.startswith(("rm -rf ", "rmdir "))
    ]
    kept: list[str] = []
    for i, line in enumerate(lines):
        path = line.split()[-1]
        below = [j for j, r in removals if j != i and (path == r or path.startswith(r + "/"))]
        if not below:
            kept.append(line)
    return kept


@pytest.mark.skipif(fuse_available() is not None, reason=f"no FUSE here: {fuse_available()}")
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(entries=initial_trees(), script=scripts())
def test_a_mount_and_a_copy_under_the_same_rules_leave_the_same_workspace(
    entries: list[tuple[str, str, str, int]], script: str
) -> None:
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        host = Path(tmp, "tree")
        host.mkdir()
        build(host, entries)
        trees = []
        for mode in ("mount", "copy"):
            with agentfs.open(Path(tmp, f"{mode}.db")) as w:
                import_tree(w, host)
                r = w.run(script, mode=mode, rules=COMPARED)  # type: ignore[arg-type]
                assert (r.mode, r.exit_code, r.conflicts) == (mode, 0, ()), r.stderr
                trees.append(_tree(w))
        assert trees[0] == trees[1], script
