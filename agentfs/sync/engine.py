"""Push, pull, clone and status, as the sync worker runs them (docs/sync.md, "Push" and
"Pull"): the replica on one side, the workspace on the other, the base tree between them.

Network work comes first and the workspace changes last, in one transaction: a failure
before that leaves the workspace as it was.
"""

from __future__ import annotations

import json
import posixpath
import time
from dataclasses import dataclass
from typing import Any

import agentfs
from agentfs.sync import calls, snapshots
from agentfs.sync.replica import Replica, SyncError
from agentfs.sync.state import SyncState, is_set_up
from agentfs.sync.tree import (
    KV,
    Conflict,
    Entry,
    Known,
    Tree,
    apply_changes,
    diff,
    merge3,
    read_live,
    same,
)

#: Who the versions a pull writes are by.
ACTOR = "sync"


def require_set_up(ws: agentfs.Workspace) -> SyncState:
    if not is_set_up(ws.conn):
        raise SyncError(f"{ws.path} has no remote: run `agentfs sync setup {ws.path} --remote URL`")
    return SyncState(ws.conn)


# --- the local side, read once per operation ---------------------------------------------------


@dataclass
class Local:
    """The workspace's side of one operation, read once inside its write transaction: the
    base tree, the live tree, and the file hashes before (``known``) and now (``hashes``)."""

    base: Tree
    live: Tree
    known: dict[str, Known]
    hashes: dict[str, Known]

    @classmethod
    def read(cls, ws: agentfs.Workspace, state: SyncState) -> Local:
        known = state.known()
        live, hashes = read_live(ws, known)
        return cls(state.base(), live, known, hashes)


# --- push and pull -----------------------------------------------------------------------------


def exchange(
    ws: agentfs.Workspace, replica: Replica, state: SyncState, *, send: bool, message: str = ""
) -> dict[str, Any]:
    """A pull (``send`` false) or a push: fetch, commit what changed here since the base
    (locally: a losing edit must travel too, so every machine keeps it), merge the heads the
    base lacks into the live tree, and with ``send`` publish."""
    before = replica.stats()
    replica.pull()
    with ws.transaction():
        local = Local.read(ws, state)
        commit, committed = _commit(ws, replica, state, local, message)
        report = _merge(ws, replica, state, local)
    calls.send(ws, replica, state)
    snapshots.send(ws, replica, state)
    report.update(_receive(ws, replica, state))
    if send:
        replica.push()
    replica.checkpoint()
    after = replica.stats()
    sent = after["sent_bytes"] - before["sent_bytes"]
    received = after["received_bytes"] - before["received_bytes"]
    state.count(sent, received)
    now = int(time.time())
    unpushed = [] if send else state.get("unpushed", []) + ([commit] if commit else [])
    state.record(last_pull=now, unpushed=unpushed, **({"last_push": now} if send else {}))
    return {
        "commit": commit,
        "committed": committed,
        **report,
        "sent_bytes": sent,
        "received_bytes": received,
    }


