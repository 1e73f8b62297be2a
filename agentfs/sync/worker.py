"""The sync worker: one sync operation in a process of its own (docs/sync.md, "The worker process").

``python -m agentfs.sync.worker '{"op": "push", "workspace": "w.db"}'`` prints one JSON line,
the operation's report or ``{"error": "..."}`` (exit status 1). Its own process because pyturso
holds the GIL during network work and may block with no timeout on a hung server.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import warnings
from pathlib import Path
from typing import Any

import agentfs
from agentfs import credentials
from agentfs.sync import engine
from agentfs.sync.replica import Replica, SyncError, new_origin, replica_path
from agentfs.sync.state import SyncState, is_set_up

#: Seconds any one network read or write may wait (AGENTFS_SYNC_SOCKET_TIMEOUT overrides).
SOCKET_TIMEOUT = 30.0


def run(request: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    if op == "clone":
        return clone(request["remote"], Path(request["out"]), request.get("token"))
    if op == "setup":
        with agentfs.Workspace(request["workspace"], create=False) as ws:
            return setup(
                ws,
                request["remote"],
                request.get("token"),
                request.get("save_token"),
                bool(request.get("merge")),
            )
    with agentfs.Workspace(request["workspace"], create=False) as ws:
        state = engine.require_set_up(ws)
        if op == "status" and request.get("offline"):
            return engine.status(ws, None, state)
        replica = _open(ws, state, request.get("token"))
        try:
            if op in ("push", "pull"):
                message = request.get("message", "")
                return engine.exchange(ws, replica, state, send=op == "push", message=message)
            if op == "status":
                return engine.status(ws, replica, state)
        finally:
            replica.close()
    raise SyncError(f"unknown sync operation {op!r}")


def _open(ws: agentfs.Workspace, state: SyncState, token: str | None) -> Replica:
    """The replica, made anew where it is missing; one that could not be made (a refused
    token, an unreachable server) leaves nothing behind, or the next run would refuse the
    half-made replica file."""
    remote, origin = state.get("remote"), state.get("origin")
    path = replica_path(ws.path)
    fresh = not path.parent.exists()
    try:
        return Replica(path, remote, token_for(remote, origin, token), origin)
    except SyncError:
        if fresh:
            shutil.rmtree(path.parent, ignore_errors=True)
        raise


def token_for(remote: str, origin: str, given: str | None) -> str | None:
    """The token to send: the one ``given`` with the request, else ``TURSO_AUTH_TOKEN``, else
    the one saved for this workspace (``agentfs.credentials``)."""
    return given or os.environ.get("TURSO_AUTH_TOKEN") or credentials.load_token(remote, origin)


def setup(
    ws: agentfs.Workspace,
    remote: str,
    token: str | None,
    save_token: bool | None,
    merge: bool = False,
) -> dict[str, Any]:
    """Connect to ``remote`` (fetching what it holds into a new replica) and remember it; a
    failure leaves no trace. A server that holds another workspace's files is refused for a
    workspace that holds files of its own, unless ``merge`` (the first pull would merge the
    two trees)."""
    connect(ws, remote, token, save_token, merge=merge).close()
    state = SyncState(ws.conn)
    return {"remote": remote, "origin": state.get("origin"), "replica": str(replica_path(ws.path))}


def connect(
    ws: agentfs.Workspace,
    remote: str,
    token: str | None,
    save_token: bool | None,
    *,
    merge: bool = True,
) -> Replica:
    """The replica of ``ws`` connected to ``remote``, which ``ws`` now remembers. One replica
    is open per process at a time: pyturso keeps a file's lock until it is collected. Unless
    ``merge``, a first connection refuses to join two trees (``_refuse_two_trees``)."""
    if is_set_up(ws.conn):
        state = SyncState(ws.conn)
        known = state.get("remote")
        if known != remote:
            raise SyncError(f"{ws.path} already syncs with {known}; clone {remote} instead")
        origin = state.get("origin")
    else:
        origin = new_origin()
    path = replica_path(ws.path)
    fresh = not path.parent.exists()
    token = token or os.environ.get("TURSO_AUTH_TOKEN")
    replica: Replica | None = None
    try:
        replica = Replica(path, remote, token, origin)
        while not is_set_up(ws.conn) and replica.origin_used:  # another copy drew it first
            origin = new_origin()
            replica.use_origin(origin)
        if not merge and not is_set_up(ws.conn):
            _refuse_two_trees(ws, replica, remote)
        if save_token and token:
            credentials.save_token(remote, origin, token)
        else:
            credentials.forget_token(remote, origin)
    except (SyncError, OSError):  # a token that cannot be saved fails the setup too
        if replica is not None:
            replica.close()
        if fresh:
            shutil.rmtree(path.parent, ignore_errors=True)
        raise
    SyncState(ws.conn).create(remote, origin)
    return replica


def _refuse_two_trees(ws: agentfs.Workspace, replica: Replica, remote: str) -> None:
    """Refuse to join a workspace holding files to a server holding another one's: the first
    pull would merge every file of the other in without a word."""
    theirs = {
        key
        for head in replica.heads()
        for key, entry in replica.tree(head).items()
        if entry["type"] == "file"
    }
    ours = ws.info().files
    if theirs and ours:
        raise SyncError(
            f"{remote} already holds another workspace ({len(theirs)} files) and"
            f" {ws.path} holds {ours} of its own: `agentfs clone {remote} NEW.db` copies"
            " that workspace; `agentfs sync setup --merge` merges the two"
        )


def clone(remote: str, out: Path, token: str | None) -> dict[str, Any]:
    """A new workspace at ``out`` holding what ``remote`` holds; nothing is left behind if
    that fails."""
    if out.exists() or replica_path(out).parent.exists():
        raise SyncError(f"{out} already exists; clone into a new path")
    try:
        with agentfs.Workspace(out) as ws:
            replica = connect(ws, remote, token, False)
            try:
                report = engine.integrate(ws, replica, SyncState(ws.conn))
            finally:
                replica.close()
    except BaseException:
        for leftover in (out, Path(f"{out}-wal"), Path(f"{out}-shm")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(replica_path(out).parent, ignore_errors=True)
        raise
    return {"workspace": str(out), "remote": remote, **report}


def main() -> int:
    socket.setdefaulttimeout(float(os.environ.get("AGENTFS_SYNC_SOCKET_TIMEOUT", SOCKET_TIMEOUT)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", credentials.CredentialWarning)
        try:
            report = run(json.loads(sys.argv[1]))
        except (OSError, agentfs.AgentFSError) as exc:  # SyncError is an AgentFSError
            report = {"error": " ".join(str(exc).split())}
    ours = credentials.CredentialWarning
    notes = [str(w.message) for w in caught if issubclass(w.category, ours)]
    if notes:  # the caller warns again, in its own process (agentfs.sync._work)
        report["notes"] = notes
    print(json.dumps(report), flush=True)
    return 1 if "error" in report else 0


if __name__ == "__main__":
    sys.exit(main())
