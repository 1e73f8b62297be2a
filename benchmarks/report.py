"""Run every benchmark that measures agentfs against an anchor and write docs/benchmarks.md.

Each benchmark script under ``benchmarks/`` prints its own table (agentfs beside its anchor,
with the ratio and the target); this runs them one after another, each with its documented
defaults, and writes the page from what they printed: a short introduction, then per
benchmark the exact command, its output as printed, and a footer naming the machine, the date,
the time the run took and the git commit (``+ uncommitted changes`` when the tree is dirty).
A benchmark whose prerequisites are missing here (``/dev/fuse``, an npm package, valgrind) is
not run: its section says so and why.

    .venv/bin/python benchmarks/report.py                      # all of them (make bench)
    .venv/bin/python benchmarks/report.py --only mount,tools --keep
    .venv/bin/python benchmarks/report.py --list
    .venv/bin/python benchmarks/report.py --render             # the page again, nothing run

``--only`` runs a subset; with ``--keep`` every other section keeps the text it has in the
page (its own date and commit), without it those sections say they were not run. The
diagnostic scripts (``wal_frames.py``, ``mount_requests.py``) look inside one workload and
have no anchor; they are run by hand.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "benchmarks.md"
NPM = ROOT / ".npm" / "node_modules"
#: One benchmark may run this long before it is stopped and reported as failed.
TIMEOUT_S = 2 * 3600


def _missing_tools(*names: str) -> str | None:
    missing = [n for n in names if shutil.which(n) is None]
    return f"not on PATH: {', '.join(missing)}" if missing else None


def _missing_module(name: str, why: str) -> str | None:
    return None if importlib.util.find_spec(name) else f"the Python module {name} ({why})"


def _fuse() -> str | None:
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing"
    return _missing_tools("fusermount3") or _missing_module("pyfuse3", "the mount extra")


def _mcp_peer() -> str | None:
    if not (NPM / ".bin" / "mcp-server-filesystem").exists():
        return "the npm package @modelcontextprotocol/server-filesystem (make installs it)"
    return None


def _first(*checks: Callable[[], str | None]) -> str | None:
    return next((reason for check in checks if (reason := check()) is not None), None)


def _sandbox() -> str | None:
    from agentfs.mount.sandbox import unavailable

    return unavailable()


def _turso() -> str | None:
    if not list((NPM / "@tursodatabase").glob("cli-*/tursodb")):
        return "the npm package turso (its tursodb --sync-server; make installs it)"
    return None


def _node_client() -> str | None:
    if not (NPM / "@modelcontextprotocol" / "sdk").is_dir():
        return "the npm package @modelcontextprotocol/sdk (make installs it)"
    return _missing_tools("node")


def _sdk_peer() -> list[str]:
    """Without Turso's agentfs-sdk in .venv-peer, small_files.py runs without that column."""
    return [] if (ROOT / ".venv-peer" / "bin" / "python").exists() else ["--no-sdk"]


def _relevance() -> list[str]:
    """Without the embed extra (the MiniLM model), search.py runs without relevance."""
    return [] if importlib.util.find_spec("onnxruntime") else ["--skip", "relevance"]


@dataclass(frozen=True)
class Bench:
    """One section of the page: a script, what it measures, and what it needs."""

    name: str
    title: str
    script: str
    about: str
    #: Why it cannot run here (None: it can).
    needs: Callable[[], str | None] = lambda: None
    #: Options added where part of the benchmark cannot run, and why (shown on the page).
    adapt: Callable[[], list[str]] = lambda: []
    #: Arguments that make a quick run, to try the report itself (never used by make bench).
    quick: list[str] = field(default_factory=list)


