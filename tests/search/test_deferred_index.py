"""The index is brought up to date when it is read, not when a file is written.

A write commits its file's queue row and nothing more; every query still sees every
committed write: search and grep drain the queue first (in batches, each its own
transaction), a read-only handle's grep reads still-queued files whole, and the background
step and an idle MCP server drain it before anyone asks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import agentfs
from agentfs.search import grep as grep_module
from agentfs.search import index as search_index


def queued(ws: agentfs.Workspace) -> int:
    return int(ws.conn.execute("SELECT count(*) FROM ws_index_queue").get)  # type: ignore[arg-type]


def indexed(ws: agentfs.Workspace) -> int:
    return int(ws.conn.execute("SELECT count(*) FROM ws_index_file").get)  # type: ignore[arg-type]


def test_a_write_only_queues_its_file(ws: agentfs.Workspace) -> None:
    ws.configure_history(keep="none")  # no copy-ups: the same inode is written each time
    ws.write("/a.txt", "alpha beta\n")
    assert (queued(ws), indexed(ws)) == (1, 0)
    ws.append("/a.txt", "alpha gamma\n")
    ws.append("/a.txt", "delta\n")
    assert (queued(ws), indexed(ws)) == (1, 0)  # once, however often it was written
    assert ws.index_status().files == {"text": 1}


@pytest.mark.parametrize(
    "query",
    [
        lambda ws: [h.path for h in ws.search("zeta", mode="bm25").hits],
        lambda ws: ws.grep("zeta", output="files").files,
        lambda ws: ["/b.txt"] * ws.index_status().files.get("text", 0),  # indexed: 1 file
    ],
    ids=["search", "grep", "index_status"],
)
def test_every_query_sees_every_committed_write(ws: agentfs.Workspace, query) -> None:
    ws.write("/b.txt", "zeta\n")
    assert query(ws) == ["/b.txt"]
    assert queued(ws) == 0
    ws.write("/b.txt", "eta\n")  # the old words are gone too
    assert ws.search("zeta", mode="bm25").hits == []
    assert ws.grep("zeta").lines == []


def test_a_query_inside_a_transaction_sees_its_uncommitted_writes(ws: agentfs.Workspace) -> None:
    with ws.transaction():
        ws.write("/c.txt", "omega\n")
        assert [h.path for h in ws.search("omega", mode="bm25").hits] == ["/c.txt"]
    assert queued(ws) == 0
    with pytest.raises(RuntimeError), ws.transaction():
        ws.write("/d.txt", "omega\n")
        assert len(ws.search("omega", mode="bm25").hits) == 2
        raise RuntimeError("roll back the write and its index rows together")
    assert [h.path for h in ws.search("omega", mode="bm25").hits] == ["/c.txt"]
    assert agentfs.fsck.check(ws).clean


def test_the_queue_drains_in_batches_of_files(ws: agentfs.Workspace) -> None:
    n = search_index.BATCH_FILES * 2 + 5
    with ws.transaction():
        for i in range(n):
            ws.write(f"/many/f{i}.txt", f"word{i} common\n", parents=True)
    commits = []
    ws.conn.set_commit_hook(lambda: commits.append(1) or False)
    assert ws.refresh_index(batches=1) == search_index.BATCH_FILES
    assert queued(ws) == n - search_index.BATCH_FILES
    assert ws.refresh_index() == n - search_index.BATCH_FILES
    ws.conn.set_commit_hook(None)
    assert len(commits) == 3  # one transaction per batch, none to find the queue empty
    assert queued(ws) == 0 and indexed(ws) == n
    assert ws.refresh_index() == 0
    assert len(ws.grep("common", output="files").files) == n
    assert agentfs.fsck.check(ws).clean


def test_a_batch_stops_at_its_byte_budget(
    ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_index, "BATCH_BYTES", 3000)
    with ws.transaction():
        for i in range(5):
            ws.write(f"/f{i}.txt", f"w{i} ".ljust(999, "x") + "\n")  # 1,000 bytes each
    assert ws.refresh_index(batches=1) == 3
    assert ws.refresh_index(batches=1) == 2
    big = "x" * 10_000
    ws.write("/big.txt", big)  # over the budget alone: still indexed, on its own
    assert ws.refresh_index(batches=1) == 1
    assert queued(ws) == 0


def test_a_read_only_handle_greps_queued_files_whole(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as writer:
        writer.write("/old.txt", "needle one\n")
        writer.refresh_index()
        writer.write("/old.txt", "needle two\n")  # indexed as "one", queued as "two"
        writer.write("/new.txt", "a needle\n")
        with agentfs.open(path, readonly=True) as reader:
            assert reader.refresh_index() == 0  # it cannot drain
            found = [(ln.path, ln.text) for ln in reader.grep("needle").lines]
            assert found == [("/new.txt", "a needle"), ("/old.txt", "needle two")]
            assert reader.grep("one").lines == []
            waiting = reader.index_status().queued
            assert waiting >= 2
        assert queued(writer) == waiting  # the reader wrote nothing


def test_a_read_only_search_sees_queued_files_as_a_drained_index_would(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as writer:
        writer.write("/old.txt", "zebra crossing\n")
        writer.write("/gone.txt", "zebra stripes\n")
        writer.refresh_index()
        writer.write("/old.txt", "giraffe neck\n")  # indexed as zebra, queued as giraffe
        writer.remove("/gone.txt")
        writer.write("/new.txt", "zebra and giraffe\n")
        before = path.read_bytes(), queued(writer)
        with agentfs.open(path, readonly=True) as reader:
            found = {q: [h.path for h in reader.search(q, mode="bm25").hits] for q in QUERIES}
            hits = reader.search("giraffe", mode="bm25").hits
            assert reader.search("giraffe", mode="bm25", path="/old.txt").hits[0].path == "/old.txt"
        assert (path.read_bytes(), queued(writer)) == before  # the reader wrote nothing
        writer.refresh_index()
        assert found == {q: [h.path for h in writer.search(q, mode="bm25").hits] for q in QUERIES}
    assert found == {"zebra": ["/new.txt"], "giraffe": ["/old.txt", "/new.txt"]}
    assert {h.path: h.snippet for h in hits}["/old.txt"] == "giraffe neck"


QUERIES = ("zebra", "giraffe")


def test_a_read_only_search_copies_again_only_after_another_commit(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as writer:
        writer.write("/a.txt", "alpha\n")
        with agentfs.open(path, readonly=True) as reader:
            index = reader._index  # the search part: which index a query runs on
            first = index.indexed()
            assert first is not index and index.indexed() is first  # kept while unchanged
            writer.write("/b.txt", "alpha beta\n")
            assert [h.path for h in reader.search("beta", mode="bm25").hits] == ["/b.txt"]
            assert index.indexed() is not first
            writer.refresh_index()  # nothing waits: the handle itself answers
            assert index.indexed() is index
        assert writer._index.indexed() is writer._index


# A binary file overwritten with text keeps its inode, and until the queue drains its index row
# still says 'binary': a read-only grep reads it whole instead of skipping it (a case
# test_index_consistency's read-only rule finds)
def test_a_read_only_grep_reads_a_queued_file_that_was_binary(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as writer:
        writer.write("/f", b"\0binary needle")
        writer.refresh_index()
        writer.write("/f", "a needle\n")
        with agentfs.open(path, readonly=True) as reader:
            found = reader.grep("needle")
            assert [(ln.path, ln.text) for ln in found.lines] == [("/f", "a needle")]
            assert found.skipped == []


def test_the_background_step_drains_without_an_embedder(ws: agentfs.Workspace) -> None:
    with ws.embed_in_background(interval=60) as background:
        ws.write("/e.txt", "epsilon\n")
        assert background.drain(timeout=30)
    assert background.error is None
    assert queued(ws) == 0 and indexed(ws) == 1


def test_indexing_off_records_files_as_off_when_drained(ws: agentfs.Workspace) -> None:
    ws.configure_index(enabled=False)
    ws.write("/f.txt", "phi\n")
    assert queued(ws) == 1
    assert ws.index_status().files == {"off": 1}
    assert ws.grep("phi").files == ["/f.txt"]  # grep reads what the index leaves out


def test_grep_indexes_a_little_and_reads_the_rest_whole(
    ws: agentfs.Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_index, "BATCH_FILES", 3)
    with ws.transaction():
        for i in range(10):
            ws.write(f"/f{i}.txt", f"needle {i}\n")
    found = ws.grep("needle", output="files").files
    assert found == sorted(f"/f{i}.txt" for i in range(10))
    assert queued(ws) == 10 - grep_module.DRAIN_BATCHES * 3  # a large import is not indexed by grep
    assert len(ws.search("needle", mode="bm25", top_k=50).hits) == 10  # search indexes it all
    assert queued(ws) == 0
