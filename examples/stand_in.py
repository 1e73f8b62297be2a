"""A stand-in chat model for the LangChain-based examples' ``--scripted`` runs: it answers
from the tools' results it has been sent, as a model would, with no model behind it."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class StandIn(BaseChatModel):
    """A model whose next message ``reply`` makes from the tool results so far."""

    @property
    def _llm_type(self) -> str:
        return "stand-in"

    def bind_tools(self, tools: Any, **kwargs: Any) -> StandIn:
        return self  # the script knows its tools

    def reply(self, results: list[ToolMessage]) -> AIMessage:
        raise NotImplementedError

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        return ChatResult(generations=[ChatGeneration(message=self.reply(results))])


def tool_call(name: str, **args: Any) -> AIMessage:
    """The model's turn that calls tool ``name`` with ``args``."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": name}])
