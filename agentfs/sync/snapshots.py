"""Snapshots travel (docs/sync.md): each copy sends the snapshots it took as ``snapshot``
objects (name, thread, label, meta, time, and the tree as changes from a commit's tree), and
records the others' as snapshots of its own (``Snapshots.import_tree``), once each, without
touching the live tree. A name already taken here gets ``@<origin>`` appended.
"""

from __future__ import annotations

import stat as statmod
from collections.abc import Callable
from typing import Any

import agentfs
from agentfs.core.digests import digest
from agentfs.history.imported import ImportedEntry
from agentfs.history.snapshots import SnapshotInfo
from agentfs.sync.replica import Replica
from agentfs.sync.state import SyncState
from agentfs.sync.tree import Entry, Tree, apply_changes, same


def send(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> int:
    """Put the snapshots taken here and not sent yet into the replica; how many."""
    known = state.snapshot_ids()
    sent = 0
    heads = state.heads
    for info in ws.snapshots.list():
        if info.id in known:
            continue
        tree, read = _tree_of(ws, info.name)
        parent = heads[0] if heads else None
        base = replica.tree(parent)
        changes: dict[str, Entry | None] = {
            key: entry for key, entry in tree.items() if not same(base.get(key), entry)
        }
        changes.update({key: None for key in base.keys() - tree.keys() if key.startswith("/")})
        inline = replica.refer({k: e for k, e in changes.items() if e}, read)
        body = {
            "name": info.name,
            "thread": info.thread,
            "label": info.label,
            "meta": info.meta,
            "created_ns": info.created_ns,
            "actor": info.actor,
            "parent": parent,
        }
        key, _ = replica.write_changes("snapshot", body, changes, inline)
        with ws.transaction():
            state.add_snapshot(info.id, key)
        sent += 1
    return sent


def _tree_of(ws: agentfs.Workspace, name: str) -> tuple[Tree, Callable[[str], bytes]]:
    """Snapshot ``name`` as sync entries, and a function reading a file's bytes by path (read
    to hash them, and again only if the replica lacks them: a snapshot is never held whole
    in memory)."""
    tree: Tree = {}
    readers: dict[str, Callable[[], bytes]] = {}
    for entry in ws.snapshots.entries(name):
        perm = entry.mode & 0o7777
        if statmod.S_ISDIR(entry.mode):
            tree[entry.path] = {"type": "directory", "mode": perm, "mtime_ns": 0}
        elif statmod.S_ISLNK(entry.mode):
            tree[entry.path] = {
                "type": "symlink",
                "target": entry.target,
                "mtime_ns": entry.mtime_ns,
            }
        elif entry.content is not None:
            readers[entry.path] = entry.content
            data = entry.content()
            tree[entry.path] = {
                "type": "file",
                "mode": perm,
                "mtime_ns": entry.mtime_ns,
                "size": len(data),
                "hash": digest(data).hex(),
            }
    return tree, lambda path: readers[path]()


def receive(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> int:
    """Record the snapshots other copies sent that are not here yet; how many. One
    transaction: the live files the snapshots may share are read once, and cannot change
    before the last import."""
    taken = state.snapshot_keys()
    arrived = [(key, body) for key, body in replica.changes_objects("snapshot") if key not in taken]
    if not arrived:
        return 0
    received = 0
    with ws.transaction():
        shared = _live_files(ws, state)
        local = {info.name: info for info in ws.snapshots.list()}  # kept up to date below
        for key, body in arrived:
            same = _same_snapshot(local, body)
            if same is not None:  # sent twice: its sender died before noting that it had
                state.add_snapshot(same, key)
                continue
            tree = replica.tree(body["parent"])
            apply_changes(tree, body["changes"])
            entries = [
                _entry(replica, path, e, shared) for path, e in tree.items() if path[0] == "/"
            ]
            name = body["name"]
            if name in local:
                name = f"{name}@{body['origin']}"
            info = local[name] = ws.snapshots.import_tree(
                name,
                entries,
                thread=body["thread"],
                label=body["label"],
                meta=body["meta"],
                created_ns=body["created_ns"],
                actor=body["actor"],
            )
            state.add_snapshot(info.id, key)
            received += 1
    return received


def _same_snapshot(local: dict[str, SnapshotInfo], body: dict[str, Any]) -> int | None:
    """The id of the local snapshot that is this one, received before under another object's
    key (by its name here, its time and its thread), if any."""
    taken = (body["created_ns"], body["thread"])
    for name in (body["name"], f"{body['name']}@{body['origin']}"):
        info = local.get(name)
        if info is not None and (info.created_ns, info.thread) == taken:
            return info.id
    return None


def _live_files(ws: agentfs.Workspace, state: SyncState) -> dict[str, tuple[int, str]]:
    """Live files whose remembered hash still describes them: path -> (inode, hash)."""
    out = {}
    for path, known in state.known().items():
        try:
            st = ws.lstat(path)
        except OSError:
            continue
        if known.describes(st):
            out[path] = (known.ino, known.hash)
    return out


def _entry(
    replica: Replica, path: str, entry: Entry, shared: dict[str, tuple[int, str]]
) -> ImportedEntry:
    kind = entry["type"]
    if kind == "directory":
        return ImportedEntry(path, statmod.S_IFDIR | entry["mode"])
    if kind == "symlink":
        return ImportedEntry(path, statmod.S_IFLNK | 0o777, entry["mtime_ns"], entry["target"])
    live = shared.get(path)
    return ImportedEntry(
        path,
        statmod.S_IFREG | entry["mode"],
        entry["mtime_ns"],
        content=lambda: replica.content(entry),
        live_ino=live[0] if live is not None and live[1] == entry["hash"] else None,
    )
