"""What history does at each change of the core (``HistoryHooks``, the ``Changes`` a workspace
installs): record version events, copy held content down or keep its bytes aside, mark what
snapshots must re-read, and track reads, by the rules of ``history.cow``, ``history.versions``
and ``history.reads``.
"""

from __future__ import annotations

from types import EllipsisType
from typing import TYPE_CHECKING, NamedTuple

from agentfs.core import paths
from agentfs.core.changes import Change, Changes, Place, Rewrite
from agentfs.core.digests import digest
from agentfs.core.inodes import Stat, is_dir, is_file, is_symlink, now_ns
from agentfs.history.cow import CopyOnWrite
from agentfs.history.hashing import MIN_BYTES, PrefixHashes
from agentfs.history.identity import Acting
from agentfs.history.reads import FileState, Reads
from agentfs.history.versions import Version, Versions

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem, WriteTarget


class _Versioned(NamedTuple):
    """What ``_rewriting`` found for a versioned whole-file write, for ``changed``."""

    key: str  # the history path
    hash: bytes  # the new content's digest
    latest: Version | None  # the path's newest event before this write


class _Move(NamedTuple):
    """One file a rename moves in history: from ``old`` to ``new`` (history paths)."""

    old: str
    new: str
    ino: int
    latest: Version | None  # ``old``'s newest event (None: it has no history yet)


