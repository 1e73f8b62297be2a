"""Opening a workspace file: pragmas, extensions, migrations and the write-transaction helper.

Every connection is made here, so the settings that make one-transaction-per-operation both safe
and fast are applied in exactly one place, and each is read back: a pragma that silently did not
take would cost durability or speed without a sound.
"""

from __future__ import annotations

import errno
import functools
import importlib.util
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import apsw

from agentfs import credentials

#: Bytes per fs_data chunk for new workspaces: larger than the spec's 4 KiB, for write speed and
#: less space overhead (docs/schema.md).
DEFAULT_CHUNK_SIZE = 65536
#: Set before the first table exists; it cannot change afterwards in WAL mode. A small-file
#: commit dirties several b-tree pages and the WAL stores whole pages, so small pages write
#: less WAL (docs/schema.md).
PAGE_SIZE = 4096
#: WAL bytes between automatic checkpoints (see _checkpoint_interval).
WAL_CHECKPOINT_BYTES = 40 * 1024 * 1024
#: How long a writer waits for another process's write transaction before giving up.
BUSY_TIMEOUT_MS = 10_000
#: How often a waiting writer tries the write lock again (seconds; see _BusyWait).
BUSY_STEP = 0.001
#: The AgentFS specification version our fs_* tables follow, as agentfs-sdk records it.
SPEC_VERSION = "0.4"
#: fs_config key of our own migration counter.
SCHEMA_KEY = "workspace_schema"
#: The largest integer SQLite stores (64-bit signed). A number past it (a version, say) can
#: name no row, and binding it raises ``OverflowError`` in apsw: callers bound numbers by it.
INT_MAX = (1 << 63) - 1


def schema_dir() -> Path:
    """Where the SQL files live: inside the installed package, or at the top of a checkout."""
    packaged = Path(__file__).parent / "schema"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "schema"


# --- connection settings: one function each, with its reason, read back ---------------------


def _set(conn: apsw.Connection, name: str, value: object, expect: object | None = None) -> None:
    got = conn.pragma(name, value)
    if got is None:
        got = conn.pragma(name)
    want = value if expect is None else expect
    if str(got).lower() != str(want).lower():
        raise OSError(errno.EIO, f"PRAGMA {name}={value} did not take effect (got {got!r})")


def _wal(conn: apsw.Connection) -> None:
    """WAL lets readers in other processes (a FUSE daemon, the CLI) run beside one writer."""
    _set(conn, "journal_mode", "wal")


def _synchronous_normal(conn: apsw.Connection) -> None:
    """NORMAL in WAL: no fsync per commit, still never corrupt; a power cut loses only the last
    commits. FULL costs an fsync per commit (docs/concurrency.md)."""
    _set(conn, "synchronous", "normal", expect=1)


class _BusyWait:
    """The busy handler: the write lock is tried again every ``BUSY_STEP`` until
    ``BUSY_TIMEOUT_MS`` have passed since the first try failed.

    SQLite's own handler sleeps in growing steps and its lock is no queue, so a waiter beside a
    process that writes again at once finds the lock free only by luck; tried often, it finds one
    of the gaps between the other's transactions (docs/concurrency.md, "Writers side by side").
    """

    __slots__ = ("_since",)

    def __init__(self) -> None:
        self._since = 0.0

    def __call__(self, tries: int) -> bool:
        now = time.monotonic()
        if tries == 0:  # SQLite counts the tries of each wait from 0
            self._since = now
        elif now - self._since >= BUSY_TIMEOUT_MS / 1000:
            return False  # SQLITE_BUSY: Transaction reports EBUSY
        time.sleep(BUSY_STEP)
        return True


def _busy_timeout(conn: apsw.Connection) -> None:
    """Another process's short write transaction is waited for, never reported as an error,
    and a writer that waits is not starved by one that writes again at once (``_BusyWait``)."""
    conn.set_busy_handler(_BusyWait())


