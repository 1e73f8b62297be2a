"""The index by chunk text (schema/migrations/0007-texts.sql): each distinct chunk text is
tokenised, stored and embedded once, however many files hold it, and every file holding it is
still found; its rows go with the last chunk holding it; migration 7 converts a schema-6 index;
fsck sees damage to the text tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import agentfs
from agentfs import db, fsck
from agentfs.search.chunking import chunk_text
from agentfs.search.embedders import HashingEmbedder
from tests.old_schema import index_as_schema_6

#: Three chunks of distinct text (40-line chunks overlapping by 5 lines).
LONG = "".join(f"alpha line {i} of the long file\n" for i in range(100))


def rows(ws: agentfs.Workspace, table: str) -> int:
    ws.refresh_index()
    return int(ws.conn.execute(f"SELECT count(*) FROM {table}").get)  # type: ignore[arg-type]


def text_rows(ws: agentfs.Workspace) -> dict[str, int]:
    """Rows of each per-text table: they must all agree."""
    return {t: rows(ws, t) for t in ("ws_text", "ws_fts_chunk", "ws_fts_trigram")}


def bm25(ws: agentfs.Workspace, query: str) -> list[str]:
    return [h.path for h in ws.search(query, mode="bm25", top_k=50).hits]


def test_copies_are_indexed_once_and_each_is_found(ws: agentfs.Workspace) -> None:
    pieces = len(chunk_text(LONG))
    assert pieces == 3
    for name in ("a", "b", "c"):
        ws.write(f"/{name}.txt", LONG)
    assert text_rows(ws) == dict.fromkeys(("ws_text", "ws_fts_chunk", "ws_fts_trigram"), 3)
    assert rows(ws, "ws_chunk") == 9
    assert ws.index_status().chunks == 3
    assert bm25(ws, "alpha") == ["/a.txt", "/b.txt", "/c.txt"]
    assert ws.grep("line 77 ").files == ["/a.txt", "/b.txt", "/c.txt"]
    assert ws.grep("line 77 ").lines[0].line == 78


def test_files_holding_the_same_text_score_the_same_in_inode_order(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/z.txt", "zulu quebec\n")
    ws.write("/m.txt", "zulu quebec\n")
    ws.write("/a.txt", "zulu only\n")
    hits = ws.search("zulu quebec", mode="bm25").hits
    assert [h.path for h in hits] == ["/z.txt", "/m.txt", "/a.txt"]
    assert hits[0].score == hits[1].score == 1.0 > hits[2].score


def test_a_file_deleted_while_its_copy_remains_is_found_through_the_copy(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/a.txt", LONG)
    ws.write("/b.txt", LONG)
    ws.refresh_index()
    ws.remove("/a.txt")
    assert bm25(ws, "alpha") == ["/b.txt"]
    assert ws.grep("line 99 ").files == ["/b.txt"]
    assert text_rows(ws)["ws_text"] == 3
    assert fsck.check(ws).clean


def test_editing_one_copy_leaves_the_other_as_it_was(ws: agentfs.Workspace) -> None:
    ws.write("/a.txt", LONG)
    ws.write("/b.txt", LONG)
    ws.refresh_index()
    before = [(h.path, h.score, h.line_range) for h in ws.search("line 12", mode="bm25").hits]
    ws.write("/a.txt", LONG.replace("alpha line 12 ", "zulu line 12 "))
    assert bm25(ws, "zulu") == ["/a.txt"]
    assert ws.grep("alpha line 12 ").files == ["/b.txt"]
    assert ws.grep("zulu").files == ["/a.txt"]
    after = {h.path: (h.score, h.line_range) for h in ws.search("line 12", mode="bm25").hits}
    assert after["/b.txt"][1] == dict((p, r) for p, _s, r in before)["/b.txt"]
    assert text_rows(ws)["ws_text"] == 4  # the edited chunk is a fourth text
    assert fsck.check(ws).clean


def test_an_edit_tokenises_only_the_chunks_it_changed(ws: agentfs.Workspace) -> None:
    ws.write("/a.txt", LONG)
    ws.refresh_index()
    old = dict(ws.conn.execute("SELECT id & 1048575, text_id FROM ws_chunk"))
    ws.write("/a.txt", LONG.replace("alpha line 95 ", "zulu line 95 "))  # the last chunk
    ws.refresh_index()
    new = dict(ws.conn.execute("SELECT id & 1048575, text_id FROM ws_chunk"))
    assert [old[s] == new[s] for s in sorted(old)] == [True, True, False]
    assert text_rows(ws)["ws_text"] == 3  # the old last text went


def test_the_last_file_holding_a_text_takes_its_rows(ws: agentfs.Workspace) -> None:
    ws.index(HashingEmbedder())
    ws.write("/a.txt", LONG)
    ws.write("/b.txt", LONG)
    ws.write("/other.txt", "something else\n")
    status = ws.index()
    assert (status.chunks, status.embedded, status.pending) == (4, 4, 0)
    ws.remove("/a.txt")
    assert text_rows(ws)["ws_text"] == 4
    ws.remove("/b.txt")
    assert text_rows(ws) == dict.fromkeys(("ws_text", "ws_fts_chunk", "ws_fts_trigram"), 1)
    assert rows(ws, "ws_vector") == rows(ws, "ws_vec") == 1
    assert bm25(ws, "alpha") == [] and ws.grep("alpha").files == []
    assert fsck.check(ws).clean


def test_a_copy_needs_no_embedding(ws: agentfs.Workspace) -> None:
    ws.index(HashingEmbedder())
    ws.write("/a.txt", LONG)
    assert ws.index().embedded == 3
    ws.copy("/a.txt", "/b.txt")
    ws.write("/c.txt", LONG)
    assert ws.index_status().pending == 0
    hits = ws.search("alpha line", mode="vector", top_k=5).hits
    assert {h.path for h in hits} == {"/a.txt", "/b.txt", "/c.txt"}


def test_a_rebuild_retokenises_and_keeps_the_vectors(ws: agentfs.Workspace) -> None:
    ws.index(HashingEmbedder())
    ws.write("/a.txt", LONG)
    ws.write("/b.txt", LONG)
    ws.index()
    vectors = dict(
        ws.conn.execute(
            "SELECT t.digest, v.embedding FROM ws_vector v JOIN ws_text t ON t.id = v.text_id"
        )
    )
    ws.conn.execute("DELETE FROM ws_fts_trigram WHERE rowid = (SELECT min(id) FROM ws_text)")
    assert not fsck.check(ws).clean
    status = ws.index(rebuild=True, path="/a.txt")  # /b.txt holds the same texts
    assert (status.queued, status.pending, status.embedded) == (0, 0, 3)
    assert fsck.check(ws).clean
    assert ws.grep("line 1 ").files == ["/a.txt", "/b.txt"]
    assert vectors == dict(
        ws.conn.execute(
            "SELECT t.digest, v.embedding FROM ws_vector v JOIN ws_text t ON t.id = v.text_id"
        )
    )


# --- migration 7 ---------------------------------------------------------------------------------


def test_a_schema_6_index_is_converted(ws_path: Path) -> None:
    """A schema-6 workspace with an index and vectors: after migration 7 every file is still
    found, the copies' texts are held once, and no vector is computed again."""
    embedder = HashingEmbedder()
    with agentfs.open(ws_path) as ws:
        ws.index(embedder)
        for name in ("a", "b"):
            ws.write(f"/{name}.txt", LONG)
        ws.write("/c.txt", "charlie bravo\n")
        ws.index()
        expected = [(h.path, h.line_range) for h in ws.search("alpha line 7", top_k=5).hits]
        index_as_schema_6(ws)
        assert ws.conn.execute("SELECT count(*) FROM ws_fts_chunk").get == 7  # one per chunk
    with agentfs.open(ws_path) as ws:
        assert db.schema_version(ws.conn) == db.SCHEMA_VERSION
        assert ws.conn.execute("SELECT count(*) FROM ws_index_queue").get == 3
        status = ws.index_status()  # drains the queue
        assert (status.chunks, status.embedded, status.pending) == (4, 4, 0)
        assert rows(ws, "ws_vector_parked") == 0
        for text, blob in ws.conn.execute(
            "SELECT c.start_byte, v.embedding FROM ws_vector v JOIN ws_chunk c"
            " ON c.text_id = v.text_id"
        ):
            assert isinstance(text, int)
            assert np.frombuffer(blob, dtype=np.float32).shape == (embedder.dim,)
        got = [(h.path, h.line_range) for h in ws.search("alpha line 7", top_k=5).hits]
        assert got == expected
        assert ws.grep("charlie").files == ["/c.txt"]
        assert fsck.check(ws).clean


