"""File content: write, read, pwrite, append and truncate, within one chunk and across many.

Most tests use ``small_ws`` (512-byte chunks) so that a few KiB already span several chunks;
``chunk_layout`` checks the storage invariant of agentfs/core/chunks.py after each change: a file of
``size`` bytes has chunks 0..n-1, every one full but the last.
"""

from __future__ import annotations

import errno
import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import agentfs

SMALL_CHUNK = 512  # the chunk size of the small_ws fixture


def chunk_layout(ws: agentfs.Workspace, path: str) -> list[int]:
    """Lengths of the file's fs_data rows in chunk order, after checking the indexes are 0..n-1."""
    ino = ws.lstat(path).st_ino
    rows = list(
        ws.conn.execute(
            "SELECT chunk_index, length(data) FROM fs_data WHERE ino = ? ORDER BY chunk_index",
            (ino,),
        )
    )
    assert [index for index, _ in rows] == list(range(len(rows)))
    return [length for _, length in rows]


def expected_layout(size: int, chunk: int = SMALL_CHUNK) -> list[int]:
    full, rest = divmod(size, chunk)
    return [chunk] * full + ([rest] if rest else [])


def seeded_bytes(n: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)


def test_write_then_read_returns_the_bytes(ws: agentfs.Workspace) -> None:
    ws.write("/a.bin", b"\x00\x01binary\xff")
    assert ws.read("/a.bin") == b"\x00\x01binary\xff"


def test_write_text_is_stored_as_utf8(ws: agentfs.Workspace) -> None:
    ws.write("/note.md", "héllo ✓\n")
    assert ws.read("/note.md") == "héllo ✓\n".encode()
    assert ws.read_text("/note.md") == "héllo ✓\n"


def test_write_returns_the_new_files_stat(ws: agentfs.Workspace) -> None:
    st = ws.write("/f", b"12345", mode=0o600)
    assert st == ws.stat("/f")
    assert (st.is_file(), st.st_size, st.st_mode & 0o7777, st.st_nlink) == (True, 5, 0o600, 1)


def test_write_replaces_existing_content_and_keeps_inode_and_mode(
    plain_ws: agentfs.Workspace,
) -> None:
    ws = plain_ws  # with versioning on, an overwrite copies up to a new inode (test_history)
    before = ws.write("/f", b"a long first version", mode=0o600)
    after = ws.write("/f", b"short", mode=0o755)
    assert ws.read("/f") == b"short"
    assert (after.st_ino, after.st_mode & 0o7777, after.st_size) == (before.st_ino, 0o600, 5)


def test_empty_file_has_size_zero_and_no_chunks(small_ws: agentfs.Workspace) -> None:
    small_ws.write("/empty", b"")
    assert small_ws.read("/empty") == b""
    assert small_ws.stat("/empty").st_size == 0
    assert chunk_layout(small_ws, "/empty") == []


def test_write_without_parents_needs_the_directory(ws: agentfs.Workspace) -> None:
    with pytest.raises(FileNotFoundError):
        ws.write("/missing/f", b"x")


def test_write_with_parents_creates_the_directories(ws: agentfs.Workspace) -> None:
    ws.write("/a/b/c/f.txt", b"deep", parents=True)
    assert ws.read("/a/b/c/f.txt") == b"deep"
    assert [ws.stat(p).is_dir() for p in ("/a", "/a/b", "/a/b/c")] == [True, True, True]


@pytest.mark.parametrize("size", [1, 511, 512, 513, 1024, 5000])
def test_multi_chunk_write_round_trips_with_full_chunks(
    small_ws: agentfs.Workspace, size: int
) -> None:
    data = seeded_bytes(size)
    small_ws.write("/f", data)
    assert small_ws.read("/f") == data
    assert chunk_layout(small_ws, "/f") == expected_layout(size)


def test_replacing_a_large_file_with_a_small_one_drops_extra_chunks(
    small_ws: agentfs.Workspace,
) -> None:
    small_ws.write("/f", seeded_bytes(3000))
    small_ws.write("/f", b"tiny")
    assert small_ws.read("/f") == b"tiny"
    assert chunk_layout(small_ws, "/f") == [4]