def _checkpoint_interval(conn: apsw.Connection) -> None:
    """Checkpoint every WAL_AUTOCHECKPOINT pages instead of SQLite's 1,000. A checkpoint copies
    each distinct page once however often it was rewritten, and small-file writes keep
    rewriting the same directory and index pages (what that gains: docs/concurrency.md).
    journal_size_limit trims the WAL file back afterwards."""
    _set(conn, "wal_autocheckpoint", wal_checkpoint_pages(conn))
    _set(conn, "journal_size_limit", WAL_CHECKPOINT_BYTES)


def wal_checkpoint_pages(conn: apsw.Connection) -> int:
    """WAL_CHECKPOINT_BYTES in pages of ``conn``'s database. A ``Workspace`` checkpoints at
    that size from a background thread instead (``agentfs.core.checkpoint``)."""
    return WAL_CHECKPOINT_BYTES // int(conn.pragma("page_size"))


def database_bytes(conn: apsw.Connection) -> int:
    """The size of the database (pages in use times page size; free pages are reused before
    the file grows), as the open transaction sees it: what a limit on a workspace's size
    compares with (the quota, ``agentfs.core.limits``, and a policy's max_workspace_bytes)."""
    pages = conn.execute("PRAGMA page_count").get - conn.execute("PRAGMA freelist_count").get  # type: ignore[operator]
    return int(pages) * int(conn.execute("PRAGMA page_size").get)  # type: ignore[arg-type]


def sync_wal(conn: apsw.Connection) -> None:
    """Make every transaction ``conn`` committed survive a power cut: fsync the WAL file.

    With ``synchronous=NORMAL`` every committed frame is still in the WAL file (SQLite starts it
    over only after a checkpoint fsynced the main file), so the WAL and its directory are all that
    is left to sync; a checkpoint would not do (it may have nothing to copy, and fails beside the
    background checkpointer). SQLite never locks the WAL file, so this descriptor takes no lock.
    """
    wal = conn.filename_wal
    for path, flags in ((wal, os.O_RDONLY), (os.path.dirname(wal) or ".", os.O_DIRECTORY)):
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            return  # no WAL: the last connection checkpointed it into the file and synced it
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _foreign_keys_off(conn: apsw.Connection) -> None:
    """The spec's tables declare no foreign keys; fsck checks every reference instead."""
    _set(conn, "foreign_keys", 0)


def _cache(conn: apsw.Connection) -> None:
    """64 MiB page cache and in-memory temp tables: directory listings and sorts stay off disk."""
    _set(conn, "cache_size", -65536)
    _set(conn, "temp_store", "memory", expect=2)


def _stable_plans(conn: apsw.Connection) -> None:
    """The query planner stability guarantee (QPSG): a statement keeps its plan whatever
    values are bound to it. apsw's SQLite is built with STAT4, whose planner marks a bound
    parameter that could change a plan, and a statement re-bound with a new value there is
    prepared again at its next step: every ``ORDER BY ... LIMIT`` lookup (a path's latest
    version, an inode's first name) would pay a parse each time (docs/concurrency.md, "Stable
    plans"). No plan is lost: the workspace keeps no ``sqlite_stat4`` and binds no ``LIKE``
    pattern."""
    if not conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1):
        raise OSError(errno.EIO, "SQLITE_DBCONFIG_ENABLE_QPSG did not take effect")


@functools.cache
def _vec_extension() -> str:
    """Where sqlite-vec's loadable extension is: ``sqlite_vec.loadable_path()``'s answer (the
    package directory's ``vec0``), found without importing the package, whose other helpers
    import numpy (a large part of every command's start); the import is the fallback."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is not None and spec.submodule_search_locations:
        found = Path(next(iter(spec.submodule_search_locations))) / "vec0"
        if any(found.with_suffix(ext).exists() for ext in (".so", ".dylib", ".dll")):
            return str(found)
    import sqlite_vec

    return str(sqlite_vec.loadable_path())


def load_extensions(conn: apsw.Connection) -> None:
    """sqlite-vec is loaded into every connection so vec0 tables are always readable; FTS5 is
    compiled into apsw's SQLite and checked here so a build without it fails at open, loudly."""
    conn.enable_load_extension(True)
    conn.load_extension(_vec_extension())
    conn.enable_load_extension(False)
    if not conn.execute("SELECT sqlite_compileoption_used('ENABLE_FTS5')").get:
        raise OSError(errno.ENOSYS, "this SQLite was built without FTS5")


