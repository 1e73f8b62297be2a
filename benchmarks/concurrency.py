"""Three writers on one workspace at once: does any of them starve?

A workspace is written by several processes at the same time: programs through its mount,
the CLI or a script through the Python API, an agent through the MCP server. SQLite lets one
of them write at a time; the others wait for the write lock. This benchmark runs, at once and
for ``--seconds``, one process of each kind, and times every write each of them makes:

  * **files**: small files written through a real ``agentfs mount`` of the workspace, as an
    editor or git does: ``open``/``write``/``close``, and every fourth save written to a
    temporary name and renamed over the file (timed from the ``open`` to the ``rename``);
  * **api**: the Python API in a process of its own, in a loop that never pauses (the
    writer most likely to take the lock back the moment it lets go of it): ``ws.write`` of a
    small file, each its own transaction; with ``--api-style cli``, each write opens and closes
    the workspace instead, as one ``agentfs write`` does (without the interpreter's start);
  * **mcp**: the ``mcp`` SDK's stdio client calling ``write_file`` and ``edit_file``
    (alternately) of ``agentfs serve mcp``, one call after the other.

The anchor, in the same run, is the same three writers on a plain directory on the same disk
(``--plain /dev/shm`` for tmpfs): the files writer writes there directly, the api writer with
Python's ``open``/``write``/``close``, and the MCP writer drives the MCP project's own
filesystem server (``@modelcontextprotocol/server-filesystem`` from npm, installed by
``make``), whose ``write_file`` and ``edit_file`` do the same work. The two sides run one
after the other (``--runs`` times, interleaved), never together: they would share the two
cores.

For each writer the table gives how many writes it made (median per run), p50, p99, the
longest write and how many took over 1 s (over every run's writes pooled), the ratio of its
p99 to the anchor's, and the target: no write waits more than 1 s at p99. A starved writer
shows in the last columns first: its p99 can stay low while a few of its writes wait seconds.

    .venv/bin/python benchmarks/concurrency.py [--seconds 20] [--runs 1] [--quick]
        [--api-style loop|cli] [--scratch DIR] [--plain DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import agentfs

ROOT = Path(__file__).resolve().parent.parent
AGENTFS = Path(sys.executable).parent / "agentfs"
PEER = ROOT / ".npm" / "node_modules" / ".bin" / "mcp-server-filesystem"
WRITERS = ("files", "api", "mcp")
#: The target: no writer's p99 above this (seconds).
TARGET_P99 = 1.0
#: Seconds the writers are given to start (the MCP server imports its SDK) before all begin.
START_IN = 6.0
#: Distinct files each writer rewrites in turn.
FILES = 50
PAYLOAD = "x" * 1023 + "\n"


# --- the writers, each run in a process of its own ---------------------------------------------


def _loop(begin: float, seconds: float, write: Callable[[int], object]) -> list[float]:
    """Call ``write(i)`` from ``begin`` (a ``time.time()``) for ``seconds``; each call's
    seconds."""
    time.sleep(max(0.0, begin - time.time()))
    end = time.monotonic() + seconds
    out = []
    i = 0
    while time.monotonic() < end:
        start = time.perf_counter()
        write(i)
        out.append(time.perf_counter() - start)
        i += 1
    return out


def files_writer(directory: Path, begin: float, seconds: float) -> list[float]:
    """Small files saved in ``directory`` as an editor or git saves them."""
    directory.mkdir(exist_ok=True)

    def write(i: int) -> None:
        name = directory / f"f{i % FILES}.txt"
        if i % 4 == 3:  # saved under a temporary name, then renamed over the file
            temporary = directory / f".f{i % FILES}.txt.tmp"
            with temporary.open("w") as f:
                f.write(f"{i}{PAYLOAD}")
            os.rename(temporary, name)
        else:
            with name.open("w") as f:
                f.write(f"{i}{PAYLOAD}")

    return _loop(begin, seconds, write)


def api_writer(target: str, begin: float, seconds: float, style: str) -> list[float]:
    """``ws.write`` in a loop (``target`` a workspace file), or plain Python writes in a
    directory (``target`` a directory)."""
    if os.path.isdir(target):
        where = Path(target) / "api"
        where.mkdir(exist_ok=True)

        def plain(i: int) -> None:
            with (where / f"f{i % FILES}.txt").open("w") as f:
                f.write(f"{i}{PAYLOAD}")

        return _loop(begin, seconds, plain)
    if style == "cli":

        def one_command(i: int) -> None:
            with agentfs.open(target) as ws:
                ws.write(f"/api/f{i % FILES}.txt", f"{i}{PAYLOAD}")

        return _loop(begin, seconds, one_command)
    with agentfs.open(target) as ws:
        return _loop(begin, seconds, lambda i: ws.write(f"/api/f{i % FILES}.txt", f"{i}{PAYLOAD}"))


def mcp_writer(target: str, begin: float, seconds: float) -> list[float]:
    """``write_file`` and ``edit_file`` in turn through the MCP SDK's stdio client: of
    ``agentfs serve mcp`` on a workspace file, or of the peer server on a directory."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    ours = not os.path.isdir(target)
    if ours:
        params = StdioServerParameters(command=str(AGENTFS), args=["serve", "mcp", target])
        root = "/mcp"
    else:
        root = os.path.join(target, "mcp")
        os.makedirs(root, exist_ok=True)
        params = StdioServerParameters(command=str(PEER), args=[target])

    def arguments(i: int) -> tuple[str, dict[str, Any]]:
        path = f"{root}/f{i // 2 % FILES}.txt"
        if i % 2 == 0:
            content = f"{i}\nvalue = 0\n{PAYLOAD}"
            return "write_file", {"path": path, "content": content} | (
                {"overwrite": True} if ours else {}
            )
        edit = ("value = 0", "value = 1")
        if ours:
            return "edit_file", {"path": path, "old_string": edit[0], "new_string": edit[1]}
        return "edit_file", {"path": path, "edits": [{"oldText": edit[0], "newText": edit[1]}]}

    async def run(errlog: TextIO) -> list[float]:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            await anyio.sleep(max(0.0, begin - time.time()))
            end = time.monotonic() + seconds
            out = []
            i = 0
            while time.monotonic() < end:
                tool, args = arguments(i)
                start = time.perf_counter()
                result = await session.call_tool(tool, args)
                out.append(time.perf_counter() - start)
                if result.is_error:
                    raise RuntimeError(f"{tool} failed: {result.content}")
                i += 1
            return out

    with open(os.devnull, "w") as devnull:  # the peer prints a banner on stderr
        return anyio.run(run, sys.stderr if ours else devnull)


