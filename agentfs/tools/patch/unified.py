"""The unified diff: what ``diff -u`` and ``git diff`` print, one or many files::

    diff --git a/src/app.py b/src/app.py      optional (git); so are index/mode lines
    --- a/src/app.py                          /dev/null: the file is added
    +++ b/src/app.py                          /dev/null: the file is deleted
    @@ -12,3 +12,4 @@ def main():            old start,count  new start,count
     context
    -removed
    +added
    \\ No newline at end of file

Git's ``a/`` and ``b/`` prefixes are dropped when both names carry them; a tab and what follows
(``diff -u``'s timestamps) are not part of the name. Models often miscount the ``@@`` line's
counts, so they are taken when they agree with the lines that follow, and otherwise a hunk runs
to the next header or to the first line that cannot be part of a hunk. A git rename
(``rename from``/``rename to``) is an update with a move.

A patch cut off (a model's output stopped at its token limit, a paste that lost its end) is
refused, not applied in part: the last hunk having fewer lines than its header counts on one
side and no more on the other (a cut only removes lines; a miscount that adds lines is a
miscount), or the patch ending in a file's headers. A cut exactly between two whole hunks or
files leaves a well-formed shorter patch: a unified diff has no end marker to tell it by.
"""

from __future__ import annotations

import re

from agentfs.tools.patch.model import FilePatch, Hunk, Op, PatchSyntaxError

_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\"  # "\ No newline at end of file" (the text after the backslash varies)


def parse_unified(lines: list[str]) -> list[FilePatch]:
    for number, line in enumerate(lines, 1):
        if line.startswith("GIT binary patch") or line.startswith("Binary files "):
            raise PatchSyntaxError(number, "binary patches are not supported")
    files: list[FilePatch] = []
    rename: tuple[str | None, str | None] = (None, None)
    section: int | None = None  # the line of the last ``diff `` line without a header yet
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff "):
            rename, section = (None, None), i
        elif line.startswith("rename from "):
            rename = (line[len("rename from ") :].strip(), rename[1])
        elif line.startswith("rename to "):
            rename = (rename[0], line[len("rename to ") :].strip())
            if rename[0] and not _header_follows(lines, i + 1):
                files.append(FilePatch("update", rename[0], move_to=rename[1], line=i + 1))
                section = None
        elif line.startswith("new mode "):
            section = None  # a change of mode alone: a whole section, nothing to apply
        elif _is_file_header(lines, i):
            patch, i = _file(lines, i)
            section = None
            if rename[0] and rename[1]:
                patch.action, patch.path, patch.move_to = "update", rename[0], rename[1]
            rename = (None, None)
            files.append(patch)
            continue
        elif line.startswith("@@"):
            raise PatchSyntaxError(i + 1, "a hunk before any '--- a/path' / '+++ b/path' lines")
        i += 1
    if section is not None:
        raise PatchSyntaxError(
            section + 1, f"{lines[section]!r} is not followed by its '---'/'+++' lines: {_CUT}"
        )
    return files


#: The end of every message about a patch that stops short.
_CUT = "the patch looks cut off; send the whole patch"


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _header_follows(lines: list[str], i: int) -> bool:
    """Whether a ``---``/``+++`` pair comes before the next ``diff`` line (git writes one for
    a rename with changes, none for a pure rename)."""
    while i < len(lines) and not lines[i].startswith("diff "):
        if _is_file_header(lines, i):
            return True
        i += 1
    return False


def _file(lines: list[str], i: int) -> tuple[FilePatch, int]:
    """One file's ``---``/``+++`` lines and its hunks; the patch and the index after it."""
    number = i + 1
    old = _name(lines[i][4:], number)
    new = _name(lines[i + 1][4:], number + 1)
    if old != "/dev/null" and new != "/dev/null" and old.startswith("a/") and new.startswith("b/"):
        old, new = old[2:], new[2:]
    else:  # one side is /dev/null: strip git's prefix from the other alone
        old = old[2:] if old.startswith("a/") and new == "/dev/null" else old
        new = new[2:] if new.startswith("b/") and old == "/dev/null" else new
    if old == "/dev/null" and new == "/dev/null":
        raise PatchSyntaxError(number, "both names are /dev/null")
    if old == "/dev/null":
        patch = FilePatch("add", new, line=number)
    elif new == "/dev/null":
        patch = FilePatch("delete", old, line=number)
    else:
        patch = FilePatch("update", old, move_to=new if new != old else None, line=number)
    i += 2
    while i < len(lines) and lines[i].startswith("@@"):
        hunk, i = _hunk(lines, i)
        patch.hunks.append(hunk)
    if not patch.hunks and _only_blank_after(lines, i):
        raise PatchSyntaxError(number, f"the patch ends at {patch.path}'s headers: {_CUT}")
    if patch.action == "update" and not patch.hunks and patch.move_to is None:
        raise PatchSyntaxError(number, f"no hunks ('@@ -l,n +l,n @@') for {patch.path}")
    if patch.action == "add" and not patch.hunks:
        patch.hunks.append(Hunk(line=number))  # an empty new file
    return patch, i


