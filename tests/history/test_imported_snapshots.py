"""Snapshots taken by another copy of the workspace (``Snapshots.import_tree``, what sync
uses): the imported generation holds exactly the other copy's tree, the live tree and the
local snapshots are untouched, copy-on-write protects what it shares with the live tree, and
restore, diff, later snapshots and fsck keep working. Checked on hand-made cases and on
random trees against the other copy's own snapshot."""

from __future__ import annotations

import stat as statmod
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs import fsck
from agentfs.history.imported import ImportedEntry


def snapshot_picture(ws: agentfs.Workspace, name: str) -> dict[str, Any]:
    """A snapshot's tree as comparable values: type, mode, mtime and bytes or target."""
    out: dict[str, Any] = {}
    for entry in ws.snapshots.entries(name):
        kind = statmod.S_IFMT(entry.mode)
        if kind == statmod.S_IFDIR:
            out[entry.path] = ("dir", entry.mode)
        elif kind == statmod.S_IFLNK:
            out[entry.path] = ("link", entry.target, entry.mtime_ns)
        else:
            assert entry.content is not None
            out[entry.path] = ("file", entry.mode, entry.mtime_ns, entry.content())
    return out


def live_picture(ws: agentfs.Workspace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for top, dirs, files in ws.walk("/"):
        for name in dirs + files:
            p = f"{top.rstrip('/')}/{name}"
            st_ = ws.lstat(p)
            if statmod.S_ISDIR(st_.st_mode):
                out[p] = ("dir", st_.st_mode)
            elif statmod.S_ISLNK(st_.st_mode):
                out[p] = ("link", ws.readlink(p), st_.st_mtime_ns)
            else:
                out[p] = ("file", st_.st_mode, st_.st_mtime_ns, ws.read(p, track=False))
    return out


def clean(ws: agentfs.Workspace) -> None:
    report = fsck.check(ws)
    assert report.clean, report.problems


def imported_copy(source: agentfs.Workspace, name: str, into: agentfs.Workspace) -> None:
    into.snapshots.import_tree(
        name,
        source.snapshots.entries(name),
        thread="t-other",
        label="from elsewhere",
        meta={"turn": 3},
        created_ns=1_700_000_000_000_000_000,
        actor="other",
    )


@pytest.fixture
def other(tmp_path: Path) -> agentfs.Workspace:
    ws = agentfs.open(tmp_path / "other.db")
    ws.write("/src/app.py", "print('other')\n", parents=True)
    ws.write("/src/util.py", "x = 1\n")
    ws.chmod("/src/util.py", 0o755)
    ws.mkdir("/empty/deep", parents=True)
    ws.symlink("src/app.py", "/app")
    ws.snapshots.create("theirs")
    return ws


def test_an_imported_snapshot_holds_the_other_tree_and_leaves_the_live_one(
    ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws.write("/src/app.py", "print('mine')\n", parents=True)
    ws.write("/notes.md", "mine\n")
    ws.snapshots.create("mine")
    ws.write("/notes.md", "mine, later\n")
    before = live_picture(ws)
    imported_copy(other, "theirs", ws)
    info = ws.snapshots.get("theirs")
    assert (info.thread, info.label, info.meta, info.actor) == (
        "t-other",
        "from elsewhere",
        {"turn": 3},
        "other",
    )
    assert (info.files, info.bytes) == (2, len("print('other')\n") + len("x = 1\n"))
    assert snapshot_picture(ws, "theirs") == snapshot_picture(other, "theirs")
    assert ws.snapshots.read("theirs", "/src/app.py") == b"print('other')\n"
    assert live_picture(ws) == before
    assert ws.snapshots.read("mine", "/notes.md") == b"mine\n"
    clean(ws)
    # a later local snapshot records the live tree; diffs and restores cross the import
    later = ws.snapshots.create("later")
    assert later.files == 2
    assert ws.snapshots.diff("mine", "later").as_dict() == {
        "added": [],
        "removed": [],
        "modified": ["/notes.md"],
    }
    ws.snapshots.restore("theirs")
    assert live_picture(ws) == snapshot_picture(other, "theirs")
    clean(ws)
    ws.snapshots.restore("later")
    assert live_picture(ws) == before
    clean(ws)


def test_a_shared_live_file_is_frozen_for_the_imported_snapshot(
    ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws.write("/src/app.py", "print('other')\n", parents=True)
    live = ws.lstat("/src/app.py").st_ino
    entries = [
        e._replace(live_ino=live) if e.path == "/src/app.py" else e
        for e in other.snapshots.entries("theirs")
    ]
    ws.snapshots.import_tree(
        "theirs", entries, thread=None, label=None, meta=None, created_ns=1, actor=None
    )
    ws.write("/src/app.py", "changed after\n")  # copy-on-write keeps the snapshot's bytes
    assert ws.snapshots.read("theirs", "/src/app.py") == b"print('other')\n"
    assert ws.lstat("/src/app.py").st_ino == live
    clean(ws)


def test_bad_imports_are_refused_and_change_nothing(
    ws: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    ws.snapshots.create("theirs")
    with pytest.raises(FileExistsError):
        imported_copy(other, "theirs", ws)
    orphan = [ImportedEntry("/nowhere/file", statmod.S_IFREG | 0o644, 1, None, lambda: b"x")]
    with pytest.raises(OSError, match="no directory"):
        ws.snapshots.import_tree(
            "bad", orphan, thread=None, label=None, meta=None, created_ns=1, actor=None
        )
    assert [s.name for s in ws.snapshots.list()] == ["theirs"]
    clean(ws)


names = st.sampled_from(["a", "b", "c"])
kinds = st.sampled_from(["file", "dir", "link"])


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, str, bytes]]:
    """Paths (parents before children) with a kind and bytes."""
    out: list[tuple[str, str, bytes]] = []
    dirs = ["/"]
    for _ in range(draw(st.integers(0, 8))):
        parent = draw(st.sampled_from(dirs))
        path = parent.rstrip("/") + "/" + draw(names)
        if any(p == path for p, _, _ in out):
            continue
        kind = draw(kinds)
        out.append((path, kind, draw(st.binary(max_size=20))))
        if kind == "dir":
            dirs.append(path)
    return out


def make(ws: agentfs.Workspace, tree: list[tuple[str, str, bytes]]) -> None:
    for path, kind, data in tree:
        if kind == "dir":
            ws.mkdir(path)
        elif kind == "file":
            ws.write(path, data)
        else:
            ws.symlink("target-" + data.hex(), path)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(theirs=trees(), mine=trees(), later=trees(), snapshot_first=st.booleans())
def test_random_imports_match_the_other_copy(
    tmp_path_factory: pytest.TempPathFactory,
    theirs: list[tuple[str, str, bytes]],
    mine: list[tuple[str, str, bytes]],
    later: list[tuple[str, str, bytes]],
    snapshot_first: bool,
) -> None:
    home = tmp_path_factory.mktemp("imports")
    with agentfs.open(home / "o.db") as o, agentfs.open(home / "w.db") as w:
        make(o, theirs)
        o.snapshots.create("theirs")
        make(w, mine)
        if snapshot_first:
            w.snapshots.create("mine")
        live = live_picture(w)
        imported_copy(o, "theirs", w)
        assert snapshot_picture(w, "theirs") == snapshot_picture(o, "theirs")
        assert live_picture(w) == live
        clean(w)
        for name in w.listdir("/"):
            w.remove(f"/{name}", recursive=True)
        make(w, later)
        w.snapshots.create("after")
        assert snapshot_picture(w, "after") == live_picture(w)
        w.snapshots.restore("theirs")
        assert live_picture(w) == snapshot_picture(o, "theirs")
        clean(w)
