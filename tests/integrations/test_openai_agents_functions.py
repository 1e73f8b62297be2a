"""agentfs's tools as the SDK's ``FunctionTool``s: every tool's schema is one the SDK's strict
mode accepts as it is; arguments a model gives in that form validate against it and come back
to the tool as the arguments they stand for (a null: the tool's default; a list of pairs: a
map; JSON text: its value); and a call through the ``FunctionTool`` does what the same call
through the ``Toolset`` does."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from agents import FunctionTool
from agents.strict_schema import ensure_strict_json_schema
from agents.tool_context import ToolContext

import agentfs
from agentfs.integrations.openai_agents import function_tools, strict_schema
from agentfs.tools import Policy, Toolset, catalog
from agentfs.tools.export import json_schema
from agentfs.tools.policy import ToolPolicy
from agentfs.tools.reference import EXAMPLES, build_demo
from tests.tools.calling import PLAIN


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        opened.write("/notes.md", "one\ntwo\n")
        opened.write("/secrets/key", "k\n", parents=True)
        yield opened


def _call(tool: FunctionTool, arguments: dict[str, Any] | str) -> str:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    context = ToolContext(
        context=None, tool_name=tool.name, tool_call_id="call_1", tool_arguments=text
    )

    async def invoke() -> object:
        return await tool.on_invoke_tool(context, text)

    result = asyncio.run(invoke())
    assert isinstance(result, str)
    return result


def _strict_form(schema: dict[str, Any], value: Any) -> Any:
    """``value`` as a model would give it under the strict schema made from ``schema``:
    written here from the rules, independently of the adapter's code."""
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if value is None:
        return None
    if "anyOf" in schema:  # X or null: X's form; any JSON value (an open object): its text
        branches = [branch for branch in schema["anyOf"] if branch != {"type": "null"}]
        if len(branches) == 1:
            return _strict_form(branches[0], value)
        if {"type": "object"} in branches:
            return json.dumps(value)
        return value
    if "properties" in schema:
        return {
            name: _strict_form(prop, value.get(name)) for name, prop in schema["properties"].items()
        }
    if "object" in kinds and isinstance(schema.get("additionalProperties"), dict):
        item = schema["additionalProperties"]
        return [{"key": k, "value": _strict_form(item, v)} for k, v in value.items()]
    if "array" in kinds:
        return [_strict_form(schema.get("items", {}), v) for v in value]
    if not kinds and "anyOf" not in schema and "enum" not in schema:
        return json.dumps(value)
    return value


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_every_tool_converts_to_a_schema_strict_mode_accepts(ws: agentfs.Workspace) -> None:
    tools = function_tools(ws)
    assert [t.name for t in tools] == [t.name for t in Toolset(ws).tools()]
    assert len(tools) == len(PLAIN)
    for tool, spec in zip(tools, PLAIN, strict=True):
        assert tool.strict_json_schema and tool.description == spec.description
        original = json_schema(spec.input)
        schema, _ = strict_schema(original)
        # already in the SDK's strict form: its own pass (open objects refused) changes nothing
        again = ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=True)
        assert again == schema == tool.params_json_schema, spec.name
        jsonschema.Draft202012Validator.check_schema(schema)
        for node in _walk(schema):
            assert "default" not in node, spec.name
            if "properties" in node:
                assert node["required"] == list(node["properties"]), spec.name
                assert node["additionalProperties"] is False, spec.name
        for name, prop in schema["properties"].items():
            if name not in original.get("required", []):  # optional: null means the default
                jsonschema.validate(None, prop)
                assert (
                    "(default" in prop.get("description", "")
                    or "default" not in original["properties"][name]
                    or original["properties"][name]["default"] is None
                )


