"""``Toolset``: the tools of one workspace, for one agent thread, under one policy.

    toolset = Toolset(ws, thread="t1", actor="coder", policy=Policy.load("policy.toml"))
    toolset.call("read_file", {"path": "src/app.py"})      # a JSON-ready dict
    toolset.openai_tools()                                 # function-calling schemas

``call`` never raises for anything the agent did: a failure is ``{"error": {"code",
"message"}}``. Around each tool's ``run`` it validates the arguments, applies the policy
(enabled, read-only, approval, read-before-write, paths, limits), runs a changing tool in one
transaction with its audit row and the links to the versions it wrote (all or nothing), and
records every call, failed and denied ones too, in ``tool_calls``.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from agentfs.history.identity import Identity
from agentfs.tools import catalog
from agentfs.tools.audit import AuditLog
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError, from_exception
from agentfs.tools.export import anthropic_tool, json_schema, openai_tool
from agentfs.tools.policy import Policy, ResolvedToolPolicy
from agentfs.tools.spec import Surface, Tool, ToolOutput
from agentfs.tools.strict import Decode, strict_schema

if TYPE_CHECKING:
    from agentfs.protocol import WorkspaceAPI


@dataclass(frozen=True)
class ToolCallRequest:
    """What a host's ``approve`` callback is asked about."""

    tool: str
    arguments: dict[str, Any]
    thread: str
    actor: str | None


Approve = Callable[[ToolCallRequest], bool]


@dataclass(slots=True)
class ToolResult:
    """One call's outcome: ``data`` (the JSON result, or ``{"error": ...}``) and ``text``
    (what a model should read), with the versions it wrote (``ws.tool_calls.writer(path, n)``
    finds its log row once the toolset has flushed)."""

    tool: str
    data: dict[str, Any]
    output: ToolOutput | None = None
    error: ToolError | None = None
    versions: list[tuple[str, int]] = field(default_factory=list)

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @property
    def text(self) -> str:
        """What a model should read: rendered when asked for (``Toolset.call`` never is)."""
        if self.error is not None:
            return f"Error [{self.error.code}]: {self.error.message}"
        return self.output.text() if self.output is not None else ""