def writer_main(args: argparse.Namespace) -> None:
    """One writer (``--writer``): its seconds per write, as JSON on stdout."""
    if args.writer == "files":
        out = files_writer(Path(args.target), args.begin, args.seconds)
    elif args.writer == "api":
        out = api_writer(args.target, args.begin, args.seconds, args.api_style)
    else:
        out = mcp_writer(args.target, args.begin, args.seconds)
    json.dump(out, sys.stdout)


# --- one side: three writers at once -----------------------------------------------------------


def run_side(targets: dict[str, str], seconds: float, api_style: str) -> dict[str, list[float]]:
    """The three writers at once on one side (``targets``: where each writes); seconds per
    write of each."""
    begin = time.time() + START_IN
    procs = {
        name: subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--writer",
                name,
                "--target",
                targets[name],
                "--begin",
                repr(begin),
                "--seconds",
                str(seconds),
                "--api-style",
                api_style,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in WRITERS
    }
    out = {}
    for name, proc in procs.items():
        stdout, _ = proc.communicate(timeout=START_IN + seconds + 120)
        if proc.returncode != 0:
            sys.exit(f"the {name} writer failed ({proc.returncode})")
        out[name] = json.loads(stdout)
    return out


def _agentfs_command(*args: str) -> None:
    subprocess.run([str(AGENTFS), *args], check=True)


@contextmanager
def agentfs_side(scratch: Path) -> Iterator[dict[str, str]]:
    """A fresh workspace with its mount: where each writer writes on our side."""
    db, mnt = scratch / "ws.db", scratch / "mnt"
    with agentfs.open(db) as ws:
        for name in WRITERS:
            ws.mkdir(f"/{name}")
    mnt.mkdir()
    _agentfs_command("mount", str(db), str(mnt))
    try:
        yield {"files": str(mnt / "files"), "api": str(db), "mcp": str(db)}
    finally:
        _agentfs_command("umount", str(mnt))


