"""``grep``: lines matching a regular expression (RE2 syntax) in the text files under a directory.

The trigram index first names the chunks that hold the pattern's required literals, and only
those chunks' byte ranges (plus every file the index does not cover) are read and confirmed:
the index is a superset filter, so no match is lost. Output is ``rg -n --hidden --no-ignore``'s,
binary and non-UTF-8 files skipped (docs/search.md, "grep").
"""

from __future__ import annotations

import errno
import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, TypedDict

import apsw

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.core.inodes import S_IFMT, S_IFREG
from agentfs.search.chunking import decode_text
from agentfs.search.glob import glob_regex, walk
from agentfs.search.index import BINARY, CHUNK_BITS, TEXT, chunk_ino
from agentfs.search.lines import Hit, matching_lines, split_lines
from agentfs.search.names import names_below
from agentfs.search.pattern import GrepPattern, compile_pattern

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem
    from agentfs.search.api import Index

Output = Literal["content", "files", "count"]


class GrepFields(TypedDict, total=False):
    """``grep``'s keyword options, for the methods that pass them on (``ws.grep``)."""

    glob: str | None
    ignore_case: bool
    fixed_strings: bool
    output: Output
    before: int
    after: int
    max_results: int | None
    multiline: bool


class GrepLine(NamedTuple):
    """One line of output: a match, or a context line around one (``is_match`` False)."""

    path: str
    line: int  # 1-based
    text: str  # without its newline
    is_match: bool


@dataclass
class GrepResult:
    """What ``grep`` found: ``lines`` (output "content"), ``files`` (paths with a match, all
    outputs) and ``counts`` (matching lines per file, all outputs), each sorted by path."""

    lines: list[GrepLine] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    matches: int = 0  # matching lines in ``lines``
    truncated: bool = False  # max_results stopped the search early
    skipped: list[str] = field(default_factory=list)  # binary or not UTF-8


class Candidate(NamedTuple):
    """A file grep must look at, and what the index knows of it: binary (skip it), or text
    (valid UTF-8 as it is now)."""

    path: str
    ino: int
    size: int
    binary: bool
    text: bool
    #: the chunks to match, a JSON list of [first line, text id] (``ChunkTexts``), or '' to
    #: read the whole file
    chunks: str = ""


def grep(
    index: Index,
    pattern: str,
    path: str = "/",
    *,
    glob: str | None = None,
    ignore_case: bool = False,
    fixed_strings: bool = False,
    output: Output = "content",
    before: int = 0,
    after: int = 0,
    max_results: int | None = None,
    multiline: bool = False,
) -> GrepResult:
    """Search the text files at or below ``path`` (a file, or a directory: see the module
    docstring). ``glob`` filters file paths (relative to ``path``, e.g. ``**/*.py``);
    ``before``/``after`` add context lines; ``max_results`` caps matching lines ("content")
    or files ("files", "count")."""
    if output not in ("content", "files", "count"):
        raise fs_error(errno.EINVAL, str(output), "output is 'content', 'files' or 'count'")
    if before < 0 or after < 0 or (max_results is not None and max_results < 0):
        raise fs_error(errno.EINVAL, pattern, "context and max_results must be >= 0")
    regex = compile_pattern(
        pattern, ignore_case=ignore_case, fixed_strings=fixed_strings, multiline=multiline
    )
    result = GrepResult()
    if max_results == 0:
        return result
    # a multiline match may span chunks: only the line-bound forms narrow to chunks
    whole_files = multiline or before > 0 or after > 0  # context needs the lines around
    index.refresh_index(batches=DRAIN_BATCHES)  # the rest of the queue is read whole below
    fs = index.fs
    with fs.read_transaction(), _collector_paused():
        found_files, texts = _candidates(fs, path, glob, regex, whole_files)
        for found, pieces in _read(fs, found_files):
            if found.binary:
                result.skipped.append(found.path)
                continue
            if found.chunks:
                lines = texts.lines(found.chunks)
                if lines and _add_lines(result, found.path, lines, output, max_results):
                    result.truncated = True
                    break
                continue
            data = pieces[0]
            if not found.text and decode_text(data) is None:  # UTF-8 already, if indexed
                result.skipped.append(found.path)
                continue
            if multiline:
                hits = _spanned_lines(regex, data)
            else:
                hits = matching_lines(regex.line, regex.whole, data)
            if not hits:
                continue
            if _add(result, found.path, data, hits, output, before, after, max_results):
                result.truncated = True
                break
    return result


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while grep builds its result, then resume it.

    A common word makes hundreds of thousands of tuples, and each collection they trigger walks
    every object of a process with a large heap; the result holds no cycles to collect."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: Batches of the index queue a grep indexes before it runs: enough for what an agent just
