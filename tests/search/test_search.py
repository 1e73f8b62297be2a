"""``Workspace.search`` and the index around it: ranking, result fields, filters, what is never
returned, what is skipped and said, vectors and embedders, bad inputs, transactions, settings,
rebuild and fsck.

Vectors come from ``HashingEmbedder`` (deterministic, texts are close only when they share
words), except in the test marked MiniLM: the real model (agentfs.search.minilm) embeds about
40 chunks a second, so it is used once, on three tiny documents.
"""

from __future__ import annotations

import errno

import pytest
from search_rows import chunk_rows, chunks_of

import agentfs
from agentfs import fsck
from agentfs.core.errors import EmbedderMismatchError
from agentfs.search.chunking import chunk_text
from agentfs.search.embedders import HashingEmbedder

DOCS = {
    "/docs/retry.md": "# Retry\nRetry a request with exponential backoff.\nBackoff doubles.\n",
    "/docs/cache.md": "# Cache\nKeep responses in a cache.\nEvict the oldest entry.\n",
    "/src/net.py": "def fetch(url):\n    # retry on timeout\n    return get(url)\n",
    "/src/util.py": "def parseConfig(path):\n    return load(path)\n",
}


@pytest.fixture
def corpus(ws: agentfs.Workspace) -> agentfs.Workspace:
    for path, text in DOCS.items():
        ws.write(path, text, parents=True)
    return ws


def bm25(ws: agentfs.Workspace, query: str, **kw: object) -> list[str]:
    return [h.path for h in ws.search(query, mode="bm25", top_k=50, **kw).hits]  # type: ignore[arg-type]


def file_lines(ws: agentfs.Workspace, path: str) -> list[str]:
    """The file's lines as grep and editors number them (split at newlines only)."""
    return ws.read(path).decode().split("\n")


def index_tables(ws: agentfs.Workspace) -> tuple:
    """Every index row, as a query sees them (the queue of written files drained first)."""
    ws.refresh_index()
    conn = ws.conn
    return (
        conn.execute("SELECT * FROM ws_index_file ORDER BY ino").fetchall(),
        chunk_rows(conn),
        sorted(r for (r,) in conn.execute("SELECT rowid FROM ws_fts_chunk")),
        sorted(r for (r,) in conn.execute("SELECT rowid FROM ws_fts_trigram")),
        conn.execute("SELECT * FROM ws_index_queue").fetchall(),
        conn.execute("SELECT * FROM ws_embed_queue ORDER BY text_id").fetchall(),
        conn.execute("SELECT text_id FROM ws_vector ORDER BY text_id").fetchall(),
    )


# --- ranking and result fields -------------------------------------------------------------------


def test_bm25_ranks_the_file_with_the_query_words_first(corpus: agentfs.Workspace) -> None:
    hits = corpus.search("exponential backoff retry", mode="bm25").hits
    assert hits[0].path == "/docs/retry.md"
    assert "/src/net.py" in [h.path for h in hits]  # 'retry' alone
    assert "/docs/cache.md" not in [h.path for h in hits]


def test_result_fields(corpus: agentfs.Workspace) -> None:
    found = corpus.search("cache entry", mode="bm25")
    assert found.mode == "bm25" and found.pending == 0
    top = found.hits[0]
    assert top.path == "/docs/cache.md"
    assert top.score == 1.0
    assert top.score_details == {"bm25": 1.0, "vector": None}
    assert top.line_range == (1, 3)
    assert top.content is None
    assert "cache" in top.snippet.lower()
    for hit in found.hits:
        assert 0.0 <= hit.score <= 1.0


def test_the_line_range_is_the_best_chunk_and_the_snippet_comes_from_it(
    ws: agentfs.Workspace,
) -> None:
    lines = [f"filler line {i} about nothing" for i in range(1, 121)]
    lines[76] = "the needle is here on line seventy-seven"
    ws.write("/long.txt", "\n".join(lines) + "\n")
    hit = ws.search("needle", mode="bm25", snippet_length=60, include_content=True).hits[0]
    assert len(chunks_of(ws.conn, ws.stat("/long.txt").st_ino)) > 2
    first, last = hit.line_range
    assert 1 <= first <= 77 <= last <= 120
    chunk = file_lines(ws, "/long.txt")[first - 1 : last]
    assert hit.content == "".join(line + "\n" for line in chunk)
    assert len(hit.snippet) <= 60
    assert hit.snippet.startswith("the needle is here")
    assert hit.snippet in "\n".join(chunk)


