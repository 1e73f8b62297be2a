"""Tool definitions in the formats function-calling APIs take: OpenAI's, Anthropic's and MCP's.

Schemas come from the pydantic models with every ``$ref`` inlined and generated titles dropped
(some clients reject ``$defs``), and an optional value written ``"type": ["integer", "null"]``
rather than an ``anyOf``: it reads more plainly to a model, and a validator checks it faster.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from agentfs.tools.spec import Tool
from agentfs.tools.strict import strict_schema


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema, self-contained (no ``$ref``), without generated titles.

    A field that may be null keeps pydantic's ``anyOf`` of single-type branches: a ``type``
    array (``["string", "null"]``) is legal JSON Schema but is refused or dropped by clients
    that map schemas onto a one-type dialect (Gemini's function declarations, the MCP
    Inspector's ``--strict`` check warns of it)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    return _inline(schema, defs)


def mcp_output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The output schema the MCP server declares: ``json_schema(model)`` with each array whose
    items are objects declared without an item schema, the items' fields described in words.

    Clients check every structured result against it item by item, in pure Python, which for a
    large listing costs more than the whole call (docs/mcp.md, "What a call costs"). An array of
    alternatives (``read_multiple_files``'s files) keeps its schema; the complete typed schema
    stays in the tool's models, ``docs/tools.md`` and ``agentfs tools schema NAME --format output``.
    """
    return _described_arrays(json_schema(model))


def _described_arrays(node: Any) -> Any:
    if isinstance(node, list):
        return [_described_arrays(item) for item in node]
    if not isinstance(node, dict):
        return node
    items = node.get("items")
    if "array" in _types(node) and isinstance(items, dict) and "object" in _types(items):
        fields = ", ".join(
            f"{name} ({_kind(field)})" for name, field in items.get("properties", {}).items()
        )
        said = node.get("description", "")
        said = f"{said}; each item" if said else "Each item"
        rest = {key: value for key, value in node.items() if key != "items"}
        return {**rest, "description": f"{said}: {fields}"}
    return {key: _described_arrays(value) for key, value in node.items()}


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type", [])
    return [kind] if isinstance(kind, str) else list(kind)


def _kind(field: dict[str, Any]) -> str:
    """A field's type in words: ``integer``, ``string or null``, ``one of file, directory``."""
    if "enum" in field:
        kind = "one of " + ", ".join(
            value if isinstance(value, str) else json.dumps(value) for value in field["enum"]
        )
    else:
        branches = field.get("anyOf", [field])  # a field that may be null: its branches
        kind = " or ".join(kind for branch in branches for kind in _types(branch)) or "any"
    return f"{kind}: {field['description']}" if "description" in field else kind


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


def openai_tool(
    spec: Tool, *, api: Literal["chat", "responses"] = "chat", strict: bool = False
) -> dict[str, Any]:
    """``spec`` as an OpenAI tool: a Chat Completions ``tools`` entry (``api="chat"``) or a
    Responses API one (``api="responses"``, flat); ``strict``: its parameters in strict
    form (``agentfs.tools.strict``), whose arguments ``Toolset.invoke(..., strict=True)``
    takes."""
    parameters = json_schema(spec.input)
    if strict:
        parameters = strict_schema(parameters)[0]
    function = {"name": spec.name, "description": spec.description, "parameters": parameters}
    if api == "responses":
        return {"type": "function", **function, "strict": strict}
    return {"type": "function", "function": {**function, "strict": True} if strict else function}


def anthropic_tool(spec: Tool) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": json_schema(spec.input),
    }