_SETTINGS: tuple[Callable[[apsw.Connection], None], ...] = (
    _busy_timeout,
    _wal,
    _synchronous_normal,
    _checkpoint_interval,
    _foreign_keys_off,
    _cache,
    _stable_plans,
    load_extensions,
)


def connect(
    path: str | os.PathLike[str], *, create: bool = True, readonly: bool = False
) -> apsw.Connection:
    """Open (and if asked, create) a workspace file with every setting applied and verified;
    a file that is not a workspace is refused untouched."""
    path = Path(path)
    if (readonly or not create) and not path.exists():
        raise FileNotFoundError(errno.ENOENT, "no such workspace", str(path))
    _refuse_what_is_no_database(path, new_ok=create and not readonly)
    if create and not readonly:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            create_private(path)
    flags = apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE
    if create and not readonly:
        flags |= apsw.SQLITE_OPEN_CREATE
    name = str(path)
    if readonly and _without_side_files(path):
        # SQLite cannot make the -shm a WAL reader needs: the file is read as it is (nothing
        # else can be writing it either: a writer would need the same side files)
        name = f"{path.absolute().as_uri()}?immutable=1"
        flags |= apsw.SQLITE_OPEN_URI
    try:
        conn = apsw.Connection(name, flags=flags)
    except apsw.CantOpenError as exc:
        raise OSError(errno.EACCES, f"cannot open workspace: {exc}", str(path)) from None
    try:
        _busy_timeout(conn)
        # Before any setting that writes (WAL mode rewrites the header): a database that is
        # not a workspace is refused as it was found.
        require_workspace(conn, str(path), allow_new=create and not readonly)
        if not readonly and _is_empty(conn):
            _set(conn, "page_size", PAGE_SIZE)
        for setting in _SETTINGS:
            if readonly and setting in (_wal, _synchronous_normal, _checkpoint_interval):
                continue
            setting(conn)
    except BaseException as exc:
        conn.close()
        if isinstance(exc, apsw.NotADBError):
            raise OSError(errno.EINVAL, f"not a SQLite database: {exc}", str(path)) from None
        raise
    return conn


#: The first bytes of every SQLite database file.
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _refuse_what_is_no_database(path: Path, *, new_ok: bool) -> None:
    """Refuse, before SQLite opens it, an existing file that is not a database: SQLite would
    write its header into an empty file (switching it to WAL), so a refused command would
    still change it. An empty file is a new workspace only when one may be created (and not
    when a ``-wal`` holds its content, which SQLite reads)."""
    try:
        with path.open("rb") as file:
            head = file.read(len(_SQLITE_MAGIC))
    except (FileNotFoundError, IsADirectoryError):
        return  # nothing yet, or a directory: SQLite's open says so
    if head == _SQLITE_MAGIC or (not head and _has_wal(path)):
        return
    if not head:
        if new_ok:
            return
        raise OSError(errno.ENOENT, "not an agentfs workspace (the file is empty)", str(path))
    raise OSError(errno.EINVAL, "not a SQLite database", str(path))


def unwritable(path: Path) -> str | None:
    """Why an existing workspace file cannot be written where it is, or None: the file is not
    writable, or SQLite cannot make its ``-wal`` and ``-shm`` beside it."""
    if not path.exists():
        return None
    if not os.access(path, os.W_OK):
        return f"{path} is not writable"
    sides = [Path(f"{path}{side}") for side in ("-wal", "-shm")]
    if not os.access(path.parent, os.W_OK | os.X_OK) and not all(
        os.access(side, os.W_OK) for side in sides
    ):
        return f"its directory {path.parent} is not writable"
    return None


