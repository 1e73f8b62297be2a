"""The search index against a brute-force recomputation, under random workspace operations.

A hypothesis state machine writes (text, multi-line text long enough for several chunks, binary
with a NUL, invalid UTF-8, empty), appends, pwrites, truncates, renames files and directories,
removes (recursively too), hard-links, symlinks, copies, takes and restores snapshots, restores
old versions, fails transactions on purpose and changes the index settings. After every step:

- the index holds exactly the live regular files, each in the state its bytes and the settings
  give ('off' / 'too_large' / 'binary' / 'text'), at its size, with the chunks
  ``chunk_text`` makes of its text (line ranges and digests), one text row, one BM25 row and one
  trigram document per distinct chunk text (however many chunks hold it), and nothing for any
  other inode; the BM25 and trigram tables
  answer a few queries exactly like fresh FTS5 tables built from the same texts (no stale or
  missing tokens);
- ``grep`` finds exactly what a plain ``re`` scan of every text file finds (the trigram
  filter never loses a match), and skips exactly the files that are not UTF-8 text;
- ``search(mode="bm25")`` returns exactly the live text files holding the word, once each;
- fsck finds the workspace clean.
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata

import apsw
import numpy as np
import pytest
import re2
from hypothesis import HealthCheck, Phase
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule
from search_rows import chunk_rows

import agentfs
from agentfs.core.digests import digest
from agentfs.core.errors import AgentFSError
from agentfs.search.chunking import chunk_text, decode_text
from agentfs.search.chunking import lines_of as chunk_lines
from agentfs.search.embedders import HashingEmbedder
from tests.model import WorkspaceMachine, machine_settings, paths

PATHS = paths(("a", "b", "c", "d"))
#: Words for text lines: ASCII in all cases, non-ASCII that re.IGNORECASE equates with ASCII
#: (Kelvin sign, long s, dotted capital I), accents, punctuation, indentation, blanks.
WORDS = (
    "alpha",
    "Bravo",
    "CHARLIE",
    "delta echo",
    "x = 1",
    "a.b",
    "caf\u00e9",
    "\u212aelvin",
    "\u017ftop",
    "\u0130stanbul",
    "\u0131stanbul",
    "na\u00efve",
    "",
    "    indented",
    "def f():",
)
LINE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
TEXT = st.builds(
    lambda lines, end: "\n".join(lines) + end,
    st.lists(LINE, max_size=8),
    st.sampled_from(["", "\n"]),
)
#: Long enough for several overlapping chunks (40 lines each at most).
LONG = st.builds(
    lambda n, word: "".join(f"{word} line {i}\n" for i in range(n)),
    st.integers(30, 100),
    st.sampled_from(["alpha", "bravo", "    body"]),
)
DATA = st.one_of(
    TEXT.map(str.encode),
    LONG.map(str.encode),
    TEXT.map(lambda t: t.encode() + b"\0" + b"alpha"),  # binary: a NUL
    TEXT.map(lambda t: b"\xff\xfe" + t.encode()),  # not UTF-8
    st.just(b""),
    st.binary(max_size=24),
)
#: search.max_bytes values: everything too large, small files only, the default.
MAX_BYTES = st.sampled_from([0, 16, 300, 1048576])
#: grep patterns checked after every step, with and without -i.
FIXED_PATTERNS = (
    "alpha|bravo",
    r"\bdelta\b",
    "kelvin",
    "stop",
    "istanbul",
    r"a\.b",
    "line 1[0-9]",
    "^$",
    r"\Aalpha",
    r"[0-9]\z",
    r"\s$",
    "(?i:BRAVO) c",
    # RE2 syntax Python's parser would misread or cannot read: no narrowing may come of it
    "[[:alpha:]]ine",
    "[^[:space:]]ne 1",
    r"\pL+ 1",
    r"\Qa.b\E",
    "(?U)lin.+",
)
#: A class no character is in: RE2 has no ``(?!)``, and Python's parser cannot read ``\x{...}``,
#: so ``|NOTHING`` leaves a pattern's matches as they were and takes its narrowing away.
NOTHING = r"[^\x00-\x{10FFFF}]"
#: Name filters for grep below a directory.
GREP_GLOBS = st.sampled_from([None, "**/b", "*", "a/*", "**/*"])
#: Words BM25 search is checked with (stemming leaves them alone).
SEARCH_WORDS = ("alpha", "bravo", "delta", "line")
#: A reference FTS5 table is asked these, the real one must answer the same.
TRIGRAM_QUERIES = ('"alp"', '"ine"', '"a.b"', '"ELV" AND "vin"', '"\u00e9"', '"   "')


class Boom(Exception):
    """Raised inside a transaction to make it roll back."""


def norm_words(text: str) -> list[str]:
    """The words of ``text`` as unicode61 with remove_diacritics sees them (near enough for the
    vocabulary above): accents dropped, lower case, split at anything but letters and digits."""
    stripped = "".join(
        c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
    )
    return re.findall(r"[^\W_]+", stripped.lower())


def lines_of(text: str) -> list[str]:
    """grep's lines: split at newlines, a final newline starts no new line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class IndexConsistency(WorkspaceMachine):
    def __init__(self) -> None:
        super().__init__()
        #: A read-only handle on the same file: it cannot drain the index queue.
        self.reader = self.open_workspace(readonly=True)
        self.enabled = True
        self.max_bytes = 1048576
        self.snaps: list[str] = []

    # --- helpers ------------------------------------------------------------------------------

    def attempt(self, call) -> None:
        """Run ``call``; an operation the tree refuses (a name taken, a missing parent) is fine."""
        with contextlib.suppress(OSError, AgentFSError):
            call()

    def entries(self) -> dict[str, str]:
        """Every path of the live tree -> 'dir', 'file' or 'symlink'."""
        found: dict[str, str] = {}
        for top, dirnames, filenames in self.ws.walk("/"):
            for name in dirnames:
                found[os.path.join(top, name)] = "dir"
            for name in filenames:
                path = os.path.join(top, name)
                found[path] = self.ws.lstat(path).type
        return found

    def live_files(self) -> dict[str, tuple[int, bytes]]:
        """path -> (inode, bytes) of every live regular file."""
        files = {}
        for path, kind in self.entries().items():
            if kind == "file":
                st_ = self.ws.lstat(path)
                files[path] = (st_.st_ino, self.ws.chunks.read(st_.st_ino, st_.st_size))
        return files

    def pick(self, data: st.DataObject, kind: str | None = None) -> str | None:
        paths = sorted(p for p, k in self.entries().items() if kind is None or k == kind)
        return data.draw(st.sampled_from(paths)) if paths else None

    # --- content ------------------------------------------------------------------------------

    @initialize()
    def seed(self) -> None:
        self.ws.write("/a/b", "alpha bravo\ndelta echo\n", parents=True)
        self.ws.write("/b", "".join(f"bravo line {i}\n" for i in range(60)))
        self.ws.write("/c", b"\0binary alpha")

    @rule(path=PATHS, data=DATA)
    def write(self, path: str, data: bytes) -> None:
        self.attempt(lambda: self.ws.write(path, data, parents=True))

    @rule(path=PATHS, data=DATA)
    def append(self, path: str, data: bytes) -> None:
        self.attempt(lambda: self.ws.append(path, data, parents=True))

    @rule(data=st.data(), chunk=DATA, offset=st.integers(0, 40))
    def pwrite(self, data: st.DataObject, chunk: bytes, offset: int) -> None:
        path = self.pick(data, "file")
        if path is not None:
            self.attempt(lambda: self.ws.pwrite(path, chunk[:12], offset))

    @rule(data=st.data(), size=st.integers(0, 60))
    def truncate(self, data: st.DataObject, size: int) -> None:
        path = self.pick(data, "file")
        if path is not None:
            self.attempt(lambda: self.ws.truncate(path, size))

    # --- names --------------------------------------------------------------------------------

    @rule(path=PATHS)
    def mkdir(self, path: str) -> None:
        self.attempt(lambda: self.ws.mkdir(path))

    @rule(data=st.data(), dst=PATHS)
    def rename(self, data: st.DataObject, dst: str) -> None:
        src = self.pick(data)
        if src is not None:
            self.attempt(lambda: self.ws.rename(src, dst))

    @rule(data=st.data(), recursive=st.booleans())
    def remove(self, data: st.DataObject, recursive: bool) -> None:
        path = self.pick(data)
        if path is not None:
            self.attempt(lambda: self.ws.remove(path, recursive=recursive))

    @rule(data=st.data(), dst=PATHS)
    def link(self, data: st.DataObject, dst: str) -> None:
        src = self.pick(data, "file")
        if src is not None:
            self.attempt(lambda: self.ws.link(src, dst))

    @rule(to=st.sampled_from(["/a", "/a/b", "b", "/nowhere"]), path=PATHS)
    def symlink(self, to: str, path: str) -> None:
        self.attempt(lambda: self.ws.symlink(to, path))

    @rule(data=st.data(), dst=PATHS)
    def copy(self, data: st.DataObject, dst: str) -> None:
        src = self.pick(data)
        if src is not None:
            self.attempt(lambda: self.ws.copy(src, dst, recursive=True))

    # --- history ------------------------------------------------------------------------------

    @rule()
    def snapshot(self) -> None:
        name = f"s{len(self.snaps)}"
        self.ws.snapshots.create(name)
        self.snaps.append(name)

    @precondition(lambda self: self.snaps)
    @rule(data=st.data())
    def restore_snapshot(self, data: st.DataObject) -> None:
        self.ws.snapshots.restore(data.draw(st.sampled_from(self.snaps)))

    @rule(data=st.data())
    def restore_version(self, data: st.DataObject) -> None:
        rows = self.ws.conn.execute(
            "SELECT path, n FROM ws_version WHERE ino IS NOT NULL ORDER BY path, n"
        ).fetchall()
        if rows:
            path, n = data.draw(st.sampled_from(rows))
            self.attempt(lambda: self.ws.restore_version(path, n))

    # --- transactions and settings -----------------------------------------------------------

    @rule(path=PATHS, data=DATA)
    def failed_transaction(self, path: str, data: bytes) -> None:
        """Writes, a rename and a removal in a transaction that then fails: all undone."""
        with contextlib.suppress(Boom, OSError, AgentFSError), self.ws.transaction():
            self.ws.write(path, data, parents=True)
            self.ws.append("/b", b"alpha\n")
            self.ws.rename("/b", "/b-moved")
            self.ws.remove("/a", recursive=True)
            raise Boom

    @rule(max_bytes=MAX_BYTES)
    def set_max_bytes(self, max_bytes: int) -> None:
        self.ws.configure_index(max_bytes=max_bytes)
        self.max_bytes = max_bytes

    @rule(enabled=st.booleans())
    def set_enabled(self, enabled: bool) -> None:
        self.ws.configure_index(enabled=enabled)
        self.enabled = enabled

    @rule(
        data=st.data(),
        ignore_case=st.booleans(),
        fixed_strings=st.booleans(),
        start=st.integers(0, 20),
        length=st.integers(1, 8),
    )
    def grep_a_literal_of_some_file(
        self, data: st.DataObject, ignore_case: bool, fixed_strings: bool, start: int, length: int
    ) -> None:
        """A piece of a line of some text file, as a literal or escaped regex: grep must find
        it wherever a plain scan does, and the file it came from among them."""
        texts = {p: decode_text(b) for p, (_, b) in self.live_files().items()}
        lines = sorted({ln for t in texts.values() if t for ln in lines_of(t) if ln})
        if not lines:
            return
        line = data.draw(st.sampled_from(lines))
        literal = line[start % len(line) :][:length]
        pattern = literal if fixed_strings else re.escape(literal)
        got = self.check_grep(re.escape(literal), ignore_case, pattern, fixed_strings)
        assert got, f"grep {literal!r}: nothing, though a file has it"

    @rule(
        data=st.data(),
        pattern=st.sampled_from((*FIXED_PATTERNS, "alpha", "bravo line")),
        ignore_case=st.booleans(),
        name_glob=GREP_GLOBS,
    )
    def grep_below_a_directory_both_ways(
        self, data: st.DataObject, pattern: str, ignore_case: bool, name_glob: str | None
    ) -> None:
        """Below any directory (or symlink), through the trigram index (walking up from its
        answers) and without it (``|(?!)`` leaves nothing required: every file is walked down
        to and read line by line), grep finds the same lines and skips the same files."""
        base = data.draw(
            st.sampled_from(
                ["/", *sorted(p for p, k in self.entries().items() if k in ("dir", "symlink"))]
            )
        )

        def run(regex: str) -> object:
            try:
                found = self.ws.grep(regex, base, glob=name_glob, ignore_case=ignore_case)
            except OSError as exc:
                return type(exc)
            return [(ln.path, ln.line, ln.text) for ln in found.lines], found.skipped

        assert run(pattern) == run(f"(?:{pattern})|{NOTHING}"), (pattern, base, name_glob)

    # --- invariants ---------------------------------------------------------------------------

    def expected_state(self, data: bytes) -> tuple[str, str | None]:
        if not self.enabled:
            return "off", None
        if len(data) > self.max_bytes:
            return "too_large", None
        text = decode_text(data)
        return ("binary", None) if text is None else ("text", text)

    @invariant()
    def index_rows_are_the_brute_force_ones(self) -> None:
        conn = self.ws.conn
        assert self.ws.index_status().enabled == self.enabled  # drains the queue first
        assert conn.execute("SELECT count(*) FROM ws_index_queue").get == 0
        assert self.ws.index_status().max_bytes == self.max_bytes
        by_ino = {ino: data for ino, data in self.live_files().values()}
        live = {
            ino
            for (ino,) in conn.execute(
                "SELECT ino FROM fs_inode WHERE (mode & 61440) = 32768 AND nlink > 0"
            )
        }
        assert live == set(by_ino), "live regular inodes are the named ones"
        rows = {
            ino: (state, size, chunks)
            for ino, state, size, chunks in conn.execute("SELECT * FROM ws_index_file")
        }
        assert set(rows) == set(by_ino), "ws_index_file covers exactly the live files"
        texts: dict[int, str] = {}
        expected_chunks = []
        for ino, data in sorted(by_ino.items()):
            state, text = self.expected_state(data)
            pieces = chunk_text(text) if text is not None else []
            assert rows[ino] == (state, len(data), len(pieces)), f"inode {ino}"
            if text is not None:
                texts[ino] = text
            expected_chunks += [
                (ino, seq, c.start_line, c.end_line, digest(c.text.encode()))
                for seq, c in enumerate(pieces)
            ]
        rows_of_chunks = chunk_rows(conn)
        assert [r[:5] for r in rows_of_chunks] == expected_chunks
        ids = {r[6] for r in rows_of_chunks}
        texts_by_id = dict(conn.execute("SELECT id, digest FROM ws_text"))
        assert set(texts_by_id) == ids, "a text row for each chunk text, and no other"
        assert len(set(texts_by_id.values())) == len(ids), "each distinct text indexed once"
        assert {r for (r,) in conn.execute("SELECT rowid FROM ws_fts_chunk")} == ids
        assert {r for (r,) in conn.execute("SELECT rowid FROM ws_fts_trigram")} == ids
        for chunk_id, start, end in conn.execute("SELECT id, start_byte, end_byte FROM ws_chunk"):
            ino, _seq, first, last, _digest, _id, _text = next(
                r for r in rows_of_chunks if r[5] == chunk_id
            )
            lines = chunk_lines(texts[ino])[first - 1 : last]
            assert by_ino[ino][start:end].decode() == "".join(lines), "byte range of a chunk"
        self.fts_tables_answer_like_fresh_ones(rows_of_chunks, texts)

    def fts_tables_answer_like_fresh_ones(
        self, chunk_rows: list[tuple], texts: dict[int, str]
    ) -> None:
        """The contentless tables hold the current texts' tokens and nothing else: a fresh
        in-memory copy, made from the texts, answers every query the same."""
        ref = apsw.Connection(":memory:")
        ref.execute(
            "CREATE VIRTUAL TABLE c USING fts5(text, content = '', contentless_delete = 1,"
            " tokenize = 'porter unicode61 remove_diacritics 2');"
            "CREATE VIRTUAL TABLE t USING fts5(text, content = '', contentless_delete = 1,"
            " detail = 'none', tokenize = 'trigram case_sensitive 0')"
        )
        for text_id, (ino, _seq, start, end, *_ids) in {r[6]: r for r in chunk_rows}.items():
            text = "".join(chunk_lines(texts[ino])[start - 1 : end])
            ref.execute("INSERT INTO c(rowid, text) VALUES (?, ?)", (text_id, text))
            ref.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (text_id, text))
        conn = self.ws.conn

        def ask(db: apsw.Connection, table: str, query: str) -> set[int]:
            sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
            return {r for (r,) in db.execute(sql, (query,))}

        for word in (*SEARCH_WORDS, "charlie", "cafe", "stanbul", "1"):
            assert ask(conn, "ws_fts_chunk", f'"{word}"') == ask(ref, "c", f'"{word}"'), word
        for query in TRIGRAM_QUERIES:
            assert ask(conn, "ws_fts_trigram", query) == ask(ref, "t", query), query
        ref.close()

    def check_grep(
        self,
        regex: str,
        ignore_case: bool,
        pattern: str | None = None,
        fixed: bool = False,
        ws: agentfs.Workspace | None = None,
    ) -> list[tuple[str, int, str]]:
        """``grep`` (through ``ws``, default the writable handle) equals RE2 run on each line
        of every text file; returns the matches."""
        options = re2.Options()
        options.case_sensitive = not ignore_case
        rx = re2.compile(regex, options)
        expected, binary = [], []
        for path, (_ino, data) in sorted(self.live_files().items()):
            text = decode_text(data)
            if text is None:
                binary.append(path)
                continue
            expected += [(path, i + 1, ln) for i, ln in enumerate(lines_of(text)) if rx.search(ln)]
        result = (ws or self.ws).grep(
            regex if pattern is None else pattern, ignore_case=ignore_case, fixed_strings=fixed
        )
        got = [(ln.path, ln.line, ln.text) for ln in result.lines if ln.is_match]
        assert got == expected, f"grep {regex!r} ignore_case={ignore_case}"
        assert result.skipped == binary
        return got

    @rule(path=PATHS, data=DATA)
    def write_then_grep_read_only(self, path: str, data: bytes) -> None:
        """Right after a write, before any query drains the queue, a read-only handle's grep
        (which reads queued files whole) still finds exactly what is there, and its search
        (on a drained copy) answers exactly as the writer's does once it drained."""
        self.write(path, data)  # queued, unless the tree refused it or nothing changed
        for pattern in FIXED_PATTERNS:
            self.check_grep(pattern, False, ws=self.reader)
        for word in SEARCH_WORDS:
            read_only = self.reader.search(word, mode="bm25", top_k=50).hits
            drained = self.ws.search(word, mode="bm25", top_k=50).hits
            assert [(h.path, h.score) for h in read_only] == [(h.path, h.score) for h in drained]

    @invariant()
    def grep_never_misses(self) -> None:
        for pattern in FIXED_PATTERNS:
            for ignore_case in (False, True):
                self.check_grep(pattern, ignore_case)

    @invariant()
    def bm25_returns_exactly_the_files_with_the_word(self) -> None:
        files = self.live_files()
        names: dict[int, list[str]] = {}
        for path, (ino, _data) in files.items():
            names.setdefault(ino, []).append(path)
        for word in SEARCH_WORDS:
            hits = self.ws.search(word, mode="bm25", top_k=50).hits
            got = {}
            for hit in hits:
                assert hit.path in files, f"search {word!r} returned {hit.path}, no live file"
                ino, data = files[hit.path]
                assert ino not in got, f"search {word!r}: inode {ino} twice"
                got[ino] = hit.path
                assert hit.path == min(names[ino])
                text = decode_text(data)
                assert text is not None and word in norm_words(text), (word, hit.path)
                assert 0.0 < hit.score <= 1.0
            expected = {
                ino
                for ino, data in {i: d for i, d in files.values()}.items()
                if self.expected_state(data)[0] == "text"
                and word in norm_words(self.expected_state(data)[1] or "")
            }
            assert set(got) == expected, f"search {word!r}"


