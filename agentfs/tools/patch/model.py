"""What a parsed patch is: files, each added, updated (maybe moved) or deleted, with hunks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: A hunk line's kind: context (kept), removed, added.
Op = Literal[" ", "-", "+"]


class PatchSyntaxError(ValueError):
    """The patch text is not a patch; ``line`` is the 1-based line of the patch at fault."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line} of the patch: {message}")
        self.line = line


@dataclass
class Hunk:
    """One change to a file: lines kept, removed and added, located by the old ones.

    ``old_start`` is the 1-based line a unified diff says the old text starts at (a hint: the
    file may have moved on); ``anchors`` are the ``@@ def f():`` lines of the ``*** Begin Patch``
    format, found in order before the hunk; ``at_end`` (``*** End of File``) says the old text
    ends the file. ``old_no_newline``/``new_no_newline`` record ``\\ No newline at end of
    file`` after the old or the new side's last line."""

    lines: list[tuple[Op, str]] = field(default_factory=list)
    old_start: int | None = None
    anchors: list[str] = field(default_factory=list)
    at_end: bool = False
    old_no_newline: bool = False
    new_no_newline: bool = False
    line: int = 0  # where the hunk starts in the patch, for errors

    @property
    def old(self) -> list[str]:
        return [text for op, text in self.lines if op != "+"]

    @property
    def new(self) -> list[str]:
        return [text for op, text in self.lines if op != "-"]


@dataclass
class FilePatch:
    """The change to one file. ``add``: ``hunks`` hold one hunk of added lines; ``update``:
    hunks to apply, then a rename to ``move_to`` if set; ``delete``: the file goes (a unified
    diff's hunk, if any, is the content it expects)."""

    action: Literal["add", "update", "delete"]
    path: str
    hunks: list[Hunk] = field(default_factory=list)
    move_to: str | None = None
    line: int = 0
