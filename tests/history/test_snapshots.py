"""Copy-on-write snapshots: create, list, get, show, read, diff, restore (whole tree and
subtree, with its undo snapshot), delete with garbage collection, fork and export.

The central check compares whole trees: ``live_tree`` captures every path below the root with
its type, permission bits, bytes or symlink target and (files and symlinks) mtime, and
``snapshot_tree`` reads the same from a snapshot through ``show``/``read``. A snapshot must
equal the live tree of its moment forever, and a restore must bring that tree back exactly.
"""

from __future__ import annotations

import errno
import stat
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

import agentfs
from agentfs import fsck
from agentfs.core.errors import HistoryNotFoundError
from agentfs.core.fs import Attrs
from agentfs.transfer import export_agentfs
from tests.table_rows import all_rows

#: (kind, permission bits, bytes or symlink target or None, mtime_ns or None for directories)
Node = tuple[str, int, bytes | str | None, int | None]
Tree = dict[str, Node]


def live_tree(ws: agentfs.Workspace, top: str = "/") -> Tree:
    """Every entry below ``top`` (not ``top`` itself), as the live tree has it."""
    out: Tree = {}
    for name, st in ws.readdir_plus(top):
        path = top.rstrip("/") + "/" + name
        kind = stat.S_IFMT(st.st_mode)
        if kind == stat.S_IFDIR:
            out[path] = ("dir", st.st_mode & 0o7777, None, None)
            out.update(live_tree(ws, path))
        elif kind == stat.S_IFLNK:
            out[path] = ("link", st.st_mode & 0o7777, ws.readlink(path), st.st_mtime_ns)
        else:
            out[path] = ("file", st.st_mode & 0o7777, ws.read(path), st.st_mtime_ns)
    return out


def snapshot_tree(ws: agentfs.Workspace, name: str, top: str = "/") -> Tree:
    """The same view of snapshot ``name`` through ``snapshots.show`` and ``snapshots.read``
    (symlink targets from fs_symlink: the API has no readlink for snapshots)."""
    out: Tree = {}
    for path, entry in ws.snapshots.show(name, top):
        if path == top:
            continue
        kind = stat.S_IFMT(entry.mode)
        perm = entry.mode & 0o7777
        if kind == stat.S_IFDIR:
            out[path] = ("dir", perm, None, None)
        elif kind == stat.S_IFLNK:
            target = ws.conn.execute(
                "SELECT target FROM fs_symlink WHERE ino = ?", (entry.ino,)
            ).get
            out[path] = ("link", perm, target, entry.mtime_ns)
        else:
            out[path] = ("file", perm, ws.snapshots.read(name, path), entry.mtime_ns)
    return out


def inode_count(ws: agentfs.Workspace) -> int:
    return ws.conn.execute("SELECT count(*) FROM fs_inode").get


def build(ws: agentfs.Workspace) -> None:
    """A small tree with every kind of entry and some private modes."""
    ws.write("/src/main.py", b"print('hi')\n", parents=True)
    ws.write("/src/lib/util.py", b"def f():\n    return 1\n", parents=True)
    ws.write("/src/lib/data.bin", bytes(range(256)) * 300)  # two chunks of 64 KiB
    ws.write("/docs/readme.md", b"# readme\n", parents=True)
    ws.write("/secret", b"key", mode=0o600)
    ws.mkdir("/empty", 0o700)
    ws.symlink("src/main.py", "/link")
    ws.symlink("../docs", "/src/docs-link")


def mutate(ws: agentfs.Workspace) -> None:
    """Change everything ``build`` made in every way but renames (see the rename tests)."""
    ws.write("/src/main.py", b"print('changed')\n")
    ws.append("/src/lib/util.py", b"# more\n")
    ws.pwrite("/src/lib/data.bin", b"XX", 70_000)
    ws.chmod("/secret", 0o644)
    ws.utime("/docs/readme.md", (1, 1_000_000_007))
    ws.remove("/empty")
    ws.write("/empty", b"now a file")  # a directory replaced by a file
    ws.remove("/docs", recursive=True)
    ws.write("/docs", b"also a file")
    ws.remove("/link")
    ws.symlink("secret", "/link")  # same name, other target
    ws.mkdir("/new/deeper", parents=True)
    ws.write("/new/deeper/f", b"new")
    ws.chmod("/src/lib", 0o700)


