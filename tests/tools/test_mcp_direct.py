"""Tool calls answered at the transport (``agentfs.tools.mcp_direct``) against the SDK's own
pipeline: the same answers to every tool, error and malformed request, on every protocol
version, and the SDK still handles what the direct path must not (approval, old versions)."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

import agentfs
from agentfs.tools import reference
from agentfs.tools.mcp_direct import DIRECT_VERSIONS, DirectCalls
from agentfs.tools.mcp_server import McpServer
from agentfs.tools.policy import Policy
from agentfs.tools.toolset import Toolset

#: Runs ``agentfs serve mcp ARGS`` with the SDK's tools/call handler reporting each call
#: it is handed on stderr: what the direct path answered never shows there.
SERVER = """
import sys
from agentfs.tools import mcp_server
handler = mcp_server.McpServer._call_tool
async def reported(self, ctx, params):
    print("sdk tools/call", params.name, file=sys.stderr, flush=True)
    return await handler(self, ctx, params)
mcp_server.McpServer._call_tool = reported
from agentfs.cli import main
sys.argv = ["agentfs", "serve", "mcp", *sys.argv[1:]]
main()
"""

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


class RawClient:
    """JSON-RPC lines over the server's pipes, nothing in between: what each path writes."""

    def __init__(self, ws: Path, version: str, *, direct: bool, args: tuple[str, ...] = ()):
        env = {**os.environ, "AGENTFS_MCP_DIRECT": "1" if direct else "0"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(ws), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        init = self.request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert init["result"]["protocolVersion"] == version
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        self.proc.stdin.flush()

    def request(self, id: Any, method: str, params: Any) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        return self.answer(id)

    def answer(self, id: Any) -> dict[str, Any]:
        while True:
            message = json.loads(self.lines.get(timeout=60))
            if message.get("id") == id and "method" not in message:
                return message

    def close(self) -> list[str]:
        """Stop the server; the tools the SDK's handler was handed, in order."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        err = self.proc.stderr.read()
        assert self.proc.returncode == 0, err
        return [line.split()[-1] for line in err.splitlines() if line.startswith("sdk tools/call")]


def comparable(message: dict[str, Any]) -> Any:
    """A response with its times fixed, so two workspaces' answers compare."""
    result = message.get("result")
    if isinstance(result, dict):
        result = reference.shown(result)
        for block in result.get("content", []):
            if block.get("type") == "text":
                block["text"] = ISO_TIME.sub("T", block["text"])
    return {**message, "result": result} if "result" in message else message


def demo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    with agentfs.Workspace(path, actor="docs", thread="main") as ws:
        reference.build_demo(ws)
    return path


ENVELOPE = "io.modelcontextprotocol/protocolVersion"

#: Requests beyond the examples: each is answered (or refused) the same on both paths.
ODD_CALLS: list[tuple[Any, dict[str, Any]]] = [
    ("str-id", {"name": "read_file", "arguments": {"path": "/src/app.py"}}),
    (101, {"name": "no_such_tool", "arguments": {}}),
    (102, {"name": "read_file", "arguments": {"path": 7}}),
    (103, {"name": "read_file", "arguments": {"path": "/../../etc/passwd"}}),
    (104, {"arguments": {"path": "/src/app.py"}}),  # no name: the SDK's invalid params
    (105, {"name": "read_file"}),  # no arguments at all
    (106, {"name": "stat", "arguments": {"path": "/src/app.py"}, "_meta": {"progressToken": 1}}),
    (
        107,
        {"name": "write_file", "arguments": {"path": "/u.txt", "content": "é ✓ \x00 \U0001f600"}},
    ),
    (108, {"name": "read_file", "arguments": {"path": "/u.txt"}}),
    (109, {"name": "write_file", "arguments": {"path": "/big.txt", "content": "x" * 300_000}}),
    (110, {"name": "list_files", "arguments": {"path": "/"}}),  # an alias
    (111, {"name": "stat", "arguments": {"path": "/src"}, "_meta": {ENVELOPE: "2026-07-28"}}),
]


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
def test_direct_and_sdk_paths_answer_alike(tmp_path: Path, version: str) -> None:
    """Every tool's example, the failing example and odd requests, on two identical
    workspaces, one server answering directly and one through the SDK only: the same
    responses, message by message; the direct one handed the SDK no call of a version it
    answers itself."""
    answers: dict[bool, list[Any]] = {}
    handed: dict[bool, list[str]] = {}
    for direct in (True, False):
        client = RawClient(demo(tmp_path, f"{direct}.db"), version, direct=direct)
        got = []
        calls = [*reference.EXAMPLES.items(), reference.ERROR_EXAMPLE]
        for n, (name, args) in enumerate(calls, start=1):
            got.append(client.request(n, "tools/call", {"name": name, "arguments": args}))
        for id, params in ODD_CALLS:
            got.append(client.request(id, "tools/call", params))
        client.send('{"jsonrpc": "2.0", "id": 200, "method": "tools/call", "params": ')  # torn
        # a lone surrogate: JSON the SDK's parser refuses (no answer), never run here
        client.send(
            '{"jsonrpc": "2.0", "id": 202, "method": "tools/call", "params": {"name":'
            ' "write_file", "arguments": {"path": "/\\ud800", "content": "x"}}}'
        )
        got.append(client.request(201, "tools/list", {}))
        answers[direct] = [comparable(message) for message in got]
        handed[direct] = client.close()
    for direct_answer, sdk_answer in zip(answers[True], answers[False], strict=True):
        assert direct_answer == sdk_answer
    examples = len(reference.EXAMPLES) + 1
    # the SDK's path sees every call but the torn one; execute_command needs approval by
    # default, which only the SDK can ask for
    # all but the one with no name and the 2026 envelope (refused before any handler)
    assert len(handed[False]) == examples + len(ODD_CALLS) - 2
    if version in DIRECT_VERSIONS:
        assert handed[True] == ["execute_command"]
    else:
        assert handed[True] == handed[False]


def test_a_call_to_approve_goes_to_the_sdk(tmp_path: Path) -> None:
    """A tool whose policy needs approval is asked about through the SDK (elicitation),
    never run at the transport; the others still are."""
    policy = tmp_path / "policy.toml"
    policy.write_text("[tools.write_file]\nneeds_approval = true\n")
    client = RawClient(
        demo(tmp_path, "ws.db"), "2025-11-25", direct=True, args=("--policy", str(policy))
    )
    denied = client.request(
        1, "tools/call", {"name": "write_file", "arguments": {"path": "/a", "content": "b"}}
    )
    read = client.request(
        2, "tools/call", {"name": "read_file", "arguments": {"path": "/src/app.py"}}
    )
    assert denied["result"]["isError"] and "approval" in denied["result"]["content"][0]["text"]
    assert "structuredContent" in read["result"]
    assert client.close() == ["write_file"]


# --- DirectCalls on its own -------------------------------------------------------------------


def _initialized(version: str) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": version,
                "capabilities": {},
                "serverInfo": {"name": "agentfs", "version": "0"},
            },
        }
    )


