"""Where an untar's time goes in the mount: the FUSE requests each file costs, each handler's
mean time, the daemon's CPU, and the SQL statements behind them.

``benchmarks/mount.py`` times whole workloads against bindfs; this one looks inside the one
that is furthest from it in memory (untar of an npm-like tree). The daemon runs with every
request handler of ``WorkspaceOperations`` wrapped to count and time it, and every SQL
statement its connections run counted (an apsw connection hook), then ``tar xf`` runs in the
mount once. What the handlers do not cover (pyfuse3's and libfuse's own work per request,
trio, the kernel's round trips) is the wall time less the handlers' total. The wrapping adds
a few microseconds a request, so the wall time here is a little over mount.py's.

    .venv/bin/python benchmarks/mount_requests.py [--files 10000] [--scratch /dev/shm]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mount import npm_tree

import agentfs

#: The daemon: handlers and statements counted, the counts written to $COUNTS at exit.
DAEMON = """
import atexit, collections, functools, inspect, json, os, sys, time
import apsw, pyfuse3
from agentfs.mount import operations
calls, spent, statements = collections.Counter(), collections.Counter(), collections.Counter()
def timed(name, handler):
    @functools.wraps(handler)
    async def wrapper(*args, **kwargs):
        start = time.perf_counter_ns()
        try:
            return await handler(*args, **kwargs)
        finally:
            calls[name] += 1
            spent[name] += time.perf_counter_ns() - start
    return wrapper
for name in vars(pyfuse3.Operations):  # the request handlers
    handler = getattr(operations.WorkspaceOperations, name)
    if not name.startswith("_") and inspect.iscoroutinefunction(handler):
        setattr(operations.WorkspaceOperations, name, timed(name, handler))
def traced(conn):
    def count(cursor, sql, bindings):
        statements[" ".join(sql.split())[:90]] += 1
        return True
    conn.exec_trace = count
apsw.connection_hooks.append(traced)
def dump():
    with open(os.environ["COUNTS"], "w") as out:
        json.dump({"calls": calls, "spent_ns": spent, "statements": statements}, out)
atexit.register(dump)
from agentfs.cli import main
sys.argv = ["agentfs", "mount", *sys.argv[1:], "--foreground"]
main()
"""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(files: int, scratch: Path) -> tuple[float, float, dict[str, dict[str, int]]]:
    """(wall seconds of the untar, the daemon's CPU seconds meanwhile, the counts)."""
    tree = npm_tree(scratch, files)
    db, mnt, counts = scratch / "ws.db", scratch / "mnt", scratch / "counts.json"
    agentfs.open(db).close()
    mnt.mkdir()
    daemon = subprocess.Popen(
        [sys.executable, "-c", DAEMON, str(db), str(mnt)], env={**os.environ, "COUNTS": str(counts)}
    )
    try:
        for _ in range(300):
            if os.path.ismount(mnt):
                break
            time.sleep(0.05)
        else:
            sys.exit("the mount did not come up")
        cpu = _cpu_seconds(daemon.pid)
        start = time.perf_counter()
        subprocess.run(["tar", "xf", str(tree)], cwd=mnt, check=True)
        wall = time.perf_counter() - start
        cpu = _cpu_seconds(daemon.pid) - cpu
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False)
        daemon.wait()
    return wall, cpu, json.loads(counts.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--scratch", default="/dev/shm", help="where the workspace file lives")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-requests-", dir=args.scratch) as tmp:
        wall, cpu, counts = measure(args.files, Path(tmp))
    calls, spent = counts["calls"], counts["spent_ns"]
    handlers = sum(spent.values()) / 1e9
    print(f"untar of {args.files:,} files: {wall:.2f} s wall, daemon CPU {cpu:.2f} s")
    rest = wall - handlers
    print(f"handlers {handlers:.2f} s; the rest (pyfuse3, trio, the kernel) {rest:.2f} s")
    print(f"requests {sum(calls.values()):,}, {sum(calls.values()) / args.files:.1f} a file\n")
    print("| request | calls | a file | mean µs | total s |")
    print("|---|---:|---:|---:|---:|")
    for name, n in sorted(calls.items(), key=lambda item: -spent[item[0]]):
        print(
            f"| {name} | {n:,} | {n / args.files:.2f} | {spent[name] / n / 1e3:.1f} |"
            f" {spent[name] / 1e9:.2f} |"
        )
    statements = counts["statements"]
    print(f"\nSQL statements: {sum(statements.values()) / args.files:.1f} a file; the most run:\n")
    print("| statement | a file |")
    print("|---|---:|")
    for sql, n in sorted(statements.items(), key=lambda item: -item[1])[:12]:
        print(f"| `{sql}` | {n / args.files:.2f} |")


if __name__ == "__main__":
    main()
