"""Small files and one large file: agentfs vs Turso's agentfs-sdk vs the host filesystem.

One workload, five implementations, one run, side by side:
  * create N files of 1 KiB spread over 20 directories (each write its own durable
    transaction: no batching), overwrite them all, read them all, stat them all, list the 20
    directories, delete them all. agentfs twice: as users get it (history and indexing on)
    and plain (both off); and two raw SQLite floors: the same rows changed by hand-written
    apsw statements on a workspace file, one transaction per file, without history and
    with the rows a version adds (the floor of the full-featured write, which "agentfs" is
    compared with too);
  * a 100 MiB file written in 1 MiB pieces through ``ws.open()`` (one commit and one
    version at close; the host: a buffered ``open``), then through 1 MiB ``pwrite`` calls
    (a transaction each), and read back in 1 MiB pieces (MB/s).
agentfs runs in this process through its Python API; the host filesystem through Python's
``open``/``os`` on a temporary directory on the same disk; agentfs-sdk in its own virtual
environment (.venv-peer, see tests/peer/README.md) through tests/peer/sdk_peer.py. Every cell is
the median of ``--runs`` runs, each on a fresh workspace / directory.

    .venv/bin/python benchmarks/small_files.py [--runs 3] [--sizes 1000,10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import apsw

import agentfs
from agentfs import db as adb
from agentfs.core.digests import digest

ROOT = Path(__file__).resolve().parent.parent
PEER = [str(ROOT / ".venv-peer" / "bin" / "python"), str(ROOT / "tests" / "peer" / "sdk_peer.py")]
DIRS = 20
FILE_BYTES = 1024
LARGE_MIB = 100
LISTDIR_ROUNDS = 10
SMALL_OPS = ("create", "overwrite", "read", "stat", "listdir", "delete")
#: Operations whose cost history and indexing add to (the "everything on" targets).
WRITES = ("create", "overwrite", "delete")

#: Targets: (minimum ours/sdk, minimum ours/host).
TARGETS = {
    "create": (50, 0.5),
    "overwrite": (50, 0.5),
    "read": (50, 0.5),
    "stat": (50, 0.25),
    "listdir": (50, 0.25),
    "delete": (50, None),
}
#: Writes with history and indexing on vs off, and the plain path vs the raw SQLite floor.
EVERYTHING_ON, PLAIN_VS_RAW = 0.7, 0.85
LARGE_TARGETS = {  # MB/s
    "large write, ws.open": 250.0,
    "large write": 150.0,
    "large read": 1000.0,
}

Timings = dict[str, float]  # op -> ops/s (or MB/s for the large file)


def _rate(count: int, fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return count / (time.perf_counter() - start)


def _names(n: int) -> list[tuple[str, str]]:
    return [(f"d{i % DIRS:02d}", f"f{i:06d}") for i in range(n)]


def agentfs_small(workdir: Path, n: int, plain: bool = False) -> Timings:
    """Each operation through the Python API, one transaction each; ``plain``: with history
    and indexing off (``keep="none"``, ``configure_index(enabled=False)``)."""
    data, other = os.urandom(FILE_BYTES), os.urandom(FILE_BYTES)
    names = [f"/{d}/{f}" for d, f in _names(n)]
    dirs = [f"/d{i:02d}" for i in range(DIRS)] * LISTDIR_ROUNDS
    with agentfs.open(workdir / "bench.db") as ws:
        if plain:
            ws.configure_history(keep="none")
            ws.configure_index(enabled=False)
        for i in range(DIRS):
            ws.mkdir(f"/d{i:02d}")
        return {
            "create": _rate(n, lambda: [ws.write(p, data) for p in names]),
            "overwrite": _rate(n, lambda: [ws.write(p, other) for p in names]),
            "read": _rate(n, lambda: [ws.read(p) for p in names]),
            "stat": _rate(n, lambda: [ws.stat(p) for p in names]),
            "listdir": _rate(len(dirs), lambda: [ws.listdir(d) for d in dirs]),
            "delete": _rate(n, lambda: [ws.remove(p) for p in names]),
        }


_RAW_TOUCH = "UPDATE fs_inode SET mtime = ?, ctime = ? WHERE ino = ?"


def _raw_workspace(path: Path) -> tuple[apsw.Connection, dict[str, int]]:
    """A new workspace file opened as a bare connection, with the benchmark's directories
    (made by hand); their inodes by name."""
    agentfs.open(path).close()
    conn = adb.connect(path)
    dirs: dict[str, int] = {}
    for i in range(DIRS):
        name = f"d{i:02d}"
        with conn:
            ino = conn.execute(
                "INSERT INTO fs_inode(mode, nlink, uid, gid, size, atime, mtime, ctime)"
                " VALUES (16877, 2, 0, 0, 0, 0, 0, 0) RETURNING ino"
            ).get
            conn.execute(
                "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES (?, 1, ?)", (name, ino)
            )
        dirs[name] = ino  # type: ignore[assignment]
    return conn, dirs


def _raw_create(conn: apsw.Connection, parent: int, name: str, data: bytes, now: int) -> int:
    """The rows of a new 1-chunk file: inode, name, the parent's times, the chunk."""
    ino: int = conn.execute(
        "INSERT INTO fs_inode(mode, nlink, uid, gid, size, atime, mtime, ctime)"
        " VALUES (33188, 1, 0, 0, ?, ?, ?, ?) RETURNING ino",
        (len(data), now, now, now),
    ).get  # type: ignore[assignment]
    conn.execute(
        "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES (?, ?, ?)", (name, parent, ino)
    )
    conn.execute(_RAW_TOUCH, (now, now, parent))
    conn.execute("INSERT INTO fs_data(ino, chunk_index, data) VALUES (?, 0, ?)", (ino, data))
    return ino