@pytest.mark.parametrize(
    ("offset", "length"),
    [(0, 10), (500, 30), (512, 512), (1000, 2000), (1490, 100), (1500, 5), (2000, 1), (0, 0)],
)
def test_read_range_returns_exactly_the_slice(
    small_ws: agentfs.Workspace, offset: int, length: int
) -> None:
    data = seeded_bytes(1500)
    small_ws.write("/f", data)
    assert small_ws.read("/f", offset, length) == data[offset : offset + length]


def test_read_from_offset_without_length_reads_to_the_end(small_ws: agentfs.Workspace) -> None:
    data = seeded_bytes(1300)
    small_ws.write("/f", data)
    assert small_ws.read("/f", 700) == data[700:]


@pytest.mark.parametrize(("offset", "length"), [(-1, None), (0, -1)])
def test_read_refuses_negative_offset_or_length(
    ws: agentfs.Workspace, offset: int, length: int | None
) -> None:
    ws.write("/f", b"abc")
    with pytest.raises(OSError) as info:
        ws.read("/f", offset, length)
    assert info.value.errno == errno.EINVAL


def test_pwrite_overwrites_in_place_and_returns_bytes_written(
    small_ws: agentfs.Workspace,
) -> None:
    data = bytearray(seeded_bytes(2000))
    small_ws.write("/f", bytes(data))
    assert small_ws.pwrite("/f", b"X" * 600, 300) == 600  # spans chunks 0, 1 and 2
    data[300:900] = b"X" * 600
    assert small_ws.read("/f") == bytes(data)
    assert chunk_layout(small_ws, "/f") == expected_layout(2000)


def test_pwrite_past_the_end_leaves_a_hole_that_reads_as_zeros(
    small_ws: agentfs.Workspace,
) -> None:
    small_ws.write("/f", b"head")
    small_ws.pwrite("/f", b"tail", 1800)
    expected = b"head" + bytes(1796) + b"tail"
    assert small_ws.read("/f") == expected
    assert small_ws.stat("/f").st_size == 1804
    assert chunk_layout(small_ws, "/f") == expected_layout(1804)


def test_pwrite_creates_a_sparse_file_that_does_not_exist(small_ws: agentfs.Workspace) -> None:
    small_ws.pwrite("/sparse", b"!", 1024)
    assert small_ws.read("/sparse") == bytes(1024) + b"!"
    assert chunk_layout(small_ws, "/sparse") == [512, 512, 1]


def test_pwrite_of_nothing_changes_nothing(small_ws: agentfs.Workspace) -> None:
    small_ws.write("/f", b"abc")
    assert small_ws.pwrite("/f", b"", 100) == 0
    assert small_ws.read("/f") == b"abc"


def test_pwrite_refuses_a_negative_offset(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"abc")
    with pytest.raises(OSError) as info:
        ws.pwrite("/f", b"x", -1)
    assert info.value.errno == errno.EINVAL
    assert ws.read("/f") == b"abc"


def test_random_pwrites_match_a_bytearray(small_ws: agentfs.Workspace) -> None:
    rng = random.Random(20240611)
    model = bytearray()
    for _ in range(60):
        offset = rng.randrange(0, 3000)
        data = rng.randbytes(rng.randrange(0, 1200))
        small_ws.pwrite("/f", data, offset)
        if data:
            if offset > len(model):
                model.extend(bytes(offset - len(model)))
            model[offset : offset + len(data)] = data
    assert small_ws.read("/f") == bytes(model)
    assert chunk_layout(small_ws, "/f") == expected_layout(len(model))


def test_append_creates_the_file_and_returns_the_new_size(small_ws: agentfs.Workspace) -> None:
    assert small_ws.append("/log", b"one\n") == 4
    assert small_ws.append("/log", "two\n") == 8
    assert small_ws.read("/log") == b"one\ntwo\n"


