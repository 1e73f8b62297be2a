"""An OpenAI Agents SDK agent working in a workspace (the ``openai-agents`` extra).

The agent gets agentfs's tools as function tools, the SDK's own ``apply_patch`` tool (its
edits applied to the workspace by ``AgentFSEditor``) and its ``shell`` tool (each command run
in the mounted workspace, sandboxed, by ``ShellExecutor``). Every call goes through one
``Toolset``: audited with the versions it wrote (``agentfs timeline WS``), under the policy.
The turn starts with a snapshot, so all it did, commands included, can be undone.

    python examples/openai_agents_sdk.py ws.db "add a README" --scripted   # offline
    OPENAI_API_KEY=... python examples/openai_agents_sdk.py ws.db "fix the failing test"

``--scripted`` stands in for the model: it lists the workspace, writes what it found to
``/NOTES.md`` with ``apply_patch``, counts its lines with the shell and answers. Without it
the example needs ``OPENAI_API_KEY`` and a model that has the ``apply_patch`` and ``shell``
tools (``--model``, default gpt-5.1), and says so in one line when it cannot reach one.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

from agents import (
    Agent,
    ApplyPatchTool,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    ShellTool,
    Usage,
)
from agents.items import TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from openai import APIConnectionError, APIStatusError
from openai.types.responses import (
    ResponseApplyPatchToolCall,
    ResponseFunctionShellToolCall,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from openai.types.responses.response_apply_patch_tool_call import OperationCreateFile
from openai.types.responses.response_function_shell_tool_call import Action

import agentfs
from agentfs.integrations.openai_agents import AgentFSEditor, ShellExecutor, function_tools
from agentfs.integrations.toolsets import toolset_for
from agentfs.tools import Toolset

INSTRUCTIONS = (
    "You work in a workspace of files. Read a file before you change it, change files with"
    " apply_patch, run programs and tests with the shell, and say briefly what you did."
)

#: One step of the stand-in model: what it was sent so far in, its next output items out.
Step = Callable[[list[Any]], list[TResponseOutputItem]]


def build_agent(toolset: Toolset, model: str | Model) -> Agent[Any]:
    """An agent whose every tool works in ``toolset``'s workspace."""
    return Agent(
        name="coder",
        instructions=INSTRUCTIONS,
        model=model,
        tools=[
            *function_tools(toolset, exclude=["apply_patch", "execute_command"]),
            ApplyPatchTool(editor=AgentFSEditor(toolset)),
            ShellTool(executor=ShellExecutor(toolset)),
        ],
    )


class ScriptedModel(Model):
    """A stand-in model that takes the given steps in turn, whatever it is asked."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.inputs: list[list[Any]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        step = self.steps.pop(0)
        return ModelResponse(output=step(items), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("the stand-in model does not stream")


def function_call(call_id: str, name: str, arguments: dict[str, Any]) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=call_id,
        call_id=call_id,
        type="function_call",
        name=name,
        arguments=json.dumps(arguments),
    )


def message(text: str) -> ResponseOutputMessage:
    content = ResponseOutputText(type="output_text", text=text, annotations=[])
    return ResponseOutputMessage(
        id="msg", type="message", role="assistant", status="completed", content=[content]
    )


def last_output(items: list[Any]) -> str:
    """The text of the last tool output the model was sent."""
    for item in reversed(items):
        if isinstance(item, dict) and str(item.get("type", "")).endswith("_output"):
            output = item.get("output")
            if isinstance(output, list):  # a shell call's: one entry per command
                return "".join(
                    entry.get("stdout", "") + entry.get("stderr", "") for entry in output
                )
            return str(output)
    return ""


def scripted_model() -> ScriptedModel:
    """List the workspace, write the listing to /NOTES.md with apply_patch, count its lines
    with the shell, answer: each step a real call of the SDK's tools."""

    def survey(items: list[Any]) -> list[TResponseOutputItem]:
        return [function_call("call_1", "list_tree", {"path": "/", "max_depth": None})]

    def write_notes(items: list[Any]) -> list[TResponseOutputItem]:
        lines = ["# Files", "", *last_output(items).splitlines()]
        diff = "\n".join("+" + line for line in lines) + "\n"
        operation = OperationCreateFile(type="create_file", path="NOTES.md", diff=diff)
        return [
            ResponseApplyPatchToolCall(
                id="call_2",
                call_id="call_2",
                type="apply_patch_call",
                status="completed",
                operation=operation,
            )
        ]

    def count(items: list[Any]) -> list[TResponseOutputItem]:
        action = Action(commands=["wc -l NOTES.md"], timeout_ms=30_000)
        return [
            ResponseFunctionShellToolCall(
                id="call_3", call_id="call_3", type="shell_call", status="completed", action=action
            )
        ]

    def answer(items: list[Any]) -> list[TResponseOutputItem]:
        return [message(f"I listed the workspace in /NOTES.md ({last_output(items).strip()}).")]

    return ScriptedModel([survey, write_notes, count, answer])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="An OpenAI Agents SDK agent in a workspace.")
    parser.add_argument("workspace", help="the workspace file (made if missing)")
    parser.add_argument("task", help="what the agent is asked to do")
    parser.add_argument("--scripted", action="store_true", help="a stand-in model, offline")
    parser.add_argument("--model", default="gpt-5.1", help="the model (default: gpt-5.1)")
    args = parser.parse_args(argv[1:])
    if not args.scripted and not os.environ.get("OPENAI_API_KEY"):
        print("set OPENAI_API_KEY to run against a model, or run --scripted", file=sys.stderr)
        return 2
    model: str | Model = scripted_model() if args.scripted else args.model
    logging.getLogger("openai.agents").setLevel(logging.CRITICAL)  # failures are reported below
    # the adapters' default policy: commands run without asking (ShellTool's needs_approval
    # is the SDK's way to ask a person)
    with (
        agentfs.open(args.workspace) as ws,
        toolset_for(ws, thread="example", actor="agent") as toolset,
    ):
        snapshot = ws.snapshots.create(
            thread=toolset.thread, label=f"before: {args.task[:80]}", meta={"user": args.task}
        ).name
        try:
            result = Runner.run_sync(
                build_agent(toolset, model),
                args.task,
                run_config=RunConfig(tracing_disabled=True),  # nothing leaves but model calls
            )
        except (APIConnectionError, APIStatusError) as exc:
            why = " ".join(str(exc).split())
            print(f"cannot use the model {args.model}: {why}; or run --scripted", file=sys.stderr)
            return 2
    print(result.final_output)
    print(f"\nto undo the turn: agentfs snapshot restore {args.workspace} {snapshot}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
