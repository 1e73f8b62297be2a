"""The namespace: directories, removal, rename, hard and symbolic links, metadata, walking, copy."""

from __future__ import annotations

import errno
import stat
import time

import pytest

import agentfs
from agentfs.core.fs import Attrs


def tree(ws: agentfs.Workspace, top: str = "/") -> dict[str, str]:
    """Every path below ``top`` mapped to its type (and a file's bytes, a link's target)."""
    out = {}
    for dirpath, dirnames, filenames in ws.walk(top):
        for name in dirnames:
            out[f"{dirpath.rstrip('/')}/{name}"] = "dir"
        for name in filenames:
            path = f"{dirpath.rstrip('/')}/{name}"
            st = ws.lstat(path)
            out[path] = f"-> {ws.readlink(path)}" if st.is_symlink() else ws.read(path).decode()
    return out


# --- directories ---------------------------------------------------------------------------------


def test_new_workspace_root_is_an_empty_directory(ws: agentfs.Workspace) -> None:
    root = ws.stat("/")
    assert (root.is_dir(), root.st_nlink, root.st_ino) == (True, 2, 1)
    assert ws.listdir("/") == []


def test_mkdir_creates_an_empty_directory_with_the_mode(ws: agentfs.Workspace) -> None:
    st = ws.mkdir("/d", 0o700)
    assert st == ws.stat("/d")
    assert (stat.S_ISDIR(st.st_mode), st.st_mode & 0o7777, st.st_nlink) == (True, 0o700, 2)
    assert ws.listdir("/d") == []


def test_mkdir_parents_creates_missing_ancestors(ws: agentfs.Workspace) -> None:
    ws.mkdir("/a/b/c", parents=True)
    assert tree(ws) == {"/a": "dir", "/a/b": "dir", "/a/b/c": "dir"}


def test_mkdir_parents_or_exist_ok_accepts_an_existing_directory(ws: agentfs.Workspace) -> None:
    first = ws.mkdir("/d")
    assert ws.mkdir("/d", exist_ok=True) == first
    assert ws.mkdir("/d", parents=True) == first
    assert ws.mkdir("/", exist_ok=True).st_ino == 1


