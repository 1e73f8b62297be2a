"""The history part of a workspace: per-path versions (list, read, diff, restore), the read
log and garbage collection. ``Workspace`` holds one ``History`` and offers its methods; it
works through the core's public port only, and the rules live in ``history.cow``,
``history.versions`` and ``history.snapshots``.
"""

from __future__ import annotations

import difflib
import errno
from dataclasses import asdict, dataclass
from types import EllipsisType

from agentfs.core import paths, xattrs
from agentfs.core.errors import HistoryNotFoundError, fs_error
from agentfs.core.fs import FileSystem
from agentfs.core.inodes import S_IFMT, S_IFREG, is_dir, now_ns
from agentfs.history.cow import HistorySettings, keep_text
from agentfs.history.hooks import HistoryHooks
from agentfs.history.reads import Read
from agentfs.history.snapshots import Snapshots
from agentfs.history.versions import Version, Versions


@dataclass(frozen=True)
class GcReport:
    """What ``gc`` freed."""

    versions_pruned: int
    entries_pruned: int
    inodes_freed: int
    kept_freed: int  # versions' bytes kept aside (ws_kept rows), freed with their versions

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class RecordingVersions:
    """``recording_versions``'s block: a class, not a generator, as it sits on every
    changing tool call."""

    __slots__ = ("_versions", "journal")

    def __init__(self, versions: Versions) -> None:
        self._versions = versions
        self.journal: list[tuple[str, int]] = []

    def __enter__(self) -> list[tuple[str, int]]:
        self._versions.journal = self.journal
        return self.journal

    def __exit__(self, *exc: object) -> None:
        self._versions.journal = None


