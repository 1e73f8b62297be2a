"""kill -9 in the middle of a stream of operations: every operation that returned survives,
the workspace is consistent, and nothing half-done is visible."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentfs
from agentfs import fsck
from tests.kill9 import files_of, kill_writer


def steps(i: int) -> list[tuple[str, ...]]:
    """The calls ``run`` makes for operation ``i``, in order (each its own transaction)."""
    name = f"/d{i % 7}/f{i}"
    calls: list[tuple[str, ...]] = [("write", name, (f"file {i} " * (1 + i % 5000)))]
    if i % 3 == 0:
        calls.append(("append", name, "+tail"))
    if i % 5 == 0:
        calls.append(("rename", name, f"/d{i % 7}/r{i}"))
    if i and i % 11 == 0 and (i - 1) % 5:  # the previous file, unless it was renamed
        calls.append(("remove", f"/d{(i - 1) % 7}/f{i - 1}"))
    return calls


def run(ws: agentfs.Workspace, i: int) -> None:
    """Operation ``i`` on a real workspace (in the writer process)."""
    for call in steps(i):
        match call:
            case ("write", path, text):
                ws.write(path, text, parents=True)
            case ("append", path, text):
                ws.append(path, text)
            case ("rename", src, dst):
                ws.rename(src, dst)
            case ("remove", path):
                ws.remove(path)


def apply(files: dict[str, bytes], call: tuple[str, ...]) -> None:
    match call:
        case ("write", path, text):
            files[path] = text.encode()
        case ("append", path, text):
            files[path] += text.encode()
        case ("rename", src, dst):
            files[dst] = files.pop(src)
        case ("remove", path):
            del files[path]


@pytest.mark.parametrize("kill_after", [50, 700, 3000])
def test_kill_9_mid_stream_loses_nothing_that_returned(tmp_path: Path, kill_after: int) -> None:
    path = tmp_path / "ws.db"
    done = kill_writer(path, "test_crash", kill_after)
    assert done == kill_after
    with agentfs.open(path) as ws:
        report = fsck.check(ws)
        assert report.clean, report.problems
        found = files_of(ws)
    # The writer ran on while the kill was on its way: the workspace must hold exactly the
    # state after some whole call at or after the last operation it reported, never half a call.
    model: dict[str, bytes] = {}
    for i in range(done + 1):
        for call in steps(i):
            apply(model, call)
    assert _reaches(model, found, first_op=done + 1), "the workspace is in no state the calls made"


def _reaches(model: dict[str, bytes], found: dict[str, bytes], first_op: int) -> bool:
    """Does applying whole calls from operation ``first_op`` on ever make ``model`` == found?"""
    for i in range(first_op, first_op + 100_000):
        if model == found:
            return True
        for call in steps(i):
            apply(model, call)
            if model == found:
                return True
    return False
