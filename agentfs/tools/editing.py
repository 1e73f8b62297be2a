"""``edit_file`` and ``multi_edit``: exact string replacement, the edit agent frameworks teach.

``old_string`` must occur exactly once (or ``replace_all``); otherwise the error shows the
closest lines (``no_match``) or every occurrence (``not_unique``), so the model can fix its next
call. A CRLF file accepts ``\\n`` in both strings and keeps its CRLFs; the result is a diff.
"""

from __future__ import annotations

from pydantic import Field

from agentfs.history.api import unified_diff
from agentfs.tools.closest import closest_window, numbered, same_but_space
from agentfs.tools.common import (
    EXPECTED_VERSION,
    PATH_DOC,
    SeenVersion,
    check_expected,
    text_to_change,
    version_of,
)
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.spec import ToolInput, ToolOutput, absent, tool


class Edit(ToolInput):
    old_string: str = Field(
        description="the exact text to replace, copied from read_file without the line numbers,"
        " whitespace included"
    )
    new_string: str = Field(description="the text to put in its place")
    replace_all: bool = Field(False, description="replace every occurrence, not just one")


class EditFileInput(Edit):
    path: str = Field(description=PATH_DOC)
    dry_run: bool = Field(False, description="only show the diff; change nothing")
    expected_version: SeenVersion | None = EXPECTED_VERSION


class EditOutput(ToolOutput):
    path: str
    replacements: int
    diff: str = Field(description="unified diff of the change")
    dry_run: bool
    version: int = Field(description="the file's version after the edit (unchanged on dry_run)")
    note: str | None = Field(
        None, description="why no version was kept, when none was", exclude_if=absent
    )

    def text(self) -> str:
        if self.dry_run:
            head = f"Dry run: {self.replacements} replacement(s) in {self.path} would give:"
        else:
            head = f"Edited {self.path}: {self.replacements} replacement(s)"
            head += f", now version {self.version}" + (
                "." if self.note is None else f"; {self.note}."
            )
        return f"{head}\n{self.diff}"


def replace(
    path: str, text: str, edit: Edit, label: str = "", names: tuple[str, str] | None = None
) -> tuple[str, int]:
    """``text`` with ``edit`` applied and how many replacements it made; ``no_match`` or
    ``not_unique`` (``label`` names the edit in a ``multi_edit``). ``names``: what the
    caller's tool calls the old and new text (a profile's ``old_text``, ``new_text``), whose
    edit has no ``replace_all``."""
    old_name, new_name = names or ("old_string", "new_string")
    old, new = edit.old_string, edit.new_string
    if old == "":
        raise ToolError(
            "invalid_argument",
            f"{label}{old_name} is empty; to write a whole file use write_file"
            + ("" if names else " or create_file"),
        )
    if old == new:
        raise ToolError("invalid_argument", f"{label}{old_name} and {new_name} are the same")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")  # a CRLF file
        count = text.count(old)
    if count == 0:
        raise _no_match(path, text, edit.old_string, label, old_name)
    if count > 1 and not edit.replace_all:
        lines = _occurrence_lines(text, old)
        shown = ", ".join(str(n) for n in lines[:20]) + (" ..." if len(lines) > 20 else "")
        every = "" if names else ", or pass replace_all=true"
        raise ToolError(
            "not_unique",
            f"{label}{old_name} occurs {count} times in {path} (lines {shown}); include more"
            f" surrounding lines to make it unique{every}",
            lines=lines,
        )
    return text.replace(old, new), count


def _occurrence_lines(text: str, needle: str) -> list[int]:
    out = []
    start = text.find(needle)
    while start >= 0:
        out.append(text.count("\n", 0, start) + 1)
        start = text.find(needle, start + len(needle))
    return out


def _no_match(path: str, text: str, old: str, label: str, name: str) -> ToolError:
    """``no_match``, with the file's lines closest to ``old`` (the argument ``name``) so the
    model can copy them."""
    message = f"{label}{name} was not found in {path}."
    lines = text.split("\n")
    wanted = old.strip("\n").split("\n")
    i = closest_window(lines, wanted)
    if i is None:
        return ToolError("no_match", message + " Call read_file and copy the text exactly.")
    shown = lines[i : i + len(wanted)]
    hint = " (the difference may be whitespace)" if same_but_space(shown, wanted) else ""
    return ToolError(
        "no_match",
        f"{message} The closest text{hint} is at lines {i + 1}-{i + len(shown)}:\n"
        f"{numbered(shown, i + 1)}\nCopy it exactly (whitespace included) into {name}.",
        closest={"line": i + 1, "text": "\n".join(shown)},
    )


def _commit(
    ctx: Context, path: str, before: str, after: str, count: int, dry_run: bool
) -> EditOutput:
    ws = ctx.ws
    diff = unified_diff(before.encode(), after.encode(), f"a{path}", f"b{path}")
    if dry_run:
        version = version_of(ws, path, ws.stat(path))
        return EditOutput(path=path, replacements=count, diff=diff, dry_run=True, version=version)
    data = after.encode("utf-8")
    ctx.check_size(len(data), path)
    version = ctx.write(path, data)
    note = ws.history_settings.unversioned(len(data)) if version == 0 else None
    return EditOutput(
        path=path, replacements=count, diff=diff, dry_run=False, version=version, note=note
    )


@tool(
    "edit_file",
    title="Edit a file",
    mutates=True,
    destructive=True,
    description="""Replace an exact string in a file and return the diff. old_string must
    occur exactly once unless replace_all=true: include enough surrounding lines to make it
    unique. The policy may require read_file first (read_required, stale_read).""",
)
def edit_file(ctx: Context, args: EditFileInput) -> EditOutput:
    path = ctx.path(args.path, write=True)
    if not args.dry_run:
        check_expected(ctx.ws, path, args.expected_version)
    before = text_to_change(ctx.ws, path)
    after, count = replace(path, before, args)
    return _commit(ctx, path, before, after, count, args.dry_run)


class MultiEditInput(ToolInput):
    path: str = Field(description=PATH_DOC)
    edits: list[Edit] = Field(
        min_length=1, description="edits applied in order, each to the result of the one before"
    )
    dry_run: bool = Field(False, description="only show the diff; change nothing")
    expected_version: SeenVersion | None = EXPECTED_VERSION


@tool(
    "multi_edit",
    title="Several edits to one file",
    mutates=True,
    destructive=True,
    description="""Several exact-string edits to one file, each following edit_file's rules,
    all or nothing: if one fails, the file is unchanged and the error names the edit.""",
)
def multi_edit(ctx: Context, args: MultiEditInput) -> EditOutput:
    path = ctx.path(args.path, write=True)
    if not args.dry_run:
        check_expected(ctx.ws, path, args.expected_version)
    before = text_to_change(ctx.ws, path)
    text, total = before, 0
    for number, edit in enumerate(args.edits, 1):
        text, count = replace(path, text, edit, label=f"edit {number}: ")
        total += count
    return _commit(ctx, path, before, text, total, args.dry_run)
