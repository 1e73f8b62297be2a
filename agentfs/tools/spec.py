"""What a tool is: a name, a description written for the model, an input and an output model,
the function that runs it, and the facts a client needs (does it change the workspace, can it
destroy something, is it safe to repeat).

Tool modules declare their tools with ``@tool(...)`` on a function ``run(ctx, args) -> out``
whose annotations name the input and output models; importing ``agentfs.tools.catalog``
imports them all. The dispatcher (``Toolset``) owns everything around ``run``: validation,
policy, approval, the transaction, the audit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict

from agentfs.tools.context import Context


class ToolInput(BaseModel):
    """Base of every tool's arguments: unknown arguments are refused, so a misspelt
    parameter is an ``invalid_argument`` that names it instead of being silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ToolOutput(BaseModel):
    """Base of every tool's result. ``text()`` is what a model reads; the structured fields
    are what a program reads (MCP ``structuredContent``, ``Toolset.call``)."""

    def text(self) -> str:
        return self.model_dump_json(indent=1, exclude_none=True)

    def data(self) -> dict[str, Any]:
        """The structured result: JSON values only (MCP ``structuredContent``). The model's
        serializer called directly: ``model_dump``'s argument handling costs a third more, on
        every call."""
        data: dict[str, Any] = type(self).__pydantic_serializer__.to_python(self, mode="json")
        return data

    @classmethod
    def of(cls, values: dict[str, Any]) -> Self:
        """``cls(**values)``: the same validation, by the model's validator called directly
        (a third cheaper than ``__init__``'s keyword handling, for the tools every agent calls
        most)."""
        output: Self = cls.__pydantic_validator__.validate_python(values)
        return output


def absent(value: object) -> bool:
    """``exclude_if`` of an optional output field shown only when it says something (a note):
    the structured result then has no ``null`` for it on every call."""
    return value is None


Run = Callable[[Context, Any], ToolOutput]


@dataclass(frozen=True)
class Tool:
    """One tool (see the module docstring).

    Attributes:
        mutates: changes the workspace: hidden from a read-only toolset, run in one write
            transaction with its audit row.
        tracks_reads: records tracked reads (a write), so it also runs in one transaction.
        destructive: may delete or overwrite data (MCP ``destructiveHint``).
        idempotent: repeating the call with the same arguments changes nothing more.
        paths: the input fields that name workspace paths (checked by the policy before
            ``run``; ``run`` checks any other path it comes across itself).
        elsewhere: its changes are made by another process (a command in the mounted
            workspace), which needs the write lock: it runs outside any transaction, and its
            audit row is written after it.
    """

    name: str
    title: str
    description: str
    input: type[ToolInput]
    output: type[ToolOutput]
    run: Run
    mutates: bool
    tracks_reads: bool
    destructive: bool
    idempotent: bool
    aliases: tuple[str, ...] = ()
    elsewhere: bool = False
    #: The agentfs tool whose policy rules this one (None: itself): a framework's ``read``
    #: governed as ``read_file`` keeps an operator's rules on every surface (``Surface``).
    governed_by: str | None = None
    #: Offered only over a workspace with a base directory (``agentfs.core.base``).
    needs_base: bool = False
    #: ``governed_by`` or the tool's own name: the policy entry that rules it.
    policy_name: str = field(init=False)
    #: runs in one transaction (a change with its audit row, or a tracked read); a field, not
    #: a property, as the dispatcher asks on every call.
    writes_in_transaction: bool = field(init=False)
    #: ``input.model_validate``: the model's validator called directly, without the
    #: classmethod's handling of options no call passes (on every call).
    validate: Callable[[Any], Any] = field(init=False)

    def __post_init__(self) -> None:
        in_transaction = (self.mutates or self.tracks_reads) and not self.elsewhere
        object.__setattr__(self, "writes_in_transaction", in_transaction)
        object.__setattr__(self, "policy_name", self.governed_by or self.name)
        object.__setattr__(self, "validate", self.input.__pydantic_validator__.validate_python)


F = TypeVar("F", bound=Callable[..., ToolOutput])


class Surface:
    """A set of tools under one naming, which a ``Toolset`` runs under one policy, audit and
    transaction discipline: agentfs's own (``TOOLS``), or a framework's or an ecosystem's
    names and result shapes over the same workspace, each tool ``governed_by`` the agentfs
    tool whose policy entry rules it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tools: dict[str, Tool] = {}
        self._aliases: dict[str, str] = {}

    def find(self, name: str) -> Tool | None:
        """The tool called ``name`` (or aliased so), or None."""
        return self._tools.get(self._aliases.get(name, name))

    def all_tools(self) -> list[Tool]:
        return list(self._tools.values())

    @property
    def reader(self) -> str:
        """The name of this surface's tool that reads a file as read-before-write counts it
        (the tracked read ruled by ``read_file``), which a refused write's advice names."""
        for spec in self._tools.values():
            if spec.tracks_reads and spec.policy_name == "read_file":
                return spec.name
        return "read_file"

    def sort(self, key: Callable[[Tool], Any]) -> None:
        """List the tools in ``key``'s order (the order clients show them in)."""
        self._tools = dict(sorted(self._tools.items(), key=lambda item: key(item[1])))

    def include(self, *tools: Tool) -> None:
        """Offer tools of another surface as they are (a profile's tools that agentfs's own
        already are, name, input and result alike): the same ``Tool``, so the same policy
        entry rules it."""
        for spec in tools:
            if self.find(spec.name) is not None:
                raise ValueError(f"tool {spec.name!r} is declared twice in {self.name}")
            self._tools[spec.name] = spec

    def tool(
        self,
        name: str,
        *,
        title: str,
        description: str,
        mutates: bool = False,
        tracks_reads: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        aliases: tuple[str, ...] = (),
        elsewhere: bool = False,
        governed_by: str | None = None,
        needs_base: bool = False,
    ) -> Callable[[F], F]:
        """Register ``run`` as the tool ``name``; its annotations give the models."""

        def register(run: F) -> F:
            hints = get_type_hints(run)
            spec = Tool(
                name=name,
                title=title,
                description=" ".join(description.split()),
                input=hints["args"],
                output=hints["return"],
                run=run,
                mutates=mutates,
                tracks_reads=tracks_reads,
                destructive=destructive,
                idempotent=idempotent,
                aliases=aliases,
                elsewhere=elsewhere,
                governed_by=governed_by,
                needs_base=needs_base,
            )
            if self.find(name) is not None or any(self.find(a) for a in aliases):
                raise ValueError(f"tool {name!r} is declared twice in {self.name}")
            self._tools[name] = spec
            self._aliases.update(dict.fromkeys(aliases, name))
            return run

        return register


#: agentfs's own tools (``agentfs.tools.catalog`` imports the modules that declare them).
TOOLS = Surface("agentfs")
#: Declares one of agentfs's own tools.
tool = TOOLS.tool
