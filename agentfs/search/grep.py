"""``grep``: lines matching a regular expression (RE2 syntax) in the text files under a directory.

What is read is narrowed by the trigram index first: the pattern's required literals
(``agentfs.search.literals``) become a query on ws_fts_trigram, which names the chunk texts that
hold them all, and so every chunk of every file holding one of those texts (ws_chunk). A match
lies within one line and every line is whole in some chunk, so only those chunks' byte ranges
are read (plus every file the index does not cover: too large,
indexing off, not indexed yet on a read-only handle) and confirmed with the pattern
(``agentfs.search.pattern``: RE2, linear in the text whatever the pattern). The index is a
superset filter, so this never loses a match; a pattern with no required literal, or a
multiline one, reads whole files. Like ``rg --hidden --no-ignore``, hidden files are searched
and nothing is ignored; binary files (a NUL byte) and files that are not UTF-8 text are
skipped, as ripgrep skips binary files on a recursive search. Results are sorted by path,
lines numbered from 1.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple

import apsw

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.core.inodes import S_IFMT, S_IFREG
from agentfs.search.chunking import decode_text
from agentfs.search.glob import glob_regex, walk
from agentfs.search.index import BINARY, TEXT, chunk_ino
from agentfs.search.lines import Hit, matching_lines, split_lines
from agentfs.search.names import names_below
from agentfs.search.pattern import GrepPattern, compile_pattern

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem
    from agentfs.search.api import SearchMixin

Output = Literal["content", "files", "count"]


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
    #: (first line, start byte, end byte) of the chunks to read, or () for the whole file
    spans: tuple[tuple[int, int, int], ...] = ()


def grep(
    fs: SearchMixin,
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
    fs.refresh_index(batches=DRAIN_BATCHES)  # the rest of the queue is read whole below
    with fs._read():
        for found, pieces in _read(fs, _candidates(fs, path, glob, regex.trigrams, whole_files)):
            if found.binary:
                result.skipped.append(found.path)
                continue
            if found.spans:
                lines = _in_spans(found, pieces, regex)
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


#: Batches of the index queue a grep indexes before it runs: enough for what an agent just
#: wrote; after a large import the rest is read whole (as rg would) instead of making one
#: grep pay for indexing everything.
DRAIN_BATCHES = 2

#: grep reads its candidates' bytes this much at a time, in one query per batch.
READ_BATCH = 8 << 20


def _read(fs: FileSystem, found: list[Candidate]) -> Iterator[tuple[Candidate, list[bytes]]]:
    """Each candidate with its bytes: one piece per span, or the whole file; batched, since a
    search of thousands of files would otherwise pay a query per piece. Not ``fs.read``: a
    search is not a tracked read."""
    batch: list[Candidate] = []
    size = 0
    for candidate in found:
        if candidate.binary or (not candidate.spans and candidate.size > READ_BATCH):
            yield from _read_batch(fs, batch)  # alone: a large file is read when its turn comes
            batch, size = [], 0
            data = [] if candidate.binary else [fs.chunks.read(candidate.ino, candidate.size)]
            yield candidate, data
            continue
        batch.append(candidate)
        size += sum(e - s for _, s, e in candidate.spans) if candidate.spans else candidate.size
        if size >= READ_BATCH:
            yield from _read_batch(fs, batch)
            batch, size = [], 0
    yield from _read_batch(fs, batch)


def _read_batch(fs: FileSystem, batch: list[Candidate]) -> Iterator[tuple[Candidate, list[bytes]]]:
    ranges = [
        (c.ino, start, end) if c.spans else (c.ino, 0, c.size)
        for c in batch
        for start, end in ([(s, e) for _, s, e in c.spans] if c.spans else [(0, c.size)])
    ]
    pieces = iter(fs.chunks.read_many(ranges))
    for c in batch:
        yield c, [next(pieces) for _ in (c.spans or [None])]


def _in_spans(found: Candidate, pieces: list[bytes], regex: GrepPattern) -> list[tuple[int, str]]:
    """The matching lines of the byte ranges the trigram table named, as (0-based line,
    text). A range starts and ends at line starts, so it is valid UTF-8 on its own and its
    lines are the file's lines."""
    out: list[tuple[int, str]] = []
    for (first_line, _start, _end), data in zip(found.spans, pieces, strict=True):
        hits = matching_lines(regex.line, regex.whole, data)
        out.extend((first_line - 1 + h.line, data[h.start : h.end].decode()) for h in hits)
    return out


def _candidates(
    fs: FileSystem, path: str, name_glob: str | None, query: str | None, whole_files: bool
) -> list[Candidate]:
    """Regular files to search, sorted by path: ``path`` itself if it is a file. With a
    trigram ``query``, only the files it names and those the index does not cover, named by
    walking up from them, each with the chunks to read (unless ``whole_files``); without a
    query, every file below ``path`` (walking down)."""
    st = fs.stat(path)
    base = paths.normalize(path)
    conn = fs.conn
    state = dict(conn.execute("SELECT ino, state FROM ws_index_file WHERE state <> 'text'"))
    queued = {ino for (ino,) in conn.execute("SELECT ino FROM ws_index_queue")}
    spans = {} if query is None else _spans(conn, conn.execute(_TRIGRAM_MATCH, (query,)))
    named = set(spans)  # the files holding a chunk the query names
    if whole_files:
        spans = {}

    def candidate(p: str, ino: int, size: int) -> Candidate:
        # a queued file's row is stale (a binary file overwritten in place with text): it is
        # read whole and judged by its bytes
        kind = None if ino in queued else state.get(ino, TEXT)
        text = kind == TEXT
        return Candidate(p, ino, size, kind == BINARY, text, spans.get(ino, ()) if text else ())

    # what can hold a match: what the index named, and what it does not cover (read whole,
    # or skipped as binary)
    wanted = None if query is None else named | queued | set(state)
    if not st.is_dir():
        if st.type != "file" or (wanted is not None and st.st_ino not in wanted):
            return []
        return [candidate(base, st.st_ino, st.st_size)]
    if wanted is None:
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
    return found


def _spans(
    conn: apsw.Connection, texts: Iterable[tuple[object, ...]]
) -> dict[int, tuple[tuple[int, int, int], ...]]:
    """For each file holding one of ``texts`` (text id rows), (first line, start byte, end
    byte) of the byte ranges its chunks of those texts cover, in file order: chunks that
    overlap or touch make one range."""
    ids = [text_id for (text_id,) in texts]
    merged: dict[int, list[list[int]]] = {}
    for chunk_id, first, start, end in conn.execute(
        "SELECT id, start_line, start_byte, end_byte FROM ws_chunk"
        " WHERE text_id IN (SELECT value FROM json_each(?)) ORDER BY id",
        (json.dumps(ids),),
    ):
        ranges = merged.setdefault(chunk_ino(chunk_id), [])  # type: ignore[arg-type]
        if ranges and start <= ranges[-1][2]:  # type: ignore[operator]
            ranges[-1][2] = max(ranges[-1][2], end)  # type: ignore[call-overload]
        else:
            ranges.append([first, start, end])  # type: ignore[list-item]
    return {ino: tuple((a, b, c) for a, b, c in r) for ino, r in merged.items()}


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
