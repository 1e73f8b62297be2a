"""Trees as sync sees them: a map from key to entry, read from a workspace, compared and
merged three ways (docs/sync.md, "Merging a path, and the conflict rule").

Keys are workspace paths (``/src/app.py``) and kv keys prefixed ``kv:``; entries are the JSON
objects commits carry. Everything here is pure except ``read_live``, so every machine that
merges the same trees gets the same result.
"""

from __future__ import annotations

import json
import stat as statmod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentfs.core.digests import digest
from agentfs.core.inodes import Stat

if TYPE_CHECKING:
    from agentfs.workspace import Workspace

Entry = dict[str, Any]
Tree = dict[str, Entry]

#: The prefix that puts kv keys and paths in one tree (a path always starts with ``/``).
KV = "kv:"


def identity(entry: Entry | None) -> tuple[Any, ...] | None:
    """What makes two entries the same: a directory's time moves with every name made in it,
    and which keys hold a file's bytes depends on who sent them first, so neither counts."""
    if entry is None:
        return None
    kind = entry["type"]
    if kind == "file":
        return (kind, entry["mode"], entry["hash"], entry["mtime_ns"])
    if kind == "symlink":
        return (kind, entry["target"])
    if kind == "directory":
        return (kind, entry["mode"])
    return (kind, entry["value"])  # kv


def same(a: Entry | None, b: Entry | None) -> bool:
    return identity(a) == identity(b)


def diff(old: Tree, new: Tree) -> dict[str, Entry | None]:
    """The changes that turn ``old`` into ``new``: each changed key's new entry, or None. A
    directory's new time is a change to carry, though never a conflict (``identity``)."""
    changes: dict[str, Entry | None] = {}
    for key, entry in new.items():
        if _carried(old.get(key)) != _carried(entry):
            changes[key] = entry
    for key in old.keys() - new.keys():
        changes[key] = None
    return changes


def _carried(entry: Entry | None) -> Entry | None:
    """An entry without what depends on who sent it (the keys that hold a file's bytes)."""
    if entry is None or "chunks" not in entry:
        return entry
    return {k: v for k, v in entry.items() if k != "chunks"}


def apply_changes(tree: Tree, changes: dict[str, Entry | None]) -> None:
    """``tree`` with ``changes`` made, in place."""
    for key, entry in changes.items():
        if entry is None:
            tree.pop(key, None)
        else:
            tree[key] = entry


# --- reading a workspace -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Known:
    """A file's hash as last computed, valid while the inode, change time and size match."""

    ino: int
    ctime_ns: int
    size: int
    hash: str

    def describes(self, st: Stat) -> bool:
        """Is ``st`` (a file's stat now) the file this hash was computed for?"""
        return (self.ino, self.ctime_ns, self.size) == (st.st_ino, st.st_ctime_ns, st.st_size)


def read_live(ws: Workspace, known: dict[str, Known]) -> tuple[Tree, dict[str, Known]]:
    """The workspace's tree and kv store as entries (call inside one read transaction), and the
    hashes that describe its files now. A file ``known`` describes is not read again.
    FIFOs, sockets and devices do not travel."""
    tree: Tree = {}
    hashes: dict[str, Known] = {}
    for path, st, target in _walk(ws):
        mode = st.st_mode
        if statmod.S_ISDIR(mode):
            tree[path] = {"type": "directory", "mode": mode & 0o7777, "mtime_ns": st.st_mtime_ns}
        elif statmod.S_ISLNK(mode):
            tree[path] = {"type": "symlink", "target": target, "mtime_ns": st.st_mtime_ns}
        elif statmod.S_ISREG(mode):
            seen = known.get(path)
            if seen is not None and seen.describes(st):
                content_hash = seen.hash
            else:
                content_hash = digest(ws.read(path, track=False)).hex()
            hashes[path] = Known(st.st_ino, st.st_ctime_ns, st.st_size, content_hash)
            tree[path] = {
                "type": "file",
                "mode": mode & 0o7777,
                "mtime_ns": st.st_mtime_ns,
                "size": st.st_size,
                "hash": content_hash,
            }
    for item in ws.kv.list():
        tree[KV + item.key] = {
            "type": "kv",
            "value": json.dumps(item.value, ensure_ascii=False, sort_keys=True),
            "at": item.updated_at,
        }
    return tree, hashes