#: wrote; after a large import the rest is read whole (as rg would) instead of making one
#: grep pay for indexing everything.
DRAIN_BATCHES = 2

#: grep reads its candidates' bytes this much at a time, in one query per batch.
READ_BATCH = 8 << 20


def _read(fs: FileSystem, found: list[Candidate]) -> Iterator[tuple[Candidate, list[bytes]]]:
    """Each candidate with its bytes (the whole file, as one piece; nothing for a binary file
    or one matched by chunk text: ``ChunkTexts`` reads those); batched, since a search of
    thousands of files would otherwise pay a query per file. Not ``fs.read``: a search is not
    a tracked read."""
    batch: list[Candidate] = []
    size = 0
    for candidate in found:
        if candidate.binary or candidate.chunks or candidate.size > READ_BATCH:
            yield from _read_batch(fs, batch)  # alone: a large file is read when its turn comes
            batch, size = [], 0
            alone = candidate.binary or candidate.chunks
            yield candidate, [] if alone else [fs.chunks.read(candidate.ino, candidate.size)]
            continue
        batch.append(candidate)
        size += candidate.size
        if size >= READ_BATCH:
            yield from _read_batch(fs, batch)
            batch, size = [], 0
    yield from _read_batch(fs, batch)


def _read_batch(fs: FileSystem, batch: list[Candidate]) -> Iterator[tuple[Candidate, list[bytes]]]:
    if not batch:
        return
    pieces = fs.chunks.read_many([(c.ino, 0, c.size) for c in batch])
    for c, data in zip(batch, pieces, strict=True):
        yield c, [data]


class ChunkTexts:
    """The matching lines of each distinct chunk text the trigram table named, found once
    however many chunks hold the text (the index keeps each text once: a file copied twelve
    times, or the unchanged chunks of two versions of a project, are matched once), read a
    batch at a time in the order the files need them; and each file's lines, made once for
    all the files listing the same chunks.

    A chunk starts and ends at line starts, so its bytes are valid UTF-8 on their own and its
    lines are the file's lines: its matches, shifted by its first line, are the file's."""

    def __init__(
        self,
        fs: FileSystem,
        regex: GrepPattern,
        holders: dict[int, tuple[int, int, int]],
        listings: list[str],
    ) -> None:
        self.fs = fs
        self.regex = regex
        #: text id -> (ino, start byte, end byte) of a current chunk holding it
        self.holders = holders
        #: a file's chunk listing (``Candidate.chunks``) -> its (first line, text id) in order
        self.chunks: dict[str, list[list[int]]] = {
            key: sorted(json.loads(key)) for key in dict.fromkeys(listings)
        }
        #: text ids in the order the files need them, and how many of them were matched
        self.order = list(dict.fromkeys(t for c in self.chunks.values() for _first, t in c))
        self.done = 0
        #: text id -> its matching lines as (0-based line in the chunk, text)
        self.found: dict[int, list[tuple[int, str]]] = {}
        self.files: dict[str, list[tuple[int, str]]] = {}

    def lines(self, listing: str) -> list[tuple[int, str]]:
        """The matching lines, as (0-based line, text), of a file listing these chunks."""
        lines = self.files.get(listing)
        if lines is None:
            lines = self.files[listing] = self._lines(self.chunks[listing])
        return lines

    def _lines(self, chunks: list[list[int]]) -> list[tuple[int, str]]:
        """Chunks overlap by a few lines; a line in an overlap is whole in both, so it
        matches in both or in neither, and is taken once."""
        out: list[tuple[int, str]] = []
        taken = -1  # the last line taken
        for first, text_id in chunks:
            if text_id not in self.found:
                self._match_next(text_id)
            base = first - 1
            out.extend((base + n, text) for n, text in self.found[text_id] if base + n > taken)
            if out:
                taken = out[-1][0]
        return out

    def _match_next(self, needed: int) -> None:
        """Read and match ``needed`` and the texts after it in ``order``, about
        ``READ_BATCH`` bytes in one query."""
        batch = [needed]
        size = self._size(needed)
        while self.done < len(self.order) and size < READ_BATCH:
            text_id = self.order[self.done]
            self.done += 1
            if text_id != needed and text_id not in self.found:
                batch.append(text_id)
                size += self._size(text_id)
        pieces = self.fs.chunks.read_many([self.holders[t] for t in batch])
        regex = self.regex
        for text_id, data in zip(batch, pieces, strict=True):
            hits = matching_lines(regex.line, regex.whole, data)
            self.found[text_id] = [(h.line, data[h.start : h.end].decode()) for h in hits]

    def _size(self, text_id: int) -> int:
        _ino, start, end = self.holders[text_id]
        return end - start