def _without_side_files(path: Path) -> bool:
    """Is ``path``'s directory closed to new files while its ``-shm`` is missing? Then a
    reader can only open the file as immutable, and only if no ``-wal`` holds changes (an
    immutable open ignores them: refused instead, with the reason)."""
    if os.access(path.parent, os.W_OK | os.X_OK) or Path(f"{path}-shm").exists():
        return False
    if _has_wal(path):
        raise OSError(
            errno.EROFS,
            "cannot read the workspace: its -wal holds changes and its directory is not"
            " writable (open it once where it can be written)",
            str(path),
        )
    return True


def _has_wal(path: Path) -> bool:
    try:
        return os.stat(f"{path}-wal").st_size > 0
    except FileNotFoundError:
        return False


def create_private(path: str | os.PathLike[str]) -> None:
    """Create the empty workspace file ``path`` readable and writable by its owner only
    (0600; a stricter umask still applies), unless it exists. SQLite would create it with
    0644 less the umask, readable by every local user; made here first, it is private, and
    so are the ``-wal`` and ``-shm`` files, which SQLite gives the main file's mode (and, as
    root, its owner). A file that exists keeps its mode: ``chmod 600`` makes it private."""
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))


def _is_empty(conn: apsw.Connection) -> bool:
    return conn.execute("SELECT count(*) FROM sqlite_schema").get == 0


