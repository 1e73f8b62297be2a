"""A complete agent loop over a workspace, in the OpenAI function-calling format.

The loop is model-agnostic: ``complete(messages, tools)`` is any callable that returns the next
assistant message as a Chat Completions message dict (``content`` and ``tool_calls``). With the
``openai`` package installed and ``OPENAI_API_KEY`` set, ``python examples/agent_loop.py WS
"task"`` runs it against a real model; ``--scripted`` runs it offline with a stand-in model
that surveys the workspace and writes down what it found (``scripted_complete``).

What the workspace adds to an ordinary loop:

- the tools and their schemas come from ``Toolset.openai_tools()``, their results are the text a
  model should read (``ToolResult.text``), and errors are results the model can act on;
- every turn starts with a snapshot labelled with the thread and the user's message, so any
  turn can be rewound (``agentfs snapshot restore WS NAME``), whatever the tools did;
- every call is audited with the versions it wrote (``agentfs timeline WS``);
- the workspace's skills go into the system prompt (``Toolset.skills_prompt()``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import agentfs
from agentfs.tools import Policy, Toolset

Message = dict[str, Any]
#: The model: the conversation so far and the tool schemas in, the next assistant message out.
Complete = Callable[[list[Message], list[dict[str, Any]]], Message]

SYSTEM = (
    "You work in a workspace of files through the tools you are given. Read a file before you"
    " change it, prefer edit_file and apply_patch to rewriting whole files, and say briefly"
    " what you did when you are done."
)


@dataclass
class Turn:
    """What one user turn did: the final answer, the messages, the snapshot to rewind to."""

    answer: str
    messages: list[Message]
    snapshot: str
    tool_calls: int = 0
    errors: list[str] = field(default_factory=list)


def run_turn(
    toolset: Toolset,
    complete: Complete,
    user_message: str,
    *,
    history: list[Message] | None = None,
    max_steps: int = 20,
) -> Turn:
    """Run one user turn to its end: call the model, run the tools it asks for, feed back the
    results, until it answers without a tool call (or ``max_steps`` model calls)."""
    ws = toolset.ws
    snapshot = ws.snapshots.create(
        thread=toolset.thread, label=f"before: {user_message[:80]}", meta={"user": user_message}
    ).name
    skills = toolset.skills_prompt()
    system = SYSTEM + ("\n\n" + skills if skills else "")
    messages = list(history) if history else [{"role": "system", "content": system}]
    messages.append({"role": "user", "content": user_message})
    turn = Turn(answer="", messages=messages, snapshot=snapshot)
    schemas = toolset.openai_tools()
    for _ in range(max_steps):
        reply = complete(messages, schemas)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            turn.answer = reply.get("content") or ""
            break
        for call in calls:
            result = toolset.invoke(call["function"]["name"], call["function"]["arguments"])
            turn.tool_calls += 1
            if result.error is not None:
                turn.errors.append(result.error.code)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.text})
    else:
        turn.answer = f"(stopped after {max_steps} model calls)"
    toolset.flush()
    return turn


def openai_complete(model: str = "gpt-4.1-mini") -> Complete:
    """A ``Complete`` backed by the OpenAI API (needs the ``openai`` package and a key)."""
    from openai import OpenAI  # optional: not a dependency of agentfs

    client = OpenAI()

    def complete(messages: list[Message], tools: list[dict[str, Any]]) -> Message:
        # the messages and tools are plain dicts in the shapes the API's typed params describe
        response = client.chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            tools=tools,  # type: ignore[arg-type]
        )
        return response.choices[0].message.model_dump(exclude_none=True)

    return complete


def scripted_complete() -> Complete:
    """A stand-in model for running offline: it lists the workspace, writes the listing to
    ``/NOTES.md``, reads it back and answers, whatever it was asked. Each step is a real tool
    call through the same loop, snapshot and audit as a model's."""
    plan = [
        ("list_tree", lambda seen: {"path": "/"}),
        ("write_file", lambda seen: {"path": "/NOTES.md", "content": f"# Files\n\n{seen}\n"}),
        ("read_file", lambda seen: {"path": "/NOTES.md"}),
    ]

    def complete(messages: list[Message], tools: list[dict[str, Any]]) -> Message:
        turn = messages[max(i for i, m in enumerate(messages) if m["role"] == "user") :]
        step = sum(1 for m in turn if m["role"] == "assistant")
        if step == len(plan):
            return {"role": "assistant", "content": "I listed the workspace in /NOTES.md."}
        seen = next((m["content"] for m in reversed(turn) if m["role"] == "tool"), "")
        name, arguments = plan[step]
        call = {"name": name, "arguments": json.dumps(arguments(seen))}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": f"call_{step}", "type": "function", "function": call}],
        }

    return complete


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="One agent turn over a workspace.")
    parser.add_argument("workspace", help="the workspace file (made if missing)")
    parser.add_argument("task", help="what the agent is asked to do")
    parser.add_argument("--scripted", action="store_true", help="a stand-in model, offline")
    args = parser.parse_args(argv[1:])
    if args.scripted:
        complete = scripted_complete()
    elif importlib.util.find_spec("openai") is None:
        print(
            "the openai package is missing: pip install openai, or run --scripted", file=sys.stderr
        )
        return 2
    elif not os.environ.get("OPENAI_API_KEY"):
        print("set OPENAI_API_KEY to run against a model, or run --scripted", file=sys.stderr)
        return 2
    else:
        complete = openai_complete()
    with agentfs.open(args.workspace) as ws:
        toolset = Toolset(ws, thread="example", actor="agent", policy=Policy())
        turn = run_turn(toolset, complete, args.task)
    print(turn.answer)
    undo = f"agentfs snapshot restore {args.workspace} {turn.snapshot}"
    print(f"\n{turn.tool_calls} tool calls; to undo them all: {undo}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
