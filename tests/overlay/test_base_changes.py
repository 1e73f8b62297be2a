"""What a workspace over a host directory changed there (``agentfs.overlay.changes``): each case
by itself, the CLI, and random sequences of operations against a reference (the same
operations on a copy of the host directory, compared path by path as git would)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.overlay import Change, changes, patch
from tests.clirun import run


def make_host(root: Path) -> Path:
    (root / "src" / "lib").mkdir(parents=True)
    (root / "src" / "app.py").write_text("one\ntwo\nthree\n")
    (root / "src" / "lib" / "util.py").write_text("util\n")
    (root / "README.md").write_text("# readme\n")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02")
    os.symlink("src/app.py", root / "app-link")
    os.link(root / "README.md", root / "README-hard.md")
    return root


@pytest.fixture
def host(tmp_path: Path) -> Path:
    return make_host(tmp_path / "host")


def kinds(found: list[Change]) -> list[tuple[str, str, str | None]]:
    return [(c.kind, c.path, c.old_path) for c in found]


def test_nothing_changed_and_nothing_read(ws: agentfs.Workspace) -> None:
    assert changes(ws) == []
    ws.listdir("/src/lib")  # brought in, unchanged
    assert changes(ws) == []
    absent = "SELECT path FROM ws_origin WHERE present = 0 AND mode & 61440 = {} ORDER BY path"
    assert ws.conn.execute(absent.format(0o040000)).fetchall() == []
    # no file's bytes were read to tell that nothing changed
    unread = [path for (path,) in ws.conn.execute(absent.format(0o100000))]
    assert "src/lib/util.py" in unread and "src/app.py" in unread


def test_each_kind_of_change(ws: agentfs.Workspace) -> None:
    ws.write("/src/app.py", "one\n2\nthree\nfour\n")
    ws.write("/NEW.md", "new\nfile\n")
    ws.remove("/blob.bin")
    ws.rename("/src/lib/util.py", "/src/lib/helpers.py")
    ws.remove("/app-link")
    ws.symlink("README.md", "/app-link")  # the same name, another target
    ws.chmod("/README.md", 0o600)
    assert kinds(changes(ws)) == [
        ("added", "/NEW.md", None),
        ("modified", "/README-hard.md", None),  # one inode: its mode changed under both names
        ("modified", "/README.md", None),
        ("modified", "/app-link", None),
        ("deleted", "/blob.bin", None),
        ("modified", "/src/app.py", None),
        ("renamed", "/src/lib/helpers.py", "/src/lib/util.py"),
    ]
    by_path = {c.path: c for c in changes(ws)}
    assert (by_path["/src/app.py"].insertions, by_path["/src/app.py"].deletions) == (2, 1)
    assert (by_path["/NEW.md"].insertions, by_path["/NEW.md"].deletions) == (2, 0)
    assert by_path["/src/lib/helpers.py"].insertions is None  # a pure rename
    assert by_path["/app-link"].type == "symlink"


def test_a_file_saved_by_renaming_a_new_one_over_it_is_modified(ws: agentfs.Workspace) -> None:
    ws.write("/src/.app.py.swp", "one\ntwo\n")
    ws.rename("/src/.app.py.swp", "/src/app.py")
    assert kinds(changes(ws)) == [("modified", "/src/app.py", None)]
    ws.write("/src/.again", "one\ntwo\n")  # the same bytes again: no change at all
    ws.rename("/src/.again", "/src/app.py")
    ws.write("/src/.back", "one\ntwo\nthree\n")
    ws.rename("/src/.back", "/src/app.py")
    assert changes(ws) == []


def test_writing_the_same_bytes_is_no_change(ws: agentfs.Workspace) -> None:
    ws.write("/src/app.py", "one\ntwo\nthree\n")
    assert changes(ws) == []


def test_a_deleted_hard_link_and_a_renamed_directory(ws: agentfs.Workspace) -> None:
    ws.remove("/README-hard.md")
    ws.rename("/src/lib", "/lib")
    assert kinds(changes(ws)) == [
        ("deleted", "/README-hard.md", None),
        ("renamed", "/lib/util.py", "/src/lib/util.py"),
    ]
    assert kinds(changes(ws, "/src")) == []
    assert kinds(changes(ws, "/lib")) == [("renamed", "/lib/util.py", "/src/lib/util.py")]


def test_the_patch_is_against_what_the_base_held(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.write("/src/app.py", "one\n2\nthree\n")
    ws.remove("/README-hard.md")
    ws.write("/added.txt", "a\n")
    text = patch(ws, changes(ws))
    assert "--- a/src/app.py\n+++ b/src/app.py\n" in text and "-two\n+2\n" in text
    assert "--- a/README-hard.md\n+++ /dev/null\n" in text and "-# readme\n" in text
    assert "--- /dev/null\n+++ b/added.txt\n" in text and "+a\n" in text
    # the host changes its side too: the workspace's history still has what it saw
    (tmp_path / "host" / "src" / "app.py").write_text("edited on the host\n")
    assert "-two\n+2\n" in patch(ws, changes(ws))


def test_a_workspace_without_a_base_has_no_changes_to_list(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "plain.db") as plain, pytest.raises(OSError) as refused:
        changes(plain)
    assert "no base" in str(refused.value)


def test_the_cli_lists_and_patches(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.write("/src/app.py", "one\n2\nthree\n")
    ws.write("/NEW.md", "new\n")
    ws.close()
    db = str(tmp_path / "ws.db")
    listed = run("changes", db)
    assert listed.exit_code == 0, listed.output
    assert listed.output.splitlines() == [
        "A  /NEW.md  (+1 -0)",
        "M  /src/app.py  (+1 -1)",
        "2 changed, 2 insertions(+), 1 deletions(-)",
    ]
    as_json = json.loads(run("changes", db, "--json").output)
    assert [(c["kind"], c["path"]) for c in as_json] == [
        ("added", "/NEW.md"),
        ("modified", "/src/app.py"),
    ]
    assert "+2\n" in run("changes", db, "/src", "--patch").output
    assert run("changes", db, "/nothing").output == "no changes\n"


# --- against a reference: the same operations on a copy of the host ----------------------------

NAMES = ["a.txt", "b.txt", "src/c.txt", "src/d.txt", "src/deep/e.txt"]
OPERATION = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.sampled_from(["x\n", "y\ny\n", ""])),
    st.tuples(st.just("remove"), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("chmod"), st.sampled_from(NAMES), st.just("")),
)


def _apply(ws: agentfs.Workspace, ref: Path, op: tuple[str, str, str]) -> None:
    """``op`` on both sides, or on neither when it cannot be done on the reference."""
    kind, name, arg = op
    target = ref / name
    if kind == "write":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(arg)
        ws.write("/" + name, arg, parents=True)
    elif kind == "remove" and target.exists():
        target.unlink()
        ws.remove("/" + name)
    elif kind == "rename" and target.exists() and name != arg:
        (ref / arg).parent.mkdir(parents=True, exist_ok=True)
        target.rename(ref / arg)
        if "/" in arg:
            ws.mkdir("/" + os.path.dirname(arg), parents=True, exist_ok=True)
        ws.rename("/" + name, "/" + arg)
    elif kind == "chmod" and target.exists():
        target.chmod(0o600)
        ws.chmod("/" + name, 0o600)


def _files(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        "/" + str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in root.rglob("*")
        if p.is_file()
    }


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(OPERATION, max_size=8))
def test_changes_match_a_path_by_path_comparison(tmp_path: Path, ops: list) -> None:
    case = Path(tmp_path, f"case{len(list(tmp_path.iterdir()))}")
    host = case / "host"
    (host / "src" / "deep").mkdir(parents=True)
    for i, name in enumerate(NAMES[:4]):
        (host / name).write_text(f"{i}\n")
    ref = case / "ref"
    shutil.copytree(host, ref)
    before = _files(host)
    with agentfs.open(case / "ws.db", base=host) as ws:
        for op in ops:
            _apply(ws, ref, op)
        found = changes(ws)
    after = _files(ref)
    expected = {
        ("added" if path not in before else "deleted" if path not in after else "modified", path)
        for path in before.keys() | after.keys()
        if before.get(path) != after.get(path)
    }
    seen = set()
    for c in found:
        if c.kind == "renamed":  # a path-by-path view: the old path gone, the new one there
            assert c.old_path is not None
            seen.add(("deleted", c.old_path))
            new_kind = "modified" if c.path in before else "added"
            seen.add((new_kind, c.path))
        else:
            seen.add((c.kind, c.path))
    assert seen == expected
    assert _files(host) == before  # the host is untouched


def test_a_directory_moved_or_deleted_before_it_came_in(ws: agentfs.Workspace) -> None:
    ws.listdir("/")  # /src comes in; /src/lib is still the host's
    ws.rename("/src", "/source")
    assert kinds(changes(ws)) == [
        ("renamed", "/source/app.py", "/src/app.py"),
        ("renamed", "/source/lib/util.py", "/src/lib/util.py"),
    ]
    ws.remove("/source/lib", recursive=True)
    assert kinds(changes(ws, "/src/lib")) == [("deleted", "/src/lib/util.py", None)]


def test_a_directory_deleted_before_it_came_in(ws: agentfs.Workspace) -> None:
    ws.listdir("/")
    ws.remove("/src", recursive=True)
    assert kinds(changes(ws)) == [
        ("deleted", "/src/app.py", None),
        ("deleted", "/src/lib/util.py", None),
    ]
