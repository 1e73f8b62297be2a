"""Cutting a text file into overlapping runs of whole lines, the unit BM25 and vectors rank.

Each chunk fits an embedding model's window and makes sense as a snippet on its own; consecutive
chunks overlap, and a chunk that must end does so before a top-level block or after a blank
line, so functions and paragraphs tend to stay whole (docs/search.md, "Chunking").
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import NamedTuple

MAX_LINES = 40
MAX_CHARS = 1500
OVERLAP = 5


class Chunk(NamedTuple):
    """Lines ``start_line``..``end_line`` (1-based, inclusive) of a file, their text, and
    where that text starts in the file's (in characters)."""

    start_line: int
    end_line: int
    text: str
    start_char: int


def byte_offsets(text: str, chunks: list[Chunk]) -> list[tuple[int, int]]:
    """Each chunk's (start, end) in the UTF-8 bytes of ``text``, so a reader can fetch just
    those bytes; for ASCII text they are the character offsets."""
    if text.isascii():
        return [(c.start_char, c.start_char + len(c.text)) for c in chunks]
    spans = []
    done_chars = done_bytes = 0
    for c in chunks:
        done_bytes += len(text[done_chars : c.start_char].encode())
        done_chars = c.start_char
        spans.append((done_bytes, done_bytes + len(c.text.encode())))
    return spans


def decode_text(data: bytes) -> str | None:
    """The file's text, or None when it is binary: a NUL byte, or not valid UTF-8."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def lines_of(text: str) -> list[str]:
    """The lines of ``text``, each with its ``\n``: lines end at ``\n`` only, as grep counts
    them (``str.splitlines`` also ends one at ``\r``, ``\f``, ``\x85``, ...)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]  # the text after the last newline has none
    if not lines[-1]:
        lines.pop()
    return lines


def _is_boundary(line: str) -> bool:
    """A good place to start a chunk: a blank line, or a line that opens a top-level block."""
    return not line.strip() or not line[0].isspace()


def chunk_text(text: str) -> list[Chunk]:
    """The chunks of ``text`` in order; an empty text has none."""
    lines = lines_of(text)
    ends = list(accumulate(map(len, lines), initial=0))  # ends[i]: characters before line i
    chunks: list[Chunk] = []
    start = 0
    while start < len(lines):
        # as many lines as fit MAX_CHARS (at least one) and MAX_LINES
        fit = bisect_right(ends, ends[start] + MAX_CHARS) - 1
        end = max(start + 1, min(fit, start + MAX_LINES, len(lines)))
        if end < len(lines):
            end = _cut(lines, start, end)
        chunks.append(Chunk(start + 1, end, text[ends[start] : ends[end]], ends[start]))
        if end >= len(lines):
            break
        start = max(end - OVERLAP, start + 1)
    return chunks


def _cut(lines: list[str], start: int, end: int) -> int:
    """Where a chunk spanning ``lines[start:end]`` should end: before the last boundary line
    in its second half, or at ``end`` when there is none."""
    for i in range(end - 1, start + (end - start) // 2, -1):
        if _is_boundary(lines[i]):
            return i
    return end