# --- create, list, get -----------------------------------------------------------------------


def test_create_records_what_and_who(ws: agentfs.Workspace) -> None:
    ws.actor, ws.thread = "alice", "t1"
    ws.write("/a", b"12345")
    ws.write("/d/b", b"12", parents=True)
    ws.link("/a", "/c")  # a hard link counts once
    info = ws.snapshots.create("first", label="before the edit", meta={"turn": 3})
    assert (info.name, info.thread, info.actor, info.label) == (
        "first",
        "t1",
        "alice",
        "before the edit",
    )
    assert info.meta == {"turn": 3}
    assert (info.files, info.bytes) == (2, 7)
    assert ws.snapshots.get("first") == info
    other = ws.snapshots.create("second", thread="t9")
    assert other.thread == "t9"
    assert other.id > info.id


def test_default_names_follow_the_generation(ws: agentfs.Workspace) -> None:
    """snap-<id> by default; when a user already took that name, another unique one."""
    first = ws.snapshots.create()
    assert first.name == f"snap-{first.id}"
    taken = ws.snapshots.create(f"snap-{first.id + 2}")  # the next default name
    clash = ws.snapshots.create()
    assert clash.id == taken.id + 1 == first.id + 2
    assert clash.name.startswith("snap-")
    assert clash.name != taken.name
    assert len({s.name for s in ws.snapshots.list()}) == 3


def test_list_is_oldest_first_and_filters_by_thread(ws: agentfs.Workspace) -> None:
    ws.snapshots.create("a", thread="t1")
    ws.snapshots.create("b", thread="t2")
    ws.thread = "t1"
    ws.snapshots.create("c")  # the handle's thread
    ws.thread = None
    ws.snapshots.create("d")
    assert [s.name for s in ws.snapshots.list()] == ["a", "b", "c", "d"]
    assert [s.name for s in ws.snapshots.list(thread="t1")] == ["a", "c"]
    assert [s.name for s in ws.snapshots.list(thread="t2")] == ["b"]
    assert ws.snapshots.list(thread="nobody") == []


def test_unknown_snapshots_raise(ws: agentfs.Workspace) -> None:
    for call in (
        lambda: ws.snapshots.get("nope"),
        lambda: ws.snapshots.show("nope"),
        lambda: ws.snapshots.read("nope", "/f"),
        lambda: ws.snapshots.diff("nope"),
        lambda: ws.snapshots.delete("nope"),
        lambda: ws.snapshots.restore("nope"),
    ):
        with pytest.raises(HistoryNotFoundError):
            call()


def test_names_are_unique(ws: agentfs.Workspace, ws_path: Path) -> None:
    ws.snapshots.create("s")
    before = all_rows(ws_path)
    with pytest.raises(FileExistsError) as caught:
        ws.snapshots.create("s")
    assert caught.value.errno == errno.EEXIST
    assert all_rows(ws_path) == before


@pytest.mark.parametrize("name", ["", "a\0b", "x" * 256])
def test_bad_names_are_refused(ws: agentfs.Workspace, ws_path: Path, name: str) -> None:
    before = all_rows(ws_path)
    with pytest.raises(OSError) as caught:
        ws.snapshots.create(name)
    assert caught.value.errno == errno.EINVAL
    assert all_rows(ws_path) == before


# --- show and read ---------------------------------------------------------------------------


def test_show_and_read_give_the_tree_of_the_snapshot_moment(ws: agentfs.Workspace) -> None:
    build(ws)
    expected = live_tree(ws)
    ws.snapshots.create("s")
    assert snapshot_tree(ws, "s") == expected
    assert [p for p, _ in ws.snapshots.show("s")] == sorted(expected)


