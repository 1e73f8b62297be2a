"""Which lines of a text hold a match: grep's inner loop, kept apart from choosing files.

Line by line, ``re`` would run once per line from Python, so a file of 5,000 lines costs 5,000
calls even when nothing matches. Instead the pattern, compiled with ``re.MULTILINE`` so ``^``
and ``$`` hold at every line, runs over the whole text in C; each hit names a line, which is
then confirmed alone (exactly grep's per-line semantics), and the search goes on after it. A
match on a line alone is a match in the whole text at the same place, except for constructs
that look beyond the line: lookarounds and the ``\\A``/``\\Z`` anchors. Patterns with those go
line by line.
"""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any, AnyStr, NamedTuple

_LOOKS_BEYOND_THE_LINE = {sre.ASSERT, sre.ASSERT_NOT}
_STRING_ANCHORS = {sre.AT_BEGINNING_STRING, sre.AT_END_STRING}


def whole_text_form(regex: re.Pattern[str]) -> re.Pattern[str] | None:
    """``regex`` with ``re.MULTILINE``, or None when searching the whole text could miss a
    line's match (see the module docstring)."""
    try:
        parsed = _parser.parse(regex.pattern, regex.flags)
    except (re.error, RecursionError):
        return None
    if _looks_beyond(list(parsed)):
        return None
    return re.compile(regex.pattern, regex.flags | re.MULTILINE)


def _looks_beyond(items: list[tuple[Any, Any]]) -> bool:
    for op, av in items:
        if op in _LOOKS_BEYOND_THE_LINE or (op is sre.AT and av in _STRING_ANCHORS):
            return True
        if op is sre.SUBPATTERN and _looks_beyond(list(av[3])):
            return True
        if op is sre.BRANCH and any(_looks_beyond(list(alt)) for alt in av[1]):
            return True
        repeat = op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None))
        if repeat and _looks_beyond(list(av[2])):
            return True
        if op is getattr(sre, "ATOMIC_GROUP", None) and _looks_beyond(list(av)):
            return True
        if op is sre.GROUPREF_EXISTS:
            return True  # (?(1)yes|no): rare; not worth reasoning about
    return False


class Hit(NamedTuple):
    """A matching line: its 0-based number and where it lies in the text (newline excluded)."""

    line: int
    start: int
    end: int


def ascii_literal(regex: re.Pattern[str]) -> re.Pattern[bytes] | None:
    """A bytes pattern equivalent to ``regex`` on UTF-8 text, when ``regex`` is one ASCII
    literal: an ASCII byte sequence occurs in UTF-8 exactly where the characters do, so the
    file need not be decoded. Not for a case-insensitive literal with a letter Python equates
    with a non-ASCII one (see ``agentfs.search.literals``), nor for one with a newline."""
    try:
        parsed = list(_parser.parse(regex.pattern, regex.flags))
    except (re.error, RecursionError):
        return None
    if not parsed or any(op is not sre.LITERAL for op, _av in parsed):
        return None
    literal = "".join(chr(av) for _op, av in parsed)
    ignore_case = bool(regex.flags & re.IGNORECASE)
    if not literal.isascii() or "\n" in literal or (ignore_case and set(literal) & set("iksIKS")):
        return None
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(re.escape(literal.encode()), flags)


def matching_lines(
    regex: re.Pattern[AnyStr], whole: re.Pattern[AnyStr] | None, text: AnyStr
) -> list[Hit]:
    """The lines of ``text`` (split on newlines) holding a match of ``regex``; ``whole`` is
    its ``whole_text_form``. ``text`` may be ``bytes`` (with byte patterns): UTF-8 text
    searched for an ASCII literal, which needs no decoding."""
    newline = "\n" if isinstance(text, str) else b"\n"
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
        if start == end_of_text and text.endswith(newline):  # type: ignore[arg-type]
            break  # after the final newline: no line is there
        line += text.count(newline, counted, start)  # type: ignore[arg-type]
        counted = start
        line_start = text.rfind(newline, 0, start) + 1  # type: ignore[arg-type]
        line_end = text.find(newline, start)  # type: ignore[arg-type]
        if line_end < 0:
            line_end = end_of_text
        # a match inside the line is the line's own; one that runs past it must be re-checked
        if found.end() <= line_end or regex.search(text[line_start:line_end]):
            hits.append(Hit(line, line_start, line_end))
        pos = line_end + 1
    return hits


def _line_by_line(regex: re.Pattern[AnyStr], text: AnyStr) -> list[Hit]:
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
