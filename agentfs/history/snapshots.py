"""Copy-on-write snapshots of the whole tree, per conversation thread: create, list, show, diff,
restore (all or a subtree), delete (docs/history.md, "Snapshots").

A snapshot is a generation of ``ws_entry`` rows, so taking one reads only the directories
changed since the last and never copies file bytes (the inodes it names are frozen:
``agentfs.history.cow``). Each operation is one transaction; a restore first snapshots the
current state, so it can be undone.
"""

from __future__ import annotations

import builtins
import errno
import functools
import json
import time
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from agentfs.core import paths
from agentfs.core.errors import HistoryNotFoundError, fs_error
from agentfs.core.inodes import ROOT_INO, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, is_dir, split_ns
from agentfs.history import imported
from agentfs.history.cow import RAISE_WATERMARK as _RAISE_WATERMARK
from agentfs.history.imported import ImportedEntry
from agentfs.history.trees import ENTRY_MTIME, Entry, Tree, TreeDiff, changed_dirs, diff

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem
    from agentfs.history.hooks import HistoryHooks


class SnapshotInfo(NamedTuple):
    """One row of ``ws_snapshot``."""

    id: int
    name: str
    thread: str | None
    label: str | None
    meta: object
    created_ns: int
    actor: str | None
    files: int
    bytes: int

    def as_dict(self) -> dict[str, object]:
        return self._asdict()


_COLUMNS = "id, name, thread, label, meta, created_ns, actor, files, bytes"
_OPEN_ROW = (
    f"SELECT d.parent_ino, d.name, :gen, d.ino, i.mode, {ENTRY_MTIME}"
    " FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino"
)


_IS_FILE = f"(mode & {S_IFMT}) = {S_IFREG}"
_SIZES = "SELECT count(*), coalesce(sum(size), 0) FROM fs_inode WHERE ino IN"
#: Files of generation :gen (its rows are the open ones right after it is made).
_TOTALS = f"{_SIZES} (SELECT ino FROM ws_entry WHERE died IS NULL AND {_IS_FILE})"
_JSON_LIST = "(SELECT value FROM json_each(?))"
#: Every inode issued so far may be in a snapshot now (``agentfs.history.cow``'s watermark).
#: Files of any generation :gen.
_TOTALS_AT = (
    f"{_SIZES} (SELECT ino FROM ws_entry WHERE born <= :gen AND (died IS NULL OR died > :gen)"
    f" AND {_IS_FILE})"
)
#: Files generation :gen holds that :gen - 1 did not (no row of theirs alive then).
_TOTALS_ADDED = (
    f"{_SIZES} (SELECT ino FROM ws_entry e WHERE born = :gen AND {_IS_FILE}"
    " AND NOT EXISTS (SELECT 1 FROM ws_entry o WHERE o.ino = e.ino AND o.born < :gen"
    " AND (o.died IS NULL OR o.died >= :gen)))"
)
#: Files generation :gen - 1 held that :gen does not (no row of theirs alive now).
_TOTALS_REMOVED = (
    f"{_SIZES} (SELECT ino FROM ws_entry e WHERE died = :gen AND {_IS_FILE}"
    " AND NOT EXISTS (SELECT 1 FROM ws_entry o WHERE o.ino = e.ino AND o.died IS NULL))"
)


def _check_name(name: str) -> None:
    if not name or "\0" in name or len(name) > 255:
        raise fs_error(errno.EINVAL, str(name), "a snapshot name is 1..255 chars, no NUL")


def _json(meta: object) -> str | None:
    return json.dumps(meta) if meta is not None else None


def _info(row: tuple) -> SnapshotInfo:
    values = list(row)
    values[4] = json.loads(values[4]) if values[4] is not None else None
    return SnapshotInfo(*values)


class RestoreResult(NamedTuple):
    """What ``Snapshots.restore`` did: the snapshot that undoes it, and what changed."""

    undo: str
    changes: TreeDiff