def test_appends_across_chunk_boundaries_keep_the_layout(small_ws: agentfs.Workspace) -> None:
    pieces = [seeded_bytes(n, seed=n) for n in (100, 412, 1, 700, 511, 2)]
    for piece in pieces:
        small_ws.append("/log", piece)
    assert small_ws.read("/log") == b"".join(pieces)
    assert chunk_layout(small_ws, "/log") == expected_layout(sum(map(len, pieces)))


@pytest.mark.parametrize("new_size", [0, 1, 511, 512, 513, 1000, 1499])
def test_truncate_shrinks_to_a_prefix(small_ws: agentfs.Workspace, new_size: int) -> None:
    data = seeded_bytes(1500)
    small_ws.write("/f", data)
    small_ws.truncate("/f", new_size)
    assert small_ws.read("/f") == data[:new_size]
    assert small_ws.stat("/f").st_size == new_size
    assert chunk_layout(small_ws, "/f") == expected_layout(new_size)


@pytest.mark.parametrize(("old_size", "new_size"), [(0, 10), (100, 512), (100, 1300), (512, 513)])
def test_truncate_grows_with_zeros(
    small_ws: agentfs.Workspace, old_size: int, new_size: int
) -> None:
    data = seeded_bytes(old_size)
    small_ws.write("/f", data)
    small_ws.truncate("/f", new_size)
    assert small_ws.read("/f") == data + bytes(new_size - old_size)
    assert chunk_layout(small_ws, "/f") == expected_layout(new_size)


def test_bytes_cut_by_truncate_do_not_come_back_when_the_file_grows(
    small_ws: agentfs.Workspace,
) -> None:
    small_ws.write("/f", b"\xff" * 1200)
    small_ws.truncate("/f", 300)
    small_ws.truncate("/f", 1200)
    assert small_ws.read("/f") == b"\xff" * 300 + bytes(900)
    small_ws.truncate("/f", 100)
    small_ws.pwrite("/f", b"!", 1000)
    assert small_ws.read("/f") == b"\xff" * 100 + bytes(900) + b"!"


def test_truncate_refuses_a_negative_size(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"abc")
    with pytest.raises(OSError) as info:
        ws.truncate("/f", -1)
    assert info.value.errno == errno.EINVAL


def test_writes_through_a_symlink_reach_the_target(ws: agentfs.Workspace) -> None:
    ws.write("/target", b"old")
    ws.symlink("target", "/link")
    ws.write("/link", b"new")
    ws.append("/link", b"+")
    ws.pwrite("/link", b"N", 0)
    ws.truncate("/link", 3)
    assert ws.read("/target") == b"New"
    assert ws.readlink("/link") == "target"


def test_write_through_a_dangling_symlink_creates_its_target(ws: agentfs.Workspace) -> None:
    ws.mkdir("/d")
    ws.symlink("d/made", "/link")
    ws.write("/link", b"x")
    assert ws.read("/d/made") == b"x"
    assert ws.lstat("/link").is_symlink()


#: What can be at the path ``put`` writes: each set up in the workspace and in a plain
#: directory alike.
AT_PATH = ["nothing", "file", "directory", "link to a file", "link to a directory", "dangling"]


