"""Push, pull, clone and status, as the sync worker runs them (docs/sync.md, "Push" and
"Pull"): the replica on one side, the workspace on the other, the base tree between them.

Network work comes first and the workspace changes last, in one transaction: a failure
before that leaves the workspace as it was.
"""

from __future__ import annotations

import json
import os
import posixpath
import time
from typing import Any

import agentfs
from agentfs.sync.replica import Replica, SyncError, replica_path
from agentfs.sync.state import SyncState, is_set_up
from agentfs.sync.tree import KV, Conflict, Entry, Known, Tree, diff, merge3, read_live, same

#: Who the versions a pull writes are by.
ACTOR = "sync"


def open_replica(ws: agentfs.Workspace, state: SyncState) -> Replica:
    token = os.environ.get("TURSO_AUTH_TOKEN") or state.get("token")
    return Replica(replica_path(ws.path), state.get("remote"), token, state.get("origin"))


def require_set_up(ws: agentfs.Workspace) -> SyncState:
    if not is_set_up(ws.conn):
        raise SyncError(f"{ws.path} has no remote: run `agentfs sync setup {ws.path} --remote URL`")
    return SyncState(ws.conn)


# --- pull --------------------------------------------------------------------------------------


def pull(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> dict[str, Any]:
    """Fetch the remote's commits and merge them into the live tree."""
    before = replica.stats()
    replica.pull()
    report = integrate(ws, replica, state)
    replica.checkpoint()
    after = replica.stats()
    received = after["received_bytes"] - before["received_bytes"]
    state.count(after["sent_bytes"] - before["sent_bytes"], received)
    state.record(last_pull=int(time.time()))
    return {**report, "received_bytes": received}


def integrate(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> dict[str, Any]:
    """Merge every head the base does not hold yet into the live tree (without the network)."""
    heads = state.heads
    covered = replica.ancestors(heads)
    new = [h for h in replica.heads() if h not in covered]
    if not new:
        return {"merged": [], "changed": 0, "conflicts": 0}
    old_base = state.base()
    remote, heads, remote_conflicts = _remote_state(replica, old_base, heads, new)
    with ws.transaction():
        known = state.known()
        live, hashes = read_live(ws, known)
        merged, conflicts = merge3(old_base, live, remote)
        conflicts = remote_conflicts + conflicts
        written = _Applier(ws, replica).run(live, merged, conflicts)
        hashes.update(written)
        for key in [k for k in hashes if k not in merged or merged[k]["type"] != "file"]:
            del hashes[key]
        state.remember(hashes, known)
        state.set_base(remote, diff(old_base, remote), heads)
        state.add_conflicts(conflicts)
    return {"merged": new, "changed": len(diff(live, merged)), "conflicts": len(conflicts)}


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
        ws = self.ws
        saved = ws.actor, ws.thread
        ws.actor, ws.thread = ACTOR, None
        try:
            rewrite = self._keep_losers(live, conflicts)
            changes = diff(live, merged)
            for key in rewrite:
                changes.setdefault(key, merged.get(key))
            self._remove(live, merged, changes)
            for key in sorted(k for k in changes if k.startswith("/")):
                entry = changes[key]
                if entry is not None:
                    self._make(key, entry, live.get(key))
            self._kv(changes)
            self._directory_times(live, merged)
        finally:
            ws.actor, ws.thread = saved
        return self.written

    def _keep_losers(self, live: Tree, conflicts: list[Conflict]) -> list[str]:
        """Write each losing file's bytes first, so they stay as a version of the path; the
        paths whose winner must then be written again."""
        rewrite = []
        for conflict in conflicts:
            lost, key = conflict.lost, conflict.key
            if lost is None or lost["type"] != "file" or "chunks" not in lost:
                continue  # a losing live file is kept by the write that replaces it
            here = live.get(key)
            if here is not None and here["type"] == "directory":
                continue  # no file can be written there; its bytes stay in the replica
            if same(here, lost):
                continue
            self._file(key, lost)
            live[key] = lost
            rewrite.append(key)
        return rewrite

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

    def _file(self, key: str, entry: Entry) -> None:
        data = self.replica.content(entry)
        ws = self.ws
        ws.write(key, data, parents=True, mode=entry["mode"])
        ws.chmod(key, entry["mode"])
        ws.utime(key, (entry["mtime_ns"], entry["mtime_ns"]))
        st = ws.stat(key)
        self.written[key] = Known(st.st_ino, st.st_ctime_ns, st.st_size, entry["hash"])

    def _kv(self, changes: dict[str, Entry | None]) -> None:
        for key in sorted(k for k in changes if k.startswith(KV)):
            entry = changes[key]
            if entry is None:
                self.ws.kv.delete(key[len(KV) :])
            else:
                self.ws.kv.set(key[len(KV) :], json.loads(entry["value"]))

    def _directory_times(self, live: Tree, merged: Tree) -> None:
        """Directory times last (every name made inside one moved it), deepest first."""
        for key in sorted((k for k in merged if k.startswith("/")), reverse=True):
            entry = merged[key]
            if entry["type"] != "directory":
                continue
            st = self.ws.lstat(key)
            if st.st_mtime_ns != entry["mtime_ns"] and entry["mtime_ns"]:
                self.ws.utime(key, (entry["mtime_ns"], entry["mtime_ns"]))


# --- push --------------------------------------------------------------------------------------


def push(
    ws: agentfs.Workspace, replica: Replica, state: SyncState, message: str = ""
) -> dict[str, Any]:
    """Pull and merge first, then publish what changed since the base as one commit."""
    before = replica.stats()
    replica.pull()
    merged = integrate(ws, replica, state)
    commit, changed = commit_live(ws, replica, state, message)
    replica.push()
    replica.checkpoint()
    after = replica.stats()
    sent = after["sent_bytes"] - before["sent_bytes"]
    received = after["received_bytes"] - before["received_bytes"]
    state.count(sent, received)
    state.record(last_push=int(time.time()))
    return {
        "commit": commit,
        "changed": changed,
        "merged": merged["merged"],
        "conflicts": merged["conflicts"],
        "sent_bytes": sent,
        "received_bytes": received,
    }


def commit_live(
    ws: agentfs.Workspace, replica: Replica, state: SyncState, message: str
) -> tuple[str | None, int]:
    """Record the live tree's changes since the base as a commit in the replica (not yet
    pushed); (its key, how many keys changed), or (None, 0) when nothing changed."""
    heads = state.heads
    base = state.base()
    with ws.read_transaction():
        known = state.known()
        live, hashes = read_live(ws, known)
        changed = diff(base, live)
        if not changed:
            return None, 0
        parent = replica.tree(heads[0]) if heads else {}
        changes = diff(parent, live)
        wanted = (changes.keys() | changed.keys()) & live.keys()
        _attach_chunks(ws, replica, {key: live[key] for key in wanted})
    key = replica.write_commit(heads, changes, int(time.time()), message)
    with ws.transaction():
        state.remember(hashes, known)
        state.set_base(live, changed, [key])
    return key, len(changed)


def _attach_chunks(ws: agentfs.Workspace, replica: Replica, entries: Tree) -> None:
    """Give each file entry the chunk keys of its bytes, writing the chunks the replica lacks
    (read in the caller's read transaction, so they are the bytes that were hashed)."""
    stored = replica.blob_keys()
    missing: dict[str, list[str]] = {}
    for path, entry in entries.items():
        if entry["type"] != "file":
            continue
        chunks = stored.get(entry["hash"])
        if chunks is None:
            missing.setdefault(entry["hash"], []).append(path)
        else:
            entry["chunks"] = chunks
    order = list(missing)
    contents = (ws.read(missing[h][0], track=False) for h in order)
    for content_hash, chunks in zip(order, replica.write_blobs(contents), strict=True):
        for path in missing[content_hash]:
            entries[path]["chunks"] = chunks


# --- status ------------------------------------------------------------------------------------


def status(ws: agentfs.Workspace, replica: Replica | None, state: SyncState) -> dict[str, Any]:
    """Ahead (local changes not pushed), behind (remote commits not merged), the last push and
    pull, the conflicts and the byte totals. ``replica`` None: offline, behind unknown."""
    with ws.read_transaction():
        live, _ = read_live(ws, state.known())
    ahead = len(diff(state.base(), live))
    behind = None
    pending = None
    if replica is not None:
        replica.pull()
        covered = replica.ancestors(state.heads)
        behind = len([h for h in replica.heads() if h not in covered])
        pending = replica.stats()["pending_operations"]
    return {
        "remote": state.get("remote"),
        "origin": state.get("origin"),
        "ahead": ahead,
        "behind": behind,
        "unpushed_operations": pending,
        "last_push": state.get("last_push"),
        "last_pull": state.get("last_pull"),
        "sent_bytes": state.get("sent_bytes", 0),
        "received_bytes": state.get("received_bytes", 0),
        "conflicts": state.conflicts(),
    }