# --- grep by text ------------------------------------------------------------------------------


def grep_reference(files: dict[str, str], needle: str) -> list[tuple[str, int, str]]:
    """What grep must print: every line holding ``needle``, per file in path order."""
    return [
        (path, n, line)
        for path in sorted(files)
        for n, line in enumerate(files[path].splitlines(), 1)
        if needle in line
    ]


def grep_lines(ws: agentfs.Workspace, needle: str) -> list[tuple[str, int, str]]:
    return [(g.path, g.line, g.text) for g in ws.grep(needle, fixed_strings=True).lines]


def test_grep_takes_a_line_in_two_overlapping_chunks_once_in_every_copy(
    ws: agentfs.Workspace,
) -> None:
    # every line matches, so each overlap of two chunks holds matching lines of both
    files = {"/a.txt": LONG, "/b/copy.txt": LONG, "/c.txt": LONG.replace("line 50 ", "LINE 50 ")}
    for path, text in files.items():
        ws.write(path, text, parents=True)
    assert grep_lines(ws, "alpha") == grep_reference(files, "alpha")
    assert grep_lines(ws, "line 3") == grep_reference(files, "line 3")
    assert ws.grep("alpha", output="count").counts == {p: 100 for p in files}


def test_a_read_only_grep_does_not_read_a_shared_text_from_a_stale_holder(
    tmp_path: Path,
) -> None:
    """The first indexed holder of a text is changed and left queued: a read-only handle
    (which cannot drain) must read the text from a current holder, and the changed file
    whole."""
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        ws.write("/a.txt", LONG)
        ws.write("/b.txt", LONG)
        ws.refresh_index()
        ws.write("/a.txt", LONG.replace("alpha", "omega"))  # queued, its chunk rows stale
        files = {"/a.txt": ws.read_text("/a.txt"), "/b.txt": LONG}
        with agentfs.open(path, readonly=True) as reader:
            for needle in ("alpha", "omega", "line 7"):
                assert grep_lines(reader, needle) == grep_reference(files, needle)