def test_show_of_a_subtree_or_a_file(ws: agentfs.Workspace) -> None:
    build(ws)
    ws.snapshots.create("s")
    assert [p for p, _ in ws.snapshots.show("s", "/src/lib")] == [
        "/src/lib",
        "/src/lib/data.bin",
        "/src/lib/util.py",
    ]
    [(path, entry)] = ws.snapshots.show("s", "/secret")
    assert (path, entry.mode & 0o7777) == ("/secret", 0o600)
    with pytest.raises(FileNotFoundError):
        ws.snapshots.show("s", "/missing")
    with pytest.raises(FileNotFoundError):
        ws.snapshots.show("s", "/secret/below-a-file")


def test_read_refuses_directories_and_missing_paths(ws: agentfs.Workspace) -> None:
    build(ws)
    ws.snapshots.create("s")
    with pytest.raises(IsADirectoryError):
        ws.snapshots.read("s", "/src")
    with pytest.raises(FileNotFoundError):
        ws.snapshots.read("s", "/nothing")
    with pytest.raises(FileNotFoundError):
        ws.snapshots.read("s", "/nothing/below")


def test_read_of_a_symlink_is_einval(ws: agentfs.Workspace) -> None:
    """Not len(target) NUL bytes (a symlink inode has no chunks to read)."""
    ws.write("/target", b"content")
    ws.symlink("target", "/link")
    ws.snapshots.create("s")
    with pytest.raises(OSError) as caught:
        ws.snapshots.read("s", "/link")
    assert caught.value.errno == errno.EINVAL


def test_changes_after_a_snapshot_never_change_it(ws: agentfs.Workspace) -> None:
    """Every kind of change after the snapshot (content, metadata, names, hard links, with
    versioning on or off) leaves the snapshot's view unchanged."""
    build(ws)
    ws.link("/src/main.py", "/hardlink")
    expected = live_tree(ws)
    ws.snapshots.create("s")
    mutate(ws)
    ws.write("/hardlink", b"through the other name")
    ws.configure_history(keep="none")  # no version freezes anything now: only the snapshot
    ws.write("/src/lib/util.py", b"unversioned")
    ws.truncate("/src/lib/data.bin", 10)
    ws.append("/secret", b"!")
    ws.remove("/src", recursive=True)
    ws.snapshots.create("later")
    ws.gc()
    assert snapshot_tree(ws, "s") == expected


@pytest.mark.parametrize("versioning", ["all", "none"])
def test_a_snapshot_inside_a_transaction_freezes_what_it_created(
    ws: agentfs.Workspace, versioning: str
) -> None:
    """Files created earlier in the same transaction are in the snapshot: a write after it,
    still in that transaction, must not change the snapshot's bytes: such files are held,
    not taken as new to the transaction and changed in place."""
    ws.configure_history(keep=versioning)
    ws.snapshots.create("before")
    with ws.transaction():
        ws.write("/new", b"in the snapshot")
        ws.write("/big", b"b" * 100_000)
        ws.snapshots.create("s")
        ws.write("/new", b"after")
        ws.pwrite("/big", b"X", 10)
    assert ws.snapshots.read("s", "/new") == b"in the snapshot"
    assert ws.snapshots.read("s", "/big") == b"b" * 100_000
    assert ws.read("/new") == b"after"


# --- diff ------------------------------------------------------------------------------------


def test_diff_reports_added_removed_and_modified(ws: agentfs.Workspace) -> None:
    """Content, permission and mtime changes are modifications; a vanished directory lists
    its contents as removed, a new one as added; a type change is a modification."""
    build(ws)
    ws.snapshots.create("a")
    mutate(ws)
    expected = {
        "added": ["/new", "/new/deeper", "/new/deeper/f"],
        "removed": ["/docs/readme.md"],
        "modified": [
            "/docs",
            "/empty",
            "/link",
            "/secret",
            "/src/lib",
            "/src/lib/data.bin",
            "/src/lib/util.py",
            "/src/main.py",
        ],
    }
    assert ws.snapshots.diff("a").as_dict() == expected  # against the live tree
    ws.snapshots.create("b")
    assert ws.snapshots.diff("a", "b").as_dict() == expected
    assert ws.snapshots.diff("b").as_dict() == {"added": [], "removed": [], "modified": []}
    backwards = ws.snapshots.diff("b", "a")
    assert (backwards.added, backwards.removed) == (expected["removed"], expected["added"])


