"""Every failed operation leaves the database exactly as it was.

The proof is taken from outside: ``all_rows`` opens a second, read-only apsw connection and
reads every table (``sqlite_sequence`` included, so even a consumed AUTOINCREMENT number would
show), before and after the failure.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from failure_cases import ALL_CASES, Case, populate

import agentfs
from agentfs.core.chunks import Chunks
from agentfs.db import DoomedBlockError
from tests.table_rows import all_rows, rows_seen_by


@pytest.fixture
def populated(ws: agentfs.Workspace) -> agentfs.Workspace:
    """The tree of the error cases, with content over several chunks and a kv entry."""
    populate(ws, big=b"x" * 200_000)
    ws.kv.set("k", {"v": 1})
    return ws


@pytest.mark.parametrize("case", ALL_CASES.values(), ids=ALL_CASES.keys())
def test_failed_operation_changes_no_row(
    populated: agentfs.Workspace, ws_path: Path, case: Case
) -> None:
    before = all_rows(ws_path)
    with pytest.raises(OSError):
        case.call(populated)
    assert all_rows(ws_path) == before


def test_failed_non_json_writes_change_no_row(ws: agentfs.Workspace, ws_path: Path) -> None:
    before = all_rows(ws_path)
    with pytest.raises(agentfs.InvalidValueError):
        ws.kv.set("k", object())
    with pytest.raises(agentfs.InvalidValueError):
        ws.tool_calls.record("t", {"bad": {1, 2}}, started_at=1.0, completed_at=2.0)
    assert all_rows(ws_path) == before


def test_write_with_parents_below_a_file_creates_no_directory(
    ws: agentfs.Workspace, ws_path: Path
) -> None:
    ws.write("/a/b", b"a file in the way", parents=True)
    before = all_rows(ws_path)
    with pytest.raises(NotADirectoryError):
        ws.write("/a/b/c/d/f", b"", parents=True)
    with pytest.raises(NotADirectoryError):
        ws.mkdir("/a/b/c/d", parents=True)
    assert all_rows(ws_path) == before


@pytest.fixture
def failing_chunks(monkeypatch: pytest.MonkeyPatch) -> type[RuntimeError]:
    """Make every insert of new content chunks fail, as a full disk would mid-transaction."""

    class InjectedFailure(RuntimeError):
        pass

    def append_new(self: Chunks, ino: int, first_index: int, data: bytes) -> None:
        raise InjectedFailure(f"injected failure writing inode {ino}")

    monkeypatch.setattr(Chunks, "append_new", append_new)
    return InjectedFailure


def test_failure_after_creating_parents_rolls_them_back(
    ws: agentfs.Workspace, ws_path: Path, failing_chunks: type[RuntimeError]
) -> None:
    ws.mkdir("/existing")
    before = all_rows(ws_path)
    with pytest.raises(failing_chunks):
        ws.write("/existing/new/deeper/f", b"content", parents=True)
    assert all_rows(ws_path) == before
    assert ws.listdir("/existing") == []


def test_rolled_back_directories_do_not_linger_in_the_directory_cache(
    ws: agentfs.Workspace, ws_path: Path, failing_chunks: type[RuntimeError]
) -> None:
    with pytest.raises(failing_chunks):
        ws.write("/new/deeper/f", b"content", parents=True)
    before = all_rows(ws_path)
    for call in (
        lambda: ws.write("/new/deeper/g", b""),  # empty content: no chunk insert needed
        lambda: ws.mkdir("/new/deeper/sub"),
        lambda: ws.symlink("x", "/new/deeper/l"),
        lambda: ws.listdir("/new/deeper"),
    ):
        with pytest.raises(FileNotFoundError):
            call()
    assert all_rows(ws_path) == before


def test_failed_replace_keeps_the_old_content(
    small_ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_ws.write("/f", b"old" * 500)
    monkeypatch.setattr(Chunks, "append_new", _raise_injected)  # after a copy-down moved them
    monkeypatch.setattr(Chunks, "replace", _raise_injected_replace)  # an in-place rewrite
    with pytest.raises(RuntimeError):
        small_ws.write("/f", b"new" * 700)
    assert small_ws.read("/f") == b"old" * 500
    assert small_ws.stat("/f").st_size == 1500


def _raise_injected(self: Chunks, ino: int, first_index: int, data: bytes) -> None:
    raise RuntimeError(f"injected failure writing inode {ino}")


def _raise_injected_replace(self: Chunks, ino: int, data: bytes, old_size: int) -> None:
    raise RuntimeError(f"injected failure rewriting inode {ino}")


def test_failure_midway_through_a_recursive_copy_leaves_no_partial_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "copy.db"
    with agentfs.open(db) as ws:
        for i in range(5):
            ws.write(f"/src/sub{i}/f", f"file {i}".encode(), parents=True)
        before = all_rows(db)
        calls = []
        real = Chunks.append_new

        def fail_on_the_third_file(self: Chunks, ino: int, first: int, data: bytes) -> None:
            calls.append(ino)
            if len(calls) == 3:
                raise RuntimeError("injected failure on the third file")
            real(self, ino, first, data)

        monkeypatch.setattr(Chunks, "append_new", fail_on_the_third_file)
        with pytest.raises(RuntimeError):
            ws.copy("/src", "/dst", recursive=True)
        assert all_rows(db) == before
        assert not ws.exists("/dst")
        monkeypatch.undo()
        ws.copy("/src", "/dst", recursive=True)
        assert ws.read("/dst/sub4/f") == b"file 4"


# --- all-or-nothing blocks: transaction(savepoints=False) -----------------------------------


@pytest.mark.parametrize("case", ALL_CASES.values(), ids=ALL_CASES.keys())
def test_a_caught_failure_in_a_block_commits_untouched_or_dooms_the_block(
    populated: agentfs.Workspace, ws_path: Path, case: Case
) -> None:
    """Every failing operation, its error caught inside a block without savepoints: if it
    changed nothing the block commits just what came before it; if it changed anything the
    whole block rolls back and says so. Never a half-done operation committed."""
    before = all_rows(ws_path)
    untouched = None
    try:
        with populated.transaction(savepoints=False):
            populated.write("/earlier", b"kept")
            earlier = rows_seen_by(populated.conn)
            with pytest.raises(OSError):
                case.call(populated)
            untouched = rows_seen_by(populated.conn) == earlier
    except DoomedBlockError:
        assert untouched is False
        assert all_rows(ws_path) == before
    else:
        assert untouched is True
        assert all_rows(ws_path) == earlier


def test_a_failure_half_way_dooms_the_block(
    ws: agentfs.Workspace, ws_path: Path, failing_chunks: type[RuntimeError]
) -> None:
    """An operation that fails after changing something (here: after creating the parents
    of its file), its error caught: the block rolls back whole at its end."""
    ws.mkdir("/existing")
    before = all_rows(ws_path)
    with pytest.raises(DoomedBlockError), ws.transaction(savepoints=False):
        ws.mkdir("/existing/made")
        with pytest.raises(failing_chunks):
            ws.write("/existing/new/deeper/f", b"content", parents=True)
    assert all_rows(ws_path) == before
    assert ws.listdir("/existing") == []
    ws.mkdir("/existing/after")  # the handle goes on: its caches were dropped
    assert ws.listdir("/existing") == ["after"]
    with ws.transaction(savepoints=False):  # the handle's next block starts undoomed
        ws.mkdir("/existing/next")
    assert ws.listdir("/existing") == ["after", "next"]


def test_a_block_entered_twice_at_once_is_refused(ws: agentfs.Workspace) -> None:
    """A handle reuses its one block object; entering it again while it is open (held from
    before it was entered) is refused, and the open block goes on unharmed."""
    block = ws.transaction(savepoints=False)
    again = ws.transaction(savepoints=False)
    with block:
        ws.write("/a", b"1")
        with pytest.raises(RuntimeError, match="open already"), again:
            pass
        ws.write("/b", b"2")
    assert ws.read("/a") == b"1" and ws.read("/b") == b"2"


def test_a_block_takes_no_savepoints_and_a_nested_one_is_a_level(ws: agentfs.Workspace) -> None:
    """Inside a block the operations run without savepoints; a block asked for inside
    another transaction is a level of it (a savepoint, undone alone)."""
    statements: list[str] = []
    ws.conn.exec_trace = lambda cursor, sql, bindings: statements.append(sql) or True
    with ws.transaction(savepoints=False):
        ws.write("/a", b"1")
        ws.mkdir("/d")
    assert not any("SAVEPOINT" in sql for sql in statements)
    with ws.transaction():
        ws.write("/b", b"2")
        with pytest.raises(FileExistsError), ws.transaction(savepoints=False):
            ws.write("/c", b"3")
            ws.mkdir("/d")
    ws.conn.exec_trace = None
    assert ws.read("/b") == b"2" and not ws.exists("/c")
    assert any("SAVEPOINT" in sql for sql in statements)


def test_a_read_only_handle_opens_no_block(ws_path: Path) -> None:
    agentfs.open(ws_path).close()
    with agentfs.open(ws_path, readonly=True) as reader, pytest.raises(OSError) as info:
        reader.transaction(savepoints=False)
    assert info.value.errno == errno.EROFS


def test_an_uncaught_failure_rolls_a_block_back(ws: agentfs.Workspace, ws_path: Path) -> None:
    before = all_rows(ws_path)
    with pytest.raises(FileNotFoundError), ws.transaction(savepoints=False):
        ws.write("/a", b"1")
        ws.read("/missing")
    assert all_rows(ws_path) == before