def table_columns(conn: apsw.Connection, table: str) -> set[str]:
    """The names of ``table``'s columns (none if there is no such table): for what depends on
    a column another schema version or agentfs-sdk's own table may lack."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


# --- transactions ------------------------------------------------------------------------------


class Transaction:
    """One logical operation = one transaction (a context manager; make one per use).

    The outermost write level is ``BEGIN IMMEDIATE``: the write lock is taken up front, so a
    transaction never has to upgrade a read lock (which fails at once with SQLITE_BUSY instead
    of waiting). A nested write level is a savepoint, so a helper may open its own scope safely.
    A read level groups SELECTs that must see one state while other processes commit; nested,
    it is a no-op, and so is a nested write level made with ``savepoint=False``, for an
    operation whose one write is a single statement (atomic by itself). Inside a ``Block``
    the levels are ``BlockLevel``s instead. ``on_begin`` runs right after an outermost BEGIN
    (inside the snapshot, so it can validate caches against it) and ``on_rollback`` whenever
    this level is undone, so caches filled inside it can be dropped. A class, not a
    generator: it sits on every call.
    """

    __slots__ = ("_nested", "conn", "on_begin", "on_rollback", "savepoint", "write")

    def __init__(
        self,
        conn: apsw.Connection,
        *,
        write: bool,
        on_begin: Callable[[], None] | None = None,
        on_rollback: Callable[[], None] | None = None,
        savepoint: bool = True,
    ) -> None:
        self.conn = conn
        self.write = write
        self.savepoint = write and savepoint
        self.on_begin = on_begin
        self.on_rollback = on_rollback
        self._nested = False

    def __enter__(self) -> Transaction:
        conn = self.conn
        self._nested = conn.in_transaction
        if not self._nested:
            try:
                conn.execute("BEGIN IMMEDIATE" if self.write else "BEGIN")
            except apsw.BusyError:
                raise OSError(
                    errno.EBUSY,
                    f"another writer held the workspace for over {BUSY_TIMEOUT_MS // 1000} s",
                    conn.filename,
                ) from None
            if self.on_begin is not None:
                self.on_begin()
        elif self.savepoint:
            conn.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: object, tb: object) -> None:
        conn = self.conn
        if self._nested:
            if self.savepoint:
                conn.__exit__(exc_type, exc, tb)  # type: ignore[arg-type]
        elif exc_type is None:
            try:
                conn.execute("COMMIT")
            except apsw.FullError as full:  # the commit itself found the disk full
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                exc_type, exc = type(full), full
        else:
            conn.execute("ROLLBACK")
        if exc_type is not None and self.on_rollback is not None:
            self.on_rollback()
        if isinstance(exc, apsw.FullError):
            raise OSError(
                errno.ENOSPC, "the disk holding the workspace is full", conn.filename
            ) from exc


class Block(Transaction):
    """An all-or-nothing write transaction, outermost: the operations inside it take no
    savepoints of their own (``BlockLevel``s instead of nested levels).

    A savepoint makes SQLite copy every page an operation changes into a statement journal, which
    a block needs only when an operation fails after changing something and its caller goes on:
    the block is then ``doomed`` and rolls back whole (``DoomedBlockError``). A handle keeps one
    and reuses it (docs/concurrency.md).
    """

    __slots__ = ("doomed", "open")

    def __init__(
        self,
        conn: apsw.Connection,
        *,
        on_begin: Callable[[], None] | None = None,
        on_rollback: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(conn, write=True, on_begin=on_begin, on_rollback=on_rollback)
        self.doomed = False
        self.open = False

    def __enter__(self) -> Block:
        # One block serves its handle's blocks one after another (``FileSystem.transaction``
        # makes it once): it starts clean each time, and is never entered twice at once.
        if self.open:
            raise RuntimeError(
                "this block is open already: inside it, ws.transaction() gives a level of it"
            )
        super().__enter__()
        self.doomed = False
        self.open = True
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: object, tb: object) -> None:
        self.open = False
        if exc_type is None and self.doomed:
            super().__exit__(DoomedBlockError, None, None)  # rolls back, drops the caches
            raise DoomedBlockError(
                "an operation failed half-way inside an all-or-nothing block and its"
                " error was caught; the whole block was rolled back"
            )
        super().__exit__(exc_type, exc, tb)


class BlockLevel(Transaction):
    """One operation's level inside an open ``Block``: no savepoint; if the operation fails
    after changing something (SQLite's count of changed rows moved), the block is doomed. A
    ``Transaction`` to its callers, with its own small ``__init__``, ``__enter__`` and
    ``__exit__``: one is made for every operation of every changing tool call (what that
    saves: docs/concurrency.md)."""

    __slots__ = ("_block", "_changes")

    def __init__(self, block: Block) -> None:
        self.conn = block.conn
        self.write = True
        self.savepoint = False
        self.on_begin = self.on_rollback = None
        self._nested = True
        self._block = block
        self._changes = 0

    def __enter__(self) -> BlockLevel:
        self._changes = self.conn.total_changes()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: object, tb: object) -> None:
        if exc_type is not None and self.conn.total_changes() != self._changes:
            self._block.doomed = True  # failed half-way: only the whole block can undo it


class DoomedBlockError(RuntimeError):
    """An all-or-nothing block ended after one of its operations failed half-way (its error
    was caught inside the block): everything the block did was rolled back."""


class CommitWatch:
    """Has any connection committed to a workspace since a moment? Answered without a
    transaction, so a reader holding one open can tell whether its snapshot is still the
    newest (the mount's read groups: ``agentfs.mount.group``).

    It reads the WAL-index header in the ``-shm`` file, whose layout is part of SQLite's
    documented file format (sqlite.org/walformat.html): ``iChange`` (a 32-bit counter every
    commit, WAL restart and recovery increments, offset 8) and ``mxFrame`` (the last valid
    WAL frame, offset 16). ``pread``, not ``mmap``: a truncated file then reads short instead
    of raising SIGBUS. A torn read of a header being rewritten only reads as a change.
    """

    _HEADER = 24

    def __init__(self, db_path: str) -> None:
        try:
            self._fd: int | None = os.open(f"{db_path}-shm", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self._fd = None  # no WAL index to read: every question is answered "changed"

    def mark(self) -> bytes | None:
        """The commit counter now; None when it cannot be read."""
        if self._fd is None:
            return None
        header = os.pread(self._fd, self._HEADER, 0)
        if len(header) < self._HEADER:
            return None
        return header[8:12] + header[16:20]

    def changed_since(self, mark: bytes | None) -> bool:
        """Did anything commit since ``mark`` was taken? (True when unsure.)"""
        return mark is None or self.mark() != mark

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def write_transaction(conn: apsw.Connection) -> Transaction:
    return Transaction(conn, write=True)


def read_transaction(conn: apsw.Connection) -> Transaction:
    return Transaction(conn, write=False)


# --- migrations --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Migration:
    """One numbered step of our schema; it runs in the same transaction as the counter bump."""

    version: int
    name: str
    apply: Callable[[apsw.Connection], None]


def _run_sql(filename: str) -> Callable[[apsw.Connection], None]:
    def apply(conn: apsw.Connection) -> None:
        sql = (schema_dir() / filename).read_text(encoding="utf-8")
        for _ in conn.execute(sql):  # consume: apsw runs a script's statements lazily
            pass

    return apply


def _bootstrap(conn: apsw.Connection) -> None:
    """The spec tables plus their two required rows; keeps a chunk size an adopted file has."""
    _run_sql("agentfs-v0.4.sql")(conn)
    conn.execute(
        "INSERT OR REPLACE INTO fs_config(key, value) VALUES ('schema_version', ?)",
        (SPEC_VERSION,),
    )
    now = time.time_ns()
    sec, nsec = divmod(now, 1_000_000_000)
    conn.execute(
        "INSERT OR IGNORE INTO fs_inode(ino, mode, nlink, uid, gid, size, atime, mtime, ctime,"
        " atime_nsec, mtime_nsec, ctime_nsec) VALUES (1, ?, 2, ?, ?, 0, ?, ?, ?, ?, ?, ?)",
        # the root belongs to whoever creates the workspace, as any directory they make
        (0o040755, os.geteuid(), os.getegid(), sec, sec, sec, nsec, nsec, nsec),
    )
    _normalise_directory_nlink(conn)


def _normalise_directory_nlink(conn: apsw.Connection) -> None:
    """agentfs-sdk (Python) stores a directory's nlink as its dentry count and root as 1;
    POSIX, the Rust SDK and we use 2 + child directories. Adopting a file fixes that once."""
    conn.execute(
        "UPDATE fs_inode SET nlink = 2 + (SELECT count(*) FROM fs_dentry d JOIN fs_inode c"
        " ON c.ino = d.ino WHERE d.parent_ino = fs_inode.ino AND (c.mode & 61440) = 16384)"
        " WHERE (mode & 61440) = 16384"  # S_IFMT, S_IFDIR
    )


def _history(conn: apsw.Connection) -> None:
    _run_sql("migrations/0003-history.sql")(conn)
    _run_sql("history-guard.sql")(conn)


def queue_every_file(conn: apsw.Connection) -> int:
    """Queue every live regular file (the root, a directory, is never one) for indexing:
    migration 4 on files already there, a settings change, an fsck rebuild. Returns how many.
    The queue is the search index's, but these migrations make it, so the statement is here
    (mode bits as numbers: S_IFMT 61440, S_IFREG 32768)."""
    return len(
        conn.execute(
            "INSERT OR IGNORE INTO ws_index_queue(ino) SELECT ino FROM fs_inode"
            " WHERE (mode & 61440) = 32768 AND nlink > 0 AND ino <> 1 RETURNING 1"
        ).fetchall()
    )


def vec_table_sql(dim: int) -> str:
    """The statement that makes ws_vec, the int8 copy of the vectors (sqlite-vec), for vectors
    of ``dim``: its dimension is the model's, so it exists only once a model is chosen."""
    return f"CREATE VIRTUAL TABLE ws_vec USING vec0(embedding int8[{int(dim)}])"


def _texts(conn: apsw.Connection) -> None:
    """The index by chunk text; every file queued again (the FTS5 rows cannot be converted:
    see the SQL file), ws_vec made again, empty, when a model is chosen."""
    _run_sql("migrations/0007-texts.sql")(conn)
    dim = int(conn.execute("SELECT value FROM ws_config WHERE key = 'search.dim'").get or 0)  # type: ignore[arg-type]
    if dim:
        conn.execute(vec_table_sql(dim))
    queue_every_file(conn)


def _search(conn: apsw.Connection) -> None:
    """The search tables, then every file already there queued (the first query indexes it)."""
    _run_sql("migrations/0004-search.sql")(conn)
    queue_every_file(conn)


def _owned(conn: apsw.Connection) -> None:
    """Until this step every inode made through the API (the root directory included) was
    recorded as root's, whoever made it, so a normal user could not write their own workspace
    through a mount or a sandbox. In a workspace file that a normal user owns, those inodes
    are given to that user; a workspace root owns stays as it is."""
    try:
        st = os.stat(conn.filename)
    except OSError:  # an in-memory database: nothing was recorded by anyone else
        return
    if st.st_uid != 0:
        conn.execute(
            "UPDATE fs_inode SET uid = ?, gid = ? WHERE uid = 0 AND gid = 0",
            (st.st_uid, st.st_gid),
        )


def _staged_link(conn: apsw.Connection) -> None:
    """The staged log rows' link columns, where they are missing: like the other migrations'
    ``IF NOT EXISTS``, a migration may meet what it makes already (a file whose counter is
    behind its tables)."""
    if "path" not in table_columns(conn, "ws_tool_call_staged"):
        _run_sql("migrations/0012-staged-link.sql")(conn)


def _token_out(conn: apsw.Connection) -> None:
    """Earlier releases stored a token saved by ``sync setup --save-token`` in the workspace
    file, which travels wherever the file is copied; it moves to the user's configuration
    directory (``agentfs.credentials``), with a ``CredentialWarning`` saying where. This is
    the one place outside ``agentfs.sync`` that reads sync's table. ``secure_delete``
    overwrites the row's bytes in the file, rather than leaving them on a free page."""
    if not conn.table_exists("main", "ws_sync"):
        return
    rows = dict(conn.execute("SELECT key, value FROM ws_sync"))
    if "token" not in rows:
        return
    remote, origin, token = (json.loads(rows[key]) for key in ("remote", "origin", "token"))
    credentials.moved_out(conn.filename, remote, origin, token)
    secure = conn.pragma("secure_delete")
    conn.pragma("secure_delete", 1)
    try:
        conn.execute("DELETE FROM ws_sync WHERE key = 'token'")
    finally:
        conn.pragma("secure_delete", secure)


def _present(conn: apsw.Connection) -> None:
    """ws_origin.listed renamed present (now said of a file's bytes too), where it is still
    ``listed``, and its index made anew."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(ws_origin)")}
    if "listed" in columns:
        conn.execute("ALTER TABLE ws_origin RENAME COLUMN listed TO present")
    _run_sql("migrations/0016-present.sql")(conn)


def own_files(conn: apsw.Connection) -> set[tuple[int, int]]:
    """(st_dev, st_ino) of the workspace's database file, its WAL and its shared memory: what
    a walk of the host directory the workspace lives in (an import, an export, a base) must
    leave alone."""
    found = set()
    for name in (conn.filename, conn.filename_wal, f"{conn.filename}-shm"):
        try:
            st = os.stat(name)
        except (OSError, ValueError):
            continue
        found.add((st.st_dev, st.st_ino))
    return found


def _call_who(conn: apsw.Connection) -> None:
    """Each tool call's thread and actor: the staged rows' columns where they are missing,
    and the table they are published into."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(ws_tool_call_staged)")}
    for column in ("thread", "actor"):
        if column not in columns:
            conn.execute(f"ALTER TABLE ws_tool_call_staged ADD COLUMN {column} TEXT")
    _run_sql("migrations/0017-call-who.sql")(conn)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "spec tables v0.4", _bootstrap),
    Migration(2, "orphan queue", _run_sql("migrations/0002-workspace.sql")),
    Migration(3, "history: versions, snapshots, reads", _history),
    Migration(4, "search: chunks, BM25 and trigram indexes, embedding queue", _search),
    Migration(
        5, "tools: what each tool call wrote, active skills", _run_sql("migrations/0005-tools.sql")
    ),
    Migration(6, "history: versions' bytes kept aside", _run_sql("migrations/0006-kept.sql")),
    Migration(7, "search: the index by chunk text (each distinct text indexed once)", _texts),
    Migration(8, "orphan pins every connection sees", _run_sql("migrations/0008-pins.sql")),
    Migration(9, "extended attributes", _run_sql("migrations/0009-xattr.sql")),
    Migration(10, "orphan queue keepers", _run_sql("migrations/0010-keepers.sql")),
    Migration(11, "tool calls' log rows staged", _run_sql("migrations/0011-staged-calls.sql")),
    Migration(12, "a staged log row's first link in columns", _staged_link),
    Migration(13, "root's inodes in a user's workspace given to that user", _owned),
    Migration(14, "a saved sync token moved out of the file", _token_out),
    Migration(15, "a host directory under the workspace", _run_sql("migrations/0015-base.sql")),
    Migration(16, "a base file's bytes brought in when first needed", _present),
    Migration(17, "who made each tool call", _call_who),
)
SCHEMA_VERSION = MIGRATIONS[-1].version


