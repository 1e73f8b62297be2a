"""Host trees in and out (import_tree, export_tree) and plain AgentFS export (export_agentfs).

The round trip builds a real host tree with every awkward case (NUL bytes, an empty file, a
multi-chunk file, unicode names, symlinks that point inside and outside, private modes,
nanosecond mtimes, a fifo), imports it, exports it to another directory and compares the two
trees entry by entry. The export safety tests plant host symlinks in the target directory and
check that nothing outside it changes.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

import agentfs
from agentfs import fsck, transfer
from agentfs.transfer import ExportConflictError, export_agentfs, export_tree, import_tree

BIG = bytes(range(256)) * 1000  # 256,000 bytes: four 64 KiB chunks, the last partial
MTIME_NS = 1_700_000_000_123_456_789
TREE = {
    "docs/readme.md": b"# hello\n",
    "docs/deep/er/notes.txt": "caf\u00e9 \u2014 \u65e5\u672c\n".encode(),
    "bin/blob.bin": b"\x00\x01\x00\xff\x00" * 100,
    "empty": b"",
    "big.dat": BIG,
    "\u65e5\u672c\u8a9e/\u00fcber \u2603.txt": b"unicode names\n",
    "secret.key": b"private\n",
}
LINKS = {
    "docs/to-readme": "readme.md",
    "docs/deep/up": "../../bin/blob.bin",
    "escape-rel": "../../etc/passwd",
    "escape-abs": "/etc/passwd",
}


def make_host_tree(root: Path) -> None:
    """TREE and LINKS under ``root``, plus a fifo, private modes and distinct ns mtimes."""
    for i, (rel, data) in enumerate(sorted(TREE.items())):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, ns=(MTIME_NS, MTIME_NS + i * 1_000_001))
    for rel, target in LINKS.items():
        os.symlink(target, root / rel)
        os.utime(root / rel, ns=(MTIME_NS, MTIME_NS - 7), follow_symlinks=False)
    os.mkfifo(root / "pipe")
    (root / "secret.key").chmod(0o600)
    (root / "bin" / "blob.bin").chmod(0o755)
    (root / "private").mkdir(mode=0o700)
    (root / "private").chmod(0o700)
    for i, dirpath in enumerate(sorted(p for p in root.rglob("*") if p.is_dir())):
        os.utime(dirpath, ns=(MTIME_NS, MTIME_NS + 999 + i))


def host_snapshot(root: Path) -> dict[str, tuple]:
    """Everything a transfer promises to keep, per relative path; fifos are left out."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path), st.st_mtime_ns)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), st.st_mtime_ns)
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_mtime_ns, path.read_bytes())
    return out


@pytest.fixture
def host_tree(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    make_host_tree(root)
    return root


def test_round_trip_keeps_bytes_modes_mtimes_and_symlinks(
    ws: agentfs.Workspace, host_tree: Path, tmp_path: Path
) -> None:
    imported = import_tree(ws, host_tree, "/project")
    assert imported.skipped == ["pipe: fifo (special files are not imported)"]
    assert (imported.files, imported.symlinks) == (len(TREE), len(LINKS))
    assert imported.bytes == sum(map(len, TREE.values()))

    assert ws.read("/project/big.dat") == BIG
    assert ws.readlink("/project/escape-abs") == "/etc/passwd"
    assert ws.stat("/project/secret.key").st_mode & 0o7777 == 0o600
    assert ws.stat("/project/private").st_mode & 0o7777 == 0o700

    out = tmp_path / "out"
    exported = export_tree(ws, "/project", out)
    assert exported.skipped == []
    assert (exported.files, exported.symlinks, exported.bytes) == (
        imported.files,
        imported.symlinks,
        imported.bytes,
    )
    assert host_snapshot(out) == host_snapshot(host_tree)
    assert not (out / "pipe").exists()
    assert fsck.check(ws).clean


def test_import_reports_progress_up_to_the_total(ws: agentfs.Workspace, host_tree: Path) -> None:
    calls: list[tuple[int, int]] = []
    import_tree(ws, host_tree, progress=lambda done, total: calls.append((done, total)))
    total = calls[0][1]
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_import_stores_symlinks_without_following_them(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "loot.txt").write_text("must not be imported")
    root = tmp_path / "src"
    root.mkdir()
    os.symlink(outside, root / "dirlink")
    os.symlink("../outside/loot.txt", root / "filelink")

    stats = import_tree(ws, root)

    assert (stats.files, stats.symlinks) == (0, 2)
    assert ws.lstat("/dirlink").is_symlink()
    assert ws.readlink("/dirlink") == str(outside)
    assert ws.readlink("/filelink") == "../outside/loot.txt"
    assert "loot.txt" not in {name for _, _, files in ws.walk("/") for name in files}


def test_import_skips_names_that_are_not_utf8(ws: agentfs.Workspace, tmp_path: Path) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "ok.txt").write_text("fine")
    with open(os.path.join(os.fsencode(root), b"bad-\xff.txt"), "wb") as f:
        f.write(b"latin-1 name")

    stats = import_tree(ws, root)

    assert ws.listdir("/") == ["ok.txt"]
    assert len(stats.skipped) == 1 and stats.skipped[0].startswith("bad-\\xff.txt: ")