class Snapshots:
    """The snapshots of one workspace (``ws.snapshots``)."""

    def __init__(self, fs: FileSystem, hooks: HistoryHooks) -> None:
        self.fs = fs
        self.hooks = hooks  # fs's history: settings, versions, copy-down
        self.conn = fs.conn

    # --- creating -----------------------------------------------------------------------------

    def create(
        self,
        name: str | None = None,
        *,
        thread: str | None = None,
        label: str | None = None,
        meta: object = None,
    ) -> SnapshotInfo:
        """Record the whole tree as it is now, under ``name`` (default: ``snap-<n>``).

        ``thread`` defaults to the handle's thread; ``meta`` is any JSON value (a turn
        number, a message id). Costs what changed since the previous snapshot.
        """
        if name is not None:
            _check_name(name)
        with self.fs.transaction():
            return self._create(name, thread or self.hooks.acting.now.thread, label, _json(meta))

    def _create(
        self,
        name: str | None,
        thread: str | None,
        label: str | None,
        meta: str | None,
        prefix: str = "snap",
    ) -> SnapshotInfo:
        """The snapshot itself, inside the caller's transaction. Without a ``name`` it is
        ``<prefix>-<generation>`` (or, if a user took that name, one with a random suffix)."""
        if name is not None and self._find(name) is not None:
            raise fs_error(errno.EEXIST, name, "a snapshot of this name exists")
        gen = self.conn.execute(
            "INSERT INTO ws_snapshot(name, thread, label, meta, created_ns, actor, files, bytes)"
            " VALUES (coalesce(?, ? || '-' || hex(randomblob(4))), ?, ?, ?, ?, ?, ?, ?)"
            " RETURNING id",
            (
                name,
                prefix,
                thread,
                label,
                meta,
                time.time_ns(),
                self.hooks.acting.now.actor,
                0,
                0,
            ),
        ).get
        if name is None:
            self.conn.execute(
                "UPDATE ws_snapshot SET name = :prefix || '-' || id WHERE id = :gen AND"
                " NOT EXISTS (SELECT 1 FROM ws_snapshot WHERE name = :prefix || '-' || :gen)",
                {"prefix": prefix, "gen": gen},
            )
        if self.hooks.cow.settings.watermark < 0:
            self.conn.execute(
                f"INSERT INTO ws_entry(parent, name, born, ino, mode, mtime_ns) {_OPEN_ROW}",
                {"gen": gen},
            )
        else:
            self._close_changed(gen)
        self.conn.execute(
            "UPDATE ws_snapshot SET files = ?, bytes = ? WHERE id = ?", (*self._totals(gen), gen)
        )
        self.conn.execute("DELETE FROM ws_dirty")
        self.conn.execute(_RAISE_WATERMARK)
        self.hooks.cow.snapshot_taken()
        return self._get_id(gen)

    def import_tree(
        self,
        name: str,
        entries: Iterable[ImportedEntry],
        *,
        thread: str | None,
        label: str | None,
        meta: object,
        created_ns: int,
        actor: str | None,
    ) -> SnapshotInfo:
        """Record a snapshot another copy of the workspace took (sync brings them): its tree
        (every entry, directories included) under ``name``, with its thread, label, meta,
        time and actor, without touching the live tree (``agentfs.history.imported``)."""
        _check_name(name)
        with self.fs.transaction():
            if self._find(name) is not None:
                raise fs_error(errno.EEXIST, name, "a snapshot of this name exists")
            fresh = self.hooks.cow.settings.watermark < 0  # no baseline yet: the live tree
            gen = self.conn.execute(
                "INSERT INTO ws_snapshot(name, thread, label, meta, created_ns, actor, files,"
                " bytes) VALUES (?, ?, ?, ?, ?, ?, 0, 0) RETURNING id",
                (name, thread, label, _json(meta), created_ns, actor),
            ).get
            imported.record(self.fs, gen, entries)
            if fresh:
                self.conn.execute(
                    f"INSERT INTO ws_entry(parent, name, born, ino, mode, mtime_ns) {_OPEN_ROW}",
                    {"gen": gen + 1},
                )
            files, size = self.conn.execute(_TOTALS_AT, {"gen": gen}).get
            self.conn.execute(
                "UPDATE ws_snapshot SET files = ?, bytes = ? WHERE id = ?", (files, size, gen)
            )
            self.conn.execute(_RAISE_WATERMARK)
            self.hooks.cow.snapshot_taken()
            return self._get_id(gen)

    def _totals(self, gen: int) -> tuple[int, int]:
        """(files, bytes) of generation ``gen``, just made: a hard-linked file counts once.
        From the previous generation's totals and the rows this one opened and closed when
        that snapshot still exists (so the cost follows the changes; frozen inodes never
        change size), else counted over the whole generation."""
        previous = self.conn.execute(
            "SELECT files, bytes FROM ws_snapshot WHERE id = ?", (gen - 1,)
        ).get
        if previous is None:
            return self.conn.execute(_TOTALS, {"gen": gen}).get
        added = self.conn.execute(_TOTALS_ADDED, {"gen": gen}).get
        removed = self.conn.execute(_TOTALS_REMOVED, {"gen": gen}).get
        return previous[0] + added[0] - removed[0], previous[1] + added[1] - removed[1]

    def _close_changed(self, gen: int) -> None:
        """Close the open rows of dirty directories that no longer match the live tree, and
        open rows for live entries that have no matching open row."""
        self.conn.execute(
            "UPDATE ws_entry SET died = :gen WHERE died IS NULL AND parent IN"
            " (SELECT ino FROM ws_dirty) AND NOT EXISTS (SELECT 1 FROM fs_dentry d"
            " JOIN fs_inode i ON i.ino = d.ino WHERE d.parent_ino = ws_entry.parent"
            " AND d.name = ws_entry.name AND d.ino = ws_entry.ino AND i.mode = ws_entry.mode"
            f" AND {ENTRY_MTIME} = ws_entry.mtime_ns)",
            {"gen": gen},
        )
        self.conn.execute(
            f"INSERT INTO ws_entry(parent, name, born, ino, mode, mtime_ns) {_OPEN_ROW}"
            " WHERE d.parent_ino IN (SELECT ino FROM ws_dirty) AND NOT EXISTS (SELECT 1"
            " FROM ws_entry e WHERE e.parent = d.parent_ino AND e.name = d.name"
            " AND e.died IS NULL)",
            {"gen": gen},
        )

    # --- reading ------------------------------------------------------------------------------

    def _find(self, name: str) -> SnapshotInfo | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM ws_snapshot WHERE name = ?", (name,)).get
        return None if row is None else _info(row)

    def _get_id(self, gen: int) -> SnapshotInfo:
        return _info(
            self.conn.execute(f"SELECT {_COLUMNS} FROM ws_snapshot WHERE id = ?", (gen,)).get
        )

    def get(self, name: str) -> SnapshotInfo:
        with self.fs.read_transaction():
            found = self._find(name)
        if found is None:
            raise HistoryNotFoundError(f"no snapshot named {name!r}")
        return found

    def list(self, thread: str | None = None) -> list[SnapshotInfo]:
        """Snapshots oldest first; only ``thread``'s when given."""
        with self.fs.read_transaction():
            if thread is None:
                rows = self.conn.execute(f"SELECT {_COLUMNS} FROM ws_snapshot ORDER BY id")
            else:
                rows = self.conn.execute(
                    f"SELECT {_COLUMNS} FROM ws_snapshot WHERE thread = ? ORDER BY id", (thread,)
                )
            return [_info(row) for row in rows]

    def show(self, name: str, path: str = "/") -> builtins.list[tuple[str, Entry]]:
        """Every entry of snapshot ``name`` at or below ``path``, sorted by path."""
        path = paths.normalize(path)
        with self.fs.read_transaction():
            tree = Tree(self.conn, self._require(name).id)
            if path == "/":
                return sorted(tree.walk(1, "/"))
            parent, base = paths.parent_and_name(path)
            parent_ino = self._dir_in(tree, parent)
            entry = tree.children(parent_ino).get(base) if parent_ino else None
            if entry is None:
                raise fs_error(errno.ENOENT, path, f"not in snapshot {name!r}")
            below = tree.walk(entry.ino, path) if is_dir(entry.mode) else []
            return sorted([(path, entry), *below])

    def read(self, name: str, path: str) -> bytes:
        """The bytes of file ``path`` as snapshot ``name`` holds them."""
        path = paths.normalize(path)
        with self.fs.read_transaction():
            tree = Tree(self.conn, self._require(name).id)
            parent, base = paths.parent_and_name(path)
            parent_ino = self._dir_in(tree, parent)
            entry = tree.children(parent_ino).get(base) if parent_ino else None
            if entry is None:
                raise fs_error(errno.ENOENT, path, f"not in snapshot {name!r}")
            if is_dir(entry.mode):
                raise fs_error(errno.EISDIR, path)
            if entry.mode & S_IFMT != S_IFREG:
                raise fs_error(errno.EINVAL, path, f"not a regular file in snapshot {name!r}")
            size = self.conn.execute("SELECT size FROM fs_inode WHERE ino = ?", (entry.ino,)).get
            return self.fs.chunks.read(entry.ino, size)

    def entries(self, name: str) -> builtins.list[ImportedEntry]:
        """Every entry of snapshot ``name``, directories included, as ``import_tree`` takes
        them: what sync sends. A file's bytes are read when its ``content`` is called."""
        with self.fs.read_transaction():
            found = self.show(name)
            files = [e.ino for _, e in found if e.mode & S_IFMT == S_IFREG]
            links = [e.ino for _, e in found if e.mode & S_IFMT == S_IFLNK]
            sizes: dict[int, int] = {
                ino: size
                for ino, size in self.conn.execute(
                    f"SELECT ino, size FROM fs_inode WHERE ino IN {_JSON_LIST}",
                    (json.dumps(files),),
                )
            }
            targets: dict[int, str] = {
                ino: target
                for ino, target in self.conn.execute(
                    f"SELECT ino, target FROM fs_symlink WHERE ino IN {_JSON_LIST}",
                    (json.dumps(links),),
                )
            }
        out = []
        for path, entry in found:
            kind = entry.mode & S_IFMT
            content = None
            if kind == S_IFREG:
                content = functools.partial(self._content, entry.ino, sizes[entry.ino])
            out.append(
                ImportedEntry(path, entry.mode, entry.mtime_ns, targets.get(entry.ino), content)
            )
        return out

    def _content(self, ino: int, size: int) -> bytes:
        with self.fs.read_transaction():
            return self.fs.chunks.read(ino, size)

    @staticmethod
    def _dir_in(tree: Tree, path: str) -> int:
        """Inode of directory ``path`` in ``tree`` (0 if absent)."""
        ino = ROOT_INO
        for name in paths.split(path):
            entry = tree.children(ino).get(name)
            if entry is None or not is_dir(entry.mode):
                return 0
            ino = entry.ino
        return ino

    def _require(self, name: str) -> SnapshotInfo:
        found = self._find(name)
        if found is None:
            raise HistoryNotFoundError(f"no snapshot named {name!r}")
        return found

    def diff(self, a: str, b: str | None = None, path: str = "/") -> TreeDiff:
        """Paths added, removed and modified from snapshot ``a`` to snapshot ``b`` (None: the
        live tree), at or below ``path``."""
        path = paths.normalize(path)
        with self.fs.read_transaction():
            old = self._require(a).id
            new = self._require(b).id if b is not None else None
            dirs = changed_dirs(self.conn, old, new)
            return diff(Tree(self.conn, old), Tree(self.conn, new), dirs, path)

    # --- deleting -----------------------------------------------------------------------------

    def delete(self, name: str) -> None:
        """Forget snapshot ``name``; what only it held is freed (with the orphan queue)."""
        with self.fs.transaction():
            gen = self._require(name).id
            self.conn.execute("DELETE FROM ws_snapshot WHERE id = ?", (gen,))
            self.prune()
        self.fs.orphans.purge_due()

    def forget_after(self, gen: int) -> None:
        """Make generation ``gen`` the newest, as if nothing had been snapshotted after it
        (``fork``): later snapshots and their rows go, rows alive at ``gen`` are reopened as
        the baseline, and every directory is marked dirty so the next snapshot re-reads the
        tree (whatever happened after ``gen`` is then recorded afresh)."""
        self.conn.execute("DELETE FROM ws_snapshot WHERE id > ?", (gen,))
        self.conn.execute("DELETE FROM ws_entry WHERE born > ?", (gen,))
        self.conn.execute("UPDATE ws_entry SET died = NULL WHERE died > ?", (gen,))
        self.conn.execute(
            "INSERT OR IGNORE INTO ws_dirty(ino) SELECT ino FROM fs_inode"
            f" WHERE (mode & {S_IFMT}) = {S_IFDIR}"
        )
        self.prune()

    def prune(self) -> int:
        """Drop ``ws_entry`` rows no snapshot needs and release the inodes only they held;
        with no snapshot left, drop the baseline too. Inside the caller's transaction."""
        if self.conn.execute("SELECT 1 FROM ws_snapshot LIMIT 1").get is None:
            dropped = self.conn.execute("DELETE FROM ws_entry RETURNING ino").fetchall()
            self.conn.execute("DELETE FROM ws_dirty")
            self.conn.execute("UPDATE ws_config SET value = '-1' WHERE key = 'snapshot.watermark'")
            self.hooks.cow.reload()
        else:
            dropped = self.conn.execute(
                "DELETE FROM ws_entry WHERE died IS NOT NULL AND NOT EXISTS (SELECT 1 FROM"
                " ws_snapshot s WHERE s.id >= ws_entry.born AND s.id < ws_entry.died)"
                " RETURNING ino"
            ).fetchall()
        for ino in {int(ino) for (ino,) in dropped}:  # type: ignore[arg-type]
            row = self.conn.execute("SELECT nlink, mode FROM fs_inode WHERE ino = ?", (ino,)).get
            if row is not None and row[0] == 0 and not is_dir(row[1]):
                self.hooks.release_if_unheld(ino)
        return len(dropped)

    # --- restoring ----------------------------------------------------------------------------

    def restore(self, name: str, path: str = "/") -> RestoreResult:
        """Make the tree (or only ``path`` and what is below it) what snapshot ``name`` holds.

        One transaction: it first snapshots the current state (``RestoreResult.undo`` names
        it, so ``restore(result.undo)`` goes back), then relinks the frozen inodes of the
        entries that differ. Files keep the mode and mtime the snapshot recorded; directories
        get the mode, and the restore time as mtime.
        """
        path = paths.normalize(path)
        with self.fs.transaction():
            target = self._require(name)
            undo = self._create(
                None,
                self.hooks.acting.now.thread,
                f"automatic: the state before restoring {name!r}",
                None,
                prefix="before-restore",
            )
            want, have = Tree(self.conn, target.id), Tree(self.conn, undo.id)
            dirs = changed_dirs(self.conn, target.id, undo.id)
            restorer = _Restorer(self.fs, self.hooks, want, have, path)
            if path != "/":
                restorer.anchor(self._dir_in(want, paths.parent_and_name(path)[0]))
            restorer.run(dirs)
            # What changed, read back: the live tree against the undo snapshot, in the
            # directories the restore marked dirty.
            live = Tree(self.conn, None)
            changes = diff(have, live, changed_dirs(self.conn, undo.id, None), path)
            self._record_history(changes)
            self.fs.drop_caches()
        self.fs.orphans.purge_due()
        return RestoreResult(undo.name, changes)

    def _record_history(self, changes: TreeDiff) -> None:
        """Restored files get a 'restore' version, removed ones a 'delete' event."""
        hooks = self.hooks
        if not hooks.cow.settings.versioning:
            return
        not_files = [p for p, e in changes.after.items() if e.mode & S_IFMT != S_IFREG]
        for p in [*changes.removed, *not_files]:  # gone, or now a directory or a symlink
            latest = hooks.versions.latest(p)
            if latest is not None and latest.has_content:
                hooks.versions.record(p, "delete")
        for p, entry in changes.after.items():
            if entry.mode & S_IFMT == S_IFREG:
                hooks.arrived(p, entry.ino, "restore")


