"""Sync against a real Turso sync server: two (or three) workspace files in different
directories play different machines (docs/sync.md)."""

from __future__ import annotations

import json
import stat as statmod
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import agentfs
from agentfs import fsck, sync
from agentfs.sync import SyncError
from agentfs.tools import Toolset
from tests.history.test_imported_snapshots import snapshot_picture
from tests.sync.conftest import SyncServer


def machine(tmp_path: Path, name: str) -> Path:
    """A workspace path in a directory of its own, as on another machine."""
    home = tmp_path / name
    home.mkdir(exist_ok=True)
    return home / "work.db"


def picture(path: Path) -> dict[str, Any]:
    """Everything that travels, comparable: each path's type, mode, mtime and bytes or target,
    and the kv store."""
    out: dict[str, Any] = {}
    with agentfs.Workspace(path, create=False) as ws:
        for top, dirs, files in ws.walk("/"):
            for name in dirs + files:
                p = f"{top.rstrip('/')}/{name}"
                st = ws.lstat(p)
                if statmod.S_ISDIR(st.st_mode):
                    out[p] = ("dir", st.st_mode, st.st_mtime_ns)
                elif statmod.S_ISLNK(st.st_mode):
                    out[p] = ("link", ws.readlink(p), st.st_mtime_ns)
                else:
                    out[p] = ("file", st.st_mode, st.st_mtime_ns, ws.read(p, track=False))
        out["kv"] = {e.key: (e.value, e.updated_at) for e in ws.kv.list()}
    return out


def snapshots_of(path: Path) -> list[tuple[Any, ...]]:
    """Each snapshot's name, thread, label, meta, time and tree (as the history tests see
    one: type, mode, mtime and bytes or target)."""
    with agentfs.Workspace(path, create=False) as ws:
        return [
            (
                s.name,
                s.thread,
                s.label,
                s.meta,
                s.created_ns,
                s.files,
                s.bytes,
                snapshot_picture(ws, s.name),
            )
            for s in ws.snapshots.list()
        ]


def clean(path: Path) -> None:
    with agentfs.Workspace(path, create=False) as ws:
        report = fsck.check(ws)
        assert report.clean, report.problems


def build(path: Path, files: int) -> None:
    with agentfs.Workspace(path) as ws, ws.transaction():
        for i in range(files):
            deep = "/".join(f"d{(i >> shift) % 4}" for shift in (0, 2, 4))
            ws.write(
                f"/src/{deep}/mod_{i}.py",
                f"def f_{i}():\n    return {i}  # marker{i}\n",
                parents=True,
            )
        ws.chmod("/src/d0/d0/d0/mod_0.py", 0o755)
        ws.mkdir("/empty/inner", parents=True)
        ws.symlink("../src/d0/d0/d0/mod_0.py", "/src/link.py")
        ws.write("/bin.dat", bytes(range(256)) * 4096)  # 1 MiB: two chunks once compressed apart
        ws.kv.set("model", {"name": "small", "layers": 6})
        ws.kv.set("turn", 3)
    with agentfs.Workspace(path, create=False) as ws:  # three snapshots, the tree moving on
        ws.snapshots.create("first", thread="t1", label="the start", meta={"turn": 1})
        ws.write("/src/d0/d0/d0/mod_0.py", "changed after the first snapshot\n")
        ws.remove("/src/link.py")
        ws.snapshots.create("second", thread="t1")
        ws.write("/later.txt", "after the second snapshot\n")
        ws.snapshots.create("third", thread="t2", label="the end")


def test_a_clone_holds_everything_that_travels(tmp_path: Path, server: SyncServer) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    build(a, 1000)
    sync.setup(a, server.url)
    pushed = sync.push(a, message="first")
    assert pushed["commit"] and pushed["committed"] > 1000
    cloned = sync.clone(server.url, b)
    assert cloned["merged"] == [pushed["commit"]]
    assert picture(b) == picture(a)
    assert snapshots_of(b) == snapshots_of(a) and len(snapshots_of(a)) == 3
    clean(b)
    with agentfs.Workspace(b, create=False) as ws:  # a travelled snapshot restores
        ws.snapshots.restore("first")
        assert ws.read("/src/d0/d0/d0/mod_0.py") == b"def f_0():\n    return 0  # marker0\n"
        assert ws.readlink("/src/link.py") == "../src/d0/d0/d0/mod_0.py"
        assert not ws.exists("/later.txt")
        ws.snapshots.restore("third")
    assert picture(b) == picture(a)
    with agentfs.Workspace(b, create=False) as ws:  # indexed like any write
        assert ws.grep("marker417", output="files").files == ["/src/d1/d0/d2/mod_417.py"]
        assert ws.search("marker417").hits[0].path == "/src/d1/d0/d2/mod_417.py"
        assert ws.history("/src/d1/d0/d2/mod_417.py")[-1].actor == "sync"
    for path in (a, b):
        state = sync.status(path)
        assert (state["changed"], state["unpushed"], state["behind"]) == (0, [], 0)
        assert state["conflicts"] == []