#: Arguments beyond the documented examples: the maps and the nested optional fields.
MORE = [
    ("execute_command", {"command": "env", "env": {"A": "1", "B_2": "x"}, "timeout_ms": 5000}),
    ("apply_patch", {"patch": "*** Begin Patch\n*** End Patch", "expected_versions": {"/a": 2}}),
    ("multi_edit", {"path": "/a", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("workspace_search", {"query": "q", "mode": "bm25"}),
    ("kv_set", {"key": "k", "value": "a string"}),
    ("kv_set", {"key": "k", "value": [1, {"a": None}]}),
]


@pytest.mark.parametrize(
    ("name", "arguments"), [*EXAMPLES.items(), *MORE], ids=lambda v: v if isinstance(v, str) else ""
)
def test_arguments_in_strict_form_come_back_as_the_tools_arguments(
    name: str, arguments: dict[str, Any]
) -> None:
    spec = catalog.find(name)
    assert spec is not None
    original = json_schema(spec.input)
    schema, decode = strict_schema(original)
    given = _strict_form(original, arguments)
    jsonschema.validate(given, schema)  # what a model in strict mode may send
    assert decode(given) == arguments
    spec.validate(decode(given))  # and the tool takes it


def test_nulls_leave_the_tools_defaults(ws: agentfs.Workspace) -> None:
    read = {t.name: t for t in function_tools(ws)}["read_file"]
    nulls = {"path": "/notes.md", "offset": None, "limit": None, "max_bytes": None, "version": None}
    assert _call(read, nulls) == Toolset(ws).invoke("read_file", {"path": "/notes.md"}).text
    two = _call(read, {**nulls, "offset": 2})
    assert "two" in two and "one" not in two


def test_kv_values_are_json_text(ws: agentfs.Workspace) -> None:
    kv_set = {t.name: t for t in function_tools(ws)}["kv_set"]
    _call(kv_set, {"key": "plan", "value": '{"step": 2}'})
    _call(kv_set, {"key": "note", "value": "plain words"})
    assert ws.kv.get("plan") == {"step": 2} and ws.kv.get("note") == "plain words"


def test_calls_do_what_the_toolsets_calls_do(tmp_path: Path) -> None:
    """Every documented example, in catalog order, on two copies of the demo project: through
    the ``FunctionTool``s in strict form, and through the ``Toolset``. The model reads the same."""
    texts: list[list[str]] = []
    for route in ("function", "toolset"):
        with agentfs.open(tmp_path / f"{route}.db", thread="main") as ws:
            build_demo(ws)
            toolset = Toolset(ws, thread="main", actor="agent", approve=lambda _call: True)
            tools = {t.name: t for t in function_tools(toolset)}
            seen = []
            for spec in PLAIN:
                arguments = EXAMPLES[spec.name]
                if route == "function":
                    strict = _strict_form(json_schema(spec.input), arguments)
                    seen.append(_call(tools[spec.name], strict))
                else:
                    seen.append(toolset.invoke(spec.name, arguments).text)
            toolset.flush()
            texts.append(seen)
            logged = sorted(c.name for c in ws.tool_calls.list())
            assert logged == sorted(s.name for s in PLAIN)

    def masked(text: str) -> str:  # times, durations, sizes of the database
        return re.sub(r"\d+", "#", text)

    assert [masked(t) for t in texts[0]] == [masked(t) for t in texts[1]]
    assert sum(t.startswith("Error [") for t in texts[0]) <= 1  # sync: no server here


def test_the_policy_holds_and_bad_arguments_are_results(ws: agentfs.Workspace) -> None:
    policy = Policy(defaults=ToolPolicy(deny=["/secrets/**"]))
    with Toolset(ws, policy=policy) as toolset:
        tools = {t.name: t for t in function_tools(toolset)}
        refused = _call(tools["read_file"], {"path": "/secrets/key"})
        assert refused.startswith("Error [denied]") and "k\n" not in refused
        bad = _call(tools["read_file"], {"path": "/notes.md", "offset": -1})
        assert bad.startswith("Error [invalid_argument]") and "offset" in bad
        garbled = _call(tools["read_file"], "{not json")
        assert garbled.startswith("Error [invalid_argument]") and "JSON" in garbled
    failed = [c for c in ws.tool_calls.list() if c.error is not None]
    assert len(failed) == 3 and {c.name for c in failed} == {"read_file"}


def test_names_exclude_and_the_sdks_approval(ws: agentfs.Workspace) -> None:
    only = function_tools(ws, names=["read_file", "write_file", "execute_command"])
    assert [t.name for t in only] == ["read_file", "write_file", "execute_command"]
    with pytest.raises(ValueError, match="unknown tools: nope"):
        function_tools(ws, names=["read_file", "nope"])
    beside = function_tools(ws, exclude=["apply_patch", "execute_command"])
    assert {"apply_patch", "execute_command"}.isdisjoint(t.name for t in beside)
    asked = function_tools(
        ws, names=["read_file", "execute_command"], needs_approval=["execute_command"]
    )
    assert [t.needs_approval for t in asked] == [False, True]
    reader = function_tools(ws, policy=Policy(read_only=True))
    assert "write_file" not in {t.name for t in reader} and "read_file" in {t.name for t in reader}
