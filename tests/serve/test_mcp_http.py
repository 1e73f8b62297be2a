"""``agentfs serve mcp --http``: the tools over MCP's Streamable HTTP transport, driven by the
``mcp`` SDK's own HTTP client and by the MCP Inspector's CLI, and tried as an attacker would:
without a token, with a wrong one, from a page rebinding its name to 127.0.0.1, as a client
naming another client's thread."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import agentfs
from tests.clirun import AGENTFS
from tests.serving import server_process

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".npm" / "node_modules" / ".bin" / "mcp-inspector"
TOKEN = "t0ken-for-the-tests-0123456789"
#: An MCP client's first message, as a raw request.
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@dataclass
class Served:
    url: str
    stderr: str
    ws: Path


@contextmanager
def serving(ws: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``agentfs serve mcp ws --http 127.0.0.1:0 args`` until the block ends."""
    command = [AGENTFS, "serve", "mcp", ws, "--http", "127.0.0.1:0", *args]
    with server_process(command, "serving MCP at ", {"AGENTFS_TOKEN": TOKEN, **(env or {})}) as (
        line,
        printed,
    ):
        yield Served(line.split()[-1], printed, ws)


async def _session_calls(
    url: str, headers: dict[str, str], calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[str], list[tuple[bool, Any]]]:
    with anyio.fail_after(60):  # a hung server fails the test instead of hanging it
        return await _calls(url, headers, calls)


async def _calls(
    url: str, headers: dict[str, str], calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[str], list[tuple[bool, Any]]]:
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = [tool.name for tool in (await session.list_tools()).tools]
        results = []
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            results.append((result.is_error, result.structured_content or result.content[0].text))  # type: ignore[union-attr]
        return listed, results


def session(
    url: str,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    token: str = TOKEN,
    thread: str | None = None,
) -> tuple[list[str], list[tuple[bool, Any]]]:
    """One client session: the tools it is offered and each call's (is_error, answer)."""
    headers = {"Authorization": f"Bearer {token}"}
    if thread is not None:
        headers["Agentfs-Thread"] = thread
    return anyio.run(_session_calls, url, headers, calls)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as workspace:
        workspace.write("/notes.md", "# notes\n")
    return path


def threads_of(ws: Path, path: str) -> list[tuple[str | None, str | None]]:
    with agentfs.open(ws) as workspace:
        return [(v.thread, v.actor) for v in workspace.history(path)]


def test_a_client_with_the_token_works_and_each_session_has_its_own_thread(ws: Path) -> None:
    with serving(ws) as served:
        listed, results = session(
            served.url,
            [
                ("write_file", {"path": "/a.txt", "content": "a\n"}),
                ("read_file", {"path": "/a.txt"}),
            ],
        )
        assert "write_file" in listed and "grep" in listed
        assert [error for error, _ in results] == [False, False]
        session(served.url, [("write_file", {"path": "/b.txt", "content": "b\n"})])
        session(served.url, [("write_file", {"path": "/c.txt", "content": "c\n"})], thread="named")
    (a,), (b,), (c,) = (threads_of(ws, p) for p in ("/a.txt", "/b.txt", "/c.txt"))
    assert a[0] is not None and a[0].startswith("http-") and b[0].startswith("http-")  # type: ignore[union-attr]
    assert a[0] != b[0] and c[0] == "named"
    with agentfs.open(ws) as workspace:  # the log keeps each call's thread, reads too
        (read,) = [call for call in workspace.tool_calls.list() if call.name == "read_file"]
    assert read.thread == a[0]


