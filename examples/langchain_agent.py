"""A LangChain agent working in a workspace (the ``langchain`` extra).

``create_agent`` gets the workspace's tools as LangChain tools (``agentfs.integrations.
langchain.tools``), all through one ``Toolset``: the operator's policy, every call audited with
the versions it wrote (``agentfs timeline WS``), the thread's read tracking. The turn starts
with a snapshot, so all it did can be undone (``agentfs snapshot restore WS NAME``).

    python examples/langchain_agent.py ws.db "write a plan" --scripted   # offline
    ANTHROPIC_API_KEY=... python examples/langchain_agent.py ws.db "write a plan"

``--scripted`` stands in for the model: it lists the workspace, writes a plan naming what it
found to ``/PLAN.md`` and answers, each step a real tool call whose result it reads. Without
it the example runs ``--model`` (a ``provider:name`` that langchain's ``init_chat_model``
knows; its provider's package and API key must be there) and says so in one line when they
are not.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from stand_in import StandIn, tool_call

import agentfs
from agentfs.integrations.langchain import tools
from agentfs.integrations.toolsets import toolset_for

#: For each provider: the package its chat model comes in, and the API key it needs.
PROVIDERS = {
    "anthropic": ("langchain_anthropic", "ANTHROPIC_API_KEY"),
    "openai": ("langchain_openai", "OPENAI_API_KEY"),
}


class Planner(StandIn):
    """A stand-in model: it lists the workspace, writes a plan naming what it found, and
    answers."""

    def reply(self, results: list[ToolMessage]) -> AIMessage:
        if not results:
            return tool_call("list_tree", path="/")
        if len(results) == 1:
            found = [line for line in str(results[0].content).splitlines() if line.strip()]
            plan = "# Plan\n\nLook at:\n" + "".join(f"- {line.strip()}\n" for line in found)
            return tool_call("write_file", path="/PLAN.md", content=plan)
        return AIMessage(content=f"Wrote /PLAN.md: {results[-1].content}")


def unavailable(model: str) -> str | None:
    """Why ``model`` cannot be run here, or None."""
    provider = model.split(":", 1)[0]
    package, key = PROVIDERS.get(provider, (None, None))
    if package is None or key is None:
        return f"unknown provider {provider!r} (one of: {', '.join(PROVIDERS)}); or run --scripted"
    if importlib.util.find_spec(package) is None:
        return f"the {package} package is missing: pip install it, or run --scripted"
    if not os.environ.get(key):
        return f"set {key} to run against {model}, or run --scripted"
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="One LangChain agent turn in a workspace.")
    parser.add_argument("workspace")
    parser.add_argument("message")
    parser.add_argument("--model", default="anthropic:claude-sonnet-4-5")
    parser.add_argument("--thread", default="langchain")
    parser.add_argument("--scripted", action="store_true", help="a stand-in model, offline")
    args = parser.parse_args(argv[1:])
    problem = None if args.scripted else unavailable(args.model)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    model: BaseChatModel | str = Planner() if args.scripted else args.model
    with agentfs.open(args.workspace) as ws, toolset_for(ws, thread=args.thread) as toolset:
        snapshot = ws.snapshots.create(label=f"{args.thread}: {args.message}", thread=args.thread)
        agent = create_agent(model=model, tools=tools(toolset))
        state = agent.invoke({"messages": [HumanMessage(args.message)]})
    print(state["messages"][-1].content)
    print(f"(undo this turn: agentfs snapshot restore {args.workspace} {snapshot.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
