"""agentfs.core.paths: how virtual paths are normalised and which ones are refused."""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pytest

import agentfs
from agentfs import transfer
from agentfs.core import paths


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        ("/", "/"),
        ("", "/"),
        (".", "/"),
        ("a", "/a"),
        ("/a/b", "/a/b"),
        ("a/b/", "/a/b"),
        ("//a///b//", "/a/b"),
        ("/a/./b/.", "/a/b"),
        ("/a/b/../c", "/a/c"),
        ("/a/b/../../..", "/"),
        ("/../../etc/passwd", "/etc/passwd"),
        ("../x", "/x"),
        ("/é/日本/😀", "/é/日本/😀"),
        ("/a b/ c ", "/a b/ c "),
        ("/...", "/..."),
    ],
)
def test_normalize_resolves_dots_and_slashes_inside_the_workspace(given: str, normal: str) -> None:
    assert paths.normalize(given) == normal


def test_normalize_accepts_path_like_objects() -> None:
    assert paths.normalize(PurePosixPath("/a/../b")) == "/b"


def test_normalize_refuses_bytes() -> None:
    with pytest.raises(TypeError):
        paths.normalize(b"/a")  # type: ignore[arg-type]


def test_normalize_refuses_nul_with_einval_naming_the_path() -> None:
    with pytest.raises(OSError) as info:
        paths.normalize("/a\0b")
    assert info.value.errno == errno.EINVAL
    assert info.value.filename == "/a\\0b"


def test_name_of_255_bytes_is_accepted_and_256_refused() -> None:
    assert paths.normalize("/" + "n" * 255) == "/" + "n" * 255
    with pytest.raises(OSError) as info:
        paths.normalize("/d/" + "n" * 256)
    assert info.value.errno == errno.ENAMETOOLONG


def test_name_length_counts_utf8_bytes_not_characters() -> None:
    assert paths.check_name("é" * 127) == "é" * 127  # 254 bytes
    with pytest.raises(OSError) as info:
        paths.check_name("é" * 128)  # 256 bytes
    assert info.value.errno == errno.ENAMETOOLONG


def test_a_whole_path_may_be_deeper_than_the_kernels_path_max() -> None:
    """The kernel bounds one path argument (4,095 bytes), not a tree: the core takes a whole
    path up to TREE_PATH_MAX - 1 bytes."""
    steps, rest = divmod(paths.TREE_PATH_MAX - 1, 201)
    longest = "/" + "/".join(["d" * 200] * (steps - 1)) + "/" + "x" * (200 + rest)
    assert len(longest.encode()) == paths.TREE_PATH_MAX - 1
    assert paths.normalize(longest) == longest
    with pytest.raises(OSError) as info:
        paths.normalize(longest + "x")
    assert info.value.errno == errno.ENAMETOOLONG


def test_unencodable_text_is_refused_with_eilseq() -> None:
    with pytest.raises(OSError) as info:
        paths.normalize("/bad\udcff")
    assert info.value.errno == errno.EILSEQ


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a\0b"])
def test_check_name_refuses_what_cannot_be_a_dentry(name: str) -> None:
    with pytest.raises(OSError) as info:
        paths.check_name(name)
    assert info.value.errno == errno.EINVAL


def test_split_gives_components_and_none_for_root() -> None:
    assert paths.split("/") == []
    assert paths.split("/a/b/c") == ["a", "b", "c"]


def test_parent_and_name_splits_off_the_last_component() -> None:
    assert paths.parent_and_name("/a") == ("/", "a")
    assert paths.parent_and_name("/a/b/c") == ("/a/b", "c")


def test_root_has_no_parent() -> None:
    with pytest.raises(OSError) as info:
        paths.parent_and_name("/")
    assert info.value.errno == errno.EINVAL


def test_join_adds_one_separator() -> None:
    assert paths.join("/", "a") == "/a"
    assert paths.join("/a", "b") == "/a/b"


