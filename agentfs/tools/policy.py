"""What the operator allows: which tools exist, which need approval, which paths each may touch,
whether a file must be read before it is written, and how big things may get.

A ``Policy`` is data (pydantic), loaded from TOML or JSON; per-tool settings override
``defaults`` field by field. Deny globs are matched against every name of the file a path
leads to, case-folded and NFKC-normalised, so neither ``..``, a link nor a spelling slips past
them (docs/policies.md has the format and the rules).
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentfs.core.globs import compile_glob
from agentfs.history.identity import read_before_write_globs
from agentfs.mount.rules import MountRules
from agentfs.mount.sandbox import Limits as SandboxLimits
from agentfs.tools import settings


class ToolPolicy(BaseModel):
    """Settings of one tool (or the defaults of all); None inherits from ``defaults``."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = Field(None, description="list and allow the tool")
    needs_approval: bool | None = Field(
        None, description="ask the host's approve(call) callback before running it"
    )
    require_read_before_write: bool | list[str] | None = Field(
        None,
        description="an existing file may be written only after this thread read it, unchanged"
        " since; true for every path, or globs of the paths it applies to",
    )
    allow: list[str] | None = Field(None, description="globs of paths the tool may touch")
    deny: list[str] | None = Field(None, description="globs of paths the tool may never touch")

    @field_validator("allow", "deny", "require_read_before_write")
    @classmethod
    def _globs_compile(cls, value: Any) -> Any:
        if isinstance(value, list):
            for glob in value:
                compile_glob(glob)  # a bad pattern fails when the policy loads
        return value


class Limits(BaseModel):
    """Workspace-wide caps; None means no cap beyond the tools' own defaults."""

    model_config = ConfigDict(extra="forbid")

    max_write_bytes: int | None = Field(
        None, ge=0, description="largest file a write may leave behind, in bytes"
    )
    max_workspace_bytes: int | None = Field(
        None, ge=0, description="largest the workspace file may grow to by a tool call"
    )
    max_read_bytes: int | None = Field(
        None, ge=1, description="most bytes of file content one read returns"
    )
    max_results: int | None = Field(
        None, ge=1, description="most entries, matches or hits one listing returns"
    )


#: Command lines ``execute_command`` refuses unless the policy lists its own (Python regular
#: expressions, searched anywhere in the line). A guard rail against a model's worst
#: mistakes, not a security boundary: a shell can spell anything many ways, and the sandbox
#: is what contains a command.
DEFAULT_DENIED_COMMANDS = (
    r"\bsudo\b",
    r"(^|[;&|(`\n])\s*su([\s;&|)`]|$)",  # su as a command: first, or after a separator
    r"\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-[a-zA-Z]*\s+)*(/|~|\$HOME)\*?(\s|$)",
    r"\bmkfs(\.\w+)?\b",
    r"\bdd\b[^|;&]*\bof=/dev/",
    r":\(\)\s*\{[^}]*:\s*\|\s*:",  # the fork bomb
    r"\b(shutdown|reboot|halt|poweroff)\b",
    r"\bchmod\s+(-[a-zA-Z]+\s+)*[0-7]*777\s+/(\s|$)",
)
#: Tools whose calls need approval unless the policy says otherwise.
APPROVAL_BY_DEFAULT = frozenset({"execute_command", "workspace_apply"})
#: Tools disabled unless the policy's entry for the tool itself enables them (``[defaults]``
#: does not): ``workspace_apply`` writes the host directory, outside the workspace.
OFF_UNLESS_ENABLED = frozenset({"workspace_apply"})


