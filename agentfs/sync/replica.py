"""The replica: the pyturso database beside a workspace that carries what travels, as
insert-only objects under keys no other machine writes (docs/sync.md, "What the replica holds").

Only the sync worker process opens it (pyturso holds the GIL during network work and locks
the file against other processes).
"""

from __future__ import annotations

import json
import os
import secrets
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentfs.core.digests import digest
from agentfs.core.errors import AgentFSError
from agentfs.sync.tree import Entry, Tree, apply_changes

#: Most bytes of a file in one blob object.
CHUNK = 1 << 20
#: Files up to this size travel inside the object that names them (a commit, a snapshot),
#: up to ``INLINE_BYTES`` per object.
INLINE_FILE = 64 << 10
INLINE_BYTES = 1 << 20
#: Bytes of objects written in one replica transaction. Each transaction is pushed as its own
#: request (``push_operations_threshold``), so a killed push resumes after the last one the
#: server took, and no request holds more than this in memory on either side.
BATCH_BYTES = 8 << 20
_RAW, _ZLIB = b"\x00", b"\x01"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS objects ("
    "id INTEGER PRIMARY KEY, kind TEXT NOT NULL, data BLOB NOT NULL, pad BLOB)"
)
#: An object's key, ``<origin>/<seq>``, is its row id in another form: the origin (random,
#: ``ORIGIN_HEX`` hex digits) and that origin's sequence number (``SEQ_BITS`` bits), shifted
#: into SQLite's signed range. An INTEGER PRIMARY KEY is the table's own B-tree where a TEXT
#: one needs an index beside it, a second B-tree whose pages every pull downloads as well.
ORIGIN_HEX = 10
SEQ_BITS = 24
_SEQ_LAST = (1 << SEQ_BITS) - 1
_SIGN = 1 << 63


def padding(size: int, page: int) -> int:
    """Zero bytes to store after an object of ``size`` bytes (the ``pad`` column) so that its
    row keeps the least it can in its leaf page and the rest in overflow pages.

    A row of P bytes over ``page - 35`` keeps ``min_local + (P - min_local) % (page - 4)`` bytes in
    the leaf (SQLite's file format, and Turso's), so a padded push's small cell joins the previous
    pushes' in the last leaf and a pull downloads fewer pages (docs/sync.md, "What a pull costs").
    ``P`` is estimated, so the padding aims at the middle of the window that keeps the least.
    """
    if size < page // 4:
        return 0
    max_local = page - 35
    min_local = (page - 12) * 32 // 255 - 23
    step = page - 4
    aim = (max_local - min_local + step) // 2  # mid-window: 260 bytes of slack each side
    return (aim - (size + 8 - min_local)) % step