def test_the_servers_thread_is_every_unbound_sessions(ws: Path) -> None:
    with serving(ws, "--thread", "shared", "--actor", "server") as served:
        session(served.url, [("write_file", {"path": "/a.txt", "content": "a\n"})])
    assert threads_of(ws, "/a.txt") == [("shared", "server")]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token-0123456789abcd"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": f"Bearer {TOKEN[:-1]}"},
        {"Authorization": "Bearer"},
    ],
)
def test_no_request_passes_without_the_token(ws: Path, headers: dict[str, str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with serving(ws) as served:
        answer = httpx2.post(served.url, json=body, headers=headers)
    assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith("Bearer")


def test_a_rebound_name_or_another_origin_is_refused(ws: Path) -> None:
    """A page whose name resolves to 127.0.0.1 sends its own name as Host, and a browser
    sends its Origin: neither reaches the workspace, token or not."""
    auth = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"}
    with serving(ws) as served:
        port = served.url.split(":")[2].split("/")[0]
        rebound = httpx2.post(
            served.url, json=INIT, headers={**auth, "Host": f"evil.example:{port}"}
        )
        origin = httpx2.post(
            served.url, json=INIT, headers={**auth, "Origin": "http://evil.example"}
        )
        fine = httpx2.post(served.url, json=INIT, headers={**auth, "Host": f"localhost:{port}"})
    assert rebound.status_code == 421 and origin.status_code == 403
    assert fine.status_code == 200


def messages(exc: BaseException) -> str:
    """Every message in ``exc`` and the exceptions grouped in it."""
    if isinstance(exc, BaseExceptionGroup):
        return " ".join(messages(inner) for inner in exc.exceptions)
    return str(exc)


def write_token_file(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_token_file_binds_thread_actor_and_policy(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "readonly.toml").write_text("read_only = true\n")
    clients = write_token_file(
        tmp_path / "clients.toml",
        '[[client]]\nname = "writer"\ntoken = "writer-token-0123456789"\nthread = "work"\n'
        'actor = "writer-bot"\n\n'
        '[[client]]\nname = "reviewer"\ntoken = "reviewer-token-0123456789"\n'
        'policy = "readonly.toml"\n',
    )
    with serving(ws, "--token-file", str(clients), "--thread", "default") as served:
        # the bound thread wins over the header and over --thread
        session(
            served.url,
            [("write_file", {"path": "/w.txt", "content": "w\n"})],
            token="writer-token-0123456789",
            thread="other",
        )
        listed, results = session(
            served.url,
            [
                ("write_file", {"path": "/r.txt", "content": "r\n"}),
                ("read_file", {"path": "/w.txt"}),
            ],
            token="reviewer-token-0123456789",
        )
        assert "write_file" not in listed and "read_file" in listed
        assert results[0][0] and not results[1][0]
        with pytest.raises(BaseException) as refused:  # the writer's thread: bound to its token
            session(served.url, [], token="reviewer-token-0123456789", thread="work")
        assert "bound to another client's token" in messages(refused.value)
        env_token = httpx2.post(served.url, json={}, headers={"Authorization": f"Bearer {TOKEN}"})
        assert env_token.status_code == 401  # a token file replaces AGENTFS_TOKEN
    assert threads_of(ws, "/w.txt") == [("work", "writer-bot")]
    with agentfs.open(ws) as workspace:
        assert not workspace.exists("/r.txt")


def test_a_token_file_others_can_read_is_refused(ws: Path, tmp_path: Path) -> None:
    loose = write_token_file(tmp_path / "token", "loose-token-0123456789\n", 0o644)
    done = subprocess.run(
        [AGENTFS, "serve", "mcp", ws, "--http", "127.0.0.1:0", "--token-file", loose],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "chmod 600" in done.stderr


def test_a_short_token_and_a_public_address_without_one_are_refused(ws: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AGENTFS_TOKEN"}
    public = subprocess.run(
        [AGENTFS, "serve", "mcp", ws, "--http", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert public.returncode != 0 and "needs a token" in public.stderr
    short = subprocess.run(
        [AGENTFS, "serve", "mcp", ws, "--http", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "AGENTFS_TOKEN": "short"},
    )
    assert short.returncode != 0 and "shorter than" in short.stderr


def test_on_loopback_without_a_token_one_is_made_in_a_private_file(
    ws: Path, tmp_path: Path
) -> None:
    env = {"AGENTFS_TOKEN": "", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    with serving(ws, env=env) as served:
        where = Path(served.stderr.split("token: in ")[1].split()[0])
        token = where.read_text().strip()
        assert where.stat().st_mode & 0o777 == 0o600
        assert where.parent.stat().st_mode & 0o777 == 0o700
        _listed, results = session(served.url, [("read_file", {"path": "/notes.md"})], token=token)
        assert not results[0][0]
    with serving(ws, env=env) as again:  # the same token the next time
        assert again.stderr.split("token: in ")[1].split()[0] == str(where)


def inspector(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The MCP Inspector's CLI over HTTP at ``url``."""
    return subprocess.run(
        [INSPECTOR, "--cli", url, "--transport", "http", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_the_inspector_cli_lists_and_calls_over_http(ws: Path) -> None:
    if not INSPECTOR.exists():
        pytest.fail(f"{INSPECTOR} is missing: run `make test` (it installs it from npm)")
    header = ["--header", f"Authorization: Bearer {TOKEN}"]
    with serving(ws) as served:
        listed = inspector(served.url, *header, "--method", "tools/list")
        assert listed.returncode == 0, listed.stderr
        assert "read_file" in {t["name"] for t in json.loads(listed.stdout)["tools"]}
        called = inspector(
            served.url,
            *header,
            *("--method", "tools/call", "--tool-name", "read_file"),
            *("--tool-arg", "path=/notes.md"),
        )
        assert called.returncode == 0, called.stderr
        assert "# notes" in called.stdout
        assert inspector(served.url, "--method", "tools/list").returncode != 0  # no token


async def _agents_sdk(url: str, token: str) -> tuple[list[Any], Any]:
    from agents.mcp import MCPServerStreamableHttp

    params = {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    async with MCPServerStreamableHttp(
        params=params,  # type: ignore[arg-type]
        name="agentfs",
        client_session_timeout_seconds=60,
    ) as server:
        tools = await server.list_tools()
        return tools, await server.call_tool("read_file", {"path": "/notes.md"})


def test_the_openai_agents_sdks_http_client_works_as_docs_mcp_shows(ws: Path) -> None:
    with serving(ws) as served:
        tools, read = anyio.run(_agents_sdk, served.url, TOKEN)
        assert "read_file" in {t.name for t in tools}
        assert not read.is_error and "# notes" in read.content[0].text
        with pytest.raises(BaseException) as refused:
            anyio.run(_agents_sdk, served.url, "not-the-token-0123456789")
        assert "error response" in messages(refused.value)  # the SDK's words for the 401


async def _approval(url: str, approve: bool) -> tuple[bool, str]:
    async def elicit(_context: Any, _params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"approve": approve})

    headers = {"Authorization": f"Bearer {TOKEN}"}
    with anyio.fail_after(60):
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as client,
        ):
            await client.initialize()
            result = await client.call_tool("write_file", {"path": "/ok.txt", "content": "x\n"})
            return bool(result.is_error), result.content[0].text  # type: ignore[union-attr]


def test_a_call_that_needs_approval_asks_the_client_over_http(ws: Path, tmp_path: Path) -> None:
    """Plain calls are answered at the front of the server; one the policy puts to the user
    goes through the SDK, which asks the client (an elicitation on the call's stream)."""
    policy = tmp_path / "policy.toml"
    policy.write_text("[tools.write_file]\nneeds_approval = true\n")
    with serving(ws, "--policy", str(policy)) as served:
        declined = anyio.run(_approval, served.url, False)
        assert declined[0] and "approv" in declined[1]
        with agentfs.open(ws, readonly=True) as workspace:
            assert not workspace.exists("/ok.txt")
        assert anyio.run(_approval, served.url, True)[0] is False
    with agentfs.open(ws) as workspace:
        assert workspace.read("/ok.txt") == b"x\n"


def test_a_session_id_with_another_token_gets_that_tokens_rights(ws: Path, tmp_path: Path) -> None:
    """A session id is no credential: presented with another client's token, the calls are
    that client's, with its own policy."""
    (tmp_path / "readonly.toml").write_text("read_only = true\n")
    clients = write_token_file(
        tmp_path / "clients.toml",
        '[[client]]\ntoken = "writer-token-0123456789"\n\n'
        '[[client]]\ntoken = "reader-token-0123456789"\npolicy = "readonly.toml"\n',
    )
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "write_file", "arguments": {"path": "/x.txt", "content": "x\n"}},
    }
    accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    with serving(ws, "--token-file", str(clients)) as served:
        writer = {**accept, "Authorization": "Bearer writer-token-0123456789"}
        opened = httpx2.post(served.url, json=INIT, headers=writer)
        session_id = opened.headers["mcp-session-id"]
        reader = {**accept, "Authorization": "Bearer reader-token-0123456789"}
        taken = httpx2.post(served.url, json=call, headers={**reader, "mcp-session-id": session_id})
        assert taken.status_code == 200 and "read_only" in taken.text
    with agentfs.open(ws) as workspace:
        assert not workspace.exists("/x.txt")


def test_a_session_unused_for_the_idle_time_is_forgotten_and_its_rows_written(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.datastructures import Headers

    from agentfs.serve import mcp_http
    from agentfs.serve.clients import Client, Clients
    from agentfs.tools.policy import Policy
    from agentfs.tools.toolset import Toolset

    now = [1000.0]
    monkeypatch.setattr(mcp_http.time, "monotonic", lambda: now[0])
    client = Client("client", TOKEN)
    with agentfs.open(ws) as workspace:
        sessions = mcp_http.SessionToolsets(
            lambda thread, actor, policy: Toolset(workspace, thread=thread, policy=policy),
            mcp_http.Defaults(None, None, Policy()),
            Clients([client]),
        )
        sessions.opened(client, "aaaaaaaa1")
        first = sessions.session(client, "aaaaaaaa1", Headers())
        first.call("read_file", {"path": "/notes.md"})  # a read-only call: its row waits
        assert workspace.tool_calls.list() == []
        assert sessions.is_open(client, "aaaaaaaa1")
        now[0] += mcp_http.SESSION_IDLE + 1
        assert not sessions.is_open(client, "aaaaaaaa1")
        sessions.opened(client, "bbbbbbbb2")
        sessions.session(client, "bbbbbbbb2", Headers())  # a new session: the idle one goes
        assert sessions.all() == [sessions.session(client, "bbbbbbbb2", Headers())]
        assert [c.name for c in workspace.tool_calls.list()] == ["read_file"]