def test_import_skips_a_file_that_fails_mid_read_and_leaves_no_trace(
    ws: agentfs.Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "good.txt").write_text("fine")
    (root / "flaky.bin").write_bytes(BIG)
    real = transfer._read_blocks

    def failing(path: str, block: int) -> Iterator[bytes]:
        blocks = real(path, block)
        yield next(blocks)
        if path.endswith("flaky.bin"):  # the first block is already in the workspace
            raise OSError(errno.EIO, "Input/output error")
        yield from blocks

    monkeypatch.setattr(transfer, "BLOCK_BYTES", 65536)
    monkeypatch.setattr(transfer, "_read_blocks", failing)

    stats = import_tree(ws, root)

    assert stats.skipped == ["flaky.bin: Input/output error"]
    assert ws.listdir("/") == ["good.txt"]
    assert fsck.check(ws).clean


def test_import_keeps_hard_links(ws: agentfs.Workspace, tmp_path: Path) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "a").write_bytes(b"shared")
    os.link(root / "a", root / "b")
    import_tree(ws, root, "/t")
    assert ws.stat("/t/a").st_ino == ws.stat("/t/b").st_ino
    assert ws.stat("/t/a").st_nlink == 2


def test_import_is_one_transaction_a_cancel_leaves_nothing(
    ws: agentfs.Workspace, host_tree: Path
) -> None:
    def cancel(done: int, total: int) -> None:
        if done > 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_tree(ws, host_tree, "/project", progress=cancel)
    assert ws.listdir("/") == []
    # nothing of the rolled-back import lingers in the directory cache either: the inode
    # numbers it used are issued again, here to a file, which must not pass for /project/docs
    ws.write("/first.txt", b"takes the next inode numbers")
    ws.write("/second.txt", b"and the one after")
    ws.write("/project/docs/new.txt", b"needs real directories", parents=True)
    assert ws.listdir("/project") == ["docs"]
    assert fsck.check(ws).clean
    ws.remove("/project", recursive=True)
    import_tree(ws, host_tree, "/project")
    assert ws.read("/project/docs/readme.md") == TREE["docs/readme.md"]
    assert fsck.check(ws).clean


def test_import_merges_into_an_existing_directory(ws: agentfs.Workspace, host_tree: Path) -> None:
    ws.write("/project/secret.key", b"old content", parents=True)
    ws.write("/project/keep.txt", b"untouched")
    ws.write("/project/docs", b"a file where the host has a directory")

    stats = import_tree(ws, host_tree, "/project")

    assert ws.read("/project/secret.key") == TREE["secret.key"]
    assert ws.stat("/project/secret.key").st_mode & 0o777 == 0o600
    assert ws.read("/project/keep.txt") == b"untouched"
    assert ws.read("/project/docs") == b"a file where the host has a directory"
    assert "docs: exists in the workspace as a file" in stats.skipped
    assert not any(line.startswith("docs/") for line in stats.skipped)  # reported once
    assert fsck.check(ws).clean


def test_transfers_leave_the_workspace_database_alone(ws: agentfs.Workspace, ws_path: Path) -> None:
    ws.write("/hello.txt", b"hi")
    imported = import_tree(ws, ws_path.parent, "/copy")
    assert f"{ws_path.name}: the workspace's own database file" in imported.skipped
    assert f"{ws_path.name}-wal: the workspace's own database file" in imported.skipped
    assert not ws.exists(f"/copy/{ws_path.name}")

    ws.write(f"/{ws_path.name}", b"not a database")
    exported = export_tree(ws, "/", ws_path.parent)
    assert exported.skipped == [f"{ws_path.name}: the workspace's own database file"]
    assert ws.read("/hello.txt") == b"hi"
    assert fsck.check(ws).clean


