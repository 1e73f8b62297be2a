"""The agent tools over MCP: agentfs's server against the official MCP filesystem server.

Both servers run as stdio subprocesses driven by the ``mcp`` SDK's own client, on the same
files: a workspace, and that workspace exported to a host directory for the peer
(``@modelcontextprotocol/server-filesystem`` from npm, installed by ``make``). Side by side
in one run, per operation, the median round trip of a call (calls/s = 1 / median):

  * read a 10 KiB file           (read_file       vs read_text_file)
  * write a 1 KiB file           (write_file      vs write_file)
  * edit one line of that file   (edit_file       vs edit_file)
  * list a directory of 500      (ls              vs list_directory)
  * find names in 10,000 files   (search_files    vs search_files), same glob, same answer
  * grep over the 10,000 files   (grep; the peer has no grep): p50 and p95

Each server is measured twice: with the Python SDK client as it is, which checks every
structured result against the tool's output schema with ``jsonschema`` (pure Python, about
40 us per object of a listing: our tools declare full output schemas, the peer's are one
string), and with that client-side check off, which isolates the servers (TypeScript clients
such as Claude Code check with ajv's compiled validators, at a negligible cost).

Then, in-process, what ``Toolset.call`` adds over the bare API calls that produce the same
answer (validation, policy, the audit row, the JSON result), in microseconds per call.

    .venv/bin/python benchmarks/tools.py [--files 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import agentfs
from agentfs.tools.toolset import Toolset
from agentfs.transfer import export_tree

ROOT = Path(__file__).resolve().parent.parent
AGENTFS = ROOT / ".venv" / "bin" / "agentfs"
PEER = ROOT / ".npm" / "node_modules" / ".bin" / "mcp-server-filesystem"
DIRS = 100
LISTED = 500
#: Calls per round for each operation; the slow name search gets fewer.
CALLS = {"read": 200, "write": 200, "edit": 200, "list": 100, "glob": 10, "grep": 20}
OVERHEAD_CALLS = 5000


def build(ws: agentfs.Workspace, files: int) -> None:
    """The benchmark tree: a 10 KiB text, a directory of 500 files, and ``files`` small
    Python-looking files over 100 directories (one in 100 holds the word ``needle``)."""
    line = "the quick brown fox jumps over the lazy dog 0123456789\n"
    with ws.transaction():
        ws.write("/bench/read.txt", (line * (10240 // len(line) + 1))[:10240], parents=True)
        ws.write("/bench/edit.txt", "alpha = 1\nbeta = 2\ngamma = 3\n")
        ws.mkdir("/bench/out")  # where the write test writes (the peer makes no parents)
        for i in range(LISTED):
            ws.write(f"/bench/list/entry_{i:04d}.txt", f"entry {i}\n", parents=True)
        for i in range(files):
            body = f"import os\n\n\ndef f_{i}():\n    return {i}\n"
            if i % 100 == 7:
                body += "# needle\n"
            ws.write(f"/tree/d{i % DIRS:03d}/mod_{i:05d}.py", body, parents=True)


class UncheckedSession(ClientSession):
    """The SDK's client without its client-side output-schema check (see the docstring)."""

    async def validate_tool_result(self, name: str, result: Any) -> None:
        return None


class Server:
    """One MCP server subprocess and its client session; ``call`` returns the result."""

    def __init__(self, session: ClientSession, root: str) -> None:
        self.session = session
        self.root = root  # prefix of every path this server sees

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        result = await self.session.call_tool(tool, arguments)
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {result.content}")
        return result