def test_edits_of_different_files_merge_in_either_order(tmp_path: Path, server: SyncServer) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    build(a, 20)
    sync.setup(a, server.url)
    sync.push(a)
    sync.clone(server.url, b)
    with agentfs.Workspace(a, create=False) as ws:
        ws.write("/src/d0/d0/d0/mod_0.py", "a changed this\n")
        ws.remove("/src/d1/d0/d0/mod_1.py")
        ws.kv.set("from_a", 1)
    with agentfs.Workspace(b, create=False) as ws:
        ws.write("/src/d2/d0/d0/mod_2.py", "b changed this\n")
        ws.write("/new/from_b.txt", "hello\n", parents=True)
        ws.kv.delete("turn")
    sync.push(a)
    sync.push(b)  # pulls a's commit first, then pushes a commit on top of it
    sync.pull(a)
    assert picture(a) == picture(b)
    got = picture(a)
    assert got["/src/d0/d0/d0/mod_0.py"][3] == b"a changed this\n"
    assert got["/src/d2/d0/d0/mod_2.py"][3] == b"b changed this\n"
    assert "/src/d1/d0/d0/mod_1.py" not in got and "/new/from_b.txt" in got
    assert {k: v for k, (v, _) in got["kv"].items()} == {
        "model": {"name": "small", "layers": 6},
        "from_a": 1,
    }
    assert sync.status(a)["conflicts"] == [] and sync.status(b)["conflicts"] == []
    clean(a)
    clean(b)


def two_machines(tmp_path: Path, server: SyncServer, path: str, text: str) -> tuple[Path, Path]:
    """a writes one file and pushes it, b clones."""
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    with agentfs.Workspace(a) as ws:
        ws.write(path, text)
    sync.setup(a, server.url)
    sync.push(a)
    sync.clone(server.url, b)
    return a, b


def both_edit(tmp_path: Path, server: SyncServer) -> tuple[Path, Path]:
    """a and b share a tree, then each changes /doc.txt (b later)."""
    a, b = two_machines(tmp_path, server, "/doc.txt", "base\n")
    for path, text, when in ((a, "from a\n", 2_000_000_000), (b, "from b\n", 2_000_000_001)):
        with agentfs.Workspace(path, create=False) as ws:
            ws.write("/doc.txt", text)
            ws.utime("/doc.txt", (when * 10**9, when * 10**9))
    return a, b


@pytest.mark.parametrize("first", ["a", "b"])
def test_the_later_edit_of_one_file_wins_and_the_other_is_kept(
    tmp_path: Path, server: SyncServer, first: str
) -> None:
    a, b = both_edit(tmp_path, server)
    order = (a, b) if first == "a" else (b, a)
    sync.push(order[0])
    sync.push(order[1])
    sync.pull(order[0])
    assert picture(a) == picture(b)
    for path in (a, b):
        with agentfs.Workspace(path, create=False) as ws:
            assert ws.read("/doc.txt") == b"from b\n"
            kept = [ws.read_version("/doc.txt", v.n) for v in ws.history("/doc.txt") if v.size]
            assert b"from a\n" in kept and b"base\n" in kept
    listed = sync.status(order[1])["conflicts"]
    assert [c["path"] for c in listed] == ["/doc.txt"]
    assert listed[0]["kept"]["hash"] != listed[0]["lost"]["hash"]
    assert sync.resolve(order[1]) == 1
    assert sync.status(order[1])["conflicts"] == []


@pytest.mark.parametrize("deleter", ["a", "b"])
def test_an_edit_beats_a_delete(tmp_path: Path, server: SyncServer, deleter: str) -> None:
    a, b = both_edit(tmp_path, server)
    gone, edited = (a, b) if deleter == "a" else (b, a)
    with agentfs.Workspace(gone, create=False) as ws:
        ws.remove("/doc.txt")
    sync.push(gone)
    sync.push(edited)
    sync.pull(gone)
    assert picture(a) == picture(b)
    with agentfs.Workspace(a, create=False) as ws:
        assert ws.exists("/doc.txt")


def three_machines(tmp_path: Path, server: SyncServer) -> list[Path]:
    """m0 builds a small tree and pushes it; m1 and m2 clone it."""
    first = machine(tmp_path, "m0")
    build(first, 10)
    sync.setup(first, server.url)
    sync.push(first)
    paths = [first] + [machine(tmp_path, f"m{i}") for i in (1, 2)]
    for path in paths[1:]:
        sync.clone(server.url, path)
    return paths


