"""The diff ``edit_file`` shows: the hunks and header lines the npm ``diff`` package writes
(``createTwoFilesPatch``), from a Myers diff of lines."""

from __future__ import annotations

from typing import Any

# --- the diff -----------------------------------------------------------------------------------

#: A run of the diff: (lines, added, removed, the run before it).
_Run = tuple[int, bool, bool, Any]


def _line_tokens(text: str) -> list[str]:
    """The text's lines, each with its newline."""
    tokens = text.split("\n")
    lines = [line + "\n" for line in tokens[:-1]]
    if tokens[-1]:
        lines.append(tokens[-1])
    return lines


def _myers(old: list[str], new: list[str]) -> list[tuple[bool, bool, list[str]]]:
    """Myers's greedy diff of two lists of lines, exploring the diagonals in the order, and
    choosing between an insertion and a deletion by the rule, of the ``diff`` package that
    the server uses (so its hunks are the same): runs of (added, removed, lines)."""
    n_old, n_new = len(old), len(new)

    def common(path: list[Any], diagonal: int) -> int:
        old_pos = path[0]
        new_pos = old_pos - diagonal
        count = 0
        while new_pos + 1 < n_new and old_pos + 1 < n_old and old[old_pos + 1] == new[new_pos + 1]:
            new_pos, old_pos, count = new_pos + 1, old_pos + 1, count + 1
        if count:
            path[1] = (count, False, False, path[1])
        path[0] = old_pos
        return new_pos

    def extend(path: list[Any], added: bool, step: int) -> list[Any]:
        last: _Run | None = path[1]
        if last is not None and last[1] == added and last[2] == (not added):
            return [path[0] + step, (last[0] + 1, added, not added, last[3])]
        return [path[0] + step, (1, added, not added, last)]

    def runs(last: _Run | None) -> list[tuple[bool, bool, list[str]]]:
        chain = []
        while last is not None:
            chain.append(last)
            last = last[3]
        chain.reverse()
        out, old_pos, new_pos = [], 0, 0
        for count, added, removed, _ in chain:
            if removed:
                out.append((False, True, old[old_pos : old_pos + count]))
                old_pos += count
            else:
                out.append((added, False, new[new_pos : new_pos + count]))
                new_pos += count
                if not added:
                    old_pos += count
        return out

    best: dict[int, list[Any] | None] = {0: [-1, None]}
    start = best[0]
    assert start is not None
    new_pos = common(start, 0)
    if start[0] + 1 >= n_old and new_pos + 1 >= n_new:
        return runs(start[1])
    far = n_old + n_new + 2
    low, high = -far, far
    for edits in range(1, n_old + n_new + 1):
        for diagonal in range(max(low, -edits), min(high, edits) + 1, 2):
            remove, add = best.get(diagonal - 1), best.get(diagonal + 1)
            if remove is not None:
                best[diagonal - 1] = None
            can_add = add is not None and 0 <= add[0] - diagonal < n_new
            can_remove = remove is not None and remove[0] + 1 < n_old
            if not can_add and not can_remove:
                best[diagonal] = None
                continue
            if not can_remove or (can_add and remove[0] < add[0]):  # type: ignore[index]
                path = extend(add, True, 0)  # type: ignore[arg-type]
            else:
                path = extend(remove, False, 1)  # type: ignore[arg-type]
            new_pos = common(path, diagonal)
            if path[0] + 1 >= n_old and new_pos + 1 >= n_new:
                return runs(path[1])
            best[diagonal] = path
            if path[0] + 1 >= n_old:
                high = min(high, diagonal - 1)
            if new_pos + 1 >= n_new:
                low = max(low, diagonal + 1)
    raise AssertionError("the diff did not reach the end of both texts")  # pragma: no cover


def unified_diff(name: str, before: str, after: str, context: int = 4) -> str:
    """The unified diff the server shows (the ``diff`` package's ``createTwoFilesPatch`` with
    headers ``original`` and ``modified``): an ``Index:`` line, four lines of context, and
    ``\\ No newline at end of file`` after a last line without one."""
    changes: list[tuple[bool, bool, list[str]]] = _myers(_line_tokens(before), _line_tokens(after))
    changes.append((False, False, []))
    hunks: list[tuple[int, int, int, int, list[str]]] = []
    old_start = new_start = 0
    current: list[str] = []
    old_line = new_line = 1
    for index, (added, removed, lines) in enumerate(changes):
        if added or removed:
            if not old_start:
                old_start, new_start = old_line, new_line
                if index > 0:
                    before_lines = changes[index - 1][2][-context:] if context > 0 else []
                    current = [" " + line for line in before_lines]
                    old_start -= len(current)
                    new_start -= len(current)
            current += [("+" if added else "-") + line for line in lines]
            if added:
                new_line += len(lines)
            else:
                old_line += len(lines)
            continue
        if old_start:
            if len(lines) <= context * 2 and index < len(changes) - 2:
                current += [" " + line for line in lines]
            else:
                shown = min(len(lines), context)
                current += [" " + line for line in lines[:shown]]
                hunks.append(
                    (
                        old_start,
                        old_line - old_start + shown,
                        new_start,
                        new_line - new_start + shown,
                        current,
                    )
                )
                old_start = new_start = 0
                current = []
        old_line += len(lines)
        new_line += len(lines)
    out = [f"Index: {name}", "=" * 67, f"--- {name}\toriginal", f"+++ {name}\tmodified"]
    for old_from, old_count, new_from, new_count, lines in hunks:
        old_from -= old_count == 0
        new_from -= new_count == 0
        out.append(f"@@ -{old_from},{old_count} +{new_from},{new_count} @@")
        for line in lines:
            if line.endswith("\n"):
                out.append(line[:-1])
            else:
                out += [line, "\\ No newline at end of file"]
    return "\n".join(out) + "\n"