def _make(
    at: str,
    file: Callable[[str], object],
    directory: Callable[[str], object],
    link: Callable[[str, str], object],
) -> None:
    """Put at ``p`` what ``at`` says (``t`` is a link's target)."""
    if at == "file":
        file("p")
    elif at == "directory":
        directory("p")
    elif at == "link to a file":
        file("t")
        link("t", "p")
    elif at == "link to a directory":
        directory("t")
        link("t", "p")
    elif at == "dangling":
        link("t", "p")


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("at", AT_PATH)
def test_put_tells_created_and_refuses_as_open_x_does(
    ws: agentfs.Workspace, tmp_path: Path, at: str, exclusive: bool
) -> None:
    """``put`` against the kernel on a real directory: ``open(p, "x" if exclusive else
    "w")`` creates, replaces or fails with the same errno, and leaves the same tree; created
    is whether ``p`` resolved to nothing before."""
    real = tmp_path / "real"
    real.mkdir()
    _make(
        at,
        lambda name: (real / name).write_bytes(b"old"),
        lambda name: (real / name).mkdir(),
        lambda target, name: os.symlink(target, real / name),
    )
    _make(
        at,
        lambda name: ws.write(f"/{name}", b"old"),
        lambda name: ws.mkdir(f"/{name}"),
        lambda target, name: ws.symlink(target, f"/{name}"),
    )
    existed = os.path.exists(real / "p")
    try:
        with open(real / "p", "xb" if exclusive else "wb") as f:
            f.write(b"new")
        expected_errno = None
    except OSError as exc:
        expected_errno = exc.errno
    try:
        st, created = ws.put("/p", b"new", exclusive=exclusive)
    except OSError as exc:
        assert exc.errno == expected_errno
    else:
        assert expected_errno is None
        assert created is (not existed)
        assert st == ws.stat("/p")
    for name in ("p", "t"):
        if os.path.isfile(real / name):
            assert ws.read(f"/{name}") == (real / name).read_bytes(), name
        else:
            assert ws.exists(f"/{name}") is os.path.exists(real / name), name


def test_hard_links_share_content_changes(ws: agentfs.Workspace) -> None:
    ws.write("/a", b"shared")
    ws.link("/a", "/b")
    ws.append("/b", b"!")
    ws.write("/a", b"replaced")
    assert ws.read("/b") == b"replaced"
    assert ws.stat("/a").st_ino == ws.stat("/b").st_ino


def test_content_changes_advance_mtime_and_ctime(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"x")
    ws.utime("/f", (1_000_000_000, 1_000_000_000))
    before = time.time_ns()
    for change in (
        lambda: ws.write("/f", b"y"),
        lambda: ws.pwrite("/f", b"z", 3),
        lambda: ws.append("/f", b"z"),
        lambda: ws.truncate("/f", 1),
    ):
        ws.utime("/f", (1_000_000_000, 1_000_000_000))
        change()
        st = ws.stat("/f")
        assert st.st_mtime_ns >= before
        assert st.st_ctime_ns >= before


def test_reads_do_not_change_any_timestamp(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"x")
    before = ws.stat("/f")
    ws.read("/f")
    ws.read("/f", 0, 1)
    assert ws.stat("/f") == before


def test_remove_of_one_kind_refuses_the_other(ws: agentfs.Workspace) -> None:
    """``directory=`` is unlink(2) / rmdir(2): the wrong kind is refused and stays."""
    ws.mkdir("/d")
    ws.write("/f", b"x")
    with pytest.raises(IsADirectoryError):
        ws.remove("/d", directory=False)
    with pytest.raises(NotADirectoryError):
        ws.remove("/f", directory=True)
    assert ws.listdir("/d") == [] and ws.read("/f") == b"x"
    ws.remove("/d", directory=True)
    ws.remove("/f", directory=False)
    assert ws.listdir("/") == []


def test_a_removed_directory_is_forgotten_under_every_path_that_led_to_it(
    ws: agentfs.Workspace,
) -> None:
    """A directory cached through a symlink as well as by its own path: once it is removed
    and made again (a new inode), both paths lead to the new one."""
    ws.mkdir("/a/d", parents=True)
    ws.symlink("/a/d", "/l")
    ws.write("/l/f", b"through the link")  # caches /l -> the old /a/d
    ws.remove("/a/d/f")
    ws.remove("/a/d")
    ws.mkdir("/a/d")
    ws.write("/l/g", b"new")
    assert ws.listdir("/a/d") == ["g"] and ws.read("/a/d/g") == b"new"
    ws.mkdir("/a/e/sub", parents=True)
    ws.write("/a/e/sub/f", b"1")  # cached by its own, link-free path only
    ws.remove("/a/e/sub/f")
    ws.remove("/a/e/sub")
    ws.mkdir("/a/e/sub")
    ws.write("/a/e/sub/h", b"2")
    assert ws.listdir("/a/e/sub") == ["h"]
