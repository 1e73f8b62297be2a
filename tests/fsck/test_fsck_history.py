"""fsck of history (``agentfs/fsck/history.py``): a workspace built with versions, snapshots,
restores, forks and gc is clean; each damage to the history tables is found by exactly its
check, and the repairable ones are repaired to a clean state.

Damage is raw SQL through the workspace's own connection (``with ws.conn:``), the corrupt ->
detect -> repair -> clean pattern of tests/fsck/test_fsck.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

import agentfs
from agentfs import fsck
from agentfs.core.inodes import S_IFDIR

DIR_MODE = S_IFDIR | 0o755


def sql(ws: agentfs.Workspace, statement: str, *bindings: object) -> None:
    """Damage the file by hand, in a transaction of its own."""
    with ws.conn:
        ws.conn.execute(statement, bindings)


def one(ws: agentfs.Workspace, query: str, *bindings: object) -> object:
    return ws.conn.execute(query, bindings).get


def checks_of(report: fsck.FsckReport) -> set[str]:
    return {p.check for p in report.problems}


def assert_repaired(
    ws: agentfs.Workspace, check: str | set[str], *fragments: str
) -> fsck.FsckReport:
    """The damage is seen by exactly ``check`` (or that set of checks), some message naming
    each of ``fragments``, all of it repairable, and repair leaves the file clean."""
    before = fsck.check(ws)
    assert checks_of(before) == ({check} if isinstance(check, str) else check), before.problems
    assert all(p.repairable for p in before.problems), before.problems
    for fragment in fragments:
        assert any(fragment in p.message for p in before.problems), before.problems
    after = fsck.repair(ws)
    assert after.problems == []
    assert after.repaired
    assert fsck.check(ws).clean
    return after


def assert_reported_only(ws: agentfs.Workspace, check: str, *fragments: str) -> fsck.FsckReport:
    """The damage is seen by exactly ``check``, some message naming each of ``fragments``;
    none of it is repairable, and repair touches nothing."""
    before = fsck.check(ws)
    assert checks_of(before) == {check}, before.problems
    assert not any(p.repairable for p in before.problems), before.problems
    for fragment in fragments:
        assert any(fragment in p.message for p in before.problems), before.problems
    assert fsck.repair(ws) == fsck.FsckReport(before.problems, [])
    return before


@pytest.fixture
def ws(ws: agentfs.Workspace) -> Iterator[agentfs.Workspace]:
    """The conftest workspace with history in every table (see ``build``)."""
    build(ws)
    yield ws


def build(ws: agentfs.Workspace) -> None:
    """/src/app.py in three versions (version 1's bytes kept aside by an in-place
    overwrite, version 2 on a frozen, nameless inode: s1 held it, so v3 copied the file up),
    a read record, snapshots s1 and s2 (app.py changed between them, so its s1 entry is
    closed at generation 2), and /docs/readme.md, unchanged since s1."""
    ws.actor, ws.thread = "me", "chat"
    ws.write("/src/app.py", b"v1", parents=True)
    ws.write("/src/app.py", b"v2")
    ws.write("/docs/readme.md", b"readme", parents=True)
    ws.read("/src/app.py")
    ws.snapshots.create("s1", meta={"turn": 1})
    ws.write("/src/app.py", b"v3")
    ws.snapshots.create("s2")


def ino(ws: agentfs.Workspace, path: str) -> int:
    return ws.lstat(path).st_ino


def inode_counter(ws: agentfs.Workspace) -> int:
    return int(one(ws, "SELECT seq FROM sqlite_sequence WHERE name = 'fs_inode'"))  # type: ignore[arg-type]


def setting(ws: agentfs.Workspace, key: str) -> object:
    return one(ws, "SELECT value FROM ws_config WHERE key = ?", key)


# --- a healthy workspace --------------------------------------------------------------------------


def test_a_workspace_with_every_kind_of_history_is_clean(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    """Versions, renames, hard links, symlinks, chmod, restore_version, snapshot restores
    (whole and partial, and their undo), deleted snapshots, gc under retention and a fork:
    fsck finds nothing after each step, and repair does nothing."""
    steps = [
        lambda: ws.symlink("/src", "/s"),
        lambda: ws.link("/docs/readme.md", "/docs/hard"),
        lambda: ws.append("/s/app.py", b"+"),
        lambda: ws.rename("/docs", "/documents"),
        lambda: ws.chmod("/documents/hard", 0o600),
        lambda: ws.restore_version("/src/app.py", 1),
        lambda: ws.remove("/src", recursive=True),
        lambda: ws.snapshots.create("s3", thread="other"),
        lambda: ws.snapshots.restore("s1"),
        lambda: ws.snapshots.restore("s2", "/src"),
        lambda: ws.snapshots.restore(ws.snapshots.restore("s3").undo),
        lambda: ws.truncate("/src/app.py", 1),
        lambda: ws.snapshots.delete("s1"),
        lambda: ws.configure_history(keep=1),
        lambda: ws.gc(),
        lambda: ws.fork("s2", tmp_path / "fork.db"),
        lambda: ws.configure_history(keep="none"),
        lambda: ws.write("/src/app.py", b"unversioned"),
        lambda: ws.gc(),
    ]
    for number, step in enumerate(steps):
        step()
        assert fsck.check(ws).problems == [], f"after step {number}"
    assert fsck.repair(ws) == fsck.FsckReport([], [])
    with agentfs.open(tmp_path / "fork.db") as fork:
        assert fsck.check(fork).clean
        assert fork.reads_log() == []


def test_deleting_every_snapshot_drops_the_baseline_cleanly(ws: agentfs.Workspace) -> None:
    """With no snapshot left, the watermark is -1 and no directory is marked dirty."""
    ws.write("/src/new.py", b"n")
    for name in ("s1", "s2"):
        ws.snapshots.delete(name)
    assert setting(ws, "snapshot.watermark") == "-1"
    assert one(ws, "SELECT count(*) FROM ws_dirty") == 0
    assert fsck.check(ws).clean


# --- ws_config ------------------------------------------------------------------------------------


@pytest.mark.damages_workspace
@pytest.mark.parametrize(
    ("key", "value", "fragment", "repaired_to"),
    [
        ("history.keep", "bogus", "invalid value 'bogus'", "all"),
        ("history.keep", "0", "invalid value '0'", "all"),
        ("history.max_bytes", "-5", "invalid value '-5'", "16777216"),
        ("history.max_bytes", "lots", "invalid value 'lots'", "16777216"),
        ("snapshot.watermark", "999999", "above the inode counter", "counter"),
    ],
)
def test_bad_history_settings_go_back_to_defaults(
    ws: agentfs.Workspace, key: str, value: str, fragment: str, repaired_to: str
) -> None:
    """An invalid setting is reset to its default; a watermark above every inode number
    becomes the inode counter."""
    sql(ws, "UPDATE ws_config SET value = ? WHERE key = ?", value, key)
    after = assert_repaired(ws, "check_ws_config_values", f"ws_config {key}", fragment)
    expected = str(inode_counter(ws)) if repaired_to == "counter" else repaired_to
    assert setting(ws, key) == expected
    assert after.repaired == [f"set ws_config {key} to {expected}"]


@pytest.mark.damages_workspace
def test_an_invalid_watermark_becomes_the_inode_counter(ws: agentfs.Workspace) -> None:
    """-2 is no watermark; it also leaves every snapshot entry above it (check_ws_entry_frozen).
    Setting it to the inode counter, which freezes every inode, answers both."""
    sql(ws, "UPDATE ws_config SET value = '-2' WHERE key = 'snapshot.watermark'")
    after = assert_repaired(
        ws,
        {"check_ws_config_values", "check_ws_entry_frozen"},
        "ws_config snapshot.watermark has an invalid value '-2'",
        "above the watermark",
    )
    assert setting(ws, "snapshot.watermark") == str(inode_counter(ws))
    assert after.repaired == [f"set ws_config snapshot.watermark to {inode_counter(ws)}"]


@pytest.mark.damages_workspace
@pytest.mark.parametrize("key", ["history.keep", "history.max_bytes", "snapshot.watermark"])
def test_a_missing_history_setting_is_put_back(ws: agentfs.Workspace, key: str) -> None:
    """A deleted setting (possible only once the guard trigger is gone) is recreated."""
    sql(ws, "DROP TRIGGER ws_history_guard")
    sql(ws, "DELETE FROM ws_config WHERE key = ?", key)
    assert_repaired(ws, "check_ws_config_values", f"ws_config {key} is missing")
    assert setting(ws, key) is not None


def test_the_guard_trigger_refuses_to_delete_a_setting(ws: agentfs.Workspace) -> None:
    with pytest.raises(apsw.ConstraintError, match="never delete them"):
        sql(ws, "DELETE FROM ws_config WHERE key = 'history.keep'")
    assert fsck.check(ws).clean


# --- ws_version -----------------------------------------------------------------------------------


@pytest.mark.damages_workspace
def test_a_version_whose_inode_is_gone_is_dropped(ws: agentfs.Workspace) -> None:
    """Version 2's frozen inode (and its chunks) deleted: nothing is left to read back, so
    repair drops that version and keeps the others."""
    lost = ws.version("/src/app.py", 2).ino
    assert lost is not None
    sql(ws, "DELETE FROM ws_entry WHERE ino = ?", lost)
    sql(ws, "DELETE FROM fs_data WHERE ino = ?", lost)
    sql(ws, "DELETE FROM fs_inode WHERE ino = ?", lost)
    after = assert_repaired(
        ws, "check_ws_version_inode", f"version 2 of /src/app.py (write) names missing inode {lost}"
    )
    assert after.repaired == ["dropped version 2 of /src/app.py: its content is gone"]
    assert [v.n for v in ws.history("/src/app.py")] == [1, 3]
    assert ws.read_version("/src/app.py", 1) == b"v1"


@pytest.mark.damages_workspace
def test_a_version_whose_kept_bytes_are_gone_is_dropped(ws: agentfs.Workspace) -> None:
    lost = ws.version("/src/app.py", 1).kept
    assert lost is not None
    sql(ws, "DELETE FROM ws_kept WHERE id = ?", lost)
    after = assert_repaired(
        ws,
        "check_ws_version_inode",
        f"version 1 of /src/app.py (write) names missing kept bytes {lost}",
    )
    assert after.repaired == ["dropped version 1 of /src/app.py: its content is gone"]
    assert [v.n for v in ws.history("/src/app.py")] == [2, 3]


@pytest.mark.damages_workspace
def test_kept_bytes_of_the_wrong_size_are_reported(ws: agentfs.Workspace) -> None:
    kept = ws.version("/src/app.py", 1).kept
    sql(ws, "UPDATE ws_kept SET data = x'00' WHERE id = ?", kept)
    assert_reported_only(
        ws, "check_ws_version_inode", f"version 1 of /src/app.py: kept bytes {kept} are 1"
    )


@pytest.mark.damages_workspace
def test_a_version_with_an_inode_and_kept_bytes_is_reported(ws: agentfs.Workspace) -> None:
    live = ino(ws, "/src/app.py")
    sql(ws, "UPDATE ws_version SET ino = ? WHERE path = '/src/app.py' AND n = 1", live)
    assert_reported_only(ws, "check_ws_version_inode", "names both inode")


@pytest.mark.damages_workspace
def test_kept_bytes_no_version_names_are_deleted(ws: agentfs.Workspace) -> None:
    sql(ws, "INSERT INTO ws_kept(id, data) VALUES (999, x'0102')")
    after = assert_repaired(ws, "check_ws_kept_named", "kept bytes 999 belong to no version")
    assert after.repaired == ["deleted kept bytes 999, which no version named"]
    assert one(ws, "SELECT count(*) FROM ws_kept WHERE id = 999") == 0


@pytest.mark.damages_workspace
def test_kept_bytes_two_versions_share_are_reported(ws: agentfs.Workspace) -> None:
    kept = ws.version("/src/app.py", 1).kept
    sql(
        ws,
        "INSERT INTO ws_version(path, n, op, kept, size, hash, at_ns) VALUES ('/y', 1, 'write',"
        " ?, 2, x'00', 0)",
        kept,
    )
    assert_reported_only(ws, "check_ws_kept_named", f"kept bytes {kept} are named by 2 versions")


@pytest.mark.damages_workspace
def test_a_version_naming_a_directory_is_reported(ws: agentfs.Workspace) -> None:
    src = ws.stat("/src")
    sql(
        ws,
        "INSERT INTO ws_version(path, n, op, ino, size, hash, at_ns) VALUES ('/x', 1, 'write',"
        " ?, ?, x'00', 0)",
        src.st_ino,
        src.st_size,
    )
    assert_reported_only(
        ws, "check_ws_version_inode", f"names inode {src.st_ino}, which is not a regular file"
    )


@pytest.mark.damages_workspace
def test_a_version_with_the_wrong_size_is_reported(ws: agentfs.Workspace) -> None:
    """Frozen content never changes size: a mismatch means the inode was changed in place."""
    live = ino(ws, "/src/app.py")
    sql(ws, "UPDATE ws_version SET size = 99 WHERE path = '/src/app.py' AND n = 3")
    assert_reported_only(
        ws, "check_ws_version_inode", f"version 3 of /src/app.py: inode {live} has 2 bytes"
    )


@pytest.mark.damages_workspace
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE ws_version SET n = 0 WHERE path = '/src/app.py' AND n = 1",
        "UPDATE ws_version SET op = 'edit' WHERE path = '/src/app.py' AND n = 1",
        "UPDATE ws_version SET op = 'delete' WHERE path = '/src/app.py' AND n = 1",
        "UPDATE ws_version SET hash = NULL WHERE path = '/src/app.py' AND n = 1",
        "INSERT INTO ws_version(path, n, op, ino, size, hash, at_ns)"
        " VALUES ('/src/app.py', 4, 'write', NULL, NULL, NULL, 0)",
    ],
    ids=["n-0", "unknown-op", "delete-with-content", "no-hash", "write-without-content"],
)
def test_a_malformed_version_is_reported(ws: agentfs.Workspace, statement: str) -> None:
    sql(ws, statement)
    assert_reported_only(ws, "check_ws_version_inode", "is malformed")


# --- ws_snapshot ----------------------------------------------------------------------------------


@pytest.mark.damages_workspace
@pytest.mark.parametrize(
    ("statement", "fragment"),
    [
        ("UPDATE ws_snapshot SET meta = '{turn' WHERE name = 's1'", "meta that is not JSON"),
        ("UPDATE ws_snapshot SET files = -1 WHERE name = 's2'", "negative counts"),
        ("UPDATE ws_snapshot SET bytes = -7 WHERE name = 's2'", "negative counts"),
    ],
)
def test_bad_snapshot_rows_are_reported(
    ws: agentfs.Workspace, statement: str, fragment: str
) -> None:
    sql(ws, statement)
    assert_reported_only(ws, "check_ws_snapshot_meta", fragment)


# --- ws_entry -------------------------------------------------------------------------------------


@pytest.mark.damages_workspace
def test_a_snapshot_entry_whose_inode_is_gone_is_reported(ws: agentfs.Workspace) -> None:
    """A file only a snapshot holds (deleted while versioning was off) loses its inode: the
    snapshot cannot give it back, and nothing can be done but report it."""
    ws.configure_history(keep="none")
    ws.write("/only-in-s3", b"held by s3 alone")
    held = ino(ws, "/only-in-s3")
    ws.snapshots.create("s3")
    ws.remove("/only-in-s3")
    ws.configure_history(keep="all")
    assert fsck.check(ws).clean
    sql(ws, "DELETE FROM fs_data WHERE ino = ?", held)
    sql(ws, "DELETE FROM fs_inode WHERE ino = ?", held)
    assert_reported_only(
        ws, "check_ws_entry_inode", f"entry 'only-in-s3' in directory 1 names missing inode {held}"
    )


def test_an_entry_of_a_deleted_directory_is_fine(ws: agentfs.Workspace) -> None:
    """Directories are never held by history: restore recreates them with their old number."""
    gone = ino(ws, "/docs")
    ws.remove("/docs", recursive=True)
    ws.snapshots.create("s3")
    ws.gc()
    assert one(ws, "SELECT count(*) FROM fs_inode WHERE ino = ?", gone) == 0
    assert one(ws, "SELECT count(*) FROM ws_entry WHERE ino = ?", gone) > 0
    assert fsck.check(ws).clean
    ws.snapshots.restore("s1", "/docs")
    assert ws.stat("/docs").st_ino == gone
    assert ws.read("/docs/readme.md") == b"readme"


@pytest.mark.damages_workspace
@pytest.mark.parametrize(
    ("statement", "fragment"),
    [
        ("UPDATE ws_entry SET died = born WHERE name = 'app.py' AND died IS NOT NULL", "1..1"),
        ("UPDATE ws_entry SET born = 0 WHERE name = 'app.py' AND died IS NOT NULL", "0..2"),
        ("UPDATE ws_entry SET born = 9 WHERE name = 'app.py' AND died IS NULL", "9..None"),
    ],
    ids=["died-at-birth", "born-0", "born-after-the-newest-snapshot"],
)
def test_a_snapshot_entry_with_bad_generations_is_reported(
    ws: agentfs.Workspace, statement: str, fragment: str
) -> None:
    sql(ws, statement)
    assert_reported_only(ws, "check_ws_entry_inode", "entry 'app.py' in directory", fragment)


@pytest.mark.damages_workspace
def test_overlapping_snapshot_entries_are_reported(ws: agentfs.Workspace) -> None:
    """Reopening app.py's closed s1 row makes two rows claim generation 2."""
    sql(ws, "UPDATE ws_entry SET died = NULL WHERE name = 'app.py' AND died IS NOT NULL")
    assert_reported_only(ws, "check_ws_entry_overlap", "entries 'app.py'", "overlap (1, 2)")


