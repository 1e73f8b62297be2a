"""``apply_patch``: a patch over many files, in either format models write, all or nothing.

Every file of the patch is worked out in memory first (``agentfs.tools.patch``): each hunk
located, each new text built, each path checked against the policy and the limits. Only when
every file applies is anything written, and the writes run in the call's one transaction
(``Toolset``), so a patch that fails at its last hunk, or a write refused half-way, leaves the
workspace exactly as it was: no peer offers a multi-file patch that is atomic.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agentfs.core import paths
from agentfs.history.api import unified_diff
from agentfs.tools.common import SeenVersion, check_expected, text_to_change, version_of
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.patch import (
    FilePatch,
    HunkFailed,
    PatchSyntaxError,
    apply_hunks,
    new_file_text,
    parse,
)
from agentfs.tools.spec import ToolInput, ToolOutput, tool

#: The diff in a result is cut here (the files and their hunks are always all listed).
DIFF_SHOWN = 20_000


class ApplyPatchInput(ToolInput):
    patch: str = Field(
        description="(1) a unified diff as `git diff` prints it: `--- a/path`, `+++ b/path`"
        " (/dev/null to add or delete a file), then `@@ -l,n +l,n @@` hunks of ' ' context,"
        " '-' removed and '+' added lines; or (2) the '*** Begin Patch' format: `*** Add File:"
        " path` (every line prefixed '+'), `*** Delete File: path`, `*** Update File: path`"
        " (optionally `*** Move to: new/path`) with hunks separated by `@@` lines (`@@ def"
        " name():` first finds that line), ending with `*** End Patch`. Give 3 lines of"
        " context around each change."
    )
    dry_run: bool = Field(
        False, description="check that it applies and show the diff; write nothing"
    )
    expected_versions: dict[str, SeenVersion] | None = Field(
        None,
        description="path -> the version you last saw (from read_file or stat); if any of"
        " those files changed since, the call fails with stale_read and changes nothing",
    )


class HunkPlacement(BaseModel):
    hunk: int = Field(description="1-based, in the file's order in the patch")
    line: int = Field(description="the 1-based line of the file (before the patch) it went to")
    offset: int | None = Field(
        description="lines from where the hunk's @@ header said (unified diffs only)"
    )
    match: Literal["exact", "trailing_whitespace", "whitespace", "punctuation"] = Field(
        description="how the hunk's lines were matched: exactly, or ignoring what is named"
    )


class PatchedFile(BaseModel):
    path: str
    action: Literal["added", "updated", "moved", "deleted"]
    move_to: str | None = None
    hunks: list[HunkPlacement] = Field(default_factory=list)
    added_lines: int
    removed_lines: int
    version: int | None = Field(
        description="the file's version after the patch (None: deleted, or a dry run)"
    )


class ApplyPatchOutput(ToolOutput):
    files: list[PatchedFile]
    dry_run: bool
    diff: str = Field(description="unified diff of every change (cut at 20,000 characters)")
    diff_truncated: bool

    def text(self) -> str:
        parts = []
        for f in self.files:
            what = f"{f.action} {f.path}" + (f" -> {f.move_to}" if f.move_to else "")
            moved = [h for h in f.hunks if h.offset or h.match != "exact"]
            notes = [
                f"hunk {h.hunk} at line {h.line}"
                + (f" (offset {h.offset:+d})" if h.offset else "")
                + ("" if h.match == "exact" else f" (ignoring {h.match.replace('_', ' ')})")
                for h in moved
            ]
            counts = f"+{f.added_lines} -{f.removed_lines}"
            parts.append(f"{what} ({counts}{'; ' + '; '.join(notes) if notes else ''})")
        head = "Dry run: the patch applies" if self.dry_run else "Applied the patch"
        cut = "\n... diff truncated" if self.diff_truncated else ""
        return f"{head}: " + ", ".join(parts) + f".\n{self.diff}{cut}"


class _Change:
    """One file's outcome, worked out before anything is written."""

    def __init__(self, patch: FilePatch, path: str, move_to: str | None) -> None:
        self.patch = patch
        self.path = path
        self.move_to = move_to
        self.before: str = ""
        self.after: str | None = None  # None: deleted
        self.placements: list[HunkPlacement] = []


