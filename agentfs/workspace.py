"""``Workspace``, the public Python API (``agentfs.open``): one SQLite file opened as a file
system with its parts, history, the search index, the key-value store, the tool-call log and
the skills. It is its ``FileSystem`` (no extra call on the path of every write and stat) and
offers its parts' methods; it adds the lifecycle, who acts through the handle, commands run in
a mount, and ``agentfs info``'s summary.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from types import EllipsisType, TracebackType
from typing import Literal, Unpack

import apsw

from agentfs import db, skills
from agentfs.core import paths, treeops
from agentfs.core.base import Base
from agentfs.core.checkpoint import BackgroundCheckpointer
from agentfs.core.errors import fs_error
from agentfs.core.fs import FileSystem
from agentfs.history.api import GcReport, History, RecordingVersions
from agentfs.history.cow import HistorySettings
from agentfs.history.hooks import HistoryHooks
from agentfs.history.identity import ActingBlock, Identity, read_before_write_globs
from agentfs.history.reads import Read
from agentfs.history.versions import Version
from agentfs.kv import KVStore
from agentfs.mount.copyexec import run_in_copy
from agentfs.mount.exec import (
    CommandResult,
    Mode,
    MountError,
    RunOptions,
    fuse_available,
    run_command,
)
from agentfs.mount.exec import describe as describe_command
from agentfs.mount.rules import MountRules
from agentfs.mount.sandbox import Limits
from agentfs.mount.sandbox import require as require_sandbox
from agentfs.search.api import Index
from agentfs.search.background import BackgroundEmbedder
from agentfs.search.embedders import Embedder
from agentfs.search.glob import GlobMatch
from agentfs.search.glob import glob as glob_files
from agentfs.search.grep import GrepFields, GrepResult
from agentfs.search.grep import grep as grep_files
from agentfs.search.index import IndexStatus
from agentfs.search.names import names_below
from agentfs.search.ranking import SearchFields, SearchOptions, SearchResults
from agentfs.search.ranking import search as search_files
from agentfs.toolcalls import ToolCallLog

#: The live tree's inodes: the root and every named one (not orphans, not history's).
_LIVE = "(ino = 1 OR ino IN (SELECT ino FROM fs_dentry))"

#: Where ``make demo`` and the CLI put a workspace when none is named.
DEFAULT_WORKSPACE = Path(".agentfs") / "workspace.db"
#: Files of the base whose bytes come in per transaction when grep or index needs them all.
_FILL_BATCH = 256


@dataclass(frozen=True)
class WorkspaceInfo:
    """Counts and sizes for ``agentfs info``."""

    path: str
    files: int
    directories: int
    symlinks: int
    content_bytes: int
    database_bytes: int
    chunk_size: int
    chunks: int
    spec_version: str
    schema_version: int
    kv_keys: int
    tool_calls: int
    orphans_pending: int
    versions: int
    snapshots: int
    history_bytes: int  # content only history holds (no live name): old versions, snapshots

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Workspace(FileSystem):
    """A workspace file, open for reading and writing (or read-only).

    Attributes:
        path: the database file.
        kv: the spec's key-value store.
        tool_calls: the spec's tool-call log.
        snapshots: the whole tree's snapshots.
        hooks: history's side of every change (installed by the ``History`` part).
    Caveats:
        One ``Workspace`` per thread: apsw connections are not shared between threads here.
        Several processes may open the same file at once (WAL; see docs/concurrency.md).
    """

    hooks: HistoryHooks

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_WORKSPACE,
        *,
        create: bool = True,
        readonly: bool = False,
        chunk_size: int = db.DEFAULT_CHUNK_SIZE,
        actor: str | None = None,
        thread: str | None = None,
        base: str | os.PathLike[str] | None = None,
    ) -> None:
        if chunk_size < 512 or chunk_size > 4 * 1024 * 1024:
            raise fs_error(errno.EINVAL, str(path), "chunk_size must be 512 B .. 4 MiB")
        why = None if readonly else db.unwritable(Path(path))
        readonly = readonly or why is not None
        conn = db.connect(path, create=create, readonly=readonly)
        try:
            if readonly:
                if db.schema_version(conn) != db.SCHEMA_VERSION:
                    raise fs_error(errno.EROFS, str(path), "read-only open needs a migrated file")
            else:
                db.migrate(conn, chunk_size=chunk_size)
            super().__init__(conn)
            self._history = History(self)  # first: every change from now on keeps history
            self._index = Index(self)
            if why is not None:
                self.readonly_reason = f"the workspace is read-only here: {why}"
        except BaseException:
            conn.close()
            raise
        self.path = Path(path)
        self.actor = actor
        self.thread = thread
        self.kv = KVStore(conn)
        self.tool_calls = ToolCallLog(conn)
        self.snapshots = self._history.snapshots
        self._checkpointer: BackgroundCheckpointer | None = None
        if not readonly:
            self._checkpointer = BackgroundCheckpointer(
                conn.filename, db.wal_checkpoint_pages(conn)
            )
            self._checkpointer.install(conn)
            self.orphans.purge()  # finish deletes a crash interrupted
            self.tool_calls.publish()  # log rows a killed toolset left staged
        if base is not None:
            self._put_base(os.fspath(base))

    def _put_base(self, root: str) -> None:
        """``base=``: the workspace's base is ``root``; set it on a new workspace, check it on
        one that has it already (a workspace's base never moves)."""
        host = os.path.abspath(root)
        try:
            if self.base is None:
                Base.attach(self, host)
            elif self.base.root != host:
                raise fs_error(
                    errno.EINVAL, str(self.path), f"its base is {self.base.root}, not {host}"
                )
        except BaseException:
            self.close()
            raise

    # --- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Publish the audit rows toolsets still hold, free what this connection queued for
        deletion, then close. Idempotent."""
        try:
            if not self.readonly:
                self.tool_calls.close()  # the rows toolsets over this handle hold in memory
                self.orphans.purge()
        except apsw.ConnectionClosedError:
            return
        if self._checkpointer is not None:
            self._checkpointer.close()
        self._index.close_drained_copy()
        self.conn.close()

    def database_bytes(self) -> int:
        """The size of the database (pages in use times page size), as this transaction sees
        it: what a tool-call limit on the workspace's size compares with."""
        return db.database_bytes(self.conn)

    def sync(self) -> None:
        """Make every committed operation survive a power cut, not only a crash.

        Commits are crash-safe at once (WAL, ``synchronous=NORMAL``), but a power cut can lose
        the last ones until the WAL is fsynced (``db.sync_wal``): call this at a turn boundary
        you must never lose.
        """
        db.sync_wal(self.conn)

    # --- who acts through this handle (``agentfs.history.identity``) --------------------------

    @property
    def actor(self) -> str | None:
        """Who writes through this handle; recorded with every version and snapshot."""
        return self.hooks.acting.now.actor

    @actor.setter
    def actor(self, value: str | None) -> None:
        acting = self.hooks.acting
        acting.own = acting.own._replace(actor=value)

    @property
    def thread(self) -> str | None:
        """The conversation thread (or session) of this handle: versions, snapshots and
        read tracking are recorded under it."""
        return self.hooks.acting.now.thread

    @thread.setter
    def thread(self, value: str | None) -> None:
        acting = self.hooks.acting
        acting.own = acting.own._replace(thread=value)

    @property
    def read_before_write(self) -> tuple[str, ...]:
        """Globs of paths whose existing files this handle may write only after reading them
        unchanged (``agentfs.history.reads``); set True for every path, False or () for none."""
        return self.hooks.acting.now.read_before_write

    @read_before_write.setter
    def read_before_write(self, value: bool | str | Iterable[str]) -> None:
        acting = self.hooks.acting
        acting.own = acting.own._replace(read_before_write=read_before_write_globs(value))

    def acting(
        self,
        *,
        thread: str | None,
        actor: str | None = None,
        read_before_write: bool | str | Iterable[str] = (),
    ) -> ActingBlock:
        """Act as ``thread`` and ``actor``, under ``read_before_write``, inside the block,
        in this thread or asyncio task only; the handle's own identity is untouched::

            with ws.acting(thread="chat-42", actor="claude"):
                ws.write("/notes.md", "...")  # version recorded for chat-42, claude
        """
        return self.acting_as(Identity.of(thread, actor, read_before_write))

    def acting_as(self, identity: Identity) -> ActingBlock:
        """``acting`` with the identity made once (its globs already checked), for a caller
        that acts as the same one call after call (a ``Toolset``)."""
        return self.hooks.acting.block(identity)

    # --- history (``History``) -------------------------------------------------------------

    def configure_history(
        self, *, keep: int | str | EllipsisType | None = ..., max_bytes: int | None = None
    ) -> HistorySettings:
        return self._history.configure_history(keep=keep, max_bytes=max_bytes)

    @property
    def history_settings(self) -> HistorySettings:
        return self._history.history_settings

    def reads_log(self, thread: str | None = None) -> list[Read]:
        return self._history.reads_log(thread)

    def recording_versions(self) -> RecordingVersions:
        return self._history.recording_versions()

    def history(self, path: str) -> list[Version]:
        return self._history.history(path)

    def history_path(self, path: str) -> str:
        return self._history.history_path(path)

    def version(self, path: str, n: int | None = None) -> Version:
        return self._history.version(path, n)

    def read_version(self, path: str, n: int) -> bytes:
        return self._history.read_version(path, n)

    def diff(self, path: str, a: int | None = None, b: int | None = None) -> str:
        return self._history.diff(path, a, b)

    def restore_version(self, path: str, n: int) -> Version:
        return self._history.restore_version(path, n)

    def gc(self) -> GcReport:
        return self._history.gc()

    # --- the search index (``Index``) ------------------------------------------------------

    def refresh_index(self, *, batches: int | None = None) -> int:
        return self._index.refresh_index(batches=batches)

    def embedder(self) -> Embedder | None:
        return self._index.embedder()

    def index(
        self,
        embedder: Embedder | str | None = None,
        *,
        rebuild: bool = False,
        path: str = "/",
        replace: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexStatus:
        self._bring_in_below(path, content=True)
        return self._index.index(
            embedder, rebuild=rebuild, path=path, replace=replace, progress=progress
        )

    def embed_pending(
        self,
        embedder: Embedder | None = None,
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        return self._index.embed_pending(embedder, progress=progress)

    def index_status(self) -> IndexStatus:
        return self._index.index_status()

    def configure_index(
        self, *, enabled: bool | None = None, max_bytes: int | None = None
    ) -> IndexStatus:
        return self._index.configure_index(enabled=enabled, max_bytes=max_bytes)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- features that open the file again ----------------------------------------------------

    def embed_in_background(
        self, *, interval: float = 5.0, embedder: Embedder | None = None
    ) -> BackgroundEmbedder:
        """The opt-in background step: a thread with its own connection that embeds queued
        chunks every ``interval`` seconds until stopped (use it as a context manager)."""
        path = self.conn.filename
        return BackgroundEmbedder(lambda: Workspace(path), embedder, interval)

    def fork(self, snapshot: str, out: str | os.PathLike[str]) -> Path:
        """A new workspace file whose tree is snapshot ``snapshot``, with the history up to it
        (versions written before it, the snapshots before it) and nothing after."""
        out = Path(out)
        info = self.snapshots.get(snapshot)
        if out.exists():
            raise fs_error(errno.EEXIST, str(out), "fork refuses to overwrite a file")
        tmp = out.with_name(f".{out.name}.forking")
        tmp.unlink(missing_ok=True)
        db.create_private(tmp)  # VACUUM INTO fills an empty file, keeping its mode
        self.conn.execute("VACUUM INTO ?", (str(tmp),))
        try:
            with Workspace(tmp) as fork:
                fork.snapshots.restore(snapshot)
                with fork.transaction():
                    fork.snapshots.forget_after(info.id)
                    fork.conn.execute("DELETE FROM ws_version WHERE at_ns > ?", (info.created_ns,))
                    fork.conn.execute("DELETE FROM ws_read")
                fork.gc()
                fork.conn.execute("VACUUM")
            os.replace(tmp, out)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return out

    def walk(self, top: str = "/") -> Iterator[tuple[str, list[str], list[str]]]:
        """Like ``os.walk`` top-down (see ``agentfs.core.treeops.walk``): symlinks are listed in
        filenames and never descended into; prune by editing ``dirnames`` in place."""
        return treeops.walk(self, top)

    def copy(self, src: str, dst: str, *, recursive: bool = False) -> None:
        """Copy a file (bytes and mode) or, with ``recursive``, a directory tree, in one
        transaction. Symlinks are copied as symlinks; hard links inside a tree are not kept."""
        with self.transaction():
            treeops.copy(self, paths.normalize(src), paths.normalize(dst), recursive=recursive)

    # --- commands in the workspace, mounted or copied (``agentfs.mount``) -----------------

    def run(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | None = None,
        root: str = "/",
        sandbox: bool = False,
        network: bool = False,
        timeout: float | None = 10.0,
        env: Mapping[str, str] | None = None,
        max_output: int | None = 64 * 1024,
        capture: bool = True,
        mode: Mode | None = None,
        limits: Limits | None = None,
        rules: MountRules | None = None,
    ) -> CommandResult:
        """Run ``command`` (a shell string or an argument list) with this workspace as its
        directory tree, and return what it did (docs/mount.md)::

            result = ws.run("pytest -q", timeout=120)
            ws.snapshots.restore(result.snapshot)    # undo everything the command changed

        A snapshot is taken first, labelled with this handle's thread and the command line, so
        the command can be undone like any turn. ``sandbox``: isolated from the host
        (docs/security.md), with the workspace at ``/workspace``, no network unless
        ``network``, bounded by ``limits`` (default: ``Limits()``); a ``SandboxError`` where
        no sandbox can be built here, never an unsandboxed run. Without it there is no
        isolation. ``timeout`` (seconds) kills the command and all it started; each output
        stream keeps ``max_output`` bytes.
        ``mode``: ``"mount"`` (FUSE; MountError where it cannot be made), ``"copy"`` (a
        private copy whose changes are carried back in one transaction), or None: a mount
        where FUSE is available, else a copy. The result's ``mode`` says which ran.
        ``rules``: a policy's (``Policy.mount_rules()``): denied paths absent, writes outside
        the allow list refused, each refusal in the result's ``denied``. A mount refuses each
        request as it is made; a copy leaves denied files out and carries back only what the
        rules allow (docs/policies.md, "Through a copy").
        """
        line = describe_command(command)
        if self.readonly:
            raise fs_error(errno.EROFS, self.conn.filename, "the workspace is open read-only")
        if mode not in (None, "mount", "copy"):
            raise fs_error(errno.EINVAL, line, f"mode must be 'mount' or 'copy', not {mode!r}")
        unmountable = fuse_available()
        if mode is None:
            mode = "mount" if unmountable is None else "copy"
        elif mode == "mount" and unmountable is not None:  # refused before the snapshot
            raise MountError(f"cannot mount the workspace: {unmountable}")
        if sandbox:
            require_sandbox()
        root_st = self.lstat("/")
        snapshot = self.snapshots.create(
            thread=self.thread, label=f"before: {line}"[:200], meta={"command": line}
        )
        runner = (
            partial(run_in_copy, self)
            if mode == "copy"
            else partial(run_command, self.conn.filename)
        )
        options = RunOptions(
            cwd=cwd,
            sandbox=sandbox,
            network=network,
            timeout=timeout,
            env=env,
            max_output=max_output,
            capture=capture,
            limits=limits or Limits(),
            owner=(root_st.st_uid, root_st.st_gid),
            rules=rules,
            actor=self.actor,
            thread=self.thread,
        )
        result = runner(command, root=root, options=options)
        return replace(result, snapshot=snapshot.name)

    # --- finding (``agentfs.search``) ------------------------------------------------------

    def glob(
        self,
        pattern: str,
        path: str = "/",
        *,
        sort: Literal["mtime", "name"] = "mtime",
        include_dirs: bool = False,
    ) -> list[GlobMatch]:
        """Entries matching ``pattern`` at or below directory ``path``, newest first (or by
        name); directories only with ``include_dirs`` (``agentfs.search.glob``)."""
        self._bring_in_below(path)
        return glob_files(self, pattern, path, sort=sort, include_dirs=include_dirs)

    def grep(self, pattern: str, path: str = "/", **options: Unpack[GrepFields]) -> GrepResult:
        """The lines of the text files at or below ``path`` matching ``pattern``, as
        ripgrep finds them (``agentfs.search.grep``)."""
        self._bring_in_below(path, content=True)
        return grep_files(self._index, pattern, path, **options)

    def search(
        self, query: str, *, embedder: Embedder | None = None, **options: Unpack[SearchFields]
    ) -> SearchResults:
        """The files that best answer ``query``, best first (``SearchOptions``)."""
        where = options.get("path") or "/"
        self._bring_in_below(where)
        results = search_files(self._index, query, SearchOptions(**options), embedder)
        if self.base is None:
            unread = 0
        elif paths.normalize(where) == "/":
            unread = self.base.unread_count()
        else:
            unread = len(self._unread_below(where))
        if not unread:
            return results
        note = (
            f"{unread:,} files of the base directory are not read into the workspace yet and"
            " are not searched (`agentfs index WS` reads and indexes them; grep reads them)"
        )
        return replace(results, note=note if results.note is None else f"{results.note}; {note}")

    def bring_in(self, path: str = "/") -> None:
        """Bring in now everything of the base at or below ``path``: every directory's
        entries and every file's bytes (``agentfs.core.base`` brings each in only when first
        needed). After it, the workspace no longer needs the host directory for that part of
        the tree. Nothing to do without a base."""
        self._check_writable()
        self._bring_in_below(path, content=True)

    def _bring_in_below(self, path: str, *, content: bool = False) -> None:
        """Bring in every directory of the base below ``path`` (``agentfs.core.base``): glob,
        grep and search query the tables, which hold only what came in, and an answer that
        silently missed the host's files would be wrong. With ``content`` the bytes of each
        file below come in too (grep reads them, ``index`` indexes them); a file whose host
        file is gone is left for its own read to report."""
        if self.base is None or self.readonly or not self.base.pending():
            return
        try:
            top = self.stat(path)
        except OSError:
            return  # the search itself says what is wrong with the path
        if top.is_dir():
            self._listed_below(top.st_ino)
        if not content:
            return
        unread = self._unread_below(path)
        for start in range(0, len(unread), _FILL_BATCH):
            with self.transaction():
                for ino in unread[start : start + _FILL_BATCH]:
                    try:
                        self.chunks.present(ino)
                    except OSError:
                        continue

    def _unread_below(self, path: str) -> list[int]:
        """The files of the base at or below ``path`` whose bytes are not in yet."""
        if self.base is None:
            return []
        with self.read_transaction():
            unread = self.base.unread_files()
            if not unread or paths.normalize(path) == "/":
                return unread
            try:
                top = self.stat(path)
            except OSError:
                return []
            if not top.is_dir():
                return [top.st_ino] if top.st_ino in set(unread) else []
            return sorted({ino for _p, ino, _size in names_below(self, unread, top.st_ino, path)})

    # --- skills (``agentfs.skills``): /skills/<id>/SKILL.md and each thread's active set ------

    def skills(self) -> skills.SkillCatalog:
        """Every skill under ``/skills`` and every malformed one's problem."""
        with self.read_transaction():
            return skills.catalog(self)

    def active_skills(self, thread: str | None = None) -> list[str]:
        """The ids of the skills ``thread`` (default: this handle's) has activated."""
        return skills.active(self.conn, self._skill_thread(thread))

    def activate_skill(self, skill_id: str, thread: str | None = None) -> bool:
        """Activate a skill for ``thread``; False when it already was. ENOENT when there is
        no readable skill ``skill_id``."""
        with self.transaction():
            return skills.activate(self.conn, self._skill_thread(thread), skill_id, self.skills())

    def deactivate_skill(self, skill_id: str, thread: str | None = None) -> bool:
        """Deactivate a skill for ``thread``; False when it was not active."""
        with self.transaction():
            return skills.deactivate(self.conn, self._skill_thread(thread), skill_id)

    def _skill_thread(self, thread: str | None) -> str:
        return thread if thread is not None else (self.thread or "")

    # --- summary -------------------------------------------------------------------------------

    def info(self) -> WorkspaceInfo:
        one = self.conn.execute
        with self.read_transaction():
            counts = dict(
                one(f"SELECT mode & 61440, count(*) FROM fs_inode WHERE {_LIVE} GROUP BY 1")
            )
            return WorkspaceInfo(
                path=str(self.path),
                files=counts.get(0o100000, 0),
                directories=counts.get(0o040000, 0),
                symlinks=counts.get(0o120000, 0),
                content_bytes=one(
                    "SELECT coalesce(sum(size), 0) FROM fs_inode WHERE mode & 61440 = 32768"
                    f" AND {_LIVE}"
                ).get,
                database_bytes=one("PRAGMA page_count").get * one("PRAGMA page_size").get,
                chunk_size=self.chunks.size,
                chunks=one("SELECT count(*) FROM fs_data").get,
                spec_version=one("SELECT value FROM fs_config WHERE key='schema_version'").get,
                schema_version=db.schema_version(self.conn),
                kv_keys=one("SELECT count(*) FROM kv_store").get,
                tool_calls=one(
                    "SELECT (SELECT count(*) FROM tool_calls)"
                    " + (SELECT count(*) FROM ws_tool_call_staged)"
                ).get,
                orphans_pending=self.orphans.pending(),
                versions=one(
                    "SELECT count(*) FROM ws_version WHERE ino IS NOT NULL OR kept IS NOT NULL"
                ).get,
                snapshots=one("SELECT count(*) FROM ws_snapshot").get,
                history_bytes=one(
                    "SELECT coalesce(sum(size), 0) FROM fs_inode WHERE mode & 61440 = 32768"
                    f" AND NOT {_LIVE} AND ino NOT IN (SELECT ino FROM ws_orphan)"
                ).get
                + one("SELECT coalesce(sum(size), 0) FROM ws_version WHERE kept IS NOT NULL").get,
            )


def open_workspace(
    path: str | os.PathLike[str] = DEFAULT_WORKSPACE, **options: object
) -> Workspace:
    """Open ``path`` as a workspace, creating it (and its directory) if it does not exist."""
    return Workspace(path, **options)  # type: ignore[arg-type]
