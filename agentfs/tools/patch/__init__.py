"""Patches as text: parsing both formats models write, and applying hunks to a file's text.

This package knows nothing of workspaces or tools (``agentfs.tools.patching`` is the tool): a
patch is parsed into ``FilePatch`` objects (``parse``), and each file's hunks are located in
its text and applied (``apply_hunks``), all in memory, so the tool can check every file before
it writes one.
"""

from agentfs.tools.patch.apply import HunkFailed, Placement, apply_hunks, new_file_text
from agentfs.tools.patch.model import FilePatch, Hunk, PatchSyntaxError
from agentfs.tools.patch.parse import parse

__all__ = [
    "FilePatch",
    "Hunk",
    "HunkFailed",
    "PatchSyntaxError",
    "Placement",
    "apply_hunks",
    "new_file_text",
    "parse",
]