def require_workspace(conn: apsw.Connection, path: str, *, allow_new: bool) -> None:
    """Refuse to turn a database that is not a workspace into one: a file with tables but no
    fs_config belongs to someone else, and an empty file is a workspace only when asked to
    create one."""
    if conn.table_exists("main", "fs_config"):
        return
    if not _is_empty(conn):
        raise OSError(errno.EINVAL, "not an agentfs workspace (it has no fs_config table)", path)
    if not allow_new:
        raise OSError(errno.ENOENT, "not an agentfs workspace (the database is empty)", path)


def schema_version(conn: apsw.Connection) -> int:
    """Our migration counter; 0 for an empty file or one only agentfs-sdk has written."""
    if not conn.table_exists("main", "fs_config"):
        return 0
    value = conn.execute("SELECT value FROM fs_config WHERE key = ?", (SCHEMA_KEY,)).get
    return int(value) if value is not None else 0


def migrate(conn: apsw.Connection, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> list[Migration]:
    """Bring the file up to SCHEMA_VERSION, one transaction per step; return what ran.

    ``chunk_size`` applies only to a file that has none yet (a new one): the spec forbids
    changing it later, and an adopted agentfs-sdk file keeps its own.
    """
    current = schema_version(conn)
    if current > SCHEMA_VERSION:
        raise OSError(
            errno.EPROTO,
            f"workspace schema {current} is newer than this agentfs ({SCHEMA_VERSION}); upgrade",
            conn.filename,
        )
    applied = []
    for step in MIGRATIONS:
        if step.version <= current:
            continue
        with write_transaction(conn):
            step.apply(conn)
            conn.execute(
                "INSERT OR IGNORE INTO fs_config(key, value) VALUES ('chunk_size', ?)",
                (str(chunk_size),),
            )
            conn.execute(
                "INSERT OR REPLACE INTO fs_config(key, value) VALUES (?, ?)",
                (SCHEMA_KEY, str(step.version)),
            )
        applied.append(step)
    _readopt(conn)
    return applied


def _readopt(conn: apsw.Connection) -> None:
    """agentfs-sdk runs ``CREATE INDEX IF NOT EXISTS idx_fs_dentry_parent`` every time it opens
    a file, and migration 2 dropped that index, so finding it in a migrated workspace means the
    SDK has opened (and maybe written) it since. Re-adopt: recount directory nlink the POSIX way
    (the SDK writes its own count) and drop the duplicate index again. The history guard
    trigger (schema/history-guard.sql) is put back if something dropped it. Cheap when all is
    in place: one query."""
    present = {
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_schema WHERE name IN"
            " ('idx_fs_dentry_parent', 'ws_history_guard')"
        )
    }
    if present == {"ws_history_guard"}:
        return
    with write_transaction(conn):
        if "idx_fs_dentry_parent" in present:
            _normalise_directory_nlink(conn)
            conn.execute("DROP INDEX idx_fs_dentry_parent")
        if "ws_history_guard" not in present:
            _run_sql("history-guard.sql")(conn)
