"""What the Anthropic tools share: the one surface they are declared on, the output every one
of them returns (the exact text the SDK's reference tools return), and the bridge from a
``Toolset`` result to the SDK's return value or its ``ToolError``."""

from __future__ import annotations

from typing import Any

from anthropic.lib.tools import BetaFunctionToolResultType, ToolError
from pydantic import ConfigDict

from agentfs.tools.spec import Surface, ToolInput, ToolOutput
from agentfs.tools.toolset import Toolset

#: The Anthropic tools over a workspace: the memory tool's commands, the text editor's and
#: the ``agent_toolset_20260401`` tools, each ruled by the agentfs tool it is governed by.
SURFACE = Surface("anthropic")

#: Who the workspace records as acting, unless told otherwise.
ACTOR = "anthropic"


class Input(ToolInput):
    """The SDK hands a tool the model's input unvalidated and ignores what it does not use."""

    model_config = ConfigDict(extra="ignore")


class TextOutput(ToolOutput):
    """A result as the SDK's reference tool gives it. ``failed``: the call changed something
    (as the reference does) and still ends in an error whose message is ``result``."""

    result: str
    blocks: list[dict[str, Any]] | None = None
    failed: bool = False

    def text(self) -> str:
        return self.result

    def content(self) -> BetaFunctionToolResultType:
        return self.result if self.blocks is None else self.blocks  # type: ignore[return-value]


def run(toolset: Toolset, name: str, arguments: dict[str, Any]) -> BetaFunctionToolResultType:
    """Call ``name`` through ``toolset``: its content, or the SDK's ``ToolError`` with the
    message the model reads (the reference's own for what the reference refuses, the
    policy's for what the operator's rules refuse)."""
    result = toolset.invoke(name, arguments)
    if result.error is not None:
        raise ToolError(result.error.message)
    output = result.output
    if not isinstance(output, TextOutput):  # pragma: no cover - every surface tool's output
        raise ToolError(result.text)
    if output.failed:
        raise ToolError(output.result)
    return output.content()


def numbered(lines: list[str], first: int) -> str:
    """``lines`` numbered from ``first`` as the reference tools number them (six columns)."""
    return "\n".join(f"{first + i:>6}\t{line}" for i, line in enumerate(lines))