def test_three_machines_converge(tmp_path: Path, server: SyncServer) -> None:
    paths = three_machines(tmp_path, server)
    for i, path in enumerate(paths):  # everyone changes something, nobody pulls first
        with agentfs.Workspace(path, create=False) as ws:
            ws.write(f"/from_{i}.txt", f"{i}\n")
            ws.write("/shared.txt", f"written by {i}\n")
            when = (1_800_000_000 + i) * 10**9
            ws.utime("/shared.txt", (when, when))
    for path in paths:
        sync.push(path)
    for path in paths:
        sync.pull(path)
    pictures = [picture(p) for p in paths]
    assert pictures[0] == pictures[1] == pictures[2]
    assert pictures[0]["/shared.txt"][3] == b"written by 2\n"
    assert {f"/from_{i}.txt" for i in range(3)} <= pictures[0].keys()


def test_a_wrong_url_is_one_clear_error_and_changes_nothing(
    tmp_path: Path, server: SyncServer
) -> None:
    a = machine(tmp_path, "a")
    build(a, 3)
    before = picture(a)
    closed = SyncServer(tmp_path / "nothing")  # a port nobody listens on
    with pytest.raises(SyncError, match="connection refused"):
        sync.setup(a, closed.url)
    with pytest.raises(SyncError, match="no remote"):
        sync.push(a)
    assert not sync.replica_path(a).parent.exists()
    assert picture(a) == before
    with pytest.raises(SyncError, match="connection refused"):
        sync.clone(closed.url, machine(tmp_path, "b"))
    assert list((tmp_path / "b").iterdir()) == []


def test_a_file_at_the_replica_path_is_refused_and_kept(tmp_path: Path, server: SyncServer) -> None:
    a = machine(tmp_path, "a")
    build(a, 3)
    replica = sync.replica_path(a)
    replica.parent.mkdir()
    replica.write_bytes(b"precious")
    with pytest.raises(SyncError, match="not a sync replica"):
        sync.setup(a, server.url)
    assert replica.read_bytes() == b"precious"


def test_a_second_remote_is_refused(tmp_path: Path, server: SyncServer) -> None:
    a = machine(tmp_path, "a")
    build(a, 1)
    sync.setup(a, server.url)
    other = SyncServer(tmp_path / "other")
    other.start()
    try:
        with pytest.raises(SyncError, match="already syncs with"):
            sync.setup(a, other.url)
    finally:
        other.kill()


def test_a_server_holding_another_workspace_is_joined_only_with_merge(
    tmp_path: Path, server: SyncServer
) -> None:
    a, b, empty = machine(tmp_path, "a"), machine(tmp_path, "b"), machine(tmp_path, "empty")
    build(a, 3)
    sync.setup(a, server.url)
    sync.push(a)
    with agentfs.Workspace(b) as ws:
        ws.write("/mine.txt", "b's own file\n")
    before = picture(b)
    with pytest.raises(SyncError, match="already holds another workspace") as refused:
        sync.setup(b, server.url)
    assert "--merge" in str(refused.value) and "clone" in str(refused.value)
    assert picture(b) == before and not sync.replica_path(b).parent.exists()
    assert sync.remote(b) is None
    agentfs.Workspace(empty).close()
    sync.setup(empty, server.url)  # nothing of its own to mix in: a clone in two steps
    sync.setup(b, server.url, merge=True)
    sync.pull(b)
    with agentfs.Workspace(b, create=False) as ws:
        assert ws.exists("/mine.txt") and ws.exists("/later.txt")


def test_status_offline_and_ahead(tmp_path: Path, server: SyncServer) -> None:
    a = machine(tmp_path, "a")
    build(a, 2)
    sync.setup(a, server.url)
    assert sync.status(a, offline=True)["changed"] > 0
    sync.push(a)
    with agentfs.Workspace(a, create=False) as ws:
        ws.write("/more.txt", "x")
    state = sync.status(a, offline=True)
    assert (state["changed"], state["unpushed"], state["behind"]) == (1, [], None)
    assert json.loads(json.dumps(state)) == state
    pulled = sync.pull(a)  # a pull commits local changes too, without sending them
    assert pulled["commit"] and pulled["committed"] == 1
    state = sync.status(a)
    assert (state["changed"], state["unpushed"], state["behind"]) == (0, [pulled["commit"]], 0)
    sync.push(a)
    assert sync.status(a)["unpushed"] == []


def calls_of(path: Path) -> list[tuple[Any, ...]]:
    with agentfs.Workspace(path, create=False) as ws:
        return sorted(row[1:] for row in ws.tool_calls.rows_after(0))