@pytest.mark.damages_workspace
def test_entries_above_the_watermark_raise_it(ws: agentfs.Workspace) -> None:
    """A watermark below inodes a snapshot holds would let a write change them in place;
    repair raises it to the inode counter."""
    sql(ws, "UPDATE ws_config SET value = '1' WHERE key = 'snapshot.watermark'")
    after = assert_repaired(ws, "check_ws_entry_frozen", "above the watermark")
    assert after.repaired == ["raised snapshot.watermark to the inode counter"]
    assert setting(ws, "snapshot.watermark") == str(inode_counter(ws))


@pytest.mark.damages_workspace
def test_repair_leaves_no_repairable_problem_for_an_entry_above_the_inode_counter(
    ws: agentfs.Workspace,
) -> None:
    """A directory entry of s1 names an inode number AUTOINCREMENT has not issued yet (restore
    would recreate it, and a later mkdir could be given the same number)."""
    sql(
        ws,
        "INSERT INTO ws_entry(parent, name, born, died, ino, mode, mtime_ns)"
        " VALUES (1, 'gone', 1, 2, ?, ?, 0)",
        inode_counter(ws) + 50,
        DIR_MODE,
    )
    after = fsck.repair(ws)
    assert not any(p.repairable for p in after.problems), after.problems