def _candidates(
    fs: FileSystem, path: str, name_glob: str | None, regex: GrepPattern, whole_files: bool
) -> tuple[list[Candidate], ChunkTexts]:
    """Regular files to search, sorted by path: ``path`` itself if it is a file. With a
    trigram query, only the files it names and those the index does not cover, named by
    walking up from them, each with the chunks to match (unless ``whole_files``); without a
    query, every file below ``path`` (walking down). Also the texts of those chunks."""
    st = fs.stat(path)
    base = paths.normalize(path)
    conn = fs.conn
    state = dict(conn.execute("SELECT ino, state FROM ws_index_file WHERE state <> 'text'"))
    queued = {ino for (ino,) in conn.execute("SELECT ino FROM ws_index_queue")}
    chunks: dict[int, str] = {}
    holders: dict[int, tuple[int, int, int]] = {}
    if regex.trigrams is not None:
        chunks, holders = _chunks(conn, regex.trigrams)
    named = set(chunks)  # the files holding a chunk the query names
    if whole_files:
        chunks = {}

    def candidate(p: str, ino: int, size: int) -> Candidate:
        # a queued file's row is stale (a binary file overwritten in place with text): it is
        # read whole and judged by its bytes
        kind = None if ino in queued else state.get(ino, TEXT)
        text = kind == TEXT
        return Candidate(p, ino, size, kind == BINARY, text, chunks.get(ino, "") if text else "")

    # what can hold a match: what the index named, and what it does not cover (read whole,
    # or skipped as binary)
    wanted = None if regex.trigrams is None else named | queued | set(state)
    if not st.is_dir():
        found = []
        if st.type == "file" and (wanted is None or st.st_ino in wanted):
            found = [candidate(base, st.st_ino, st.st_size)]
    elif wanted is None:
        found = [
            candidate(e.path, e.ino, e.size)
            for e in walk(fs, name_glob or "**", path)
            if e.mode & S_IFMT == S_IFREG
        ]
    else:
        keep = glob_regex(name_glob, base) if name_glob else None
        found = [
            candidate(p, ino, size)
            for p, ino, size in names_below(fs, wanted, st.st_ino, base)
            if keep is None or keep.match(p)
        ]
    found.sort(key=lambda c: c.path)
    return found, ChunkTexts(fs, regex, holders, [c.chunks for c in found if c.chunks])


