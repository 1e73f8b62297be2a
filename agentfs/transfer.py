"""Moving trees between the host and a workspace, and exporting a plain AgentFS file.

``import_tree`` copies a host directory in (one transaction), ``export_tree`` copies a workspace
subtree out without ever creating, changing or following anything outside the target, and
``export_agentfs`` writes a database of the AgentFS v0.4 spec tables alone, which Turso's engine
opens. docs/interop.md has the rules: what travels, what is skipped, and why setuid bits and
owners do not.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat as statmod
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import apsw

from agentfs import db
from agentfs.core import paths
from agentfs.core.errors import AgentFSError, fs_error
from agentfs.core.inodes import S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, Stat

if TYPE_CHECKING:
    from agentfs.workspace import Workspace

#: ``progress(done, total)``: entries (files, directories, symlinks) handled so far, of all.
Progress = Callable[[int, int], None]

#: Bytes moved per read/write call for large files (rounded to whole chunks on import).
BLOCK_BYTES = 8 * 1024 * 1024
#: About this many progress calls per transfer, so a slow progress bar never dominates.
PROGRESS_STEPS = 500
#: Permission bits export keeps: everything but setuid and setgid.
EXPORT_MODE_MASK = 0o1777
#: Files per INSERT ... SELECT batch in export_agentfs (one progress call each).
EXPORT_BATCH = 1000

_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_O_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_O_READ_HOST = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

_SPECIAL_KINDS = {
    statmod.S_IFIFO: "fifo",
    statmod.S_IFSOCK: "socket",
    statmod.S_IFCHR: "character device",
    statmod.S_IFBLK: "block device",
}


@dataclass
class TransferStats:
    """What a transfer did: entries created per type, content bytes, and what it skipped.

    Attributes:
        files, directories, symlinks: entries written (a hard link counts as a file).
        bytes: file content bytes written.
        skipped: one ``"relative/path: reason"`` line per entry not transferred.
    """

    files: int = 0
    directories: int = 0
    symlinks: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class _Ticker:
    """Calls ``progress`` at the start, every ``total / PROGRESS_STEPS`` entries and at the end."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0
        self.step = max(1, total // PROGRESS_STEPS)
        if progress is not None:
            progress(0, total)

    def tick(self) -> None:
        self.done += 1
        if self.progress is not None and (self.done % self.step == 0 or self.done == self.total):
            self.progress(self.done, self.total)


def _kind(mode: int) -> str:
    return {S_IFREG: "file", S_IFDIR: "directory", S_IFLNK: "symlink"}.get(
        mode & S_IFMT, _SPECIAL_KINDS.get(mode & S_IFMT, "special file")
    )


def _show(parts: tuple[str, ...]) -> str:
    """A relative path for a report line, printable even when a name is not valid UTF-8."""
    text = "/".join(parts) or "."
    return os.fsencode(text).decode("utf-8", "backslashreplace")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# --- import ------------------------------------------------------------------------------------


class _HostEntry(NamedTuple):
    parts: tuple[str, ...]
    st: os.stat_result
    target: str | None  # symlinks only


_OWN_FILE = "the workspace's own database file"


def _scan_host(root: Path, skipped: list[str], own: set[tuple[int, int]]) -> list[_HostEntry]:
    """Every importable entry below ``root`` in pre-order (a directory before its contents),
    names sorted; symlinks are read, never followed. Skips are appended to ``skipped``."""
    entries: list[_HostEntry] = []
    stack: list[tuple[str, ...]] = [()]
    while stack:
        rel = stack.pop()
        try:
            with os.scandir(os.path.join(root, *rel)) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(f"{_show(rel)}: cannot list directory: {_reason(exc)}")
            continue
        subdirs = []
        for child in children:
            parts = (*rel, child.name)
            try:
                paths.check_name(child.name)  # also refuses names that are not UTF-8
                st = child.stat(follow_symlinks=False)
                target = None
                if statmod.S_ISLNK(st.st_mode):
                    target = os.readlink(child.path)
                    target.encode("utf-8")
            except UnicodeEncodeError:
                skipped.append(f"{_show(parts)}: symlink target is not valid UTF-8")
                continue
            except OSError as exc:
                skipped.append(f"{_show(parts)}: {_reason(exc)}")
                continue
            kind = st.st_mode & S_IFMT
            if kind not in (S_IFREG, S_IFDIR, S_IFLNK):
                skipped.append(f"{_show(parts)}: {_kind(kind)} (special files are not imported)")
                continue
            if (st.st_dev, st.st_ino) in own:
                skipped.append(f"{_show(parts)}: {_OWN_FILE}")
                continue
            entries.append(_HostEntry(parts, st, target))
            if kind == S_IFDIR:
                subdirs.append(parts)
        stack.extend(reversed(subdirs))
    return entries


def _read_blocks(path: str, block: int) -> Iterator[bytes]:
    """A host file's content in ``block``-sized pieces (at least one, maybe empty); refuses
    anything that stopped being a regular file since the scan (a swapped-in symlink or fifo)."""
    with open(os.open(path, _O_READ_HOST), "rb", buffering=0) as f:
        st = os.fstat(f.fileno())
        if not statmod.S_ISREG(st.st_mode):
            raise fs_error(errno.EINVAL, path, "no longer a regular file")
        if st.st_size < block:  # the common case: one read sized by the file, not the block
            yield f.readall()
            return
        while data := f.read(block):
            yield data


class _Importer:
    """One import_tree run: the workspace writes for each scanned entry, in one transaction."""

    def __init__(self, ws: Workspace, root: Path, dest: str, stats: TransferStats) -> None:
        self.ws, self.root, self.dest, self.stats = ws, root, dest, stats
        self.block = max(1, BLOCK_BYTES // ws.chunks.size) * ws.chunks.size
        self.fresh: set[str] = set()  # directories this import created: nothing to clash with
        self.blocked: set[tuple[str, ...]] = set()  # directories not imported: skip contents
        self.links: dict[tuple[int, int], str] = {}  # (st_dev, st_ino) -> first workspace path
        self.dir_times: list[tuple[str, int, int]] = []

    def run(self, entries: list[_HostEntry], ticker: _Ticker) -> None:
        for entry in entries:
            if entry.parts[:-1] in self.blocked:
                self.blocked.add(entry.parts)  # its parent was refused and already reported
            else:
                try:
                    with self.ws.transaction():  # a savepoint: a failed entry leaves no trace
                        self._one(entry)
                except OSError as exc:
                    self._skip(entry, _reason(exc))
            ticker.tick()
        for path, atime_ns, mtime_ns in reversed(self.dir_times):  # after their contents
            self.ws.utime(path, (atime_ns, mtime_ns))

    def _skip(self, entry: _HostEntry, reason: str) -> None:
        self.stats.skipped.append(f"{_show(entry.parts)}: {reason}")
        if statmod.S_ISDIR(entry.st.st_mode):
            self.blocked.add(entry.parts)

    def _existing(self, path: str) -> Stat | None:
        """What already sits at ``path`` (never followed), or None; free in a fresh directory."""
        if paths.parent_and_name(path)[0] in self.fresh:
            return None
        try:
            return self.ws.lstat(path)
        except FileNotFoundError:
            return None

    def _one(self, entry: _HostEntry) -> None:
        path = paths.normalize(paths.join(self.dest, "/".join(entry.parts)))
        st, ws = entry.st, self.ws
        kind = st.st_mode & S_IFMT
        existing = self._existing(path)
        if existing is not None and existing.st_mode & S_IFMT != kind:
            self._skip(entry, f"exists in the workspace as a {_kind(existing.st_mode)}")
            return
        perm = st.st_mode & 0o7777
        if kind == S_IFDIR:
            if existing is None:
                ws.mkdir(path, perm)
                self.fresh.add(path)
            elif existing.st_mode & 0o7777 != perm:
                ws.chmod(path, perm)
            self.dir_times.append((path, st.st_atime_ns, st.st_mtime_ns))
            self.stats.directories += 1
            return
        if kind == S_IFLNK:
            if existing is not None:
                ws.remove(path)
            ws.symlink(entry.target or "", path)
            self.stats.symlinks += 1
        elif not self._link(entry, path, existing):
            self._copy_file(entry, path, existing)
            if st.st_nlink > 1:  # the first name of a host hard link: later ones link to it
                self.links[(st.st_dev, st.st_ino)] = path
        ws.utime(path, (st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
        if kind == S_IFREG:
            self.stats.files += 1

    def _link(self, entry: _HostEntry, path: str, existing: Stat | None) -> bool:
        """Recreate a host hard link as a workspace hard link; False for a first sighting."""
        first = self.links.get((entry.st.st_dev, entry.st.st_ino))
        if first is None:
            return False
        if existing is not None:
            self.ws.remove(path)
        self.ws.link(first, path)
        return True

    def _copy_file(self, entry: _HostEntry, path: str, existing: Stat | None) -> None:
        perm = entry.st.st_mode & 0o7777
        blocks = _read_blocks(os.path.join(self.root, *entry.parts), self.block)
        first = next(blocks, b"")
        st = self.ws.write(path, first, mode=perm)
        size = len(first)
        for data in blocks:  # whole chunks each: appended without rewriting any
            size = self.ws.append(path, data)
        if existing is not None and st.st_mode & 0o7777 != perm:
            self.ws.chmod(path, perm)
        self.stats.bytes += size


def import_tree(
    ws: Workspace, host_dir: str | Path, dest: str = "/", *, progress: Progress | None = None
) -> TransferStats:
    """Copy the host directory ``host_dir`` into the workspace at ``dest``, in one transaction.

    ``dest`` is created with its parents (taking ``host_dir``'s mode and times) or merged into
    when it exists: a host file replaces a workspace file of the same name, a host symlink a
    workspace symlink; an entry whose name exists as another type is skipped and reported.
    Symlinks are stored verbatim and never followed (``host_dir`` itself may be one).
    Hard links inside the tree stay hard links. Raises NotADirectoryError when ``host_dir``
    is not a directory; anything raised (by ``progress`` too) rolls the whole import back.
    """
    root = Path(host_dir)
    root_st = os.stat(root)
    if not statmod.S_ISDIR(root_st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(root))
    dest = paths.normalize(dest)
    stats = TransferStats()
    entries = _scan_host(root, stats.skipped, db.own_files(ws.conn))
    ticker = _Ticker(progress, len(entries))
    importer = _Importer(ws, root, dest, stats)
    # The workspace's own transaction scope (not db.write_transaction): a rollback must also
    # drop the directory cache, or it would remember directories that were never committed.
    with ws.transaction():
        created = not ws.exists(dest)
        ws.mkdir(dest, root_st.st_mode & 0o7777, parents=True, exist_ok=True)
        if created:
            importer.fresh.add(dest)
        importer.run(entries, ticker)
        if created:
            ws.utime(dest, (root_st.st_atime_ns, root_st.st_mtime_ns))
    return stats


# --- export to the host ------------------------------------------------------------------------


class _WsEntry(NamedTuple):
    parts: tuple[str, ...]
    path: str
    st: Stat


def _scan_ws(ws: Workspace, top: str, top_st: Stat, skipped: list[str]) -> list[_WsEntry]:
    """The subtree below ``top`` depth-first in pre-order (each directory directly followed by
    its contents), names sorted; a file ``top`` is its own single entry. A name no host
    filesystem should see (a foreign file's dentry may hold '/' or '..') goes to ``skipped``."""
    if not top_st.is_dir():
        return [_WsEntry((paths.parent_and_name(top)[1],), top, top_st)]

    def children(rel: tuple[str, ...], path: str) -> list[_WsEntry]:
        out = []
        for name, st in reversed(ws.readdir_plus(path)):
            try:
                paths.check_name(name)
            except OSError as exc:
                skipped.append(f"{_show((*rel, name))}: {_reason(exc)}")
                continue
            out.append(_WsEntry((*rel, name), paths.join(path, name), st))
        return out

    entries: list[_WsEntry] = []
    stack = children((), top)
    while stack:
        entry = stack.pop()
        entries.append(entry)
        if entry.st.is_dir():
            stack.extend(children(entry.parts, entry.path))
    return entries


def _host_stat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _temp_name() -> str:
    return f".agentfs-tmp-{secrets.token_hex(8)}"


class _OpenDir(NamedTuple):
    parts: tuple[str, ...]
    fd: int
    st: Stat | None  # mode and times to set when its contents are done (None: leave as is)


class _Exporter:
    """One export_tree run: host writes relative to open directory descriptors only. With
    ``compare_only`` it writes nothing and lists in ``differing`` the host entries the run
    would replace with other content (a file's bytes, a symlink's target)."""

    def __init__(self, ws: Workspace, stats: TransferStats, *, compare_only: bool = False) -> None:
        self.ws, self.stats = ws, stats
        self.open: list[_OpenDir] = []
        self.own = db.own_files(ws.conn)
        self.compare_only = compare_only
        self.differing: list[str] = []

    def run(
        self, root_fd: int, root_st: Stat | None, entries: list[_WsEntry], ticker: _Ticker
    ) -> None:
        self.open.append(_OpenDir((), root_fd, root_st))
        try:
            for entry in entries:
                parent = entry.parts[:-1]
                while self.open[-1].parts != parent[: len(self.open[-1].parts)]:
                    self._close(self.open.pop())
                if self.open[-1].parts == parent:  # else its parent was refused (reported)
                    try:
                        reason = self._one(self.open[-1].fd, entry)
                    except (OSError, ValueError) as exc:  # ValueError: a NUL in a target
                        reason = _reason(exc) if isinstance(exc, OSError) else str(exc)
                    if reason is not None:
                        self.stats.skipped.append(f"{_show(entry.parts)}: {reason}")
                ticker.tick()
            while self.open:
                self._close(self.open.pop())
        finally:
            for opened in self.open:
                os.close(opened.fd)

    def _close(self, opened: _OpenDir) -> None:
        """Set a finished directory's mode and times (after its contents), then close it."""
        try:
            if opened.st is not None:
                os.fchmod(opened.fd, opened.st.st_mode & EXPORT_MODE_MASK)
                os.utime(opened.fd, ns=(opened.st.st_atime_ns, opened.st.st_mtime_ns))
        finally:
            os.close(opened.fd)

    def _one(self, dir_fd: int, entry: _WsEntry) -> str | None:
        """Write one entry into the open directory ``dir_fd``; the reason when it is skipped."""
        name, st = entry.parts[-1], entry.st
        paths.check_name(name)  # _scan_ws skipped bad names already; never trust one here
        kind = st.st_mode & S_IFMT
        if kind not in (S_IFREG, S_IFDIR, S_IFLNK):
            return f"{_kind(kind)} (special files are not exported)"
        existing = _host_stat(dir_fd, name)
        if self.compare_only:
            self._compare(dir_fd, entry, existing)
            return None
        if existing is not None and (existing.st_dev, existing.st_ino) in self.own:
            return _OWN_FILE
        if existing is not None and existing.st_mode & S_IFMT != kind:
            return f"exists on the host as a {_kind(existing.st_mode)} (left alone)"
        if kind == S_IFDIR:
            if existing is None:
                os.mkdir(name, 0o700, dir_fd=dir_fd)
            fd = os.open(name, _O_DIR, dir_fd=dir_fd)  # O_NOFOLLOW: a swapped-in link fails
            self.open.append(_OpenDir(entry.parts, fd, st))
            self.stats.directories += 1
        elif kind == S_IFLNK:
            self._symlink(dir_fd, name, self.ws.readlink(entry.path), existing is not None)
            os.utime(
                name, ns=(st.st_atime_ns, st.st_mtime_ns), dir_fd=dir_fd, follow_symlinks=False
            )
            self.stats.symlinks += 1
        else:
            self._file(dir_fd, name, entry, existing is not None)
            self.stats.files += 1
            self.stats.bytes += st.st_size
        return None

    def _compare(self, dir_fd: int, entry: _WsEntry, existing: os.stat_result | None) -> None:
        """Note ``entry`` if the host has something of its type there that it would replace
        with other content; go into a directory the host has (one it lacks holds nothing)."""
        if existing is None or existing.st_mode & S_IFMT != entry.st.st_mode & S_IFMT:
            return  # new, or of another type (never replaced: reported when exporting)
        name = entry.parts[-1]
        if statmod.S_ISDIR(existing.st_mode):
            fd = os.open(name, _O_DIR, dir_fd=dir_fd)
            self.open.append(_OpenDir(entry.parts, fd, None))
        elif statmod.S_ISLNK(existing.st_mode):
            if os.readlink(name, dir_fd=dir_fd) != self.ws.readlink(entry.path):
                self.differing.append(_show(entry.parts))
        elif (existing.st_dev, existing.st_ino) not in self.own and not self._same_bytes(
            dir_fd, name, entry, existing.st_size
        ):
            self.differing.append(_show(entry.parts))

    def _same_bytes(self, dir_fd: int, name: str, entry: _WsEntry, host_size: int) -> bool:
        """Does the host file hold the entry's bytes? (One it cannot read may differ.)"""
        if host_size != entry.st.st_size:
            return False
        try:
            fd = os.open(name, _O_READ_HOST, dir_fd=dir_fd)
        except OSError:
            return False
        with open(fd, "rb") as host:
            for offset in range(0, host_size, BLOCK_BYTES):
                if host.read(BLOCK_BYTES) != self.ws.read(entry.path, offset, BLOCK_BYTES):
                    return False
        return True

    def _symlink(self, dir_fd: int, name: str, target: str, replace: bool) -> None:
        if not replace:
            os.symlink(target, name, dir_fd=dir_fd)
            return
        temp = _temp_name()
        os.symlink(target, temp, dir_fd=dir_fd)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)

    def _file(self, dir_fd: int, name: str, entry: _WsEntry, replace: bool) -> None:
        """Write to the name itself when new (O_EXCL), else to a temporary name renamed over
        the old file: rename replaces a name, it never writes through one."""
        target = _temp_name() if replace else name
        fd = os.open(target, _O_NEW_FILE, 0o600, dir_fd=dir_fd)
        try:
            with open(fd, "wb", closefd=False) as f:
                for offset in range(0, entry.st.st_size, BLOCK_BYTES):
                    f.write(self.ws.read(entry.path, offset, BLOCK_BYTES))
            os.fchmod(fd, entry.st.st_mode & EXPORT_MODE_MASK)
            os.utime(fd, ns=(entry.st.st_atime_ns, entry.st.st_mtime_ns))
        except BaseException:
            os.close(fd)
            os.unlink(target, dir_fd=dir_fd)
            raise
        os.close(fd)
        if replace:
            os.replace(target, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def export_tree(
    ws: Workspace,
    src: str,
    host_dir: str | Path,
    *,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> TransferStats:
    """Write the workspace subtree ``src`` into the host directory ``host_dir``.

    A directory ``src`` becomes ``host_dir`` (created with its parents, taking ``src``'s mode
    and times); a file or symlink ``src`` is written as ``host_dir/<its name>``. An existing
    ``host_dir`` is merged into (the rules are in docs/interop.md), but a host file or
    symlink the export would replace with other content (one a user edited there since the
    last export, say) is refused first, all of them listed, and nothing is written
    (``ExportConflictError``), unless ``overwrite``. Nothing outside ``host_dir`` is ever
    created, changed or followed. The export reads one consistent state.
    """
    src = paths.normalize(src)
    host = Path(host_dir)
    created = not os.path.lexists(host)
    with ws.read_transaction():
        top_st = ws.stat(src)  # the named top is followed, like import's host_dir
        stats = TransferStats()
        entries = _scan_ws(ws, src, top_st, stats.skipped)
        if not created and not overwrite:
            _refuse_differences(ws, host, entries)
        os.makedirs(host, exist_ok=True)
        root_fd = os.open(host, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        root_st = top_st if created and top_st.is_dir() else None
        _Exporter(ws, stats).run(root_fd, root_st, entries, _Ticker(progress, len(entries)))
    return stats


class ExportConflictError(AgentFSError, FileExistsError):
    """``export_tree`` into a directory whose files differ from the workspace's: the paths
    (relative to the directory) are in ``differing``; nothing was written."""

    def __init__(self, host_dir: str, differing: list[str]) -> None:
        shown = ", ".join(differing[:10]) + (
            f" and {len(differing) - 10} more" if len(differing) > 10 else ""
        )
        super().__init__(
            errno.EEXIST,
            f"{len(differing)} host file(s) differ from the workspace's and would be replaced:"
            f" {shown} (overwrite=True, or agentfs export --overwrite, replaces them)",
            host_dir,
        )
        self.differing = differing


def _refuse_differences(ws: Workspace, host: Path, entries: list[_WsEntry]) -> None:
    """Raise ``ExportConflictError`` if exporting ``entries`` into ``host`` would replace any
    host file or symlink with other content."""
    if not os.path.isdir(host) or os.path.islink(host):
        return  # export's own open of it says what is wrong
    comparer = _Exporter(ws, TransferStats(), compare_only=True)
    root_fd = os.open(host, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    comparer.run(root_fd, None, entries, _Ticker(None, len(entries)))
    if comparer.differing:
        raise ExportConflictError(str(host), comparer.differing)


# --- export as a plain AgentFS database ----------------------------------------------------------

_INODE_COLUMNS = (
    "ino, mode, nlink, uid, gid, size, atime, mtime, ctime, rdev, atime_nsec, mtime_nsec,"
    " ctime_nsec"
)
#: Inodes of the live tree: named ones and the root (not queued orphans, not history's).
_LIVE = "(ino = 1 OR ino IN (SELECT ino FROM src.fs_dentry))"
#: What export_agentfs copies, table by table (fs_data goes in batches, see _copy_data).
_COPY = (
    "INSERT INTO fs_config(key, value) SELECT key, value FROM src.fs_config"
    " WHERE key = 'chunk_size'",
    f"INSERT INTO fs_config(key, value) VALUES ('schema_version', '{db.SPEC_VERSION}')",
    f"INSERT INTO fs_inode({_INODE_COLUMNS}) SELECT {_INODE_COLUMNS} FROM src.fs_inode"
    f" WHERE {_LIVE} ORDER BY ino",
    "INSERT INTO fs_dentry(id, name, parent_ino, ino) SELECT id, name, parent_ino, ino"
    " FROM src.fs_dentry ORDER BY id",
    f"INSERT INTO fs_symlink(ino, target) SELECT ino, target FROM src.fs_symlink WHERE {_LIVE}",
    "INSERT INTO kv_store(key, value, created_at, updated_at)"
    " SELECT key, value, created_at, updated_at FROM src.kv_store ORDER BY key",
    "INSERT INTO tool_calls(id, name, parameters, result, error, status, started_at,"
    " completed_at, duration_ms) SELECT id, name, parameters, result, error,"
    " CASE WHEN error IS NULL THEN 'success' ELSE 'error' END, started_at, completed_at,"
    " duration_ms FROM src.tool_calls ORDER BY id",
    # Keep the AUTOINCREMENT counters: numbers the workspace ever issued stay unissued.
    "DELETE FROM sqlite_sequence",
    "INSERT INTO sqlite_sequence(name, seq) SELECT name, seq FROM src.sqlite_sequence"
    " WHERE name IN ('fs_inode', 'fs_dentry', 'tool_calls')",
)


def _claim(out: Path) -> None:
    """Create ``out`` empty, atomically, refusing an existing file or stale side files."""
    for side in ("-wal", "-shm", "-journal"):
        if os.path.lexists(f"{out}{side}"):
            raise FileExistsError(errno.EEXIST, "a stale SQLite side file exists", f"{out}{side}")
    # private, as a workspace file is (db.create_private); its -wal and -shm take its mode
    os.close(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))


def _remove_db(out: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{out}{suffix}").unlink(missing_ok=True)


def _copy_data(conn: apsw.Connection, progress: Progress | None) -> None:
    """fs_data in batches of EXPORT_BATCH files, each batch a range of inode numbers."""
    rows = conn.execute(
        f"SELECT ino FROM fs_inode WHERE (mode & {S_IFMT}) = {S_IFREG} ORDER BY ino"
    )
    inos = [row[0] for row in rows]
    ticker = _Ticker(progress, len(inos))
    low = -(2**63)
    for start in range(0, len(inos), EXPORT_BATCH):
        batch = inos[start : start + EXPORT_BATCH]
        high = batch[-1] if start + EXPORT_BATCH < len(inos) else 2**63 - 1
        conn.execute(
            "INSERT INTO fs_data(ino, chunk_index, data) SELECT ino, chunk_index, data"
            f" FROM src.fs_data WHERE ino BETWEEN ? AND ? AND {_LIVE} ORDER BY ino, chunk_index",
            (low, high),
        )
        low = high + 1
        for _ in batch:
            ticker.tick()


def export_agentfs(
    ws: Workspace, out_path: str | Path, *, progress: Progress | None = None
) -> TransferStats:
    """Write a new plain AgentFS v0.4 database at ``out_path`` that agentfs-sdk opens.

    It holds only the spec's tables and indexes, made by the spec's own statements (no FTS5,
    vec0, triggers or tables of ours), the live tree with the same inode numbers and chunk
    size, the key-value store and the tool-call log. Deleted inodes still queued for freeing
    are left out. Raises FileExistsError when ``out_path`` exists. Reads the workspace's last
    committed state through a second, read-only connection; ``progress`` counts files.
    """
    source = ws.conn.filename
    if not source:
        raise fs_error(errno.EINVAL, str(out_path), "an in-memory workspace cannot be exported")
    out = Path(out_path)
    _claim(out)
    if ws.base is not None and ws.base.pending():
        ws.bring_in()  # the copy holds every file whole: it has no base to read the rest from
    ws.tool_calls.publish()  # the log rows of changing calls that are still staged go too
    conn = apsw.Connection(
        str(out), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE | apsw.SQLITE_OPEN_URI
    )
    try:
        conn.pragma("page_size", ws.conn.pragma("page_size"))
        conn.pragma("journal_mode", "wal")  # what agentfs-sdk itself uses
        for script in ("agentfs-sdk-tool-calls.sql", "agentfs-v0.4.sql"):  # the SDKs' layout first
            for _ in conn.execute((db.schema_dir() / script).read_text("utf-8")):
                pass
        conn.execute("ATTACH DATABASE ? AS src", (f"file:{urllib.parse.quote(source)}?mode=ro",))
        with db.write_transaction(conn):
            for sql in _COPY:
                conn.execute(sql)
            _copy_data(conn, progress)
        conn.execute("DETACH DATABASE src")
        files, dirs, links, size = conn.execute(
            "SELECT count(*) FILTER (WHERE type = ?1), count(*) FILTER (WHERE type = ?2),"
            " count(*) FILTER (WHERE type = ?3), coalesce(sum(size) FILTER (WHERE type = ?1), 0)"
            " FROM (SELECT mode & ?4 AS type, size FROM fs_inode WHERE ino != 1)",
            (S_IFREG, S_IFDIR, S_IFLNK, S_IFMT),
        ).get
        conn.pragma("wal_checkpoint", "TRUNCATE")
    except BaseException:
        conn.close()
        _remove_db(out)
        raise
    conn.close()
    return TransferStats(files=files, directories=dirs, symlinks=links, bytes=size)