async def timed(calls: int, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    out = []
    for i in range(calls):
        start = time.perf_counter()
        await call(i)
        out.append(time.perf_counter() - start)
    return out


def operations(server: Server, ours: bool) -> dict[str, Callable[[int], Awaitable[Any]]]:
    """Each benchmarked operation as one call of this server's tools."""
    r = server.root
    edits = [("alpha = 1", "alpha = 2"), ("alpha = 2", "alpha = 1")]
    payload = "x" * 1023 + "\n"

    async def read(i: int) -> Any:
        if ours:
            return await server.call("read_file", {"path": f"{r}/bench/read.txt"})
        return await server.call("read_text_file", {"path": f"{r}/bench/read.txt"})

    async def write(i: int) -> Any:
        path = f"{r}/bench/out/w{i % 20}.txt"
        if ours:
            return await server.call(
                "write_file", {"path": path, "content": f"{i}{payload}", "overwrite": True}
            )
        return await server.call("write_file", {"path": path, "content": f"{i}{payload}"})

    done = [0]  # edits made so far: the file alternates, whatever i the caller counts from

    async def reset(i: int) -> Any:  # the edited file as build() made it, for each run
        done[0] = 0
        content = "alpha = 1\nbeta = 2\ngamma = 3\n"
        args = {"path": f"{r}/bench/edit.txt", "content": content}
        return await server.call("write_file", {**args, "overwrite": True} if ours else args)

    async def edit(i: int) -> Any:
        old, new = edits[done[0] % 2]
        done[0] += 1
        path = f"{r}/bench/edit.txt"
        if ours:
            return await server.call(
                "edit_file", {"path": path, "old_string": old, "new_string": new}
            )
        return await server.call(
            "edit_file", {"path": path, "edits": [{"oldText": old, "newText": new}]}
        )

    async def listing(i: int) -> Any:
        tool = "ls" if ours else "list_directory"
        return await server.call(tool, {"path": f"{r}/bench/list"})

    async def glob(i: int) -> Any:
        return await server.call("search_files", {"path": f"{r}/tree", "pattern": "**/mod_*7.py"})

    async def grep(i: int) -> Any:
        return await server.call(
            "grep", {"pattern": "needle", "path": "/tree", "output_mode": "content"}
        )

    ops = {"reset": reset, "read": read, "write": write, "edit": edit, "list": listing}
    ops["glob"] = glob
    if ours:
        ops["grep"] = grep
    return ops


async def run_server(
    params: StdioServerParameters, root: str, ours: bool, rounds: int, checked: bool
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Every operation ``rounds`` times (one round = CALLS[op] calls); the per-call times
    of each round's median, and how many names the glob found (both servers must agree)."""
    medians: dict[str, list[float]] = {}
    found: dict[str, int] = {}
    client = ClientSession if checked else UncheckedSession
    async with stdio_client(params) as (read, write), client(read, write) as session:
        await session.initialize()
        server = Server(session, root)
        ops = operations(server, ours)
        await ops.pop("reset")(0)
        result = await ops["glob"](0)
        found["glob"] = len([x for x in str(result.content[0].text).split("\n") if "mod_" in x])
        for name, op in ops.items():
            await timed(3, op)  # warm-up: caches, the server's first import of a module
            medians[name] = [statistics.median(await timed(CALLS[name], op)) for _ in range(rounds)]
            if name == "grep":
                medians["grep_p95"] = [
                    sorted(await timed(CALLS[name], op))[int(CALLS[name] * 0.95) - 1]
                ]
    return medians, found


def overhead(ws: agentfs.Workspace) -> list[tuple[str, float, float]]:
    """(tool, µs per Toolset.call, µs per the bare API calls that give the same answer)."""
    tools = Toolset(ws, thread="bench")
    ws.thread = "bench"  # the bare read is a tracked read too, as the tool's is
    cases: list[tuple[str, dict[str, Any], Callable[[], Any]]] = [
        (
            "stat",
            {"path": "/bench/read.txt"},
            lambda: (ws.lstat("/bench/read.txt"), ws.version("/bench/read.txt")),
        ),
        (
            "read_file",
            {"path": "/bench/edit.txt"},
            lambda: (ws.stat("/bench/edit.txt"), ws.read("/bench/edit.txt")),
        ),
        (
            "write_file",
            {"path": "/bench/o.txt", "content": "y" * 1024, "overwrite": True},
            lambda: ws.write("/bench/o.txt", "y" * 1024),
        ),
    ]
    out = []
    for name, args, bare in cases:
        tool_times, bare_times = [], []
        for _ in range(5):  # interleaved runs: drift hits both sides alike
            start = time.perf_counter()
            for _ in range(OVERHEAD_CALLS // 5):
                tools.call(name, args)
            tool_times.append((time.perf_counter() - start) / (OVERHEAD_CALLS // 5))
            start = time.perf_counter()
            for _ in range(OVERHEAD_CALLS // 5):
                bare()
            bare_times.append((time.perf_counter() - start) / (OVERHEAD_CALLS // 5))
        out.append((name, statistics.median(tool_times) * 1e6, statistics.median(bare_times) * 1e6))
    tools.flush()
    ws.thread = None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not PEER.exists():
        sys.exit(f"{PEER} is missing: run `make test` or `make bench` (it installs it from npm)")
    tmp = Path(tempfile.mkdtemp(prefix="agentfs-tools-bench-"))
    try:
        ws_path, host = tmp / "ws.db", tmp / "host"
        with agentfs.open(ws_path) as ws:
            build(ws, args.files)
            export_tree(ws, "/", host)
            micro = overhead(ws)
        ours = StdioServerParameters(
            command=str(AGENTFS), args=["serve", "mcp", str(ws_path), "--thread", "bench"]
        )
        peer = StdioServerParameters(command=str(PEER), args=[str(host)])
        for checked in (True, False):
            mine, mine_found = anyio.run(run_server, ours, "", True, args.rounds, checked)
            theirs, theirs_found = anyio.run(
                run_server, peer, str(host), False, args.rounds, checked
            )
            report(mine, theirs, mine_found, theirs_found, checked, args)
        report_overhead(micro)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(
    mine: dict[str, list[float]],
    theirs: dict[str, list[float]],
    mine_found: dict[str, int],
    theirs_found: dict[str, int],
    checked: bool,
    args: argparse.Namespace,
) -> None:
    labels = {
        "read": "read a 10 KiB file",
        "write": "write a 1 KiB file",
        "edit": "edit one line",
        "list": f"list a directory of {LISTED}",
        "glob": f"find names in {args.files:,} files",
    }
    client = "the SDK client as is" if checked else "the client-side schema check off"
    print(
        f"MCP round trips over stdio, {client}, median of {args.rounds} rounds"
        " (calls/s = 1/median)\n"
    )
    print("| operation | agentfs calls/s | MCP filesystem server calls/s | ratio | target |")
    print("|---|---:|---:|---:|---|")
    for op, label in labels.items():
        a = 1 / statistics.median(mine[op])
        b = 1 / statistics.median(theirs[op])
        verdict = "ok" if a >= b else "MISS"
        print(f"| {label} | {a:,.0f} | {b:,.0f} | {a / b:.2f}x | >= 1x {verdict} |")
    p50 = statistics.median(mine["grep"]) * 1000
    p95 = mine["grep_p95"][0] * 1000
    verdict = "ok" if p50 <= 100 else "MISS"
    print(
        f"| grep over {args.files:,} files, p50 / p95 | {p50:.1f} / {p95:.1f} ms | (none) |"
        f" | p50 <= 100 ms {verdict} |"
    )
    same = mine_found["glob"] == theirs_found["glob"]
    print(
        f"\nnames found by the glob: agentfs {mine_found['glob']}, peer {theirs_found['glob']}"
        f" ({'the same' if same else 'DIFFERENT'})\n"
    )


def report_overhead(micro: list[tuple[str, float, float]]) -> None:
    print("Toolset.call over the bare API calls, in-process (µs per call, median of 5 runs)\n")
    print("| tool | Toolset.call | bare API | overhead | target |")
    print("|---|---:|---:|---:|---|")
    for name, tool_us, bare_us in micro:
        extra = tool_us - bare_us
        verdict = "ok" if extra <= 50 else "MISS"
        print(f"| {name} | {tool_us:.1f} | {bare_us:.1f} | {extra:.1f} | <= 50 {verdict} |")


if __name__ == "__main__":
    main()