class Toolset:
    """See the module docstring.

    Args:
        ws: the workspace (or a ``LayeredWorkspace``).
        thread: the conversation thread: reads are tracked and versions, snapshots and active
            skills are recorded under it.
        actor: who is acting (recorded with versions and snapshots).
        policy: the operator's rules (default: everything enabled, no approval, no limits).
        approve: asked before a tool whose policy says ``needs_approval``; without it such
            tools are denied.
        tools: names of the tools to offer (default: all the policy enables).
        surface: the tools by their names (default: agentfs's own, ``catalog.AGENTFS``); a
            surface's tool is ruled by the policy entry of the agentfs tool it is
            ``governed_by``.
        profile: a surface by its name (``catalog.PROFILES``: ``agentfs``,
            ``mcp-filesystem``, ...).
        preset: only the tools of one kind of agent (``catalog.PRESETS``: ``coding``,
            ``memory``), of the profile; ``tools`` and the policy narrow them further.
    """

    def __init__(
        self,
        ws: WorkspaceAPI,
        *,
        thread: str = "main",
        actor: str | None = None,
        policy: Policy | None = None,
        approve: Approve | None = None,
        tools: Sequence[str] | None = None,
        surface: Surface | None = None,
        profile: str | None = None,
        preset: str | None = None,
    ) -> None:
        if profile is not None and surface is not None:
            raise ValueError("give a profile or a surface, not both")
        self.ws = ws
        if profile is not None:
            surface = catalog.profile(profile)
        self.surface = catalog.AGENTFS if surface is None else surface
        self.thread = thread
        self.actor = actor
        self.policy = policy if policy is not None else Policy()
        self.approve = approve
        self.audit = AuditLog(ws)
        self._resolved: dict[str, ResolvedToolPolicy] = {}  # the policy is read once per tool
        self._identities: dict[str, Identity] = {}
        self._strict: dict[str, Decode] = {}  # each tool's way back from strict arguments
        if tools is not None:
            unknown = [name for name in tools if self.surface.find(name) is None]
            if unknown:
                raise ValueError(f"unknown tools: {', '.join(unknown)}")
        only = None if tools is None else {self.surface.find(n).name for n in tools}  # type: ignore[union-attr]
        if preset is not None:
            kept = catalog.preset(preset)
            chosen = {t.name for t in self.surface.all_tools() if t.policy_name in kept}
            only = chosen if only is None else only & chosen
        self._only = only

    # --- what is offered ---------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """The tools this toolset offers, in catalog order."""
        return [t for t in self.surface.all_tools() if self._offered(t)]

    def _offered(self, spec: Tool) -> bool:
        if self._only is not None and spec.name not in self._only:
            return False
        if spec.mutates and self.read_only:
            return False
        if spec.needs_base and getattr(self.ws, "base", None) is None:
            return False
        return self._policy(spec.policy_name).enabled

    @property
    def read_only(self) -> bool:
        return self.policy.read_only or self.ws.readonly

    def openai_tools(
        self, *, api: Literal["chat", "responses"] = "chat", strict: bool = False
    ) -> list[dict[str, Any]]:
        """OpenAI ``tools=[...]`` entries: Chat Completions' (``{"type": "function",
        "function": {...}}``) or, with ``api="responses"``, the Responses API's (flat).
        ``strict``: OpenAI's strict mode, every parameter required (an optional one
        nullable); pass the model's arguments to ``invoke(..., strict=True)``."""
        return [openai_tool(t, api=api, strict=strict) for t in self.tools()]

    def anthropic_tools(self) -> list[dict[str, Any]]:
        """Anthropic Messages ``tools=[...]`` entries (``name``, ``description``,
        ``input_schema``)."""
        return [anthropic_tool(t) for t in self.tools()]

    def skills_prompt(self) -> str:
        """The workspace's skills as a ``<workspace_skills>`` block for a system prompt: every
        skill's id, name, description and SKILL.md path, and the instructions of those active
        for this thread, so a resumed thread carries on with them. Empty when there are none
        (or the toolset offers no skill tool to act on them)."""
        if not any(t.name == "workspace_read_skill" for t in self.tools()):
            return ""
        found = self.ws.skills()
        policy = self._policy("workspace_read_skill")
        ctx = Context(self.ws, "workspace_read_skill", policy, self.policy.limits, self)
        shown = [s for s in found.skills if ctx.visible(s.path)]
        if not shown:
            return ""
        active = set(self.ws.active_skills(self.thread))
        parts = ["<workspace_skills>"]
        for skill in shown:
            state = ' active="true"' if skill.id in active else ""
            parts.append(f'<skill id="{escape(skill.id)}"{state}>')
            parts.append(f"<name>{escape(skill.name, quote=False)}</name>")
            parts.append(f"<description>{escape(skill.description, quote=False)}</description>")
            parts.append(f"<location>{escape(skill.path, quote=False)}</location>")
            if skill.id in active:
                parts.append(
                    f"<instructions>\n{escape(skill.body.strip(), quote=False)}\n</instructions>"
                )
            parts.append("</skill>")
        parts.append("</workspace_skills>")
        return "\n".join(parts)

    # --- calling -------------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any] | str | None = None) -> dict[str, Any]:
        """Run a tool; its JSON result, or ``{"error": {"code", "message"}}``."""
        return self.invoke(name, arguments).data

    def invoke(
        self,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        approve: Approve | None = None,
        strict: bool = False,
    ) -> ToolResult:
        """``call`` with everything: the output model, the model-facing text and the versions
        written. ``approve`` replaces the toolset's callback for this call (the
        MCP server asks its user before calling). ``strict``: ``arguments`` were given in
        the form of the strict schema (``openai_tools(strict=True)``) and are made the
        tool's own first."""
        started = time.time()
        spec = self.surface.find(name)
        raw = arguments_of(arguments)
        if strict and spec is not None and "__invalid__" not in raw:
            raw = self._from_strict(spec)(raw)
        if spec is None:
            error = ToolError(
                "unknown_tool",
                f"there is no tool {name!r}; the tools are: "
                + ", ".join(t.name for t in self.tools()),
            )
            return self._failed(name, raw, error, started)
        try:
            args, policy = self._admit(spec, raw, approve)
        except ToolError as error:
            return self._failed(spec.name, raw, error, started)
        ctx = Context(self.ws, spec.name, policy, self.policy.limits, self)
        versions: list[tuple[str, int]] = []
        ws = self.ws
        # The call acts as this toolset's thread and actor, under its read-before-write rule,
        # whatever other calls through the same handle do meanwhile.
        with ws.acting_as(self._identity(spec.name, policy)):
            try:
                if not spec.writes_in_transaction or ws.readonly:
                    output = spec.run(ctx, args)
                    data = output.data()
                    if spec.mutates and not ws.readonly:  # made elsewhere: logged after
                        with ws.transaction():
                            self.audit.record(spec.name, raw, data, None, started, [], self._who)
                elif spec.mutates:  # the change and its log row commit together, or nothing does
                    with ws.transaction(savepoints=False), ws.recording_versions() as journal:
                        ctx.journal = journal
                        output = spec.run(ctx, args)
                        if (most := self.policy.limits.max_workspace_bytes) is not None:
                            self._check_workspace_size(most)
                        versions = journal  # one entry per version made (recording_versions)
                        data = output.data()
                        self.audit.record(spec.name, raw, data, None, started, versions, self._who)
                else:  # a tracked read: its records and what it shows are one state
                    with ws.transaction():
                        output = spec.run(ctx, args)
                        data = output.data()
                if not spec.mutates:  # a listing's or a tracked read's row waits (audit.py)
                    self.audit.record(spec.name, raw, data, None, started, None, self._who)
            except Exception as exc:  # every failure becomes a result
                failure = from_exception(exc, reader=self.surface.reader)
                return self._failed(spec.name, raw, failure, started)
        return ToolResult(spec.name, data, output, None, versions)

    def flush(self) -> None:
        """Write the audit rows of read-only calls that are still waiting (see
        ``agentfs.tools.audit``); ``close`` and leaving a ``with`` block do it too."""
        self.audit.flush()

    close = flush

    def __enter__(self) -> Toolset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()

    def _from_strict(self, spec: Tool) -> Decode:
        """How arguments in the form of ``spec``'s strict schema become its own."""
        decode = self._strict.get(spec.name)
        if decode is None:
            decode = self._strict[spec.name] = strict_schema(json_schema(spec.input))[1]
        return decode

    def needs_approval(self, name: str) -> bool:
        """Whether a call of tool ``name`` must be approved first (the MCP server asks the
        user before calling ``invoke``)."""
        spec = self.surface.find(name)
        return spec is not None and self._policy(spec.policy_name).needs_approval

    def _identity(self, name: str, policy: ResolvedToolPolicy) -> Identity:
        """Who a call of tool ``name`` acts as: this toolset's thread and actor under the
        tool's read-before-write rule (made once per tool, again if either is changed)."""
        made = self._identities.get(name)
        if made is None or made.thread is not self.thread or made.actor is not self.actor:
            made = self._identities[name] = Identity(
                self.thread, self.actor, policy.read_before_write
            )
        return made

    def _policy(self, name: str) -> ResolvedToolPolicy:
        resolved = self._resolved.get(name)
        if resolved is None:
            resolved = self._resolved[name] = self.policy.for_tool(name)
        return resolved

    def _admit(
        self, spec: Tool, raw: dict[str, Any], approve: Approve | None
    ) -> tuple[Any, ResolvedToolPolicy]:
        """The validated arguments and the tool's policy, once the policy lets the call run."""
        if self._only is not None and spec.name not in self._only:
            raise ToolError("denied", f"{spec.name} is not one of this toolset's tools")
        policy = self._policy(spec.policy_name)
        if not policy.enabled:
            raise ToolError("denied", f"{spec.name} is disabled by the policy; do not call it")
        if spec.mutates and self.read_only:
            raise ToolError(
                "read_only", f"the workspace is read-only here: {spec.name} cannot change it"
            )
        try:
            args = spec.validate(raw)
        except ValidationError as exc:
            raise ToolError("invalid_argument", _validation_message(spec.name, exc)) from None
        if policy.needs_approval:
            decide = approve if approve is not None else self.approve
            request = ToolCallRequest(spec.name, raw, self.thread, self.actor)
            try:
                granted = decide is not None and bool(decide(request))
            except Exception as exc:  # a failing approver is a refusal
                raise ToolError("approval_denied", f"{spec.name}: approval failed: {exc}") from None
            if not granted:
                raise ToolError(
                    "approval_denied",
                    f"the user did not approve this {spec.name} call; nothing was changed."
                    " Ask the user, or try something else",
                )
        return args, policy

    def _check_workspace_size(self, most: int) -> None:
        size = self.ws.database_bytes()
        if size > most:
            raise ToolError(
                "too_large",
                f"this change would grow the workspace to {size:,} bytes, over its"
                f" {most:,}-byte limit; nothing was changed. Delete something first",
            )

    @property
    def _who(self) -> tuple[str | None, str | None]:
        """The thread and actor the audit records with each call."""
        return self.thread, self.actor

    def _failed(
        self, name: str, raw: dict[str, Any], error: ToolError, started: float
    ) -> ToolResult:
        # the agent must get its error even when the log cannot be written (a busy database)
        with contextlib.suppress(Exception):
            self.audit.record(name, raw, None, error, started, None, self._who)
        data = {"error": error.as_dict()}
        return ToolResult(name, data, None, error)


def arguments_of(arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    """Arguments as a dict; a JSON string (as function-calling APIs deliver them) is decoded.
    Anything else becomes a dict that validation will refuse with a clear message."""
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return {"__invalid__": f"arguments are not valid JSON: {exc}"}
    if not isinstance(arguments, dict):
        return {"__invalid__": f"arguments must be a JSON object, not {type(arguments).__name__}"}
    return arguments


def _validation_message(tool: str, exc: ValidationError) -> str:
    """One line per problem, naming the argument, as a model can fix it."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            if where == "__invalid__":
                problems.append(str(err["input"]))
                continue
            problems.append(f"{where}: unknown argument")
        else:
            problems.append(f"{where}: {err['msg']}")
    return f"invalid arguments for {tool}: " + "; ".join(problems)
