"""A workspace over a host directory (docs/overlay.md) against the ways to get the same without
one: importing the tree, a plain agentfs mount of the imported tree, and bindfs (the C FUSE
passthrough) over the host directory itself. In one run, side by side:

  * open over a tree of ``--files`` small files: ``agentfs.open(ws, base=tree)`` and the
    first listing of its root, against ``agentfs import`` of the same tree; target <= 1 s;
  * ``git status`` and ``grep -r`` of a literal in a committed repository of ``--repo-files``
    files, mounted: the overlay (after a first, untimed ``git status``, which brings the tree
    in) against a plain mount of the repository imported, and against bindfs over the host
    repository; targets <= 1.5x the plain mount and <= 3x bindfs;
  * ``agentfs apply`` of ``--changed`` changed files, against ``cp`` of the same files into a
    copy of the tree; target <= 1 s;
  * listing and stat of every file of a tree of ``--big-files`` files of 1 MiB (what ``ls
    -lR``, ``find`` or a glob does): the overlay brings in names and stats only, against
    ``agentfs import`` of the tree; the workspace file's size is in the row, and the target is
    that the listing copies no file's bytes (the file stays under 1% of the tree);
  * reads by ``--readers`` processes at once of files already read in, while other files of
    the base are still on the host (so reads run in write transactions, docs/overlay.md),
    against the same reads of an imported workspace: what the write lock costs concurrent
    readers (no target in the issue: measured).

Every cell is the median of ``--runs`` runs, in seconds; the ratio is the anchor's time over
the overlay's (above 1: the overlay is faster).

    .venv/bin/python benchmarks/overlay.py [--files 100000] [--repo-files 10000] [--changed 100]
        [--big-files 256] [--readers 2] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mount import bindfs

import agentfs
from agentfs.overlay import apply

AGENTFS = [sys.executable, "-m", "agentfs.cli"]
GIT = ["git", "-c", "gc.auto=0", "-c", "user.email=b@example.com", "-c", "user.name=bench"]


@dataclass
class Row:
    """One operation: the overlay's median seconds, the anchor's, and the target."""

    operation: str
    ours_s: float
    anchor: str
    anchor_s: float
    target: str
    met: bool

    @property
    def ratio(self) -> float:
        return self.anchor_s / self.ours_s


def median_s(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def small_tree(root: Path, files: int) -> Path:
    """``files`` small files in 100 directories of 10 subdirectories each."""
    for i in range(files):
        where = root / _name(i)
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(f"value = {i}\n")
    return root


def _name(i: int) -> str:
    """The path of file ``i`` of ``small_tree``."""
    return f"pkg{i % 100:03d}/sub{i % 10}/m{i:06d}.py"


def repository(root: Path, files: int) -> Path:
    small_tree(root, files)
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "files"], cwd=root, check=True)
    return root


@contextmanager
def mounted(db: Path, where: Path) -> Iterator[Path]:
    mnt = where / f"mnt-{db.stem}"
    mnt.mkdir()
    subprocess.run([*AGENTFS, "mount", str(db), str(mnt), "--cache-timeout", "1"], check=True)
    try:
        yield mnt
    finally:
        subprocess.run([*AGENTFS, "umount", str(mnt)], check=False)


def shell(command: str, cwd: Path) -> Callable[[], object]:
    return lambda: subprocess.run(
        ["bash", "-c", command], cwd=cwd, check=True, stdout=subprocess.DEVNULL
    )


def answer(command: str, cwd: Path) -> str:
    """What ``command`` prints in ``cwd``."""
    done = subprocess.run(["bash", "-c", command], cwd=cwd, check=True, capture_output=True)
    return done.stdout.decode()


def open_rows(work: Path, files: int, runs: int) -> list[Row]:
    tree = small_tree(work / "tree", files)
    counter = iter(range(1_000_000))

    def open_over() -> None:
        with agentfs.open(work / f"open{next(counter)}.db", base=tree) as ws:
            if len(ws.listdir("/")) != 100:  # the tree's 100 package directories
                raise SystemExit(f"the overlay lists {ws.listdir('/')[:5]}... at its root")

    def imported() -> None:
        db = work / f"import{next(counter)}.db"
        subprocess.run([*AGENTFS, "init", str(db)], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(
            [*AGENTFS, "import", str(db), str(tree), "/"], check=True, stdout=subprocess.DEVNULL
        )

    ours = median_s(open_over, runs)
    anchor = median_s(imported, max(1, runs // 2))
    return [
        Row(f"open over {files:,} files", ours, "agentfs import", anchor, "<= 1 s", ours <= 1.0)
    ]


def mount_rows(work: Path, files: int, runs: int) -> list[Row]:
    repo = repository(work / "repo", files)
    overlay_db, plain_db = work / "overlay.db", work / "plain.db"
    agentfs.open(overlay_db, base=repo).close()
    subprocess.run([*AGENTFS, "init", str(plain_db)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        [*AGENTFS, "import", str(plain_db), str(repo), "/"], check=True, stdout=subprocess.DEVNULL
    )
    workloads = {
        "git status": "git status --porcelain",
        "grep -r": f"grep -r -l 'value = {files // 2}$' --exclude-dir=.git .",
    }
    times: dict[str, dict[str, float]] = {}
    answers: dict[str, dict[str, str]] = {}
    for name, place in (("overlay", overlay_db), ("plain", plain_db), ("bindfs", repo)):
        with mounted(place, work) if name != "bindfs" else bindfs(place, work / "mnt-b") as mnt:
            shell("git status --porcelain", mnt)()  # untimed: the index's stat data, the base
            answers[name] = {w: answer(c, mnt) for w, c in workloads.items()}
            times[name] = {w: median_s(shell(c, mnt), runs) for w, c in workloads.items()}
    # every place does the same work: a clean repository, the one file with the value
    wanted = {"git status": "", "grep -r": f"./{_name(files // 2)}\n"}
    for name, got in answers.items():
        if got != wanted:
            raise SystemExit(f"{name} answers {got}, not {wanted}: the timings would not compare")
    rows = []
    for workload in workloads:
        ours = times["overlay"][workload]
        plain, bind = times["plain"][workload], times["bindfs"][workload]
        label = f"{workload}, {files:,}-file repository, mounted"
        rows.append(Row(label, ours, "plain agentfs mount", plain, "<= 1.5x", ours <= 1.5 * plain))
        rows.append(Row(label, ours, "bindfs over the host", bind, "<= 3x", ours <= 3 * bind))
    return rows


def apply_rows(work: Path, changed: int, runs: int) -> list[Row]:
    ours_times, anchor_times = [], []
    for run in range(runs):
        tree = small_tree(work / f"apply{run}", 2000)
        copy = work / f"copy{run}"
        shutil.copytree(tree, copy)
        names = sorted(str(p.relative_to(tree)) for p in tree.rglob("*.py"))[:changed]
        with agentfs.open(work / f"apply{run}.db", base=tree) as ws:
            for name in names:
                ws.write("/" + name, "changed = True\n")
            started = time.perf_counter()
            done = apply(ws)
            ours_times.append(time.perf_counter() - started)
            if done.conflicts or len(done.written) != changed:
                raise SystemExit(f"apply wrote {len(done.written)} of {changed}: {done}")
            sources = [ws.read("/" + name) for name in names]
        started = time.perf_counter()
        for name, data in zip(names, sources, strict=True):
            (copy / name).write_bytes(data)  # what a blind copy back costs
        anchor_times.append(time.perf_counter() - started)
    ours, anchor = statistics.median(ours_times), statistics.median(anchor_times)
    return [
        Row(
            f"apply {changed} changed files",
            ours,
            "writing them blindly",
            anchor,
            "<= 1 s",
            ours <= 1.0,
        )
    ]


def listing_rows(work: Path, files: int, runs: int) -> list[Row]:
    tree = work / "big"
    for i in range(files):
        where = tree / f"d{i % 16:02d}" / f"blob{i:05d}.bin"
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_bytes(os.urandom(1 << 20))
    counter = iter(range(1_000_000))
    sizes: list[int] = []

    def list_overlay() -> None:
        db = work / f"list{next(counter)}.db"
        with agentfs.open(db, base=tree) as ws:
            seen = sum(
                ws.lstat(f"{top}/{name}").st_size
                for top, _d, names in ws.walk("/")
                for name in names
            )
        if seen != files << 20:
            raise SystemExit(f"the overlay lists {seen} bytes of files, not {files << 20}")
        sizes.append(os.path.getsize(db))

    def imported() -> None:
        db = work / f"import{next(counter)}.db"
        subprocess.run([*AGENTFS, "init", str(db)], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(
            [*AGENTFS, "import", str(db), str(tree), "/"], check=True, stdout=subprocess.DEVNULL
        )
        sizes.append(-os.path.getsize(db))

    ours = median_s(list_overlay, runs)
    anchor = median_s(imported, max(1, runs // 2))
    mine = statistics.median(s for s in sizes if s > 0)
    theirs = statistics.median(-s for s in sizes if s < 0)
    label = (
        f"list and stat {files} files of 1 MiB (workspace file {mine / 1e6:.2f} MB;"
        f" imported {theirs / 1e6:.0f} MB)"
    )
    return [
        Row(label, ours, "agentfs import", anchor, "copies no bytes", mine < (files << 20) / 100)
    ]


_READER = """
import sys, time, agentfs
names = sys.argv[2:]
with agentfs.open(sys.argv[1]) as ws:
    started = time.perf_counter()
    for _ in range(3):
        for name in names:
            ws.read(name)
    print(time.perf_counter() - started)