BENCHES = (
    Bench(
        "small_files",
        "Small files and one large file (`benchmarks/small_files.py`)",
        "small_files.py",
        "1 KiB files created, overwritten, read, stat'ed, listed and deleted, each operation its"
        " own transaction, and a 100 MiB file written and read in 1 MiB pieces, through the"
        " Python API, against Turso's agentfs-sdk, the host filesystem on the same disk and"
        " hand-written SQLite statements on the same schema (the floor).",
        adapt=_sdk_peer,
        quick=["--runs", "1", "--sizes", "1000", "--no-sdk"],
    ),
    Bench(
        "history",
        "History: snapshots, restores, versioned writes (`benchmarks/history.py`)",
        "history.py",
        "Snapshots of a 10,000-file tree, restores and versioned overwrites, against `cp -a`"
        " and `rsync -a --delete` of the same tree on the host disk, and against the same"
        " writes with versioning off.",
        needs=lambda: _missing_tools("cp", "rsync", "du"),
        quick=["--files", "1000", "--sizes", "1024", "--rounds", "10"],
    ),
    Bench(
        "search",
        "Search: grep against ripgrep, BM25, k-NN, relevance, indexing cost"
        " (`benchmarks/search.py`)",
        "search.py",
        "grep against ripgrep over twelve copies of the standard library (same results, line by"
        " line), BM25 latency, k-NN over 100,000 vectors against a numpy scan, recall and MRR"
        " of the three search modes on 105 labelled queries, and what indexing costs a write"
        " and an import.",
        needs=lambda: _missing_tools("rg"),
        adapt=_relevance,
        quick=["--copies", "2", "--skip", "relevance,vectors", "--import-runs", "1"],
    ),
    Bench(
        "tools",
        "Agent tools over MCP (`benchmarks/tools.py`)",
        "tools.py",
        "Round trips of the agent tools through `agentfs serve mcp` against the official MCP"
        " filesystem server (`@modelcontextprotocol/server-filesystem`) on the same files,"
        " through three clients, and what `Toolset.call` adds in-process over the bare API"
        " calls that give the same answer.",
        needs=lambda: _first(_mcp_peer, _node_client),
        quick=["--files", "1000", "--rounds", "1"],
    ),
    Bench(
        "serve",
        "Serving over HTTP (`benchmarks/serve.py`)",
        "serve.py",
        "read_file calls through `agentfs serve mcp --http` against the same over stdio, and"
        " four clients at once against one, through the TypeScript and the Python MCP SDKs'"
        " clients; the web view's first page and a diff page over a 10,000-file workspace"
        " with 1,000 versions and 1,000 tool calls.",
        needs=_node_client,
        quick=[
            *("--calls", "50", "--runs", "1", "--warmup", "5"),
            *("--web-files", "500", "--fetches", "5"),
        ],
    ),
    Bench(
        "integrations",
        "The framework adapters (`benchmarks/integrations.py`)",
        "integrations.py",
        "deepagents' operations through `AgentFSBackend` against its own `FilesystemBackend` on"
        " the same files (ripgrep for grep, over 10,000 files), and the Anthropic memory tool"
        " against the SDK's `BetaLocalFilesystemMemoryTool`, each call through a `Toolset`.",
        needs=lambda: _first(
            lambda: _missing_tools("rg"),
            lambda: _missing_module("deepagents", "the deepagents extra"),
            lambda: _missing_module("anthropic", "the anthropic extra"),
        ),
        quick=["--files", "1000", "--rounds", "20"],
    ),
    Bench(
        "tool_instructions",
        "What a tool call adds, counted (`benchmarks/tool_instructions.py`)",
        "tool_instructions.py",
        "The same in-process overhead of `Toolset.call` over the bare API calls, counted in"
        " instructions and simulated cache misses under valgrind's cachegrind instead of"
        " timed, so that it repeats from run to run.",
        needs=lambda: _missing_tools("valgrind"),
        quick=["--calls", "200", "--tools", "stat"],
    ),
    Bench(
        "mount",
        "The FUSE mount (`benchmarks/mount.py`)",
        "mount.py",
        "Shell workloads (untar, find + stat, grep -r, cat, git status, rm -rf) and fio's"
        " sequential 1 GiB write and read in an `agentfs mount`, against bindfs (a C FUSE"
        " passthrough on the same disk, the floor of any FUSE filesystem) and tmpfs.",
        needs=lambda: _first(_fuse, lambda: _missing_tools("bindfs", "fio", "git", "tar")),
        quick=["--runs", "1", "--files", "1000", "--mib", "64"],
    ),
    Bench(
        "overlay",
        "A workspace over a host directory (`benchmarks/overlay.py`)",
        "overlay.py",
        "Opening a workspace over a 100,000-file tree against `agentfs import` of it; `git"
        " status` and `grep -r` in the mounted overlay of a 10,000-file repository against a"
        " plain mount of the imported repository and bindfs over the host; `agentfs apply` of"
        " 100 changed files; listing a tree of 256 files of 1 MiB (no byte copied) against"
        " importing it; two processes reading at once against the same in an imported"
        " workspace.",
        needs=lambda: _first(_fuse, lambda: _missing_tools("bindfs", "git")),
        quick=[
            *("--files", "2000", "--repo-files", "1000", "--changed", "20"),
            *("--big-files", "16", "--runs", "2"),
        ],
    ),
    Bench(
        "sync",
        "Sync through Turso (`benchmarks/sync.py`)",
        "sync.py",
        "Push, clone, and incremental push and pull of 10,000 files through a real"
        " `tursodb --sync-server`, against uploading the whole database file each time.",
        needs=_turso,
        quick=["--files", "1000", "--rounds", "2"],
    ),
    Bench(
        "concurrency",
        "Writers side by side (`benchmarks/concurrency.py`)",
        "concurrency.py",
        "Three writers on one workspace at once (files through the mount, the Python API, an"
        " MCP client) for 20 s, against the same three writers on a plain directory on the"
        " same disk: latency per write and whether any writer starves.",
        needs=lambda: _first(_fuse, _mcp_peer),
        quick=["--quick"],
    ),
    Bench(
        "sandbox",
        "The sandbox's start (`benchmarks/sandbox.py`)",
        "sandbox.py",
        "What the sandbox of `agentfs exec --sandbox` adds to a command's start: `true` in the"
        " full sandbox against plain bubblewrap with the same binds.",
        needs=lambda: _first(_fuse, _sandbox),
        quick=["--runs", "5"],
    ),
)
BY_NAME = {b.name: b for b in BENCHES}


