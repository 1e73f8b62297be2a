"""``exchange``: two names swap atomically (``renameat2`` with ``RENAME_EXCHANGE``). The model
test (test_model.py) runs it against a real directory; these pin the rules one at a time:
bad inputs change nothing, inode numbers and link counts, history, snapshots, search."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

import agentfs
from agentfs import LayeredWorkspace
from tests.table_rows import all_rows


@pytest.fixture
def tree(ws: agentfs.Workspace) -> agentfs.Workspace:
    ws.write("/x/f", b"file f", parents=True)
    ws.write("/y/d/inner", b"inside d", parents=True)
    ws.write("/y/g", b"file g")
    return ws


def test_a_file_and_a_directory_in_different_directories_swap(tree: agentfs.Workspace) -> None:
    f, d = tree.stat("/x/f"), tree.stat("/y/d")
    x_links, y_links = tree.stat("/x").st_nlink, tree.stat("/y").st_nlink
    tree.exchange("/x/f", "/y/d")
    assert tree.stat("/x/f").st_ino == d.st_ino and tree.stat("/x/f").is_dir()
    assert tree.stat("/y/d").st_ino == f.st_ino and tree.read("/y/d") == b"file f"
    assert tree.read("/x/f/inner") == b"inside d"
    # the directory changed parent: its '..' link moved from /y to /x
    assert (tree.stat("/x").st_nlink, tree.stat("/y").st_nlink) == (x_links + 1, y_links - 1)
    assert tree.stat("/x/f").st_ctime_ns > d.st_ctime_ns


def test_exchanging_twice_restores_the_tree(tree: agentfs.Workspace, ws_path: Path) -> None:
    tree.exchange("/x", "/y/g")
    tree.exchange("/y/g", "/x")
    assert tree.read("/x/f") == b"file f" and tree.read("/y/g") == b"file g"


@pytest.mark.parametrize(
    ("a", "b", "code"),
    [
        ("/x/f", "/x/missing", errno.ENOENT),
        ("/missing", "/x/f", errno.ENOENT),
        ("/nowhere/f", "/x/f", errno.ENOENT),
        ("/x/f/sub", "/y/g", errno.ENOTDIR),
        ("/y", "/y/d", errno.EINVAL),  # a directory into its own subtree
        ("/y/d/inner", "/y", errno.EINVAL),  # the other way round
        ("/y/d/..", "/y/d/inner", errno.EINVAL),  # '..' is lexical: /y/d/.. is /y
        ("/x/..", "/y", errno.EBUSY),  # the root
        ("/", "/x", errno.EBUSY),
        ("/x/f/", "/y/g", errno.ENOTDIR),  # a trailing slash on a file
    ],
)
def test_bad_inputs_fail_with_their_errno_and_change_nothing(
    tree: agentfs.Workspace, ws_path: Path, a: str, b: str, code: int
) -> None:
    before = all_rows(ws_path)
    with pytest.raises(OSError) as caught:
        tree.exchange(a, b)
    assert caught.value.errno == code
    assert all_rows(ws_path) == before


def test_the_same_name_twice_or_two_hard_links_change_nothing(
    tree: agentfs.Workspace, ws_path: Path
) -> None:
    tree.link("/x/f", "/x/h")
    before = all_rows(ws_path)
    tree.exchange("/x/f", "/x/f")
    tree.exchange("/x/f", "/x/h")
    tree.exchange("/y/../x/f", "/x/./h")
    assert all_rows(ws_path) == before


def test_names_with_dot_dot_are_resolved_first(tree: agentfs.Workspace) -> None:
    tree.exchange("/y/d/../g", "/x/../x/f")
    assert tree.read("/y/g") == b"file f" and tree.read("/x/f") == b"file g"


def test_a_failure_inside_a_transaction_leaves_the_earlier_changes(
    tree: agentfs.Workspace,
) -> None:
    """A failed exchange is undone alone (a savepoint), like every core operation."""
    with tree.transaction():
        tree.write("/x/new", b"kept")
        with pytest.raises(FileNotFoundError):
            tree.exchange("/x/f", "/x/none")
    assert tree.read("/x/new") == b"kept" and tree.read("/x/f") == b"file f"


def test_history_records_both_moves_then_both_arrivals(tree: agentfs.Workspace) -> None:
    f, g = tree.stat("/x/f").st_ino, tree.stat("/y/g").st_ino
    tree.exchange("/x/f", "/y/g")
    for path, other, ino, data in (("/x/f", "/y/g", g, b"file g"), ("/y/g", "/x/f", f, b"file f")):
        events = tree.history(path)
        assert [(e.op, e.other) for e in events] == [
            ("write", None),
            ("move", other),  # what was here went there ...
            ("rename", other),  # ... and what was there came here
        ]
        assert events[-1].ino == ino
        assert tree.read_version(path, 3) == data
        assert tree.read_version(path, 1) != data


def test_history_of_two_directories_with_the_same_names_inside(ws: agentfs.Workspace) -> None:
    """/p/n and /q/n both leave and both arrive: each ends with the file that came in."""
    ws.write("/p/n", b"from p", parents=True)
    ws.write("/q/n", b"from q", parents=True)
    ws.exchange("/p", "/q")
    assert ws.read("/p/n") == b"from q" and ws.read("/q/n") == b"from p"
    assert ws.read_version("/p/n", ws.version("/p/n").n) == b"from q"
    assert ws.read_version("/q/n", ws.version("/q/n").n) == b"from p"
    assert [e.op for e in ws.history("/p/n")] == ["write", "move", "rename"]


def test_a_snapshot_sees_both_directories_change(tree: agentfs.Workspace) -> None:
    """Both parents are marked dirty: the next snapshot records both new entries."""
    tree.snapshots.create("before")
    tree.exchange("/x/f", "/y/d")
    diff = tree.snapshots.diff("before")
    assert diff.added == ["/x/f/inner"] and diff.removed == ["/y/d/inner"]
    assert sorted(diff.modified) == ["/x/f", "/y/d"]
    tree.snapshots.create("after")
    assert [p for p, _ in tree.snapshots.show("after", "/x")] == ["/x", "/x/f", "/x/f/inner"]
    tree.snapshots.restore("before")
    assert tree.read("/x/f") == b"file f" and tree.read("/y/d/inner") == b"inside d"


def test_search_finds_the_swapped_files_under_their_new_paths(ws: agentfs.Workspace) -> None:
    ws.write("/docs/alpha.md", "alpha words about kangaroos\n", parents=True)
    ws.write("/src/beta.md", "beta words about platypuses\n", parents=True)
    assert [h.path for h in ws.search("kangaroos", mode="bm25").hits] == ["/docs/alpha.md"]
    ws.exchange("/docs/alpha.md", "/src/beta.md")
    assert [h.path for h in ws.search("kangaroos", mode="bm25").hits] == ["/src/beta.md"]
    assert [h.path for h in ws.search("platypuses", mode="bm25").hits] == ["/docs/alpha.md"]
    assert ws.grep("platypuses").files == ["/docs/alpha.md"]
    assert [m.path for m in ws.glob("**/beta.md")] == ["/src/beta.md"]


def test_a_layered_workspace_exchanges_only_first_layer_names(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "top.db") as top, agentfs.open(tmp_path / "low.db") as low:
        top.write("/a", b"top a")
        top.write("/b", b"top b")
        low.write("/c", b"low c")
        union = LayeredWorkspace([top, low])
        union.exchange("/a", "/b")
        assert union.read("/a") == b"top b"
        with pytest.raises(OSError) as caught:
            union.exchange("/a", "/c")
        assert caught.value.errno == errno.EROFS
        with pytest.raises(FileNotFoundError):
            union.exchange("/a", "/none")
