"""Sync through a real Turso sync server (``tursodb --sync-server`` from npm ``turso``), against
the naive alternative: uploading the whole database file each time (``VACUUM INTO`` a copy,
then copying that file to the "remote" directory).

One workspace of N files of 1 KiB (default 10,000 over 100 directories; text made of words
drawn at random, so it compresses about as well as source code), then, side by side:
  * the initial push, and a clone on a second "machine";
  * an incremental push of 10 changed files, and the pull that brings them to the clone,
    with the bytes on the wire (pyturso's counters) against the changed content's size.
Medians over ``--rounds`` incremental rounds. Targets: initial push and
clone <= 10 s each, an incremental push or pull <= 1 s, with bytes on the wire within 2x of
the changed content.

    .venv/bin/python benchmarks/sync.py [--files 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import apsw

import agentfs
import agentfs.sync as sync

ROOT = Path(__file__).resolve().parent.parent
CLI_PACKAGES = ROOT / ".npm" / "node_modules" / "@tursodatabase"
DIRS = 100
CHANGED = 10
SIZE = 1024
WORDS = [
    "def", "return", "self", "import", "class", "value", "index", "range", "print", "data",
    "config", "path", "result", "error", "list", "dict", "none", "true", "false", "yield",
    "async", "await", "with", "open", "read", "write", "close", "parse", "token", "buffer",
]  # fmt: skip


def text(rng: random.Random, size: int) -> bytes:
    """``size`` bytes of lines of random words."""
    out = bytearray()
    while len(out) < size:
        out += (" ".join(rng.choices(WORDS, k=8)) + "\n").encode()
    return bytes(out[:size])


T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def start_server(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = sorted(CLI_PACKAGES.glob("cli-*/tursodb"))[0]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    directory.mkdir(parents=True)
    process = subprocess.Popen(
        [str(binary), "--sync-server", f"127.0.0.1:{port}", "remote.db"],
        cwd=directory,
        env={**os.environ, "TURSO_TMPDIR": str(directory)},  # its temporary files go with it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(500):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.02)
    return process, f"http://127.0.0.1:{port}"


def upload_whole_file(ws_path: Path, remote: Path) -> int:
    """The naive sync: a consistent copy of the database, copied to the remote; its size."""
    snapshot = ws_path.with_suffix(".upload.db")
    snapshot.unlink(missing_ok=True)
    conn = apsw.Connection(str(ws_path))
    conn.execute("VACUUM INTO ?", (str(snapshot),))
    conn.close()
    shutil.copyfile(snapshot, remote)
    size = snapshot.stat().st_size
    snapshot.unlink()
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="agentfs-sync-bench-") as tmp:
        work = Path(tmp)
        server, url = start_server(work / "server")
        try:
            a, b = work / "a" / "work.db", work / "b" / "work.db"
            a.parent.mkdir()
            b.parent.mkdir()
            with agentfs.Workspace(a) as ws, ws.transaction():
                for i in range(args.files):
                    ws.write(f"/d{i % DIRS:03d}/f{i:06d}.txt", text(rng, SIZE), parents=True)
            sync.setup(a, url)
            push_s, pushed = timed(lambda: sync.push(a))
            clone_s, _ = timed(lambda: sync.clone(url, b))
            remote_copy = work / "remote-copy.db"
            naive_s, naive_bytes = timed(lambda: upload_whole_file(a, remote_copy))
            rows = []
            for r in range(args.rounds):
                with agentfs.Workspace(a, create=False) as ws, ws.transaction():
                    for i in rng.sample(range(args.files), CHANGED):
                        ws.write(f"/d{i % DIRS:03d}/f{i:06d}.txt", text(rng, SIZE))
                push_round, report = timed(lambda: sync.push(a, message=f"round {r}"))  # noqa: B023
                pull_round, pulled = timed(lambda: sync.pull(b))
                naive_round, naive_round_bytes = timed(lambda: upload_whole_file(a, remote_copy))
                rows.append(
                    (
                        push_round,
                        report["sent_bytes"],
                        pull_round,
                        pulled["received_bytes"],
                        naive_round,
                        naive_round_bytes,
                        report["received_bytes"],
                    )
                )
        finally:
            server.kill()
            server.wait()
    report_table(args, push_s, pushed, clone_s, naive_s, naive_bytes, rows)


def report_table(
    args: argparse.Namespace,
    push_s: float,
    pushed: dict[str, Any],
    clone_s: float,
    naive_s: float,
    naive_bytes: int,
    rows: Sequence[tuple[float, ...]],
) -> None:
    changed = CHANGED * SIZE
    med = [statistics.median(col) for col in zip(*rows, strict=True)]

    def verdict(ok: bool) -> str:
        return "ok" if ok else "MISS"

    print(f"Sync of {args.files:,} files of 1 KiB through tursodb --sync-server (loopback)")
    print(f"incremental rows: medians of {args.rounds} rounds of {CHANGED} changed files\n")
    print("| operation | agentfs sync | whole-file upload | ratio | target |")
    print("|---|---:|---:|---:|---|")
    sent = float(pushed["sent_bytes"])
    print(
        f"| initial push | {push_s:.2f} s, sent {sent / 1e6:.1f} MB"
        f" | {naive_s:.2f} s, {naive_bytes / 1e6:.1f} MB | {naive_s / push_s:.2f}x"
        f" | <= 10 s {verdict(push_s <= 10)} |"
    )
    print(f"| clone | {clone_s:.2f} s | (a download) | | <= 10 s {verdict(clone_s <= 10)} |")
    print(
        f"| push of {CHANGED} changed files | {med[0] * 1000:.0f} ms, sent {med[1] / 1e3:.1f} KB"
        f" ({med[1] / changed:.2f}x the {changed / 1e3:.1f} KB changed; received"
        f" {med[6] / 1e3:.1f} KB, its previous push coming back)"
        f" | {med[4] * 1000:.0f} ms, {med[5] / 1e6:.1f} MB | {med[4] / med[0]:.2f}x"
        f" | <= 1 s, <= 2x bytes {verdict(med[0] <= 1 and med[1] <= 2 * changed)} |"
    )
    print(
        f"| pull of {CHANGED} changed files | {med[2] * 1000:.0f} ms,"
        f" received {med[3] / 1e3:.1f} KB ({med[3] / changed:.2f}x) | | |"
        f" <= 1 s, <= 2x bytes {verdict(med[2] <= 1 and med[3] <= 2 * changed)} |"
    )
    pulled = [row[3] / changed for row in rows]
    print(
        f"\npull bytes over the {len(rows)} rounds, as multiples of the changed content:"
        f" min {min(pulled):.2f}x, mean {statistics.mean(pulled):.2f}x, max {max(pulled):.2f}x"
        " (pages arrive whole: a push that opens a new leaf page costs two pages more)"
    )


if __name__ == "__main__":
    main()