# --- fsck ----------------------------------------------------------------------------------------

TEXT_DAMAGE = {
    "a text row gone": "DELETE FROM ws_text WHERE id = (SELECT max(id) FROM ws_text)",
    "a text no chunk holds": "INSERT INTO ws_text(digest) VALUES (x'00')",
    "a chunk naming no text": "UPDATE ws_chunk SET text_id = 9999 WHERE id = (SELECT min(id)"
    " FROM ws_chunk)",
    "a BM25 row gone": "DELETE FROM ws_fts_chunk WHERE rowid = (SELECT min(id) FROM ws_text)",
    "a stray trigram row": "INSERT INTO ws_fts_trigram(rowid, text) VALUES (9999, 'stray')",
    "a vector of no text": "UPDATE ws_vector SET text_id = 9999 WHERE text_id = (SELECT"
    " min(id) FROM ws_text)",
    "a text neither embedded nor queued": "DELETE FROM ws_vector WHERE text_id = (SELECT"
    " min(id) FROM ws_text)",
    "a parked vector of the wrong size": "INSERT INTO ws_vector_parked VALUES (x'00', x'00')",
}


@pytest.mark.parametrize("damage", TEXT_DAMAGE.values(), ids=TEXT_DAMAGE.keys())
@pytest.mark.damages_workspace  # repaired and checked by the test itself
def test_fsck_finds_damage_to_the_text_tables_and_repairs_it(
    ws: agentfs.Workspace, damage: str
) -> None:
    ws.index(HashingEmbedder())
    ws.write("/a.txt", LONG)
    ws.write("/b.txt", LONG)
    ws.write("/c.txt", "charlie\n")
    ws.index()
    assert fsck.check(ws).clean
    ws.conn.execute(damage)
    report = fsck.check(ws)
    assert not report.clean and all(p.repairable for p in report.problems)
    fsck.repair(ws)
    ws.index()
    assert fsck.check(ws).clean
    assert bm25(ws, "alpha") == ["/a.txt", "/b.txt"]
    assert ws.grep("charlie").files == ["/c.txt"]