def test_diff_of_a_utime_or_chmod_alone(ws: agentfs.Workspace) -> None:
    ws.write("/d/f", b"x", parents=True)
    ws.write("/d/g", b"y")
    ws.snapshots.create("a")
    ws.utime("/d/f", (5, 5))
    ws.chmod("/d/g", 0o600)
    ws.chmod("/d", 0o700)
    assert ws.snapshots.diff("a").modified == ["/d", "/d/f", "/d/g"]


def test_attributes_set_by_inode_leave_the_snapshot_as_it_was(ws: agentfs.Workspace) -> None:
    """What fchmod, fchown and futimens do through the mount (``set_attrs`` by inode, no
    path): every name of the file, a hard link's too, shows the change live and the old
    attributes in the snapshot; an inode with no name left changes without complaint."""
    ws.write("/d/f", b"x", parents=True)
    ws.link("/d/f", "/e")
    gone = ws.write("/gone", b"z").st_ino
    ws.snapshots.create("a")
    ino = ws.stat("/d/f").st_ino
    ws.remove("/gone")  # the snapshot holds its inode, which has no name now
    ws.set_attrs(gone, Attrs(mode=0o600))
    ws.set_attrs(ino, Attrs(mode=0o600, times=(5, 5)))
    assert ws.snapshots.diff("a").modified == ["/d/f", "/e"]
    assert ws.stat("/e").st_mode & 0o777 == 0o600
    old = dict(ws.snapshots.show("a"))
    assert old["/e"].mode & 0o777 == 0o644 and old["/d/f"].mtime_ns != 5
    assert old["/gone"].mode & 0o777 == 0o644


def test_diff_limited_to_a_path(ws: agentfs.Workspace) -> None:
    build(ws)
    ws.snapshots.create("a")
    mutate(ws)
    assert ws.snapshots.diff("a", path="/src").as_dict() == {
        "added": [],
        "removed": [],
        "modified": ["/src/lib", "/src/lib/data.bin", "/src/lib/util.py", "/src/main.py"],
    }
    assert not ws.snapshots.diff("a", path="/nowhere")


def test_diff_of_a_directory_move_lists_its_subtree(ws: agentfs.Workspace) -> None:
    """A moved directory brings its whole subtree into the diff, on both sides."""
    ws.write("/x/d/f", b"1", parents=True)
    ws.write("/x/d/sub/g", b"2", parents=True)
    ws.mkdir("/y")
    ws.snapshots.create("a")
    ws.rename("/x/d", "/y/d")
    diff = ws.snapshots.diff("a")
    assert diff.removed == ["/x/d", "/x/d/f", "/x/d/sub", "/x/d/sub/g"]
    assert diff.added == ["/y/d", "/y/d/f", "/y/d/sub", "/y/d/sub/g"]
    assert diff.modified == []


def test_a_snapshot_after_a_rename_records_the_new_names(ws: agentfs.Workspace) -> None:
    """Renames alone (no other change in either directory) show in diff and in the next
    snapshot: a rename marks both parents dirty."""
    ws.write("/x/d/f", b"1", parents=True)
    ws.write("/x/g", b"2")
    ws.mkdir("/y")
    ws.snapshots.create("a")
    ws.rename("/x/d", "/y/d")
    ws.rename("/x/g", "/x/h")
    expected = live_tree(ws)
    assert ws.snapshots.diff("a").as_dict() == {
        "added": ["/x/h", "/y/d", "/y/d/f"],
        "removed": ["/x/d", "/x/d/f", "/x/g"],
        "modified": [],
    }
    ws.snapshots.create("b")
    assert snapshot_tree(ws, "b") == expected


def test_restore_undoes_a_rename(ws: agentfs.Workspace) -> None:
    ws.write("/x/f", b"1", parents=True)
    ws.mkdir("/y")
    expected = live_tree(ws)
    ws.snapshots.create("a")
    ws.rename("/x/f", "/y/f")
    ws.snapshots.restore("a")
    assert live_tree(ws) == expected


# --- restore ---------------------------------------------------------------------------------


