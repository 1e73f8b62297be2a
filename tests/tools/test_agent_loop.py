"""examples/agent_loop.py driven by a scripted model: the tools' schemas go out, tool results
(errors included) come back as tool messages, and the turn can be rewound."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import agentfs
from agentfs.tools import Toolset

ROOT = Path(__file__).resolve().parents[2]


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop", ROOT / "examples" / "agent_loop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


def call(n: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def reply(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


class ScriptedModel:
    """A model that follows a script, checking at each step that it was shown what a real
    model would need to take that step."""

    def __init__(self) -> None:
        self.seen_tools: list[str] = []
        self.step = 0

    def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self.seen_tools = [t["function"]["name"] for t in tools]
        self.step += 1
        last = messages[-1]
        if self.step == 1:
            assert last == {"role": "user", "content": "make greet polite"}
            assert "<workspace_skills>" in messages[0]["content"]
            return reply(call(1, "read_file", path="src/app.py"))
        if self.step == 2:
            assert last["role"] == "tool" and last["tool_call_id"] == "call_1"
            assert "     2\t    return 'hi ' + name" in last["content"]
            return reply(
                call(2, "edit_file", path="/src/app.py", old_string="return 'hi'", new_string="x")
            )
        if self.step == 3:
            assert last["content"].startswith("Error [no_match]")  # the model sees its mistake
            assert "return 'hi ' + name" in last["content"]  # and the closest lines
            fix = call(
                3,
                "edit_file",
                path="/src/app.py",
                old_string="return 'hi ' + name",
                new_string="return 'Good day, ' + name",
            )
            return reply(fix, call(4, "grep", pattern="Good day", output_mode="content"))
        assert [m["tool_call_id"] for m in messages[-2:]] == ["call_3", "call_4"]
        assert "/src/app.py:2:" in messages[-1]["content"]
        return {"role": "assistant", "content": "greet now says Good day."}


def test_the_loop_runs_tools_and_the_turn_can_be_rewound(ws: agentfs.Workspace) -> None:
    example = load_example()
    ws.write("/src/app.py", "def greet(name):\n    return 'hi ' + name\n", parents=True)
    ws.write(
        "/skills/style/SKILL.md",
        "---\nname: style\ndescription: House style for messages.\n---\nBe polite.\n",
        parents=True,
    )
    toolset = Toolset(ws, thread="t1", actor="agent")
    model = ScriptedModel()
    turn = example.run_turn(toolset, model, "make greet polite")
    assert turn.answer == "greet now says Good day."
    assert (turn.tool_calls, turn.errors) == (4, ["no_match"])
    assert "apply_patch" in model.seen_tools and "read_file" in model.seen_tools
    assert ws.read("/src/app.py") == b"def greet(name):\n    return 'Good day, ' + name\n"
    writer = ws.tool_calls.writer("/src/app.py", ws.version("/src/app.py").n)
    assert writer is not None and writer.name == "edit_file"
    assert len(ws.tool_calls.list()) == 4
    ws.snapshots.restore(turn.snapshot)  # rewind the whole turn
    assert ws.read("/src/app.py") == b"def greet(name):\n    return 'hi ' + name\n"


def test_the_loop_stops_after_max_steps(ws: agentfs.Workspace) -> None:
    example = load_example()

    def looping(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return reply(call(len(messages), "ls", path="/"))

    turn = example.run_turn(Toolset(ws), looping, "list forever", max_steps=3)
    assert turn.tool_calls == 3 and turn.answer == "(stopped after 3 model calls)"


def _example(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    command = [sys.executable, str(ROOT / "examples" / "agent_loop.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_the_example_runs_offline_with_its_scripted_model(tmp_path: Path) -> None:
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/src/app.py", "print(1)\n", parents=True)
    done = _example(str(db), "survey the workspace", "--scripted")
    assert done.returncode == 0, done.stderr
    assert "3 tool calls; to undo them all: agentfs snapshot restore" in done.stdout
    with agentfs.open(db) as ws:
        assert "app.py" in ws.read_text("/NOTES.md")
        assert [c.name for c in ws.tool_calls.list()] == ["read_file", "write_file", "list_tree"]
        ws.snapshots.restore(ws.snapshots.list()[-1].name)
        assert not ws.exists("/NOTES.md")


def test_the_example_without_a_model_says_how_to_get_one(tmp_path: Path) -> None:
    done = _example(str(tmp_path / "ws.db"), "anything")
    assert done.returncode == 2 and "--scripted" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "ws.db").exists()
