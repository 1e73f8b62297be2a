"""``agentfs search`` and ``agentfs index``, run in-process through click's CliRunner the way a
user types them, checked through their output and through the library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import assert_user_error, ok, run

import agentfs
from agentfs.search import minilm
from agentfs.search.embedders import HashingEmbedder

DOCS = {
    "/docs/retry.md": "# Retry\nRetry a request with exponential backoff.\n",
    "/docs/cache.md": "# Cache\nKeep responses in a cache.\nEvict the oldest entry.\n",
    "/src/net.py": "def fetch(url):\n    # retry on timeout\n    return get(url)\n",
}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        for name, text in DOCS.items():
            ws.write(name, text, parents=True)
        ws.write("/blob.bin", b"\0retry")
    return path


def test_search_prints_path_lines_score_and_snippet(db: Path) -> None:
    out = ok("search", db, "exponential backoff").stdout.splitlines()
    assert out[0].startswith("/docs/retry.md:1-2  score 1.000 (bm25 1.000)")
    assert "    Retry a request with exponential backoff." in out[1:]
    assert all(not line.startswith("/docs/cache.md") for line in out)


def test_search_json(db: Path) -> None:
    found = json.loads(ok("search", db, "retry", "--json", "-k", "5").stdout)
    assert found["mode"] == "bm25" and found["pending"] == 0
    assert {h["path"] for h in found["hits"]} == {"/docs/retry.md", "/src/net.py"}
    top = found["hits"][0]
    assert set(top) == {"path", "score", "score_details", "line_range", "snippet", "content"}
    assert top["score"] == 1.0 and top["content"] is None
    assert top["score_details"] == {"bm25": 1.0, "vector": None}
    assert top["line_range"][0] >= 1


def test_search_options_reach_the_library(db: Path) -> None:
    found = json.loads(
        ok(
            "search", db, "retry", "--json", "--path", "/src", "--content", "--snippet-length", 8
        ).stdout
    )
    assert [h["path"] for h in found["hits"]] == ["/src/net.py"]
    assert found["hits"][0]["content"] == DOCS["/src/net.py"]
    assert len(found["hits"][0]["snippet"]) <= 8
    found = json.loads(ok("search", db, "retry", "--json", "--glob", "**/*.md").stdout)
    assert [h["path"] for h in found["hits"]] == ["/docs/retry.md"]
    found = json.loads(ok("search", db, "retry", "--json", "-k", "1").stdout)
    assert len(found["hits"]) == 1


def test_search_exits_1_when_nothing_is_found(db: Path) -> None:
    result = run("search", db, "xylophone")
    assert result.exit_code == 1
    assert result.stdout == ""
    result = run("search", db, "xylophone", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["hits"] == []


@pytest.mark.parametrize(
    "args",
    [
        ("--mode", "x"),
        ("--mode", "BM25 "),
        ("-k", "0"),
        ("--weight", "2"),
        ("--min-score", "-1"),
        ("--snippet-length", "0"),
    ],
)
def test_bad_options_are_refused_by_click(db: Path, args: tuple[str, ...]) -> None:
    result = run("search", db, "retry", *args)
    assert result.exit_code == 2
    assert "Invalid value" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_empty_query_is_a_one_line_user_error(db: Path) -> None:
    assert_user_error(run("search", db, " "), "query")


def test_vector_search_without_vectors_answers_from_bm25_and_says_so_on_stderr(
    db: Path,
) -> None:
    result = ok("search", db, "retry", "--mode", "vector")
    assert result.stdout == ok("search", db, "retry", "--mode", "bm25").stdout
    assert result.stderr.startswith("agentfs: vector search needs vectors")
    found = json.loads(ok("search", db, "retry", "--json").stdout)
    assert found["note"] is None
    found = json.loads(ok("search", db, "retry", "--mode", "hybrid", "--json").stdout)
    assert found["mode"] == "bm25" and "agentfs index WS" in found["note"]


@pytest.mark.skipif(not minilm.available(), reason="the embed extra is not installed")
def test_the_first_index_chooses_minilm(db: Path) -> None:
    result = ok("index", db, "--json")
    assert "embedding with minilm" in result.stderr
    status = json.loads(result.stdout)
    assert status["embedder"] == minilm.MODEL_ID and status["pending"] == 0
    found = json.loads(ok("search", db, "keep responses in a cache", "--json").stdout)
    assert (found["mode"], found["note"]) == ("hybrid", None)
    assert found["hits"][0]["path"] == "/docs/cache.md"
    again = ok("index", db)  # chosen once: no second announcement
    assert "embedding with minilm" not in again.stderr


def test_no_embed_keeps_the_index_bm25_only(db: Path) -> None:
    status = json.loads(ok("index", db, "--no-embed", "--json").stdout)
    assert (status["embedder"], status["embedded"]) == ("", 0)


def test_index_status_json(db: Path) -> None:
    status = json.loads(ok("index", db, "--status", "--json").stdout)
    assert status["enabled"] is True
    assert status["max_bytes"] == 1 << 20
    assert status["files"] == {"text": 3, "binary": 1}
    assert status["chunks"] == 3 and status["queued"] == 0
    assert (status["embedder"], status["dim"], status["embedded"], status["pending"]) == (
        "",
        0,
        0,
        0,
    )
    assert status["skipped"] == [["/blob.bin", "binary"]]


def test_index_status_text(db: Path) -> None:
    out = ok("index", db, "--status").stdout
    assert "files:     3 text, 1 binary, 0 too large, 0 not indexed (off)" in out
    assert "embedder:  (none: bm25 only)" in out
    assert "skipped:   /blob.bin (binary)" in out


def test_index_with_the_hashing_embedder_gives_vector_scores(db: Path) -> None:
    status = json.loads(ok("index", db, "--embedder", "hashing", "--json").stdout)
    assert status["embedder"] == "hashing-bow-256" and status["dim"] == 256
    assert status["embedded"] == status["chunks"] == 3 and status["pending"] == 0
    found = json.loads(ok("search", db, "keep responses in a cache", "--json").stdout)
    assert found["mode"] == "hybrid"
    assert found["hits"][0]["path"] == "/docs/cache.md"
    assert found["hits"][0]["score_details"]["vector"] > 0
    text = ok("search", db, "keep responses in a cache", "--mode", "vector").stdout
    assert text.splitlines()[0].startswith("/docs/cache.md:1-3  score ")
    assert "(vector " in text.splitlines()[0]
    # a write leaves chunks waiting; search says so; `agentfs index` embeds them
    with agentfs.open(db) as ws:
        ws.write("/docs/new.md", "fresh cache notes\n")
    text = ok("search", db, "cache", "--mode", "hybrid").stdout
    assert "(1 chunks wait for a vector: run agentfs index WS)" in text
    status = json.loads(ok("index", db, "--json").stdout)
    assert status["pending"] == 0 and status["embedded"] == 4


def switch_to_hashing_128(db: Path) -> None:
    ok("index", db, "--embedder", "hashing")
    with agentfs.open(db) as ws:
        ws.index(HashingEmbedder(128), replace=True)


def test_another_embedder_is_refused_unless_replaced(db: Path) -> None:
    switch_to_hashing_128(db)
    assert_user_error(
        run("index", db, "--embedder", "hashing"), "hashing-bow-128", "hashing-bow-256"
    )
    with agentfs.open(db) as ws:
        assert ws.index_status().embedder == "hashing-bow-128"
    status = json.loads(ok("index", db, "--embedder", "hashing", "--replace", "--json").stdout)
    assert (status["embedder"], status["embedded"]) == ("hashing-bow-256", 3)


# The EmbedderMismatchError message (vectors.choose) gives advice that works: --replace switches
# models, --rebuild does not (following advice to rebuild would fail with the same error)
def test_the_mismatch_advice_works(db: Path) -> None:
    switch_to_hashing_128(db)
    refused = run("index", db, "--embedder", "hashing")
    assert_user_error(refused, "new model: ")
    advice = refused.stderr.split("new model: ", 1)[1].split(" (Python", 1)[
        0
    ]  # agentfs index WS ...
    args = advice.split()[3:]  # after "agentfs index WS"
    args = ["hashing" if a == "NAME" else a for a in args]
    ok("index", db, *args)


# 'agentfs index WS --embedder no-such-model' is a one-line user error ('agentfs: ...', exit 1),
# not a traceback of the ValueError embedders.builtin raises
def test_an_unknown_embedder_is_a_user_error(db: Path) -> None:
    assert_user_error(run("index", db, "--embedder", "no-such-model"), "no-such-model")


def test_rebuild(db: Path) -> None:
    with agentfs.open(db) as ws:
        ws.refresh_index()  # the fixture's writes are only queued until the index is read
        ws.conn.execute("UPDATE ws_chunk SET start_line = 7, end_line = 1")
        assert not agentfs.fsck.check(ws).clean
    status = json.loads(ok("index", db, "--rebuild", "--json").stdout)
    assert status["chunks"] == 3 and status["queued"] == 0
    with agentfs.open(db) as ws:
        assert agentfs.fsck.check(ws).clean
    ok("index", db, "--rebuild", "--path", "/docs")
    assert ok("fsck", db).exit_code == 0


def test_off_and_on(db: Path) -> None:
    status = json.loads(ok("index", db, "--off", "--status", "--json").stdout)
    assert status["enabled"] is False
    assert status["files"] == {"off": 4}
    assert run("search", db, "retry").exit_code == 1
    assert ok("grep", db, "backoff", "-l").stdout.splitlines() == ["/docs/retry.md"]
    status = json.loads(ok("index", db, "--on", "--json").stdout)
    assert status["enabled"] is True
    assert status["files"] == {"text": 3, "binary": 1}
    assert ok("search", db, "backoff").stdout.startswith("/docs/retry.md:")


def test_max_size(db: Path) -> None:
    status = json.loads(ok("index", db, "--max-size", "50", "--status", "--json").stdout)
    assert status["max_bytes"] == 50
    too_large = {p for p, why in status["skipped"] if why == "too_large"}
    assert too_large == {p for p, text in DOCS.items() if len(text.encode()) > 50}
    assert run("index", db, "--max-size", "-1").exit_code == 2
    status = json.loads(ok("index", db, "--max-size", 1 << 20, "--json").stdout)
    assert status["files"] == {"text": 3, "binary": 1}


def test_commands_refuse_a_missing_workspace(tmp_path: Path) -> None:
    for args in (("search", "q"), ("index", "--status")):
        result = run(args[0], tmp_path / "missing.db", *args[1:])
        assert result.exit_code == 1
        assert "no such workspace" in result.stderr
        assert not (tmp_path / "missing.db").exists()
