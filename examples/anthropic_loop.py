"""An agent over a workspace through the Anthropic SDK's own tool runner.

The model gets the memory tool (``memory_20250818``: its ``/memories`` is the workspace's
``/memories``) and the ``agent_toolset_20260401`` tools (``bash``, ``read``, ``write``,
``edit``, ``glob``, ``grep``), all from ``agentfs.integrations.anthropic``, and
``client.beta.messages.tool_runner`` runs the loop: every call goes through a ``Toolset``
(the policy, one transaction per change, the audit in ``ws.tool_calls``).

    python examples/anthropic_loop.py ws.db "survey the workspace" --scripted   # offline
    ANTHROPIC_API_KEY=... python examples/anthropic_loop.py ws.db "fix the failing test"

``--scripted`` answers for the model from an ``httpx.MockTransport``: it looks at its memory,
lists the workspace, writes what it found to ``/NOTES.md`` and remembers that it did, each
step a real tool call. Without it, the example needs ``ANTHROPIC_API_KEY`` and says so in one
line (exit status 2) when it is missing or the API cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anthropic
import httpx2 as httpx  # the SDK's own HTTP client: httpx's API, its own package

import agentfs
from agentfs.integrations.anthropic import SURFACE, AgentFSMemoryTool, agent_toolset
from agentfs.integrations.toolsets import adapter_policy
from agentfs.tools import Toolset

MODEL = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-5-5")
SYSTEM = (
    "You work in a workspace of files through the tools you are given. Check your memory"
    " first, read before you edit, and say briefly what you did when you are done."
)


def message(n: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    """A Messages API response, as the API sends it."""
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def tool_use(n: int, name: str, **arguments: Any) -> dict[str, Any]:
    return message(
        n, [{"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": arguments}], "tool_use"
    )


def last_result(body: dict[str, Any]) -> tuple[int, str]:
    """The step the last tool result the request carries answers (-1: none), and its text.
    (The request carries the new messages only: the runner keeps the conversation.)"""
    for block in reversed(body["messages"][-1]["content"]):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            return int(block["tool_use_id"].removeprefix("toolu_")), text
    return -1, ""


def scripted_model(request: httpx.Request) -> httpx.Response:
    """The stand-in model: its next step follows the tool result it is sent."""
    answered, found = last_result(json.loads(request.content))
    step = answered + 1
    if step == 0:
        reply = tool_use(0, "memory", command="view", path="/memories")
    elif step == 1:
        reply = tool_use(1, "glob", pattern="**/*")
    elif step == 2:
        reply = tool_use(2, "write", file_path="NOTES.md", content=f"# Survey\n\n{found}\n")
    elif step == 3:
        reply = tool_use(
            3,
            "memory",
            command="create",
            path="/memories/survey.md",
            file_text="Surveyed the workspace; the list is in /NOTES.md.\n",
        )
    else:
        text = "I listed the workspace in /NOTES.md and noted it in my memory."
        reply = message(step, [{"type": "text", "text": text}], "end_turn")
    return httpx.Response(200, json=reply)


def client(scripted: bool) -> anthropic.Anthropic:
    if scripted:
        transport = httpx.MockTransport(scripted_model)
        return anthropic.Anthropic(
            api_key="scripted", http_client=httpx.Client(transport=transport)
        )
    return anthropic.Anthropic()


def run(ws: agentfs.Workspace, task: str, model: anthropic.Anthropic) -> str:
    """One task: the tool runner calls the model and runs its tools until it answers."""
    policy = adapter_policy()
    with Toolset(ws, surface=SURFACE, thread="example", actor="claude", policy=policy) as toolset:
        runner = model.beta.messages.tool_runner(
            model=MODEL,
            max_tokens=4096,
            system=SYSTEM,
            tools=[AgentFSMemoryTool(toolset), *agent_toolset(toolset)],
            messages=[{"role": "user", "content": task}],
        )
        final = runner.until_done()
    return "".join(block.text for block in final.content if block.type == "text")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="A task for Claude over a workspace.")
    parser.add_argument("workspace", help="the workspace file (made if missing)")
    parser.add_argument("task", help="what the agent is asked to do")
    parser.add_argument("--scripted", action="store_true", help="a stand-in model, offline")
    args = parser.parse_args(argv[1:])
    if not args.scripted and not os.environ.get("ANTHROPIC_API_KEY"):
        print("set ANTHROPIC_API_KEY to run against a model, or run --scripted", file=sys.stderr)
        return 2
    with agentfs.open(args.workspace) as ws:
        try:
            answer = run(ws, args.task, client(args.scripted))
        except (anthropic.APIConnectionError, anthropic.APIStatusError) as exc:
            print(f"the model cannot be reached: {exc}", file=sys.stderr)
            return 2
        calls = len(ws.tool_calls.list(limit=100_000))
    print(answer)
    print(f"\n{calls} tool calls in the audit: agentfs timeline {args.workspace}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
