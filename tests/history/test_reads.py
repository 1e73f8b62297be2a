"""Read tracking (``ws_read``, ``Workspace.reads_log``) and the read-before-write policy.

A handle with a thread records the last read of each file: its symlink-free path, the version
and BLAKE2b-128 digest it saw, and whether only a range was read. With ``read_before_write``
on, a write, append, pwrite or truncate of an existing file is refused (``StaleReadError``, a
``PermissionError``) unless this thread read the file as it is now, whoever changed it since:
another handle, another thread or another process. Refusals are checked from outside, through
a second connection, to prove they change nothing.
"""

from __future__ import annotations

import errno
import hashlib
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs.history.reads import Read
from tests.table_rows import all_rows

#: One change of an existing file, per way of changing it (each leaves different bytes).
Change = Callable[[agentfs.Workspace, str], object]
CHANGES: dict[str, Change] = {
    "write": lambda ws, path: ws.write(path, b"rewritten"),
    "append": lambda ws, path: ws.append(path, b"+more"),
    "pwrite": lambda ws, path: ws.pwrite(path, b"XY", 1),
    "truncate": lambda ws, path: ws.truncate(path, 2),
}
#: A second, different change of the same kind (for "twice in a row").
AGAIN: dict[str, Change] = {
    "write": lambda ws, path: ws.write(path, b"rewritten again"),
    "append": lambda ws, path: ws.append(path, b"+even more"),
    "pwrite": lambda ws, path: ws.pwrite(path, b"ZW", 3),
    "truncate": lambda ws, path: ws.truncate(path, 1),
}
ORIGINAL = b"original content"