TestIndexConsistency = IndexConsistency.TestCase
TestIndexConsistency.settings = machine_settings(20, 25, suppress=[HealthCheck.filter_too_much])


# --- files whose chunks repeat -------------------------------------------------------------------

#: A line repeated past a chunk's 40 lines: several chunks of the very same text.
REPEATED = st.builds(
    lambda n, line: (line + "\n") * n,
    st.integers(45, 120),
    st.sampled_from(["alpha", "bravo bravo", "    x = 1"]),
)


#: The variants below run fewer, fixed examples: each covers what the main machine does not.
VARIANT_SETTINGS = machine_settings(
    10,
    25,
    suppress=[HealthCheck.filter_too_much],
    phases=[Phase.explicit, Phase.generate],  # a failure is reported as found, not shrunk
)


class IndexWithRepeatedChunks(IndexConsistency):
    """The machine above, also writing files in which several chunks have the same text."""

    @rule(path=PATHS, text=REPEATED)
    def write_repeated(self, path: str, text: str) -> None:
        self.attempt(lambda: self.ws.write(path, text, parents=True))


TestIndexWithRepeatedChunks = IndexWithRepeatedChunks.TestCase
TestIndexWithRepeatedChunks.settings = VARIANT_SETTINGS


# --- files that share their content --------------------------------------------------------------

