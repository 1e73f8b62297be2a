"""A chat model that plays a script, for langchain-based agents run offline: the frameworks'
own agents drive the workspace's tools exactly as with a real model."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


class ScriptedModel(GenericFakeChatModel):
    """langchain-core's fake chat model, which agents can bind tools to."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def tool_call(n: int, name: str, **args: Any) -> AIMessage:
    """The model's turn that calls tool ``name`` with ``args`` (call id ``c<n>``)."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"c{n}"}])
