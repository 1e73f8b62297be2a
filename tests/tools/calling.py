"""Calling a tool in a test: its structured result and text, or its error's code and message."""

from __future__ import annotations

from typing import Any

from agentfs.tools import Toolset


def call(tools: Toolset, name: str, **args: Any) -> tuple[dict[str, Any], str]:
    """A call expected to succeed: its structured result and the text a model reads."""
    result = tools.invoke(name, args)
    assert result.error is None, result.text
    return result.data, result.text


def error(tools: Toolset, name: str, **args: Any) -> tuple[str, str]:
    """A call expected to fail: its error's code and message."""
    result = tools.invoke(name, args)
    assert result.error is not None, result.data
    return result.error.code, result.error.message
