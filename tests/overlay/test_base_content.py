"""A file of the base comes in as its name and its stat; its bytes come the first time they are
read or changed (``agentfs.core.base``): listing a tree of large files copies none of them, and
whatever reads or changes a file sees the host's bytes, never a hole."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.fsck import check, repair
from agentfs.overlay import apply, changes
from agentfs.transfer import export_agentfs

BIG = 3 * 1024 * 1024 + 17  # several chunks and more than one read block of a chunk


def chunk_rows(ws: agentfs.Workspace, path: str) -> int:
    ino = ws.stat(path).st_ino
    return int(ws.conn.execute("SELECT count(*) FROM fs_data WHERE ino = ?", (ino,)).get)  # type: ignore[arg-type]


def unread(ws: agentfs.Workspace) -> list[str]:
    rows = ws.conn.execute(
        "SELECT path FROM ws_origin WHERE present = 0 AND mode & 61440 = 32768 ORDER BY path"
    )
    return [str(path) for (path,) in rows]


@pytest.fixture
def host(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "big.bin").write_bytes(os.urandom(BIG))
    (root / "data" / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "main.py").write_text("def main():\n    return 'needle'\n")
    os.link(root / "main.py", root / "main-link.py")
    return root


def test_listing_reads_no_bytes(ws: agentfs.Workspace, host: Path) -> None:
    assert ws.listdir("/data") == ["big.bin", "notes.txt"]
    assert ws.stat("/data/big.bin").st_size == BIG  # the host's size, before any byte
    assert chunk_rows(ws, "/data/big.bin") == 0
    assert unread(ws) == ["data/big.bin", "data/notes.txt", "main-link.py", "main.py"]
    assert os.path.getsize(ws.conn.filename) < BIG // 4


def test_the_first_read_brings_the_bytes_in(ws: agentfs.Workspace, host: Path) -> None:
    expected = (host / "data" / "big.bin").read_bytes()
    assert ws.read("/data/big.bin", 1_000_000, 10) == expected[1_000_000:1_000_010]
    assert chunk_rows(ws, "/data/big.bin") > 1 and "data/big.bin" not in unread(ws)
    (host / "data" / "big.bin").unlink()  # from now on the workspace holds them
    assert ws.read("/data/big.bin") == expected
    digest = ws.conn.execute("SELECT hash FROM ws_origin WHERE path = 'data/big.bin'").get
    assert digest == hashlib.sha256(expected).digest()
    assert check(ws).clean


def test_a_change_starts_from_the_hosts_bytes(ws: agentfs.Workspace, host: Path) -> None:
    ws.pwrite("/data/notes.txt", b"BETA", 6)
    assert ws.read("/data/notes.txt") == b"alpha\nBETA\ngamma\n"
    ws.append("/main.py", "# end\n")
    assert ws.read("/main.py") == b"def main():\n    return 'needle'\n# end\n"
    assert ws.read("/main-link.py") == ws.read("/main.py")  # one inode, two names
    ws.truncate("/data/big.bin", 5)
    assert ws.read("/data/big.bin") == (host / "data" / "big.bin").read_bytes()[:5]
    first = ws.history("/data/notes.txt")[0]
    assert ws.read_version("/data/notes.txt", first.n) == b"alpha\nbeta\ngamma\n"
    assert (host / "data" / "notes.txt").read_text() == "alpha\nbeta\ngamma\n"  # untouched


def test_a_handle_writes_into_the_hosts_bytes(ws: agentfs.Workspace) -> None:
    with ws.open("/data/notes.txt", "r+b") as f:
        f.seek(0)
        f.write(b"ALPHA")
    assert ws.read("/data/notes.txt") == b"ALPHA\nbeta\ngamma\n"


def test_a_host_file_changed_before_its_first_read(ws: agentfs.Workspace, host: Path) -> None:
    """Nothing in the workspace saw its bytes yet: they are the host's as they are now, with
    the new size and time, and what is recorded as seen describes them."""
    ws.listdir("/data")
    (host / "data" / "notes.txt").write_text("rewritten by the user, longer than before\n")
    os.utime(host / "data" / "notes.txt", ns=(1, 1_700_000_000_000_000_000))
    assert ws.read("/data/notes.txt") == b"rewritten by the user, longer than before\n"
    st = ws.stat("/data/notes.txt")
    assert st.st_size == 42 and st.st_mtime_ns == 1_700_000_000_000_000_000
    assert changes(ws) == []  # the workspace changed nothing
    assert apply(ws).written == []


def test_a_host_file_gone_before_its_first_read(ws: agentfs.Workspace, host: Path) -> None:
    ws.listdir("/data")
    (host / "data" / "notes.txt").unlink()
    with pytest.raises(OSError) as gone:
        ws.read("/data/notes.txt")
    assert gone.value.errno == errno.EIO and "notes.txt" in str(gone.value)
    assert chunk_rows(ws, "/data/notes.txt") == 0 and "data/notes.txt" in unread(ws)
    with pytest.raises(OSError):
        ws.write("/data/notes.txt", "x")  # a change must start from bytes that are nowhere
    ws.remove("/data/notes.txt")  # but it can go
    assert [(c.kind, c.path) for c in changes(ws)] == [("deleted", "/data/notes.txt")]
    assert check(ws).clean


def test_a_symlink_put_in_place_of_a_host_file_is_not_followed(
    ws: agentfs.Workspace, host: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("not the project's")
    ws.listdir("/data")
    (host / "data" / "notes.txt").unlink()
    (host / "data" / "notes.txt").symlink_to(secret)
    with pytest.raises(OSError) as refused:
        ws.read("/data/notes.txt")
    assert refused.value.errno == errno.EIO
    fifo = host / "data" / "big.bin"
    fifo.unlink()
    os.mkfifo(fifo)  # would block a plain open
    with pytest.raises(OSError):
        ws.read("/data/big.bin")


def test_a_host_directory_swapped_for_a_symlink_leads_nowhere(
    ws: agentfs.Workspace, host: Path, tmp_path: Path
) -> None:
    """Whoever can change the host directory cannot make the workspace read outside it: a
    directory listed (or still to be) and then replaced by a symlink is never followed."""
    outside = tmp_path / "outside"
    (outside / "data").mkdir(parents=True)
    (outside / "notes.txt").write_text("outside the base\n")
    (outside / "data" / "big.bin").write_text("outside too\n")
    (host / "later").mkdir()
    ws.listdir("/data")  # /data's names are in, its bytes are not; /later's names are not
    (host / "data").rename(tmp_path / "moved")
    (host / "data").symlink_to(outside)
    with pytest.raises(OSError) as refused:
        ws.read("/data/notes.txt")
    assert refused.value.errno == errno.EIO
    (host / "later").rmdir()
    (host / "later").symlink_to(outside)
    assert ws.listdir("/later") == []  # nothing from outside came in


def test_the_workspaces_limits_hold_for_the_hosts_bytes(ws: agentfs.Workspace) -> None:
    ws.set_limits(file_size=1 << 20)
    ws.listdir("/data")
    with pytest.raises(OSError) as too_large:
        ws.read("/data/big.bin")
    assert too_large.value.errno == errno.EFBIG
    assert chunk_rows(ws, "/data/big.bin") == 0 and "data/big.bin" in unread(ws)
    assert ws.read("/data/notes.txt") == b"alpha\nbeta\ngamma\n"
    ws.set_limits(file_size=1 << 30, workspace_size=os.path.getsize(ws.conn.filename) + 4096)
    with pytest.raises(OSError) as full:
        ws.read("/data/big.bin")
    assert full.value.errno == errno.ENOSPC and chunk_rows(ws, "/data/big.bin") == 0


def test_a_read_only_handle_asks_for_a_writable_one(tmp_path: Path, ws: agentfs.Workspace) -> None:
    ws.listdir("/data")
    ws.read("/data/notes.txt")
    ws.close()
    with agentfs.open(tmp_path / "ws.db", readonly=True) as reader:
        assert reader.read("/data/notes.txt") == b"alpha\nbeta\ngamma\n"
        with pytest.raises(OSError) as refused:
            reader.read("/data/big.bin")
        assert refused.value.errno == errno.EROFS and "open it writable" in str(refused.value)


def test_a_snapshot_keeps_the_hosts_bytes(ws: agentfs.Workspace, host: Path) -> None:
    before = (host / "data" / "notes.txt").read_bytes()
    snap = ws.snapshots.create(thread="t")
    ws.listdir("/data")
    ws.write("/data/notes.txt", "changed\n")
    ws.remove("/data/big.bin")  # never read: its bytes come in as it goes, for the snapshot
    (host / "data" / "big.bin").write_bytes(b"the user's new content")
    ws.snapshots.restore(snap.name)
    assert ws.read("/data/notes.txt") == before
    assert len(ws.read("/data/big.bin")) == BIG


def test_search_reads_nothing_and_says_so_index_reads_everything(ws: agentfs.Workspace) -> None:
    found = ws.search("needle", mode="bm25")
    assert found.hits == [] and found.note is not None and "agentfs index" in found.note
    assert "main.py" in unread(ws)
    assert ws.index_status().unread == 3  # files: main.py and main-link.py are one
    status = ws.index()
    assert status.unread == 0 and unread(ws) == []
    assert [hit.path for hit in ws.search("needle", mode="bm25").hits][:1] in (
        ["/main.py"],
        ["/main-link.py"],
    )


def test_grep_reads_what_it_searches(ws: agentfs.Workspace) -> None:
    found = ws.grep("needle", "/")
    assert sorted(hit.path for hit in found.lines if hit.is_match) == [
        "/main-link.py",
        "/main.py",
    ]
    assert unread(ws) == []


def test_export_reads_everything_first(ws: agentfs.Workspace, host: Path, tmp_path: Path) -> None:
    ws.listdir("/data")
    export_agentfs(ws, tmp_path / "plain.db")
    with agentfs.open(tmp_path / "plain.db") as plain:
        assert plain.base is None
        assert plain.read("/data/big.bin") == (host / "data" / "big.bin").read_bytes()
        assert plain.read("/main.py") == (host / "main.py").read_bytes()


def test_fsck_repair_leaves_unread_files_whole(ws: agentfs.Workspace, host: Path) -> None:
    ws.listdir("/data")
    report = repair(ws)
    assert report.clean and report.repaired == []
    assert ws.read("/data/big.bin") == (host / "data" / "big.bin").read_bytes()


OPS = st.lists(
    st.tuples(
        st.sampled_from(["read", "pread", "pwrite", "append", "truncate", "remove", "chmod"]),
        st.sampled_from(["data/notes.txt", "data/big.bin", "main.py", "main-link.py"]),
        st.integers(0, BIG + 10),
        st.binary(max_size=64),
    ),
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_against_a_copy_of_the_host(tmp_path: Path, host: Path, ops: list) -> None:
    """Every operation reads and writes the same bytes as on a plain copy of the host tree,
    whatever was already read in, and the host stays as it was."""
    before = {p: (host / p).read_bytes() for p in ("data/notes.txt", "data/big.bin", "main.py")}
    reference = {**before, "main-link.py": before["main.py"]}
    linked = {"main.py": "main-link.py", "main-link.py": "main.py"}
    db = tmp_path / f"ws-{os.urandom(4).hex()}.db"
    with agentfs.open(db, base=host) as ws:
        for op, name, at, data in ops:
            if name not in reference:
                continue
            path = "/" + name
            mine = reference[name]
            if op == "read":
                assert ws.read(path) == mine
            elif op == "pread":
                assert ws.read(path, at, 100) == mine[at : at + 100]
            elif op == "pwrite":
                at = min(at, len(mine) + 3)
                ws.pwrite(path, data, at)
                if data:  # writing nothing changes nothing, past the end too
                    mine = mine[:at].ljust(at, b"\0") + data + mine[at + len(data) :]
            elif op == "append":
                ws.append(path, data)
                mine = mine + data
            elif op == "truncate":
                ws.truncate(path, at % (len(mine) + 5))
                mine = mine[: at % (len(mine) + 5)].ljust(at % (len(mine) + 5), b"\0")
            elif op == "remove":
                ws.remove(path)
                del reference[name]
                continue
            elif op == "chmod":
                ws.chmod(path, 0o600)
            reference[name] = mine
            if name in linked and linked[name] in reference:
                reference[linked[name]] = mine
        for name, data in reference.items():
            assert ws.read("/" + name) == data
    assert {p: (host / p).read_bytes() for p in before} == before
