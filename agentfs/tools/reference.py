"""docs/tools.md, generated: every tool's description, parameters, result fields and a real call.

``render()`` runs each tool's example, in catalog order, on a small project in a temporary
workspace and writes what came back (times fixed), so the page cannot drift from the code:
``agentfs tools docs --check docs/tools.md``, run by the test suite, fails when they disagree.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from agentfs.tools import catalog
from agentfs.tools.errors import ERROR_CODES, ERROR_MEANINGS
from agentfs.tools.export import json_schema
from agentfs.tools.policy import Policy
from agentfs.tools.spec import Tool
from agentfs.tools.toolset import Toolset
from agentfs.workspace import Workspace

#: What every time in an example result is shown as (ISO fields, and epoch-second ones).
FIXED_EPOCH = 1_767_225_600.0
#: What a command's duration is shown as.
FIXED_DURATION_MS = 25
FIXED_TIME = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(FIXED_EPOCH))
_TIME_FIELDS = {"modified", "changed", "at", "created"}
_EPOCH_FIELDS = {"updated"}
#: Result strings longer than this are cut in the page (the tool returns them whole).
_SHOWN_CHARS = 400

APP = """def greet(name):
    return "hello " + name


def main():
    print(greet("world"))
"""

SKILL = """---
name: release-notes
description: Write release notes from the changes since the last tag.
---
List the user-visible changes first, then fixes. One line each.
"""

PATCH = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    print(greet("world"))
+    print(greet("agents"))
*** Add File: CHANGELOG.md
+## 0.2
+- greet agents
*** End Patch"""

#: One example call per tool, run in this order on the demo project.
EXAMPLES: dict[str, dict[str, Any]] = {
    "ls": {"path": "/src"},
    "list_tree": {"path": "/", "max_depth": 2},
    "stat": {"path": "/src/app.py"},
    "read_file": {"path": "/src/app.py", "offset": 1, "limit": 2},
    "read_multiple_files": {"paths": ["/README.md", "/missing.md"]},
    "write_file": {"path": "/notes/todo.md", "content": "- ship the tools\n"},
    "create_file": {"path": "/notes/ideas.md", "content": "- layered workspaces\n"},
    "delete_file": {"path": "/notes/ideas.md"},
    "mkdir": {"path": "/build/out", "recursive": True},
    "rmdir": {"path": "/build", "recursive": True},
    "move_file": {"source": "/notes/todo.md", "destination": "/TODO.md"},
    "copy_file": {"source": "/src", "destination": "/src-backup", "recursive": True},
    "edit_file": {
        "path": "/src/app.py",
        "old_string": 'return "hello " + name',
        "new_string": 'return f"hello {name}"',
    },
    "multi_edit": {
        "path": "/README.md",
        "edits": [
            {"old_string": "# Demo", "new_string": "# Greeter"},
            {"old_string": "Says hello.", "new_string": "Says hello to anyone."},
        ],
    },
    "apply_patch": {"patch": PATCH},
    "glob": {"pattern": "**/*.py", "limit": 10},
    "grep": {"pattern": "greet\\(", "output_mode": "content", "path": "/src"},
    "search_files": {"path": "/", "pattern": "app"},
    "workspace_search": {"query": "how does the program say hello", "top_k": 2},
    "workspace_index": {"path": "/src", "glob": "**/*"},
    "workspace_index_content": {
        "path": "/notes/meeting.md",
        "content": "Decided: greet agents by default.",
    },
    "file_history": {"path": "/src/app.py"},
    "file_diff": {"path": "/src/app.py", "a": 1},
    "restore_version": {"path": "/README.md", "version": 1},
    "snapshot_create": {"name": "after-patch"},
    "snapshot_list": {},
    "snapshot_diff": {"name": "start"},
    "snapshot_restore": {"name": "after-patch"},
    "execute_command": {"command": "python3 src/test_app.py && echo tests pass"},
    "kv_get": {"key": "plan"},
    "kv_set": {"key": "plan", "value": {"step": 2, "goal": "ship"}},
    "kv_delete": {"key": "scratch"},
    "kv_list": {"prefix": ""},
    "workspace_list_skills": {},
    "workspace_search_skills": {"query": "release notes"},
    "workspace_read_skill": {"skill_id": "release-notes"},
    "workspace_activate_skill": {"skill_id": "release-notes"},
    "workspace_deactivate_skill": {"skill_id": "release-notes"},
    "workspace_read_skill_reference": {"skill_id": "release-notes", "file": "style.md"},
    "workspace_read_skill_script": {"skill_id": "release-notes", "file": "collect.sh"},
    "workspace_read_skill_asset": {"skill_id": "release-notes", "file": "template.md"},
    "sync_status": {"offline": True},  # the demo workspace syncs with no server
}

#: The examples of the tools offered only over a base directory, run on a workspace over a
#: copy of the same project on the host (``build_base_demo``).
BASE_EXAMPLES: dict[str, dict[str, Any]] = {
    "workspace_changes": {"path": "/", "patch": True},
    "workspace_apply": {"dry_run": True},
}

