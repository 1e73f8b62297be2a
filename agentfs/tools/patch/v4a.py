"""The ``*** Begin Patch`` format OpenAI's models emit::

    *** Begin Patch
    *** Add File: path            every line of the new file, each prefixed with +
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path         optional: rename after updating
    @@ def handler():             optional anchors: lines found, in order, before the hunk
     context line                 (space) kept, - removed, + added
    *** End of File               optional: the hunk's old text ends the file
    *** End Patch

Hunks of one file are separated by ``@@`` lines. A blank line inside a hunk is a blank context
line (editors and models strip the lone space). A patch without its ``*** End Patch`` line is
refused as cut off: nothing else in the format would show where it stopped.
"""

from __future__ import annotations

from agentfs.tools.patch.model import FilePatch, Hunk, PatchSyntaxError

BEGIN = "*** Begin Patch"
END = "*** End Patch"
_ADD = "*** Add File: "
_DELETE = "*** Delete File: "
_UPDATE = "*** Update File: "
_MOVE = "*** Move to: "
_END_OF_FILE = "*** End of File"


def parse_v4a(lines: list[str], begin: int) -> list[FilePatch]:
    """Parse from ``lines[begin]`` (the ``*** Begin Patch`` line)."""
    files: list[FilePatch] = []
    i = begin + 1
    while i < len(lines):
        line = lines[i]
        number = i + 1
        if line.strip() == END:
            rest = [n for n in range(i + 1, len(lines)) if lines[n].strip()]
            if rest and not lines[rest[0]].startswith("```"):
                raise PatchSyntaxError(rest[0] + 1, f"text after '{END}'")
            return files
        if line.startswith(_ADD):
            path = _path(line, _ADD, number)
            hunk = Hunk(line=number)
            i += 1
            while i < len(lines) and not lines[i].startswith("***"):
                if not lines[i].startswith("+"):
                    raise PatchSyntaxError(
                        i + 1, f"a line of an added file must start with '+': {lines[i]!r}"
                    )
                hunk.lines.append(("+", lines[i][1:]))
                i += 1
            files.append(FilePatch("add", path, [hunk], line=number))
            continue
        if line.startswith(_DELETE):
            files.append(FilePatch("delete", _path(line, _DELETE, number), line=number))
            i += 1
            continue
        if line.startswith(_UPDATE):
            patch = FilePatch("update", _path(line, _UPDATE, number), line=number)
            i += 1
            if i < len(lines) and lines[i].startswith(_MOVE):
                patch.move_to = _path(lines[i], _MOVE, i + 1)
                i += 1
            i = _hunks(lines, i, patch)
            files.append(patch)
            continue
        if not line.strip():
            i += 1
            continue
        raise PatchSyntaxError(
            number,
            f"expected '{_ADD.strip()}', '{_UPDATE.strip()}', '{_DELETE.strip()}' or"
            f" '{END}', found {line!r}",
        )
    # No End Patch: the patch was cut off (a model's output stopped at its limit), and its last
    # hunk may be too; its hunks have no counts to tell, so none of it is taken.
    last = next((n for n in range(len(lines) - 1, begin, -1) if lines[n].strip()), begin)
    raise PatchSyntaxError(
        last + 1,
        f"the patch ends without '{END}': it looks cut off; send the whole patch",
    )


def _hunks(lines: list[str], i: int, patch: FilePatch) -> int:
    """Read an Update File's hunks from ``lines[i]``; the index after them."""
    hunk = Hunk(line=i + 1)
    while i < len(lines):
        line = lines[i]
        if line.startswith(_END_OF_FILE):
            hunk.at_end = True
            i += 1
            break
        if line.startswith("***"):
            break
        if line.startswith("@@"):
            if hunk.lines:
                patch.hunks.append(hunk)
                hunk = Hunk(line=i + 1)
            anchor = line[2:].strip()
            if anchor:
                hunk.anchors.append(anchor)
        elif line == "":
            hunk.lines.append((" ", ""))
        elif line[0] in " -+":
            hunk.lines.append((line[0], line[1:]))  # type: ignore[arg-type]
        else:
            raise PatchSyntaxError(
                i + 1,
                f"a hunk line must start with ' ' (context), '-' or '+': {line!r}"
                " (for a context line, keep its leading space)",
            )
        i += 1
    while hunk.lines and hunk.lines[-1] == (" ", "") and not hunk.at_end:
        hunk.lines.pop()  # blank lines before the next file are spacing, not context
    if hunk.lines:
        patch.hunks.append(hunk)
    if not patch.hunks and patch.move_to is None:
        raise PatchSyntaxError(patch.line, f"'{_UPDATE}{patch.path}' has no hunks")
    return i


def _path(line: str, prefix: str, number: int) -> str:
    path = line[len(prefix) :].strip()
    if not path:
        raise PatchSyntaxError(number, f"'{prefix.strip()}' without a path")
    return path
