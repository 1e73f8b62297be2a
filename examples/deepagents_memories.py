"""A deepagents agent whose long-term memories live in a workspace.

deepagents' ``CompositeBackend`` keeps the agent's scratch files in its conversation state and
sends everything under ``/memories/`` to ``AgentFSBackend``: what the agent remembers outlives
the conversation, with every version, the audit of the calls that wrote it and rewind
(``agentfs history WS /user.md``, ``agentfs timeline WS``).

``python examples/deepagents_memories.py WS "message"`` runs one turn against a real model
(``--model``, a ``provider:name`` that langchain's ``init_chat_model`` knows, with its API key
set); ``--scripted`` runs offline with a stand-in model that lists what it remembers and
writes the message down as one more memory.
"""

from __future__ import annotations

import argparse
import os
import sys

from deepagents import create_deep_agent
from deepagents.backends import CompositeBackend, StateBackend
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from stand_in import StandIn, tool_call

import agentfs
from agentfs.integrations.deepagents import AgentFSBackend

SYSTEM = (
    "Your long-term memory is the directory /memories/: look at what is there before you"
    " answer, and write down there what the user wants you to remember. Other files are"
    " scratch."
)
#: The API key each provider's chat model needs.
KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


class Rememberer(StandIn):
    """A stand-in model: it lists what it remembers, writes the message down as one more
    memory, and says how many it has."""

    message: str

    def reply(self, results: list[ToolMessage]) -> AIMessage:
        if not results:
            return tool_call("ls", path="/memories/")
        known = str(results[0].content).count("/memories/")
        if len(results) == 1:
            memory = f"/memories/{known + 1:03d}.md"
            return tool_call("write_file", file_path=memory, content=self.message + "\n")
        return AIMessage(content=f"Noted. Memories kept: {known + 1}.")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="One deepagents turn with memories in a workspace."
    )
    parser.add_argument("workspace")
    parser.add_argument("message")
    parser.add_argument("--model", default="anthropic:claude-sonnet-4-5")
    parser.add_argument("--thread", default="memories")
    parser.add_argument("--scripted", action="store_true", help="a stand-in model, offline")
    args = parser.parse_args(argv[1:])
    provider = args.model.split(":", 1)[0]
    if not args.scripted and not os.environ.get(KEYS.get(provider, "")):
        key = KEYS.get(provider, "the provider's API key")
        print(f"set {key} to run against {args.model}, or run --scripted", file=sys.stderr)
        return 2
    with (
        agentfs.open(args.workspace) as ws,
        AgentFSBackend(ws, thread=args.thread) as memories,
    ):
        model: BaseChatModel | str = (
            Rememberer(message=args.message) if args.scripted else args.model
        )
        backend = CompositeBackend(default=StateBackend(), routes={"/memories/": memories})
        agent = create_deep_agent(model=model, backend=backend, system_prompt=SYSTEM)
        state = agent.invoke({"messages": [HumanMessage(args.message)]})
    print(state["messages"][-1].content)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
