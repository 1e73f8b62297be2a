"""kill -9 during snapshots and restores: the workspace is consistent afterwards, the tree is
the state after some whole operation, and every snapshot that exists holds what it held."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck

FILES = 150

#: The writer process: runs ``run(ws, i)`` for i = 0, 1, 2, ... and prints i after each.
WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    import agentfs
    from test_history_crash import run

    ws = agentfs.open(sys.argv[1])
    for i in range(1_000_000):
        run(ws, i)
        print(i, flush=True)
    """
)


def step(i: int) -> tuple[str, ...]:
    """Operation ``i``: rewrite every file, snapshot, or restore an older snapshot (in turn),
    so most of the writer's time is spent inside a snapshot or a restore."""
    if i % 3 == 0:
        return ("rewrite", str(i))
    if i % 3 == 1:
        return ("snapshot", f"s{i}")
    return ("restore", f"s{i - 4}") if i >= 5 else ("nothing",)


def _content(tag: str, j: int) -> bytes:
    return f"file {j} at {tag}\n".encode() * (1 + j % 7)


def run(ws: agentfs.Workspace, i: int) -> None:
    match step(i):
        case ("rewrite", tag):
            with ws.transaction():
                for j in range(FILES):
                    if (j + int(tag)) % 5:  # leave some out: restores add and remove files
                        ws.write(f"/t/{j % 9}/f{j}", _content(tag, j), parents=True)
                    elif ws.exists(f"/t/{j % 9}/f{j}"):
                        ws.remove(f"/t/{j % 9}/f{j}")
        case ("snapshot", name):
            ws.snapshots.create(name)
        case ("restore", name):
            ws.snapshots.restore(name)


def apply(state: dict[str, bytes], snaps: dict[str, dict[str, bytes]], i: int) -> None:
    match step(i):
        case ("rewrite", tag):
            for j in range(FILES):
                if (j + int(tag)) % 5:
                    state[f"/t/{j % 9}/f{j}"] = _content(tag, j)
                else:
                    state.pop(f"/t/{j % 9}/f{j}", None)
        case ("snapshot", name):
            snaps[name] = dict(state)
        case ("restore", name):
            state.clear()
            state.update(snaps[name])


def _files(ws: agentfs.Workspace) -> dict[str, bytes]:
    return {f"{d}/{name}": ws.read(f"{d}/{name}") for d, _, names in ws.walk("/") for name in names}


@pytest.mark.parametrize("kill_after", [4, 11, 20])
def test_kill_9_during_snapshots_and_restores(tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "ws.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    done = -1
    for line in proc.stdout:
        done = int(line)
        if done >= kill_after:
            break
    time.sleep(0.005 * (kill_after % 4))  # land inside the next operation, not between two
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL

    with agentfs.open(path) as ws:
        report = fsck.check(ws)
        assert report.clean, report.problems
        found = _files(ws)
        names = {s.name for s in ws.snapshots.list() if not s.name.startswith("before-restore")}
        # The writer ran on while the kill was on its way: the workspace must be exactly the
        # state after some whole operation at or after the last one it reported.
        state: dict[str, bytes] = {}
        snaps: dict[str, dict[str, bytes]] = {}
        i = 0
        while not (i > done and found == state and names == snaps.keys()):
            assert i < done + 100, "the workspace is in no state the operations made"
            apply(state, snaps, i)
            i += 1
        # Every snapshot holds exactly what the tree held when it was taken.
        for name in sorted(names):
            shown = ws.snapshots.show(name)
            got = {p: ws.snapshots.read(name, p) for p, e in shown if stat.S_ISREG(e.mode)}
            assert got == snaps[name], name
