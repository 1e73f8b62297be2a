"""fsck: a workspace built through the API is clean; each corruption is detected by its check,
repaired when that is safe, and the re-check is clean (S3QL's corrupt -> detect -> repair ->
clean pattern). Corruptions are raw SQL through the workspace's own connection."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

import apsw
import pytest

import agentfs
from agentfs import fsck
from agentfs.db import schema_dir

CHUNK = 4096
BIG = b"".join(bytes([i]) * CHUNK for i in range(3)) + b"tail"  # 3 full chunks + 4 bytes


@pytest.fixture
def ws(ws_path: Path):
    with agentfs.open(ws_path, chunk_size=CHUNK) as workspace:
        # These tests damage the live tree by hand; history would hold the inodes they orphan.
        workspace.configure_history(keep="none")
        build(workspace)
        yield workspace


def build(ws: agentfs.Workspace) -> None:
    """Every kind of object the API makes: files, nested dirs, a symlink, a hard link, a
    multi-chunk file, an empty file, kv entries, tool calls and a removed tree."""
    ws.write("/docs/readme.md", "hello\n", parents=True)
    ws.write("/docs/deep/er/note.txt", "deep note", parents=True)
    ws.symlink("docs/readme.md", "/link")
    ws.link("/docs/readme.md", "/docs/hard")
    ws.write("/big.bin", BIG)
    ws.write("/empty", b"")
    ws.mkdir("/gone/sub", parents=True)
    ws.write("/gone/sub/large", b"z" * (CHUNK * 5))
    ws.write("/gone/small", b"s")
    ws.remove("/gone", recursive=True)
    ws.kv.set("agent/state", {"step": 3})
    ws.kv.set("agent/notes", ["a", "b"])
    now = time.time()
    ws.tool_calls.record(
        "read_file", {"path": "/x"}, result="ok", started_at=now - 2.4, completed_at=now
    )
    ws.tool_calls.record("grep", {"q": "x"}, error="boom", started_at=now - 0.3, completed_at=now)


def ino(ws: agentfs.Workspace, path: str) -> int:
    return ws.lstat(path).st_ino


def sql(ws: agentfs.Workspace, statement: str, *bindings: object) -> None:
    ws.conn.execute(statement, bindings)


def checks_of(report: fsck.FsckReport) -> set[str]:
    return {p.check for p in report.problems}


def assert_repaired(ws: agentfs.Workspace, expected: set[str]) -> fsck.FsckReport:
    """The corruption is seen by exactly ``expected``, all repairable, and repair cleans it."""
    before = fsck.check(ws)
    assert checks_of(before) == expected
    assert all(p.repairable for p in before.problems), before.problems
    after = fsck.repair(ws)
    assert after.problems == []
    assert after.repaired
    assert fsck.check(ws).clean
    return after


def assert_reported_only(ws: agentfs.Workspace, expected: set[str]) -> fsck.FsckReport:
    """The corruption is seen by exactly ``expected``, is not repairable, and repair leaves
    the file as it was (nothing else is touched)."""
    before = fsck.check(ws)
    assert checks_of(before) == expected
    assert not any(p.repairable for p in before.problems)
    after = fsck.repair(ws)
    assert after == fsck.FsckReport(before.problems, [])
    return before


# --- a healthy workspace ---------------------------------------------------------------------


def test_workspace_built_through_the_api_is_clean(ws):
    assert fsck.check(ws) == fsck.FsckReport([], [])
    assert fsck.repair(ws) == fsck.FsckReport([], [])


def test_fresh_workspace_is_clean(tmp_path):
    with agentfs.open(tmp_path / "new.db") as fresh:
        assert fsck.check(fresh).as_dict() == {"clean": True, "problems": [], "repaired": []}


def test_queued_orphans_are_clean(ws, monkeypatch):
    """A tree removed but not yet purged (a crash between the two) is a consistent state."""
    monkeypatch.setattr(ws.orphans, "purge", lambda *args: 0)
    ws.write("/later/a/b", b"q" * (CHUNK * 3), parents=True)
    ws.write("/later/c", b"c")
    ws.remove("/later", recursive=True)
    assert ws.orphans.pending() > 0
    assert fsck.check(ws).clean


def test_check_never_writes(ws, ws_path):
    sql(ws, "UPDATE fs_inode SET nlink = 9 WHERE ino = ?", ino(ws, "/empty"))
    sql(ws, "DELETE FROM fs_config WHERE key = 'schema_version'")
    other = apsw.Connection(str(ws_path))
    version = other.pragma("data_version")
    files = [ws_path, Path(f"{ws_path}-wal")]
    digests = [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    changes = ws.conn.total_changes()
    report = fsck.check(ws)
    assert checks_of(report) == {"check_fs_config_schema_version", "check_fs_inode_nlink"}
    assert ws.conn.total_changes() == changes
    assert other.pragma("data_version") == version
    assert [hashlib.sha256(f.read_bytes()).hexdigest() for f in files] == digests
    other.close()


def test_report_as_dict_is_json_ready(ws):
    sql(ws, "UPDATE kv_store SET value = '{oops' WHERE key = 'agent/state'")
    report = fsck.check(ws)
    assert json.loads(json.dumps(report.as_dict())) == {
        "clean": False,
        "problems": [
            {
                "check": "check_kv_store_json",
                "message": "kv_store value of 'agent/state' is not valid JSON",
                "repairable": False,
            }
        ],
        "repaired": [],
    }


# --- the structure of the module -------------------------------------------------------------


def test_checks_are_named_documented_and_unique():
    names = [c.__name__ for c in fsck.CHECKS]
    assert len(set(names)) == len(names)
    for check in fsck.CHECKS:
        assert re.fullmatch(r"check_[a-z0-9_]+", check.__name__)
        assert check.__doc__ and "\n\n" not in check.__doc__.strip()
    assert set(fsck.REPAIRS) <= set(fsck.CHECKS)
    for check, fix in fsck.REPAIRS.items():
        assert fix.__name__ == check.__name__.replace("check_", "repair_", 1)


def test_every_schema_table_has_a_check():
    tables = set()
    for path in [schema_dir() / "agentfs-v0.4.sql", *sorted(schema_dir().glob("migrations/*"))]:
        tables |= set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", path.read_text()))
    names = [c.__name__ for c in fsck.CHECKS]
    unchecked = {t for t in tables if not any(n.startswith(f"check_{t}_") for n in names)}
    assert unchecked == set()


# --- SQLite's own structure ------------------------------------------------------------------


def reopen_with_hidden_index(ws_path: Path, statements: list[tuple[str, tuple]]) -> None:
    """Run ``statements`` on fs_data while SQLite does not know its primary-key index.

    This is what Turso's engine does to our files: it writes rows into fs_data without adding
    them to sqlite_autoindex_fs_data_1. Reproduced with SQLite alone: with writable_schema,
    drop the PRIMARY KEY from fs_data's CREATE statement and remove the autoindex's row from
    sqlite_schema (the index's pages stay allocated, untouched); reopen, so the schema is
    re-read and writes no longer maintain the index; write; then put both schema rows back
    exactly as they were and reopen. The index b-tree is intact but misses the new rows."""
    conn = apsw.Connection(str(ws_path))
    conn.pragma("writable_schema", 1)
    table_sql = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'fs_data'").get
    index_row = conn.execute(
        "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema"
        " WHERE name = 'sqlite_autoindex_fs_data_1'"
    ).fetchone()
    bare = re.sub(r",\s*PRIMARY KEY \(ino, chunk_index\)", "", table_sql)
    assert bare != table_sql
    conn.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'fs_data'", (bare,))
    conn.execute("DELETE FROM sqlite_schema WHERE name = 'sqlite_autoindex_fs_data_1'")
    conn.close()
    conn = apsw.Connection(str(ws_path))
    for statement, bindings in statements:
        conn.execute(statement, bindings)
    conn.pragma("writable_schema", 1)
    conn.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'fs_data'", (table_sql,))
    conn.execute("INSERT INTO sqlite_schema VALUES (?, ?, ?, ?, ?)", index_row)
    conn.close()


def test_rows_missing_from_an_index_are_reindexed(ws, ws_path):
    """What agentfs-sdk on Turso's engine leaves behind: a file whose chunk is in fs_data but
    not in sqlite_autoindex_fs_data_1. The content checks read the table, not the index, so
    only the index is reported; REINDEX rebuilds it."""
    ws.close()
    with apsw.Connection(str(ws_path)) as conn:
        new = conn.execute(
            "INSERT INTO fs_inode(mode, nlink, size, atime, mtime, ctime)"
            " VALUES (33188, 1, 5, 0, 0, 0) RETURNING ino"
        ).get
        conn.execute(
            "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES ('sdk.txt', 1, ?)", (new,)
        )
    reopen_with_hidden_index(
        ws_path, [("INSERT INTO fs_data(ino, chunk_index, data) VALUES (?, 0, ?)", (new, b"turso"))]
    )
    with agentfs.open(ws_path) as again:
        row = again.conn.execute("SELECT rowid FROM fs_data NOT INDEXED WHERE ino = ?", (new,)).get
        report = fsck.check(again)
        assert report == fsck.FsckReport(
            [
                fsck.Problem("check_sqlite_integrity", f"integrity_check: {line}", True)
                for line in (
                    "wrong # of entries in index sqlite_autoindex_fs_data_1",
                    f"row {row} missing from index sqlite_autoindex_fs_data_1",
                )
            ]
        )
        # A lookup through the index does not see the chunk, a table scan does.
        assert again.conn.execute("SELECT count(*) FROM fs_data WHERE ino = ?", (new,)).get == 0
        after = assert_repaired(again, {"check_sqlite_integrity"})
        assert after.repaired == ["rebuilt index sqlite_autoindex_fs_data_1 (REINDEX)"]
        assert again.read("/sdk.txt") == b"turso"


def test_stale_index_entries_are_reported_and_reindexed(ws, ws_path):
    """Moving chunks to new rowids while the index is hidden leaves entries that point at
    rows that are gone; SQLite then refuses queries that walk the index (SQLITE_CORRUPT).
    Checks that meet that say so; REINDEX, which repair runs first, fixes it all."""
    big = ino(ws, "/big.bin")
    ws.close()
    reopen_with_hidden_index(
        ws_path, [("UPDATE fs_data SET rowid = rowid + 1000 WHERE ino = ?", (big,))]
    )
    with agentfs.open(ws_path) as again:
        report = fsck.check(again)
        integrity = [p for p in report.problems if p.check == "check_sqlite_integrity"]
        assert integrity and all(p.repairable for p in integrity)
        assert all(
            "could not run on the damaged file" in p.message
            for p in report.problems
            if p not in integrity
        )
        after = fsck.repair(again)
        assert after == fsck.FsckReport([], ["rebuilt index sqlite_autoindex_fs_data_1 (REINDEX)"])
        assert again.read("/big.bin") == BIG


def test_duplicate_keys_are_reported_and_block_reindex(ws, ws_path):
    """A second chunk 0 written past the hidden index breaks the UNIQUE key; which copy is
    right cannot be known, so nothing is repaired (REINDEX would fail on it anyway)."""
    readme = ino(ws, "/docs/readme.md")
    ws.close()
    reopen_with_hidden_index(
        ws_path,
        [("INSERT INTO fs_data(ino, chunk_index, data) VALUES (?, 0, ?)", (readme, b"other\n"))],
    )
    with agentfs.open(ws_path) as again:
        report = assert_reported_only(
            again,
            {
                "check_sqlite_integrity",
                "check_sqlite_unique_keys",
                "check_fs_data_layout",
                "check_fs_inode_size",
            },
        )
        duplicates = [p for p in report.problems if p.check == "check_sqlite_unique_keys"]
        assert duplicates == [
            fsck.Problem(
                "check_sqlite_unique_keys",
                f"fs_data: 2 rows share the key (ino, chunk_index) = ({readme}, 0)",
                False,
            )
        ]


# --- fs_config -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE fs_config SET value = 'big' WHERE key = 'chunk_size'",
        "UPDATE fs_config SET value = '0' WHERE key = 'chunk_size'",
        "DELETE FROM fs_config WHERE key = 'chunk_size'",
    ],
)
def test_bad_chunk_size_is_reported(ws, statement):
    sql(ws, statement)
    assert_reported_only(ws, {"check_fs_config_chunk_size"})


def test_missing_schema_version_is_restored(ws):
    sql(ws, "DELETE FROM fs_config WHERE key = 'schema_version'")
    assert_repaired(ws, {"check_fs_config_schema_version"})
    assert ws.conn.execute("SELECT value FROM fs_config WHERE key = 'schema_version'").get == "0.4"


# --- fs_inode: root, types, times ------------------------------------------------------------


def test_missing_root_is_recreated(ws):
    sql(ws, "DELETE FROM fs_inode WHERE ino = 1")
    after = assert_repaired(ws, {"check_fs_inode_root", "check_fs_dentry_parent"})
    assert after.repaired[0] == "recreated the root directory (inode 1)"
    assert ws.read("/docs/deep/er/note.txt") == b"deep note"
    assert ws.stat("/").st_nlink == 3  # 2 + /docs
    assert sorted(ws.listdir("/")) == ["big.bin", "docs", "empty", "link"]


def test_root_that_is_not_a_directory_is_left_alone(ws):
    sql(ws, "UPDATE fs_inode SET mode = 33188 WHERE ino = 1")
    report = assert_reported_only(ws, {"check_fs_inode_root", "check_fs_dentry_parent"})
    assert len(report.problems) == 1 + 4  # the root, and each of its four entries


def test_invalid_file_type_is_reported(ws):
    sql(ws, "UPDATE fs_inode SET mode = 61440 | 420 WHERE ino = ?", ino(ws, "/empty"))
    assert_reported_only(ws, {"check_fs_inode_type"})


def test_nanoseconds_out_of_range_are_carried_into_seconds(ws):
    empty = ino(ws, "/empty")
    sql(
        ws,
        "UPDATE fs_inode SET mtime = 100, mtime_nsec = 2500000000, atime = 100,"
        " atime_nsec = -1 WHERE ino = ?",
        empty,
    )
    assert_repaired(ws, {"check_fs_inode_times"})
    st = ws.stat("/empty")
    assert (st.st_mtime_ns, st.st_atime_ns) == (102_500_000_000, 99_999_999_999)


# --- fs_dentry -------------------------------------------------------------------------------


def test_dentry_naming_the_root_is_removed(ws):
    sql(ws, "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES ('again', ?, 1)", ino(ws, "/docs"))
    assert_repaired(ws, {"check_fs_dentry_root", "check_fs_inode_nlink"})
    assert ws.listdir("/docs") == ["deep", "hard", "readme.md"]


def test_dentry_of_missing_inode_is_removed(ws):
    sql(ws, "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES ('ghost', 1, 99999)")
    assert_repaired(ws, {"check_fs_dentry_inode"})
    assert "ghost" not in ws.listdir("/")


def test_missing_parent_is_recreated_in_lost_found_with_names_kept(ws):
    deep = ino(ws, "/docs/deep")
    sql(ws, "DELETE FROM fs_inode WHERE ino = ?", deep)
    after = assert_repaired(
        ws,
        {
            "check_fs_dentry_inode",  # 'deep' names a missing inode
            "check_fs_dentry_parent",  # 'er' is in a missing directory
            "check_fs_inode_reachable",  # so 'er' hangs in the air
            "check_fs_inode_nlink",  # and /docs lost a subdirectory
        },
    )
    assert f"gave nameless inode {deep} the name /lost+found/ino-{deep}" in after.repaired
    assert ws.read(f"/lost+found/ino-{deep}/er/note.txt") == b"deep note"
    assert ws.listdir("/docs") == ["hard", "readme.md"]


def test_entry_inside_a_file_goes_to_lost_found(ws):
    note = ino(ws, "/docs/deep/er/note.txt")
    sql(ws, "UPDATE fs_dentry SET parent_ino = ? WHERE ino = ?", ino(ws, "/big.bin"), note)
    assert_repaired(ws, {"check_fs_dentry_parent"})
    assert ws.read(f"/lost+found/ino-{note}") == b"deep note"
    assert ws.stat("/lost+found").st_mode == 0o040700


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "nul\0byte", "é" * 128])
def test_invalid_name_is_moved_to_lost_found(ws, name):
    empty = ino(ws, "/empty")
    sql(ws, "UPDATE fs_dentry SET name = ? WHERE ino = ?", name, empty)
    assert_repaired(ws, {"check_fs_dentry_name"})
    assert ws.listdir("/lost+found") == [f"ino-{empty}"]


def test_extra_names_of_a_directory_are_dropped(ws):
    sql(
        ws,
        "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES ('alias', 1, ?)",
        ino(ws, "/docs/deep"),
    )
    assert_repaired(ws, {"check_fs_dentry_directory_links", "check_fs_inode_nlink"})
    assert "alias" not in ws.listdir("/")
    assert ws.read("/docs/deep/er/note.txt") == b"deep note"


# --- ws_orphan, names and reachability -------------------------------------------------------


def test_named_inode_leaves_the_orphan_queue_and_survives_purge(ws):
    sql(ws, "INSERT INTO ws_orphan(ino, queued_at) VALUES (?, 0)", ino(ws, "/docs/readme.md"))
    assert_repaired(ws, {"check_ws_orphan_unlinked"})
    ws.orphans.purge()
    assert ws.read("/docs/hard") == b"hello\n"


def test_queued_missing_inode_leaves_the_orphan_queue(ws):
    sql(ws, "INSERT INTO ws_orphan(ino, queued_at) VALUES (99999, 0)")
    assert_repaired(ws, {"check_ws_orphan_unlinked"})
    assert ws.orphans.pending() == 0


def test_queued_orphan_with_links_gets_nlink_zero(ws):
    empty = ino(ws, "/empty")
    sql(ws, "DELETE FROM fs_dentry WHERE ino = ?", empty)
    sql(ws, "INSERT INTO ws_orphan(ino, queued_at) VALUES (?, 0)", empty)
    assert_repaired(ws, {"check_ws_orphan_unlinked"})
    assert ws.conn.execute("SELECT nlink FROM fs_inode WHERE ino = ?", (empty,)).get == 0


def test_nameless_inode_is_named_in_lost_found(ws):
    lost = ws.conn.execute(
        "INSERT INTO fs_inode(mode, nlink, size, atime, mtime, ctime) VALUES (33188, 0, 3, 0, 0, 0)"
        " RETURNING ino"
    ).get
    sql(ws, "INSERT INTO fs_data(ino, chunk_index, data) VALUES (?, 0, x'616263')", lost)
    after = assert_repaired(ws, {"check_fs_inode_named"})
    assert after.repaired == [
        f"gave nameless inode {lost} the name /lost+found/ino-{lost}",
        f"set nlink of inode {lost} from 0 to 1",
    ]
    assert ws.read(f"/lost+found/ino-{lost}") == b"abc"
    assert ws.stat("/").st_nlink == 4  # /docs, /lost+found


def test_lost_found_names_never_collide(ws):
    empty = ino(ws, "/empty")
    ws.write(f"/lost+found/ino-{empty}", b"mine", parents=True)
    sql(ws, "DELETE FROM fs_dentry WHERE name = 'empty'")
    assert_repaired(ws, {"check_fs_inode_named", "check_fs_inode_nlink"})
    assert ws.listdir("/lost+found") == [f"ino-{empty}", f"ino-{empty}.1"]
    assert ws.read(f"/lost+found/ino-{empty}") == b"mine"


def test_directory_cycle_is_broken_into_lost_found(ws):
    deep, er = ino(ws, "/docs/deep"), ino(ws, "/docs/deep/er")
    sql(ws, "UPDATE fs_dentry SET parent_ino = ? WHERE ino = ?", er, deep)  # deep <-> er
    report = fsck.check(ws)
    unreachable = [p.message for p in report.problems if p.check == "check_fs_inode_reachable"]
    assert len(unreachable) == 2
    after = assert_repaired(ws, {"check_fs_inode_reachable", "check_fs_inode_nlink"})
    assert f"moved detached directory {deep} to /lost+found/ino-{deep}" in after.repaired
    assert ws.read(f"/lost+found/ino-{deep}/er/note.txt") == b"deep note"


def test_wrong_nlink_is_recounted(ws):
    sql(ws, "UPDATE fs_inode SET nlink = 7 WHERE ino = ?", ino(ws, "/docs/readme.md"))
    sql(ws, "UPDATE fs_inode SET nlink = 1 WHERE ino = 1")  # the spec's own root value
    after = assert_repaired(ws, {"check_fs_inode_nlink"})
    assert sorted(after.repaired) == sorted(
        [
            f"set nlink of inode {ino(ws, '/docs/readme.md')} from 7 to 2",
            "set nlink of inode 1 from 1 to 3",
        ]
    )


# --- fs_symlink --------------------------------------------------------------------------------


@pytest.mark.parametrize("owner", ["/empty", None])
def test_symlink_row_of_a_non_symlink_is_dropped(ws, owner):
    target_ino = 99999 if owner is None else ino(ws, owner)
    sql(ws, "INSERT INTO fs_symlink(ino, target) VALUES (?, 'x')", target_ino)
    assert_repaired(ws, {"check_fs_symlink_inode"})


def test_symlink_without_target_is_reported(ws):
    sql(ws, "DELETE FROM fs_symlink WHERE ino = ?", ino(ws, "/link"))
    assert_reported_only(ws, {"check_fs_symlink_target"})


def test_symlink_size_is_recomputed_from_its_target(ws):
    sql(ws, "UPDATE fs_inode SET size = 3 WHERE ino = ?", ino(ws, "/link"))
    assert_repaired(ws, {"check_fs_symlink_size"})
    assert ws.lstat("/link").st_size == len("docs/readme.md")


# --- fs_data -------------------------------------------------------------------------------------


def test_chunks_of_missing_inodes_are_deleted(ws):
    sql(ws, "INSERT INTO fs_data(ino, chunk_index, data) VALUES (99999, 0, x'00')")
    after = assert_repaired(ws, {"check_fs_data_inode"})
    assert after.repaired == ["deleted 1 chunks of missing inode 99999"]


def test_chunks_of_a_directory_are_reported(ws):
    sql(ws, "INSERT INTO fs_data(ino, chunk_index, data) VALUES (?, 0, x'00')", ino(ws, "/docs"))
    assert_reported_only(ws, {"check_fs_data_type"})


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM fs_data WHERE ino = ? AND chunk_index = 1",  # a hole
        "UPDATE fs_data SET data = substr(data, 1, 10) WHERE ino = ? AND chunk_index = 0",  # short
        "UPDATE fs_data SET chunk_index = chunk_index + 10 WHERE ino = ?",  # not from 0
        "UPDATE fs_data SET data = zeroblob(5000) WHERE ino = ? AND chunk_index = 3",  # too long
    ],
)
def test_malformed_chunks_are_reported(ws, statement):
    sql(ws, statement, ino(ws, "/big.bin"))
    report = fsck.check(ws)
    assert (
        {"check_fs_data_layout"}
        <= checks_of(report)
        <= {"check_fs_data_layout", "check_fs_inode_size"}
    )
    assert_reported_only(ws, checks_of(report))


def test_text_chunk_is_reported(ws):
    sql(ws, "UPDATE fs_data SET data = CAST(data AS TEXT) WHERE ino = ?", ino(ws, "/docs/hard"))
    assert_reported_only(ws, {"check_fs_data_layout"})


@pytest.mark.parametrize(("path", "content"), [("/big.bin", BIG), ("/empty", b"")])
def test_size_is_recomputed_from_well_formed_chunks(ws, path, content):
    sql(ws, "UPDATE fs_inode SET size = size + 7 WHERE ino = ?", ino(ws, path))
    assert_repaired(ws, {"check_fs_inode_size"})
    assert ws.stat(path).st_size == len(content)
    assert ws.read(path) == content


# --- kv_store and tool_calls ---------------------------------------------------------------------


def test_invalid_kv_json_is_reported(ws):
    sql(ws, "UPDATE kv_store SET value = 'not json' WHERE key = 'agent/notes'")
    assert_reported_only(ws, {"check_kv_store_json"})


@pytest.mark.parametrize("column", ["parameters", "result"])
def test_invalid_tool_call_json_is_reported(ws, column):
    sql(ws, f"UPDATE tool_calls SET {column} = '{{' WHERE name = 'read_file'")
    assert_reported_only(ws, {"check_tool_calls_json"})


def test_tool_call_with_result_and_error_is_reported(ws):
    sql(ws, "UPDATE tool_calls SET result = '1' WHERE name = 'grep'")
    assert_reported_only(ws, {"check_tool_calls_outcome"})


def test_duration_within_the_rounding_of_whole_seconds_is_clean(ws):
    """Started at 100.99 s, completed at 102.0 s: columns 100 and 102, duration 1010 ms."""
    sql(ws, "UPDATE tool_calls SET started_at = 100, completed_at = 102, duration_ms = 1010")
    assert fsck.check(ws).clean
    sql(ws, "UPDATE tool_calls SET duration_ms = 3000")
    assert fsck.check(ws).clean


def test_inconsistent_duration_is_reported(ws):
    sql(
        ws,
        "UPDATE tool_calls SET started_at = 100, completed_at = 102, duration_ms = 3001"
        " WHERE name = 'grep'",
    )
    report = assert_reported_only(ws, {"check_tool_calls_times"})
    assert report.problems[0].message.endswith(
        "duration_ms 3001 disagrees with completed_at - started_at = 2 s"
    )


def test_sdk_tool_calls_table_is_read_by_column_name(ws):
    """agentfs-sdk's table adds ``status`` and leaves completed_at NULL while a call runs."""
    sql(ws, "DROP TABLE tool_calls")
    sql(
        ws,
        "CREATE TABLE tool_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,"
        " parameters TEXT, result TEXT, error TEXT, status TEXT NOT NULL DEFAULT 'pending',"
        " started_at INTEGER NOT NULL, completed_at INTEGER, duration_ms INTEGER)",
    )
    sql(ws, "INSERT INTO tool_calls(name, started_at) VALUES ('running', 100)")
    sql(
        ws,
        "INSERT INTO tool_calls(name, status, result, started_at, completed_at, duration_ms)"
        " VALUES ('done', 'success', '1', 100, 102, 2400)",
    )
    assert fsck.check(ws).clean
    sql(ws, "INSERT INTO tool_calls(name, status, started_at) VALUES ('lost', 'error', 100)")
    report = assert_reported_only(ws, {"check_tool_calls_times"})
    assert report.problems[0].message == "tool call 3 has no completed_at"


# --- repair as a whole ---------------------------------------------------------------------------


def test_repair_is_one_transaction(ws, monkeypatch):
    """A repair that fails part-way leaves the file exactly as it was."""
    sql(ws, "DELETE FROM fs_config WHERE key = 'schema_version'")
    sql(ws, "UPDATE fs_inode SET nlink = 7 WHERE ino = ?", ino(ws, "/empty"))

    def boom(conn):
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(fsck.REPAIRS, fsck.check_fs_inode_nlink, boom)
    before = fsck.check(ws)
    with pytest.raises(RuntimeError):
        fsck.repair(ws)
    assert fsck.check(ws) == before


def test_repair_fixes_several_problems_at_once(ws):
    note, link = ino(ws, "/docs/deep/er/note.txt"), ino(ws, "/link")
    sql(ws, "DELETE FROM fs_config WHERE key = 'schema_version'")
    sql(ws, "UPDATE fs_inode SET size = 1 WHERE ino = ?", link)
    sql(ws, "DELETE FROM fs_dentry WHERE name = 'note.txt'")
    sql(ws, "UPDATE fs_inode SET nlink = 0 WHERE ino = 1")
    report = fsck.repair(ws)
    assert report == fsck.FsckReport(
        [],
        [
            "set fs_config.schema_version to '0.4'",
            f"gave nameless inode {note} the name /lost+found/ino-{note}",
            "set nlink of inode 1 from 1 to 4",  # 0, +1 when /lost+found was made
            f"set size of symlink {link} from 1 to 14",
        ],
    )
    assert ws.read(f"/lost+found/ino-{note}") == b"deep note"


def test_check_of_100000_files_takes_seconds(tmp_path):
    """Set-based SQL throughout: 100,000 files in 1,000 directories."""
    with agentfs.open(tmp_path / "big.db", chunk_size=CHUNK) as big:
        big.conn.execute("BEGIN")
        big.conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)"
            " INSERT INTO fs_inode(ino, mode, nlink, atime, mtime, ctime)"
            " SELECT 1 + i, 16877, 2, 0, 0, 0 FROM n"
        )
        big.conn.execute(
            "INSERT INTO fs_dentry(name, parent_ino, ino)"
            " SELECT 'd' || ino, 1, ino FROM fs_inode WHERE ino > 1"
        )
        big.conn.execute("UPDATE fs_inode SET nlink = 1002 WHERE ino = 1")
        big.conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)"
            " INSERT INTO fs_inode(ino, mode, nlink, size, atime, mtime, ctime)"
            " SELECT 10000 + i, 33188, 1, 100, 0, 0, 0 FROM n"
        )
        big.conn.execute(
            "INSERT INTO fs_dentry(name, parent_ino, ino)"
            " SELECT 'f' || ino, 2 + ino % 1000, ino FROM fs_inode WHERE ino > 10000"
        )
        big.conn.execute(
            "INSERT INTO fs_data(ino, chunk_index, data)"
            " SELECT ino, 0, randomblob(100) FROM fs_inode WHERE ino > 10000"
        )
        big.conn.execute("COMMIT")
        start = time.perf_counter()
        report = fsck.check(big)
        elapsed = time.perf_counter() - start
        assert report.clean, report.problems[:5]
        assert elapsed < 20, f"fsck of 100,000 files took {elapsed:.1f} s"