def _walk(ws: Workspace) -> Iterator[tuple[str, Stat, str | None]]:
    """Every path below the root with its lstat (and a symlink's target), parents first."""
    pending = ["/"]
    while pending:
        directory = pending.pop()
        for name, st in ws.readdir_plus(directory):
            path = f"{directory.rstrip('/')}/{name}"
            target = ws.readlink(path) if statmod.S_ISLNK(st.st_mode) else None
            yield path, st, target
            if statmod.S_ISDIR(st.st_mode):
                pending.append(path)


# --- merging -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Conflict:
    """Both sides changed ``key`` differently since their common base: ``kept`` is the entry
    the merge chose, ``lost`` the other side's (None: that side deleted it)."""

    key: str
    kept: Entry | None
    lost: Entry | None
    reason: str


def merge3(base: Tree, ours: Tree, theirs: Tree) -> tuple[Tree, list[Conflict]]:
    """The three-way merge of ``ours`` and ``theirs`` against ``base``, with the symmetric
    conflict rule: it never asks which side is which, so both machines pick the same winner."""
    result: Tree = {}
    conflicts: list[Conflict] = []
    for key in sorted(base.keys() | ours.keys() | theirs.keys()):
        b, o, t = base.get(key), ours.get(key), theirs.get(key)
        if same(o, t):
            chosen = _either(o, t)
        elif same(o, b):
            chosen = t
        elif same(t, b):
            chosen = o
        else:
            chosen, lost, reason = _settle(o, t)
            conflicts.append(Conflict(key, chosen, lost, reason))
        if chosen is not None:
            result[key] = chosen
    _keep_parents(result, conflicts, ours, theirs)
    return result, conflicts


def _either(a: Entry | None, b: Entry | None) -> Entry | None:
    """One of two entries that are the same change (they may differ in a directory's time or
    in which keys hold a file's bytes): the same one whichever side each is on."""
    if a is None or b is None or a == b:
        return a
    if _carried(a) == _carried(b):  # one side has not sent its bytes: take the one that did
        return max(a, b, key=lambda e: e.get("chunks", []))
    return max(a, b, key=lambda e: (_when(e), json.dumps(e, sort_keys=True)))


def _settle(a: Entry | None, b: Entry | None) -> tuple[Entry | None, Entry | None, str]:
    """(winner, loser, why) of two different changes of one key."""
    if a is None or b is None:
        edit = a if a is not None else b
        return edit, None, "deleted on one side, changed on the other: the change is kept"
    a_dir, b_dir = a["type"] == "directory", b["type"] == "directory"
    if a_dir != b_dir:
        return (a, b, _DIR_WINS) if a_dir else (b, a, _DIR_WINS)
    if _rank(a) >= _rank(b):
        return a, b, "changed on both sides: the later change is kept"
    return b, a, "changed on both sides: the later change is kept"


_DIR_WINS = "a directory on one side, something else on the other: the directory is kept"


def _rank(entry: Entry) -> tuple[int, str]:
    """Later wins; at the same time, the larger identity (a total order on entries)."""
    return _when(entry), json.dumps(identity(entry))


def _when(entry: Entry) -> int:
    return int(entry["mtime_ns"] if "mtime_ns" in entry else entry.get("at", 0))


def _keep_parents(result: Tree, conflicts: list[Conflict], ours: Tree, theirs: Tree) -> None:
    """Give every kept path its directories back: one side may have removed (or replaced
    with a file) a directory the other added files to."""
    for key in sorted(result):
        if not key.startswith("/"):
            continue
        parent = key.rsplit("/", 1)[0]
        while parent:
            entry = result.get(parent)
            if entry is not None and entry["type"] == "directory":
                break
            restored = _directory_in(parent, ours, theirs)
            if entry is not None:
                conflicts.append(Conflict(parent, restored, entry, _DIR_WINS))
            result[parent] = restored
            parent = parent.rsplit("/", 1)[0]


def _directory_in(path: str, *trees: Tree) -> Entry:
    for tree in trees:
        entry = tree.get(path)
        if entry is not None and entry["type"] == "directory":
            return entry
    return {"type": "directory", "mode": 0o755, "mtime_ns": 0}
