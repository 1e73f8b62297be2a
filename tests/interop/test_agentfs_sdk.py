"""Interop with Turso's own agentfs-sdk (PyPI 0.6.4), both directions, through a real peer.

The peer runs in its own virtual environment (.venv-peer, see tests/peer/README.md) and is
driven by ``run_peer``: ``build`` makes a database with the SDK, ``dump`` reads one back
through the SDK, ``write`` lets the SDK write into a file we made.

1. A file the SDK built opens here as a workspace: same tree, same bytes, same kv, fsck clean,
   and our own writes work on it.
2. ``export_agentfs`` of a workspace reads back through the SDK exactly: tree, inode numbers,
   modes, bytes (multi-chunk too), symlink targets, kv and tool calls.
3. After the SDK writes into an exported file, SQLite's integrity check and our fsck run on
   it; whatever fsck finds, ``fsck.repair`` leaves it clean.
4. The SDK refuses a live workspace (the history guard trigger); should it write into one
   anyway, the next open re-adopts the file.
"""

from __future__ import annotations

import base64
import json
import random
import stat
from pathlib import Path

import apsw
import pytest

import agentfs
from agentfs import fsck
from agentfs.tools import Toolset
from agentfs.transfer import export_agentfs
from tests.conftest import run_peer

SDK_CHUNK = 4096  # agentfs-sdk's default chunk size
BINARY = bytes(range(256)) * 3 + b"\x00\x00tail\x00"
SDK_FILES = {
    "/readme.md": b"# built by agentfs-sdk\n",
    "/src/main.py": b"print('hello')\n",
    "/src/pkg/data.bin": BINARY,
    "/src/pkg/large.bin": random.Random(1).randbytes(SDK_CHUNK * 5 + 123),
    "/empty.txt": b"",
    "/\u65e5\u672c/\u00fcber.txt": "unicode \u2603\n".encode(),
}
SDK_DIRS = ["/src", "/src/pkg", "/emptydir", "/\u65e5\u672c"]
KV = {"session": {"id": 7, "tags": ["a", "b"]}, "count": 3, "name": "agent", "nothing": None}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def our_tree(ws: agentfs.Workspace) -> dict[str, dict]:
    """Path -> what the SDK's dump reports for it, read through our API."""
    nodes: dict[str, dict] = {}
    for dirpath, dirnames, filenames in ws.walk("/"):
        for path in [dirpath] + [f"{dirpath.rstrip('/')}/{n}" for n in dirnames + filenames]:
            if path in nodes:
                continue
            st = ws.lstat(path)
            node = {
                "type": {"file": "file", "dir": "dir", "symlink": "symlink"}[st.type],
                "mode": st.st_mode,
                "size": st.st_size,
                "nlink": st.st_nlink,
                "ino": st.st_ino,
                "uid": st.st_uid,
                "gid": st.st_gid,
            }
            if st.is_file():
                node["data_b64"] = b64(ws.read(path))
            elif st.is_symlink():
                node["target"] = ws.readlink(path)
            nodes[path] = node
    return nodes


def sdk_tree(dump: dict) -> dict[str, dict]:
    return {node.pop("path"): node for node in dump["nodes"]}


# --- 1. SDK -> agentfs ---------------------------------------------------------------------------