@pytest.mark.parametrize("length", [1, 10, 200])
def test_snippets_are_never_longer_than_asked(corpus: agentfs.Workspace, length: int) -> None:
    for hit in corpus.search("retry cache def", mode="bm25", snippet_length=length).hits:
        assert 0 < len(hit.snippet) <= length
        assert hit.content is None


def test_content_only_when_asked(corpus: agentfs.Workspace) -> None:
    hit = corpus.search("parseConfig", mode="bm25", include_content=True).hits[0]
    assert hit.path == "/src/util.py"
    assert hit.content == DOCS["/src/util.py"]


# --- filters and limits --------------------------------------------------------------------------


def test_path_and_glob_filters(corpus: agentfs.Workspace) -> None:
    assert set(bm25(corpus, "retry")) == {"/docs/retry.md", "/src/net.py"}
    assert bm25(corpus, "retry", path="/src") == ["/src/net.py"]
    assert bm25(corpus, "retry", glob="**/*.md") == ["/docs/retry.md"]
    assert bm25(corpus, "retry", path="/docs", glob="*.py") == []
    with pytest.raises(FileNotFoundError):  # as grep
        bm25(corpus, "retry", path="/no/such/dir")


# search(path=<a regular file>) searches that file, as grep does: walked as a directory only, a
# file path would never be 'at or below path'
def test_a_file_path_searches_that_file(corpus: agentfs.Workspace) -> None:
    assert bm25(corpus, "retry", path="/src/net.py") == ["/src/net.py"]


def test_top_k_and_min_score(corpus: agentfs.Workspace) -> None:
    every = corpus.search("retry cache def", mode="bm25", top_k=10).hits
    assert len(every) == 4
    assert [h.score for h in every] == sorted((h.score for h in every), reverse=True)
    assert [h.path for h in corpus.search("retry cache def", mode="bm25", top_k=2).hits] == [
        h.path for h in every[:2]
    ]
    above = corpus.search("retry cache def", mode="bm25", top_k=10, min_score=0.5).hits
    assert [h.path for h in above] == [h.path for h in every if h.score >= 0.5]
    assert corpus.search("retry cache def", mode="bm25", min_score=1.0).hits[0].score == 1.0


# min_score is compared with the score as hits report it, round(score, 6): compared with the
# unrounded score, a hit reported with score s would be dropped by min_score=s (here /src/net.py,
# reported 2e-06)
def test_a_hits_reported_score_as_min_score_keeps_it(corpus: agentfs.Workspace) -> None:
    every = corpus.search("retry cache def", mode="bm25", top_k=10).hits
    for hit in every:
        kept = corpus.search("retry cache def", mode="bm25", top_k=10, min_score=hit.score).hits
        assert hit.path in [h.path for h in kept], hit


def test_no_hit_is_an_empty_list(corpus: agentfs.Workspace) -> None:
    assert corpus.search("xylophone", mode="bm25").hits == []
    assert corpus.search("+++", mode="bm25").hits == []  # no word at all


# --- what is never returned, what is skipped -----------------------------------------------------


def test_deleted_files_and_old_names_are_never_returned(corpus: agentfs.Workspace) -> None:
    corpus.remove("/docs/cache.md")
    corpus.rename("/docs/retry.md", "/docs/backoff.md")
    corpus.rename("/src", "/lib")
    assert bm25(corpus, "cache") == []
    assert set(bm25(corpus, "retry")) == {"/docs/backoff.md", "/lib/net.py"}
    corpus.remove("/lib", recursive=True)
    assert bm25(corpus, "retry") == ["/docs/backoff.md"]


