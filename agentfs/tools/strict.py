"""Tool schemas in OpenAI's strict form, and the way back from arguments given in it.

Strict mode (OpenAI's ``strict: true``, the Agents SDK's ``FunctionTool``) wants every
property required, every object closed and every value typed. ``strict_schema`` turns an
agentfs tool's JSON Schema into that form and returns with it the function that turns the
model's arguments back into what the tool takes:

- an optional property becomes required and nullable; a null for it is dropped before the
  call, so the tool's own default applies (the default is said in the description instead);
- a map (``env``, ``expected_versions``: an object of any keys) becomes a list of
  ``{"key", "value"}`` pairs, made a map again;
- a value of any JSON type (``kv_set``'s ``value``) becomes a string of JSON text, parsed
  again (a string that is not JSON is taken as that text).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: Turns arguments given in a strict schema's form back into the tool's own.
Decode = Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


def strict_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], Decode]:
    """``schema`` (an agentfs tool's input, as ``agentfs.tools.export.json_schema`` gives it)
    in the SDK's strict form, and the function that turns arguments given in that form back
    into arguments for the tool (see the module docstring)."""
    return _convert(schema)


def _convert(node: dict[str, Any]) -> tuple[dict[str, Any], Decode]:
    node = _described_default(node)
    if "anyOf" in node:
        return _any_of(node)
    kinds = _types(node)
    if isinstance(node.get("properties"), dict):
        return _object(node)
    if "object" in kinds and isinstance(node.get("additionalProperties"), dict):
        return _map(node)
    if "array" in kinds and isinstance(node.get("items"), dict):
        items, decode_item = _convert(node["items"])

        def decode_list(value: Any) -> Any:
            return [decode_item(v) for v in value] if isinstance(value, list) else value

        return {**node, "items": items}, decode_list
    if not kinds and "enum" not in node and "const" not in node:
        return _json_text(node)
    return node, _same


def _any_of(node: dict[str, Any]) -> tuple[dict[str, Any], Decode]:
    """A field of several shapes: X or null is X made nullable (its decoder kept); shapes
    strict mode cannot state (an object without properties, an array without items: any
    JSON) are JSON text; other alternatives stay alternatives."""
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    branches = [branch for branch in node["anyOf"] if branch != {"type": "null"}]
    nullable = len(branches) < len(node["anyOf"])
    if len(branches) == 1:
        converted, decode = _convert({**branches[0], **rest})
        return (_nullable(converted) if nullable else converted), decode
    if any(_open(branch) for branch in branches):
        return _json_text(rest)
    options = [_convert(branch)[0] for branch in node["anyOf"]]
    return {**rest, "anyOf": options}, _same


def _open(node: dict[str, Any]) -> bool:
    """An object or array whose members the schema does not describe."""
    kinds = _types(node)
    return ("object" in kinds and "properties" not in node) or (
        "array" in kinds and "items" not in node
    )


def _object(node: dict[str, Any]) -> tuple[dict[str, Any], Decode]:
    required = set(node.get("required", []))
    properties: dict[str, Any] = {}
    decoders: dict[str, tuple[Decode, bool]] = {}
    for name, prop in node["properties"].items():
        converted, decode = _convert(prop)
        optional = name not in required
        properties[name] = _nullable(converted) if optional else converted
        decoders[name] = (decode, optional)
    strict = {
        **node,
        "type": node.get("type", "object"),
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }

    def decode_object(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out = {}
        for key, item in value.items():
            decode, optional = decoders.get(key, (_same, False))
            if item is None and optional:
                continue  # the tool's own default
            out[key] = decode(item) if item is not None else None
        return out

    return strict, decode_object


def _map(node: dict[str, Any]) -> tuple[dict[str, Any], Decode]:
    value_schema, decode_value = _convert(node["additionalProperties"])
    said = node.get("description", "")
    pairs = "a list of {key, value} pairs"
    rest = {k: v for k, v in node.items() if k not in ("additionalProperties", "type")}
    strict = {
        **rest,
        "type": ["array", "null"] if "null" in _types(node) else "array",
        "description": f"{said} ({pairs})" if said else pairs.capitalize(),
        "items": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "value": value_schema},
            "required": ["key", "value"],
            "additionalProperties": False,
        },
    }

    def decode_map(value: Any) -> Any:
        if not isinstance(value, list) or not all(
            isinstance(pair, dict) and isinstance(pair.get("key"), str) for pair in value
        ):
            return value  # not pairs: the tool's validation says what is wrong
        return {pair["key"]: decode_value(pair.get("value")) for pair in value}

    return strict, decode_map


def _json_text(node: dict[str, Any]) -> tuple[dict[str, Any], Decode]:
    said = node.get("description", "")
    how = 'given as JSON text: "a string", 3, true, [1, 2], {"a": 1}'
    strict = {**node, "type": "string", "description": f"{said}; {how}" if said else how}

    def decode_json(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value  # plain text: that string

    return strict, decode_json


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` also accepting null."""
    if "anyOf" in node:
        options = node["anyOf"]
        return (
            node if {"type": "null"} in options else {**node, "anyOf": [*options, {"type": "null"}]}
        )
    kinds = _types(node)
    if not kinds:
        return {"anyOf": [node, {"type": "null"}]}
    out = {**node, "type": kinds if "null" in kinds else [*kinds, "null"]}
    if "enum" in node and None not in node["enum"]:
        out["enum"] = [*node["enum"], None]
    return out


def _described_default(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` without ``default`` (strict mode takes none): a default other than null is
    said in the description, and the tool applies it when the model passes null."""
    if "default" not in node:
        return node
    rest = {k: v for k, v in node.items() if k != "default"}
    default = node["default"]
    if default is None:
        return rest
    said = rest.get("description", "")
    shown = f"default {json.dumps(default)}"
    rest["description"] = f"{said} ({shown})" if said else shown.capitalize()
    return rest


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type", [])
    return [kind] if isinstance(kind, str) else list(kind)