#: A few contents many files get: whole copies, and texts that share all chunks but one (the
#: index holds each distinct chunk text once, whatever the number of files holding it).
SHARED = [
    "".join(f"alpha line {i}\n" for i in range(90)),
    "".join(f"alpha line {i}\n" for i in range(60))
    + "bravo delta\n"
    + "".join(f"alpha line {i}\n" for i in range(61, 90)),
    "".join(f"    body line {i}\n" for i in range(50)),
    "delta echo\nalpha bravo\n",
]


class IndexWithSharedContent(IndexConsistency):
    """The machine above, also writing one of a few shared contents, so that most files hold
    chunk texts other files hold too: deleting, editing or moving one copy must leave the
    others found exactly as a scan of their bytes finds them."""

    @rule(path=PATHS, text=st.sampled_from(SHARED))
    def write_shared(self, path: str, text: str) -> None:
        self.attempt(lambda: self.ws.write(path, text, parents=True))

    @rule(data=st.data(), line=st.integers(0, 89))
    def edit_one_line(self, data: st.DataObject, line: int) -> None:
        """Change one line of a file in place: its other chunks keep their texts."""
        path = self.pick(data, "file")
        if path is not None:
            lines = self.ws.read(path).split(b"\n")
            if line < len(lines):
                lines[line] = b"charlie bravo"
                self.attempt(lambda: self.ws.write(path, b"\n".join(lines)))


