"""Sync a workspace through a Turso / libSQL server (docs/sync.md).

Every operation that talks to the server runs in a worker process (``agentfs.sync.worker``)
with a deadline; these functions start it and return its report, or raise ``SyncError`` with
one line saying what went wrong (nothing is changed locally then).

    import agentfs.sync as sync
    sync.setup("work.db", "http://127.0.0.1:8080")
    sync.push("work.db")
    sync.clone("http://127.0.0.1:8080", "other.db")
    sync.pull("other.db")
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections.abc import Iterable
from typing import Any

import agentfs
from agentfs.credentials import CredentialWarning
from agentfs.sync.replica import SyncError, replica_path
from agentfs.sync.state import SyncState, is_set_up

__all__ = [
    "SyncError",
    "clone",
    "conflicts",
    "pull",
    "push",
    "remote",
    "replica_path",
    "resolve",
    "setup",
    "status",
]

#: Seconds a whole sync operation may take before its worker is killed.
TIMEOUT = 600.0

Pathish = str | os.PathLike[str]


def setup(
    workspace: Pathish,
    remote: str,
    *,
    token: str | None = None,
    save_token: bool = False,
    merge: bool = False,
    timeout: float = TIMEOUT,
) -> dict[str, Any]:
    """Make ``workspace`` sync with ``remote``: connects (a wrong URL fails here, leaving
    nothing behind) and remembers the URL. The token comes from ``token`` or
    ``TURSO_AUTH_TOKEN``; with ``save_token`` it is saved for later operations, never in the
    workspace file (which travels) but in a 0600 file of the user's configuration directory
    (``agentfs.credentials``), and without it a token saved before is forgotten. A server
    that already holds another workspace's files is refused (``SyncError``, nothing kept)
    when ``workspace`` holds files too, unless ``merge``: the first pull would merge them."""
    request = {"op": "setup", "workspace": os.fspath(workspace), "remote": remote}
    return _work({**request, "token": token, "save_token": save_token, "merge": merge}, timeout)


def push(workspace: Pathish, *, message: str = "", timeout: float = TIMEOUT) -> dict[str, Any]:
    """Merge what the remote has, then publish the workspace's changes as one commit."""
    request = {"op": "push", "workspace": os.fspath(workspace), "message": message}
    return _work(request, timeout)


def pull(workspace: Pathish, *, timeout: float = TIMEOUT) -> dict[str, Any]:
    """Merge what the remote has into the workspace (docs/sync.md for the conflict rule)."""
    return _work({"op": "pull", "workspace": os.fspath(workspace)}, timeout)


def status(
    workspace: Pathish, *, offline: bool = False, timeout: float = TIMEOUT
) -> dict[str, Any]:
    """Ahead, behind, the last push and pull, conflicts and bytes on the wire. ``offline``
    does not ask the server (behind is then None)."""
    request = {"op": "status", "workspace": os.fspath(workspace), "offline": offline}
    return _work(request, timeout)


def clone(
    remote: str, out: Pathish, *, token: str | None = None, timeout: float = TIMEOUT
) -> dict[str, Any]:
    """A new workspace at ``out`` with what ``remote`` holds, set up to sync with it."""
    request = {"op": "clone", "remote": remote, "out": os.fspath(out), "token": token}
    return _work(request, timeout)


def remote(workspace: Pathish) -> str | None:
    """The server ``workspace`` syncs with; None when it does not (no network)."""
    with agentfs.Workspace(workspace, create=False, readonly=True) as ws:
        return SyncState(ws.conn).get("remote") if is_set_up(ws.conn) else None


def conflicts(workspace: Pathish) -> list[dict[str, Any]]:
    """The conflicts pulls resolved and nobody cleared yet (no network)."""
    with agentfs.Workspace(workspace, create=False, readonly=True) as ws:
        return SyncState(ws.conn).conflicts() if is_set_up(ws.conn) else []


def resolve(workspace: Pathish, paths: Iterable[str] = ()) -> int:
    """Clear the conflicts of ``paths`` (none: all) from the list; how many were cleared."""
    with agentfs.Workspace(workspace, create=False) as ws:
        if not is_set_up(ws.conn):
            raise SyncError(f"{ws.path} has no remote")
        return SyncState(ws.conn).resolve(paths)


def _work(request: dict[str, Any], timeout: float) -> dict[str, Any]:
    command = [sys.executable, "-m", "agentfs.sync.worker", json.dumps(request)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SyncError(f"sync {request['op']} took over {timeout:g} s and was stopped") from None
    lines = done.stdout.strip().splitlines()
    if not lines:
        detail = done.stderr.strip().splitlines()
        raise SyncError(
            f"sync {request['op']} failed (exit {done.returncode})"
            + (f": {detail[-1]}" if detail else "")
        )
    report: dict[str, Any] = json.loads(lines[-1])
    for note in report.pop("notes", []):  # a token the worker moved out of the file
        warnings.warn(note, CredentialWarning, stacklevel=3)
    if "error" in report:
        raise SyncError(report["error"])
    return report
