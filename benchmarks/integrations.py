"""The framework adapters against each framework's own reference on a host directory.

Each adapter does its framework's operations on a workspace; the reference does the same
operations on the same files in a temporary directory on the same disk, in the same process,
in one run. Every cell is the median of ``--rounds`` calls (microseconds per call), after the
answers of both have been checked to be the same:

  deepagents: ``AgentFSBackend`` against ``FilesystemBackend(root, virtual_mode=True)``
  (grep: ripgrep, as deepagents runs it):
  * read a 10 KiB file (its first 2,000 lines), write a 1 KiB file over an old one, edit one
    line of a 10 KiB file;
  * over a tree of ``--files`` files in 100 directories: grep a word in 10 of them, grep a
    word in 10 of them with ``glob="*.py"``, glob ``**/*.md`` and glob ``*.py`` (a bare
    pattern: names at any depth).

  Anthropic: ``AgentFSMemoryTool`` against the SDK's ``BetaLocalFilesystemMemoryTool``:
  * view a 10 KiB memory (read), create a new 1 KiB one (write), str_replace one line of the
    10 KiB one (edit).

  Anthropic: ``agent_toolset`` against the SDK's ``beta_agent_toolset_20260401``, over the
  same tree: glob ``**/*.md``, glob ``**/mod0000?.py`` (a few names), grep a word.

Each adapter call goes through a ``Toolset`` (policy, the audit row, read tracking); the
reference does none of that. The ratio is the reference's time over ours (above 1: ours is
faster); the targets are at least 0.8 for a read, a write and an edit, and at least 2 for a
grep or a glob over the tree.

    .venv/bin/python benchmarks/integrations.py [--files 10000] [--rounds 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from anthropic.lib.tools.agent_toolset import AgentToolContext, beta_agent_toolset_20260401
from deepagents.backends.filesystem import FilesystemBackend

import agentfs
from agentfs.integrations.anthropic import AgentFSMemoryTool, agent_toolset
from agentfs.integrations.deepagents import AgentFSBackend

DIRECTORIES = 100
#: The word grep looks for, in this many files of the tree.
RARE = "zebracorn"
RARE_FILES = 10
TARGETS = {"read": 0.8, "write": 0.8, "edit": 0.8, "grep": 2.0, "glob": 2.0}


@dataclass
class Row:
    """One operation, timed on both sides."""

    operation: str
    ours_us: float
    reference_us: float

    @property
    def ratio(self) -> float:
        return self.reference_us / self.ours_us

    @property
    def target(self) -> float:
        return TARGETS[self.operation.split()[0].rstrip(":")]


def median_us(call: Callable[[int], Any], rounds: int) -> float:
    """The median time of ``call(i)`` for i in range(rounds), after a few calls (each with an
    ``i`` of its own) to warm up."""
    for i in range(rounds, rounds + 5):
        call(i)
    times = []
    for i in range(rounds):
        started = time.perf_counter()
        call(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def _file_text(i: int, rare: bool) -> str:
    words = " ".join(f"word{(i * 7 + k) % 997}" for k in range(12))
    tail = f" {RARE}" if rare else ""
    return f"# file {i}\n{words}{tail}\n" + "".join(f"line {k}: {words}\n" for k in range(12))


def tree(files: int) -> dict[str, str]:
    """``files`` text files of about 1 KiB in 100 directories, a fifth of each kind; the rare
    word in ``RARE_FILES`` of them, half of those ``.py`` files."""
    suffixes = (".py", ".md", ".txt", ".json", ".rs")
    every = max(1, files // RARE_FILES)
    return {
        f"/pkg{i % DIRECTORIES:03d}/mod{i:05d}{suffixes[i % len(suffixes)]}": _file_text(
            i, i % every == 0
        )
        for i in range(files)
    }


def fill(ws: agentfs.Workspace, root: Path, files_of: dict[str, str]) -> None:
    """The same files in the workspace (indexed) and below the host directory ``root``."""
    with ws.transaction():
        for path, text in files_of.items():
            ws.write(path, text, parents=True)
    ws.refresh_index()
    for path, text in files_of.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(exist_ok=True)
        target.write_text(text)


def _ok(result: Any) -> Any:
    """A deepagents result, which says a failure instead of raising: a failed call must not be
    timed as if it had done the work."""
    if getattr(result, "error", None):
        raise SystemExit(f"a timed call failed: {result.error}")
    return result


def _same(ours: Any, reference: Any, what: str) -> None:
    if ours != reference:
        raise SystemExit(f"{what}: the adapter's answer differs from the reference's")


def deepagents_rows(work: Path, files: int, rounds: int) -> list[Row]:
    root = work / "root"
    root.mkdir()
    reference = FilesystemBackend(root, virtual_mode=True)
    big = _ten_kib()
    with agentfs.open(work / "ws.db") as ws, AgentFSBackend(ws) as ours:
        fill(ws, root, tree(files))
        for backend in (ours, reference):
            backend.write("/big.txt", big)
            backend.write("/small.txt", "a" * 1024)

        def grep_answer(backend: Any, glob: str | None) -> list[tuple[str, int]]:
            found = backend.grep(RARE, None, glob).matches or []
            return sorted((m["path"], m["line"]) for m in found)

        def glob_answer(backend: Any, pattern: str) -> list[str]:
            return [m["path"] for m in backend.glob(pattern).matches or []]

        _same(ours.read("/big.txt"), reference.read("/big.txt"), "read")
        for glob in (None, "*.py"):
            _same(grep_answer(ours, glob), grep_answer(reference, glob), f"grep {glob}")
        for pattern in ("**/*.md", "*.py"):
            _same(glob_answer(ours, pattern), glob_answer(reference, pattern), f"glob {pattern}")

        def pair(name: str, call: Callable[[Any, int], Any], n: int = rounds) -> Row:
            return Row(
                name,
                median_us(lambda i: call(ours, i), n),
                median_us(lambda i: call(reference, i), n),
            )

        flippers = {id(ours): LineFlipper(), id(reference): LineFlipper()}

        def edit(backend: Any, i: int) -> Any:
            return _ok(backend.edit("/big.txt", *flippers[id(backend)](i)))

        tree_rounds = max(5, rounds // 10)
        return [
            pair("read 10 KiB", lambda b, i: _ok(b.read("/big.txt"))),
            pair("write 1 KiB", lambda b, i: _ok(b.write("/small.txt", "ab"[i % 2] * 1024))),
            pair("edit one line", edit),
            pair(f"grep a word, {files:,} files", lambda b, i: b.grep(RARE), tree_rounds),
            pair(
                f"grep a word, glob *.py, {files:,} files",
                lambda b, i: b.grep(RARE, None, "*.py"),
                tree_rounds,
            ),
            pair(f"glob **/*.md, {files:,} files", lambda b, i: b.glob("**/*.md"), tree_rounds),
            pair(f"glob *.py, {files:,} files", lambda b, i: b.glob("*.py"), tree_rounds),
        ]


def _ten_kib() -> str:
    return "".join(f"line {k} of a ten kibibyte file, with a few words\n" for k in range(200))


class LineFlipper:
    """The edits of one 10 KiB file: the i-th changes line i % 200 one way or back, as it
    stands, so that every edit finds its text whatever order the calls come in."""

    def __init__(self) -> None:
        self.flipped: set[int] = set()

    def __call__(self, i: int) -> tuple[str, str]:
        line = i % 200
        old, new = (" OF A ", " of a ") if line in self.flipped else (" of a ", " OF A ")
        self.flipped ^= {line}
        return f"line {line}{old}", f"line {line}{new}"


def anthropic_rows(work: Path, rounds: int) -> list[Row]:
    reference = BetaLocalFilesystemMemoryTool(str(work / "memory"))
    with agentfs.open(work / "ws.db") as ws, AgentFSMemoryTool(ws) as ours:
        for tool in (ours, reference):
            tool.call({"command": "create", "path": "/memories/big.md", "file_text": _ten_kib()})
        view = {"command": "view", "path": "/memories/big.md"}
        _same(ours.call(view), reference.call(view), "view")

        def pair(name: str, call: Callable[[Any, int], Any]) -> Row:
            return Row(
                name,
                median_us(lambda i: call(ours, i), rounds),
                median_us(lambda i: call(reference, i), rounds),
            )

        def create(tool: Any, i: int) -> Any:
            path = f"/memories/new{i:05d}.md"  # the memory tool creates, never overwrites
            return tool.call({"command": "create", "path": path, "file_text": "a" * 1024})

        flippers = {id(ours): LineFlipper(), id(reference): LineFlipper()}

        def replace(tool: Any, i: int) -> Any:
            old, new = flippers[id(tool)](i)
            command = {"command": "str_replace", "path": "/memories/big.md"}
            return tool.call({**command, "old_str": old, "new_str": new})

        return [
            pair("read: view 10 KiB", lambda tool, i: tool.call(view)),
            pair("write: create 1 KiB", create),
            pair("edit: str_replace one line", replace),
        ]


def agent_toolset_rows(work: Path, files: int, rounds: int) -> list[Row]:
    """``agent_toolset`` (pathlib's glob and ripgrep's answers over the workspace) against
    the SDK's ``beta_agent_toolset_20260401`` on the same files in a directory; both
    compared as sets (ties in time, ripgrep's threads)."""
    root = work / "root"
    root.mkdir()
    reference = {t.name: t for t in beta_agent_toolset_20260401(AgentToolContext(workdir=root))}
    loop = asyncio.new_event_loop()  # one loop for every reference call, as an agent has
    with agentfs.open(work / "ws.db") as ws:
        fill(ws, root, tree(files))
        ours = {t.name: t for t in agent_toolset(ws)}

        def call(tools: dict[str, Any], name: str, args: dict[str, str]) -> str:
            if tools is ours:
                return str(ours[name].call(args))
            text = str(loop.run_until_complete(reference[name].call(args)))
            return text.replace(f"{root}/", "/")

        checks = [
            ("glob", {"pattern": "**/*.md"}),
            ("glob", {"pattern": "**/mod0000?.py"}),
            ("grep", {"pattern": RARE}),
        ]
        for name, args in checks:
            mine, theirs = call(ours, name, args), call(reference, name, args)
            _same(sorted(mine.split("\n")), sorted(theirs.split("\n")), f"{name} {args}")

        def pair(label: str, name: str, args: dict[str, str]) -> Row:
            n = max(5, rounds // 10)
            return Row(
                label,
                median_us(lambda i: call(ours, name, args), n),
                median_us(lambda i: call(reference, name, args), n),
            )

        rows = [
            pair(f"glob **/*.md, {files:,} files", *checks[0]),
            pair(f"glob **/mod0000?.py, {files:,} files", *checks[1]),
            pair(f"grep a word, {files:,} files", *checks[2]),
        ]
    loop.close()
    return rows


def table(title: str, rows: list[Row]) -> str:
    """``rows`` as a Markdown table under ``title`` (the report page shows it as it is)."""
    lines = [
        f"**{title}**",
        "",
        "| operation | agentfs us | reference us | ratio | target |",
        "|---|---:|---:|---:|---|",
    ]
    for row in rows:
        met = "met" if row.ratio >= row.target else "**missed**"
        lines.append(
            f"| {row.operation} | {row.ours_us:,.0f} | {row.reference_us:,.0f}"
            f" | {row.ratio:.2f}x | >= {row.target:.1f}x {met} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv[1:])
    scratch = os.environ.get("AGENTFS_BENCH_DIR")
    with tempfile.TemporaryDirectory(dir=scratch) as where:
        deep = deepagents_rows(Path(where), args.files, args.rounds)
    with tempfile.TemporaryDirectory(dir=scratch) as where:
        memory = anthropic_rows(Path(where), args.rounds)
    with tempfile.TemporaryDirectory(dir=scratch) as where:
        toolset = agent_toolset_rows(Path(where), args.files, args.rounds)
    print(table("deepagents: AgentFSBackend vs FilesystemBackend(virtual_mode=True)", deep))
    print()
    print(table("Anthropic: AgentFSMemoryTool vs BetaLocalFilesystemMemoryTool", memory))
    print()
    print(table("Anthropic: agent_toolset vs beta_agent_toolset_20260401", toolset))
    print(
        "\nMicroseconds per call, the median of each; ratio: the reference's time over ours"
        " (above 1: agentfs is faster)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