def integrate(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> dict[str, Any]:
    """Merge every head the base does not hold yet into the live tree and store the others'
    tool calls and snapshots (no network, no commit: what a clone does after fetching)."""
    with ws.transaction():
        report = _merge(ws, replica, state, Local.read(ws, state))
    return {**report, **_receive(ws, replica, state)}


def _receive(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> dict[str, int]:
    return {
        "calls_received": calls.receive(ws, replica, state),
        "snapshots_received": snapshots.receive(ws, replica, state),
    }


def _merge(
    ws: agentfs.Workspace, replica: Replica, state: SyncState, local: Local
) -> dict[str, Any]:
    heads = state.heads
    covered = replica.ancestors(heads)
    new = [h for h in replica.heads() if h not in covered]
    if not new:
        return {"merged": [], "changed": 0, "conflicts": 0}
    remote, heads, remote_conflicts = _remote_state(replica, local.base, heads, new)
    merged, conflicts = merge3(local.base, local.live, remote)
    conflicts = remote_conflicts + conflicts
    hashes = dict(local.hashes)
    hashes.update(_Applier(ws, replica).run(dict(local.live), merged, conflicts))
    for key in [k for k in hashes if k not in merged or merged[k]["type"] != "file"]:
        del hashes[key]
    state.remember(hashes, local.hashes)
    state.set_base(remote, diff(local.base, remote), heads)
    state.add_conflicts(conflicts)
    return {"merged": new, "changed": len(diff(local.live, merged)), "conflicts": len(conflicts)}


def _remote_state(
    replica: Replica, base: Tree, heads: list[str], new: list[str]
) -> tuple[Tree, list[str], list[Conflict]]:
    """The base with every new head folded in, in key order: the same on every machine that
    has seen the same heads."""
    tree, merged, conflicts = base, list(heads), []
    for head in new:
        below_head = replica.ancestors([head])
        if head in replica.ancestors(merged):
            continue
        if set(merged) <= below_head:  # it descends from everything merged: take it whole
            tree, merged = replica.tree(head), [head]
            continue
        ancestor = replica.merge_base(merged, head)
        tree, found = merge3(replica.tree(ancestor), tree, replica.tree(head))
        conflicts.extend(found)
        merged = [h for h in merged if h not in below_head] + [head]
    return tree, merged, conflicts


class _Applier:
    """Turns the live tree into the merged one through the workspace API, so versions, read
    tracking and the search index follow as for any write."""

    def __init__(self, ws: agentfs.Workspace, replica: Replica) -> None:
        self.ws = ws
        self.replica = replica
        self.written: dict[str, Known] = {}

    def run(self, live: Tree, merged: Tree, conflicts: list[Conflict]) -> dict[str, Known]:
        with self.ws.acting(thread=None, actor=ACTOR):  # no thread: nothing to have read
            ours = self._keep_losers(live, merged, conflicts)
            changes = diff(live, merged)
            self._remove(live, merged, changes)
            for key in sorted(k for k in changes if k.startswith("/") and k not in ours):
                entry = changes[key]
                if entry is not None:
                    self._make(key, entry, live.get(key))
            for key, data in ours.items():  # a live file that won: back over the loser
                self._file(key, merged[key], data)
            self._kv(changes)
            self._directory_times(merged, changes)
        return self.written

    def _keep_losers(self, live: Tree, merged: Tree, conflicts: list[Conflict]) -> dict[str, bytes]:
        """Write each losing file's bytes first, so they stay as a version of the path (a
        losing live file is kept by the write that replaces it). Where the live file won, its
        bytes are returned, to be written back over the loser's."""
        ours: dict[str, bytes] = {}
        for conflict in conflicts:
            lost, key = conflict.lost, conflict.key
            if lost is None or lost["type"] != "file":
                continue
            here = live.get(key)
            if here is not None and here["type"] == "directory":
                continue  # no file can be written there; its bytes stay in the replica
            if same(here, lost):
                continue  # the live file lost: replacing it keeps it
            if here is not None and here["type"] == "file" and same(here, merged.get(key)):
                ours[key] = self.ws.read(key, track=False)
            self._file(key, lost)
            live[key] = lost
            self.ws.next_operation()  # the path's next write is a version of its own
        return ours

    def _remove(self, live: Tree, merged: Tree, changes: dict[str, Entry | None]) -> None:
        gone: list[str] = []
        for key in sorted(k for k in changes if k.startswith("/")):
            now, then = live.get(key), merged.get(key)
            if now is None or (then is not None and then["type"] == now["type"]):
                continue
            if any(key.startswith(g + "/") for g in gone):
                continue
            self.ws.remove(key, recursive=True)
            gone.append(key)
            live.pop(key)

    def _make(self, key: str, entry: Entry, here: Entry | None) -> None:
        kind = entry["type"]
        if kind == "directory":
            if here is None:
                self.ws.mkdir(key, entry["mode"], parents=True, exist_ok=True)
            self.ws.chmod(key, entry["mode"])
        elif kind == "symlink":
            if here is not None:
                self.ws.remove(key)
            self.ws.mkdir(posixpath.dirname(key), parents=True, exist_ok=True)
            self.ws.symlink(entry["target"], key)
            self.ws.utime(key, (entry["mtime_ns"], entry["mtime_ns"]), follow_symlinks=False)
        else:
            self._file(key, entry)

    def _file(self, key: str, entry: Entry, data: bytes | None = None) -> None:
        if data is None:
            data = self.replica.content(entry)
        ws = self.ws
        if ws.write(key, data, parents=True, mode=entry["mode"]).st_mode & 0o7777 != entry["mode"]:
            ws.chmod(key, entry["mode"])  # the mode a write gives is a new file's only
        ws.utime(key, (entry["mtime_ns"], entry["mtime_ns"]))
        st = ws.stat(key)
        self.written[key] = Known(st.st_ino, st.st_ctime_ns, st.st_size, entry["hash"])

    def _kv(self, changes: dict[str, Entry | None]) -> None:
        for key in sorted(k for k in changes if k.startswith(KV)):
            entry = changes[key]
            if entry is None:
                self.ws.kv.delete(key[len(KV) :])
            else:
                self.ws.kv.set(key[len(KV) :], json.loads(entry["value"]), updated_at=entry["at"])

    def _directory_times(self, merged: Tree, changes: dict[str, Entry | None]) -> None:
        """Directory times last (every name made inside one moved it), deepest first: the
        directories that changed and those a change was made in."""
        touched = {posixpath.dirname(k) for k in changes if k.startswith("/")}
        touched.update(k for k in changes if k.startswith("/"))
        for key in sorted(touched, reverse=True):
            entry = merged.get(key)
            if entry is None or entry["type"] != "directory":
                continue
            st = self.ws.lstat(key)
            if st.st_mtime_ns != entry["mtime_ns"] and entry["mtime_ns"]:
                self.ws.utime(key, (entry["mtime_ns"], entry["mtime_ns"]))


# --- push --------------------------------------------------------------------------------------


def _commit(
    ws: agentfs.Workspace, replica: Replica, state: SyncState, local: Local, message: str
) -> tuple[str | None, int]:
    """Record the live tree's changes since the base as a commit in the replica (not yet
    pushed), and make it the base; (its key, how many keys changed), or (None, 0)."""
    changed = diff(local.base, local.live)
    if not changed:
        return None, 0
    heads = state.heads
    parent = replica.tree(heads[0]) if heads else {}
    changes = diff(parent, local.live)
    wanted = (changes.keys() | changed.keys()) & local.live.keys()
    inline = replica.refer(
        {key: local.live[key] for key in wanted}, lambda path: ws.read(path, track=False)
    )
    key = replica.write_commit(heads, changes, int(time.time()), message, inline)
    state.remember(local.hashes, local.known)
    state.set_base(local.live, changed, [key])
    base = dict(local.base)
    apply_changes(base, changed)
    local.base, local.known = base, local.hashes
    return key, len(changed)


# --- status ------------------------------------------------------------------------------------


def status(ws: agentfs.Workspace, replica: Replica | None, state: SyncState) -> dict[str, Any]:
    """What is not pushed (paths changed since the last sync, commits made by pulls), what is
    not merged (remote heads; None offline), the last push and pull, the byte totals and the
    conflicts. ``replica`` None: offline."""
    with ws.read_transaction():
        live, _ = read_live(ws, state.known())
    behind = None
    if replica is not None:
        replica.pull()
        covered = replica.ancestors(state.heads)
        behind = len([h for h in replica.heads() if h not in covered])
    return {
        "remote": state.get("remote"),
        "origin": state.get("origin"),
        "changed": len(diff(state.base(), live)),
        "unpushed": state.get("unpushed", []),
        "behind": behind,
        "last_push": state.get("last_push"),
        "last_pull": state.get("last_pull"),
        "sent_bytes": state.get("sent_bytes", 0),
        "received_bytes": state.get("received_bytes", 0),
        "conflicts": state.conflicts(),
    }
