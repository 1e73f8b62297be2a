"""Which lines of a text hold a match: grep's inner loop, kept apart from choosing files.

The pattern's whole-text form (``^`` and ``$`` at every line) runs over the whole text in C
instead of once per line from Python; a hit that ran past its line is confirmed on that line
alone, which is exactly grep's per-line semantics. Texts are UTF-8 bytes; positions are byte
offsets.
"""

from __future__ import annotations

from typing import AnyStr, NamedTuple

from agentfs.search.pattern import Matcher


class Hit(NamedTuple):
    """A matching line: its 0-based number and where it lies in the text (newline excluded)."""

    line: int
    start: int
    end: int


def matching_lines(regex: Matcher, whole: Matcher | None, text: bytes) -> list[Hit]:
    """The lines of ``text`` (split on newlines) holding a match of ``regex``, the per-line
    pattern; ``whole`` is its whole-text form."""
    if whole is None:
        return _line_by_line(regex, text)
    hits: list[Hit] = []
    pos = line = counted = 0
    end_of_text = len(text)
    while pos < end_of_text:
        found = whole.search(text, pos)
        if found is None:
            break
        start = found.start()
        if start == end_of_text and text.endswith(b"\n"):
            break  # after the final newline: no line is there
        line += text.count(b"\n", counted, start)
        counted = start
        line_start = text.rfind(b"\n", 0, start) + 1
        line_end = text.find(b"\n", start)
        if line_end < 0:
            line_end = end_of_text
        # a match inside the line is the line's own; one that runs past it must be re-checked
        if found.end() <= line_end or regex.search(text[line_start:line_end]):
            hits.append(Hit(line, line_start, line_end))
        pos = line_end + 1
    return hits


def _line_by_line(regex: Matcher, text: bytes) -> list[Hit]:
    hits = []
    start = 0
    for number, line in enumerate(split_lines(text)):
        if regex.search(line):
            hits.append(Hit(number, start, start + len(line)))
        start += len(line) + 1
    return hits


def split_lines(text: AnyStr) -> list[AnyStr]:
    """The lines of ``text`` without their newlines; a final newline starts no new line."""
    lines = text.split("\n" if isinstance(text, str) else b"\n")  # type: ignore[arg-type]
    if lines and not lines[-1]:
        lines.pop()
    return lines
