"""kill -9 in the middle of a stream of operations: every operation that returned survives,
the workspace is consistent, and nothing half-done is visible."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import agentfs
from agentfs import fsck

WRITER = textwrap.dedent(
    """
    import sys
    import agentfs

    ws = agentfs.open(sys.argv[1])
    for i in range(1_000_000):
        body = (f"file {i} " * (1 + i % 5000)).encode()   # 1 B .. 50 KiB, some multi-chunk
        ws.write(f"/d{i % 7}/f{i}", body, parents=True)
        if i % 3 == 0:
            ws.append(f"/d{i % 7}/f{i}", b"+tail")
        if i % 5 == 0:
            ws.rename(f"/d{i % 7}/f{i}", f"/d{i % 7}/r{i}")
        if i % 11 == 0 and i:
            ws.remove(f"/d{(i - 1) % 7}/f{i - 1}")
        print(i, flush=True)  # operation i and all before it have returned
    """
)


def steps(i: int) -> list[tuple[str, ...]]:
    """The calls WRITER makes for operation ``i``, in order (each its own transaction)."""
    name = f"/d{i % 7}/f{i}"
    calls: list[tuple[str, ...]] = [("write", name, (f"file {i} " * (1 + i % 5000)))]
    if i % 3 == 0:
        calls.append(("append", name, "+tail"))
    if i % 5 == 0:
        calls.append(("rename", name, f"/d{i % 7}/r{i}"))
    if i % 11 == 0 and i:
        calls.append(("remove", f"/d{(i - 1) % 7}/f{i - 1}"))
    return calls


def apply(files: dict[str, bytes], call: tuple[str, ...]) -> None:
    match call:
        case ("write", path, text):
            files[path] = text.encode()
        case ("append", path, text):
            files[path] += text.encode()
        case ("rename", src, dst):
            files[dst] = files.pop(src)
        case ("remove", path):
            files.pop(path, None)


def test_kill_9_mid_stream_loses_nothing_that_returned(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    done = -1
    for line in proc.stdout:
        done = int(line)
        if done >= 400:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with agentfs.open(path) as ws:
        report = fsck.check(ws)
        assert report.clean, report.problems
        found = {
            f"{d}/{name}": ws.read(f"{d}/{name}") for d, _, names in ws.walk("/") for name in names
        }
    model: dict[str, bytes] = {}
    for i in range(done + 1):
        for call in steps(i):
            apply(model, call)
    # The calls of the operation in flight when the kill came: any prefix may have committed,
    # each call whole, never half of one.
    acceptable = [dict(model)]
    for call in steps(done + 1):
        apply(model, call)
        acceptable.append(dict(model))
    assert found in acceptable