def raw_small(workdir: Path, n: int) -> Timings:
    """The floor of this schema on this disk: the rows a plain write, read or delete
    changes, by hand-written apsw statements, one transaction per file, on a workspace file
    (same pragmas, tables, indexes and triggers), with no path resolution, no cache, no
    history and no Python objects in between."""
    conn, dirs = _raw_workspace(workdir / "raw.db")
    data, other = os.urandom(FILE_BYTES), os.urandom(FILE_BYTES)
    names = [(dirs[d], f) for d, f in _names(n)]
    lookup = "SELECT ino FROM fs_dentry WHERE parent_ino = ? AND name = ?"
    content = "SELECT data FROM fs_data WHERE ino = ? ORDER BY chunk_index"

    def create() -> None:
        for parent, name in names:
            with conn:
                _raw_create(conn, parent, name, data, int(time.time()))

    def overwrite() -> None:
        for parent, name in names:
            with conn:
                now = int(time.time())
                ino = conn.execute(lookup, (parent, name)).get
                conn.execute(
                    "UPDATE fs_data SET data = ? WHERE ino = ? AND chunk_index = 0", (other, ino)
                )
                conn.execute(
                    "UPDATE fs_inode SET size = ?, mtime = ?, ctime = ? WHERE ino = ?",
                    (FILE_BYTES, now, now, ino),
                )

    def read() -> None:
        for parent, name in names:
            ino = conn.execute(lookup, (parent, name)).get
            conn.execute(content, (ino,)).fetchall()

    def stat() -> None:
        for parent, name in names:
            conn.execute(
                "SELECT * FROM fs_inode WHERE ino = (SELECT ino FROM fs_dentry"
                " WHERE parent_ino = ? AND name = ?)",
                (parent, name),
            ).fetchall()

    def listdir() -> None:
        for ino in list(dirs.values()) * LISTDIR_ROUNDS:
            conn.execute("SELECT name FROM fs_dentry WHERE parent_ino = ?", (ino,)).fetchall()

    def delete() -> None:
        for parent, name in names:
            with conn:
                now = int(time.time())
                ino = conn.execute(
                    "DELETE FROM fs_dentry WHERE parent_ino = ? AND name = ? RETURNING ino",
                    (parent, name),
                ).get
                conn.execute(_RAW_TOUCH, (now, now, parent))
                conn.execute("DELETE FROM fs_data WHERE ino = ?", (ino,))
                conn.execute("DELETE FROM fs_inode WHERE ino = ?", (ino,))

    try:
        return {
            "create": _rate(n, create),
            "overwrite": _rate(n, overwrite),
            "read": _rate(n, read),
            "stat": _rate(n, stat),
            "listdir": _rate(DIRS * LISTDIR_ROUNDS, listdir),
            "delete": _rate(n, delete),
        }
    finally:
        conn.close()