def test_restore_brings_the_whole_tree_back_and_undo_returns(ws: agentfs.Workspace) -> None:
    """Paths, bytes, modes, symlink targets and file mtimes are those of the snapshot; the
    returned undo snapshot holds the state before, and restoring it goes back there."""
    build(ws)
    at_snapshot = live_tree(ws)
    ws.snapshots.create("s")
    mutate(ws)
    before_restore = live_tree(ws)
    result = ws.snapshots.restore("s")
    assert live_tree(ws) == at_snapshot
    assert snapshot_tree(ws, result.undo) == before_restore
    assert result.changes == ws.snapshots.diff(result.undo, "s")
    assert ws.snapshots.get(result.undo).label == "automatic: the state before restoring 's'"
    assert fsck.check(ws).clean
    again = ws.snapshots.restore(result.undo)
    assert live_tree(ws) == before_restore
    assert snapshot_tree(ws, again.undo) == at_snapshot
    assert snapshot_tree(ws, "s") == at_snapshot  # restoring never changes a snapshot


def test_restore_records_restore_and_delete_versions(ws: agentfs.Workspace) -> None:
    ws.write("/kept", b"same")
    ws.write("/f", b"old")
    ws.snapshots.create("s")
    ws.write("/f", b"new")
    ws.write("/added", b"x")
    ws.snapshots.restore("s")
    assert [v.op for v in ws.history("/f")] == ["write", "write", "restore"]
    assert ws.version("/f").ino == ws.stat("/f").st_ino
    assert [v.op for v in ws.history("/added")] == ["write", "delete"]
    assert [v.op for v in ws.history("/kept")] == ["write"]


def test_restore_of_a_file_replaced_by_a_directory_records_its_delete(
    ws: agentfs.Workspace,
) -> None:
    """A type change is 'modified', and it gets a delete event as 'removed' paths do."""
    ws.mkdir("/p")
    ws.write("/p/x", b"in the directory")
    ws.snapshots.create("s")
    ws.remove("/p", recursive=True)
    ws.write("/p", b"a file now")
    ws.snapshots.restore("s")
    assert ws.stat("/p").is_dir()
    assert ws.version("/p").op == "delete"


def test_restore_with_nothing_changed_changes_nothing(ws: agentfs.Workspace) -> None:
    build(ws)
    expected = live_tree(ws)
    ws.snapshots.create("s")
    result = ws.snapshots.restore("s")
    assert not result.changes
    assert live_tree(ws) == expected
    assert snapshot_tree(ws, result.undo) == expected


def test_restore_recreates_a_deleted_directory_tree(ws: agentfs.Workspace) -> None:
    build(ws)
    at_snapshot = live_tree(ws)
    ws.snapshots.create("s")
    for name in ws.listdir("/"):
        ws.remove("/" + name, recursive=True)
    ws.gc()
    assert live_tree(ws) == {}
    ws.snapshots.restore("s")
    assert live_tree(ws) == at_snapshot
    ws.write("/src/lib/new", b"the recreated directory works")
    assert ws.stat("/src/lib").st_nlink == 2


def test_restore_of_a_subtree_leaves_the_rest_alone(ws: agentfs.Workspace) -> None:
    build(ws)
    at_snapshot = live_tree(ws)
    ws.snapshots.create("s")
    mutate(ws)
    before = live_tree(ws)
    ws.snapshots.restore("s", path="/src")
    after = live_tree(ws)
    inside = {p: n for p, n in at_snapshot.items() if p.startswith("/src/")}
    assert {p: n for p, n in after.items() if p.startswith("/src/")} == inside
    assert after["/src"] == at_snapshot["/src"]
    outside = {p: n for p, n in before.items() if p != "/src" and not p.startswith("/src/")}
    assert {p: n for p, n in after.items() if p != "/src" and not p.startswith("/src/")} == outside


def test_restore_of_one_file(ws: agentfs.Workspace) -> None:
    build(ws)
    at_snapshot = live_tree(ws)
    ws.snapshots.create("s")
    mutate(ws)
    before = live_tree(ws)
    result = ws.snapshots.restore("s", path="/src/main.py")
    assert result.changes.as_dict() == {"added": [], "removed": [], "modified": ["/src/main.py"]}
    assert live_tree(ws) == {**before, "/src/main.py": at_snapshot["/src/main.py"]}


