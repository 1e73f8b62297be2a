"""What the core does for history on each change: record version events, copy frozen inodes up,
keep untracked content, mark what snapshots must re-read, and track reads.

``FileSystem`` calls these at the points where it changes a file or a name, inside the
operation's own transaction (so history commits with the change or not at all); the rules
themselves live in ``history.cow``, ``history.versions`` and ``history.reads``. They are
functions over a ``FileSystem`` rather than methods so the core module stays about paths,
names and bytes.
"""

from __future__ import annotations

from types import EllipsisType
from typing import TYPE_CHECKING

from agentfs.core import paths
from agentfs.core.inodes import Stat, is_dir, is_symlink, now_ns, split_ns
from agentfs.history.reads import FileState, Reads
from agentfs.history.versions import Version, digest

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem, WriteTarget


def remember_read(
    fs: FileSystem,
    thread: str,
    path: str,
    st: Stat,
    whole: bytes | None,
    into: Reads | None = None,
) -> None:
    """Record that ``thread`` read the file ``st`` at ``path`` (all of it: ``whole``), in
    ``fs``'s read log or in ``into`` (a layered workspace keeps the reads of its lower layers'
    files in its first layer's log, where the copy-up that writes them checks)."""
    if is_symlink(fs._stat(path, False).st_mode):
        key = fs._realpath(path, [0])  # the file it leads to, every symlink followed
    else:
        key = history_path(fs, path)  # the parent's real path is cached
    state = file_state(fs, key, st.st_ino)
    if state.hash is None and whole is not None:
        state = state._replace(hash=digest(whole))
    (into or fs.reads).record(thread, key, state, whole is None, now_ns())


def file_state(fs: FileSystem, key: str, ino: int) -> FileState:
    """The file ``ino`` (whose history is kept under ``key``) as read tracking sees it."""
    ctime_ns, size = fs.conn.execute(
        "SELECT ctime * 1000000000 + ctime_nsec, size FROM fs_inode WHERE ino = ?", (ino,)
    ).get
    latest = fs.versions.latest(key)
    if latest is not None and latest.ino == ino:
        by = "/".join(x for x in (latest.actor, latest.thread) if x) or None
        return FileState(ino, ctime_ns, size, latest.n, latest.hash, by)
    return FileState(ino, ctime_ns, size, None, None)


def guard(fs: FileSystem, target: WriteTarget) -> None:
    """Enforce read-before-write on an existing file (see ``agentfs.history.reads``)."""
    if not fs.reads.read_before_write or target.created:
        return
    check_read(fs, history_path(fs, target.path), target.ino, fs.reads, fs.versions.thread)


def check_read(fs: FileSystem, key: str, ino: int, reads: Reads, thread: str | None) -> None:
    """Raise ``StaleReadError`` unless ``thread`` read the file ``ino`` of ``fs`` (kept under
    ``key``) as it is now, by the records and policy of ``reads`` (``fs``'s own, or the first
    layer's when a layered workspace copies a lower file up)."""
    if not reads.guards(key):
        return
    state = file_state(fs, key, ino)
    current = state.hash
    if current is None and state.size <= fs.cow.settings.max_bytes:
        current = digest(fs.chunks.read(ino, state.size))
    reads.check(thread, key, state, current)


def wrote(fs: FileSystem, target: WriteTarget, ino: int) -> None:
    """The writer has seen what it wrote: refresh its read record of a guarded path."""
    thread = fs.versions.thread
    if thread is None or not fs.reads.read_before_write:
        return
    key = history_path(fs, target.path)
    if fs.reads.guards(key):
        fs.reads.record(thread, key, file_state(fs, key, ino), False, now_ns())


def keep_untracked(
    fs: FileSystem, target: WriteTarget, key: str | None = None, latest: Version | None = None
) -> Version | None:
    """Before a change with versioning on, make the content about to be replaced a version
    if it is none yet (a file written while versioning was off, an adopted file, one from
    before history existed): its previous content is kept like any other. Returns the
    path's newest event afterwards. ``key``/``latest``: the history path and its newest
    event when the caller has them."""
    if not fs.cow.settings.versioning:
        return latest
    if key is None:
        key = history_path(fs, target.path)
        latest = fs.versions.latest(key)
    ino = target.ino
    if target.created or ino in fs.cow.fresh or (latest is not None and latest.ino == ino):
        return latest
    size = target.size
    if not fs.cow.settings.versions(size):
        return latest
    hash_ = digest(fs.chunks.read(ino, size))
    record(fs, key, "write", ino, size, hash_, latest=latest, pending=False)
    return fs.versions.latest(key)


def writable(fs: FileSystem, target: WriteTarget, now: int, size: int | None = None) -> int:
    """The inode whose content to change for ``target``: its own, once the versions that
    name it have their bytes kept (``Versions.keep``), or a copy-up when a snapshot may hold
    it or it is too large to keep. ``size``: the caller then writes the whole new content,
    this long (a copy-up copies no chunk)."""
    ino = target.ino
    if target.created:
        return ino
    if fs.cow.snapshotted(ino):
        return copy_up(fs, target, now, size=size).st_ino
    key = history_path(fs, target.path) if fs.versions.pending else None
    if fs.versions.keep(ino, target.size, key):
        return ino
    return copy_up(fs, target, now, size=size, held=True).st_ino


def copy_up(
    fs: FileSystem, target: WriteTarget, now: int, size: int | None = None, held: bool = False
) -> Stat:
    """Copy ``target`` up (``CopyOnWrite.copy_up``); the frozen inode is freed at once if
    nothing holds it after all (frozen only by the conservative snapshot watermark)."""
    new = fs.cow.copy_up(target.ino, target.dentry_id, target.parent_ino, now, size=size)
    if not held:
        release_if_unheld(fs, target.ino)
    return new


