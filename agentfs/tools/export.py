"""Tool definitions in the formats function-calling APIs take: OpenAI's ``{"type":
"function", "function": {...}}``, Anthropic's ``{"name", "description", "input_schema"}``, and
the plain JSON Schemas MCP declares.

Schemas come from the pydantic models, with every ``$ref`` inlined and pydantic's generated
titles dropped: some clients reject ``$defs``, and titles only repeat the field names.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentfs.tools.spec import Tool


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema, self-contained (no ``$ref``), without generated titles."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    return _inline(schema, defs)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            merged = {
                **defs[ref.removeprefix("#/$defs/")],
                **{k: v for k, v in node.items() if k != "$ref"},
            }
            return _inline(merged, defs)
        return {
            key: _inline(value, defs)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    return node


def openai_tool(spec: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": json_schema(spec.input),
        },
    }


def anthropic_tool(spec: Tool) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": json_schema(spec.input),
    }