class CommandPolicy(BaseModel):
    """How ``execute_command`` runs commands (``[commands]`` in a policy file)."""

    model_config = ConfigDict(extra="forbid")

    deny: list[str] = Field(
        default_factory=lambda: list(DEFAULT_DENIED_COMMANDS),
        description="regular expressions; a command line matching any is refused",
    )
    sandbox: bool = Field(
        True,
        description="run in the sandbox (docs/security.md); false runs commands with no"
        " isolation at all",
    )
    network: bool = Field(False, description="let sandboxed commands use the network")
    copy_fallback: bool = Field(
        False,
        description="where the workspace cannot be mounted, run commands in a copy whose"
        " changes are carried back (a copy holds every file, denied paths included)",
    )
    memory_mb: int = Field(
        SandboxLimits.memory_mb,
        ge=16,
        description="memory of all the command's processes together (where a memory cgroup"
        " can be made) and of each alone, MiB",
    )
    processes: int = Field(
        SandboxLimits.processes,
        ge=8,
        description="processes and threads a command may have at once",
    )
    open_files: int = Field(
        SandboxLimits.open_files, ge=16, description="open files of each process"
    )
    file_size_mb: int = Field(
        SandboxLimits.file_size_mb, ge=1, description="the largest file a command may write, MiB"
    )
    cpu_seconds: int = Field(
        SandboxLimits.cpu_seconds, ge=1, description="CPU seconds of each process"
    )
    tmp_mb: int = Field(SandboxLimits.tmp_mb, ge=1, description="the size of the private /tmp, MiB")
    write_mb: int = Field(
        SandboxLimits.write_mb,
        ge=1,
        description="what a command may write into the workspace in all, MiB",
    )

    @field_validator("deny")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        for pattern in value:
            re.compile(pattern)  # a bad pattern fails when the policy loads
        return value

    def denied(self, command: str) -> str | None:
        """The first deny pattern that matches ``command``, or None."""
        return next((p for p in self.deny if re.search(p, command)), None)

    def limits(self) -> SandboxLimits:
        """The sandbox's limits these settings give."""
        return SandboxLimits(**{f.name: getattr(self, f.name) for f in fields(SandboxLimits)})


class ResolvedToolPolicy(BaseModel):
    """One tool's settings after the defaults are applied."""

    model_config = ConfigDict(frozen=True)

    enabled: bool
    needs_approval: bool
    #: ``require_read_before_write`` as the workspace's ``read_before_write`` globs (True:
    #: every path, False: none).
    read_before_write: tuple[str, ...]
    allow: tuple[str, ...]
    deny: tuple[str, ...]


class Policy(BaseModel):
    """The operator's rules for a ``Toolset`` (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    read_only: bool = Field(
        False, description="mutating tools are not listed, and are refused if called"
    )
    defaults: ToolPolicy = Field(default_factory=ToolPolicy)
    tools: dict[str, ToolPolicy] = Field(default_factory=dict)
    limits: Limits = Field(default_factory=Limits)
    commands: CommandPolicy = Field(default_factory=CommandPolicy)

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """A policy from a ``.toml`` or ``.json`` file; a bad file is a ``ValueError`` that
        names it and the problem."""
        return settings.load(cls, path)

    def mount_rules(self) -> MountRules:
        """What a command's mount applies (``execute_command``, ``agentfs exec --policy``,
        ``agentfs mount --policy``): ``execute_command``'s allow and deny lists (its own
        settings over ``[defaults]``, as for any tool), ``read_only`` and the size limits."""
        own = self.for_tool("execute_command")
        return MountRules(
            deny=own.deny,
            allow=own.allow,
            read_only=self.read_only,
            max_file_bytes=self.limits.max_write_bytes,
            max_workspace_bytes=self.limits.max_workspace_bytes,
        )

    def for_tool(self, name: str) -> ResolvedToolPolicy:
        own = self.tools.get(name, ToolPolicy())
        base = self.defaults

        def pick(field: str, default: Any) -> Any:
            value = getattr(own, field)
            if value is None:
                value = getattr(base, field)
            return default if value is None else value

        rbw = pick("require_read_before_write", False)
        return ResolvedToolPolicy(
            enabled=bool(own.enabled) if name in OFF_UNLESS_ENABLED else pick("enabled", True),
            needs_approval=pick("needs_approval", name in APPROVAL_BY_DEFAULT),
            read_before_write=read_before_write_globs(rbw),
            allow=tuple(pick("allow", [])),
            deny=tuple(pick("deny", [])),
        )
