"""kill -9 during snapshots and restores: the workspace is consistent afterwards, the tree is
the state after some whole operation, and every snapshot that exists holds what it held."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck
from tests.kill9 import files_of, kill_writer

FILES = 150


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


@pytest.mark.parametrize("kill_after", [4, 11, 20])
def test_kill_9_during_snapshots_and_restores(tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "ws.db"
    # A short delay lands the kill inside the next operation, not between two.
    done = kill_writer(path, "test_history_crash", kill_after, delay=0.005 * (kill_after % 4))

    with agentfs.open(path) as ws:
        report = fsck.check(ws)
        assert report.clean, report.problems
        found = files_of(ws)
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