#: A failing call shown in the errors section.
ERROR_EXAMPLE = (
    "edit_file",
    {"path": "/src/app.py", "old_string": "print(greet)", "new_string": "x"},
)


def build_demo(ws: Workspace) -> None:
    """The small project every example runs on."""
    ws.write("/README.md", "# Demo\n\nSays hello.\n")
    ws.write("/src/app.py", APP, parents=True)
    ws.write("/src/test_app.py", "from app import greet\n\nassert greet('a') == 'hello a'\n")
    ws.write("/skills/release-notes/SKILL.md", SKILL, parents=True)
    ws.write("/skills/release-notes/references/style.md", "Short lines.\n", parents=True)
    ws.write("/skills/release-notes/scripts/collect.sh", "git log --oneline\n", parents=True)
    ws.write("/skills/release-notes/assets/template.md", "## {version}\n", parents=True)
    ws.kv.set("plan", {"step": 1})
    ws.kv.set("scratch", "temporary")
    ws.snapshots.create("start")


def build_base_demo(host: Path) -> None:
    """The project on the host, for the workspace over it."""
    (host / "src").mkdir(parents=True)
    (host / "README.md").write_text("# Demo\n\nSays hello.\n")
    (host / "src" / "app.py").write_text(APP)


def render() -> str:
    """The whole of docs/tools.md."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp) / "demo.db", actor="docs", thread="main")
        try:
            build_demo(ws)
            # the generator approves every call (execute_command needs approval by default)
            toolset = Toolset(ws, thread="main", actor="agent", approve=lambda _call: True)
            results = {name: toolset.call(name, args) for name, args in EXAMPLES.items()}
            error = toolset.call(*ERROR_EXAMPLE)
            toolset.flush()
        finally:
            ws.close()
        results |= _base_results(Path(tmp))
    examples = EXAMPLES | BASE_EXAMPLES
    parts = [_intro(), _index(), _profiles(), _errors(error)]
    parts += [_tool(spec, examples[spec.name], results[spec.name]) for spec in catalog.all_tools()]
    return "\n".join(parts).rstrip("\n") + "\n"


def _base_results(tmp: Path) -> dict[str, dict[str, Any]]:
    """``BASE_EXAMPLES`` run on a workspace over the demo project on the host, the agent
    having changed one file and added one (``workspace_apply`` enabled by the policy)."""
    build_base_demo(tmp / "host")
    with Workspace(tmp / "base.db", actor="docs", thread="main", base=tmp / "host") as ws:
        ws.write("/src/app.py", APP.replace("hello", "hi"))
        ws.write("/NOTES.md", "- greet shorter\n")
        policy = Policy.model_validate({"tools": {"workspace_apply": {"enabled": True}}})
        toolset = Toolset(ws, thread="main", actor="agent", policy=policy, approve=lambda _: True)
        return {name: toolset.call(name, args) for name, args in BASE_EXAMPLES.items()}


def write(path: str | os.PathLike[str]) -> None:
    Path(path).write_text(render(), encoding="utf-8")


def _intro() -> str:
    return """# Agent tools reference

<!-- Generated by `agentfs tools docs --output docs/tools.md` from agentfs/tools; do not
edit by hand. The test suite fails when this page and the code disagree. -->

Every tool takes JSON arguments and returns a JSON result, or `{"error": {"code", "message"}}`
(never an exception). Call them through `Toolset.call(name, arguments)` in Python, `agentfs
tools call WS NAME JSON` from a shell, or any MCP client (`agentfs serve mcp WS`; docs/mcp.md).
`Toolset.openai_tools()` and `Toolset.anthropic_tools()` give the schemas below in the two
function-calling formats. Paths may be written `/a/b` or `a/b`; `..` stops at the root. Writing
tools take `expected_version` (the `version` that `read_file` and `stat` report) and fail with
`stale_read` if the file has moved on. Policies (docs/policies.md) can hide tools, require
approval, confine paths and cap sizes.

These are the tools of the `agentfs` profile, the default. A profile offers the same engine,
policy and audit under another ecosystem's tool names, parameters and result texts:
`Toolset(ws, profile="mcp-filesystem")`, `agentfs serve mcp WS --profile mcp-filesystem`,
`agentfs tools list --profile mcp-filesystem` (docs/mcp.md, "Profiles", says which suits
which client).