TestIndexWithSharedContent = IndexWithSharedContent.TestCase
TestIndexWithSharedContent.settings = VARIANT_SETTINGS


# --- the same with vectors -----------------------------------------------------------------------


class IndexWithVectors(IndexConsistency):
    """The machine above with an embedder chosen from the start, and a rule that embeds what
    waits: every chunk then has a vector or waits for one (never both, never neither), and
    every stored vector is the embedding of its chunk's current text (a vector moved to a
    chunk of other text would rank it wrongly)."""

    def __init__(self) -> None:
        super().__init__()
        self.embedder = HashingEmbedder()
        self.ws.index(self.embedder)

    @rule()
    def embed(self) -> None:
        status = self.ws.index()
        assert status.pending == 0 and status.embedded == status.chunks

    @invariant()
    def every_vector_embeds_its_chunk(self) -> None:
        status = self.ws.index_status()
        assert status.embedded + status.pending == status.chunks, status
        texts = {ino: decode_text(data) or "" for ino, data in self.live_files().values()}
        where = {r[6]: r for r in chunk_rows(self.ws.conn)}
        for text_id, blob in self.ws.conn.execute("SELECT text_id, embedding FROM ws_vector"):
            ino, _seq, start, end, *_ids = where[text_id]
            text = "".join(chunk_lines(texts[ino])[start - 1 : end])
            stored = np.frombuffer(blob, dtype=np.float32)
            assert np.allclose(stored, self.embedder.embed([text])[0], atol=1e-6), text_id


TestIndexWithVectors = IndexWithVectors.TestCase
TestIndexWithVectors.settings = VARIANT_SETTINGS

#: Minutes of hypothesis: started before the rest of the suite (tests/conftest.py).
pytestmark = pytest.mark.runs_first