"""


def readers_rows(work: Path, readers: int, runs: int) -> list[Row]:
    tree = small_tree(work / "tree", 4000)
    names = [f"/{_name(i)}" for i in range(0, 4000, 2)][:1000]
    overlay_db, plain_db = work / "overlay.db", work / "plain.db"
    with agentfs.open(overlay_db, base=tree) as ws:
        for name in names:
            ws.read(name)  # read in; the other 3,000 files stay on the host
        if ws.base is None or not ws.base.pending():
            raise SystemExit("nothing is left on the host: reads would take no write lock")
    subprocess.run([*AGENTFS, "init", str(plain_db)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        [*AGENTFS, "import", str(plain_db), str(tree), "/"], check=True, stdout=subprocess.DEVNULL
    )

    def together(db: Path) -> float:
        """The slowest reader's time (each times its reads alone, not its start-up)."""
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _READER, str(db), *names], stdout=subprocess.PIPE
            )
            for _ in range(readers)
        ]
        took = []
        for proc in procs:
            out, _ = proc.communicate()
            if proc.returncode:
                raise SystemExit(f"a reader of {db.name} failed")
            took.append(float(out))
        return max(took)

    ours = statistics.median(together(overlay_db) for _ in range(runs))
    anchor = statistics.median(together(plain_db) for _ in range(runs))
    label = f"{readers} processes reading {len(names):,} files 3 times each, at once"
    return [Row(label, ours, "the same in an imported workspace", anchor, "(measured)", True)]


def table(rows: list[Row]) -> str:
    lines = [
        "| operation | overlay s | anchor | anchor s | ratio | target |",
        "|---|---:|---|---:|---:|---|",
    ]
    for r in rows:
        met = "met" if r.met else "**missed**"
        lines.append(
            f"| {r.operation} | {r.ours_s:.3f} | {r.anchor} | {r.anchor_s:.3f} |"
            f" {r.ratio:.2f}x | {r.target} {met} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repo-files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--big-files", type=int, default=256)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv[1:])
    scratch = os.environ.get("AGENTFS_BENCH_DIR")
    rows: list[Row] = []
    for make, size in (
        (open_rows, args.files),
        (mount_rows, args.repo_files),
        (apply_rows, args.changed),
        (listing_rows, args.big_files),
        (readers_rows, args.readers),
    ):
        with tempfile.TemporaryDirectory(dir=scratch) as where:
            rows += make(Path(where), size, args.runs)
    print(table(rows))
    print(
        "\nSeconds, the median of each; ratio: the anchor's time over the overlay's (above 1:"
        " the overlay is faster)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