def test_a_database_built_by_the_sdk_opens_as_a_workspace(tmp_path: Path) -> None:
    db = tmp_path / "sdk.db"
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "dirs": SDK_DIRS,
                "files": [{"path": p, "data_b64": b64(d)} for p, d in SDK_FILES.items()],
                "kv": KV,
                "tool_calls": [
                    {
                        "name": "search",
                        "parameters": {"q": "x"},
                        "result": [1],
                        "started_at": 100,
                        "completed_at": 102,
                    },
                ],
            }
        )
    )
    built = run_peer("build", db, spec)
    assert built["skipped"] == []
    sdk = sdk_tree(run_peer("dump", db))

    with agentfs.open(db) as ws:  # adopts the file: our migrations run on it
        assert ws.chunks.size == SDK_CHUNK
        for path, data in SDK_FILES.items():
            assert ws.read(path) == data, path
        ours = our_tree(ws)
        assert sorted(ours) == sorted(sdk)
        for path, node in sdk.items():
            mine = dict(ours[path])
            if node["type"] == "dir":  # adoption sets POSIX nlink (2 + subdirectories)
                del node["nlink"], mine["nlink"]
            assert mine == node, path
        assert ws.listdir("/src") == ["main.py", "pkg"]
        assert {e.key: e.value for e in ws.kv.list()} == KV
        [call] = ws.tool_calls.list()
        assert (call.name, call.parameters, call.result) == ("search", {"q": "x"}, [1])
        report = fsck.check(ws)
        assert report.clean, report.problems

        ws.write("/src/pkg/large.bin", b"rewritten by agentfs")
        ws.write("/ours/new.txt", b"x" * (SDK_CHUNK * 2 + 5), parents=True)
        ws.rename("/readme.md", "/ours/readme.md")
        ws.remove("/src/main.py")
        assert ws.read("/ours/new.txt") == b"x" * (SDK_CHUNK * 2 + 5)
        assert ws.read("/src/pkg/large.bin") == b"rewritten by agentfs"
        ws.tool_calls.record("ours", {"n": 1}, result=2, started_at=20, completed_at=21)
        with Toolset(ws) as tools:  # staged and waiting rows, published into the SDK's table
            tools.call("write_file", {"path": "/ours/staged.txt", "content": "s"})
            tools.call("read_file", {"path": "/missing.txt"})
        published = "SELECT name, status FROM tool_calls WHERE name IN ('write_file', 'read_file')"
        assert dict(ws.conn.execute(published)) == {"write_file": "success", "read_file": "error"}
        report = fsck.check(ws)
        assert report.clean, report.problems
        plain = tmp_path / "plain.db"
        export_agentfs(ws, plain)
    # Adopted, the file holds history, and its guard trigger makes the SDK refuse it (an
    # engine that knows nothing of frozen inodes would rewrite them in place); the export
    # is a plain spec file the SDK reads, our tool call included.
    assert "triggers" in run_peer("dump", db, check=False)["error"]
    calls = {c["name"]: c for c in run_peer("dump", plain)["tool_calls"]}
    assert (calls["ours"]["status"], calls["ours"]["result"]) == ("success", 2)


# --- 2. agentfs -> SDK ---------------------------------------------------------------------------


def build_workspace(ws: agentfs.Workspace) -> None:
    """A tree that uses what the SDK itself cannot write: modes, symlinks, a hard link."""
    ws.mkdir("/project", 0o750)
    ws.mkdir("/project/private", 0o700)
    ws.write("/project/notes/todo.md", "- ship it \u2713\n", parents=True)
    ws.write("/project/bin/tool", b"#!/bin/sh\necho hi\n", parents=True, mode=0o755)
    ws.write("/project/private/key", b"secret", mode=0o600)
    ws.write("/project/blob.bin", BINARY)
    ws.write("/project/large.bin", random.Random(2).randbytes(ws.chunks.size * 3 + 1000))
    ws.write("/project/empty", b"")
    ws.write("/\u65e5\u672c\u8a9e/\u00fcber.txt", b"unicode", parents=True)
    ws.symlink("notes/todo.md", "/project/todo-link")
    ws.symlink("../../etc/passwd", "/project/escape-rel")
    ws.symlink("/etc/passwd", "/project/escape-abs")
    ws.symlink("missing/target", "/project/dangling")
    ws.link("/project/blob.bin", "/project/blob-hardlink.bin")
    ws.write("/project/deleted.txt", b"gone")
    ws.remove("/project/deleted.txt")
    for key, value in KV.items():
        ws.kv.set(key, value)
    ws.tool_calls.record("read_file", {"path": "/a"}, result="ok", started_at=10, completed_at=11)
    ws.tool_calls.record("grep", {"q": "x"}, error="boom", started_at=12, completed_at=15)