def raw_versioned_small(workdir: Path, n: int) -> Timings:
    """The floor of a versioned create, overwrite and delete: what ``raw_small`` does, plus
    the rows history must write, by the design agentfs uses (docs/history.md): the path's
    newest version looked up, the old bytes kept aside (``ws_kept``) for the version that
    named the inode, a version row (its digest computed), a delete recorded as an event and
    the inode kept for its versions."""
    conn, dirs = _raw_workspace(workdir / "rawv.db")
    data, other = os.urandom(FILE_BYTES), os.urandom(FILE_BYTES)
    names = [(dirs[d], f, f"/{d}/{f}") for d, f in _names(n)]
    latest = "SELECT n, ino FROM ws_version WHERE path = ? ORDER BY n DESC LIMIT 1"
    version = (
        "INSERT INTO ws_version(path, n, op, ino, size, hash, at_ns) VALUES (?, ?, ?, ?, ?, ?, ?)"
    )

    def create() -> None:
        for parent, name, key in names:
            with conn:
                now = time.time_ns()
                ino = _raw_create(conn, parent, name, data, now)
                row = conn.execute(latest, (key,)).get
                n_ = 1 if row is None else row[0] + 1
                conn.execute(version, (key, n_, "write", ino, FILE_BYTES, digest(data), now))

    def overwrite() -> None:
        for parent, name, key in names:
            with conn:
                now = time.time_ns()
                ino = conn.execute(
                    "SELECT ino FROM fs_dentry WHERE parent_ino = ? AND name = ?", (parent, name)
                ).get
                n_, _ = conn.execute(latest, (key,)).get
                for row_path, row_n in conn.execute(
                    "SELECT path, n FROM ws_version WHERE ino = ?", (ino,)
                ).fetchall():
                    old = conn.execute(
                        "SELECT data FROM fs_data WHERE ino = ? AND chunk_index = 0", (ino,)
                    ).get
                    kept = conn.execute(
                        "INSERT INTO ws_kept(data) VALUES (?) RETURNING id", (old,)
                    ).get
                    conn.execute(
                        "UPDATE ws_version SET ino = NULL, kept = ? WHERE path = ? AND n = ?",
                        (kept, row_path, row_n),
                    )
                conn.execute(
                    "UPDATE fs_data SET data = ? WHERE ino = ? AND chunk_index = 0", (other, ino)
                )
                conn.execute(
                    "UPDATE fs_inode SET size = ?, mtime = ?, ctime = ? WHERE ino = ?",
                    (FILE_BYTES, now, now, ino),
                )
                conn.execute(version, (key, n_ + 1, "write", ino, FILE_BYTES, digest(other), now))

    def delete() -> None:
        for parent, name, key in names:
            with conn:
                now = time.time_ns()
                n_, _ = conn.execute(latest, (key,)).get
                conn.execute(
                    "INSERT INTO ws_version(path, n, op, at_ns) VALUES (?, ?, 'delete', ?)",
                    (key, n_ + 1, now),
                )
                ino = conn.execute(
                    "DELETE FROM fs_dentry WHERE parent_ino = ? AND name = ? RETURNING ino",
                    (parent, name),
                ).get
                conn.execute(_RAW_TOUCH, (now, now, parent))
                conn.execute("UPDATE fs_inode SET nlink = 0, ctime = ? WHERE ino = ?", (now, ino))

    try:
        return {
            "create": _rate(n, create),
            "overwrite": _rate(n, overwrite),
            "delete": _rate(n, delete),
        }
    finally:
        conn.close()


def host_small(workdir: Path, n: int) -> Timings:
    data, other = os.urandom(FILE_BYTES), os.urandom(FILE_BYTES)
    root = workdir / "host"
    names = [str(root / d / f) for d, f in _names(n)]
    dirs = [str(root / f"d{i:02d}") for i in range(DIRS)] * LISTDIR_ROUNDS
    for i in range(DIRS):
        os.makedirs(root / f"d{i:02d}")

    def write(content: bytes) -> None:
        for p in names:
            with open(p, "wb") as f:
                f.write(content)

    def read() -> None:
        for p in names:
            with open(p, "rb") as f:
                f.read()

    return {
        "create": _rate(n, lambda: write(data)),
        "overwrite": _rate(n, lambda: write(other)),
        "read": _rate(n, read),
        "stat": _rate(n, lambda: [os.stat(p) for p in names]),
        "listdir": _rate(len(dirs), lambda: [os.listdir(d) for d in dirs]),
        "delete": _rate(n, lambda: [os.remove(p) for p in names]),
    }


def agentfs_large(workdir: Path) -> Timings:
    """100 MiB as users get it (history on): written through ``ws.open()`` in 1 MiB writes
    (one version, one commit at close), then through 1 MiB ``pwrite`` calls (a transaction
    each), read back in 1 MiB ``read`` calls."""
    piece = os.urandom(1 << 20)
    with agentfs.open(workdir / "large.db") as ws:

        def stream() -> None:
            with ws.open("/stream", "wb") as f:
                for _ in range(LARGE_MIB):
                    f.write(piece)

        s = _rate(LARGE_MIB, stream)
        w = _rate(LARGE_MIB, lambda: [ws.pwrite("/big", piece, i << 20) for i in range(LARGE_MIB)])
        r = _rate(LARGE_MIB, lambda: [ws.read("/big", i << 20, 1 << 20) for i in range(LARGE_MIB)])
    return {
        "large write, ws.open": s * 1.048576,
        "large write": w * 1.048576,
        "large read": r * 1.048576,
    }


