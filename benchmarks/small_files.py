"""Small files and one large file: agentfs vs Turso's agentfs-sdk vs the host filesystem.

One workload, three implementations, one run, side by side:
  * write N files of 1 KiB spread over 20 directories (each write its own durable transaction:
    no batching), read them all, stat them all, list the 20 directories, delete them all;
  * a 100 MiB file written and read back in 1 MiB pieces (MB/s).
agentfs runs in this process through its Python API; the host filesystem through Python's
``open``/``os`` on a temporary directory on the same disk; agentfs-sdk in its own virtual
environment (.venv-peer, see tests/peer/README.md) through tests/peer/sdk_peer.py. Every cell is
the median of ``--runs`` runs, each on a fresh workspace / directory.

    .venv/bin/python benchmarks/small_files.py [--runs 3] [--sizes 1000,10000] [--json]
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
from collections.abc import Callable
from pathlib import Path

import agentfs

ROOT = Path(__file__).resolve().parent.parent
PEER = [str(ROOT / ".venv-peer" / "bin" / "python"), str(ROOT / "tests" / "peer" / "sdk_peer.py")]
DIRS = 20
FILE_BYTES = 1024
LARGE_MIB = 100
LISTDIR_ROUNDS = 10
SMALL_OPS = ("write", "read", "stat", "listdir", "delete")

#: Targets from the issue: (minimum ours/sdk, minimum ours/host).
TARGETS = {
    "write": (50, 0.5),
    "read": (50, 0.5),
    "stat": (50, 0.25),
    "listdir": (50, 0.25),
    "delete": (50, None),
}
LARGE_TARGETS = {"large write": 150.0, "large read": 300.0}  # MB/s

Timings = dict[str, float]  # op -> ops/s (or MB/s for the large file)


def _rate(count: int, fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return count / (time.perf_counter() - start)


def _names(n: int) -> list[tuple[str, str]]:
    return [(f"d{i % DIRS:02d}", f"f{i:06d}") for i in range(n)]


def agentfs_small(workdir: Path, n: int) -> Timings:
    data = os.urandom(FILE_BYTES)
    names = [f"/{d}/{f}" for d, f in _names(n)]
    dirs = [f"/d{i:02d}" for i in range(DIRS)] * LISTDIR_ROUNDS
    with agentfs.open(workdir / "bench.db") as ws:
        for i in range(DIRS):
            ws.mkdir(f"/d{i:02d}")
        return {
            "write": _rate(n, lambda: [ws.write(p, data) for p in names]),
            "read": _rate(n, lambda: [ws.read(p) for p in names]),
            "stat": _rate(n, lambda: [ws.stat(p) for p in names]),
            "listdir": _rate(len(dirs), lambda: [ws.listdir(d) for d in dirs]),
            "delete": _rate(n, lambda: [ws.remove(p) for p in names]),
        }


def host_small(workdir: Path, n: int) -> Timings:
    data = os.urandom(FILE_BYTES)
    root = workdir / "host"
    names = [str(root / d / f) for d, f in _names(n)]
    dirs = [str(root / f"d{i:02d}") for i in range(DIRS)] * LISTDIR_ROUNDS
    for i in range(DIRS):
        os.makedirs(root / f"d{i:02d}")

    def write() -> None:
        for p in names:
            with open(p, "wb") as f:
                f.write(data)

    def read() -> None:
        for p in names:
            with open(p, "rb") as f:
                f.read()

    return {
        "write": _rate(n, write),
        "read": _rate(n, read),
        "stat": _rate(n, lambda: [os.stat(p) for p in names]),
        "listdir": _rate(len(dirs), lambda: [os.listdir(d) for d in dirs]),
        "delete": _rate(n, lambda: [os.remove(p) for p in names]),
    }


def agentfs_large(workdir: Path) -> Timings:
    piece = os.urandom(1 << 20)
    with agentfs.open(workdir / "large.db") as ws:
        w = _rate(LARGE_MIB, lambda: [ws.pwrite("/big", piece, i << 20) for i in range(LARGE_MIB)])
        r = _rate(LARGE_MIB, lambda: [ws.read("/big", i << 20, 1 << 20) for i in range(LARGE_MIB)])
    return {"large write": w * 1.048576, "large read": r * 1.048576}


def host_large(workdir: Path) -> Timings:
    piece = os.urandom(1 << 20)
    fd = os.open(workdir / "big", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        w = _rate(LARGE_MIB, lambda: [os.pwrite(fd, piece, i << 20) for i in range(LARGE_MIB)])
        r = _rate(LARGE_MIB, lambda: [os.pread(fd, 1 << 20, i << 20) for i in range(LARGE_MIB)])
    finally:
        os.close(fd)
    return {"large write": w * 1.048576, "large read": r * 1.048576}


def sdk_run(workdir: Path, n: int, large: bool) -> Timings:
    args = ["bench", str(workdir), "--files", str(n), "--dirs", str(DIRS)]
    args += ["--size", str(FILE_BYTES)] + (["--large-mib", str(LARGE_MIB)] if large else [])
    proc = subprocess.run(PEER + args, capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)
    names = {"write_small": "write", "read_small": "read", "stat": "stat", "listdir": "listdir"}
    names["delete"] = "delete"
    timings = {ours: out[theirs]["ops_per_s"] for theirs, ours in names.items()}
    if large:  # one whole-file call each: the SDK's Python API has no pread/pwrite
        timings["large write"] = out["write_large"]["mib_per_s"] * 1.048576
        timings["large read"] = out["read_large"]["mib_per_s"] * 1.048576
    return timings


def median_of(runs: int, fn: Callable[[Path], Timings]) -> Timings:
    samples: list[Timings] = []
    for _ in range(runs):
        workdir = Path(tempfile.mkdtemp(prefix="agentfs-bench-"))
        try:
            samples.append(fn(workdir))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return {op: statistics.median(s[op] for s in samples) for op in samples[0]}


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("ok" if ok else "MISS")


def render(results: dict[str, dict[str, Timings]], runs: int) -> str:
    lines = [
        f"small files: {FILE_BYTES} B each over {DIRS} dirs; ops/s, median of {runs} runs",
        "",
        "| files | op | agentfs | agentfs-sdk | host fs | vs sdk | vs host | target |",
        "|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for size, by_impl in results.items():
        if size == "large":
            continue
        ours, sdk, host = by_impl["agentfs"], by_impl.get("sdk"), by_impl["host"]
        for op in SMALL_OPS:
            want_sdk, want_host = TARGETS[op]
            vs_sdk = ours[op] / sdk[op] if sdk else None
            vs_host = ours[op] / host[op]
            ok_sdk = vs_sdk is None or vs_sdk >= want_sdk
            ok = ok_sdk and (want_host is None or vs_host >= want_host)
            target = f">= {want_sdk}x sdk" + (f", >= {want_host}x host" if want_host else "")
            lines.append(
                f"| {size} | {op} | {ours[op]:,.0f} | {sdk[op]:,.0f} | {host[op]:,.0f} | "
                f"{vs_sdk:,.0f}x | {vs_host:.2f}x | {target} {_verdict(ok)} |"
                if sdk
                else f"| {size} | {op} | {ours[op]:,.0f} | - | {host[op]:,.0f} | - | "
                f"{vs_host:.2f}x | {target} {_verdict(ok)} |"
            )
    large = results.get("large")
    if large:
        lines += [
            "",
            f"large file: {LARGE_MIB} MiB in 1 MiB pieces; MB/s, median of {runs} runs",
            "",
            "| op | agentfs | agentfs-sdk (whole file) | host fs | vs sdk | vs host | target |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for op, want in LARGE_TARGETS.items():
            ours, host = large["agentfs"][op], large["host"][op]
            sdk = large.get("sdk", {}).get(op)
            sdk_value, vs_sdk = (f"{sdk:,.0f}", f"{ours / sdk:.1f}x") if sdk else ("-", "-")
            lines.append(
                f"| {op} | {ours:,.0f} | {sdk_value} | {host:,.0f} | {vs_sdk} | "
                f"{ours / host:.2f}x | >= {want:.0f} MB/s {_verdict(ours >= want)} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per cell (median is shown)")
    parser.add_argument("--sdk-runs", type=int, default=1, help="runs of agentfs-sdk per size")
    parser.add_argument("--sizes", default="1000,10000", help="file counts, comma-separated")
    parser.add_argument("--no-sdk", action="store_true", help="skip agentfs-sdk (faster)")
    parser.add_argument("--json", action="store_true", help="print the raw medians as JSON")
    args = parser.parse_args()

    results: dict[str, dict[str, Timings]] = {}
    sizes = [int(s) for s in args.sizes.split(",")]
    for n in sizes:
        print(f"running {n} files ...", file=sys.stderr)
        results[str(n)] = {
            "agentfs": median_of(args.runs, lambda d, n=n: agentfs_small(d, n)),
            "host": median_of(args.runs, lambda d, n=n: host_small(d, n)),
        }
        if not args.no_sdk:
            results[str(n)]["sdk"] = median_of(args.sdk_runs, lambda d, n=n: sdk_run(d, n, False))
    print("running the large file ...", file=sys.stderr)
    results["large"] = {
        "agentfs": median_of(args.runs, agentfs_large),
        "host": median_of(args.runs, host_large),
    }
    if not args.no_sdk:
        results["large"]["sdk"] = median_of(args.sdk_runs, lambda d: sdk_run(d, 100, True))
        results["large"]["sdk"] = {k: results["large"]["sdk"][k] for k in LARGE_TARGETS}
    print(json.dumps(results, indent=2) if args.json else render(results, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