def test_a_snapshot_restore_brings_files_back_into_search(corpus: agentfs.Workspace) -> None:
    corpus.snapshots.create("before")
    corpus.remove("/docs", recursive=True)
    corpus.write("/docs", "now a file about retry")
    assert bm25(corpus, "backoff") == []
    corpus.snapshots.restore("before")
    assert bm25(corpus, "backoff") == ["/docs/retry.md"]
    corpus.restore_version("/docs/retry.md", 1)
    assert bm25(corpus, "backoff") == ["/docs/retry.md"]


def test_a_hard_linked_file_is_reported_once(corpus: agentfs.Workspace) -> None:
    corpus.link("/docs/cache.md", "/zz-cache-link.md")
    corpus.link("/docs/cache.md", "/a-cache-link.md")
    assert bm25(corpus, "cache") == ["/a-cache-link.md"]  # the first of its names by path
    assert bm25(corpus, "cache", path="/docs") == ["/docs/cache.md"]
    assert bm25(corpus, "cache", glob="zz-*") == ["/zz-cache-link.md"]
    corpus.remove("/a-cache-link.md")
    assert bm25(corpus, "cache") == ["/docs/cache.md"]


def test_binary_and_large_files_are_skipped_and_said(corpus: agentfs.Workspace) -> None:
    corpus.write("/blob.bin", b"cache\0cache")
    corpus.write("/latin1.txt", "cach\u00e9 cache".encode("latin-1"))
    corpus.write("/big.txt", "cache line\n" * 200)
    corpus.configure_index(max_bytes=1000)
    assert bm25(corpus, "cache") == ["/docs/cache.md"]
    status = corpus.index_status()
    assert status.skipped == [
        ("/big.txt", "too_large"),
        ("/blob.bin", "binary"),
        ("/latin1.txt", "binary"),
    ]
    assert status.files == {"text": 4, "binary": 2, "too_large": 1}
    # grep still scans the large file, and says which files it could not read as text
    result = corpus.grep("cache line", output="count")
    assert result.counts == {"/big.txt": 200}
    assert result.skipped == ["/blob.bin", "/latin1.txt"]
    corpus.configure_index(max_bytes=1 << 20)
    assert set(bm25(corpus, "cache")) == {"/docs/cache.md", "/big.txt"}
    assert corpus.index_status().skipped == [("/blob.bin", "binary"), ("/latin1.txt", "binary")]


def test_index_status_counts(corpus: agentfs.Workspace) -> None:
    corpus.write("/long.txt", "".join(f"line {i}\n" for i in range(100)))
    corpus.write("/empty.txt", "")
    status = corpus.index_status()
    expected_chunks = sum(len(chunk_text(corpus.read_text(p))) for p in [*DOCS, "/long.txt"])
    assert status.enabled and status.max_bytes == 1 << 20
    assert status.files == {"text": 6}
    assert status.chunks == expected_chunks == len(chunk_rows(corpus.conn))
    assert status.queued == 0
    assert (status.embedder, status.dim, status.embedded, status.pending) == ("", 0, 0, 0)
    assert status.skipped == []


# --- vectors -------------------------------------------------------------------------------------


def test_without_vectors_hybrid_and_vector_answer_from_bm25_and_say_so(
    corpus: agentfs.Workspace,
) -> None:
    plain = corpus.search("retry")
    assert (plain.mode, plain.note) == ("bm25", None)  # the default without vectors
    for mode in ("vector", "hybrid"):
        found = corpus.search("retry", mode=mode)  # type: ignore[arg-type]
        assert found.mode == "bm25"
        assert [h.path for h in found.hits] == [h.path for h in plain.hits]
        assert found.note is not None and found.note.startswith(f"{mode} search needs vectors")
        assert "agentfs index WS" in found.note
    corpus.index(HashingEmbedder())
    assert corpus.search("retry", mode="hybrid").note is None


