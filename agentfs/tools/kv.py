"""The key-value tools over the spec's ``kv_store``: small JSON facts an agent keeps between
turns and threads (preferences, a plan, a cursor), next to its files and in the same file."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from agentfs.tools.context import Context
from agentfs.tools.spec import ToolInput, ToolOutput, tool

#: Most keys ``kv_list`` returns unless the policy says fewer.
LIST_LIMIT = 1000


#: Any JSON value, typed branch by branch: a schema with no type at all is refused or
#: misread by clients that need one (the MCP Inspector's ``--strict`` check warns of it).
JsonValue = Annotated[
    Any,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "number"},
                {"type": "boolean"},
                {"type": "object"},
                {"type": "array"},
                {"type": "null"},
            ]
        }
    ),
]


class KvKeyInput(ToolInput):
    key: str = Field(min_length=1, description="the key")


class KvValueOutput(ToolOutput):
    key: str
    value: JsonValue = Field(description="the stored JSON value")

    def text(self) -> str:
        return json.dumps(self.value, ensure_ascii=False, indent=1)


@tool(
    "kv_get",
    title="Get a stored value",
    idempotent=True,
    description="""Get the JSON value stored under a key in the workspace's key-value
    store.""",
)
def kv_get(ctx: Context, args: KvKeyInput) -> KvValueOutput:
    return KvValueOutput(key=args.key, value=ctx.ws.kv.get(args.key))


class KvSetInput(ToolInput):
    key: str = Field(min_length=1, description="the key")
    value: JsonValue = Field(description="any JSON value")


class KvSetOutput(ToolOutput):
    key: str
    created: bool = Field(description="the key was new")

    def text(self) -> str:
        return f"{'Set' if self.created else 'Updated'} {self.key!r}."


@tool(
    "kv_set",
    title="Store a value",
    mutates=True,
    destructive=True,
    idempotent=True,
    description="""Store a JSON value under a key in the workspace's key-value store,
    replacing any there: small facts to keep across turns (a plan, preferences, progress).""",
)
def kv_set(ctx: Context, args: KvSetInput) -> KvSetOutput:
    created = args.key not in ctx.ws.kv
    ctx.ws.kv.set(args.key, args.value)
    return KvSetOutput(key=args.key, created=created)


class KvDeleteOutput(ToolOutput):
    key: str
    deleted: bool = Field(description="false when the key was not set")

    def text(self) -> str:
        return f"Deleted {self.key!r}." if self.deleted else f"{self.key!r} was not set."


@tool(
    "kv_delete",
    title="Delete a stored value",
    mutates=True,
    destructive=True,
    idempotent=True,
    description="""Delete a key from the workspace's key-value store (no error if it is
    not set).""",
)
def kv_delete(ctx: Context, args: KvKeyInput) -> KvDeleteOutput:
    return KvDeleteOutput(key=args.key, deleted=ctx.ws.kv.delete(args.key))


class KvListInput(ToolInput):
    prefix: str = Field("", description="only keys starting with this")


class KvEntry(ToolOutput):
    key: str
    value: JsonValue
    updated: float = Field(description="last update, epoch seconds")


class KvListOutput(ToolOutput):
    entries: list[KvEntry] = Field(description="sorted by key")
    truncated: bool

    def text(self) -> str:
        if not self.entries:
            return "No keys."
        rows = [f"{e.key} = {json.dumps(e.value, ensure_ascii=False)}" for e in self.entries]
        if self.truncated:
            rows.append("... more keys: give a longer prefix")
        return "\n".join(rows)


@tool(
    "kv_list",
    title="List stored values",
    idempotent=True,
    description="""List the keys and values of the workspace's key-value store.""",
)
def kv_list(ctx: Context, args: KvListInput) -> KvListOutput:
    entries = ctx.ws.kv.list(args.prefix)
    cap = ctx.cap(LIST_LIMIT)
    return KvListOutput(
        entries=[KvEntry(key=e.key, value=e.value, updated=e.updated_at) for e in entries[:cap]],
        truncated=len(entries) > cap,
    )
