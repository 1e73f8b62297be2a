"""History: snapshots, restores and versioned writes, against cp -a / rsync --delete on the host.

For each file size (1 KiB and 100 KiB), one workspace of N files (default 10,000 over 100
directories) and the same tree on the host disk, then, side by side in one run:
  * first snapshot: ``snapshots.create`` vs ``cp -a`` of the whole tree;
  * 100 rounds of "change 10 files, snapshot": median and p95 time per snapshot, and how much
    the database grew beyond the changed bytes themselves (everything but fs_data's pages:
    inode rows, versions, snapshot entries), vs one ``cp -a`` per round (timed for a few
    rounds; its growth is the whole tree each time);
  * restore to a snapshot 10 changes away vs ``rsync -a --delete`` from that copy;
  * restore of the whole tree (every file removed first) vs ``rsync -a --delete`` into an
    empty directory;
  * a write with versioning on vs off (2,000 overwrites each, interleaved runs, medians), for
    two kinds of overwrite: the first line edited (same length) and every byte rewritten.

    .venv/bin/python benchmarks/history.py [--files 10000] [--sizes 1024,102400] [--rounds 100]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import apsw

import agentfs

DIRS = 100
CHANGED = 10
HOST_ROUNDS = 3  # cp -a rounds timed (each copies the whole tree)
WRITE_FILES = 2000
WRITE_RUNS = 5


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _path(i: int) -> str:
    return f"/d{i % DIRS:03d}/f{i:06d}.txt"


def _content(i: int, size: int, round_: int = 0) -> bytes:
    head = f"file {i} round {round_}\n".encode()
    return head + bytes(size - len(head)) if size > len(head) else head[:size]


def _checkpoint(ws: agentfs.Workspace) -> None:
    """A TRUNCATE checkpoint, tried again while the workspace's background checkpointer runs
    one (SQLite then answers BUSY at once, without waiting)."""
    for _ in range(200):
        try:
            ws.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
            return
        except apsw.BusyError:
            time.sleep(0.05)
    ws.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)


def _metadata_bytes(ws: agentfs.Workspace) -> int:
    """Bytes of the database in use outside file content: pages in use (the free list
    excluded) minus the pages of fs_data and its key index, which hold the bytes themselves."""
    _checkpoint(ws)
    pages = ws.conn.execute("PRAGMA page_count").get - ws.conn.execute("PRAGMA freelist_count").get
    content = ws.conn.execute(
        "SELECT coalesce(sum(pgsize), 0) FROM dbstat"
        " WHERE name IN ('fs_data', 'sqlite_autoindex_fs_data_1')"
    ).get
    return pages * ws.conn.execute("PRAGMA page_size").get - content


def _host_write(root: Path, rel: str, data: bytes) -> None:
    target = root / rel.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _run(*cmd: str | Path) -> None:
    subprocess.run([str(c) for c in cmd], check=True)


def _du(path: Path) -> int:
    return int(
        subprocess.run(
            ["du", "-sb", str(path)], capture_output=True, text=True, check=True
        ).stdout.split()[0]
    )


def bench_size(workdir: Path, files: int, size: int, rounds: int) -> dict[str, float]:
    rng = random.Random(size)
    ws = agentfs.open(workdir / "ws.db")
    live = workdir / "live"
    with ws.transaction():
        for i in range(files):
            ws.write(_path(i), _content(i, size), parents=True)
    for i in range(files):
        _host_write(live, _path(i), _content(i, size))
    out: dict[str, float] = {}

    out["first snapshot s"] = _timed(lambda: ws.snapshots.create("s0"))
    out["cp -a first s"] = _timed(lambda: _run("cp", "-a", live, workdir / "snap0"))

    times: list[float] = []
    before = _metadata_bytes(ws)
    for r in range(1, rounds + 1):
        for i in rng.sample(range(files), CHANGED):
            ws.write(_path(i), _content(i, size, r))
        times.append(_timed(lambda r=r: ws.snapshots.create(f"s{r}")))
    out["snapshot after 10 changes ms (median)"] = statistics.median(times) * 1000
    out["snapshot after 10 changes ms (p95)"] = sorted(times)[int(len(times) * 0.95) - 1] * 1000
    out["growth beyond changed bytes KiB"] = (_metadata_bytes(ws) - before) / 1024
    host_times = []
    for r in range(1, HOST_ROUNDS + 1):
        for i in rng.sample(range(files), CHANGED):
            _host_write(live, _path(i), _content(i, size, r))
        host_times.append(_timed(lambda r=r: _run("cp", "-a", live, workdir / f"snap{r}")))
    out["cp -a snapshot ms (median)"] = statistics.median(host_times) * 1000
    out["cp -a growth per snapshot KiB"] = _du(workdir / "snap1") / 1024

    # restore 10 changes away: snapshot A, change 10 files, restore A
    ws.snapshots.create("near")
    shutil.rmtree(workdir / "snap1")
    _run("cp", "-a", live, workdir / "near")
    for i in rng.sample(range(files), CHANGED):
        ws.write(_path(i), _content(i, size, 999))
        _host_write(live, _path(i), _content(i, size, 999))
    out["restore 10 changes ms"] = _timed(lambda: ws.snapshots.restore("near")) * 1000
    out["rsync 10 changes ms"] = (
        _timed(lambda: _run("rsync", "-a", "--delete", f"{workdir / 'near'}/", f"{live}/")) * 1000
    )

    # restore the whole tree: everything removed, then back from s0
    for d in range(DIRS):
        ws.remove(f"/d{d:03d}", recursive=True)
    shutil.rmtree(live)
    live.mkdir()
    out["restore whole tree s"] = _timed(lambda: ws.snapshots.restore("s0"))
    out["rsync whole tree s"] = _timed(
        lambda: _run("rsync", "-a", "--delete", f"{workdir / 'snap0'}/", f"{live}/")
    )
    assert ws.read(_path(0)) == _content(0, size)
    ws.close()
    out.update(versioned_write_cost(workdir, size))
    return out


def _rewritten(i: int, size: int) -> bytes:
    """New content of file ``i`` with every byte changed (a regenerated file)."""
    return random.Random(i).randbytes(size)


def versioned_write_cost(workdir: Path, size: int) -> dict[str, float]:
    """Overwrites per second with versioning on and off, interleaved runs, medians; two kinds
    of overwrite: an edit of the first line (same length: SQLite rewrites only the pages whose
    bytes changed, so an unversioned write of a large file costs about one page) and a
    rewrite of every byte. The new contents are made before the clock starts."""
    edits = [_content(i, size, 1) for i in range(WRITE_FILES)]
    rewrites = [_rewritten(i, size) for i in range(WRITE_FILES)]
    rates: dict[tuple[str, str], list[float]] = {}
    for run in range(WRITE_RUNS):
        for kind, new in (("edit", edits), ("rewrite", rewrites)):
            for keep in ("none", "all"):
                path = workdir / f"w-{keep}-{run}.db"
                with agentfs.open(path) as ws:
                    ws.configure_history(keep=keep)
                    for i in range(WRITE_FILES):
                        ws.write(_path(i), _content(i, size), parents=True)
                    elapsed = _timed(
                        lambda ws=ws, new=new: [
                            ws.write(_path(i), new[i]) for i in range(WRITE_FILES)
                        ]
                    )
                    rates.setdefault((kind, keep), []).append(WRITE_FILES / elapsed)
                path.unlink()
                for side in ("-wal", "-shm"):
                    Path(f"{path}{side}").unlink(missing_ok=True)
    out = {}
    for kind in ("edit", "rewrite"):
        on = statistics.median(rates[(kind, "all")])
        off = statistics.median(rates[(kind, "none")])
        out[f"{kind}: write versioned /s"] = on
        out[f"{kind}: write unversioned /s"] = off
        out[f"versioning cost x ({kind})"] = off / on
    return out


#: (our metric, the host's, target for ours, how ours must compare)
ROWS = (
    ("first snapshot s", "cp -a first s", 1.0),
    ("snapshot after 10 changes ms (median)", "cp -a snapshot ms (median)", 50.0),
    ("snapshot after 10 changes ms (p95)", None, None),
    ("growth beyond changed bytes KiB", "cp -a growth per snapshot KiB", 1024.0),
    ("restore 10 changes ms", "rsync 10 changes ms", 100.0),
    ("restore whole tree s", "rsync whole tree s", 2.0),
    ("versioning cost x (edit)", None, 1.3),
    ("versioning cost x (rewrite)", None, 1.3),
)


def render(results: dict[int, dict[str, float]], files: int, rounds: int) -> str:
    lines = [
        f"history: {files:,} files over {DIRS} dirs, {rounds} snapshots of {CHANGED} changed"
        " files each; lower is better",
        "",
        "| file size | metric | agentfs | cp -a / rsync | ours / host | target |",
        "|---:|---|---:|---:|---:|---|",
    ]
    for size, r in results.items():
        for ours_key, host_key, target in ROWS:
            ours = r[ours_key]
            host = r.get(host_key) if host_key else None
            ratio = f"{ours / host:.3f}x" if host else "-"
            host_text = f"{host:,.1f}" if host is not None else "-"
            verdict = "" if target is None else ("ok" if ours <= target else "MISS")
            want = "" if target is None else f"<= {target:g} {verdict}"
            lines.append(
                f"| {size:,} B | {ours_key} | {ours:,.2f} | {host_text} | {ratio} | {want} |"
            )
        for kind in ("edit", "rewrite"):
            lines.append(
                f"| {size:,} B | {kind}: writes/s versioned / unversioned"
                f" | {r[f'{kind}: write versioned /s']:,.0f}"
                f" | {r[f'{kind}: write unversioned /s']:,.0f} | - | |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--sizes", default="1024,102400", help="file sizes in bytes")
    parser.add_argument("--rounds", type=int, default=100, help="snapshots of 10 changes")
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args()
    results = {}
    for size in (int(s) for s in args.sizes.split(",")):
        workdir = Path(tempfile.mkdtemp(prefix="agentfs-history-"))
        try:
            results[size] = bench_size(workdir, args.files, size, args.rounds)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(results, indent=2) if args.json else render(results, args.files, args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