def test_vector_mode_finds_the_file_sharing_words(corpus: agentfs.Workspace) -> None:
    status = corpus.index(HashingEmbedder())
    assert (status.embedder, status.dim) == ("hashing-bow-256", 256)
    assert status.embedded == status.chunks and status.pending == 0
    found = corpus.search("keep responses in a cache", mode="vector")
    assert found.mode == "vector"
    top = found.hits[0]
    assert top.path == "/docs/cache.md"
    assert top.score_details["bm25"] is None
    assert top.score == top.score_details["vector"]
    assert 0.0 < top.score <= 1.0
    assert corpus.search("keep responses in a cache").mode == "hybrid"  # the default


def test_hybrid_is_the_union_of_both_rankings(corpus: agentfs.Workspace) -> None:
    """BM25 stems ('retrying' finds 'retry'); the hashing embedder splits camelCase
    ('parseConfig' is 'parse config'): each finds a file the other misses, hybrid both."""
    corpus.index(HashingEmbedder())
    query = "parse config retrying"
    lexical = {h.path for h in corpus.search(query, mode="bm25", top_k=10).hits}
    semantic = {h.path for h in corpus.search(query, mode="vector", top_k=10).hits if h.score > 0}
    assert "/src/util.py" in semantic - lexical
    assert "/src/net.py" in lexical
    hybrid = corpus.search(query, mode="hybrid", top_k=10).hits
    assert lexical | semantic <= {h.path for h in hybrid}
    assert [h.score for h in hybrid] == sorted((h.score for h in hybrid), reverse=True)
    for hit in hybrid:
        assert 0.0 <= hit.score <= 1.0
        assert set(hit.score_details) == {"bm25", "vector"}
        assert any(part is not None for part in hit.score_details.values())
    by_path = {h.path: h for h in hybrid}
    assert by_path["/src/util.py"].score > 0
    assert by_path["/src/net.py"].score_details["bm25"] is not None


def test_new_chunks_wait_for_a_vector_until_index_runs(corpus: agentfs.Workspace) -> None:
    corpus.index(HashingEmbedder())
    corpus.write("/notes/zebra.md", "zebra stripes\n", parents=True)
    found = corpus.search("zebra stripes", mode="vector")
    assert found.pending == 1
    assert "/notes/zebra.md" not in [h.path for h in found.hits]  # no vector yet
    assert corpus.search("zebra", mode="bm25").hits[0].path == "/notes/zebra.md"
    status = corpus.index()  # the stored embedder, by its model id
    assert status.pending == 0 and status.embedded == status.chunks
    found = corpus.search("zebra stripes", mode="vector")
    assert found.pending == 0
    assert found.hits[0].path == "/notes/zebra.md"


def test_an_embedder_of_another_model_is_refused_and_nothing_changes(
    corpus: agentfs.Workspace,
) -> None:
    corpus.index(HashingEmbedder(256))
    before = index_tables(corpus), corpus.index_status()
    with pytest.raises(EmbedderMismatchError):
        corpus.index(HashingEmbedder(dim=128))
    with pytest.raises(EmbedderMismatchError):
        corpus.search("cache", mode="vector", embedder=HashingEmbedder(dim=128))
    assert (index_tables(corpus), corpus.index_status()) == before
    assert corpus.search("cache", mode="vector").hits[0].path == "/docs/cache.md"


def test_replace_switches_the_embedder(corpus: agentfs.Workspace) -> None:
    corpus.index(HashingEmbedder(256))
    status = corpus.index(HashingEmbedder(128), replace=True)
    assert (status.embedder, status.dim) == ("hashing-bow-128", 128)
    assert status.embedded == status.chunks and status.pending == 0
    assert {len(blob) for (blob,) in corpus.conn.execute("SELECT embedding FROM ws_vector")} == {
        128 * 4
    }
    hits = corpus.search("cache", mode="vector", embedder=HashingEmbedder(128)).hits
    assert hits[0].path == "/docs/cache.md"


