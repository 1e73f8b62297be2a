"""WAL frames per commit of file overwrites: what one write costs in pages, and in which b-trees.

For each file size (1 KiB and 100 KiB by default) and kind of overwrite (the first line edited,
same length; every byte rewritten), N files are written, then each is overwritten once, in
three set-ups: no history (``keep="none"``), versions (``keep="all"``), and a snapshot taken
after the files were written (``keep="none"``: the snapshot alone holds the old bytes). The
WAL hook gives the frames in the WAL after each commit; the frames of the overwrite's commit
are read back from the ``-wal`` file and each page is named by the b-tree that holds it now
(``dbstat``; "free" for pages on the freelist). A page written twice in one commit is one frame.

Inode numbers matter to a copy-down that moves chunks (``UPDATE fs_data SET ino``): SQLite
rewrites a record in place, writing only the pages whose bytes change, when its size stays the
same; a number that needs a wider integer (127 -> 128, 32767 -> 32768) grows the record. So the
overwrites are also split by whether the file's number and the next new one have the same
width.

    .venv/bin/python benchmarks/wal_frames.py [--files 200] [--sizes 1024,102400]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import struct
import tempfile
import time
from collections import Counter
from pathlib import Path

import apsw

import agentfs

WAL_HEADER = 32
FRAME_HEADER = 24


def _width(n: int) -> int:
    """Bytes of SQLite's record encoding of a positive integer."""
    for width, limit in ((1, 1 << 7), (2, 1 << 15), (3, 1 << 23), (4, 1 << 31), (6, 1 << 47)):
        if n < limit:
            return width
    return 8


def _content(i: int, size: int, round_: int) -> bytes:
    head = f"file {i} round {round_}\n".encode()
    return head + bytes(size - len(head))


class Frames:
    """The frames each commit adds to the WAL of one workspace, by page number."""

    def __init__(self, ws: agentfs.Workspace) -> None:
        self.ws = ws
        self.wal = Path(f"{ws.conn.filename}-wal")
        self.page = int(ws.conn.execute("PRAGMA page_size").get)
        self.before = 0
        self.last: list[int] = []
        checkpointer = ws._checkpointer  # keep the workspace's own checkpointing

        def hook(conn: apsw.Connection, name: str, pages: int) -> int:
            start = 0 if pages < self.before else self.before
            self.last = self._pages(start, pages)
            self.before = pages
            return checkpointer._on_commit(conn, name, pages) if checkpointer else apsw.SQLITE_OK

        ws.conn.set_wal_hook(hook)

    def _pages(self, start: int, end: int) -> list[int]:
        size = FRAME_HEADER + self.page
        with self.wal.open("rb") as f:
            pages = []
            for frame in range(start, end):
                f.seek(WAL_HEADER + frame * size)
                pages.append(struct.unpack(">I", f.read(4))[0])
        return pages

    def names(self) -> dict[int, str]:
        """Each page's b-tree (its table's or index's name), as the database is now."""
        rows = self.ws.conn.execute("SELECT name, pageno FROM dbstat")
        return {int(page): str(name) for name, page in rows}


def measure(workdir: Path, files: int, size: int, kind: str, setup: str) -> dict[str, object]:
    path = workdir / f"{size}-{kind}-{setup}.db"
    ws = agentfs.open(path)
    ws.configure_history(keep="all" if setup == "versions" else "none")
    with ws.transaction():
        for i in range(files):
            ws.write(f"/d{i % 10}/f{i:04d}", _content(i, size, 0), parents=True)
    if setup == "snapshot":
        ws.snapshots.create("s")
    for _ in range(200):  # frames counted from an empty WAL (retried while the background
        try:  # checkpointer runs one: SQLite answers BUSY at once then)
            ws.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
            break
        except apsw.BusyError:
            time.sleep(0.05)
    frames = Frames(ws)
    commits: list[tuple[bool, list[int]]] = []
    for i in range(files):
        p = f"/d{i % 10}/f{i:04d}"
        new = random.Random(i).randbytes(size) if kind == "rewrite" else _content(i, size, 1)
        ino = ws.stat(p).st_ino
        counter = int(
            ws.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'fs_inode'").get
        )
        ws.write(p, new)
        commits.append((_width(ino) == _width(counter + 1), frames.last))
    names = frames.names()
    ws.close()
    for side in ("", "-wal", "-shm"):
        Path(f"{path}{side}").unlink(missing_ok=True)
    out: dict[str, object] = {"frames": statistics.median(len(set(p)) for _, p in commits)}
    trees = {}
    for same, label in ((True, "same width"), (False, "wider")):
        group = [set(p) for s, p in commits if s == same]
        if not group:
            continue
        out[label] = (statistics.median(len(pages) for pages in group), len(group))
        by_tree: Counter[str] = Counter()
        for pages in group:
            by_tree.update(names.get(p, "free") for p in pages)
        trees[label] = {
            k: round(v / len(group), 2) for k, v in by_tree.most_common() if v / len(group) >= 0.05
        }
    out["by_tree"] = trees
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--sizes", default="1024,102400", help="file sizes in bytes")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="agentfs-frames-"))
    try:
        print("| size | overwrite | history | frames/commit (median) | same width | wider |")
        print("|---:|---|---|---:|---:|---:|")
        details: list[tuple[int, str, str, dict[str, dict[str, float]]]] = []
        for size in (int(s) for s in args.sizes.split(",")):
            for kind in ("edit", "rewrite"):
                for setup in ("none", "versions", "snapshot"):
                    r = measure(workdir, args.files, size, kind, setup)
                    cells = [
                        f"{r[k][0]:g} ({r[k][1]})" if k in r else "-"  # type: ignore[index]
                        for k in ("same width", "wider")
                    ]
                    row = f"| {size:,} | {kind} | {setup} | {r['frames']:g} | {' | '.join(cells)} |"
                    print(row)
                    details.append((size, kind, setup, r["by_tree"]))  # type: ignore[arg-type]
        print()
        for size, kind, setup, trees in details:
            for label, counts in trees.items():
                print(f"{size:,} {kind} {setup}, {label}: mean pages per commit {counts}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