@pytest.fixture
def direct(tmp_path: Path) -> DirectCalls:
    ws = agentfs.open(tmp_path / "ws.db")
    ws.write("/a.txt", "one\n")
    server = McpServer(
        Toolset(ws, policy=Policy.model_validate({"tools": {"kv_set": {"needs_approval": True}}}))
    )
    return DirectCalls(server.answer_directly)


CALL = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "/a.txt"}},
    }
)


def test_nothing_is_answered_before_the_handshake(direct: DirectCalls) -> None:
    assert direct.take(CALL) is None
    direct.outgoing(
        '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\\"protocolVersion\\""}]}}'
    )
    assert direct.take(CALL) is None  # a tool's output that mentions the word is not it


@pytest.mark.parametrize("version", sorted(DIRECT_VERSIONS))
def test_a_call_is_answered_with_a_valid_response(direct: DirectCalls, version: str) -> None:
    direct.outgoing(_initialized(version))
    line = direct.take(CALL)
    assert line is not None and line.endswith("\n") and line.count("\n") == 1
    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    assert isinstance(message, types.JSONRPCResponse) and message.id == 5
    result = types.CallToolResult.model_validate(message.result)
    assert result.structured_content is not None
    assert result.structured_content["content"] == "     1\tone"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2026-07-28", "unknown"])
def test_other_protocol_versions_stay_with_the_sdk(direct: DirectCalls, version: str) -> None:
    direct.outgoing(_initialized(version))
    assert direct.take(CALL) is None


@pytest.mark.parametrize(
    "line",
    [
        "{not json",
        "[" + CALL + "]",  # a batch
        CALL.replace('"id": 5', '"id": true'),
        CALL.replace('"id": 5', '"id": null'),
        CALL.replace('"id": 5, ', ""),  # a notification
        CALL.replace('"2.0"', '"1.0"'),
        CALL.replace('"tools/call"', '"tools/list"'),
        CALL.replace('"name": "read_file"', '"name": 3'),
        CALL.replace('{"path": "/a.txt"}', '"a string"'),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "kv_set", "arguments": {"key": "k", "value": "v"}},
            }
        ),
    ],
)
def test_anything_in_doubt_goes_to_the_sdk(direct: DirectCalls, line: str) -> None:
    direct.outgoing(_initialized("2025-11-25"))
    assert direct.take(line) is None


def test_a_failure_while_answering_is_the_sdk_s_error_reply() -> None:
    """The tool has run by then, so the line cannot go to the SDK any more: it is answered
    as the SDK's dispatcher answers a handler that raised (code 0, the message)."""

    def broken(params: types.CallToolRequestParams) -> types.CallToolResult | None:
        raise OSError(16, "another writer held the workspace")

    direct = DirectCalls(broken)
    direct.outgoing(_initialized("2025-11-25"))
    line = direct.take(CALL)
    assert line is not None
    message = json.loads(line)
    assert message["id"] == 5 and message["error"]["code"] == 0
    assert "another writer held the workspace" in message["error"]["message"]


def test_a_lone_surrogate_is_refused_as_the_sdk_refuses_it(direct: DirectCalls) -> None:
    direct.outgoing(_initialized("2025-11-25"))
    assert direct.take(CALL.replace("/a.txt", "/\\ud800")) is None
