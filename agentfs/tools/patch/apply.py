"""Applying a file's hunks to its text, in memory: locate each hunk, splice, report where.

A hunk is located by its old lines, searching forward from the previous hunk, in passes from
strict to forgiving (exact; trailing whitespace ignored; all surrounding whitespace ignored;
typographic punctuation taken as ASCII), the first pass that finds it winning; a unified diff's
hunk goes to the occurrence nearest its header's line (the distance reported as the offset), a
``*** Begin Patch`` hunk to the first after its anchors. Context lines, line endings and the
final newline stay the file's unless a hunk says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from agentfs.tools.closest import closest_window, numbered
from agentfs.tools.patch.model import Hunk

#: Typographic characters and the ASCII a model writes for them.
_PUNCTUATION = str.maketrans(
    {
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
        "\u2015": "-", "\u2212": "-",
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
        "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2009": " ", "\u202f": " ",
        "\u2026": "...",
    }
)  # fmt: skip

#: The passes, in order: their name (as reported) and the normal form lines are compared in.
PASSES: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("exact", lambda line: line),
    ("trailing_whitespace", str.rstrip),
    ("whitespace", str.strip),
    ("punctuation", lambda line: line.strip().translate(_PUNCTUATION)),
)


class Placement(NamedTuple):
    """Where a hunk went: ``line`` (1-based, in the file before the patch), how far that is
    from where its header said (``offset``; None without a header line) and which pass found
    it (``match``)."""

    hunk: int
    line: int
    offset: int | None
    match: str


class HunkFailed(Exception):
    """A hunk's old lines are not in the file (after the previous hunk)."""

    def __init__(
        self,
        path: str,
        hunk: int,
        hunk_count: int,
        message: str,
        expected: list[str],
        closest_line: int | None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.hunk = hunk
        self.hunk_count = hunk_count
        self.message = message
        self.expected = expected
        self.closest_line = closest_line


class _Text(NamedTuple):
    """A file's text as lines without their endings, and how to write them back."""

    lines: list[str]
    endings: list[str]  # "\r\n" or "\n" per line ("" for a last line without one)
    newline: str  # the file's usual ending, for added lines


def _split(text: str) -> _Text:
    raw = text.split("\n")
    final = raw.pop()  # "" when the text ends with a newline
    lines, endings = [], []
    for line in raw:
        crlf = line.endswith("\r")
        lines.append(line[:-1] if crlf else line)
        endings.append("\r\n" if crlf else "\n")
    if final:
        lines.append(final)
        endings.append("")
    crlf_count = endings.count("\r\n")
    return _Text(lines, endings, "\r\n" if crlf_count * 2 > len(endings) else "\n")


def new_file_text(hunk: Hunk) -> str:
    """The text of a file a patch adds: its added lines."""
    if not hunk.new:
        return ""
    return "\n".join(hunk.new) + ("" if hunk.new_no_newline else "\n")


def apply_hunks(path: str, text: str, hunks: list[Hunk]) -> tuple[str, list[Placement]]:
    """``text`` with ``hunks`` applied, and where each went; ``HunkFailed`` for the first
    that does not apply (and nothing is returned: the caller writes nothing)."""
    src = _split(text)
    forms = _Forms(src.lines)
    out_lines: list[str] = []
    out_endings: list[str] = []
    placements: list[Placement] = []
    cursor = 0
    for number, hunk in enumerate(hunks, 1):
        start = cursor
        for anchor in hunk.anchors:
            found = _find(forms, [anchor], start, None, False)
            if found is None:
                raise _failed(path, number, len(hunks), src.lines, [anchor], start, "anchor")
            start = found[0] + 1
        old = hunk.old
        if old:
            hint = None if hunk.old_start is None else hunk.old_start - 1
            found = _find(forms, old, start, hint, hunk.at_end)
            if found is None:
                raise _failed(path, number, len(hunks), src.lines, old, start, "hunk")
            at, match = found
        else:  # only added lines: where the header says, after the anchors, or at the end
            at = _insertion_point(hunk, start, len(src.lines))
            match = "exact"
        offset = None
        if hunk.old_start is not None:
            offset = at - (hunk.old_start - 1) if old else at - hunk.old_start
        placements.append(Placement(number, at + 1, offset, match))
        out_lines += src.lines[cursor:at]
        out_endings += src.endings[cursor:at]
        k = at
        for op, line in hunk.lines:
            if op == " ":
                out_lines.append(src.lines[k])
                out_endings.append(src.endings[k])
                k += 1
            elif op == "-":
                k += 1
            else:
                out_lines.append(line)
                out_endings.append(src.newline)
        cursor = at + len(old)
        if cursor == len(src.lines) and out_endings:
            out_endings[-1] = _final_ending(hunk, src, out_endings[-1])
    out_lines += src.lines[cursor:]
    out_endings += src.endings[cursor:]
    return "".join(line + end for line, end in zip(out_lines, out_endings, strict=True)), placements


def _final_ending(hunk: Hunk, src: _Text, current: str) -> str:
    """The last line's ending when a hunk reached the end of the file: none if the hunk's new
    side says so; none if the file had none and the hunk does not say its old side lacked one
    (a ``*** Begin Patch`` hunk never says); otherwise a newline."""
    if hunk.new_no_newline:
        return ""
    had_none = bool(src.endings) and src.endings[-1] == ""
    if had_none and not hunk.old_no_newline:
        return ""
    return current or src.newline


def _insertion_point(hunk: Hunk, start: int, length: int) -> int:
    if hunk.old_start is not None:
        # "@@ -N,0 +M,k @@": the new lines go after old line N
        return min(max(hunk.old_start, start), length)
    return start if hunk.anchors else length


class _Forms:
    """The file's lines in each pass's normal form, computed once per file when first needed."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._forms: dict[str, list[str]] = {}

    def get(self, name: str, form: Callable[[str], str]) -> list[str]:
        if name not in self._forms:
            self._forms[name] = [form(line) for line in self.lines]
        return self._forms[name]


def _find(
    forms: _Forms, wanted: list[str], start: int, hint: int | None, at_end: bool
) -> tuple[int, str] | None:
    """Where ``wanted`` occurs in the file at or after line ``start`` (0-based), and the pass
    that found it: nearest ``hint`` if given, else the first; with ``at_end``, the very end of
    the file first."""
    height = len(wanted)
    last = len(forms.lines) - height
    if last < start:
        return None
    for name, form in PASSES:
        want = [form(w) for w in wanted]
        seen = forms.get(name, form)
        if at_end and seen[last:] == want:
            return last, name
        first = want[0]
        hits = [
            i for i in range(start, last + 1) if seen[i] == first and seen[i : i + height] == want
        ]
        if hits:
            if hint is None:
                return hits[0], name
            return min(hits, key=lambda i: (abs(i - hint), i)), name
    return None


def _failed(
    path: str, number: int, count: int, lines: list[str], expected: list[str], start: int, what: str
) -> HunkFailed:
    """The error for a hunk (or its ``@@`` anchor) not found, with the closest lines."""
    where = f"hunk {number} of {count} for {path}"
    after = f" after line {start}" if start else ""
    wanted = "\n".join(f"    {line}" for line in expected)
    if what == "anchor":
        message = f"{where}: its @@ line was not found{after}:\n{wanted}"
    else:
        message = (
            f"{where} does not apply: these lines (context and removed) were not found{after},"
            f" not even ignoring whitespace:\n{wanted}"
        )
    i = closest_window(lines, expected)
    if i is not None:
        shown = lines[i : i + len(expected)]
        message += f"\nThe closest lines in the file are {i + 1}-{i + len(shown)}:\n"
        message += numbered(shown, i + 1)
    message += "\nNothing was changed: call read_file and make the patch from the file as it is."
    return HunkFailed(path, number, count, message, expected, None if i is None else i + 1)
