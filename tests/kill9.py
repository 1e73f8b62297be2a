"""Shared by the crash tests: run a writer process over a workspace and kill -9 it mid-stream.

The writer is ``run(ws, i)`` for i = 0, 1, 2, ... from a test module (imported by the name it
has here, in a process of its own), printing ``i`` after each operation returned;
``kill_writer`` kills it once it reported ``kill_after`` and returns the last operation it
reported (the workspace may hold a few more: the kill is on its way).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import agentfs

_WRITER = textwrap.dedent(
    """
    import importlib, sys
    sys.path[:0] = sys.argv[3:]
    import agentfs
    run = importlib.import_module(sys.argv[2]).run

    ws = agentfs.open(sys.argv[1])
    for i in range(1_000_000):
        run(ws, i)
        print(i, flush=True)  # operation i and all before it have returned
    """
)


def kill_writer(path: Path, module: str, kill_after: int, delay: float = 0.0) -> int:
    """Start ``module.run`` writing to ``path``, SIGKILL it after operation ``kill_after``
    (and ``delay`` seconds more, to land inside an operation); the last one it reported."""
    where = Path(sys.modules[module].__file__ or "").parent  # the test module's directory
    root = Path(__file__).parent.parent  # for its imports of tests.*
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), module, str(where), str(root)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    done = -1
    for line in proc.stdout:
        done = int(line)
        if done >= kill_after:
            break
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    return done


def files_of(ws: agentfs.Workspace) -> dict[str, bytes]:
    """Every file of the live tree with its bytes."""
    return {f"{d}/{name}": ws.read(f"{d}/{name}") for d, _, names in ws.walk("/") for name in names}