class _Restorer:
    """Applies one restore: detach what differs, attach what the snapshot had, fix counts."""

    def __init__(
        self, fs: FileSystem, hooks: HistoryHooks, want: Tree, have: Tree, scope: str
    ) -> None:
        self.fs = fs
        self.hooks = hooks
        self.conn = fs.conn
        self.want = want
        self.have = have
        self.scope = scope
        self.links: Counter[int] = Counter()  # nlink change per file inode
        self.detached_dirs: set[int] = set()
        self.attached: set[int] = set()  # inodes given a name by this restore
        #: The snapshot's directory holding the scope -> the live one (see ``anchor``).
        self.live_dir: dict[int, int] = {}
        self._live: Tree | None = None  # the live tree, read lazily by _named_outside

    def anchor(self, snapshot_parent: int) -> None:
        """For a subtree restore: the live directory the scope goes into is the one at the
        scope's parent path now (made if missing), whatever inode the snapshot had there (0:
        the snapshot has no such directory, so the scope is only removed)."""
        parent = paths.parent_and_name(self.scope)[0]
        if snapshot_parent:
            live = self.fs.makedirs(parent)
        else:
            try:
                live = self.fs.directory_ino(parent)
            except (FileNotFoundError, NotADirectoryError):
                return  # in neither tree: nothing to restore
        self.live_dir[snapshot_parent] = live

    def _in_scope(self, dir_path: str | None, name: str) -> bool:
        return dir_path is not None and paths.is_within(paths.join(dir_path, name), self.scope)

    def run(self, dirs: set[int]) -> None:
        anchored = set(self.live_dir.values()) - set(self.live_dir)
        plan = []
        for dir_ino in (dirs - anchored) | set(self.live_dir):
            live = self.live_dir.get(dir_ino, dir_ino)
            have_path, want_path = self.have.dir_path(live), self.want.dir_path(dir_ino)
            have = self.have.children(live) if have_path is not None else {}
            want = self.want.children(dir_ino) if want_path is not None else {}
            plan.append((live, have_path, want_path, have, want))
        for live, have_path, _, have, want in plan:  # 1: detach
            for name, entry in have.items():
                if want.get(name, _NONE).ino != entry.ino and self._in_scope(have_path, name):
                    self._detach(live, name, entry)
        for live, _, want_path, have, want in plan:  # 2: attach, fix mode/mtime
            for name, entry in want.items():
                if not self._in_scope(want_path, name):
                    continue
                current = have.get(name)
                if current is None or current.ino != entry.ino:
                    self._attach(live, name, entry)
                elif current != entry:
                    self._set_meta(entry)
        self._finish({live for live, *_ in plan})

    def _detach(self, dir_ino: int, name: str, entry: Entry) -> None:
        self.conn.execute(
            "DELETE FROM fs_dentry WHERE parent_ino = ? AND name = ?", (dir_ino, name)
        )
        if is_dir(entry.mode):
            self.detached_dirs.add(entry.ino)
        else:
            self.links[entry.ino] -= 1

    def _attach(self, dir_ino: int, name: str, entry: Entry) -> None:
        exists = self.conn.execute("SELECT 1 FROM fs_inode WHERE ino = ?", (entry.ino,)).get
        if is_dir(entry.mode):
            if entry.ino in self.attached or (
                exists and entry.ino not in self.detached_dirs and self._named(entry.ino)
            ):
                raise fs_error(
                    errno.EBUSY,
                    self.scope,
                    "a directory of this subtree now lives outside it; restore the whole tree",
                )
            if not exists:
                sec, nsec = split_ns(time.time_ns())
                self.conn.execute(
                    "INSERT INTO fs_inode(ino, mode, nlink, uid, gid, size, atime, mtime,"
                    " ctime, atime_nsec, mtime_nsec, ctime_nsec)"
                    " VALUES (?, ?, 2, ?, ?, 0, ?, ?, ?, ?, ?, ?)",
                    (entry.ino, entry.mode, *self.fs.owner, sec, sec, sec, nsec, nsec, nsec),
                )
            self.detached_dirs.discard(entry.ino)
        elif not exists:
            raise fs_error(errno.EIO, self.scope, f"snapshot content inode {entry.ino} is missing")
        elif self._named_outside(entry.ino):
            # A subtree restore must not tie a file to one outside it (renamed away since):
            # the restored name gets a copy of the content instead.
            entry = entry._replace(ino=self.hooks.cow.clone(entry.ino, time.time_ns()).st_ino)
            self.links[entry.ino] += 1
        else:
            self.links[entry.ino] += 1
        self.attached.add(entry.ino)
        self.conn.execute(
            "INSERT INTO fs_dentry(name, parent_ino, ino) VALUES (?, ?, ?)",
            (name, dir_ino, entry.ino),
        )
        self._set_meta(entry)

    def _named_outside(self, ino: int) -> bool:
        """Does file ``ino`` keep a name this subtree restore does not govern? (Names inside
        the scope that survive the detach phase are the snapshot's own: a hard link.)"""
        if self.scope == "/" or ino in self.attached:
            return False
        nlink = self.conn.execute("SELECT nlink FROM fs_inode WHERE ino = ?", (ino,)).get
        if nlink + self.links[ino] <= 0:
            return False
        if self._live is None:
            self._live = Tree(self.conn, None)
        for parent, name in self.conn.execute(  # a scan, but only for a linked file
            "SELECT parent_ino, name FROM fs_dentry WHERE ino = ?", (ino,)
        ).fetchall():
            where = self._live.dir_path(parent)  # type: ignore[arg-type]
            if where is None or not self._in_scope(where, name):  # type: ignore[arg-type]
                return True
        return False

    def _is_dir(self, ino: int) -> bool:
        mode = self.conn.execute("SELECT mode FROM fs_inode WHERE ino = ?", (ino,)).get
        return mode is not None and is_dir(mode)

    def _named(self, ino: int) -> bool:
        return self.conn.execute("SELECT 1 FROM fs_dentry WHERE ino = ?", (ino,)).get is not None

    def _set_meta(self, entry: Entry) -> None:
        if is_dir(entry.mode):
            self.conn.execute("UPDATE fs_inode SET mode = ? WHERE ino = ?", (entry.mode, entry.ino))
            return
        sec, nsec = split_ns(entry.mtime_ns)
        self.conn.execute(
            "UPDATE fs_inode SET mode = ?, mtime = ?, mtime_nsec = ? WHERE ino = ?",
            (entry.mode, sec, nsec, entry.ino),
        )

    def _finish(self, dirs: set[int]) -> None:
        fs = self.fs
        for dir_ino in self.detached_dirs:  # gone from the tree: its subtree goes too
            fs.orphans.unlink_subtree(dir_ino, track_dirty=self.hooks.tracks_dirs())
            fs.orphans.free_directory(dir_ino)
        for ino, delta in self.links.items():
            if delta:
                nlink = self.conn.execute(
                    "UPDATE fs_inode SET nlink = nlink + ? WHERE ino = ? RETURNING nlink",
                    (delta, ino),
                ).get
                if nlink <= 0:
                    self.hooks.release_if_unheld(ino)
        touched = dirs | {i for i in self.attached if self._is_dir(i)}
        for dir_ino in touched:
            self.hooks.cow.mark_dirty(dir_ino)
        self.conn.executemany(
            "UPDATE fs_inode SET nlink = 2 + (SELECT count(*) FROM fs_dentry d JOIN fs_inode c"
            f" ON c.ino = d.ino WHERE d.parent_ino = fs_inode.ino AND (c.mode & {S_IFMT}) ="
            f" {S_IFDIR}) WHERE ino = ?",
            [(ino,) for ino in touched],
        )


_NONE = Entry(-1, 0, 0)
