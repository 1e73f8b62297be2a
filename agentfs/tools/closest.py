"""The lines of a file most like a text that was expected there but not found.

When an edit's ``old_string`` or a patch hunk's context is not in the file, the error shows the
model the file's closest lines so it can copy them exactly; both use this search.
"""

from __future__ import annotations

import difflib

#: Past this many lines the search is skipped: it is only a hint.
HINT_SCAN_LINES = 20_000
#: Candidate windows scored in full (the best starts by their first line).
CANDIDATES = 20
#: Below this similarity nothing is shown.
MIN_SIMILARITY = 0.5


def closest_window(lines: list[str], wanted: list[str]) -> int | None:
    """The 0-based start of the ``len(wanted)`` lines of ``lines`` most like ``wanted``, or
    None when nothing is similar enough (or the file is too long to scan)."""
    if not lines or not wanted or len(lines) > HINT_SCAN_LINES:
        return None
    height = len(wanted)
    first = wanted[0].strip()
    scorer = difflib.SequenceMatcher(autojunk=False)
    scorer.set_seq2(first)
    starts = []
    for i, line in enumerate(lines):
        scorer.set_seq1(line.strip())
        if scorer.real_quick_ratio() > MIN_SIMILARITY and scorer.quick_ratio() > MIN_SIMILARITY:
            starts.append((scorer.ratio(), i))
    starts.sort(reverse=True)
    best: tuple[float, int] | None = None
    window = difflib.SequenceMatcher(autojunk=False)
    window.set_seq2("\n".join(wanted))
    for _, i in starts[:CANDIDATES]:
        window.set_seq1("\n".join(lines[i : i + height]))
        score = window.ratio()
        if best is None or score > best[0]:
            best = (score, i)
    if best is None or best[0] < MIN_SIMILARITY:
        return None
    return best[1]


def numbered(lines: list[str], first: int) -> str:
    """``lines`` as ``read_file`` shows them, the first numbered ``first`` (1-based)."""
    return "\n".join(f"{first + k:>6}\t{line}" for k, line in enumerate(lines))


def same_but_space(a: list[str], b: list[str]) -> bool:
    """Whether the two differ only in whitespace (the hint models most often need)."""
    return [" ".join(x.split()) for x in a] == [" ".join(x.split()) for x in b]
