"""The FUSE mount against tmpfs and bindfs: the same shell workloads in three directories.

  * tmpfs: a directory on /dev/shm (the kernel's own in-memory filesystem: no FUSE at all);
  * bindfs: Debian's C FUSE passthrough over a directory on the disk (the floor of any FUSE
    filesystem: every request crosses to a user-space daemon and back);
  * agentfs: ``agentfs mount`` of a workspace file on the same disk, as users get it
    (history and indexing on).

Workloads (each timed as one shell command, the median of ``--runs`` fresh runs): untar an
npm-like tree of ``--files`` small files; ``find -type f | xargs stat``; ``grep -r`` of a
literal; read every file (``cat``); ``git status`` on a repository of 5,000 files; ``rm -rf``
of the tree (the repository is removed untimed); then 1 GiB (``--mib``) written and read
sequentially with ``fio`` in 1 MiB blocks. Targets: every metadata workload
within 3x of bindfs, sequential read >= 500 MB/s and write >= 200 MB/s, ``rm -rf`` of 10,000
files <= 3 s.

    .venv/bin/python benchmarks/mount.py [--runs 3] [--files 10000] [--mib 1024]
        [--cache-timeouts 60,1] [--skip metadata,fio] [--scratch /dev/shm]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import agentfs

ROOT = Path(__file__).resolve().parent.parent
AGENTFS = [sys.executable, "-m", "agentfs.cli"]
METADATA = ("untar", "find + stat", "grep -r", "read all", "git status", "rm -rf")
TARGET_VS_BINDFS = 3.0
TARGETS_MBPS = {"seq write": 200.0, "seq read": 500.0}
RM_RF_SECONDS = 3.0


def npm_tree(where: Path, files: int) -> Path:
    """An npm-like tree: packages with nested lib/ directories of small JS files."""
    root = where / "tree"
    for i in range(files):
        p = root / f"pkg{i % 200:03d}" / "lib" / f"sub{i % 7}" / f"m{i}.js"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"// module {i}\nmodule.exports = function f{i}() {{ return {i}; }};\n")
    archive = where / "tree.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(root, arcname="tree")
    shutil.rmtree(root)
    return archive


def _repo(where: Path) -> Path:
    """A committed git repository of 5,000 files, as a tar to unpack in each directory."""
    repo = where / "repo"
    for i in range(5000):
        p = repo / f"src{i % 50:02d}" / f"file{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"value = {i}\n")
    git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "files"], cwd=repo, check=True)
    archive = where / "repo.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(repo, arcname="repo")
    shutil.rmtree(repo)
    return archive


def _timed(command: str, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["bash", "-c", command], cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def metadata_run(directory: Path, tree: Path, repo: Path) -> dict[str, float]:
    """Seconds for each metadata workload, in order, in ``directory``."""
    out = {"untar": _timed(f"tar xf {tree}", directory)}
    out["find + stat"] = _timed("find tree -type f -print0 | xargs -0 stat > /dev/null", directory)
    out["grep -r"] = _timed("grep -r -l 'return 42;' tree", directory)
    out["read all"] = _timed("find tree -type f -print0 | xargs -0 cat > /dev/null", directory)
    subprocess.run(["tar", "xf", str(repo)], cwd=directory, check=True)
    subprocess.run(
        ["git", "status", "-s"], cwd=directory / "repo", check=True, stdout=subprocess.DEVNULL
    )  # the first one builds the index's stat data
    out["git status"] = _timed("git -C repo status --porcelain", directory)
    out["rm -rf"] = _timed("rm -rf tree", directory)  # the --files files the target names
    subprocess.run(["rm", "-rf", "repo"], cwd=directory, check=True)
    return out


def fio_run(directory: Path, mib: int) -> dict[str, float]:
    """Sequential write then read of ``mib`` MiB in 1 MiB blocks; MB/s each."""
    out = {}
    for name, rw in (("seq write", "write"), ("seq read", "read")):
        done = subprocess.run(
            [
                "fio",
                "--name=seq",
                f"--directory={directory}",
                f"--rw={rw}",
                "--bs=1M",
                f"--size={mib}M",
                "--numjobs=1",
                "--ioengine=psync",
                "--end_fsync=1",
                "--output-format=json",
            ],
            check=False,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"fio {rw} in {directory}: {done.stderr} {done.stdout[-300:]}")
        job = json.loads(done.stdout)["jobs"][0]
        part = job["write"] if rw == "write" else job["read"]
        out[name] = part["bw_bytes"] / 1e6
    (directory / "seq.0.0").unlink(missing_ok=True)
    return out


@contextmanager
def tmpfs_dir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="bench-tmpfs-", dir="/dev/shm"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@contextmanager
def bindfs(source: Path, mnt: Path) -> Iterator[Path]:
    """``source`` mounted through bindfs on the new directory ``mnt``."""
    mnt.mkdir()
    subprocess.run(["bindfs", str(source), str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False)


@contextmanager
def bindfs_dir(scratch: Path) -> Iterator[Path]:
    source = scratch / "bindfs-src"
    source.mkdir()
    try:
        with bindfs(source, scratch / "bindfs-mnt") as mnt:
            yield mnt
    finally:
        shutil.rmtree(source, ignore_errors=True)


@contextmanager
def agentfs_dir(scratch: Path, cache_timeout: float) -> Iterator[Path]:
    db, mnt = scratch / "bench.db", scratch / "agentfs-mnt"
    db.unlink(missing_ok=True)
    agentfs.open(db).close()
    mnt.mkdir(exist_ok=True)
    subprocess.run(
        [*AGENTFS, "mount", str(db), str(mnt), "--cache-timeout", str(cache_timeout)], check=True
    )
    try:
        yield mnt
    finally:
        subprocess.run([*AGENTFS, "umount", str(mnt)], check=False)


def implementations(cache_timeouts: list[float]) -> dict[str, Callable[[Path], object]]:
    """tmpfs, bindfs, then agentfs once per kernel cache timeout (``--cache-timeouts``)."""
    found: dict[str, Callable[[Path], object]] = {
        "tmpfs": lambda scratch: tmpfs_dir(),
        "bindfs": bindfs_dir,
    }
    for t in cache_timeouts:
        found[_agentfs_name(t, cache_timeouts)] = functools.partial(agentfs_dir, cache_timeout=t)
    return found


def _agentfs_name(timeout: float, all_timeouts: list[float]) -> str:
    return "agentfs" if len(all_timeouts) == 1 else f"agentfs {timeout:g} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--skip", default="", help="comma-separated: metadata,fio")
    parser.add_argument(
        "--scratch",
        default=None,
        help="where bindfs's directory and agentfs's workspace file live (default: .agentfs/ "
        "if it exists, else the temp dir); /dev/shm takes the disk out of the measurement",
    )
    parser.add_argument(
        "--cache-timeouts",
        default="1",
        help="comma-separated kernel cache timeouts (seconds) to run agentfs with, each a column",
    )
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    timeouts = [float(t) for t in args.cache_timeouts.split(",")]
    impls = implementations(timeouts)
    results: dict[str, dict[str, list[float]]] = {name: {} for name in impls}
    default_scratch = ROOT / ".agentfs" if (ROOT / ".agentfs").is_dir() else None
    with tempfile.TemporaryDirectory(
        prefix="bench-mount-", dir=args.scratch or default_scratch
    ) as tmp:
        scratch = Path(tmp)
        tree, repo = npm_tree(scratch, args.files), _repo(scratch)
        for _ in range(args.runs):
            for name, make in impls.items():  # interleaved: drift hits all alike
                run_dir = scratch / f"run-{name}"
                run_dir.mkdir()
                with make(run_dir) as directory:  # type: ignore[attr-defined]
                    timings: dict[str, float] = {}
                    if "metadata" not in skip:
                        timings |= metadata_run(directory, tree, repo)
                    if "fio" not in skip:
                        timings |= fio_run(directory, args.mib)
                shutil.rmtree(run_dir, ignore_errors=True)
                for op, value in timings.items():
                    results[name].setdefault(op, []).append(value)
    _print(results, args, [n for n in impls if n.startswith("agentfs")])


def _print(
    results: dict[str, dict[str, list[float]]], args: argparse.Namespace, ours: list[str]
) -> None:
    """One table; with several cache timeouts, one agentfs column (and ratio) each, the
    verdict judged on the last."""
    med = {n: {op: statistics.median(v) for op, v in ops.items()} for n, ops in results.items()}
    print(
        f"\nmount: {args.files:,} small files, git status on 5,000, fio {args.mib} MiB;"
        f" median of {args.runs} runs (seconds; MB/s for fio); scratch on"
        f" {args.scratch or 'the default temp dir'}\n"
    )
    ratios = " | ".join(f"{n} / bindfs" for n in ours)
    print(f"| workload | tmpfs | bindfs | {' | '.join(ours)} | {ratios} | target |")
    print("|---|---:|---:|" + "---:|" * (2 * len(ours)) + "---|")
    for op in [*METADATA, *TARGETS_MBPS]:
        if op not in med[ours[-1]]:
            continue
        t, b = med["tmpfs"][op], med["bindfs"][op]
        values = [med[n][op] for n in ours]
        a = values[-1]
        if op in TARGETS_MBPS:
            goal = TARGETS_MBPS[op]
            verdict = f">= {goal:.0f} MB/s {'ok' if a >= goal else 'MISS'}"
            cells = [f"{v:,.0f}" for v in values] + [f"{v / b:.2f}x" for v in values]
            print(f"| {op} (MB/s) | {t:,.0f} | {b:,.0f} | {' | '.join(cells)} | {verdict} |")
            continue
        verdict = (
            f"<= {TARGET_VS_BINDFS:.0f}x bindfs {'ok' if a <= TARGET_VS_BINDFS * b else 'MISS'}"
        )
        if op == "rm -rf" and args.files == 10_000:
            verdict += f", <= {RM_RF_SECONDS:.0f} s {'ok' if a <= RM_RF_SECONDS else 'MISS'}"
        cells = [f"{v:.3f}" for v in values] + [f"{v / b:.2f}x" for v in values]
        print(f"| {op} (s) | {t:.3f} | {b:.3f} | {' | '.join(cells)} | {verdict} |")


if __name__ == "__main__":
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    main()