@pytest.mark.damages_workspace
def test_a_change_not_marked_dirty_is_marked_by_repair(ws: agentfs.Workspace) -> None:
    """A directory changed since s2 but missing from ws_dirty would be skipped by the next
    snapshot; repair marks it, and the next snapshot then records the change."""
    ws.write("/src/new.py", b"new")
    sql(ws, "DELETE FROM ws_dirty")
    src = ino(ws, "/src")
    after = assert_repaired(
        ws, "check_ws_entry_baseline", f"directory {src} changed since the last snapshot"
    )
    assert after.repaired == [f"marked directories [{src}] dirty for the next snapshot"]
    ws.snapshots.create("s3")
    assert "/src/new.py" in [p for p, _ in ws.snapshots.show("s3", "/src")]
    assert fsck.check(ws).clean


@pytest.mark.damages_workspace
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE fs_dentry SET name = 'renamed.md' WHERE name = 'readme.md'",
        "UPDATE fs_inode SET mode = mode & ~146 WHERE ino = (SELECT ino FROM fs_dentry"
        " WHERE name = 'readme.md')",
        "UPDATE fs_inode SET mtime = mtime + 5 WHERE ino = (SELECT ino FROM fs_dentry"
        " WHERE name = 'readme.md')",
    ],
    ids=["rename", "chmod", "mtime"],
)
def test_an_entry_changed_behind_the_dirty_set_is_found(
    ws: agentfs.Workspace, statement: str
) -> None:
    """Every field a snapshot records (name, mode, mtime) counts as a change of /docs."""
    sql(ws, statement)
    assert_repaired(ws, "check_ws_entry_baseline", f"directory {ino(ws, '/docs')} changed")