def test_the_tool_call_log_travels_once(tmp_path: Path, server: SyncServer) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    with agentfs.Workspace(a) as ws, Toolset(ws, thread="t") as tools:
        tools.call("write_file", {"path": "/x.txt", "content": "x"})
        tools.call("read_file", {"path": "/x.txt"})
        tools.call("read_file", {"path": "/missing"})  # an error is logged too
    sync.setup(a, server.url)
    sync.push(a)
    sync.clone(server.url, b)
    assert len(calls_of(b)) == 3 and calls_of(b) == calls_of(a)
    with agentfs.Workspace(b, create=False) as ws, Toolset(ws, thread="t") as tools:
        tools.call("ls", {"path": "/"})
    sync.push(b)
    sync.pull(a)
    for _ in range(2):  # nothing is sent back or stored twice
        sync.push(a)
        sync.pull(b)
    assert len(calls_of(a)) == 4 and calls_of(a) == calls_of(b)


def test_who_made_each_call_travels_with_it(tmp_path: Path, server: SyncServer) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    with agentfs.Workspace(a) as ws, Toolset(ws, thread="coding", actor="coder") as tools:
        tools.call("write_file", {"path": "/x.txt", "content": "x"})
        tools.call("read_file", {"path": "/x.txt"})
    sync.setup(a, server.url)
    sync.push(a)
    sync.clone(server.url, b)
    with agentfs.Workspace(b, create=False) as ws, Toolset(ws, thread="review") as tools:
        assert {(c.name, c.thread, c.actor) for c in ws.tool_calls.list()} == {
            ("write_file", "coding", "coder"),
            ("read_file", "coding", "coder"),
        }
        tools.call("ls", {"path": "/"})
    sync.push(b)
    for _ in range(2):  # once each, whatever the rounds
        sync.pull(a)
        sync.push(a)
        sync.pull(b)
    with agentfs.Workspace(a, create=False) as ws:
        who = sorted((c.name, c.thread) for c in ws.tool_calls.list())
        assert who == [("ls", "review"), ("read_file", "coding"), ("write_file", "coding")]
        assert ws.conn.execute("SELECT count(*) FROM ws_tool_call_who").get == 3


def test_snapshots_taken_later_travel_and_a_taken_name_gets_the_origin(
    tmp_path: Path, server: SyncServer
) -> None:
    a, b = two_machines(tmp_path, server, "/doc.txt", "v1\n")
    with agentfs.Workspace(a, create=False) as ws:
        ws.write("/doc.txt", "v2\n")
        ws.snapshots.create("turn-2", thread="chat")
    with agentfs.Workspace(b, create=False) as ws:
        ws.snapshots.create("turn-2", thread="other chat")  # the same name, another state
    sync.push(a)
    sync.pull(b)
    origin = sync.status(a, offline=True)["origin"]
    with agentfs.Workspace(b, create=False) as ws:
        names = {s.name: s.thread for s in ws.snapshots.list()}
        assert names == {"turn-2": "other chat", f"turn-2@{origin}": "chat"}
        assert ws.snapshots.read(f"turn-2@{origin}", "/doc.txt") == b"v2\n"
    sync.push(b)
    sync.pull(a)  # b's own snapshot reaches a; nothing comes back twice
    sync.pull(a)
    with agentfs.Workspace(a, create=False) as ws:
        assert sorted(s.name for s in ws.snapshots.list()) == sorted(
            ["turn-2", f"turn-2@{sync.status(b, offline=True)['origin']}"]
        )
    clean(a)
    clean(b)


def test_three_machines_pushing_at_once_converge(tmp_path: Path, server: SyncServer) -> None:
    paths = three_machines(tmp_path, server)
    for i, path in enumerate(paths):
        with agentfs.Workspace(path, create=False) as ws:
            ws.write(f"/own_{i}.txt", f"{i}\n")
            ws.write("/src/d0/d0/d0/mod_0.py", f"edited by {i}\n")
            when = (1_900_000_000 + i) * 10**9
            ws.utime("/src/d0/d0/d0/mod_0.py", (when, when))
    with ThreadPoolExecutor(3) as pool:  # three workers at the server at once
        list(pool.map(sync.push, paths))
    for path in paths:
        sync.pull(path)
    pictures = [picture(p) for p in paths]
    assert pictures[0] == pictures[1] == pictures[2]
    assert pictures[0]["/src/d0/d0/d0/mod_0.py"][3] == b"edited by 2\n"
    for path in paths:
        with agentfs.Workspace(path, create=False) as ws:
            kept = {
                ws.read_version("/src/d0/d0/d0/mod_0.py", v.n)
                for v in ws.history("/src/d0/d0/d0/mod_0.py")
                if v.size
            }
            assert {b"edited by 0\n", b"edited by 1\n", b"edited by 2\n"} <= kept, (
                path,
                kept,
                [(v.n, v.actor, v.size) for v in ws.history("/src/d0/d0/d0/mod_0.py")],
                sync.status(path, offline=True)["conflicts"],
            )
        clean(path)