def _name(raw: str, number: int) -> str:
    name = raw.split("\t", 1)[0].strip()
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1]  # git quotes names with unusual characters
    if not name:
        raise PatchSyntaxError(number, "a file header without a name")
    return name


def _hunk(lines: list[str], i: int) -> tuple[Hunk, int]:
    header = _HUNK_HEADER.match(lines[i])
    if header is None:
        raise PatchSyntaxError(
            i + 1, f"not a hunk header (expected '@@ -l,n +l,n @@'): {lines[i]!r}"
        )
    old_start, old_count, _new_start, new_count = header.groups()
    hunk = Hunk(line=i + 1, old_start=int(old_start))
    counted = _counted_body(lines, i + 1, _count(old_count), _count(new_count))
    end = counted if counted is not None else _loose_body_end(lines, i + 1)
    if counted is None and _only_blank_after(lines, end):
        _refuse_if_cut(lines, i, end, _count(old_count), _count(new_count))
    if (
        counted is not None
        and end < len(lines)
        and lines[end].startswith("--- ")
        and _only_blank_after(lines, end + 1)
    ):
        raise PatchSyntaxError(end + 1, f"a '---' line without its '+++' line: {_CUT}")
    for k in range(i + 1, end):
        line = lines[k]
        if line.startswith(_NO_NEWLINE):
            previous = hunk.lines[-1][0] if hunk.lines else " "
            if previous in " -":
                hunk.old_no_newline = True
            if previous in " +":
                hunk.new_no_newline = True
            continue
        op: Op = " " if line == "" else line[0]  # type: ignore[assignment]
        hunk.lines.append((op, line[1:]))
    if not hunk.lines:
        raise PatchSyntaxError(i + 1, "a hunk with no lines")
    return hunk, end


def _only_blank_after(lines: list[str], k: int) -> bool:
    return all(not line.strip() for line in lines[k:])


def _refuse_if_cut(lines: list[str], i: int, end: int, old: int, new: int) -> None:
    """The patch's last hunk (header at ``i``, body up to ``end``) with fewer lines than its
    header says on one side and no more on the other: the rest of it was cut off."""
    body = [line for line in lines[i + 1 : end] if not line.startswith(_NO_NEWLINE)]
    old_seen = sum(1 for line in body if not line.startswith("+"))
    new_seen = sum(1 for line in body if not line.startswith("-"))
    if old_seen <= old and new_seen <= new:
        raise PatchSyntaxError(
            i + 1,
            f"the hunk {lines[i]!r} says {old} old and {new} new lines but the patch ends"
            f" after {old_seen} and {new_seen}: {_CUT} (or correct the hunk's counts)",
        )


def _count(raw: str | None) -> int:
    return 1 if raw is None else int(raw)


def _is_body_line(lines: list[str], k: int) -> bool:
    line = lines[k]
    if line.startswith("@@") or _is_file_header(lines, k) or line.startswith("diff "):
        return False
    return line == "" or line[0] in " -+" or line.startswith(_NO_NEWLINE)


def _counted_body(lines: list[str], start: int, old: int, new: int) -> int | None:
    """The end of a hunk body that has exactly the header's counts, or None when the lines
    disagree with them (too few, or hunk lines going on after)."""
    k = start
    while (old > 0 or new > 0) and k < len(lines) and _is_body_line(lines, k):
        line = lines[k]
        if not line.startswith(_NO_NEWLINE):
            op = " " if line == "" else line[0]
            old -= op != "+"
            new -= op != "-"
        k += 1
    if old != 0 or new != 0:
        return None
    if k < len(lines) and lines[k].startswith(_NO_NEWLINE):
        k += 1
    if k < len(lines) and lines[k].startswith("--- ") and _only_blank_after(lines, k + 1):
        return k  # not a removal past the counts: the next file's header, cut off (_hunk)
    if k < len(lines) and lines[k] != "" and _is_body_line(lines, k):
        return None  # more hunk lines follow: the counts were wrong
    return k


def _loose_body_end(lines: list[str], start: int) -> int:
    """Where a hunk whose counts were wrong ends: at the next header or non-hunk line, less
    trailing blank lines (spacing, not context)."""
    k = start
    while k < len(lines) and _is_body_line(lines, k):
        k += 1
    while k > start and lines[k - 1] == "":
        k -= 1
    return k