def test_restore_of_a_deleted_file_into_a_live_directory(ws: agentfs.Workspace) -> None:
    ws.write("/d/f", b"F", parents=True)
    ws.write("/d/g", b"G")
    ws.snapshots.create("s")
    ws.remove("/d/f")
    ws.write("/d/g", b"G2")
    ws.snapshots.restore("s", path="/d/f")
    assert ws.read("/d/f") == b"F"
    assert ws.read("/d/g") == b"G2"


@pytest.mark.parametrize("recreate_parent", [False, True], ids=["parent-gone", "parent-new"])
def test_restore_of_a_subtree_whose_parent_was_deleted(
    ws: agentfs.Workspace, recreate_parent: bool
) -> None:
    """The subtree goes into the live directory at its parent path, made if missing, and
    nothing else of the parent comes back; it is never attached under the snapshot's old
    parent inode, which no longer exists (a dangling dentry)."""
    ws.write("/a/b/f", b"F", parents=True)
    ws.write("/a/g", b"G")
    ws.snapshots.create("s")
    ws.remove("/a", recursive=True)
    if recreate_parent:
        ws.mkdir("/a")
    result = ws.snapshots.restore("s", path="/a/b")
    assert result.changes.added == ["/a/b", "/a/b/f"]
    assert ws.read("/a/b/f") == b"F"
    assert ws.listdir("/a") == ["b"]
    assert fsck.check(ws).problems == []
    ws.snapshots.restore(result.undo)
    assert ws.exists("/a") is recreate_parent
    assert not ws.exists("/a/b")


def test_restore_of_a_subtree_does_not_tie_it_to_files_outside(ws: agentfs.Workspace) -> None:
    """A file renamed out of the subtree keeps its content when the restored copy changes.
    (The two names must not become hard links of the one frozen inode.)"""
    ws.write("/a/f", b"orig", parents=True)
    ws.mkdir("/b")
    ws.snapshots.create("s")
    ws.rename("/a/f", "/b/f")
    ws.snapshots.restore("s", path="/a")
    assert ws.stat("/a/f").st_nlink == ws.stat("/b/f").st_nlink == 1
    assert ws.read("/a/f") == b"orig"
    ws.write("/a/f", b"edited under /a")
    assert ws.read("/b/f") == b"orig"


def test_restore_of_a_subtree_keeps_hard_links_inside_it(ws: agentfs.Workspace) -> None:
    """A subtree restore gives back the hard link the snapshot had between two names inside
    the subtree, as a whole-tree restore does (once it gave the second name a copy)."""
    ws.write("/s/a", b"shared", parents=True)
    ws.link("/s/a", "/s/b")
    ws.snapshots.create("snap")
    ws.remove("/s/b")
    ws.snapshots.restore("snap", path="/s")
    assert ws.stat("/s/a").st_ino == ws.stat("/s/b").st_ino
    assert ws.stat("/s/b").st_nlink == 2


def test_restore_of_the_whole_tree_keeps_hard_links(ws: agentfs.Workspace) -> None:
    ws.write("/s/a", b"shared", parents=True)
    ws.link("/s/a", "/s/b")
    ws.snapshots.create("snap")
    ws.remove("/s/b")
    ws.write("/s/a", b"changed")
    ws.snapshots.restore("snap")
    assert ws.stat("/s/a").st_ino == ws.stat("/s/b").st_ino
    assert ws.stat("/s/b").st_nlink == 2
    assert ws.read("/s/b") == b"shared"


def test_a_subtree_restore_refuses_a_directory_now_outside_it(
    ws: agentfs.Workspace, ws_path: Path
) -> None:
    """A directory of the subtree that now lives outside it cannot be in two places: EBUSY,
    and the failed restore (its undo snapshot included) leaves every row as it was."""
    ws.write("/a/d/f", b"1", parents=True)
    ws.mkdir("/b")
    ws.snapshots.create("s")
    ws.rename("/a/d", "/b/d")
    before = all_rows(ws_path)
    with pytest.raises(OSError) as caught:
        ws.snapshots.restore("s", path="/a")
    assert caught.value.errno == errno.EBUSY
    assert all_rows(ws_path) == before
    ws.snapshots.restore("s")  # the whole tree can be restored
    assert ws.read("/a/d/f") == b"1"
    assert not ws.exists("/b/d")