def host_large(workdir: Path) -> Timings:
    piece = os.urandom(1 << 20)

    def stream() -> None:
        with open(workdir / "stream", "wb") as f:
            for _ in range(LARGE_MIB):
                f.write(piece)

    s = _rate(LARGE_MIB, stream)
    fd = os.open(workdir / "big", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        w = _rate(LARGE_MIB, lambda: [os.pwrite(fd, piece, i << 20) for i in range(LARGE_MIB)])
        r = _rate(LARGE_MIB, lambda: [os.pread(fd, 1 << 20, i << 20) for i in range(LARGE_MIB)])
    finally:
        os.close(fd)
    return {
        "large write, ws.open": s * 1.048576,
        "large write": w * 1.048576,
        "large read": r * 1.048576,
    }


def sdk_run(workdir: Path, n: int, large: bool) -> Timings:
    args = ["bench", str(workdir), "--files", str(n), "--dirs", str(DIRS)]
    args += ["--size", str(FILE_BYTES)] + (["--large-mib", str(LARGE_MIB)] if large else [])
    proc = subprocess.run(PEER + args, capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)
    names = {"write_small": "create", "read_small": "read", "stat": "stat", "listdir": "listdir"}
    names["delete"] = "delete"
    timings = {ours: out[theirs]["ops_per_s"] for theirs, ours in names.items()}
    timings["overwrite"] = float("nan")  # the peer's bench creates each file once
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


def _num(value: float, unit: str = "") -> str:
    return "-" if math.isnan(value) else f"{value:,.0f}{unit}"


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("ok" if ok else "MISS")


def render(results: dict[str, dict[str, Timings]], runs: int) -> str:
    lines = [
        f"small files: {FILE_BYTES} B each over {DIRS} dirs; ops/s, median of {runs} runs;"
        " each operation its own transaction. agentfs: as users get it (history and indexing"
        " on); plain: both off; raw SQLite: the same rows by hand-written statements (raw"
        " versioned: with the rows a version adds, the floor of the full-featured write)",
        "",
        "| files | op | agentfs | plain | raw SQLite | raw versioned | agentfs-sdk | host fs"
        " | agentfs / plain | plain / raw | agentfs / raw versioned | vs sdk | vs host | target |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for size, by_impl in results.items():
        if size == "large":
            continue
        ours, plain, raw = by_impl["agentfs"], by_impl["plain"], by_impl["raw"]
        raw_v = by_impl["raw versioned"]
        sdk, host = by_impl.get("sdk"), by_impl["host"]
        for op in SMALL_OPS:
            want_sdk, want_host = TARGETS[op]
            peer = sdk[op] if sdk else math.nan
            vs_sdk, vs_host = ours[op] / peer, ours[op] / host[op]
            on, floor = ours[op] / plain[op], plain[op] / raw[op]
            ok = (math.isnan(vs_sdk) or vs_sdk >= want_sdk) and (
                want_host is None or vs_host >= want_host
            )
            target = f">= {want_sdk}x sdk" + (f", >= {want_host}x host" if want_host else "")
            if op in WRITES:
                ok = ok and on >= EVERYTHING_ON and floor >= PLAIN_VS_RAW
                target += f", >= {EVERYTHING_ON}x plain, plain >= {PLAIN_VS_RAW}x raw"
            floor_v = raw_v.get(op, math.nan)
            lines.append(
                f"| {size} | {op} | {ours[op]:,.0f} | {plain[op]:,.0f} | {raw[op]:,.0f} | "
                f"{_num(floor_v)} | {_num(peer)} | {host[op]:,.0f} | {on:.2f}x | {floor:.2f}x | "
                f"{_num(ours[op] / floor_v * 100, '%')} | {_num(vs_sdk, 'x')} | {vs_host:.2f}x |"
                f" {target} {_verdict(ok)} |"
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
            "plain": median_of(args.runs, lambda d, n=n: agentfs_small(d, n, plain=True)),
            "raw": median_of(args.runs, lambda d, n=n: raw_small(d, n)),
            "raw versioned": median_of(args.runs, lambda d, n=n: raw_versioned_small(d, n)),
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
        sdk = results["large"]["sdk"]
        results["large"]["sdk"] = {k: sdk[k] for k in ("large write", "large read")}
    print(json.dumps(results, indent=2) if args.json else render(results, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
