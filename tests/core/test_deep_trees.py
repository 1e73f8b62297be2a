"""A tree deeper than Python's recursion limit: an agent can make one (``mkdir -p`` of a long
path, or one level per call), and every operation on it must still work, after the
workspace is reopened too. The recursion limit is lowered around each check, so a walk that
recurses once a level fails on a few hundred levels, as it would on thousands."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import agentfs
from agentfs.integrations.anthropic import agent_toolset

#: Levels of the deep tree: well past the frames ``shallow_stack`` leaves.
DEPTH = 400
DEEP = "/" + "/".join(["d"] * DEPTH)


@contextmanager
def shallow_stack(spare: int = 150) -> Iterator[None]:
    """Only ``spare`` frames above the caller's: a recursion as deep as the tree fails."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + spare)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    db = tmp_path / "deep.db"
    with agentfs.open(db) as ws:
        path = ""
        for _ in range(DEPTH):  # one level a call, as an agent's mkdir would
            path += "/d"
            ws.mkdir(path)
        ws.write(DEEP + "/x.txt", "bottom\n")
    return db


def test_a_deep_path_resolves_in_a_fresh_handle(deep: Path) -> None:
    with agentfs.open(deep) as ws, shallow_stack():
        assert ws.read(DEEP + "/x.txt") == b"bottom\n"
        assert ws.stat(DEEP).is_dir()


def test_mkdir_parents_makes_a_deep_path_at_once(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db") as ws, shallow_stack():
        ws.mkdir(DEEP + "/e", parents=True)
        assert ws.stat(DEEP + "/e").is_dir()


def test_a_deep_tree_copies_moves_and_removes(deep: Path) -> None:
    with agentfs.open(deep) as ws, shallow_stack():
        ws.copy("/d", "/copy", recursive=True)
        below = DEEP[len("/d") :] + "/x.txt"
        assert ws.read("/copy" + below) == b"bottom\n"
        ws.rename("/copy", "/moved")  # history follows every file below (its hook)
        assert ws.read("/moved" + below) == b"bottom\n"
        last = ws.history("/moved" + below)[-1]
        assert (last.op, last.other) == ("rename", "/copy" + below)
        ws.remove("/moved", recursive=True)
        assert not ws.exists("/moved")


def test_a_snapshot_of_a_deep_tree_restores(deep: Path) -> None:
    with agentfs.open(deep) as ws:
        snap = ws.snapshots.create(thread="t", label="deep")
        ws.remove("/d", recursive=True)
        with shallow_stack():
            ws.snapshots.restore(snap.name)
        assert ws.read(DEEP + "/x.txt") == b"bottom\n"
        assert ws.snapshots.diff(snap.name).as_dict() == {
            "added": [],
            "removed": [],
            "modified": [],
        }


def test_the_anthropic_glob_walks_a_deep_tree(deep: Path) -> None:
    with agentfs.open(deep) as ws:
        tools = {tool.name: tool for tool in agent_toolset(ws)}
        with shallow_stack():
            found = str(tools["glob"].call({"pattern": "**/x.txt"}))
    assert found == DEEP + "/x.txt"
