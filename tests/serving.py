"""A server run as a subprocess for a test: started, waited for until it prints the line that
says where it listens, stopped with SIGINT as a user stops it (so that it writes what it
holds), killed if it does not stop."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def server_process(
    command: list[str | Path], ready: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, str]]:
    """Run ``command``; yield the first line of its stderr starting with ``ready``, and all
    it printed up to then."""
    environment = None if env is None else {**os.environ, **env}
    proc = subprocess.Popen(
        [str(part) for part in command], env=environment, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    seen = []
    try:
        for line in proc.stderr:
            seen.append(line)
            if line.startswith(ready):
                yield line.strip(), "".join(seen)
                break
        else:
            raise AssertionError(f"the server stopped: {''.join(seen)}")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