class HistoryHooks(Changes):
    """History's side of every change of ``fs`` (see the module docstring).

    Attributes:
        fs: the filesystem whose changes this records.
        cow: which inodes snapshots hold, copy-down, the settings (``history.cow``).
        versions: each path's version events (``history.versions``).
        reads: read records and the read-before-write policy (``history.reads``).
        hashes: the states that let an append hash only what it adds (``history.hashing``).
    """

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        self.cow = CopyOnWrite(fs.conn)
        #: Who acts through the handle (``agentfs.history.identity``).
        self.acting = Acting()
        self.versions = Versions(fs.conn, self.cow, fs.chunks, self.release_if_unheld, self.acting)
        self.reads = Reads(fs.conn, self.acting)
        self.hashes = PrefixHashes()

    # --- transactions and names (Changes) ---------------------------------------------------

    def begin(self, data_version: int, others_committed: bool) -> None:
        self.cow.begin(data_version, others_committed)
        self.versions.begin()

    def invalidate(self) -> None:
        self.cow.invalidate()

    def created(self, ino: int) -> None:
        self.cow.fresh.add(ino)

    def brought_in(self, dir_ino: int) -> None:
        self.cow.held_all_along(dir_ino)

    def dir_changed(self, dir_ino: int) -> None:
        self.cow.mark_dirty(dir_ino)

    def holds(self, ino: int) -> bool:
        return self.cow.referenced(ino)

    def tracks_dirs(self) -> bool:
        return self.cow.settings.watermark >= 0

    def names_changed(self, dentry_id: int | None, ino: int) -> None:
        """Snapshots record each entry's mode and mtime: mark the directories holding the
        names of ``ino`` dirty (all of them for a hard-linked file, found by a scan).
        ``dentry_id``: one of its names (0: it has none; None: whichever it has, looked up
        only when snapshots need it)."""
        if self.cow.settings.watermark < 0 or dentry_id == 0:
            return
        conn = self.fs.conn
        named = "id = ?" if dentry_id is not None else "fs_dentry.ino = ?"
        row = conn.execute(
            f"SELECT parent_ino, nlink, mode FROM fs_dentry, fs_inode"
            f" WHERE {named} AND fs_inode.ino = ? LIMIT 1",
            (ino if dentry_id is None else dentry_id, ino),
        ).get
        if row is None:
            return  # unlinked: no directory shows it
        parent: int
        parent, nlink, mode = row
        if nlink > 1 and not is_dir(mode):
            for (other,) in conn.execute(
                "SELECT parent_ino FROM fs_dentry WHERE ino = ?", (ino,)
            ).fetchall():
                self.cow.mark_dirty(other)  # type: ignore[arg-type]
        else:
            self.cow.mark_dirty(parent)

    def linked(self, parent_ino: int, name: str, ino: int) -> None:
        self.arrived(self.fs.path_in(parent_ino, name), ino, "link")

    def deleting(self, parent_ino: int, name: str, mode: int) -> None:
        """A file, or every file with history below a directory, stops existing there."""
        if not self.cow.settings.versioning or not (is_file(mode) or is_dir(mode)):
            return
        real = self.fs.path_in(parent_ino, name)
        versions = self.versions
        for latest in versions.holding_under(real) if is_dir(mode) else [versions.latest(real)]:
            if latest is not None and latest.has_content:
                versions.record(latest.path, "delete", latest=latest)

    def moving(self, src: Place, dst: Place, ino: int, mode: int) -> None:
        """Each file with history (the file itself, or every one below a directory) gets a
        'move' event and its new path a 'rename' event."""
        self._record_moves(self._moves(src, dst, ino, mode))

    def exchanging(self, a: Place, b: Place, at_a: tuple[int, int], at_b: tuple[int, int]) -> None:
        """Both sides move at once: every 'move' is recorded before any 'rename', so a path
        that is both left and arrived at (``a`` itself, or a name below both directories)
        ends with the file that arrived."""
        self._record_moves(self._moves(a, b, *at_a) + self._moves(b, a, *at_b))

    def _moves(self, src: Place, dst: Place, ino: int, mode: int) -> list[_Move]:
        """What moving ``src`` (inode ``ino``) to ``dst`` moves in history, read before the
        names change."""
        if not self.cow.settings.versioning or not (is_file(mode) or is_dir(mode)):
            return []  # only regular files have versions (a directory: those below it)
        versions = self.versions
        real_src, real_dst = self.fs.path_in(*src), self.fs.path_in(*dst)
        if not is_dir(mode):
            return [_Move(real_src, real_dst, ino, versions.latest(real_src))]
        moves = []
        dirs = {"": ino}  # the moved directory's subdirectories met so far, by relative path
        for latest in versions.holding_under(real_src):
            old = latest.path
            found = self._below(dirs, old[len(real_src) + 1 :])  # the file there now
            if found is not None:  # else gone while versioning was off: nothing moves
                moves.append(_Move(old, real_dst + old[len(real_src) :], found, latest))
        return moves

    def _below(self, dirs: dict[str, int], relative: str) -> int | None:
        """The inode at ``relative`` below the directory ``dirs[""]``, found name by name (no
        symlink followed, no whole path resolved), or None; ``dirs`` caches directories. The
        directories not yet met are looked up from the deepest one met, downwards (a loop: a
        tree may be deeper than Python's recursion limit)."""
        pending = []
        above = relative.rpartition("/")[0]
        while above not in dirs:  # "" always is
            pending.append(above)
            above = above.rpartition("/")[0]
        parent = dirs[above]
        for directory in reversed(pending):
            st = self.fs.by_inode.lookup(parent, directory.rpartition("/")[2])
            if st is None:
                return None
            parent = dirs[directory] = st.st_ino
        st = self.fs.by_inode.lookup(parent, relative.rpartition("/")[2])
        return None if st is None else st.st_ino

    def _record_moves(self, moves: list[_Move]) -> None:
        for move in moves:
            if move.latest is not None:
                self.versions.record(move.old, "move", other=move.new, latest=move.latest)
        for move in moves:
            self.arrived(move.new, move.ino, "rename", other=move.old)

    # --- reads (Changes) ----------------------------------------------------------------------

    def reader(self) -> str | None:
        return self.acting.now.thread

    def read(self, reader: str, path: str, st: Stat, whole: bytes | None) -> None:
        self.remember_read(reader, path, st, whole)

    def remember_read(
        self, thread: str, path: str, st: Stat, whole: bytes | None, into: Reads | None = None
    ) -> None:
        """Record that ``thread`` read the file ``st`` at ``path`` (all of it: ``whole``), in
        this log or in ``into`` (a layered workspace keeps the reads of its lower layers'
        files in its first layer's log, where the copy-up that writes them checks)."""
        if is_symlink(self.fs.lstat(path).st_mode):
            key = self.fs.realpath(path)  # the file it leads to, every symlink followed
        else:
            key = self.history_path(path)
        state = self.file_state(key, st.st_ino)
        if state.hash is None and whole is not None:
            state = state._replace(hash=digest(whole))
        (into or self.reads).record(thread, key, state, whole is None, now_ns())

    def file_state(self, key: str, ino: int) -> FileState:
        """The file ``ino`` (whose history is kept under ``key``) as read tracking sees it."""
        ctime_ns, size = self.fs.conn.execute(
            "SELECT ctime * 1000000000 + ctime_nsec, size FROM fs_inode WHERE ino = ?", (ino,)
        ).get
        latest = self.versions.latest(key)
        if latest is not None and latest.describes(ino, size):
            by = "/".join(x for x in (latest.actor, latest.thread) if x) or None
            return FileState(ino, ctime_ns, size, latest.n, latest.hash, by)
        return FileState(ino, ctime_ns, size, None, None)

    def check_read(self, key: str, ino: int, reads: Reads, thread: str | None) -> None:
        """Raise ``StaleReadError`` unless ``thread`` read the file ``ino`` (kept under
        ``key``) as it is now, by the records and policy of ``reads`` (this log, or the
        first layer's when a layered workspace copies a lower file up)."""
        if not reads.guards(key):
            return
        state = self.file_state(key, ino)
        current = state.hash
        if current is None and state.size <= self.cow.settings.max_bytes:
            current = digest(self.fs.chunks.read(ino, state.size))
        reads.check(thread, key, state, current)

    # --- writes (Changes) ---------------------------------------------------------------------

    def digest_limit(self) -> int:
        settings = self.cow.settings
        return settings.max_bytes if settings.versioning else 0

    def guard(self, target: WriteTarget) -> None:
        """Enforce read-before-write on an existing file (see ``history.reads``)."""
        who = self.acting.now
        if not who.read_before_write or target.created:
            return
        key = self.fs.path_in(target.parent_ino, target.name)
        self.check_read(key, target.ino, self.reads, who.thread)

    def touched(self, target: WriteTarget) -> None:
        """A write that changed no byte still set the times: the directory's entry changed,
        and the writer's read record follows (or its own touch would make it stale)."""
        self.cow.mark_dirty(target.parent_ino)
        self.wrote(target)

    def changing(self, target: WriteTarget, change: Change) -> Rewrite:
        """Keep what the change is about to replace (``_rewriting`` for a whole rewrite,
        ``_keep``); the answer says how much of the file is still in place."""
        if change.data is not None:
            return self._rewriting(target, change.data)
        kept = self._keep(
            target,
            whole=change.whole,
            first=change.first,
            unchanged_below=change.unchanged_below,
        )
        return Rewrite(kept)

    def changed(self, target: WriteTarget, change: Change, size: int, memo: object = None) -> None:
        """Record the change's version (a handle's comes at ``closed``); the writer has seen
        what it wrote."""
        if change.data is not None:
            if isinstance(memo, _Versioned):
                self.versions.record(
                    memo.key, "write", target.ino, size, memo.hash, latest=memo.latest
                )
            elif target.created and self.cow.settings.versions(size):
                key = self.fs.path_in(target.parent_ino, target.name)
                self.versions.record(key, "write", target.ino, size, digest(change.data))
        elif not change.by_handle:
            self._changed_in_place(target, size, change.appended)
        self.wrote(target)

    def _rewriting(self, target: WriteTarget, data: bytes) -> Rewrite:
        """The whole file becomes ``data``: keep what it holds now if no version does, and
        let history take what it must keep (``_keep``); not ``needed`` when it already holds
        exactly these bytes and its newest version says so (no copy, no version)."""
        if not self.cow.settings.versions(len(data)):
            return Rewrite(self._keep(target, whole=True, first=False))
        hash_ = digest(data)
        key = self.fs.path_in(target.parent_ino, target.name)
        latest = self.keep_untracked(target, key, self.versions.latest(key))
        if (
            latest is not None
            and latest.describes(target.ino, target.size)
            and latest.hash == hash_
        ):
            return Rewrite(target.size, needed=False)
        in_place = self._keep(target, whole=True, first=False)
        return Rewrite(in_place, _Versioned(key, hash_, latest))

    def _keep(
        self,
        target: WriteTarget,
        *,
        whole: bool = False,
        first: bool = True,
        unchanged_below: int = 0,
    ) -> int:
        """Before ``target``'s content changes in place: how many committed bytes it still
        holds. Nothing is done when the change leaves every byte it has now in place (an
        append: each version naming it still finds its bytes as a prefix, ``Versions``) or
        once the versions that name it have their bytes kept (``Versions.keep``); the content
        is copied down (``copy_down``) when a snapshot holds it or it is too large to keep.
        ``whole``: a rewrite of every byte, so a copy-down may move the chunks (the answer is
        then 0). ``first``: keep its content as a version first if none is (``keep_untracked``)."""
        ino = target.ino
        if first and not (target.created or ino in self.cow.fresh):  # else nothing to keep
            self.keep_untracked(target)
        if target.created:
            return target.size
        key = self.fs.path_in(target.parent_ino, target.name) if self.versions.pending else None
        if not self.cow.snapshotted(ino) and (
            unchanged_below >= target.size or self.versions.keep(ino, target.size, key)
        ):
            return target.size
        return 0 if self.copy_down(target, key, whole=whole) else target.size

    def _changed_in_place(self, target: WriteTarget, size: int, appended: bytes | None) -> None:
        """Record the new content of a partly rewritten file, or drop this transaction's
        version of it when it outgrew ``history.max_bytes``. The digest continues the one
        of the content it appended to when that is remembered (``history.hashing``), else
        hashes all of it."""
        settings = self.cow.settings
        ino = target.ino
        if settings.versions(size):
            key = self.fs.path_in(target.parent_ino, target.name)
            latest: Version | EllipsisType | None = ...
            hash_ = None
            if appended is not None and target.size >= MIN_BYTES:
                latest = self.versions.latest(key)
                if latest is not None and latest.describes(ino, target.size) and latest.hash:
                    hash_ = self.hashes.continued(ino, target.size, latest.hash, appended)
            if hash_ is None:
                hash_ = self.hashes.whole(ino, self.fs.chunks.read(ino, size))
            self.versions.record(key, "write", ino, size, hash_, latest=latest)
        elif settings.versioning:
            key = self.fs.path_in(target.parent_ino, target.name)
            latest = self.versions.latest(key)
            if latest and latest.ino == ino and (key, latest.n) in self.versions.pending:
                self.versions.forget(latest)

    def closed(self, target: WriteTarget, size: int, hash_: bytes | None) -> None:
        """The handle's one version: of the file as it is now (read back to hash it when
        the handle could not)."""
        if not self.cow.settings.versions(size):
            return
        ino = target.ino
        if hash_ is None:
            hash_ = digest(self.fs.chunks.read(ino, size))
        key = self.fs.path_in(target.parent_ino, target.name)
        latest = self.versions.latest(key)
        if latest is None or latest.ino != ino or latest.hash != hash_:
            self.versions.record(key, "write", ino, size, hash_, latest=latest)

    # --- what the hooks share with history's own operations -----------------------------------

    def wrote(self, target: WriteTarget) -> None:
        """The writer has seen what it wrote: refresh its read record of a guarded path."""
        thread, _, read_before_write = self.acting.now
        if thread is None or not read_before_write:
            return
        key = self.fs.path_in(target.parent_ino, target.name)
        if self.reads.guards(key):
            self.reads.record(thread, key, self.file_state(key, target.ino), False, now_ns())

    def keep_untracked(
        self, target: WriteTarget, key: str | None = None, latest: Version | None = None
    ) -> Version | None:
        """Before a change with versioning on, make the content about to be replaced a
        version if it is none yet (a file written while versioning was off, an adopted file,
        one from before history existed): its previous content is kept like any other.
        Returns the path's newest event afterwards. ``key``/``latest``: the history path and
        its newest event when the caller has them."""
        if not self.cow.settings.versioning:
            return latest
        if key is None:
            key = self.fs.path_in(target.parent_ino, target.name)
            latest = self.versions.latest(key)
        ino, size = target.ino, target.size
        if target.created or ino in self.cow.fresh or (latest and latest.describes(ino, size)):
            return latest
        if size == 0 and latest is None:
            return latest  # a new empty file (O_CREAT): nothing to keep, its content comes next
        if not self.cow.settings.versions(size):
            return latest
        hash_ = digest(self.fs.chunks.read(ino, size))
        self.versions.record(key, "write", ino, size, hash_, latest=latest, pending=False)
        return self.versions.latest(key)

    def copy_down(self, target: WriteTarget, key: str | None, *, whole: bool) -> bool:
        """Give history ``target``'s current content in a new nameless inode
        (``CopyOnWrite.copy_down``: its chunks moved there or copied) and repoint the
        versions that named the file to it, but ``key``'s pending rows (the change about to
        be recorded updates those); True when the chunks were moved (the file has none
        left). The new inode is held: only a snapshot entry or a version row that named the
        file brings it here."""
        frozen, moved = self.cow.copy_down(target.ino, whole=whole)
        self.versions.repoint(target.ino, frozen, key)
        return moved

    def detached(self, ino: int) -> None:
        """An unlinked file a handle holds open changes: the versions and snapshot entries
        that name its inode get a copy of its content (``copy_down``), and the inode, now
        held by nothing, is queued to be freed (its handle's pin keeps it until the close)."""
        if self.cow.referenced(ino):
            self.fs.chunks.present(ino)  # a file of the base: its bytes first
            frozen, _moved = self.cow.copy_down(ino, whole=False)
            self.versions.repoint(ino, frozen, None)
            self.release_if_unheld(ino)

    def release_if_unheld(self, ino: int) -> None:
        """``ino`` just lost its last name: free it unless history still holds it."""
        if not self.cow.referenced(ino):
            mode, size = self.fs.conn.execute(
                "SELECT mode, size FROM fs_inode WHERE ino = ?", (ino,)
            ).get
            self.fs.orphans.release(ino, mode, size)

    def arrived(self, path: str, ino: int, op: str, other: str | None = None) -> None:
        """The file ``ino`` now also lives at ``path`` (a rename, a hard link, a restore):
        record its content there, without hashing again when a version already says it."""
        settings = self.cow.settings
        if not settings.versioning:
            return
        mode, size = self.fs.conn.execute(
            "SELECT mode, size FROM fs_inode WHERE ino = ?", (ino,)
        ).get  # type: ignore[misc]
        if not is_file(mode) or not settings.versions(size):
            return  # only regular files have versions (not a FIFO, a socket, a device)
        row = self.fs.conn.execute(
            "SELECT hash FROM ws_version WHERE ino = ? AND size = ? AND hash IS NOT NULL LIMIT 1",
            (ino, size),
        ).get
        hash_ = row if row is not None else digest(self.fs.chunks.read(ino, size))
        self.versions.record(path, op, ino, size, hash_, other)

    def history_path(self, path: str) -> str:
        """The symlink-free path history is kept under (a file reached through a symlinked
        directory has one history, whichever way it was written), inside a transaction."""
        parent, name = paths.parent_and_name(path)
        return self.fs.path_in(self.fs.directory_ino(parent), name)
