"""What the sandbox costs a command's start: ``true`` in the full sandbox against plain bubblewrap.

Both run ``true`` with the workspace already mounted (``agentfs mount``, as ``exec`` makes it
for a sandboxed command), interleaved, ``--runs`` times each:

  * agentfs: ``run_in_directory(..., sandbox=True)``, everything a sandboxed command pays to
    start: the bubblewrap command line built, the seccomp program and ``passwd``/``group``
    handed over in memory files, the switch to the sandbox's user (its own, when run as root),
    the user namespace with no further namespaces, capabilities dropped, the filter loaded,
    ``prlimit`` setting the limits, the namespace's PID 1 held by a pidfd and (where the host
    allows one) moved into a memory cgroup made for the command, then the command;
  * bwrap: the same bubblewrap binds (the same system directories, ``/etc`` files, ``/proc``,
    ``/dev``, ``/tmp`` and the mount at ``/workspace``), started directly by the same user,
    without the seccomp filter, the limits, the capability drop, ``--disable-userns``, the
    info pipe or the cgroup.

Target: agentfs <= 1.5x bwrap, medians. A last row times ``ws.run(true,
sandbox=True)`` end to end (snapshot, mount, run, unmount) for scale; it is not judged.

    .venv/bin/python benchmarks/sandbox.py [--runs 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import agentfs
from agentfs.mount.daemon_args import MountOptions
from agentfs.mount.daemon_args import command as daemon_command
from agentfs.mount.exec import RunOptions, run_in_directory
from agentfs.mount.identity import host_identity
from agentfs.mount.owners import IdSwap
from agentfs.mount.sandbox import Limits, Sandbox, unavailable

TARGET = 1.5
#: Options of ours that plain bubblewrap goes without, and how many values each takes.
HARDENING = {"--seccomp": 1, "--disable-userns": 0, "--cap-drop": 1, "--unshare-user": 0}
HARDENING |= {"--info-fd": 1, "--block-fd": 1}
HARDENING |= {"--uid": 1, "--gid": 1}


def plain_bwrap(sandbox: Sandbox) -> list[str]:
    """``sandbox``'s command line without the hardening options and the limits."""
    args, out = sandbox.argv, []
    i = 0
    while i < len(args) and not args[i].endswith("prlimit"):
        if args[i] in HARDENING:
            i += 1 + HARDENING[args[i]]
            continue
        out.append(args[i])
        i += 1
    return out


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs
    reason = unavailable()
    if reason is not None:
        sys.exit(f"no sandbox on this host: {reason}")
    uid, gid = host_identity()
    with tempfile.TemporaryDirectory(prefix="agentfs-bench-", dir="/tmp") as tmp:
        os.chown(tmp, uid, gid)
        db, mountpoint = Path(tmp) / "ws.db", Path(tmp) / "workspace"
        mountpoint.mkdir()
        with agentfs.open(db) as ws:
            ws.write("/hello.txt", "hello\n")
            owner = ws.stat("/")
        # the mount as a sandboxed command's is made: its source named, the owner's ids swapped
        options = MountOptions(
            allow_other=uid != os.geteuid(),
            ids=IdSwap.parse(f"{owner.st_uid}:{owner.st_gid}={uid}:{gid}"),
            source="agentfs",
        )
        daemon = subprocess.Popen(daemon_command(db, mountpoint, options))
        try:
            while not os.path.ismount(mountpoint):
                if daemon.poll() is not None:
                    sys.exit(f"the mount daemon exited with status {daemon.returncode}")
                time.sleep(0.02)
            ours, plain = measure(mountpoint, runs)
        finally:
            subprocess.run(["fusermount3", "-u", str(mountpoint)], check=False)
            daemon.wait()
        with agentfs.open(db) as ws:
            whole = [
                timed(lambda: ws.run(["true"], sandbox=True)) for _ in range(max(runs // 4, 3))
            ]
    report(ours, plain, whole, runs)


def measure(mountpoint: Path, runs: int) -> tuple[list[float], list[float]]:
    options = RunOptions(sandbox=True, limits=Limits())
    ours, plain = [], []
    for _ in range(runs):
        started = time.perf_counter()
        result = run_in_directory(mountpoint, ["true"], options)
        ours.append((time.perf_counter() - started) * 1000)
        assert result.exit_code == 0, result.stderr
        with Sandbox(mountpoint, cwd=None, network=False, env=None, limits=Limits()) as box:
            started = time.perf_counter()
            subprocess.run([*plain_bwrap(box), "true"], check=True, **box.popen_options())
            plain.append((time.perf_counter() - started) * 1000)
    return ours, plain


def report(ours: list[float], plain: list[float], whole: list[float], runs: int) -> None:
    a, b = statistics.median(ours), statistics.median(plain)
    ratio = a / b
    verdict = "ok" if ratio <= TARGET else "MISSED"
    print(f"sandbox start-up: `true`, the mount already running; medians of {runs} runs (ms)")
    print()
    print("| case | agentfs sandbox | plain bwrap | ratio | target |")
    print("|---|---:|---:|---:|---|")
    print(f"| exec `true` | {a:.1f} | {b:.1f} | {ratio:.2f}x | <= {TARGET}x {verdict} |")
    print(f"| (range) | {min(ours):.1f}-{max(ours):.1f} | {min(plain):.1f}-{max(plain):.1f} | | |")
    print(
        f"| ws.run(true, sandbox=True), end to end | {statistics.median(whole):.0f} | | |"
        " not judged |"
    )


if __name__ == "__main__":
    main()
