"""Which format a patch is in, and the parser for it.

Models write two: the unified diff (``--- a/x`` / ``+++ b/x`` / ``@@ -1,3 +1,4 @@``, what git
and ``diff -u`` print, and what most models learnt) and the ``*** Begin Patch`` format OpenAI's
models are trained to emit. A patch wrapped in a Markdown code fence is unwrapped first.
"""

from __future__ import annotations

from agentfs.tools.patch.model import FilePatch, PatchSyntaxError
from agentfs.tools.patch.unified import parse_unified
from agentfs.tools.patch.v4a import BEGIN, parse_v4a


def parse(text: str) -> list[FilePatch]:
    """The files ``text`` changes, in order; ``PatchSyntaxError`` when it is not a patch."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise PatchSyntaxError(1, "the patch is empty")
    fenced = lines[first].startswith("```")
    if fenced:
        closing = next(
            (i for i in range(len(lines) - 1, first, -1) if lines[i].strip() == "```"), None
        )
        if closing is None:
            raise PatchSyntaxError(first + 1, "a code fence that is never closed")
        # blank the fences rather than drop them, so error line numbers stay the patch's
        lines = [""] * (first + 1) + lines[first + 1 : closing]
        first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
        if first == len(lines):
            raise PatchSyntaxError(1, "the patch is empty")
    files = parse_v4a(lines, first) if lines[first].strip() == BEGIN else parse_unified(lines)
    if not files:
        raise PatchSyntaxError(
            first + 1,
            "no file changes found: expected '*** Begin Patch' or a unified diff"
            " ('--- a/path', '+++ b/path', '@@ -l,n +l,n @@')",
        )
    return files
