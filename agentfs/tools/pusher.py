"""Pushing after snapshots, in the background (``agentfs serve mcp --sync-on-snapshot``).

A push runs in a worker process, waited for by a thread, so a tool call never waits for the
network; snapshots taken during a push are covered by one more push after it, and a failed push
is retried at the next snapshot.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from agentfs import sync

log = logging.getLogger("agentfs.sync")


def took_snapshot(tool: str, result: dict[str, Any]) -> bool:
    """Did this call's ``result`` take a snapshot? ``snapshot_create`` names it; a command
    (``execute_command``) names the one taken before it, unless the policy takes none."""
    if "error" in result:
        return False
    if tool == "snapshot_create":
        return True
    return tool == "execute_command" and bool(result.get("snapshot"))


class Pusher:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._lock = threading.Lock()
        self._pending = False
        self._thread: threading.Thread | None = None
        self.pushes = 0  # finished pushes, failed or not

    def request(self) -> None:
        """Push soon (now, or after the push that is running)."""
        with self._lock:
            self._pending = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="agentfs-push")
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._thread = None
                    return
                self._pending = False
            try:
                sync.push(self.workspace, message="after a snapshot")
            except sync.SyncError as exc:
                log.warning("agentfs: push after a snapshot failed: %s", exc)
            self.pushes += 1

    def wait(self, timeout: float | None = None) -> None:
        """Let the running push (and the one it may owe) finish."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
