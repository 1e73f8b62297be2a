"""What ``Toolset.call`` adds over the bare API calls, counted instead of timed.

The timed overhead (``benchmarks/tools.py``) moves by about ±3 µs from one process to the
next, with the machine and with the WAL's checkpoint cycle: too much to settle a change worth
a few microseconds. valgrind's cachegrind counts what a call executes: its instructions, and
the misses of a simulated first-level instruction and data cache and last-level cache. The
counts repeat from run to run to within a fraction of a percent.

Each tool's two sides (``Toolset.call``, and the bare API calls of ``overhead_cases``) run
in a child process under cachegrind twice (string hashing fixed: with a random seed the
dictionaries' layouts, and so the counts, move by up to 2 % of a side), with ``WARM`` calls
and with ``WARM + --calls`` calls, each run flushing the toolset's audit at its end; the
difference divided by ``--calls`` is one call, start-up, imports and the build excluded, its
share of publishing audit rows included. Every thread is counted (the checkpoint thread's
copying too); the kernel's work (writing the WAL) is not, so a change in pages written shows
in the timed benchmark only.

The estimated cycles weigh a first-level miss at 10 cycles and a last-level miss at 100, a
rough model of a current x86 core; the misses matter because a tool call's Python runs among
SQLite's work, which evicts it: its instructions cost about three times what they cost in a
loop of their own (docs/mcp.md, "What a call costs").

    .venv/bin/python benchmarks/tool_instructions.py [--calls 1000] [--tools write_file,stat]

Needs valgrind (Debian's ``valgrind`` package). Two children run at a time; the counts do
not depend on what else runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tools import build, overhead_cases

import agentfs
from agentfs.tools.toolset import Toolset

#: Calls made before the counted ones, in both runs: the caches, the statement cache and the
#: WAL settle.
WARM = 500
#: Files in the benchmark tree beside the ``/bench`` ones (the timed benchmark has 10,000;
#: a call here touches only ``/bench``).
FILES = 200
SIDES = ("Toolset.call", "bare API")


@dataclass(frozen=True)
class Counts:
    """Per call: instructions, first-level instruction and data cache misses, last-level
    misses."""

    instructions: float
    i1_misses: float
    d1_misses: float
    ll_misses: float

    @property
    def cycles(self) -> float:
        return self.instructions + 10 * (self.i1_misses + self.d1_misses) + 100 * self.ll_misses

    def __sub__(self, other: Counts) -> Counts:
        return Counts(
            self.instructions - other.instructions,
            self.i1_misses - other.i1_misses,
            self.d1_misses - other.d1_misses,
            self.ll_misses - other.ll_misses,
        )

    def per(self, calls: int) -> Counts:
        return Counts(
            self.instructions / calls,
            self.i1_misses / calls,
            self.d1_misses / calls,
            self.ll_misses / calls,
        )


def child(tool: str, side: str, calls: int) -> None:
    """Make ``calls`` calls of one side of one tool's case in a fresh workspace."""
    with tempfile.TemporaryDirectory() as tmp, agentfs.open(Path(tmp) / "ws.db") as ws:
        build(ws, FILES)
        tools = Toolset(ws, thread="bench")
        [(name, arguments, bare)] = [case for case in overhead_cases(ws) if case[0] == tool]
        given = [arguments(i) for i in range(calls)]
        for i in range(calls):
            if side == SIDES[0]:
                tools.call(name, given[i])
            else:
                bare(i)
        tools.flush()


def counted(tool: str, side: str, calls: int) -> Counts:
    """cachegrind's totals for one child run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cachegrind.out"
        subprocess.run(
            [
                "valgrind",
                "--tool=cachegrind",
                "--cache-sim=yes",
                f"--cachegrind-out-file={out}",
                sys.executable,
                __file__,
                "--child",
                tool,
                side,
                str(calls),
            ],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        lines = out.read_text().splitlines()
    events = next(line for line in lines if line.startswith("events:")).split()[1:]
    summary = next(line for line in lines if line.startswith("summary:")).split()[1:]
    totals = dict(zip(events, map(int, summary), strict=True))
    return Counts(
        totals["Ir"],
        totals["I1mr"],
        totals["D1mr"] + totals["D1mw"],
        totals["ILmr"] + totals["DLmr"] + totals["DLmw"],
    )


def per_call(tool: str, side: str, calls: int) -> Counts:
    with ThreadPoolExecutor(2) as pool:
        short, long = pool.map(lambda n: counted(tool, side, n), (WARM, WARM + calls))
    return (long - short).per(calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--tools", default="stat,read_file,write_file")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        tool, side, calls = args.child
        child(tool, side, int(calls))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is missing (Debian: apt-get install valgrind)")
    print(
        f"Toolset.call over the bare API calls, counted by cachegrind, per call"
        f" (the difference of {WARM} and {WARM + args.calls} calls)\n"
    )
    print("| tool | side | instructions | I1 misses | D1 misses | LL misses | est. cycles |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for tool in args.tools.split(","):
        sides = [per_call(tool, side, args.calls) for side in SIDES]
        for label, c in [*zip(SIDES, sides, strict=True), ("overhead", sides[0] - sides[1])]:
            print(
                f"| {tool} | {label} | {c.instructions:,.0f} | {c.i1_misses:,.0f}"
                f" | {c.d1_misses:,.0f} | {c.ll_misses:,.0f} | {c.cycles:,.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