def test_import_refuses_a_file_as_source(ws: agentfs.Workspace, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(NotADirectoryError):
        import_tree(ws, tmp_path / "f")


def test_export_never_follows_host_symlinks_in_the_target(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("original")
    before = host_snapshot(outside)
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(outside, out / "sub")  # a directory the export would descend into
    os.symlink(outside / "victim.txt", out / "victim.txt")  # a file it would overwrite
    ws.write("/sub/new.txt", b"would land outside", parents=True)
    ws.write("/victim.txt", b"would overwrite outside")

    stats = export_tree(ws, "/", out)

    assert host_snapshot(outside) == before
    assert sorted(stats.skipped) == [
        "sub: exists on the host as a symlink (left alone)",
        "victim.txt: exists on the host as a symlink (left alone)",
    ]
    assert os.readlink(out / "sub") == str(outside)


def test_export_replaces_same_type_entries_and_keeps_others(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    (out / "d").mkdir(parents=True)
    (out / "d" / "stale.txt").write_text("host only")
    (out / "f.txt").write_text("old")
    os.symlink("old-target", out / "l")
    ws.write("/d/new.txt", b"new", parents=True)
    ws.write("/f.txt", b"replaced")
    ws.symlink("new-target", "/l")

    with pytest.raises(ExportConflictError) as refused:
        export_tree(ws, "/", out)
    assert refused.value.differing == ["f.txt", "l"]
    assert (out / "f.txt").read_text() == "old" and not (out / "d" / "new.txt").exists()

    stats = export_tree(ws, "/", out, overwrite=True)

    assert stats.skipped == []
    assert (out / "f.txt").read_bytes() == b"replaced"
    assert os.readlink(out / "l") == "new-target"
    assert sorted(p.name for p in (out / "d").iterdir()) == ["new.txt", "stale.txt"]
    assert [p.name for p in out.iterdir() if p.name.startswith(".agentfs-tmp")] == []


def test_export_again_into_the_same_tree_needs_no_overwrite(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    ws.write("/d/a.txt", b"same", parents=True)
    ws.symlink("a.txt", "/d/l")
    export_tree(ws, "/", tmp_path / "out")
    ws.write("/d/b.txt", b"new")
    (tmp_path / "out" / "host-only").write_text("kept")
    export_tree(ws, "/", tmp_path / "out")  # nothing the user changed is replaced
    assert (tmp_path / "out" / "d" / "b.txt").read_bytes() == b"new"
    assert (tmp_path / "out" / "host-only").read_text() == "kept"


@pytest.mark.damages_workspace
def test_export_refuses_dentry_names_that_climb_out(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.write("/ok.txt", b"fine")
    ino = ws.write("/evil", b"escaped").st_ino
    # a foreign or damaged file could hold any text as a name
    ws.conn.execute("UPDATE fs_dentry SET name = '../escaped' WHERE ino = ?", (ino,))
    out = tmp_path / "deep" / "out"

    stats = export_tree(ws, "/", out)

    assert sorted(os.listdir(tmp_path / "deep")) == ["out"]
    assert os.listdir(out) == ["ok.txt"]
    assert len(stats.skipped) == 1 and stats.skipped[0].startswith("../escaped: ")


def test_export_drops_setuid_bits(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.write("/tool", b"#!/bin/sh\n", mode=0o4755)
    export_tree(ws, "/", tmp_path / "out")
    assert stat.S_IMODE((tmp_path / "out" / "tool").stat().st_mode) == 0o755


def test_export_of_one_file_lands_inside_the_directory(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    ws.write("/notes/a.txt", b"one file", parents=True)
    stats = export_tree(ws, "/notes/a.txt", tmp_path / "out")
    assert (tmp_path / "out" / "a.txt").read_bytes() == b"one file"
    assert stats.files == 1


def test_export_hard_links_become_separate_files(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.write("/a", b"shared")
    ws.link("/a", "/b")
    export_tree(ws, "/", tmp_path / "out")
    a, b = (tmp_path / "out" / "a").stat(), (tmp_path / "out" / "b").stat()
    assert a.st_ino != b.st_ino
    assert (tmp_path / "out" / "b").read_bytes() == b"shared"


# --- export_agentfs ----------------------------------------------------------------------------

SPEC_OBJECTS = {
    ("table", "fs_config"),
    ("table", "fs_inode"),
    ("table", "fs_dentry"),
    ("table", "fs_data"),
    ("table", "fs_symlink"),
    ("table", "kv_store"),
    ("table", "tool_calls"),
    ("table", "sqlite_sequence"),
    ("index", "idx_fs_dentry_parent"),
    ("index", "idx_kv_store_created_at"),
    ("index", "idx_tool_calls_name"),
    ("index", "idx_tool_calls_started_at"),
    ("index", "sqlite_autoindex_fs_config_1"),
    ("index", "sqlite_autoindex_fs_dentry_1"),
    ("index", "sqlite_autoindex_fs_data_1"),
    ("index", "sqlite_autoindex_kv_store_1"),
}


def rows(conn: apsw.Connection, sql: str) -> list[tuple]:
    return list(conn.execute(sql))


def test_export_agentfs_writes_only_the_spec_tables(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.write("/a/b.txt", b"hello", parents=True)
    ws.symlink("a/b.txt", "/link")
    ws.kv.set("k", {"v": [1, 2]})
    ws.tool_calls.record("search", {"q": "x"}, result=[1], started_at=10, completed_at=11)
    ws.conn.execute("CREATE VIRTUAL TABLE extra_fts USING fts5(body)")
    ws.conn.execute("CREATE VIRTUAL TABLE extra_vec USING vec0(e float[4])")
    ws.conn.execute("CREATE TRIGGER extra_trg AFTER INSERT ON kv_store BEGIN SELECT 1; END")
    out = tmp_path / "plain.db"

    stats = export_agentfs(ws, out)

    assert (stats.files, stats.directories, stats.symlinks, stats.bytes) == (1, 1, 1, 5)
    conn = apsw.Connection(str(out))
    assert set(rows(conn, "SELECT type, name FROM sqlite_schema")) == SPEC_OBJECTS
    assert rows(conn, "SELECT key, value FROM fs_config ORDER BY key") == [
        ("chunk_size", str(ws.chunks.size)),
        ("schema_version", "0.4"),
    ]
    for table in ("fs_inode", "fs_dentry", "fs_data", "fs_symlink", "kv_store"):
        assert rows(conn, f"SELECT * FROM {table}") == rows(ws.conn, f"SELECT * FROM {table}")
    spec_columns = "id, name, parameters, result, error, started_at, completed_at, duration_ms"
    assert rows(conn, f"SELECT {spec_columns} FROM tool_calls") == rows(
        ws.conn, f"SELECT {spec_columns} FROM tool_calls"
    )
    # ...in the layout the SDKs create (a status column), which their readers index by position
    assert rows(conn, "SELECT status FROM tool_calls") == [("success",)]
    assert rows(conn, "SELECT * FROM sqlite_sequence ORDER BY name") == rows(
        ws.conn, "SELECT * FROM sqlite_sequence ORDER BY name"
    )
    assert conn.execute("PRAGMA integrity_check").get == "ok"
    assert conn.execute("PRAGMA journal_mode").get == "wal"
    conn.close()
    assert not Path(f"{out}-wal").exists()


def test_export_agentfs_leaves_queued_orphans_out(
    plain_ws: agentfs.Workspace, tmp_path: Path
) -> None:
    ws = plain_ws
    ws.write("/keep.txt", b"kept")
    ws.write("/gone/big.bin", BIG, parents=True)
    gone = ws.stat("/gone/big.bin").st_ino
    with ws._write():  # unlink the subtree's names but stop before the purge, as a crash would
        ws.orphans.unlink_subtree(ws.stat("/gone").st_ino)
    assert ws.orphans.pending() == 1

    export_agentfs(ws, tmp_path / "plain.db")

    conn = apsw.Connection(str(tmp_path / "plain.db"))
    assert conn.execute("SELECT count(*) FROM fs_inode WHERE ino = ?", (gone,)).get == 0
    assert conn.execute("SELECT count(*) FROM fs_data WHERE ino = ?", (gone,)).get == 0
    conn.close()


def test_export_agentfs_refuses_an_existing_file(ws: agentfs.Workspace, tmp_path: Path) -> None:
    out = tmp_path / "taken.db"
    out.write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        export_agentfs(ws, out)
    assert out.read_bytes() == b"mine"


def test_export_agentfs_reopens_as_a_workspace(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.write("/x/y.bin", BIG, parents=True, mode=0o640)
    out = tmp_path / "plain.db"
    calls: list[tuple[int, int]] = []
    export_agentfs(ws, out, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (1, 1)

    with agentfs.open(out) as again:
        assert again.read("/x/y.bin") == BIG
        assert again.stat("/x/y.bin") == ws.stat("/x/y.bin")
        assert fsck.check(again).clean
        again.write("/x/new.txt", b"writable")


def test_export_agentfs_rolls_back_and_removes_the_file_on_error(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    ws.write("/a", b"1")
    out = tmp_path / "plain.db"

    def boom(done: int, total: int) -> None:
        raise OSError(errno.EIO, "disk gone")

    with pytest.raises(OSError):
        export_agentfs(ws, out, progress=boom)
    assert not out.exists()