def new_origin() -> str:
    """A random origin for a copy that starts syncing."""
    return secrets.token_hex(ORIGIN_HEX // 2)


def row_id(key: str) -> int:
    """The row id of the object ``key`` names."""
    origin, _, seq = key.partition("/")
    return (int(origin, 16) << SEQ_BITS | int(seq)) - _SIGN


def key_of(row: int) -> str:
    """The key of the object in row ``row`` (keys sort as their row ids do)."""
    value = row + _SIGN
    return f"{value >> SEQ_BITS:0{ORIGIN_HEX}x}/{value & _SEQ_LAST:012d}"


class SyncError(AgentFSError):
    """A sync operation could not be done; the message is one line for the user."""


def replica_path(workspace: str | os.PathLike[str]) -> Path:
    """Where the replica of ``workspace`` lives: a directory beside it, never the file itself."""
    return Path(f"{os.fspath(workspace)}.sync") / "replica.db"


@dataclass(frozen=True, slots=True)
class Commit:
    key: str
    parents: tuple[str, ...]
    changes: dict[str, Entry | None]
    origin: str
    at: int
    message: str


class Replica:
    """One open replica, written as ``origin`` (see the module docstring)."""

    def __init__(self, path: Path, url: str, token: str | None, origin: str) -> None:
        if path.exists() and not Path(f"{path}-info").exists():
            raise SyncError(
                f"{path} exists but is not a sync replica (no {path.name}-info beside it);"
                " it is left alone: move it away to sync again"
            )
        try:
            import turso.sync  # the optional `sync` extra
        except ImportError:
            raise SyncError("sync needs pyturso: pip install 'agentfs-workspace[sync]'") from None
        self._failure: type[Exception] = turso.DatabaseError
        if len(origin) != ORIGIN_HEX:
            raise SyncError(
                f"this workspace's sync origin {origin!r} is from an earlier agentfs: clone the"
                " remote again, or set up a new one"
            )
        # private like the workspace: pyturso makes the files inside with its own modes
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            self.conn = turso.sync.connect(
                str(path),
                remote_url=url,
                auth_token=token,
                client_name=origin,
                push_operations_threshold=1,
            )
            self.conn.execute(_SCHEMA)
            self.conn.commit()
            self.conn.execute("SELECT id FROM objects LIMIT 0").fetchall()
        except turso.DatabaseError as exc:
            if "no such column" in str(exc).lower():
                raise SyncError(
                    f"{url} holds objects in an earlier agentfs format (text keys): sync with"
                    " a new remote"
                ) from None
            raise SyncError(describe(exc, url)) from None
        self.url = url
        self._page: int = self.conn.execute("PRAGMA page_size").fetchone()[0]
        self.use_origin(origin)
        self._commits: dict[str, Commit] | None = None
        self._trees: dict[str, Tree] = {}
        self._packs: dict[str, tuple[dict[str, list[int]], bytes]] = {}

    def close(self) -> None:
        self.conn.close()

    # --- the network -------------------------------------------------------------------------

    def push(self) -> None:
        try:
            self.conn.push()
        except self._failure as exc:
            raise SyncError(describe(exc, self.url)) from None

    def pull(self) -> bool:
        """Fetch what the remote has; True when something arrived."""
        try:
            changed = bool(self.conn.pull())
        except self._failure as exc:
            raise SyncError(describe(exc, self.url)) from None
        if changed:
            self._commits = None
        return changed

    def stats(self) -> dict[str, Any]:
        s = self.conn.stats()
        return {
            "sent_bytes": s.network_sent_bytes,
            "received_bytes": s.network_received_bytes,
            "pending_operations": s.cdc_operations,
        }

    def checkpoint(self) -> None:
        self.conn.checkpoint()

    # --- writing -----------------------------------------------------------------------------

    def use_origin(self, origin: str) -> None:
        """Write new objects as ``origin`` (set up once, before anything is written)."""
        self.origin = origin
        self._own = (row_id(f"{origin}/0"), row_id(f"{origin}/{_SEQ_LAST}"))
        self._seq = self._last_seq()

    @property
    def origin_used(self) -> bool:
        """Does the remote already hold objects under this replica's origin?"""
        return self._seq > 0

    def _last_seq(self) -> int:
        """This origin's highest sequence number in the replica: keys are never reused, even
        after a crash that left the workspace's own record of them behind."""
        row = self.conn.execute(
            "SELECT max(id) FROM objects WHERE id BETWEEN ? AND ?", self._own
        ).fetchone()
        return row[0] - self._own[0] if row and row[0] is not None else 0

    def _insert(self, kind: str, data: bytes) -> str:
        """A new object under this origin's next key (in the open replica transaction)."""
        if self._seq >= _SEQ_LAST:
            raise SyncError(
                f"this copy has written {_SEQ_LAST:,} objects, the most one origin names:"
                " clone the remote again to go on"
            )
        self._seq += 1
        self.conn.execute(
            "INSERT INTO objects(id, kind, data, pad) VALUES (?, ?, ?, zeroblob(?))",
            (self._own[0] + self._seq, kind, data, padding(len(data), self._page)),
        )
        return f"{self.origin}/{self._seq:012d}"

    def write_blobs(self, contents: Iterable[bytes]) -> list[list[str]]:
        """Store each content as chunks; the chunk keys of each, in order. Written in
        transactions of about ``BATCH_BYTES``, so a killed push keeps what it wrote."""
        out: list[list[str]] = []
        pending = 0
        for data in contents:
            keys = []
            for start in range(0, max(len(data), 1), CHUNK):
                packed = _pack(data[start : start + CHUNK])
                keys.append(self._insert("blob", packed))
                pending += len(packed)
                if pending >= BATCH_BYTES:
                    self.conn.commit()
                    pending = 0
            out.append(keys)
        self.conn.commit()
        return out

    def write_commit(
        self,
        parents: list[str],
        changes: dict[str, Entry | None],
        at: int,
        message: str,
        inline: dict[str, bytes],
    ) -> str:
        """Store a commit (see ``write_changes``)."""
        body = {"parents": parents, "at": at, "message": message}
        key, stored = self.write_changes("commit", body, changes, inline)
        if self._commits is not None:
            self._commits[key] = _commit(key, stored)
        return key

    def write_changes(
        self,
        kind: str,
        body: dict[str, Any],
        changes: dict[str, Entry | None],
        inline: dict[str, bytes],
    ) -> tuple[str, dict[str, Any]]:
        """Store ``body`` with its ``changes`` to a tree (a commit's, a snapshot's) and the
        bytes of small files (``inline``, by content hash) in one object: a push of a few
        small files is then one row, so a pull downloads a page or two rather than one per
        file. Their entries name those bytes ``#``, made ``<key>#<hash>`` in place once the
        object has its key. (The key, and the body as stored.)"""
        offsets: dict[str, list[int]] = {}
        blobs = bytearray()
        for content_hash, data in inline.items():
            offsets[content_hash] = [len(blobs), len(data)]
            blobs += data
        stored = {**body, "changes": changes, "origin": self.origin, "inline": offsets}
        head = json.dumps(stored, ensure_ascii=False, sort_keys=True).encode("utf-8")
        key = self._insert(kind, _two_parts(head, bytes(blobs)))
        self.conn.commit()
        _resolve_inline(key, changes)
        return key, stored

    def changes_objects(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        """Every object of ``kind`` (snapshots) other origins wrote, in key order: its body,
        inline references resolved (files are not decompressed)."""
        out = []
        for key, data in self._others(kind):
            body = json.loads(_split(data, with_blobs=False)[0])
            _resolve_inline(key, body["changes"])
            out.append((key, body))
        return out

    def refer(self, entries: Tree, read: Callable[[str], bytes]) -> dict[str, bytes]:
        """Give each file entry the references of its bytes: chunks this replica has, new
        chunk objects, or (small files, up to ``INLINE_BYTES`` in all) ``#``, the bytes to go
        inside the object about to be written, which are returned by hash. ``read(path)``
        gives a file's bytes (in the caller's transaction: the bytes that were hashed)."""
        stored = self.blob_keys()
        missing: dict[str, list[str]] = {}
        for path, entry in entries.items():
            if entry["type"] != "file":
                continue
            chunks = stored.get(entry["hash"])
            if chunks is None:
                missing.setdefault(entry["hash"], []).append(path)
            else:
                entry["chunks"] = chunks
        inline: dict[str, bytes] = {}
        room = INLINE_BYTES
        for content_hash, holders in missing.items():
            size = entries[holders[0]]["size"]
            if size <= INLINE_FILE and size <= room:
                inline[content_hash] = read(holders[0])
                room -= size
                for path in holders:
                    entries[path]["chunks"] = ["#"]
        rest = [h for h in missing if h not in inline]
        contents = (read(missing[h][0]) for h in rest)
        for content_hash, chunks in zip(rest, self.write_blobs(contents), strict=True):
            for path in missing[content_hash]:
                entries[path]["chunks"] = chunks
        return inline

    def write_object(self, kind: str, body: Any) -> str:
        """Store ``body`` (JSON) as an object of ``kind`` in a transaction of its own."""
        text = json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")
        key = self._insert(kind, _pack(text))
        self.conn.commit()
        return key

    def objects(self, kind: str) -> list[tuple[str, Any]]:
        """Every object of ``kind`` other origins wrote, in key order, decoded."""
        return [(key, json.loads(_unpack(data))) for key, data in self._others(kind)]

    def _others(self, kind: str) -> list[tuple[str, bytes]]:
        rows = self.conn.execute(
            "SELECT id, data FROM objects WHERE kind = ? AND id NOT BETWEEN ? AND ? ORDER BY id",
            (kind, *self._own),
        ).fetchall()
        return [(key_of(row), data) for row, data in rows]

    # --- reading -----------------------------------------------------------------------------

    def content(self, entry: Entry) -> bytes:
        """A file entry's bytes, checked against its hash."""
        parts = []
        for ref in entry["chunks"]:
            key, _, content_hash = ref.partition("#")
            row = self.conn.execute(
                "SELECT data FROM objects WHERE id = ?", (row_id(key),)
            ).fetchone()
            if row is None:
                raise SyncError(f"the replica lacks object {key}: pull again")
            if content_hash:
                offsets, blobs = self._inline(key, row[0])
                start, length = offsets[content_hash]
                parts.append(blobs[start : start + length])
            else:
                parts.append(_unpack(row[0]))
        data = b"".join(parts)
        if digest(data).hex() != entry["hash"]:
            raise SyncError(f"object {entry['chunks']} does not hold the bytes its commit names")
        return data

    def _inline(self, key: str, data: bytes) -> tuple[dict[str, list[int]], bytes]:
        """The files inside commit ``key``: decompressed once per run (a clone reads many
        files of each), the last few kept."""
        found = self._packs.get(key)
        if found is None:
            head, blobs = _split(data, with_blobs=True)
            found = (json.loads(head)["inline"], blobs)
            if len(self._packs) >= 4:
                self._packs.pop(next(iter(self._packs)))
            self._packs[key] = found
        return found

    def commits(self) -> dict[str, Commit]:
        if self._commits is None:
            self._commits = {}
            for row, data in self.conn.execute(
                "SELECT id, data FROM objects WHERE kind = 'commit'"
            ).fetchall():
                key = key_of(row)
                self._commits[key] = _commit(key, json.loads(_split(data, with_blobs=False)[0]))
        return self._commits

    def heads(self) -> list[str]:
        """The commits no commit names as a parent, in key order."""
        commits = self.commits()
        named = {p for c in commits.values() for p in c.parents}
        return sorted(k for k in commits if k not in named)

    def ancestors(self, keys: Iterable[str]) -> set[str]:
        """``keys`` and every commit they descend from."""
        commits = self.commits()
        seen: set[str] = set()
        stack = list(keys)
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            commit = commits.get(key)
            if commit is not None:
                stack.extend(commit.parents)
        return seen

    def merge_base(self, ours: Iterable[str], head: str) -> str | None:
        """The newest common ancestor of ``ours`` and ``head`` (the largest key among the
        common ancestors no other common ancestor descends from); None for unrelated ones."""
        common = self.ancestors(ours) & self.ancestors([head])
        if not common:
            return None
        commits = self.commits()
        below = self.ancestors(p for key in common if key in commits for p in commits[key].parents)
        best = sorted(common - below)
        return best[-1] if best else None

    def tree(self, key: str | None) -> Tree:
        """The tree of commit ``key`` (None: the empty tree): its first-parent chain replayed."""
        if key is None:
            return {}
        if key in self._trees:
            return dict(self._trees[key])
        commits = self.commits()
        chain = []
        at: str | None = key
        while at is not None and at not in self._trees:
            commit = commits.get(at)
            if commit is None:
                raise SyncError(f"the replica lacks commit {at}: pull again")
            chain.append(commit)
            at = commit.parents[0] if commit.parents else None
        tree: Tree = dict(self._trees[at]) if at is not None else {}
        for commit in reversed(chain):
            apply_changes(tree, commit.changes)
        self._trees[key] = tree
        return dict(tree)

    def blob_keys(self) -> dict[str, list[str]]:
        """Which chunks hold each content hash the replica's commits name."""
        found: dict[str, list[str]] = {}
        for commit in self.commits().values():
            for entry in commit.changes.values():
                if entry is not None and entry["type"] == "file":
                    found.setdefault(entry["hash"], entry["chunks"])
        return found


def _commit(key: str, body: dict[str, Any]) -> Commit:
    """A commit as stored, its inline references (``#``) made absolute in place."""
    _resolve_inline(key, body["changes"])
    return Commit(
        key, tuple(body["parents"]), body["changes"], body["origin"], body["at"], body["message"]
    )


def _resolve_inline(key: str, changes: dict[str, Entry | None]) -> None:
    """``#`` (the bytes inside object ``key``) made ``<key>#<hash>``, in place."""
    for entry in changes.values():
        if entry is not None and entry["type"] == "file":
            entry["chunks"] = [
                f"{key}#{entry['hash']}" if ref == "#" else ref for ref in entry["chunks"]
            ]


def _two_parts(head: bytes, blobs: bytes) -> bytes:
    """A commit object: the compressed header's length, the header, the compressed blobs (so
    reading a commit never decompresses its files)."""
    squeezed = zlib.compress(head, 6)
    return len(squeezed).to_bytes(4, "big") + squeezed + zlib.compress(blobs, 6)


def _split(data: bytes, *, with_blobs: bool) -> tuple[bytes, bytes]:
    size = int.from_bytes(data[:4], "big")
    head = zlib.decompress(data[4 : 4 + size])
    return head, zlib.decompress(data[4 + size :]) if with_blobs else b""


def _pack(data: bytes) -> bytes:
    """A flag byte, then the bytes zlib-compressed when that saves at least a tenth."""
    squeezed = zlib.compress(data, 6)
    if len(squeezed) < len(data) * 0.9:
        return _ZLIB + squeezed
    return _RAW + data


def _unpack(data: bytes) -> bytes:
    flag, body = data[:1], data[1:]
    return zlib.decompress(body) if flag == _ZLIB else bytes(body)


def describe(exc: BaseException, url: str) -> str:
    """One line for a pyturso failure: what went wrong talking to ``url``."""
    text = " ".join(str(exc).split())
    lowered = text.lower()
    if "connection refused" in lowered:
        return f"cannot reach {url}: connection refused (is the server running?)"
    if "timed out" in lowered:
        return f"{url} did not answer in time"
    if "status=401" in lowered or "status=403" in lowered:
        return f"{url} refused the token (set TURSO_AUTH_TOKEN or pass --token)"
    if "status=404" in lowered:
        return f"{url} has no such database (404)"
    if "name or service not known" in lowered or "failed to lookup" in lowered:
        return f"cannot resolve the host of {url}"
    return f"sync with {url} failed: {text}"
