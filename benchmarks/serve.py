"""Serving over HTTP (docs/mcp.md, "Over HTTP"): MCP over Streamable HTTP against MCP over
stdio, and several HTTP clients at once against one. In one run, side by side:

  * the rate of ``read_file`` calls (a 2 KiB file) from one client session over ``agentfs
    serve mcp --http`` against over ``agentfs serve mcp`` on stdio; target >= 0.5x the stdio
    rate;
  * the total rate of the same read-only calls from ``--clients`` client processes at once,
    each with its own session, against one client process alone; target >= 2x.

Each through two clients: the TypeScript SDK's (``benchmarks/mcp_rate.mjs`` on
``@modelcontextprotocol/sdk`` from npm: what Claude Code and the MCP Inspector are built on)
and the Python ``mcp`` SDK's, whose HTTP client costs about three times the server's time per
call, so that on two cores its processes, not the server, set the pace.

Each client lists the tools and makes ``--warmup`` calls before the timed ones; every cell is
the median of ``--runs`` runs, in calls per second.

Then the web view (``agentfs serve web``) of a workspace of ``--web-files`` files with 1,000
versions written by 1,000 tool calls: the first page (``/``, the latest calls and snapshots)
and a diff page, each fetched ``--fetches`` times through one keep-alive connection, p50 and
p95 in milliseconds; target p50 <= 200 ms each.

    .venv/bin/python benchmarks/serve.py [--calls 400] [--clients 4] [--runs 3]
        [--web-files 10000] [--fetches 50]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import agentfs

AGENTFS = str(Path(sys.executable).parent / "agentfs")
#: Where ``make`` installs the npm packages (the TypeScript SDK).
NPM = Path(__file__).resolve().parents[1] / ".npm"
TOKEN = "benchmark-token-0123456789abcdef"

#: One client process: a session over stdio or HTTP, ``calls`` timed read_file calls; prints
#: the seconds they took (start-up, listing and warm-up calls left out).
_CLIENT = r"""
import sys, time, anyio, httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

kind, target, token = sys.argv[1:4]
calls, warmup = int(sys.argv[4]), int(sys.argv[5])

async def timed(session):
    await session.initialize()
    await session.list_tools()
    for _ in range(warmup):
        await session.call_tool("read_file", {"path": "/page.md"})
    print("ready", flush=True)
    sys.stdin.readline()  # every client starts at once
    started = time.perf_counter()
    for _ in range(calls):
        result = await session.call_tool("read_file", {"path": "/page.md"})
        if result.is_error:
            raise SystemExit(result.content[0].text)
    print(time.perf_counter() - started, flush=True)

async def main():
    if kind == "stdio":
        params = StdioServerParameters(command=target, args=["serve", "mcp", token])
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await timed(s)
    else:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                streamable_http_client(target, http_client=http) as (r, w), \
                ClientSession(r, w) as s:
            await timed(s)

