"""``Workspaces``: several named workspaces behind one set of baf tools. The model names the
workspace in each call (``workspace``); the call runs on that workspace's own ``Member``
toolset, so it is checked, logged and versioned in that workspace, under the set's thread,
actor and policy (a workspace opened read-only, as ``serve mcp`` opens one that is not
writable, keeps no log: its file is never changed). ``system_prompt`` tells the model which
workspaces there are and what each holds (without it the model sees only their names and may
never look in them)::

    spaces = Workspaces(
        [Space(docs, "docs", "The product manual", writable=False), Space(notes, "notes")],
        thread="t1",
    )
    system = "You help with the product.\n" + spaces.system_prompt()
    spaces.call("read_file", {"workspace": "docs", "path": "install.md"})
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentfs.tools import settings
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.policy import Policy
from agentfs.tools.profiles.baf.space import DEFAULT_MAX_READ_BYTES, Member, Space
from agentfs.tools.profiles.baf.tools import SURFACE, listing
from agentfs.tools.spec import Tool
from agentfs.tools.toolset import Approve, ToolResult, Toolset, arguments_of

#: Most entries of each workspace's root the system prompt shows.
PREVIEW_ENTRIES = 50


class SpaceSetting(BaseModel):
    """One ``[[workspace]]`` of a spaces file: a ``Space`` with its workspace file's path."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    path: Path = Field(description="the workspace file, relative to the spaces file")
    description: str | None = None
    writable: bool = True
    max_read_bytes: int = Field(DEFAULT_MAX_READ_BYTES, ge=1)


class SpacesFile(BaseModel):
    """A spaces file (TOML or JSON): the workspaces ``agentfs serve mcp --profile baf
    --spaces FILE`` serves, in order::

        [[workspace]]
        name = "docs"
        path = "docs.db"
        description = "The product manual"
        writable = false
    """

    model_config = ConfigDict(extra="forbid")

    workspace: list[SpaceSetting] = Field(min_length=1)

    @classmethod
    def load(cls, path: str | Path) -> list[SpaceSetting]:
        """The workspaces of the file at ``path``, their paths made relative to where
        it is; a bad file is a ``ValueError`` naming it and the problem."""
        found = settings.load(cls, path).workspace
        here = Path(path).parent
        return [s.model_copy(update={"path": here / s.path}) for s in found]


class Workspaces(Toolset):
    """See the module docstring. ``spaces`` are the workspaces, their names unique; the
    other arguments are ``Toolset``'s and hold for every workspace (a space that is not
    writable is served read-only). A tool that changes files is offered when at least one
    workspace is writable. Its ``ws`` is the first workspace's."""

    def __init__(
        self,
        spaces: Sequence[Space],
        *,
        thread: str = "main",
        actor: str | None = None,
        policy: Policy | None = None,
        approve: Approve | None = None,
        tools: Sequence[str] | None = None,
        preset: str | None = None,
    ) -> None:
        if not spaces:
            raise ValueError("give at least one workspace")
        names = [space.name for space in spaces]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"workspace names must be unique: {', '.join(twice)}")
        options: dict[str, Any] = {
            "thread": thread,
            "actor": actor,
            "approve": approve,
            "tools": tools,
            "surface": SURFACE,
            "preset": preset,
        }
        super().__init__(spaces[0].ws, policy=policy, **options)
        read_only = self.policy.model_copy(update={"read_only": True})
        self.members = {
            s.name: Member(s, policy=self.policy if s.writable else read_only, **options)
            for s in spaces
        }

    def tools(self) -> list[Tool]:
        return [
            spec
            for spec in self.surface.all_tools()
            if any(spec in member.tools() for member in self.members.values())
        ]

    def invoke(
        self,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        approve: Approve | None = None,
        strict: bool = False,
    ) -> ToolResult:
        """``Toolset.invoke`` on the workspace the arguments name (``workspace``); an
        unknown name, or none where there are several, is ``invalid_argument``, and so are
        arguments that are not a JSON object (they name no workspace), logged in the first
        workspace; so is an unknown tool (``unknown_tool``, naming the tools offered)."""
        raw = arguments_of(arguments)
        if self.surface.find(name) is None:  # nothing to route: Toolset's error, in the first
            return super().invoke(name, raw, approve=approve, strict=strict)
        try:
            member = self._chosen(name, raw)
        except ToolError as error:
            first = next(iter(self.members.values()))
            return first._failed(name, raw, error, time.time())
        return member.invoke(name, raw, approve=approve, strict=strict)

    def _chosen(self, tool: str, raw: dict[str, Any]) -> Member:
        if "__invalid__" in raw:  # not a JSON object (arguments_of): its problem, not a name
            raise ToolError(
                "invalid_argument", f"invalid arguments for {tool}: {raw['__invalid__']}"
            )
        listed = ", ".join(self.members)
        name = raw.get("workspace")
        if name is None:
            if len(self.members) == 1:
                return next(iter(self.members.values()))
            raise ToolError(
                "invalid_argument",
                f"there are several workspaces; name one with workspace: {listed}",
            )
        if not isinstance(name, str):
            raise ToolError(
                "invalid_argument",
                f"invalid arguments for {tool}: workspace: a workspace's name ({listed}),"
                f" not {name!r}",
            )
        member = self.members.get(name)
        if member is None:
            raise ToolError(
                "invalid_argument", f"there is no workspace {name!r}; the workspaces are: {listed}"
            )
        return member

    def flush(self) -> None:
        for member in self.members.values():
            member.flush()
        super().flush()

    close = flush

    def system_prompt(self) -> str:
        """The workspaces as a ``<workspaces>`` block for a system prompt: each one's name,
        whether it can be changed, its description and the entries at its root (the first
        50 the policy lets ``list_directory`` show)."""
        parts = ["<workspaces>"]
        offered = [spec.name for spec in self.tools()]
        if offered:
            parts.append(
                f"Use {', '.join(offered)} on these workspaces, passing the workspace's name"
                " as `workspace`; paths are relative to its root."
            )
        for name, member in self.members.items():
            space = member.space
            writable = "false" if member.read_only else "true"
            parts.append(f'<workspace name="{escape(name)}" writable="{writable}">')
            if space.description:
                parts.append(f"<description>{escape(space.description, quote=False)}</description>")
            preview = self._preview(member)
            if preview is not None:
                parts.append(f"<root>\n{escape(preview, quote=False)}\n</root>")
            parts.append("</workspace>")
        parts.append("</workspaces>")
        return "\n".join(parts)

    def _preview(self, member: Member) -> str | None:
        """The first entries of ``member``'s root, as ``list_directory`` gives them; None
        when the policy does not let the model list it."""
        if not any(spec.name == "list_directory" for spec in member.tools()):
            return None
        rules = member.policy.for_tool("ls")
        ctx = Context(member.ws, "list_directory", rules, member.policy.limits, member)
        entries, more = listing(ctx, "/", ctx.cap(PREVIEW_ENTRIES))
        if more:
            entries.append("... more: call list_directory")
        return "\n".join(entries) if entries else "(empty)"