def blake(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


@pytest.fixture
def agent(ws: agentfs.Workspace) -> agentfs.Workspace:
    """The conftest workspace as an agent's handle: actor 'me', thread 'chat', /f written."""
    ws.actor, ws.thread = "me", "chat"
    ws.write("/f", ORIGINAL)
    return ws


@pytest.fixture
def other(ws_path: Path, agent: agentfs.Workspace) -> Iterator[agentfs.Workspace]:
    """A second handle on the same file: another connection, actor 'bob', thread 'other'."""
    with agentfs.open(ws_path, actor="bob", thread="other") as handle:
        yield handle


@pytest.fixture
def guarded(agent: agentfs.Workspace) -> agentfs.Workspace:
    """The agent's handle with read-before-write on for every path."""
    agent.read_before_write = True
    return agent


def only_read(ws: agentfs.Workspace, thread: str | None = None) -> Read:
    (record,) = ws.reads_log(thread)
    return record


# --- what a read records --------------------------------------------------------------------------


def test_a_whole_read_records_the_version_and_digest_it_saw(agent: agentfs.Workspace) -> None:
    """A whole read records the path, the inode and ctime it saw, the size, the version number
    and the BLAKE2b-128 digest of the bytes, not ranged, and when."""
    before = time.time_ns()
    assert agent.read("/f") == ORIGINAL
    after = time.time_ns()
    st = agent.stat("/f")
    record = only_read(agent)
    assert record == Read(
        thread="chat",
        path="/f",
        ino=st.st_ino,
        ctime_ns=st.st_ctime_ns,
        size=len(ORIGINAL),
        n=1,
        hash=blake(ORIGINAL),
        ranged=record.ranged,
        at_ns=record.at_ns,
    )
    assert not record.ranged
    assert before <= record.at_ns <= after
    assert record.as_dict()["hash"] == blake(ORIGINAL).hex()


def test_reading_more_than_the_file_from_offset_0_is_a_whole_read(
    agent: agentfs.Workspace,
) -> None:
    """A length past the end from offset 0 returns every byte: it counts as a whole read."""
    agent.read("/f", 0, len(ORIGINAL) + 100)
    assert not only_read(agent).ranged


@pytest.mark.parametrize(("offset", "length"), [(1, None), (0, 3), (4, 2)])
def test_a_ranged_read_is_marked_ranged_and_names_the_version(
    agent: agentfs.Workspace, offset: int, length: int | None
) -> None:
    """An offset/length read that misses some bytes is marked ranged; the file's version is
    known, so the record still carries that version's number and digest."""
    agent.write("/f", b"second version")
    agent.read("/f", offset, length)
    record = only_read(agent)
    assert record.ranged
    assert (record.n, record.hash) == (2, blake(b"second version"))


def test_reads_through_symlinks_are_recorded_under_the_real_path(
    agent: agentfs.Workspace,
) -> None:
    """Through a symlink to the file, a symlinked directory, or a chain of both, the record is
    kept under the symlink-free path, so every route shares one record."""
    agent.write("/real/dir/a.txt", b"abc", parents=True)
    agent.symlink("/real", "/abs")  # absolute target: relative to the workspace root
    agent.symlink("real/dir", "/rel")
    agent.symlink("dir/a.txt", "/real/file-link")
    agent.symlink("/abs/file-link", "/chain")
    for route in ("/abs/dir/a.txt", "/rel/a.txt", "/real/file-link", "/chain"):
        agent.thread = route  # one thread per route, so each keeps its own record
        assert agent.read(route) == b"abc"
        assert only_read(agent, route).path == "/real/dir/a.txt"


def test_a_handle_without_a_thread_records_nothing(ws: agentfs.Workspace) -> None:
    """Reads are tracked per thread; with no thread on the handle nothing is written."""
    ws.write("/f", b"x")
    ws.read("/f")
    ws.read("/f", 0, 1)
    assert ws.reads_log() == []
    assert ws.conn.execute("SELECT count(*) FROM ws_read").get == 0


def test_reads_log_lists_every_thread_and_filters_by_one(
    agent: agentfs.Workspace, ws_path: Path
) -> None:
    """``reads_log()`` lists each thread's last read of each path (by thread, then path);
    ``reads_log(thread)`` only that thread's."""
    agent.write("/b", b"b")
    agent.read("/f")
    agent.read("/b")
    with agentfs.open(ws_path, thread="another") as second:
        second.read("/f")
    assert [(r.thread, r.path) for r in agent.reads_log()] == [
        ("another", "/f"),
        ("chat", "/b"),
        ("chat", "/f"),
    ]
    assert [r.path for r in agent.reads_log("chat")] == ["/b", "/f"]
    assert [r.path for r in agent.reads_log("another")] == ["/f"]
    assert agent.reads_log("nobody") == []


def test_reading_again_replaces_the_record(agent: agentfs.Workspace) -> None:
    """One record per (thread, path): a later read replaces the earlier one."""
    agent.read("/f")
    first = only_read(agent)
    agent.write("/f", b"v2")
    agent.read("/f", 1)
    second = only_read(agent)
    assert (second.n, second.hash, second.size) == (2, blake(b"v2"), 2)
    assert second.ranged and not first.ranged
    assert second.at_ns >= first.at_ns


def test_an_unversioned_file_records_the_digest_of_a_whole_read_only(
    plain_ws: agentfs.Workspace,
) -> None:
    """With versioning off there is no version number; a whole read still records the digest
    of the bytes it returned, a ranged read cannot."""
    plain_ws.thread = "chat"
    plain_ws.write("/f", b"plain")
    plain_ws.read("/f")
    record = only_read(plain_ws)
    assert (record.n, record.hash) == (None, blake(b"plain"))
    plain_ws.read("/f", 1)
    record = only_read(plain_ws)
    assert (record.n, record.hash, bool(record.ranged)) == (None, None, True)


def test_a_failed_read_inside_a_transaction_leaves_the_transaction_as_it_was(
    agent: agentfs.Workspace, ws_path: Path
) -> None:
    """A tracked read nested in a caller's transaction makes no savepoint of its own (its one
    write is one statement): a read that fails records nothing and leaves the caller's
    changes to the caller, which commits them, or rolls them back with everything else."""
    with agent.transaction():
        agent.write("/g", b"mine")
        with pytest.raises(IsADirectoryError):
            agent.read("/")
        with pytest.raises(FileNotFoundError):
            agent.read("/missing")
        assert agent.read("/g") == b"mine"
    assert [r.path for r in agent.reads_log()] == ["/g"]
    before = all_rows(ws_path)
    with pytest.raises(FileNotFoundError), agent.transaction():
        agent.write("/h", b"gone")
        agent.read("/f")
        agent.read("/missing")
    assert all_rows(ws_path) == before


def test_ranged_is_a_bool(agent: agentfs.Workspace) -> None:
    """``Read.ranged`` is a real bool, in ``as_dict`` (JSON) too, though stored as 0/1.
    (Not the INTEGER column's 0/1.)"""
    agent.read("/f", 1)
    assert only_read(agent).ranged is True
    assert only_read(agent).as_dict()["ranged"] is True
    agent.read("/f")
    assert only_read(agent).ranged is False


def test_a_read_only_handle_with_a_thread_reads_untracked(ws_path: Path) -> None:
    """A read-only handle cannot record reads, but reading still works (and records nothing).
    (A thread must not make every read open a write transaction, which fails with EROFS.)"""
    with agentfs.open(ws_path) as ws:
        ws.write("/f", b"x")
    with agentfs.open(ws_path, readonly=True, thread="chat") as ro:
        assert ro.read("/f") == b"x"
        assert ro.read("/f", 0, 1) == b"x"
        assert ro.reads_log() == []


# --- the policy setting ---------------------------------------------------------------------------


def test_read_before_write_accepts_true_a_glob_a_list_or_false(ws: agentfs.Workspace) -> None:
    """True means every path, a string one glob, an iterable several, False none; a bad glob
    is refused when set, and the policy stays as it was."""
    assert ws.read_before_write == ()
    ws.read_before_write = True
    assert ws.read_before_write == ("/**",)
    ws.read_before_write = "/src/**"
    assert ws.read_before_write == ("/src/**",)
    ws.read_before_write = ["/src/**", "*.md"]
    assert ws.read_before_write == ("/src/**", "*.md")
    with pytest.raises(ValueError):
        ws.read_before_write = ["/ok/**", ""]
    assert ws.read_before_write == ("/src/**", "*.md")
    ws.read_before_write = False
    assert ws.read_before_write == ()


def test_without_the_policy_blind_writes_are_allowed(agent: agentfs.Workspace) -> None:
    """The policy is off by default: a thread may write what it never read."""
    for change in CHANGES.values():
        change(agent, "/f")


# --- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CHANGES)
def test_changing_an_unread_file_is_refused(
    guarded: agentfs.Workspace, ws_path: Path, name: str
) -> None:
    """A write, append, pwrite or truncate of a file this thread never read raises
    StaleReadError: a PermissionError with EACCES and the path, changing nothing."""
    before = all_rows(ws_path)
    with pytest.raises(agentfs.StaleReadError) as caught:
        CHANGES[name](guarded, "/f")
    error = caught.value
    assert isinstance(error, PermissionError)
    assert isinstance(error, agentfs.AgentFSError)
    assert error.errno == errno.EACCES
    assert error.filename == "/f"
    assert str(error).startswith("/f: ")
    assert "thread 'chat' has not read this file" in str(error)
    assert all_rows(ws_path) == before
    assert guarded.read("/f") == ORIGINAL


@pytest.mark.parametrize(
    "create",
    [
        lambda ws: ws.write("/new", b"n"),
        lambda ws: ws.write("/deep/new", b"n", parents=True),
        lambda ws: ws.append("/new", b"n"),
        lambda ws: ws.pwrite("/new", b"n", 3),
    ],
    ids=["write", "write-parents", "append", "pwrite"],
)
def test_creating_a_new_file_is_allowed(
    guarded: agentfs.Workspace, create: Callable[[agentfs.Workspace], object]
) -> None:
    """There is nothing to have read in a file that does not exist yet."""
    create(guarded)


@pytest.mark.parametrize("name", CHANGES)
def test_after_a_read_the_thread_may_change_the_file_twice_in_a_row(
    guarded: agentfs.Workspace, name: str
) -> None:
    """A read allows the write; the write refreshes the thread's own record, so a second
    change right after it is allowed too (an agent editing a file step by step)."""
    guarded.read("/f")
    CHANGES[name](guarded, "/f")
    AGAIN[name](guarded, "/f")
    for change in CHANGES.values():  # and any other kind after it
        change(guarded, "/f")


def test_the_creator_of_a_file_may_write_it_again(guarded: agentfs.Workspace) -> None:
    """'A successful write refreshes the writer's own record': the thread that created a file
    has seen its content and may change it again without reading it: ``write()`` refreshes
    the record when it creates the file too."""
    guarded.write("/created", b"first")
    assert only_read(guarded).path == "/created"
    guarded.write("/created", b"second")
    guarded.append("/created", b"!")
    assert guarded.read("/created") == b"second!"


def test_appending_to_a_file_created_by_append_is_allowed(guarded: agentfs.Workspace) -> None:
    """append (and pwrite) creating a file record the creator's read of it."""
    guarded.append("/log", b"1\n")
    guarded.append("/log", b"2\n")
    assert guarded.read("/log") == b"1\n2\n"


def test_the_record_is_per_thread_not_per_handle(guarded: agentfs.Workspace, ws_path: Path) -> None:
    """A read by thread 'chat' on one connection lets another handle of the same thread write
    (the record lives in the file, not in the handle)."""
    guarded.read("/f")
    with agentfs.open(ws_path, thread="chat") as same_thread:
        same_thread.read_before_write = True
        same_thread.write("/f", b"from the same thread")
    with agentfs.open(ws_path, thread="stranger") as stranger:
        stranger.read_before_write = True
        with pytest.raises(agentfs.StaleReadError, match="'stranger' has not read"):
            stranger.write("/f", b"blind")


@pytest.mark.parametrize("name", CHANGES)
def test_a_change_by_another_thread_makes_the_next_write_fail(
    guarded: agentfs.Workspace, other: agentfs.Workspace, ws_path: Path, name: str
) -> None:
    """After another handle changed the file, the write is refused; the message names the
    version read, the current one and who wrote it; nothing changes; reading again allows it."""
    guarded.read("/f")
    CHANGES[name](other, "/f")
    current = other.read("/f")
    before = all_rows(ws_path)
    with pytest.raises(agentfs.StaleReadError) as caught:
        guarded.write("/f", b"mine")
    message = str(caught.value)
    assert message.startswith("/f: changed since thread 'chat' read it: ")
    assert "read version 1 at " in message
    assert "now version 2 by bob/other (changed " in message
    assert caught.value.errno == errno.EACCES
    assert all_rows(ws_path) == before
    assert guarded.read("/f") == current  # this read refreshes the record
    guarded.write("/f", b"mine")
    assert other.read("/f") == b"mine"


def test_a_change_by_another_process_makes_the_next_write_fail(
    guarded: agentfs.Workspace, ws_path: Path
) -> None:
    """The check compares the file itself, so a writer in another process (which shares no
    memory with this handle) is caught as well."""
    guarded.read("/f")
    script = textwrap.dedent(
        f"""
        import agentfs
        with agentfs.open({str(ws_path)!r}, actor="proc", thread="p") as ws:
            ws.write("/f", b"from another process")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    with pytest.raises(agentfs.StaleReadError) as caught:
        guarded.append("/f", b"!")
    assert "read version 1" in str(caught.value)
    assert "now version 2 by proc/p" in str(caught.value)
    guarded.read("/f")
    guarded.append("/f", b"!")
    assert guarded.read("/f") == b"from another process!"


def test_a_file_replaced_by_another_thread_with_other_content_is_stale(
    guarded: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    """Removed and created again under the same name (a new inode): different content is a
    change; the same content is not (the digests match)."""
    guarded.read("/f")
    other.remove("/f")
    other.write("/f", ORIGINAL)
    guarded.write("/f", b"mine")  # same bytes as read: allowed
    guarded.read("/f")
    other.remove("/f")
    other.write("/f", b"something else")
    with pytest.raises(agentfs.StaleReadError):
        guarded.write("/f", b"mine again")


@pytest.mark.parametrize(
    "touch",
    [
        lambda ws: ws.chmod("/f", 0o600),
        lambda ws: ws.utime("/f", (1_000_000_000, 2_000_000_000)),
        lambda ws: ws.write("/f", ORIGINAL),  # the same bytes again: no new version
    ],
    ids=["chmod", "utime", "same-bytes"],
)
def test_metadata_changes_by_another_handle_do_not_block(
    guarded: agentfs.Workspace, other: agentfs.Workspace, touch: Callable[[agentfs.Workspace], None]
) -> None:
    """chmod, utime or rewriting the same bytes change ctime but not the content: the digests
    still match, so the write goes through."""
    guarded.read("/f")
    ctime = guarded.stat("/f").st_ctime_ns
    touch(other)
    assert guarded.stat("/f").st_ctime_ns != ctime
    guarded.write("/f", b"mine")


def test_a_ranged_read_counts_as_a_read_of_that_version(
    guarded: agentfs.Workspace, other: agentfs.Workspace
) -> None:
    """Reading part of a file is enough to write it, as long as it is still that version."""
    guarded.read("/f", 0, 4)
    guarded.pwrite("/f", b"ORIG", 0)
    guarded.read("/f", 2, 2)
    other.write("/f", b"new from bob")
    with pytest.raises(agentfs.StaleReadError, match=r"read version 2 .* now version 3 by bob"):
        guarded.write("/f", b"mine")


def test_globs_limit_the_policy(agent: agentfs.Workspace) -> None:
    """With '/src/**' only files under /src need a read first; a list of globs guards the
    union, and a glob without a leading slash matches at any depth."""
    for path in ("/src/a.py", "/src/pkg/b.py", "/docs/a.md", "/notes.txt"):
        agent.write(path, b"old", parents=True)
    agent.read_before_write = "/src/**"
    with pytest.raises(agentfs.StaleReadError):
        agent.write("/src/a.py", b"new")
    with pytest.raises(agentfs.StaleReadError):
        agent.truncate("/src/pkg/b.py", 0)
    agent.write("/docs/a.md", b"new")
    agent.write("/notes.txt", b"new")
    agent.read_before_write = ["/src/**", "*.md"]
    with pytest.raises(agentfs.StaleReadError):
        agent.append("/docs/a.md", b"more")
    agent.append("/notes.txt", b"more")


def test_globs_are_matched_against_the_real_path(agent: agentfs.Workspace) -> None:
    """A write through a symlinked directory is guarded by the glob of the real path, and a
    read through either route satisfies it."""
    agent.write("/src/a.py", b"old", parents=True)
    agent.symlink("/src", "/s")
    agent.read_before_write = "/src/**"
    with pytest.raises(agentfs.StaleReadError) as caught:
        agent.write("/s/a.py", b"new")
    assert caught.value.filename == "/src/a.py"
    agent.read("/s/a.py")
    agent.write("/src/a.py", b"new")
    agent.write("/s/a.py", b"newer")
    assert agent.read("/src/a.py") == b"newer"


def test_the_policy_needs_a_thread(ws: agentfs.Workspace, ws_path: Path) -> None:
    """Without a thread there is no read to check: every guarded change of an existing file is
    refused with a message saying a thread is needed; creating files still works."""
    ws.write("/f", b"x")
    ws.read("/f")
    ws.read_before_write = True
    before = all_rows(ws_path)
    for change in CHANGES.values():
        with pytest.raises(agentfs.StaleReadError, match="needs a thread on the handle"):
            change(ws, "/f")
    assert all_rows(ws_path) == before
    ws.write("/new", b"n")


def test_a_refused_write_inside_a_transaction_rolls_it_all_back(
    guarded: agentfs.Workspace, ws_path: Path
) -> None:
    """A refusal raised in the middle of a caller's transaction undoes what came before it."""
    guarded.write("/g", b"g")
    before = all_rows(ws_path)
    with pytest.raises(agentfs.StaleReadError), guarded.transaction():
        guarded.write("/created", b"c")
        guarded.read("/g")
        guarded.write("/g", b"changed")
        guarded.write("/f", b"never read")
    assert all_rows(ws_path) == before
    assert not guarded.exists("/created")


# --- versioning off -------------------------------------------------------------------------------


@pytest.fixture
def plain_agent(plain_ws: agentfs.Workspace, ws_path: Path) -> agentfs.Workspace:
    """An agent handle with versioning off and the policy on, /f written."""
    plain_ws.actor, plain_ws.thread = "me", "chat"
    plain_ws.write("/f", ORIGINAL)
    plain_ws.read_before_write = True
    return plain_ws


def test_without_versions_the_policy_still_holds(
    plain_agent: agentfs.Workspace, ws_path: Path
) -> None:
    """keep='none' records no versions, yet the policy works on inode and ctime: unread is
    refused, read allows two writes in a row, a change by another handle is refused with the
    sizes instead of version numbers."""
    with pytest.raises(agentfs.StaleReadError, match="has not read"):
        plain_agent.write("/f", b"blind")
    plain_agent.read("/f")
    plain_agent.write("/f", b"edit one")
    plain_agent.append("/f", b", edit two")
    with agentfs.open(ws_path, actor="bob", thread="other") as other:
        other.pwrite("/f", b"EDIT", 0)
    before = all_rows(ws_path)
    with pytest.raises(agentfs.StaleReadError) as caught:
        plain_agent.truncate("/f", 0)
    assert "read 18 bytes at " in str(caught.value)
    assert "now 18 bytes (changed " in str(caught.value)
    assert all_rows(ws_path) == before
    assert plain_agent.history("/f") == []


def test_without_versions_a_chmod_by_another_handle_does_not_block(
    plain_agent: agentfs.Workspace, ws_path: Path
) -> None:
    """The digest of a whole read still proves a chmod left the content alone."""
    plain_agent.read("/f")
    with agentfs.open(ws_path, thread="other") as other:
        other.chmod("/f", 0o600)
    plain_agent.write("/f", b"mine")


@pytest.mark.parametrize(
    "no_op",
    [
        lambda ws: ws.truncate("/f", len(ORIGINAL)),
        lambda ws: ws.pwrite("/f", ORIGINAL[2:6], 2),
        lambda ws: ws.append("/f", b""),
    ],
    ids=["truncate-same-size", "pwrite-same-bytes", "append-nothing"],
)
def test_a_no_op_change_by_the_thread_itself_does_not_make_its_read_stale(
    plain_agent: agentfs.Workspace, no_op: Callable[[agentfs.Workspace], object]
) -> None:
    """A change that leaves every byte as it was still sets ctime; it must refresh the
    thread's own record, or (with no digest to fall back on: a ranged read of an unversioned
    file) its next write would be refused. The no-op path refreshes it too."""
    plain_agent.read("/f", 0, 4)  # ranged and unversioned: the record has no digest
    assert only_read(plain_agent).hash is None
    ctime = plain_agent.stat("/f").st_ctime_ns
    no_op(plain_agent)
    assert plain_agent.stat("/f").st_ctime_ns != ctime
    plain_agent.write("/f", b"mine")