def test_mkdir_exist_ok_still_refuses_an_existing_file(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    with pytest.raises(FileExistsError):
        ws.mkdir("/f", exist_ok=True)


def test_directory_nlink_is_two_plus_subdirectories(ws: agentfs.Workspace) -> None:
    ws.mkdir("/d")
    ws.mkdir("/d/x")
    ws.mkdir("/d/y")
    ws.write("/d/file", b"")  # files do not count
    ws.symlink("x", "/d/link")  # nor do symlinks to directories
    assert [ws.stat(p).st_nlink for p in ("/", "/d", "/d/x")] == [3, 4, 2]
    ws.remove("/d/x")
    assert ws.stat("/d").st_nlink == 3
    ws.rename("/d/y", "/y")
    assert (ws.stat("/").st_nlink, ws.stat("/d").st_nlink) == (4, 2)
    ws.remove("/d", recursive=True)
    assert ws.stat("/").st_nlink == 3


def test_replacing_a_directory_by_rename_keeps_parent_nlink_right(ws: agentfs.Workspace) -> None:
    ws.mkdir("/a/src", parents=True)
    ws.mkdir("/b/empty", parents=True)
    ws.mkdir("/c")
    ws.rename("/a/src", "/b/empty")  # across parents, replacing a directory
    assert [ws.stat(p).st_nlink for p in ("/", "/a", "/b")] == [5, 2, 3]
    ws.mkdir("/b/other")
    ws.rename("/b/other", "/b/empty")  # same parent, replacing a directory
    assert ws.stat("/b").st_nlink == 3
    ws.rename("/c", "/b/c")
    assert [ws.stat(p).st_nlink for p in ("/", "/b")] == [4, 4]


def test_creating_and_removing_names_touch_the_parent_mtime(ws: agentfs.Workspace) -> None:
    ws.mkdir("/d")
    for change in (
        lambda: ws.write("/d/f", b""),
        lambda: ws.mkdir("/d/sub"),
        lambda: ws.symlink("f", "/d/l"),
        lambda: ws.link("/d/f", "/d/g"),
        lambda: ws.rename("/d/g", "/d/h"),
        lambda: ws.remove("/d/h"),
    ):
        ws.utime("/d", (0, 0))
        change()
        assert ws.stat("/d").st_mtime_ns > 0


# --- removal -------------------------------------------------------------------------------------


def test_remove_deletes_a_file_and_frees_its_rows(plain_ws: agentfs.Workspace) -> None:
    ws = plain_ws
    ino = ws.write("/f", b"x" * 100_000).st_ino
    ws.remove("/f")
    assert not ws.exists("/f")
    assert ws.conn.execute("SELECT count(*) FROM fs_data WHERE ino = ?", (ino,)).get == 0
    assert ws.conn.execute("SELECT count(*) FROM fs_inode WHERE ino = ?", (ino,)).get == 0


def test_remove_of_a_symlink_keeps_its_target(ws: agentfs.Workspace) -> None:
    ws.mkdir("/d")
    ws.write("/d/f", b"kept")
    ws.symlink("d", "/link")
    ws.remove("/link", recursive=True)
    assert tree(ws) == {"/d": "dir", "/d/f": "kept"}


def test_remove_refuses_a_non_empty_directory_unless_recursive(ws: agentfs.Workspace) -> None:
    ws.write("/d/e/f", b"", parents=True)
    with pytest.raises(OSError) as info:
        ws.remove("/d")
    assert info.value.errno == errno.ENOTEMPTY
    ws.remove("/d", recursive=True)
    assert ws.listdir("/") == []


def test_remove_recursive_keeps_files_hard_linked_from_outside(
    plain_ws: agentfs.Workspace,
) -> None:
    ws = plain_ws
    ws.write("/d/f", b"survivor", parents=True)
    ws.write("/d/g", b"", parents=True)
    ws.link("/d/f", "/outside")
    ws.link("/d/g", "/d/g2")
    ws.remove("/d", recursive=True)
    assert tree(ws) == {"/outside": "survivor"}
    assert ws.stat("/outside").st_nlink == 1
    assert ws.conn.execute("SELECT count(*) FROM fs_inode").get == 2  # root + survivor


def test_remove_of_the_last_hard_link_frees_the_inode(plain_ws: agentfs.Workspace) -> None:
    ws = plain_ws
    ino = ws.write("/a", b"x").st_ino
    ws.link("/a", "/b")
    ws.remove("/a")
    assert ws.stat("/b").st_nlink == 1
    ws.remove("/b")
    ws.orphans.purge()  # unlinked inodes are queued and freed in batches
    assert ws.conn.execute("SELECT count(*) FROM fs_inode WHERE ino = ?", (ino,)).get == 0


# --- rename --------------------------------------------------------------------------------------


def test_rename_moves_a_file_keeping_its_inode(ws: agentfs.Workspace) -> None:
    ino = ws.write("/a", b"data").st_ino
    ws.mkdir("/d")
    ws.rename("/a", "/d/b")
    assert tree(ws) == {"/d": "dir", "/d/b": "data"}
    assert ws.stat("/d/b").st_ino == ino


def test_rename_replaces_existing_file(plain_ws: agentfs.Workspace) -> None:
    ws = plain_ws
    ws.write("/a", b"new")
    old_ino = ws.write("/b", b"old").st_ino
    ws.rename("/a", "/b")
    assert tree(ws) == {"/b": "new"}
    ws.orphans.purge()  # the replaced inode was queued; purging frees it
    assert ws.conn.execute("SELECT count(*) FROM fs_inode WHERE ino = ?", (old_ino,)).get == 0


def test_rename_replaces_an_empty_directory(ws: agentfs.Workspace) -> None:
    ws.write("/src/f", b"x", parents=True)
    ws.mkdir("/dst")
    ws.rename("/src", "/dst")
    assert tree(ws) == {"/dst": "dir", "/dst/f": "x"}


def test_rename_moves_a_whole_tree_and_paths_below_follow(ws: agentfs.Workspace) -> None:
    ws.write("/a/b/c/f", b"deep", parents=True)
    ws.read("/a/b/c/f")  # resolve (and cache) the old directories first
    ws.rename("/a/b", "/z")
    assert ws.read("/z/c/f") == b"deep"
    assert not ws.exists("/a/b/c/f")
    with pytest.raises(FileNotFoundError):
        ws.write("/a/b/c/g", b"")


def test_rename_over_a_hard_link_of_itself_does_nothing(ws: agentfs.Workspace) -> None:
    ws.write("/a", b"x")
    ws.link("/a", "/b")
    ws.rename("/a", "/b")
    assert sorted(ws.listdir("/")) == ["a", "b"]
    assert ws.stat("/a").st_nlink == 2


def test_rename_onto_itself_does_nothing(ws: agentfs.Workspace) -> None:
    ws.mkdir("/d")
    ws.rename("/d", "/d")
    assert ws.listdir("/") == ["d"]


def test_rename_of_a_symlink_moves_the_link_not_its_target(ws: agentfs.Workspace) -> None:
    ws.write("/t", b"x")
    ws.symlink("t", "/l")
    ws.rename("/l", "/m")
    assert tree(ws) == {"/t": "x", "/m": "-> t"}


def test_rename_onto_a_symlink_replaces_the_link(ws: agentfs.Workspace) -> None:
    ws.write("/t", b"target")
    ws.symlink("t", "/l")
    ws.write("/f", b"f")
    ws.rename("/f", "/l")
    assert tree(ws) == {"/t": "target", "/l": "f"}


def test_rename_refuses_to_move_a_directory_into_itself_through_a_symlink(
    ws: agentfs.Workspace,
) -> None:
    ws.mkdir("/a")
    ws.symlink("a", "/s")
    with pytest.raises(OSError) as info:
        ws.rename("/a", "/s/inside")
    assert info.value.errno == errno.EINVAL
    assert tree(ws) == {"/a": "dir", "/s": "-> a"}


# --- hard links ----------------------------------------------------------------------------------


def test_link_gives_a_file_a_second_name_and_counts_it(ws: agentfs.Workspace) -> None:
    st = ws.write("/a", b"x")
    linked = ws.link("/a", "/b")
    assert (linked.st_ino, linked.st_nlink) == (st.st_ino, 2)
    assert ws.stat("/a") == ws.stat("/b")


def test_link_to_a_symlink_links_the_symlink_itself(ws: agentfs.Workspace) -> None:
    ws.write("/t", b"x")
    ws.symlink("t", "/l")
    ws.link("/l", "/l2")
    assert ws.readlink("/l2") == "t"
    assert (ws.lstat("/l").st_nlink, ws.stat("/t").st_nlink) == (2, 1)


# --- symbolic links ------------------------------------------------------------------------------


def test_symlink_stores_the_target_verbatim(ws: agentfs.Workspace) -> None:
    target = "../not/./normalised/é"
    st = ws.symlink(target, "/l")
    assert ws.readlink("/l") == target
    assert (st.is_symlink(), st.st_size, st.st_mode & 0o7777) == (True, len(target.encode()), 0o777)


def test_relative_symlink_target_resolves_against_the_links_directory(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/d/sub/f", b"relative", parents=True)
    ws.symlink("sub/f", "/d/down")
    ws.symlink("../../d/sub/f", "/d/sub/up")
    assert ws.read("/d/down") == b"relative"
    assert ws.read("/d/sub/up") == b"relative"


def test_absolute_symlink_target_resolves_from_the_workspace_root(
    ws: agentfs.Workspace,
) -> None:
    ws.write("/etc/passwd", b"workspace, not host", parents=True)
    ws.mkdir("/deep/er", parents=True)
    ws.symlink("/etc/passwd", "/deep/er/abs")
    ws.symlink("/../../etc", "/deep/escape")
    assert ws.read("/deep/er/abs") == b"workspace, not host"
    assert ws.read("/deep/escape/passwd") == b"workspace, not host"


def test_symlink_to_a_directory_can_be_traversed(ws: agentfs.Workspace) -> None:
    ws.write("/real/f", b"x", parents=True)
    ws.symlink("real", "/alias")
    ws.write("/alias/g", b"y")
    assert ws.listdir("/alias") == ["f", "g"]
    assert ws.stat("/alias").is_dir()
    assert ws.lstat("/alias").is_symlink()
    assert ws.read("/real/g") == b"y"


def test_chained_symlinks_are_followed(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"end")
    ws.symlink("f", "/one")
    ws.symlink("one", "/two")
    ws.symlink("/two", "/three")
    assert ws.read("/three") == b"end"
    assert ws.stat("/three").st_ino == ws.stat("/f").st_ino


def test_forty_symlink_hops_resolve_and_forty_one_loop(ws: agentfs.Workspace) -> None:
    ws.write("/l0", b"end")
    for i in range(1, 42):
        ws.symlink(f"l{i - 1}", f"/l{i}")
    assert ws.read("/l40") == b"end"
    with pytest.raises(OSError) as info:
        ws.read("/l41")
    assert info.value.errno == errno.ELOOP


@pytest.mark.parametrize("op", ["read", "stat", "listdir", "write"])
def test_symlink_cycles_fail_with_eloop(ws: agentfs.Workspace, op: str) -> None:
    ws.symlink("b", "/a")
    ws.symlink("a", "/b")
    ws.symlink("self", "/self")
    call = {
        "read": lambda p: ws.read(p),
        "stat": lambda p: ws.stat(p),
        "listdir": lambda p: ws.listdir(p),
        "write": lambda p: ws.write(p, b""),
    }[op]
    for path in ("/a", "/self"):
        with pytest.raises(OSError) as info:
            call(path)
        assert info.value.errno == errno.ELOOP


def test_lstat_and_readlink_do_not_follow_a_loop(ws: agentfs.Workspace) -> None:
    ws.symlink("self", "/self")
    assert ws.lstat("/self").is_symlink()
    assert ws.readlink("/self") == "self"


def test_dangling_symlink_exists_only_for_lstat(ws: agentfs.Workspace) -> None:
    ws.symlink("nowhere", "/dangling")
    assert not ws.exists("/dangling")
    assert ws.lstat("/dangling").is_symlink()
    with pytest.raises(FileNotFoundError):
        ws.stat("/dangling")


# --- metadata ------------------------------------------------------------------------------------


def test_chmod_changes_permission_bits_and_keeps_the_type(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    ws.mkdir("/d")
    ws.chmod("/f", 0o4751)
    ws.chmod("/d", stat.S_IFREG | 0o700)  # type bits in the argument are ignored
    assert stat.filemode(ws.stat("/f").st_mode) == "-rwsr-x--x"
    assert stat.filemode(ws.stat("/d").st_mode) == "drwx------"


def test_chmod_follows_a_symlink(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    ws.symlink("f", "/l")
    ws.chmod("/l", 0o600)
    assert ws.stat("/f").st_mode & 0o7777 == 0o600
    assert ws.lstat("/l").st_mode & 0o7777 == 0o777


def test_utime_sets_nanosecond_timestamps_exactly(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    ws.utime("/f", (1_234_567_890_123_456_789, 987_654_321_987_654_321))
    st = ws.stat("/f")
    assert (st.st_atime_ns, st.st_mtime_ns) == (1_234_567_890_123_456_789, 987_654_321_987_654_321)


def test_utime_handles_times_before_the_epoch(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    ws.utime("/f", (-1, -1_500_000_001))
    st = ws.stat("/f")
    assert (st.st_atime_ns, st.st_mtime_ns) == (-1, -1_500_000_001)


def test_times_beyond_64_bit_nanoseconds_are_kept_exactly(ws: agentfs.Workspace) -> None:
    """As on tmpfs, any time within 64-bit seconds (SQLite joins seconds and nanoseconds into
    one 64-bit integer only between 1677 and 2262: the rest are read again, exactly)."""
    ws.write("/f", "x")
    ino = ws.stat("/f").st_ino
    for times in ((2**63, -(2**63)), (32_503_680_000 * 10**9 + 7, -11_676_096_000 * 10**9 + 1)):
        ws.utime("/f", times)
        for st in (ws.stat("/f"), ws.lstat("/f"), dict(ws.readdir_plus("/"))["f"]):
            assert (st.st_atime_ns, st.st_mtime_ns) == times
            assert type(st.st_atime_ns) is int and type(st.st_mtime_ns) is int
    before = ws.stat("/f")
    for bad in ((1 << 63) * 10**9, -(1 << 63) * 10**9 - 1):
        with pytest.raises(OSError, match="64-bit seconds") as caught:
            ws.utime("/f", (0, bad))
        assert caught.value.errno == errno.EINVAL
        with pytest.raises(OSError, match="64-bit seconds"):
            ws.set_attrs(ino, Attrs(times=(bad, 0)))
    assert ws.stat("/f") == before


def test_utime_without_times_means_now_and_ctime_follows(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    ws.utime("/f", (5, 5))
    before = time.time_ns()
    ws.utime("/f")
    after = time.time_ns()
    st = ws.stat("/f")
    assert before <= st.st_atime_ns == st.st_mtime_ns <= after
    assert before <= st.st_ctime_ns <= after


def test_utime_can_target_the_symlink_itself(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    ws.symlink("f", "/l")
    ws.utime("/f", (1, 1))
    ws.utime("/l", (7, 7), follow_symlinks=False)
    assert (ws.lstat("/l").st_mtime_ns, ws.stat("/f").st_mtime_ns) == (7, 1)


def test_new_inodes_carry_creation_time_with_nanoseconds(ws: agentfs.Workspace) -> None:
    before = time.time_ns()
    st = ws.write("/f", b"")
    after = time.time_ns()
    assert before <= st.st_atime_ns == st.st_mtime_ns == st.st_ctime_ns <= after


def test_metadata_changes_advance_ctime_only(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    ws.utime("/f", (3, 3))
    ctime = ws.stat("/f").st_ctime_ns
    for change in (lambda: ws.chmod("/f", 0o600), lambda: ws.link("/f", "/g")):
        change()
        st = ws.stat("/f")
        assert (st.st_atime_ns, st.st_mtime_ns) == (3, 3)
        assert st.st_ctime_ns >= ctime
        ctime = st.st_ctime_ns


# --- lookups, listings, walks --------------------------------------------------------------------


def test_exists_follows_symlinks_and_never_raises_for_bad_paths(ws: agentfs.Workspace) -> None:
    ws.write("/f", b"")
    ws.symlink("f", "/good")
    ws.symlink("loop", "/loop")
    assert [ws.exists(p) for p in ("/", "/f", "/good", "/nope", "/f/below", "/loop")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_listdir_and_scandir_are_sorted_and_typed(ws: agentfs.Workspace) -> None:
    ws.write("/d/b", b"", parents=True)
    ws.mkdir("/d/a")
    ws.symlink("b", "/d/c")
    ws.write("/d/B", b"")
    assert ws.listdir("/d") == ["B", "a", "b", "c"]
    entries = ws.scandir("/d")
    assert [(e.name, e.type) for e in entries] == [
        ("B", "file"),
        ("a", "dir"),
        ("b", "file"),
        ("c", "symlink"),
    ]
    assert [e.ino for e in entries] == [ws.lstat(f"/d/{e.name}").st_ino for e in entries]


def test_walk_is_top_down_sorted_and_does_not_enter_symlinks(ws: agentfs.Workspace) -> None:
    ws.write("/b/x", b"", parents=True)
    ws.write("/a/y/z", b"", parents=True)
    ws.symlink("a", "/c")
    assert list(ws.walk()) == [
        ("/", ["a", "b"], ["c"]),
        ("/a", ["y"], []),
        ("/a/y", [], ["z"]),
        ("/b", [], ["x"]),
    ]


def test_walk_prunes_directories_removed_from_dirnames(ws: agentfs.Workspace) -> None:
    ws.write("/keep/f", b"", parents=True)
    ws.write("/skip/f", b"", parents=True)
    seen = []
    for dirpath, dirnames, _ in ws.walk():
        seen.append(dirpath)
        dirnames[:] = [d for d in dirnames if d != "skip"]
    assert seen == ["/", "/keep"]


# --- copy ----------------------------------------------------------------------------------------


def test_copy_file_duplicates_bytes_and_mode_into_a_new_inode(ws: agentfs.Workspace) -> None:
    src = ws.write("/a", b"bytes", mode=0o640)
    ws.copy("/a", "/b")
    dst = ws.stat("/b")
    assert ws.read("/b") == b"bytes"
    assert (dst.st_mode & 0o7777, dst.st_ino != src.st_ino) == (0o640, True)


def test_copy_onto_an_existing_file_replaces_its_content(ws: agentfs.Workspace) -> None:
    ws.write("/a", b"new")
    ws.write("/b", b"older and longer")
    ws.copy("/a", "/b")
    assert ws.read("/b") == b"new"


def test_copy_recursive_duplicates_a_tree_with_symlinks(small_ws: agentfs.Workspace) -> None:
    ws = small_ws
    ws.write("/src/big", b"z" * 2000, parents=True)
    ws.write("/src/sub/f", b"f", parents=True)
    ws.symlink("../big", "/src/sub/link")
    ws.chmod("/src/sub", 0o700)
    ws.copy("/src", "/dst", recursive=True)
    copied = {k.replace("/src", "/dst", 1): v for k, v in tree(ws, "/src").items()}
    assert tree(ws, "/dst") == copied
    assert ws.stat("/dst/sub").st_mode & 0o7777 == 0o700
    assert ws.read("/dst/sub/link") == b"z" * 2000


def test_copy_of_a_directory_needs_recursive(ws: agentfs.Workspace) -> None:
    ws.mkdir("/d")
    with pytest.raises(IsADirectoryError):
        ws.copy("/d", "/e")
    assert ws.listdir("/") == ["d"]


def test_copy_refuses_to_copy_a_directory_into_itself(ws: agentfs.Workspace) -> None:
    ws.write("/d/f", b"", parents=True)
    with pytest.raises(OSError) as info:
        ws.copy("/d", "/d/inner", recursive=True)
    assert info.value.errno == errno.EINVAL
    assert tree(ws) == {"/d": "dir", "/d/f": ""}


def test_readdir_plus_gives_each_entry_its_lstat_in_name_order(ws: agentfs.Workspace) -> None:
    ws.write("/d/b.txt", b"bb", parents=True)
    ws.mkdir("/d/a")
    ws.symlink("b.txt", "/d/c")
    ws.link("/d/b.txt", "/d/hard")
    listing = ws.readdir_plus("/d")
    assert [name for name, _ in listing] == ["a", "b.txt", "c", "hard"]
    assert listing == [(name, ws.lstat(f"/d/{name}")) for name, _ in listing]
    assert ws.readdir_plus("/d/a") == []


@pytest.mark.damages_workspace
def test_a_time_another_program_stored_as_text_is_shown_as_it_is(ws: agentfs.Workspace) -> None:
    """Only integers are joined into nanoseconds: a text time (fsck reports it) never reaches
    Python's arithmetic, where ``"abc" * 10**9`` would build a gigabyte string."""
    ino = ws.write("/f", b"x").st_ino
    ws.conn.execute("UPDATE fs_inode SET mtime = 'abc', atime = 1e30 WHERE ino = ?", (ino,))
    ws.drop_caches()
    st = ws.stat("/f")
    assert st.st_ino == ino and type(st.st_ctime_ns) is int
