"""What a running tool may use: the workspace, and the policy applied to every path it touches.

Every path a tool reads or writes goes through ``Context.path`` (or ``check_tree`` for a
whole subtree), so the allow and deny globs hold for every tool, including the ones that
find their paths in their input's content (``apply_patch``) or in the tree (``grep``, whose
hits pass through ``visible``).
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentfs.core import paths
from agentfs.core.rules import allowed_by, denied_by
from agentfs.tools.common import version_of
from agentfs.tools.errors import ToolError, from_exception
from agentfs.tools.policy import Limits, ResolvedToolPolicy

if TYPE_CHECKING:
    from agentfs.protocol import WorkspaceAPI
    from agentfs.tools.toolset import Toolset


@dataclass(slots=True)
class Context:
    """One call's view of the toolset: ``ws``, its policy and limits, its thread."""

    ws: WorkspaceAPI
    tool: str
    policy: ResolvedToolPolicy
    limits: Limits
    toolset: Toolset
    #: ``(path, n)`` of the versions this call made so far (``recording_versions``), while
    #: it runs in its transaction.
    journal: list[tuple[str, int]] | None = None

    @property
    def thread(self) -> str:
        return self.toolset.thread

    def path(self, raw: str, *, write: bool = False) -> str:
        """``raw`` normalised (``a/b``, ``/a/./b`` and ``/x/../a/b`` are all ``/a/b``; ``..``
        stops at the root), after the policy's allow and deny globs have accepted it."""
        try:
            path = paths.normalize(raw)
        except OSError as exc:
            err = from_exception(exc)
            shown = raw if len(raw) <= 80 else raw[:60] + "..."
            raise ToolError("invalid_path", f"invalid path {shown!r}: {err.message}") from None
        self._check(path, write)
        if write and self.filters_paths:
            self._check_missing_parents(path)
        return path

    def _check_missing_parents(self, path: str) -> None:
        """A write may make the directories above ``path`` that are missing (``parents``):
        each of them must be a name the policy lets this tool write, as ``path`` is."""
        if path == "/":
            return  # the root has no parent, and is never missing
        parent = paths.parent_and_name(path)[0]
        while parent != "/" and not self.ws.exists(parent):
            self._check(parent, True)
            parent = paths.parent_and_name(parent)[0]

    def write(self, path: str, data: bytes, *, parents: bool = False) -> int:
        """Write ``data`` to the (checked) ``path``; the file's version after it."""
        return self.put(path, data, parents=parents)[0]

    def put(
        self, path: str, data: bytes, *, parents: bool = False, exclusive: bool = False
    ) -> tuple[int, bool]:
        """``write`` (``ws.put``): the file's version after it, and whether it created the
        file. The version is the one entry the write added to the call's journal (no query),
        else what the history says (history off, the same bytes again, a path kept under
        another name)."""
        journal = self.journal
        mark = -1 if journal is None else len(journal)
        st, created = self.ws.put(path, data, parents=parents, exclusive=exclusive)
        if journal is not None and len(journal) == mark + 1 and journal[-1][0] == path:
            return journal[-1][1], created
        return version_of(self.ws, path, st), created

    @property
    def filters_paths(self) -> bool:
        """Does the policy allow or deny by path at all? (When not, nothing needs checking.)"""
        return bool(self.policy.deny or self.policy.allow)

    def visible(self, path: str) -> bool:
        """May this tool show ``path`` (a grep hit, a listing entry)? Nothing denied is shown,
        so a denied file's name or content never reaches the model."""
        try:
            self._check(path, False)
        except ToolError:
            return False
        return True

    def check_tree(self, top: str, *, write: bool) -> None:
        """Refuse an operation on the whole subtree at ``top`` (a recursive delete, move or
        copy) if the policy refuses any path inside it."""
        if not self.filters_paths:
            return
        self._check(top, write)
        try:
            if not self.ws.lstat(top).is_dir():
                return
            for dirpath, dirnames, filenames in self.ws.walk(top):
                for name in [*dirnames, *filenames]:
                    self._check(paths.join(dirpath, name), write)
        except FileNotFoundError:
            return

    def _check(self, path: str, write: bool) -> None:
        """The policy judges the file, not the name: ``path`` as written and every name of
        what it leads to (its real path, and a hard-linked file's other names) must pass, so
        neither a symlink nor another name reaches what a rule denies."""
        if not self.filters_paths:
            return
        try:
            names = self.ws.names(path)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            names = [path]
        glob = denied_by(self.policy.deny, path, *names)
        verb = "write" if write else "read"
        if glob is not None:
            raise ToolError(
                "denied",
                f"{path}: the policy does not let {self.tool} {verb} this path (deny {glob!r});"
                " do not retry it, work elsewhere",
            )
        if not allowed_by(self.policy.allow, path, *names):
            allowed = ", ".join(self.policy.allow)
            raise ToolError(
                "denied",
                f"{path}: outside the paths {self.tool} may {verb} ({allowed})",
            )

    def cap(self, requested: int) -> int:
        """``requested`` results, at most the policy's ``max_results``."""
        most = self.limits.max_results
        return requested if most is None else min(requested, most)

    def check_read_size(self, size: int, path: str, narrower: str) -> None:
        """Refuse to return ``size`` bytes of ``path``'s content over ``max_read_bytes``: for
        a tool that answers with the window asked for or fails (where ``read_file`` cuts its
        page instead), saying how to ask for less (``narrower``)."""
        most = self.limits.max_read_bytes
        if most is not None and size > most:
            raise ToolError(
                "too_large",
                f"{path}: {size:,} bytes is over the {most:,}-byte limit of one read; {narrower}",
            )

    def check_size(self, size: int, path: str) -> None:
        """Refuse a write that would leave ``path`` larger than ``max_write_bytes``."""
        most = self.limits.max_write_bytes
        if most is not None and size > most:
            raise ToolError(
                "too_large",
                f"{path}: {size:,} bytes is over the {most:,}-byte limit for a file written by"
                " a tool; write less, or split it into several files",
            )