@pytest.mark.parametrize(
    "fail",
    [
        lambda ws: ws.snapshots.restore("unknown"),
        lambda ws: ws.snapshots.restore("unknown", path="/src"),
        lambda ws: ws.snapshots.delete("unknown"),
    ],
    ids=["restore", "restore-subtree", "delete"],
)
def test_a_failing_operation_changes_no_row(
    ws: agentfs.Workspace, ws_path: Path, fail: Callable[[agentfs.Workspace], object]
) -> None:
    build(ws)
    ws.snapshots.create("s")
    mutate(ws)
    before = all_rows(ws_path)
    with pytest.raises(HistoryNotFoundError):
        fail(ws)
    assert all_rows(ws_path) == before


# --- delete and garbage collection -----------------------------------------------------------


def test_delete_frees_only_what_that_snapshot_held(ws: agentfs.Workspace) -> None:
    """Three snapshots of three contents of one file (versioning off, so only snapshots hold
    them): deleting the middle one frees exactly its content; the others stay readable."""
    ws.configure_history(keep="none")
    ws.write("/keep", b"unchanged")
    for i, name in enumerate(("s1", "s2", "s3")):
        ws.write("/f", f"content {i}".encode())
        ws.snapshots.create(name)
    ws.write("/f", b"live")
    ws.gc()
    assert inode_count(ws) == 1 + 1 + 4  # root, /keep, three frozen contents, the live one
    ws.snapshots.delete("s2")
    ws.gc()
    assert inode_count(ws) == 1 + 1 + 3
    assert [s.name for s in ws.snapshots.list()] == ["s1", "s3"]
    assert ws.snapshots.read("s1", "/f") == b"content 0"
    assert ws.snapshots.read("s3", "/f") == b"content 2"
    assert ws.read("/f") == b"live"
    ws.snapshots.delete("s1")
    ws.snapshots.delete("s3")
    ws.gc()
    assert inode_count(ws) == 1 + 2
    assert ws.conn.execute("SELECT count(*) FROM ws_entry").get == 0


def test_delete_keeps_what_versions_still_hold(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"one")
    ws.snapshots.create("s")
    ws.write("/f", b"two")
    ws.gc()
    count = inode_count(ws)
    ws.snapshots.delete("s")
    ws.gc()
    assert inode_count(ws) == count
    assert ws.read_version("/f", 1) == b"one"


def test_a_deleted_snapshot_of_a_deleted_tree_frees_it(ws: agentfs.Workspace) -> None:
    ws.configure_history(keep="none")
    build(ws)
    ws.snapshots.create("s")
    for name in ws.listdir("/"):
        ws.remove("/" + name, recursive=True)
    ws.gc()
    assert inode_count(ws) > 1
    ws.snapshots.delete("s")
    ws.gc()
    assert inode_count(ws) == 1


# --- fork and export -------------------------------------------------------------------------


def forked(ws: agentfs.Workspace, tmp_path: Path) -> tuple[Tree, Path]:
    """A workspace with history before and after snapshot 's', forked at 's'."""
    build(ws)
    ws.write("/src/main.py", b"print('version 2')\n")
    ws.snapshots.create("early")
    at_snapshot = live_tree(ws)
    ws.snapshots.create("s")
    mutate(ws)
    ws.write("/after", b"AFTER-THE-SNAPSHOT " * 20)
    ws.snapshots.create("late")
    out = tmp_path / "fork.db"
    assert ws.fork("s", out) == out
    return at_snapshot, out