# --- where and when ----------------------------------------------------------------------------


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine() -> str:
    """CPU model, cores, memory, OS and kernel, Python and SQLite, in one line."""
    cpu = re.search(r"^model name\s*:\s*(.+)$", _read("/proc/cpuinfo"), re.M)
    mem = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    distro = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', _read("/etc/os-release"), re.M)
    try:
        import apsw

        sqlite = f"SQLite {apsw.sqlite_lib_version()} (apsw {apsw.apsw_version()})"
    except ImportError:
        sqlite = "SQLite unknown (no apsw)"
    parts = [
        cpu.group(1).strip() if cpu else (platform.processor() or platform.machine()),
        f"{os.cpu_count()} cores",
        f"{int(mem.group(1)) / 2**20:.1f} GiB of memory" if mem else "memory unknown",
        f"{distro.group(1) if distro else platform.system()}, kernel {platform.release()}",
        f"temp dir on {_fs_type(tempfile.gettempdir())}",
        f"Python {platform.python_version()}",
        sqlite,
    ]
    return ", ".join(parts)


def _fs_type(path: str) -> str:
    done = subprocess.run(
        ["findmnt", "-n", "-o", "FSTYPE", "--target", path], capture_output=True, text=True
    )
    return done.stdout.strip() or "an unknown filesystem"


def commit() -> str:
    """The checked-out commit, and whether tracked files differ from it."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{head} + uncommitted changes" if dirty else head


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _duration(seconds: float) -> str:
    minutes, s = divmod(round(seconds), 60)
    return f"{minutes} min {s} s" if minutes else f"{s} s"


# --- running one ------------------------------------------------------------------------------


def command(bench: Bench, quick: bool) -> list[str]:
    python = Path(sys.executable)
    shown = python.relative_to(ROOT) if python.is_relative_to(ROOT) else python
    args = bench.quick if quick else bench.adapt()
    return [str(shown), f"benchmarks/{bench.script}", *args]


def run(bench: Bench, quick: bool, timeout: float) -> str:
    """The section's body: the command, what it printed (or why it did not run), the footer."""
    argv = command(bench, quick)
    lines = ["```sh", " ".join(argv), "```", ""]
    # as the run starts: others may commit while it runs; the load says how idle it was
    when, at = f"{_now()} (load {os.getloadavg()[0]:.1f})", commit()
    reason = bench.needs()
    if reason is not None:
        print(f"== {bench.name}: skipped ({reason})", file=sys.stderr, flush=True)
        lines.append(f"**Skipped on this machine:** {reason}.")
        return "\n".join(lines) + "\n\n" + footer(when, at, None)
    print(f"== {bench.name}: {' '.join(argv)}", file=sys.stderr, flush=True)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, *argv[1:]],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its whole process group can be stopped on a timeout
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        os.killpg(proc.pid, signal.SIGTERM)
        out, err = proc.communicate()
        err += f"\n(stopped after {_duration(time.monotonic() - started)})"
    took = time.monotonic() - started
    sys.stderr.write(err)
    if proc.returncode != 0:
        print(f"== {bench.name}: FAILED ({proc.returncode})", file=sys.stderr, flush=True)
        tail = "\n".join(err.strip().splitlines()[-25:])
        lines += [f"**Failed** (exit status {proc.returncode}); the end of its error output:", ""]
        lines += ["```", tail, "```"]
        return "\n".join(lines) + "\n\n" + footer(when, at, took)
    print(f"== {bench.name}: done in {_duration(took)}", file=sys.stderr, flush=True)
    lines.append(_as_markdown(out))
    return "\n".join(lines) + "\n\n" + footer(when, at, took)


def _as_markdown(out: str) -> str:
    """The script's output as printed, its own headings moved below the section's."""
    lines = [f"##{line}" if line.startswith("#") else line for line in out.strip().splitlines()]
    return "\n".join(lines)