@pytest.mark.parametrize(
    ("path", "ancestor", "within"),
    [
        ("/a", "/", True),
        ("/", "/", True),
        ("/a", "/a", True),
        ("/a/b", "/a", True),
        ("/ab", "/a", False),
        ("/a", "/a/b", False),
        ("/b/a", "/a", False),
    ],
)
def test_is_within_compares_whole_components(path: str, ancestor: str, within: bool) -> None:
    assert paths.is_within(path, ancestor) is within


# --- a trailing slash asks for a directory, as in the kernel -------------------------------------


def _host_open(flags: int) -> Callable[[str], None]:
    """os.open, not pathlib: pathlib drops a trailing slash before the kernel sees it."""
    return lambda path: os.close(os.open(path, flags, 0o644))


HOST_CALLS: dict[str, Callable[[str], object]] = {
    "stat": os.stat,
    "lstat": os.lstat,
    "read": _host_open(os.O_RDONLY),
    "remove": os.unlink,
    "write": _host_open(os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
}


@pytest.mark.parametrize(
    ("call", "path", "error"),
    [
        ("stat", "/file/", errno.ENOTDIR),
        ("lstat", "/file/", errno.ENOTDIR),
        ("stat", "/to-file/", errno.ENOTDIR),
        ("read", "/file/", errno.ENOTDIR),
        ("remove", "/file/", errno.ENOTDIR),
        ("write", "/file/", errno.EISDIR),
        ("write", "/new/", errno.EISDIR),
        ("write", "/missing/new/", errno.ENOENT),
    ],
)
def test_trailing_slash_requires_a_directory_like_the_host(
    ws: agentfs.Workspace, tmp_path: Path, call: str, path: str, error: int
) -> None:
    ws.write("/file", b"x")
    ws.mkdir("/dir")
    ws.symlink("file", "/to-file")
    (tmp_path / "file").write_bytes(b"x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "to-file").symlink_to("file")
    with pytest.raises(OSError) as on_host:
        HOST_CALLS[call](str(tmp_path) + path)
    with pytest.raises(OSError) as on_ws:
        getattr(ws, call)(*((path, b"y") if call == "write" else (path,)))
    assert (on_ws.value.errno, on_host.value.errno) == (error, error)


def test_trailing_slash_on_a_directory_or_a_link_to_one_works(ws: agentfs.Workspace) -> None:
    ws.mkdir("/dir")
    ws.symlink("dir", "/to-dir")
    assert ws.stat("/dir/").is_dir()
    assert ws.lstat("/to-dir/").is_dir()  # the slash follows the link, as lstat(2) does
    assert ws.listdir("/to-dir/") == []
    ws.remove("/dir/")
    assert not ws.exists("/dir")


def test_a_tree_deeper_than_path_max_works_through_the_api(
    ws: agentfs.Workspace, tmp_path: Path
) -> None:
    deep = "/" + "/".join(["d" * 200] * 30)  # 6,030 bytes
    ws.write(f"{deep}/f.txt", b"deep", parents=True)
    assert any(top.endswith("d" * 200) and "f.txt" in files for top, _, files in ws.walk("/"))
    assert [v.n for v in ws.history(f"{deep}/f.txt")] == [1]
    ws.rename("/" + "d" * 200, "/top")
    moved = "/top" + deep[201:] + "/f.txt"
    assert ws.read(moved) == b"deep"
    transfer.export_tree(ws, "/", tmp_path / "out")
    assert (tmp_path / "out" / "top").is_dir()


@pytest.mark.parametrize(
    ("path", "climbs"),
    [
        ("..", True),
        ("/..", True),
        ("a/../..", True),
        ("a/./../../b", True),
        ("a/..", False),
        ("/a/b/../../c", False),
        ("./a//b/..", False),
        ("a..b/..", False),
    ],
)
def test_climbs_above_root_says_where_normalize_would_stop(path: str, climbs: bool) -> None:
    assert paths.climbs_above_root(path) is climbs
    if not climbs:  # where nothing climbs, normalize's answer is the plain one
        assert paths.normalize("/" + path) == posixpath.normpath("/" + path).replace("//", "/")