@pytest.mark.damages_workspace
def test_dirty_marks_without_a_snapshot_are_cleared(tmp_path: Path) -> None:
    """Without a snapshot baseline (watermark -1) nothing should be marked dirty."""
    with agentfs.open(tmp_path / "plain.db") as plain:
        plain.write("/d/f", b"x", parents=True)
        sql(plain, "INSERT INTO ws_dirty(ino) VALUES (1), (?)", ino(plain, "/d"))
        after = assert_repaired(plain, "check_ws_dirty_baseline", "2 directories are marked dirty")
        assert after.repaired == ["cleared ws_dirty (no snapshot baseline)"]
        assert one(plain, "SELECT count(*) FROM ws_dirty") == 0


# --- ws_read --------------------------------------------------------------------------------------


@pytest.mark.damages_workspace
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE ws_read SET thread = ''",
        "UPDATE ws_read SET size = -1",
        "UPDATE ws_read SET ranged = 2",
    ],
    ids=["empty-thread", "negative-size", "ranged-2"],
)
def test_a_malformed_read_record_is_dropped(ws: agentfs.Workspace, statement: str) -> None:
    """Read records are only a cache of what a thread saw: a malformed one is dropped (the
    thread then has to read the file again)."""
    sql(ws, statement)
    after = assert_repaired(ws, "check_ws_read_values", "read record of /src/app.py")
    assert len(after.repaired) == 1 and "/src/app.py" in after.repaired[0]
    assert ws.reads_log() == []


# --- repair and the handle's caches ---------------------------------------------------------------


@pytest.mark.damages_workspace
def test_after_repairing_the_watermark_writes_no_longer_change_snapshots(
    ws_path: Path, ws: agentfs.Workspace
) -> None:
    """Damage by another process lowers the watermark; this handle loads it, repairs it, and
    then writes: the snapshot must keep its content."""
    ws.configure_history(keep="none")  # only the watermark protects the snapshot's inode
    ws.write("/kept", b"snapshotted")
    ws.snapshots.create("s3")
    outside = apsw.Connection(str(ws_path))
    outside.execute("UPDATE ws_config SET value = '1' WHERE key = 'snapshot.watermark'")
    outside.close()
    assert ws.read("/kept") == b"snapshotted"  # a transaction: this handle reloads settings
    assert fsck.repair(ws).problems == []
    ws.pwrite("/kept", b"XX", 0)
    assert ws.snapshots.read("s3", "/kept") == b"snapshotted"