def footer(when: str, at: str, took: float | None) -> str:
    """The run's start (and the load average then), how long it took, the commit it ran at,
    and the machine."""
    ran = f"{when}, {_duration(took)}" if took is not None else when
    return f"<sub>Run {ran}; commit {at}; {machine()}.</sub>"


# --- the page ---------------------------------------------------------------------------------


def begin(name: str) -> str:
    return f"<!-- benchmark {name}: generated by benchmarks/report.py -->"


def end(name: str) -> str:
    return f"<!-- end of benchmark {name} -->"


def existing_sections(page: Path) -> dict[str, str]:
    """Each section's text as the page has it now (between its two markers)."""
    text = page.read_text() if page.exists() else ""
    found = {}
    for bench in BENCHES:
        start, stop = text.find(begin(bench.name)), text.find(end(bench.name))
        if start != -1 and stop > start:
            found[bench.name] = text[start + len(begin(bench.name)) : stop].strip("\n")
    return found


def intro() -> str:
    about = "\n".join(f"- **{b.title}**: {b.about}" for b in BENCHES)
    return f"""# Benchmarks

What agentfs costs, each figure beside an anchor measured in the same run on the same machine:
another implementation, the host's own filesystem or tools, or the floor of what agentfs builds
on. Every section below is the output of one script under `benchmarks/`, as it printed it, with
the command that ran it and, under it, the machine, the date and the commit. Cells are medians
unless a table says otherwise. Why the design is what it is, and what was measured to choose
it, is on the page of each subsystem ([architecture.md](architecture.md),
[concurrency.md](concurrency.md), [history.md](history.md), [search.md](search.md),
[mcp.md](mcp.md), [mount.md](mount.md), [sync.md](sync.md), [security.md](security.md)).

{about}

The page is written by `benchmarks/report.py`, which `make bench` runs (about an hour and a
half on two cores, a fifth of it `tool_instructions.py` under valgrind). `--only mount,tools`
runs some of them (`make bench BENCH_ARGS="--only mount --keep"`), and with `--keep` the other
sections keep the text they have here; a benchmark whose prerequisites are missing
(`/dev/fuse`, the npm packages `make` installs, valgrind) is reported as skipped, with the
reason. Run one at a time on a machine that is otherwise idle: the anchors run beside agentfs,
but two benchmarks at once share the cores, and each footer gives the load average when its
run began. `benchmarks/wal_frames.py` (WAL frames per commit, by b-tree) and
`benchmarks/mount_requests.py` (where an untar's time goes in the mount, per FUSE request) look
inside one workload and have no anchor; they are run by hand, and what they showed is in
[history.md](history.md) and [mount.md](mount.md).
"""


def page(sections: dict[str, str]) -> str:
    parts = [intro()]
    for bench in BENCHES:
        body = sections.get(bench.name) or (
            f"Not run in this report: `benchmarks/report.py --only {bench.name} --keep` runs it"
            " and keeps the other sections."
        )
        section = f"## {bench.title}\n\n{_strip_title(body)}"
        parts.append(f"{begin(bench.name)}\n{section}\n{end(bench.name)}")
    return "\n\n".join(parts) + "\n"


def _strip_title(body: str) -> str:
    """A kept section's text without its heading (the page writes the current one)."""
    return re.sub(r"\A## [^\n]*\n+", "", body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated: " + ",".join(BY_NAME))
    parser.add_argument(
        "--keep", action="store_true", help="keep the other sections' text from the page"
    )
    parser.add_argument("--output", type=Path, default=PAGE, help="the page to write")
    parser.add_argument("--list", action="store_true", help="print the commands, run nothing")
    parser.add_argument(
        "--render",
        action="store_true",
        help="write the page again from the sections it has, running nothing",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small runs, to try the report itself (the page shows the commands run)",
    )
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per benchmark")
    args = parser.parse_args()
    chosen = [n for n in args.only.split(",") if n] or list(BY_NAME)
    unknown = [n for n in chosen if n not in BY_NAME]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    if args.list:
        for name in chosen:
            bench = BY_NAME[name]
            reason = bench.needs()
            skipped = f"  # skipped: {reason}" if reason else ""
            print(" ".join(command(bench, args.quick)) + skipped)
        return 0
    if args.render:
        args.output.write_text(page(existing_sections(args.output)))
        return 0
    sections = existing_sections(args.output) if args.keep else {}
    started = time.monotonic()
    for name in chosen:
        sections[name] = run(BY_NAME[name], args.quick, args.timeout)
        args.output.write_text(page(sections))  # after each one: a failure later keeps it
    print(f"== all done in {_duration(time.monotonic() - started)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