def test_export_agentfs_reads_back_exactly_through_the_sdk(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    build_workspace(ws)
    out = tmp_path / "plain.db"
    export_agentfs(ws, out)

    dump = run_peer("dump", out)

    assert dump["errors"] == []
    assert dump["chunk_size"] == ws.chunks.size
    assert sdk_tree(dump) == our_tree(ws)
    assert dump["kv"] == KV
    calls = [
        {
            k: c[k]
            for k in (
                "id",
                "name",
                "parameters",
                "result",
                "error",
                "started_at",
                "completed_at",
                "duration_ms",
            )
        }
        for c in dump["tool_calls"]
    ]
    assert calls == sorted(
        # the spec's fields: who made a call (thread, actor) is ours alone
        (
            {k: v for k, v in c.as_dict().items() if k not in ("thread", "actor")}
            for c in ws.tool_calls.list()
        ),
        key=lambda c: c["id"],
    )
    # read by the SDK's own reader (it indexes columns by position), with the right status
    assert dump["tool_calls_source"] == "sdk:ToolCalls.get_recent"
    assert [c["status"] for c in dump["tool_calls"]] == ["success", "error"]
    modes = {p: n["mode"] for p, n in sdk_tree(run_peer("dump", out)).items()}
    assert stat.S_IMODE(modes["/project/private/key"]) == 0o600
    assert stat.S_IMODE(modes["/project/private"]) == 0o700


# --- 3. the SDK writes into an exported file, then fsck ------------------------------------------


def test_fsck_after_the_sdk_writes_into_an_exported_file(
    ws: agentfs.Workspace, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    build_workspace(ws)
    out = tmp_path / "plain.db"
    export_agentfs(ws, out)
    new = random.Random(3).randbytes(70_000)

    run_peer("write", out, "/sdk-new.bin", b64(new))
    run_peer("write", out, "/project/notes/todo.md", b64(b"overwritten by the sdk\n"))

    conn = apsw.Connection(str(out))
    integrity = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    conn.close()
    record_property("integrity_after_sdk_write", integrity)
    with agentfs.open(out) as again:
        before = fsck.check(again)
        record_property("fsck_after_sdk_write", [p.message for p in before.problems])
        if not before.clean:
            after = fsck.repair(again)
            assert after.clean, after.problems
        assert fsck.check(again).clean
        assert again.read("/sdk-new.bin") == new
        assert again.read("/project/notes/todo.md") == b"overwritten by the sdk\n"
        assert again.read("/project/large.bin") == ws.read("/project/large.bin")
    # As measured when this test was written: the plain export keeps the spec's index, so
    # the SDK's writes leave SQLite's indexes consistent.
    assert integrity == ["ok"]


# --- 4. the SDK and a live workspace: refused; and re-adopted if it wrote anyway --------------


def test_the_sdk_refuses_a_live_workspace(ws_path: Path) -> None:
    """Turso's engine opens no file with triggers, and every workspace has the history guard
    trigger: the SDK cannot rewrite a frozen inode in place behind history's back."""
    with agentfs.open(ws_path) as ws:
        ws.write("/mine/a.txt", b"ours", parents=True)
        ws.snapshots.create("s")
    refused = run_peer("write", ws_path, "/mine/a.txt", b64(b"theirs"), check=False)
    assert "triggers" in refused["error"]
    with agentfs.open(ws_path) as ws:
        assert ws.read("/mine/a.txt") == b"ours"
        assert ws.snapshots.read("s", "/mine/a.txt") == b"ours"


def test_the_sdk_refuses_a_live_workspace_even_without_the_guard(ws_path: Path) -> None:
    """Dropping the guard trigger by hand does not let the SDK in: the search index's FTS5
    tables and CHECK constraints are beyond Turso's engine too. Nothing is changed, and the
    next agentfs open puts the guard back."""
    with agentfs.open(ws_path) as ws:
        ws.write("/mine/a.txt", b"ours", parents=True)
        ws.conn.execute("DROP TRIGGER ws_history_guard")
    refused = run_peer("write", ws_path, "/sdk/new.bin", b64(b"theirs"), check=False)
    assert "error" in refused
    with agentfs.open(ws_path) as ws:
        assert fsck.check(ws).clean, fsck.check(ws).problems
        assert ws.listdir("/") == ["mine"]
        assert ws.read("/mine/a.txt") == b"ours"
        guard = "SELECT count(*) FROM sqlite_schema WHERE name = 'ws_history_guard'"
        assert ws.conn.execute(guard).get == 1


def test_what_an_sdk_open_leaves_behind_is_readopted(ws_path: Path) -> None:
    """What the SDK does whenever it opens a file, done by hand (it can no longer open a live
    workspace): recreate the spec's dentry index and count a directory's nlink as its
    entries. The next agentfs open notices the index, recounts and drops it."""
    with agentfs.open(ws_path) as ws:
        ws.write("/sdk/deep/new.bin", b"x", parents=True)
        ws.conn.execute("CREATE INDEX idx_fs_dentry_parent ON fs_dentry(parent_ino)")
        ws.conn.execute("UPDATE fs_inode SET nlink = 1 WHERE (mode & 61440) = 16384")
    with agentfs.open(ws_path) as ws:
        assert fsck.check(ws).clean, fsck.check(ws).problems
        assert (ws.stat("/").st_nlink, ws.stat("/sdk").st_nlink) == (3, 3)
        index = "SELECT count(*) FROM sqlite_schema WHERE name = 'idx_fs_dentry_parent'"
        assert ws.conn.execute(index).get == 0