def release_if_unheld(fs: FileSystem, ino: int) -> None:
    """``ino`` just lost its last name: free it unless history still holds it."""
    if not fs.cow.referenced(ino):
        mode, size = fs.conn.execute("SELECT mode, size FROM fs_inode WHERE ino = ?", (ino,)).get
        fs.orphans.release(ino, mode, size)


def version_changed(fs: FileSystem, target: WriteTarget, ino: int, size: int) -> None:
    """Record the new content of a partly rewritten file (hashing all of it), or drop this
    transaction's version of it when it outgrew ``history.max_bytes``."""
    if fs.cow.settings.versions(size):
        hash_ = digest(fs.chunks.read(ino, size))
        record(fs, history_path(fs, target.path), "write", ino, size, hash_)
        return
    if fs.cow.settings.versioning:
        key = history_path(fs, target.path)
        latest = fs.versions.latest(key)
        if latest and latest.ino == ino and (key, latest.n) in fs.versions.pending:
            fs.versions.forget(latest)


def record(
    fs: FileSystem,
    path: str,
    op: str,
    ino: int | None = None,
    size: int | None = None,
    hash_: bytes | None = None,
    other: str | None = None,
    latest: Version | EllipsisType | None = ...,
    *,
    pending: bool = True,
) -> None:
    """Add an event to the history of ``path`` (symlink-free: see ``history_path``)."""
    for dropped in fs.versions.record(path, op, ino, size, hash_, other, latest, pending=pending):
        release_if_unheld(fs, dropped)


def history_path(fs: FileSystem, path: str) -> str:
    """The symlink-free path history is kept under (a file reached through a symlinked
    directory has one history, whichever way it was written)."""
    parent, name = paths.parent_and_name(path)
    real = fs._real_dirs.get(parent)
    if real is None:
        real = fs._real_dirs[parent] = fs._realpath(parent, [0])
    return paths.join(real, name)


def touch(fs: FileSystem, target: WriteTarget, now: int) -> None:
    """A write that changed no byte still sets mtime and ctime, as the kernel does (and
    the writer's read record follows, or its own touch would make it stale)."""
    sec, nsec = split_ns(now)
    fs.conn.execute(
        "UPDATE fs_inode SET mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?",
        (sec, nsec, sec, nsec, target.ino),
    )
    fs.cow.mark_dirty(target.parent_ino)
    wrote(fs, target, target.ino)


def history_deleted(fs: FileSystem, path: str, mode: int) -> None:
    """A file, or every file with history below a directory, stops existing at ``path``."""
    if not fs.cow.settings.versioning:
        return
    real = history_path(fs, path)
    for p in fs.versions.paths_under(real) if is_dir(mode) else [real]:
        latest = fs.versions.latest(p)
        if latest is not None and latest.has_content:
            record(fs, p, "delete", latest=latest)


def history_moved(fs: FileSystem, src: str, dst: str, ino: int, mode: int) -> None:
    """``src`` is about to become ``dst``: each file with history (the file itself, or
    every one below a directory) gets a 'move' event and its new path a 'rename' event."""
    if not fs.cow.settings.versioning:
        return
    real_src, real_dst = history_path(fs, src), history_path(fs, dst)
    if not is_dir(mode):
        latest = fs.versions.latest(real_src)
        if latest is not None:
            record(fs, real_src, "move", other=real_dst, latest=latest)
        history_arrived(fs, real_dst, ino, "rename", other=real_src)
        return
    for old in fs.versions.paths_under(real_src):
        latest = fs.versions.latest(old)
        if latest is None or not latest.has_content:
            continue
        try:
            found = fs._resolve(old, False)  # the file as it is now, under the old name
        except (FileNotFoundError, NotADirectoryError):
            continue  # gone while versioning was off: nothing moves
        new = real_dst + old[len(real_src) :]
        record(fs, old, "move", other=new, latest=latest)
        history_arrived(fs, new, found[1], "rename", other=old)


def history_arrived(fs: FileSystem, path: str, ino: int, op: str, other: str | None = None) -> None:
    """The file ``ino`` now also lives at ``path`` (a rename or a hard link): record its
    content there, without hashing again when its last version already says it."""
    if not fs.cow.settings.versioning:
        return
    size = fs._size(ino)
    if not fs.cow.settings.versions(size):
        return
    row = fs.conn.execute(
        "SELECT hash FROM ws_version WHERE ino = ? AND hash IS NOT NULL LIMIT 1", (ino,)
    ).get
    hash_ = row if row is not None else digest(fs.chunks.read(ino, size))
    record(fs, path, op, ino, size, hash_, other)


def names_changed(fs: FileSystem, dentry_id: int, ino: int) -> None:
    """Snapshots record each entry's mode and mtime: mark the directories holding the
    names of ``ino`` dirty (all of them for a hard-linked file, found by a scan)."""
    if fs.cow.settings.watermark < 0 or dentry_id == 0:
        return
    parent: int
    parent, nlink, mode = fs.conn.execute(
        "SELECT parent_ino, nlink, mode FROM fs_dentry, fs_inode WHERE id = ? AND fs_inode.ino = ?",
        (dentry_id, ino),
    ).get
    if nlink > 1 and not is_dir(mode):
        for (other,) in fs.conn.execute(
            "SELECT parent_ino FROM fs_dentry WHERE ino = ?", (ino,)
        ).fetchall():
            fs.cow.mark_dirty(other)  # type: ignore[arg-type]
    else:
        fs.cow.mark_dirty(parent)