class History:
    """The history part of a workspace: versions of each path, read tracking's log, ``gc``
    (see the module docstring). Made first, it installs the hooks by which every change of
    ``fs`` keeps history."""

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        self.hooks = fs.hooks = HistoryHooks(fs)
        self.snapshots = Snapshots(fs, self.hooks)

    def configure_history(
        self, *, keep: int | str | EllipsisType | None = ..., max_bytes: int | None = None
    ) -> HistorySettings:
        """Set how much history the workspace keeps, for every handle and process::

            ws.configure_history(keep=10)            # the last 10 versions of each path
            ws.configure_history(keep="none")        # no new versions (snapshots still work)
            ws.configure_history(max_bytes=1 << 20)  # files over 1 MiB get no versions

        ``keep`` is None or 'all', 0 or 'none', or a number of versions per path; fewer than
        there are now prunes on the next write of each path (``gc`` prunes all at once).
        """
        if max_bytes is not None and max_bytes < 0:
            raise fs_error(errno.EINVAL, self.fs.conn.filename, "max_bytes must be >= 0")
        with self.fs.transaction():
            if keep is not ...:
                try:
                    text = keep_text(keep)
                except ValueError as exc:
                    raise fs_error(errno.EINVAL, self.fs.conn.filename, str(exc)) from None
                self.fs.conn.execute(
                    "UPDATE ws_config SET value = ? WHERE key = 'history.keep'", (text,)
                )
            if max_bytes is not None:
                self.fs.conn.execute(
                    "UPDATE ws_config SET value = ? WHERE key = 'history.max_bytes'",
                    (str(max_bytes),),
                )
            self.hooks.cow.reload()
            return self.hooks.cow.settings

    @property
    def history_settings(self) -> HistorySettings:
        with self.fs.read_transaction():
            return self.hooks.cow.settings

    def reads_log(self, thread: str | None = None) -> list[Read]:
        """The last read of each path by each thread (only ``thread``'s when given)."""
        with self.fs.read_transaction():
            return self.hooks.reads.list(thread)

    # --- versions -----------------------------------------------------------------------------

    def recording_versions(self) -> RecordingVersions:
        """Collect ``(path, n)`` of every version this handle records inside the block, so a
        caller can say exactly which versions one operation made (the agent tools' audit
        links each tool call to them). Several writes of a path in one transaction make
        one version and one entry; nesting is not supported::

            with ws.transaction(), ws.recording_versions() as journal:
                ws.write("/a", b"1")
            journal  # [("/a", 3)]
        """
        return RecordingVersions(self.hooks.versions)

    def history(self, path: str) -> list[Version]:
        """Every event of ``path`` (symlink-free), oldest first; deleted files too."""
        with self.fs.read_transaction():
            return self.hooks.versions.history(self._history_key(path))

    def history_path(self, path: str) -> str:
        """The path ``path``'s history is kept under: its directories' symlinks resolved
        (what version numbers, read records and the tool-call links are keyed by)."""
        with self.fs.read_transaction():
            return self._history_key(path)

    def _history_key(self, path: str) -> str:
        """The path history is kept under: symlink-free when its directory still exists."""
        path = paths.normalize(path)
        try:
            return self.hooks.history_path(path)
        except (FileNotFoundError, NotADirectoryError):
            return str(path)

    def version(self, path: str, n: int | None = None) -> Version:
        """Version ``n`` of ``path`` (None: the newest event)."""
        with self.fs.read_transaction():
            key = self._history_key(path)
            found = (
                self.hooks.versions.latest(key) if n is None else self.hooks.versions.get(key, n)
            )
        if found is None:
            what = "no history" if n is None else f"no version {n}"
            raise HistoryNotFoundError(f"{key}: {what}")
        return found

    def read_version(self, path: str, n: int) -> bytes:
        """The bytes ``path`` had at version ``n``."""
        with self.fs.read_transaction():
            found = self.version(path, n)
            if not found.has_content:
                raise HistoryNotFoundError(f"{found.path}: version {n} is a {found.op}, no content")
            return self.hooks.versions.content(found)

    def diff(self, path: str, a: int | None = None, b: int | None = None) -> str:
        """Unified diff of ``path`` from version ``a`` to version ``b``.

        ``a`` None: the version before the newest one with content (empty if there is none);
        ``b`` None: the file as it is now. Binary content is one summary line, as in git.
        """
        with self.fs.read_transaction():
            key = self._history_key(path)
            if a is None:
                rows = [v for v in self.hooks.versions.history(key) if v.has_content]
                if not rows:
                    raise HistoryNotFoundError(f"{key}: no history")
                a = rows[-2].n if len(rows) >= 2 else None
            old = self.read_version(key, a) if a is not None else b""
            new = self.read_version(key, b) if b is not None else self._current(key)
        label_a = f"{key}@{a}" if a is not None else "/dev/null"
        label_b = f"{key}@{b}" if b is not None else key
        return unified_diff(old, new, label_a, label_b)

    def _current(self, path: str) -> bytes:
        try:
            return self.fs.read(path)
        except FileNotFoundError:
            return b""

    def restore_version(self, path: str, n: int) -> Version:
        """Make version ``n`` of ``path`` its current content again, recorded as a new
        version ('restore'; returned). The name is relinked to an inode holding the version:
        the version's own frozen inode when it has one (no byte copied; a copy instead if
        another path has that inode now, after a rename, so the two never become hard
        links), else a new inode with its kept bytes and the mode and extended attributes the
        file has now. Recreates
        a deleted file. With versioning off nothing is recorded and version ``n`` itself is
        returned."""
        with self.fs.transaction():
            found = self.version(path, n)
            if not found.has_content:
                raise HistoryNotFoundError(f"{found.path}: version {n} is a {found.op}, no content")
            key = found.path
            try:
                now = self.fs.lstat(key)
            except FileNotFoundError:
                now = None
            mode = S_IFREG | 0o644
            if now is not None:
                if is_dir(now.st_mode):
                    raise fs_error(errno.EISDIR, key, "a directory has this name now")
                if found.describes(now.st_ino, now.st_size):
                    return self.hooks.versions.latest(key) or found  # it is the current content
                if now.st_mode & S_IFMT == S_IFREG:
                    mode = now.st_mode
            if found.ino is None or not found.describes(found.ino, self.fs.size_of(found.ino)):
                # kept aside, or the prefix of a file that grew since: a new inode holds them
                ino = self.fs.nameless_file(mode, self.hooks.versions.content(found))
                if now is not None and now.st_mode & S_IFMT == S_IFREG:
                    xattrs.copy_all(self.fs.conn, now.st_ino, ino)  # as its mode: the file's now
            elif self.fs.conn.execute("SELECT nlink FROM fs_inode WHERE ino = ?", (found.ino,)).get:
                ino = self.hooks.cow.clone(found.ino, now_ns()).st_ino  # named elsewhere: a copy
            else:
                ino = found.ino
            self.fs.relink(key, ino)
            if not self.hooks.cow.settings.versioning:
                return found
            self.hooks.versions.record(key, "restore", ino, found.size, found.hash, str(n))
            latest = self.hooks.versions.latest(key) or found
        self.fs.orphans.purge_due()
        return latest

    # --- garbage collection -------------------------------------------------------------------

    def gc(self) -> GcReport:
        """Free what nothing references any more: versions beyond ``history.keep`` (with the
        bytes kept for them), snapshot rows no snapshot needs, and every inode no name,
        version or snapshot holds."""
        with self.fs.transaction():
            pruned = []
            keep = self.hooks.cow.settings.keep
            if keep is not None:
                pruned = self.fs.conn.execute(
                    "DELETE FROM ws_version WHERE n <= (SELECT max(n) FROM ws_version v"
                    " WHERE v.path = ws_version.path) - ? RETURNING 1",
                    (keep,),
                ).fetchall()
            kept = self.fs.conn.execute(  # of every version gone: pruned, or forked away
                "DELETE FROM ws_kept WHERE id NOT IN"
                " (SELECT kept FROM ws_version WHERE kept IS NOT NULL) RETURNING 1"
            ).fetchall()
            entries = self.snapshots.prune()
            freed = self.fs.conn.execute(
                "INSERT OR IGNORE INTO ws_orphan(ino, queued_at) SELECT ino, unixepoch()"
                " FROM fs_inode i WHERE ino <> 1 AND nlink = 0"
                " AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino)"
                " AND NOT EXISTS (SELECT 1 FROM ws_version v WHERE v.ino = i.ino)"
                " AND ((i.mode & 61440) = 16384"  # a directory: restore re-creates it
                " OR NOT EXISTS (SELECT 1 FROM ws_entry e WHERE e.ino = i.ino)) RETURNING 1"
            ).fetchall()
        self.fs.orphans.purge()
        return GcReport(len(pruned), entries, len(freed), len(kept))

    # --- fork ---------------------------------------------------------------------------------


def unified_diff(old: bytes, new: bytes, label_a: str, label_b: str) -> str:
    """A unified diff of two contents; one summary line when either is not UTF-8 text."""
    try:
        a, b = old.decode("utf-8"), new.decode("utf-8")
    except UnicodeDecodeError:
        if old == new:
            return ""
        return f"Binary files {label_a} and {label_b} differ\n"
    lines = difflib.unified_diff(
        a.splitlines(keepends=True), b.splitlines(keepends=True), label_a, label_b
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