def test_unchanged_chunks_keep_their_vectors(corpus: agentfs.Workspace) -> None:
    """Operations that leave a file's text as it is (a rename, a hard link, a touch, a
    snapshot) never send its chunks back to the embedding queue. A removed file's vectors go
    with it: restoring it queues its chunks again."""
    corpus.index(HashingEmbedder())
    corpus.rename("/docs/cache.md", "/docs/cache2.md")
    corpus.link("/docs/cache2.md", "/cache-link.md")
    corpus.utime("/docs/cache2.md")
    corpus.write("/docs/cache2.md", DOCS["/docs/cache.md"])  # the same bytes
    corpus.snapshots.create("s")
    status = corpus.index_status()
    assert status.pending == 0 and status.embedded == status.chunks == 4
    corpus.remove("/docs/retry.md")
    assert corpus.index_status().embedded == 3
    corpus.snapshots.restore("s")
    status = corpus.index_status()
    assert (status.chunks, status.embedded, status.pending) == (4, 3, 1)
    assert fsck.check(corpus).clean
    status = corpus.index()
    assert (status.chunks, status.embedded, status.pending) == (4, 4, 0)
    assert corpus.search("exponential backoff", mode="vector").hits[0].path == "/docs/retry.md"


@pytest.mark.damages_workspace
# Re-indexing a file in place (same inode, e.g. history off) whose old chunk was embedded gives
# its new chunk the same id; the new chunk must stay queued for a vector (forgetting the old
# vector must not delete the queue row just made for the new one), or fsck reports 'chunk N has
# no vector and is not queued'
def test_an_edited_file_is_queued_for_a_new_vector(plain_ws: agentfs.Workspace) -> None:
    ws = plain_ws
    ws.write("/a.txt", "alpha bravo\n")
    ws.index(HashingEmbedder())
    ws.write("/a.txt", "charlie delta\n")
    status = ws.index_status()
    assert status.embedded + status.pending == status.chunks == 1
    assert fsck.check(ws).clean
    ws.index()
    assert ws.search("charlie delta", mode="vector").hits[0].score > 0.9


PENDING_REINDEX = {
    "hard link": lambda ws: ws.link("/a.txt", "/b.txt"),
    "utime": lambda ws: ws.utime("/a.txt"),
    "same bytes": lambda ws: ws.write("/a.txt", "alpha bravo\n"),
    "rebuild from content": lambda ws: ws._index.search_index.queue([ws.stat("/a.txt").st_ino]),
    "configure_index": lambda ws: ws.configure_index(max_bytes=1000),
}


# Re-indexing a file whose chunks still wait for a vector (written since the last ws.index(),
# embedder chosen) drops their ws_embed_queue rows first: the new chunk, with the same id
# (ino<<20|seq), is queued again, and an old row left behind would fail with 'UNIQUE constraint
# failed: ws_embed_queue.chunk_id'
@pytest.mark.parametrize("operation", PENDING_REINDEX.values(), ids=PENDING_REINDEX.keys())
def test_a_file_waiting_for_vectors_can_be_reindexed(ws: agentfs.Workspace, operation) -> None:
    ws.index(HashingEmbedder())
    ws.write("/a.txt", "alpha bravo\n")
    with ws.transaction():
        operation(ws)
    assert ws.index_status().pending == 1  # still waiting, queued once


# The same with history off: a second write of a file before ws.index() must not fail with
# 'UNIQUE constraint failed: ws_embed_queue.chunk_id'
def test_a_file_can_be_rewritten_before_it_is_embedded(plain_ws: agentfs.Workspace) -> None:
    ws = plain_ws
    ws.index(HashingEmbedder())
    ws.write("/a.txt", "alpha bravo\n")
    ws.write("/a.txt", "charlie delta\n")
    assert ws.index_status().pending == 1


@pytest.mark.damages_workspace
# Dropping a file's chunks drops the index rows of every chunk with a repeated text, not one per
# digest: a row left behind is what fsck reports as 'ws_fts_chunk row N has no chunk' (and its
# vector as 'has no chunk')
def test_rewriting_a_file_with_repeated_chunks_leaves_no_rows(ws: agentfs.Workspace) -> None:
    ws.write("/a.txt", "zulu\n" * 100)  # three chunks, two of the same text
    ws.write("/a.txt", "other\n")
    assert fsck.check(ws).clean