def test_fork_holds_the_snapshot_and_the_history_before_it(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    at_snapshot, out = forked(ws, tmp_path)
    with agentfs.open(out) as fork:
        assert fsck.check(fork).problems == []
        assert live_tree(fork) == at_snapshot
        assert [s.name for s in fork.snapshots.list()] == ["early", "s"]
        assert snapshot_tree(fork, "s") == at_snapshot
        assert [v.op for v in fork.history("/src/main.py")] == ["write", "write"]
        assert fork.read_version("/src/main.py", 1) == b"print('hi')\n"
        assert fork.history("/after") == []
        assert fork.history("/new/deeper/f") == []
        fork.write("/src/main.py", b"the fork goes its own way")
        fork.snapshots.create("fork-1")
        assert fsck.check(fork).problems == []
    assert [s.name for s in ws.snapshots.list()] == ["early", "s", "late"]  # untouched
    assert ws.read("/after").startswith(b"AFTER")


def test_fork_holds_nothing_written_after_the_snapshot(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    """No row and no byte of what came after the snapshot: the undo snapshot the fork's
    restore takes must not keep its rows, and so the later files' inodes, in the fork."""
    _, out = forked(ws, tmp_path)
    with agentfs.open(out) as fork:
        born_later = fork.conn.execute(
            "SELECT count(*) FROM ws_entry WHERE born > (SELECT max(id) FROM ws_snapshot)"
        ).get
        assert born_later == 0
    assert b"AFTER-THE-SNAPSHOT" not in out.read_bytes()


def test_fork_refuses_an_existing_file_and_an_unknown_snapshot(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    ws.write("/f", b"x")
    ws.snapshots.create("s")
    existing = tmp_path / "taken.db"
    existing.write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        ws.fork("s", existing)
    assert existing.read_bytes() == b"mine"
    with pytest.raises(HistoryNotFoundError):
        ws.fork("nope", tmp_path / "other.db")
    assert not (tmp_path / "other.db").exists()


def test_export_agentfs_holds_only_the_live_tree(ws: agentfs.Workspace, tmp_path: Path) -> None:
    """Versions and snapshots stay behind: the plain database has exactly the live inodes
    and their bytes."""
    build(ws)
    ws.snapshots.create("s")
    mutate(ws)
    ws.write("/src/main.py", b"last")
    live = live_tree(ws)
    live_inos = {ino for (ino,) in ws.conn.execute("SELECT ino FROM fs_dentry UNION SELECT 1")}
    assert inode_count(ws) > len(live_inos)  # history holds more
    out = tmp_path / "plain.db"
    export_agentfs(ws, out)
    conn = apsw.Connection(str(out), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert {ino for (ino,) in conn.execute("SELECT ino FROM fs_inode")} == live_inos
        assert {ino for (ino,) in conn.execute("SELECT DISTINCT ino FROM fs_data")} <= live_inos
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_schema")}
        assert not any(t.startswith("ws_") for t in tables)
    finally:
        conn.close()
    with agentfs.open(out) as plain:
        assert live_tree(plain) == live
        assert plain.history("/src/main.py") == []
        assert plain.snapshots.list() == []


def test_file_and_byte_counts_follow_every_kind_of_change(ws: agentfs.Workspace) -> None:
    """A snapshot's counts are kept from the previous one's plus what changed (so they cost
    what changed): they must equal a count over what the snapshot holds, after writes,
    renames, hard links, removals, a restore, and a deleted previous snapshot."""

    def counted(name: str) -> tuple[int, int]:
        files = {e.ino: p for p, e in ws.snapshots.show(name) if stat.S_ISREG(e.mode)}
        return len(files), sum(len(ws.snapshots.read(name, p)) for p in files.values())

    steps = [
        lambda: ws.write("/a", b"12345", parents=True),
        lambda: ws.write("/d/b", b"12", parents=True),
        lambda: ws.link("/a", "/d/a-link"),
        lambda: ws.rename("/d/b", "/b"),
        lambda: ws.write("/a", b"longer content"),
        lambda: ws.remove("/a"),
        lambda: ws.remove("/d", recursive=True),
        lambda: ws.snapshots.restore("s2"),
        lambda: ws.snapshots.delete("s8"),  # the previous generation is gone: counted anew
        lambda: ws.append("/b", b"+"),
    ]
    for i, step in enumerate(steps, start=1):
        step()
        name = f"s{i}"
        info = ws.snapshots.create(name)
        assert (info.files, info.bytes) == counted(name), name