@contextmanager
def plain_side(where: Path) -> Iterator[dict[str, str]]:
    """A fresh plain directory: where each writer writes on the anchor's side."""
    directory = Path(tempfile.mkdtemp(prefix="bench-plain-", dir=where))
    try:
        yield {"files": str(directory / "files"), "api": str(directory), "mcp": str(directory)}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# --- the table ---------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile ``p`` (0-100) of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * len(ordered)) - 1))]


def _print(
    results: dict[str, dict[str, list[list[float]]]], args: argparse.Namespace, scratch: str
) -> None:
    print(
        f"\nconcurrency: files through the mount, the Python API ({args.api_style}) and MCP,"
        f" writing at once for {args.seconds:g} s, {args.runs} run(s); workspace in {scratch},"
        f" plain directory in {args.plain or scratch}; latency per write in ms"
        " (count: median per run; p50, p99, max and the writes over 1 s: every run's writes)\n"
    )
    print(
        "| writer | count plain | count agentfs | p50 plain | p50 agentfs | p99 plain"
        " | p99 agentfs | max plain | max agentfs | over 1 s plain | over 1 s agentfs"
        " | p99 agentfs / plain | target |"
    )
    print("|---|" + "---:|" * 11 + "---|")
    for name in WRITERS:
        cells = []
        stats = {}
        for side in ("plain", "agentfs"):
            runs = results[side][name]
            pooled = [t for run in runs for t in run]
            stats[side] = {
                "count": statistics.median(len(run) for run in runs),
                "p50": percentile(pooled, 50) * 1000,
                "p99": percentile(pooled, 99) * 1000,
                "max": max(pooled) * 1000,
                "over": sum(t > TARGET_P99 for t in pooled),
            }
        for key in ("count", "p50", "p99", "max", "over"):
            for side in ("plain", "agentfs"):
                value = stats[side][key]
                cells.append(f"{value:,.0f}" if key in ("count", "over") else f"{value:,.1f}")
        ratio = stats["agentfs"]["p99"] / stats["plain"]["p99"]
        met = stats["agentfs"]["p99"] <= TARGET_P99 * 1000
        verdict = f"p99 <= {TARGET_P99:g} s {'ok' if met else 'MISS'}"
        print(f"| {name} | {' | '.join(cells)} | {ratio:,.1f}x | {verdict} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="5 s, one run")
    parser.add_argument(
        "--api-style",
        choices=("loop", "cli"),
        default="loop",
        help="loop: one workspace, ws.write without a pause; cli: open-write-close each time",
    )
    parser.add_argument(
        "--scratch",
        default=None,
        help="where the workspace file lives (default: the temp dir, on the disk here)",
    )
    parser.add_argument(
        "--plain", default=None, help="where the plain directory is made (default: --scratch)"
    )
    # one writer's process (used by the benchmark itself)
    parser.add_argument("--writer", choices=WRITERS, help=argparse.SUPPRESS)
    parser.add_argument("--target", help=argparse.SUPPRESS)
    parser.add_argument("--begin", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.writer:
        writer_main(args)
        return
    if args.quick:
        args.seconds, args.runs = 5.0, 1
    if not PEER.exists():
        sys.exit(f"{PEER} is missing: run make (it installs the npm peer)")
    print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    results: dict[str, dict[str, list[list[float]]]] = {"plain": {}, "agentfs": {}}
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-", dir=args.scratch) as tmp:
        for run in range(args.runs):
            for side in ("plain", "agentfs"):  # interleaved: drift hits both alike
                where = Path(tmp) / f"{side}-{run}"
                where.mkdir()
                make = (
                    agentfs_side(where)
                    if side == "agentfs"
                    else plain_side(Path(args.plain) if args.plain else where)
                )
                with make as targets:
                    for name, times in run_side(targets, args.seconds, args.api_style).items():
                        results[side].setdefault(name, []).append(times)
                shutil.rmtree(where, ignore_errors=True)
        _print(results, args, args.scratch or tempfile.gettempdir())


if __name__ == "__main__":
    main()