anyio.run(main)
"""


@dataclass
class Row:
    operation: str
    ours: float
    anchor: str
    anchor_rate: float
    target: str
    met: bool

    @property
    def ratio(self) -> float:
        return self.ours / self.anchor_rate


@contextmanager
def server_line(command: list[str], ready: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run a server until the block ends; yield the line of its stderr starting ``ready``."""
    environment = None if env is None else {**os.environ, **env}
    proc = subprocess.Popen(command, env=environment, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if line.startswith(ready):
                yield line.strip()
                break
        else:
            raise SystemExit(f"{' '.join(command[:3])} did not start")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


@contextmanager
def http_server(ws: Path) -> Iterator[str]:
    command = [AGENTFS, "serve", "mcp", str(ws), "--http", "127.0.0.1:0", "--read-only"]
    with server_line(command, "serving MCP at ", {"AGENTFS_TOKEN": TOKEN}) as line:
        yield line.split()[-1]


def client_command(
    sdk: str, kind: str, target: str, secret: str, calls: int, warmup: int
) -> list[str]:
    """One client process of ``sdk`` ("python" or "typescript")."""
    tail = [kind, target, secret, str(calls), str(warmup)]
    if sdk == "python":
        return [sys.executable, "-c", _CLIENT, *tail]
    return ["node", str(Path(__file__).with_name("mcp_rate.mjs")), str(NPM), *tail]


def rate(
    sdk: str, kind: str, target: str, secret: str, clients: int, calls: int, warmup: int
) -> float:
    """Calls per second of ``clients`` client processes started together (all calls over
    the slowest client's time)."""
    procs = [
        subprocess.Popen(
            client_command(sdk, kind, target, secret, calls, warmup),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(clients)
    ]
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"a {kind} client did not start")
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    took = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        if proc.returncode:
            raise SystemExit(f"a {kind} client failed")
        took.append(float(out.strip()))
    return clients * calls / max(took)


def mcp_rows(work: Path, calls: int, clients: int, runs: int, warmup: int) -> list[Row]:
    ws = work / "ws.db"
    with agentfs.open(ws) as workspace:
        workspace.write("/page.md", "".join(f"line {i} of the page\n" for i in range(100)))
    rows = []
    with http_server(ws) as url:
        for sdk in ("typescript", "python"):
            rates = {
                (kind, n): statistics.median(
                    rate(sdk, kind, target, secret, n, calls, warmup) for _ in range(runs)
                )
                for kind, target, secret, n in (
                    ("stdio", AGENTFS, str(ws), 1),
                    ("http", url, TOKEN, 1),
                    ("http", url, TOKEN, clients),
                )
            }
            stdio, one, many = rates[("stdio", 1)], rates[("http", 1)], rates[("http", clients)]
            who = f"{sdk} SDK's client"
            rows += [
                Row(
                    f"read_file over HTTP, {who}",
                    one,
                    "over stdio",
                    stdio,
                    ">= 0.5x",
                    one >= 0.5 * stdio,
                ),
                Row(
                    f"read_file over HTTP, {clients} of the {who} at once (total)",
                    many,
                    "one client over HTTP",
                    one,
                    ">= 2x",
                    many >= 2 * one,
                ),
            ]
    return rows


@dataclass
class PageRow:
    page: str
    p50_ms: float
    p95_ms: float

    @property
    def met(self) -> bool:
        return self.p50_ms <= 200


@contextmanager
def web_server(ws: Path) -> Iterator[tuple[str, str]]:
    """``agentfs serve web``: (its base URL, its token)."""
    command = [AGENTFS, "serve", "web", str(ws), "--port", "0", "--read-only"]
    with server_line(command, "open ") as line:
        base, token = line.split()[1].split("/?token=")
        yield base, token


def web_rows(work: Path, files: int, fetches: int) -> list[PageRow]:
    import httpx2

    from agentfs.tools.toolset import Toolset

    ws = work / "web.db"
    with agentfs.open(ws) as workspace:
        with workspace.transaction():
            for i in range(files):
                workspace.write(f"/pkg{i % 100:02d}/mod{i:05d}.py", f"value = {i}\n", parents=True)
        tools = Toolset(workspace, thread="bench")
        for i in range(1000):  # 1,000 calls, each a version: 10 of each of 100 files
            text = "".join(f"line {j} of round {i // 100}\n" for j in range(40))
            done = tools.call(
                "write_file",
                {"path": f"/edited/file{i % 100:02d}.txt", "content": text, "overwrite": True},
            )
            if "error" in done:
                raise SystemExit(f"write_file: {done}")
        tools.flush()
        workspace.snapshots.create("after", thread="bench")
    pages = {
        "first page (/)": "/",
        "diff page": "/diff/edited/file07.txt?a=3&b=8",
        "a file and its 10 versions": "/file/edited/file07.txt",
        "a directory of 100 files": "/tree/pkg07",
        "the tool-call log": "/calls",
    }
    rows = []
    with web_server(ws) as (base, token), httpx2.Client(cookies={"agentfs_web": token}) as http:
        for name, path in pages.items():
            times = []
            for _ in range(fetches + 3):
                started = time.perf_counter()
                answer = http.get(base + path)
                times.append(time.perf_counter() - started)
                if answer.status_code != 200:
                    raise SystemExit(f"{path}: {answer.status_code}")
            times = sorted(times[3:])  # the first fetches warm the caches
            rows.append(
                PageRow(name, 1000 * statistics.median(times), 1000 * times[int(0.95 * len(times))])
            )
    return rows


def web_table(rows: list[PageRow], files: int) -> str:
    lines = [
        f"| web view of {files:,} files, 1,000 versions, 1,000 calls | p50 ms | p95 ms | target |",
        "|---|---:|---:|---|",
    ]
    for r in rows:
        met = "met" if r.met else "**missed**"
        lines.append(f"| {r.page} | {r.p50_ms:.1f} | {r.p95_ms:.1f} | p50 <= 200 ms {met} |")
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    lines = [
        "| operation | calls/s | anchor | anchor calls/s | ratio | target |",
        "|---|---:|---|---:|---:|---|",
    ]
    for r in rows:
        met = "met" if r.met else "**missed**"
        lines.append(
            f"| {r.operation} | {r.ours:,.0f} | {r.anchor} | {r.anchor_rate:,.0f} |"
            f" {r.ratio:.2f}x | {r.target} {met} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--web-files", type=int, default=10_000)
    parser.add_argument("--fetches", type=int, default=50)
    args = parser.parse_args(argv[1:])
    with tempfile.TemporaryDirectory(dir=os.environ.get("AGENTFS_BENCH_DIR")) as where:
        rows = mcp_rows(Path(where), args.calls, args.clients, args.runs, args.warmup)
        pages = web_rows(Path(where), args.web_files, args.fetches)
    print(table(rows))
    print(
        "\nCalls per second, the median of each; ratio: ours over the anchor's (above 1: ours"
        " is faster).\n"
    )
    print(web_table(pages, args.web_files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