The examples below are real calls, run in order on a small project by the generator (times
shown as one fixed time, durations as 25 ms); long strings are cut here with `…`.
"""


def _index() -> str:
    rows = ["| tool | what it does | changes the workspace |", "|---|---|---|"]
    for spec in catalog.all_tools():
        changes = "yes" + (" (destructive)" if spec.destructive else "") if spec.mutates else ""
        rows.append(f"| [`{spec.name}`](#{spec.name}) | {spec.title} | {changes} |")
    return "## Tools\n\n" + "\n".join(rows) + "\n"


def _profiles() -> str:
    """Each profile's tools (their parameters, and the agentfs tool whose policy entry rules
    each), then what its module says of it: where it differs from its ecosystem, and what it
    does where that ecosystem's documentation is silent."""
    parts = [
        "## Profiles\n\nThe same engine under another ecosystem's tool names, parameters and"
        ' result texts (docs/mcp.md, "Profiles", says which suits which client). Where that'
        " ecosystem's documentation is silent, agentfs's own tools' behaviour applies; each"
        " profile's notes below list those choices.\n"
    ]
    for name, where in catalog.PROFILES.items():
        if name == "agentfs":
            continue
        module = where.split(":")[0]
        rows = ["| tool | parameters | ruled by | changes the workspace |", "|---|---|---|---|"]
        for spec in catalog.profile(name).all_tools():
            fields = ", ".join(f"`{f}`" for f in json_schema(spec.input).get("properties", {}))
            changes = "yes" if spec.mutates else ""
            rows.append(
                f"| `{spec.name}` | {fields or '(none)'} | [`{spec.policy_name}`]"
                f"(#{spec.policy_name}) | {changes} |"
            )
        notes = inspect.getdoc(importlib.import_module(module)) or ""
        parts.append(
            f"### `{name}` (`{module}`)\n\n" + "\n".join(rows) + "\n\n" + _markdown(notes) + "\n"
        )
    return "\n".join(parts)


def _markdown(docstring: str) -> str:
    """A module docstring as Markdown: its literals, in double backquotes, as code spans."""
    return docstring.replace("``", "`")


def _errors(example: dict[str, Any]) -> str:
    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| `{code}` | {ERROR_MEANINGS[code]} |" for code in ERROR_CODES]
    name, args = ERROR_EXAMPLE
    return (
        "## Errors\n\nEvery failure is a result with a stable `code` and a `message` that says"
        " what to do next; some carry `details`.\n\n"
        + "\n".join(rows)
        + f"\n\nFor example, `{name}` with\n\n```json\n{_json(args)}\n```\n\nreturns\n\n"
        + f"```json\n{_json(example)}\n```\n"
    )


def _tool(spec: Tool, args: dict[str, Any], result: dict[str, Any]) -> str:
    flags = ["changes the workspace" if spec.mutates else "read-only"]
    if spec.destructive:
        flags.append("destructive")
    if spec.idempotent:
        flags.append("idempotent")
    if spec.aliases:
        flags.append("also called " + ", ".join(f"`{a}`" for a in spec.aliases))
    description = " ".join(spec.description.split())
    return (
        f"## {spec.name}\n\n**{spec.title}** ({'; '.join(flags)})\n\n{description}\n\n"
        f"Parameters:\n\n{_fields(json_schema(spec.input), inputs=True)}\n"
        f"Result:\n\n{_fields(json_schema(spec.output), inputs=False)}\n"
        f"Example:\n\n```json\n{_json(args)}\n```\n\n```json\n{_json(result)}\n```\n"
    )


def _fields(schema: dict[str, Any], *, inputs: bool) -> str:
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        return "(none)\n"
    required = set(schema.get("required", []))
    head = "| name | type | default | description |" if inputs else "| name | type | description |"
    rows = [head, "|---|---|---|---|" if inputs else "|---|---|---|"]
    for name, prop in properties.items():
        kind = _type(prop)
        text = prop.get("description", "").replace("|", "\\|")
        if inputs:
            default = "required" if name in required else f"`{json.dumps(prop.get('default'))}`"
            rows.append(f"| `{name}` | {kind} | {default} | {text} |")
        else:
            rows.append(f"| `{name}` | {kind} | {text} |")
    return "\n".join(rows) + "\n"


def _type(prop: dict[str, Any]) -> str:
    if "anyOf" in prop:
        return " or ".join(_type(p) for p in prop["anyOf"])
    if "enum" in prop:
        return " \\| ".join(f'`"{v}"`' for v in prop["enum"])
    kind = prop.get("type", "any")
    if isinstance(kind, list):  # an optional value: ["integer", "null"]
        return " or ".join(_type({**prop, "type": one}) for one in kind)
    if kind == "array":
        return f"array of {_type(prop.get('items', {}))}"
    return str(kind)


def shown(value: Any, key: str | None = None) -> Any:
    """``value`` with times fixed and long strings cut (see the module docstring)."""
    if isinstance(value, dict):
        return {k: shown(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v) for v in value]
    if key in _TIME_FIELDS and isinstance(value, str):
        return FIXED_TIME
    if key in _EPOCH_FIELDS and isinstance(value, int | float):
        return FIXED_EPOCH
    if key == "duration_ms" and isinstance(value, int):
        return FIXED_DURATION_MS
    if isinstance(value, str) and len(value) > _SHOWN_CHARS:
        return value[:_SHOWN_CHARS] + "…"
    return value


def _json(value: Any) -> str:
    return json.dumps(shown(value), indent=2, ensure_ascii=False)