def _chunks(
    conn: apsw.Connection, query: str
) -> tuple[dict[int, str], dict[int, tuple[int, int, int]]]:
    """The chunks holding a text the trigram ``query`` names: for each file, the JSON list of
    [first line, text id] of those chunks (one row per file, not per chunk); and for each
    text, (ino, start byte, end byte) of a chunk holding it in a file that is not queued (a
    queued file's rows are stale)."""
    texts = json.dumps([text_id for (text_id,) in conn.execute(_TRIGRAM_MATCH, (query,))])
    chunks: dict[int, str] = dict(
        conn.execute(  # type: ignore[arg-type]
            f"SELECT id >> {CHUNK_BITS}, json_group_array(json_array(start_line, text_id))"
            " FROM ws_chunk WHERE text_id IN (SELECT value FROM json_each(?))"
            f" GROUP BY id >> {CHUNK_BITS}",
            (texts,),
        )
    )
    holders: dict[int, tuple[int, int, int]] = {
        text_id: (chunk_ino(chunk_id), start, end)  # type: ignore[arg-type, misc]
        for text_id, chunk_id, start, end in conn.execute(
            "SELECT text_id, min(id), start_byte, end_byte FROM ws_chunk"
            " WHERE text_id IN (SELECT value FROM json_each(?))"
            f" AND id >> {CHUNK_BITS} NOT IN (SELECT ino FROM ws_index_queue) GROUP BY text_id",
            (texts,),
        )
    }
    return chunks, holders


_TRIGRAM_MATCH = "SELECT rowid FROM ws_fts_trigram WHERE ws_fts_trigram MATCH ?"


def _spanned_lines(regex: GrepPattern, text: bytes) -> list[Hit]:
    """Every line a multiline match spans."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    hit: set[int] = set()
    for m in regex.line.finditer(text):
        first = _line_of(starts, m.start())
        last = _line_of(starts, max(m.start(), m.end() - 1))
        hit.update(range(first, min(last, len(lines) - 1) + 1))
    return [Hit(i, starts[i], starts[i] + len(lines[i])) for i in sorted(hit)]


def _line_of(starts: list[int], offset: int) -> int:
    """The 0-based line holding byte ``offset`` (``starts``: each line's first offset)."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _add(
    result: GrepResult,
    path: str,
    text: bytes,
    hits: list[Hit],
    output: Output,
    before: int,
    after: int,
    max_results: int | None,
) -> bool:
    """Record one file's matches; True when ``max_results`` is reached."""
    if output != "content" or before == after == 0:
        keep = output == "content"
        lines = [(h.line, text[h.start : h.end].decode() if keep else "") for h in hits]
        return _add_lines(result, path, lines, output, max_results)
    if max_results is not None:
        hits = hits[: max(0, max_results - result.matches)]
    lines_of = split_lines(text.decode())
    wanted: dict[int, bool] = {}
    for h in hits:
        for j in range(max(0, h.line - before), min(len(lines_of), h.line + after + 1)):
            wanted.setdefault(j, False)
        wanted[h.line] = True
    result.lines.extend(GrepLine(path, j + 1, lines_of[j], wanted[j]) for j in sorted(wanted))
    result.files.append(path)
    result.counts[path] = len(hits)
    result.matches += len(hits)
    return max_results is not None and result.matches >= max_results


def _add_lines(
    result: GrepResult,
    path: str,
    lines: list[tuple[int, str]],
    output: Output,
    max_results: int | None,
) -> bool:
    """Record one file's matching lines, as (0-based line, text), with no context; True when
    ``max_results`` is reached."""
    if output != "content":
        result.files.append(path)
        result.counts[path] = len(lines)
        return max_results is not None and len(result.files) >= max_results
    if max_results is not None:
        lines = lines[: max(0, max_results - result.matches)]
    result.lines.extend(GrepLine(path, line + 1, text, True) for line, text in lines)
    result.files.append(path)
    result.counts[path] = len(lines)
    result.matches += len(lines)
    return max_results is not None and result.matches >= max_results