# With history off the same file keeps its inode and chunk ids, so a stale ws_fts_chunk row of a
# repeated chunk (see above) would be reused: search would find the file for a word it no longer
# holds, and fsck would see nothing wrong
def test_a_word_gone_from_a_file_with_repeated_chunks_is_not_found(
    plain_ws: agentfs.Workspace,
) -> None:
    ws = plain_ws
    ws.write("/a.txt", "zulu\n" * 100)
    ws.write("/a.txt", "".join(f"line {i}\n" for i in range(100)))
    assert bm25(ws, "zulu") == []


# --- bad inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "kw"),
    [
        ("", {}),
        ("   ", {}),
        ("a\0b", {}),
        ("cache", {"top_k": 0}),
        ("cache", {"top_k": -1}),
        ("cache", {"mode": "x"}),
        ("cache", {"vector_weight": 2}),
        ("cache", {"vector_weight": -0.1}),
        ("cache", {"min_score": 1.5}),
        ("cache", {"snippet_length": 0}),
    ],
)
def test_bad_inputs_are_einval(corpus: agentfs.Workspace, query: str, kw: dict) -> None:
    with pytest.raises(OSError) as exc:
        corpus.search(query, **kw)
    assert exc.value.errno == errno.EINVAL


def test_a_negative_size_limit_is_einval(corpus: agentfs.Workspace) -> None:
    with pytest.raises(OSError) as exc:
        corpus.configure_index(max_bytes=-1)
    assert exc.value.errno == errno.EINVAL
    assert corpus.index_status().max_bytes == 1 << 20


# --- transactions and settings -------------------------------------------------------------------


class Boom(Exception):
    pass


def test_a_failed_transaction_leaves_the_index_as_it_was(corpus: agentfs.Workspace) -> None:
    before = index_tables(corpus)
    with pytest.raises(Boom), corpus.transaction():
        corpus.write("/new.md", "zulu zulu\n")
        corpus.write("/docs/cache.md", "zulu replaced the cache\n")
        corpus.remove("/docs/retry.md")
        corpus.configure_index(max_bytes=5)
        raise Boom
    assert index_tables(corpus) == before
    assert bm25(corpus, "zulu") == []
    assert corpus.grep("zulu").files == []
    assert bm25(corpus, "backoff") == ["/docs/retry.md"]
    assert corpus.index_status().max_bytes == 1 << 20


def test_a_transaction_commits_the_index_with_the_writes(corpus: agentfs.Workspace) -> None:
    with corpus.transaction():
        corpus.write("/new.md", "zulu\n")
        corpus.rename("/new.md", "/renamed.md")
        corpus.write("/docs/cache.md", "zulu\n")
    assert set(bm25(corpus, "zulu")) == {"/renamed.md", "/docs/cache.md"}
    assert corpus.index_status().queued == 0


def test_indexing_off_leaves_files_to_grep(corpus: agentfs.Workspace) -> None:
    status = corpus.configure_index(enabled=False)
    assert not status.enabled
    corpus.write("/later.md", "cache written while indexing is off\n")
    assert status.files == {"off": 4}
    assert corpus.index_status().files == {"off": 5}
    assert bm25(corpus, "cache") == []
    assert corpus.grep("cache", ignore_case=True).files == ["/docs/cache.md", "/later.md"]
    assert ("/later.md", "off") in corpus.index_status().skipped
    assert corpus.conn.execute("SELECT count(*) FROM ws_chunk").get == 0
    corpus.configure_index(enabled=True)
    assert set(bm25(corpus, "cache")) == {"/docs/cache.md", "/later.md"}
    assert corpus.index_status().skipped == []


