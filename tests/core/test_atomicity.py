"""Every failed operation leaves the database exactly as it was.

The proof is taken from outside: ``all_rows`` opens a second, read-only apsw connection and
reads every table (``sqlite_sequence`` included, so even a consumed AUTOINCREMENT number would
show), before and after the failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from failure_cases import ALL_CASES, Case, populate
from table_rows import all_rows

import agentfs
from agentfs.core.chunks import Chunks


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