@tool(
    "apply_patch",
    title="Apply a patch",
    mutates=True,
    destructive=True,
    description="""Apply a patch to one or many files, all or nothing: if any hunk does not
    apply, nothing is written. Hunks are found by their context lines (exactly, then ignoring
    trailing whitespace, then all surrounding whitespace); the result says when a hunk went
    elsewhere than its header said.""",
)
def apply_patch(ctx: Context, args: ApplyPatchInput) -> ApplyPatchOutput:
    try:
        patches = parse(args.patch)
    except PatchSyntaxError as exc:
        raise ToolError("invalid_argument", f"not a valid patch: {exc}", line=exc.line) from None
    view: dict[str, str | None] = {}  # path -> its text as the patch leaves it (None: gone)
    changes = [_work_out(ctx, patch, view) for patch in patches]
    for raw, expected in (args.expected_versions or {}).items():
        check_expected(ctx.ws, ctx.path(raw), expected)
    for path, text in view.items():
        if text is not None:
            ctx.check_size(len(text.encode("utf-8")), path)
    diff = "".join(_diff(change) for change in changes)
    files = [_written(ctx, change, args.dry_run) for change in changes]
    return ApplyPatchOutput(
        files=files,
        dry_run=args.dry_run,
        diff=diff[:DIFF_SHOWN],
        diff_truncated=len(diff) > DIFF_SHOWN,
    )


def _work_out(ctx: Context, patch: FilePatch, view: dict[str, str | None]) -> _Change:
    """Apply ``patch`` to the texts in ``view`` (the workspace's, as earlier files of the same
    patch left them), in memory."""
    path = ctx.path(patch.path, write=True)
    move_to = ctx.path(patch.move_to, write=True) if patch.move_to else None
    change = _Change(patch, path, move_to if move_to != path else None)
    exists = _exists(ctx, path, view)
    if patch.action == "add":
        if exists:
            raise ToolError(
                "exists",
                f"{path} already exists; the patch adds it (use '*** Update File' or a diff"
                " against its content)",
            )
        change.after = new_file_text(patch.hunks[0])
        view[path] = change.after
        return change
    if not exists:
        raise ToolError("not_found", f"{path} does not exist; call ls or glob to find it")
    current = view.get(path)
    change.before = current if current is not None else text_to_change(ctx.ws, path)
    try:
        after, placements = apply_hunks(path, change.before, patch.hunks)
    except HunkFailed as exc:
        raise ToolError(
            "patch_failed",
            exc.message,
            path=exc.path,
            hunk=exc.hunk,
            expected=exc.expected,
            closest_line=exc.closest_line,
        ) from None
    change.placements = [HunkPlacement(**p._asdict()) for p in placements]
    if patch.action == "delete":
        if patch.hunks and after.strip():  # a unified diff's deletion shows what it deletes
            raise ToolError(
                "patch_failed",
                f"{path} holds lines the patch does not delete; nothing was changed: call"
                " read_file and regenerate the patch",
                path=path,
            )
        view[path] = None
        return change
    change.after = after
    if change.move_to is not None:
        if _exists(ctx, change.move_to, view):
            raise ToolError(
                "exists", f"{change.move_to} already exists; the patch moves {path} there"
            )
        view[path] = None
        view[change.move_to] = after
    else:
        view[path] = after
    return change


def _exists(ctx: Context, path: str, view: dict[str, str | None]) -> bool:
    if path in view:
        return view[path] is not None
    return ctx.ws.exists(path)


def _diff(change: _Change) -> str:
    target = change.move_to or change.path
    old_label = "/dev/null" if change.patch.action == "add" else f"a{change.path}"
    new_label = "/dev/null" if change.after is None else f"b{target}"
    return unified_diff(change.before.encode(), (change.after or "").encode(), old_label, new_label)


def _written(ctx: Context, change: _Change, dry_run: bool) -> PatchedFile:
    """Write one change (unless ``dry_run``) and describe it."""
    ws = ctx.ws
    removed = sum(op == "-" for h in change.patch.hunks for op, _ in h.lines)
    added = sum(op == "+" for h in change.patch.hunks for op, _ in h.lines)
    if change.patch.action == "delete":
        removed, added = len(change.before.splitlines()), 0
    action: Literal["added", "updated", "moved", "deleted"] = {
        "add": "added",
        "delete": "deleted",
        "update": "moved" if change.move_to else "updated",
    }[change.patch.action]  # type: ignore[assignment]
    version = None
    if not dry_run:
        if change.after is None:
            ws.remove(change.path)
        else:
            if change.move_to is not None:
                ws.mkdir(paths.parent_and_name(change.move_to)[0], parents=True)
                ws.rename(change.path, change.move_to)
            target = change.move_to or change.path
            st = ws.write(target, change.after.encode("utf-8"), parents=True)
            version = version_of(ws, target, st)
    return PatchedFile(
        path=change.path,
        action=action,
        move_to=change.move_to,
        hunks=change.placements,
        added_lines=added,
        removed_lines=removed,
        version=version,
    )