# --- rebuild and fsck ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "corruption",
    [
        "UPDATE ws_chunk SET start_line = 9, end_line = 2",
        "DELETE FROM ws_chunk WHERE id = (SELECT max(id) FROM ws_chunk)",
        # With this row missing, re-indexing the file must still succeed on its chunks.
        "DELETE FROM ws_index_file WHERE rowid = (SELECT min(rowid) FROM ws_index_file)",
        "DELETE FROM ws_fts_trigram WHERE rowid = (SELECT min(rowid) FROM ws_fts_trigram)",
    ],
)
@pytest.mark.damages_workspace  # checked by the test itself
def test_rebuild_restores_a_corrupted_index(corpus: agentfs.Workspace, corruption: str) -> None:
    corpus.write("/long.txt", "".join(f"retry line {i}\n" for i in range(90)))
    expected = index_tables(corpus)
    corpus.conn.execute(corruption)
    assert not fsck.check(corpus).clean
    status = corpus.index(rebuild=True)
    assert status.queued == 0
    assert fsck.check(corpus).clean
    assert index_tables(corpus) == expected
    assert set(bm25(corpus, "retry")) == {"/docs/retry.md", "/src/net.py", "/long.txt"}


def test_fsck_finds_a_deleted_chunk_and_repair_fixes_it(corpus: agentfs.Workspace) -> None:
    corpus.index(HashingEmbedder())
    corpus.conn.execute("DELETE FROM ws_chunk WHERE id = (SELECT min(id) FROM ws_chunk)")
    report = fsck.check(corpus)
    assert {p.check for p in report.problems} >= {"check_ws_chunk_layout", "check_ws_text_fts"}
    assert all(p.repairable for p in report.problems)
    repaired = fsck.repair(corpus)
    assert repaired.repaired
    assert fsck.check(corpus).clean
    status = corpus.index()  # drains what repair queued, embeds again
    assert status.queued == 0 and status.pending == 0 and status.embedded == status.chunks
    assert fsck.check(corpus).clean
    assert bm25(corpus, "backoff") == ["/docs/retry.md"]
    assert corpus.search("keep responses in a cache", mode="vector").hits[0].path == (
        "/docs/cache.md"
    )


# --- line numbers -------------------------------------------------------------------------------


# Chunk line numbers count only \\n, as grep and the file do: str.splitlines also breaks lines at
# \\f, \\v, \\r, \\x1c-\\x1e, \\x85, \\u2028, \\u2029, so counted that way line_range would point
# past the file (here (1, 3) in a 2-line file) and the snippet would rewrite those characters as
# newlines
def test_line_ranges_count_newlines_like_grep(ws: agentfs.Workspace) -> None:
    ws.write("/a.txt", "intro\x0cpage\nalpha here\n")  # a form feed, as in C and Lisp sources
    hit = ws.search("alpha", mode="bm25", include_content=True).hits[0]
    assert ws.grep("alpha").lines[0].line == 2
    assert hit.line_range == (1, 2)
    assert hit.snippet == "intro\x0cpage\nalpha here"


def test_windows_line_ends_keep_line_numbers(ws: agentfs.Workspace) -> None:
    ws.write("/crlf.txt", "one\r\ntwo\r\nalpha three\r\n")
    hit = ws.search("alpha", mode="bm25", include_content=True).hits[0]
    assert hit.line_range == (1, 3)
    assert ws.grep("alpha").lines[0].line == 3
    assert hit.content == "one\r\ntwo\r\nalpha three\r\n"


# --- the real model ------------------------------------------------------------------------------


def test_minilm_ranks_the_gzip_document_first(ws: agentfs.Workspace) -> None:
    """MiniLM (the real model): the query shares no word with the right document beyond
    'data', yet it is the one about compression."""
    from agentfs.search.minilm import MiniLMEmbedder

    ws.write(
        "/notes/archive.md",
        "Shrinking files: pack the logs into a .gz archive to save disk space.\n",
        parents=True,
    )
    ws.write("/notes/api.md", "The API returns JSON objects with nested fields.\n")
    ws.write("/notes/report.md", "Export the table as CSV, one row per line, commas.\n")
    status = ws.index(MiniLMEmbedder())
    assert status.embedded == 3 and status.dim == 384
    hits = ws.search("compress data with gzip", mode="vector").hits
    assert [h.path for h in hits[:1]] == ["/notes/archive.md"]
    assert hits[0].score > hits[1].score
    assert ws.index_status().embedder.startswith("all-MiniLM")
