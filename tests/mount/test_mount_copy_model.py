"""``exec`` in a copy against a reference (hypothesis): a random tree is put both in a
workspace and in a plain directory under /dev/shm, the same random shell script runs in each
(``ws.run(mode="copy")`` and ``sh -c`` in the directory), and the workspace must then hold
the directory's tree: types, bytes, permissions, symlink targets, hard links, the times the
script set, the user. attributes of files and directories; and files the script did not
touch have no new version and keep their inode."""

from __future__ import annotations

import os
import shlex
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs import fsck
from agentfs.transfer import import_tree

NAMES = ("a", "b", "c")
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map("/".join)
TEXT = st.text(alphabet="xyz01", max_size=12)
PAST = st.integers(min_value=1_000_000_000, max_value=1_600_000_000)


@st.composite
def initial_trees(draw: st.DrawFn) -> list[tuple[str, str, str, int]]:
    """(kind, path, content or target, mode) entries, created in order where they fit."""
    kinds = st.sampled_from(["file", "file", "dir", "link", "hard"])
    modes = st.sampled_from([0o644, 0o600, 0o755, 0o444, 0o4755])
    return draw(st.lists(st.tuples(kinds, PATHS, TEXT, modes), max_size=14))


def shell_ops() -> st.SearchStrategy[str]:
    p = PATHS.map(shlex.quote)
    ops = st.one_of(
        st.tuples(TEXT.map(shlex.quote), p).map(lambda a: f"printf %s {a[0]} > {a[1]}"),
        st.tuples(TEXT.map(shlex.quote), p).map(lambda a: f"printf %s {a[0]} >> {a[1]}"),
        # the same size and mtime, other bytes: only ctime tells
        p.map(
            lambda f: (
                f"cp -p {f} .t && printf Q | dd of={f} conv=notrunc 2>/dev/null"
                f" && touch -r .t {f}; rm -f .t"
            )
        ),
        p.map(lambda f: f"rm -f {f}"),
        p.map(lambda f: f"rm -rf {f}"),
        p.map(lambda f: f"rmdir {f}"),
        p.map(lambda f: f"mkdir -p {f}"),
        st.tuples(st.sampled_from(["600", "755", "444", "2755", "700"]), p).map(
            lambda a: f"chmod {a[0]} {a[1]}"
        ),
        st.tuples(p, p).map(lambda a: f"ln -sfn {a[0]} {a[1]}"),
        st.tuples(p, p).map(lambda a: f"ln -f {a[0]} {a[1]}"),
        st.tuples(p, p).map(lambda a: f"printf n > {a[0]} && ln -f {a[0]} {a[1]}"),
        # replaced by a rename, as sed -i and editors do: its other hard links keep the old
        p.map(lambda f: f"cp {f} .n && printf Z >> .n && mv .n {f}"),
        st.tuples(p, p).map(lambda a: f"mv -f {a[0]} {a[1]}"),
        st.tuples(PAST, p).map(lambda a: f"touch -h -d @{a[0]} {a[1]}"),
        st.tuples(st.sampled_from("kl"), TEXT, p).map(
            lambda a: f"setfattr -n user.{a[0]} -v v{a[1]} {a[2]}"
        ),
        st.tuples(st.sampled_from("kl"), p).map(lambda a: f"setfattr -x user.{a[0]} {a[1]}"),
    )  # no mkfifo: a later write to it would wait for a reader (FIFOs have their own test)
    return st.lists(ops, min_size=1, max_size=10).map(
        lambda lines: "".join(f"{line} 2>/dev/null;\n" for line in lines) + "true"
    )


def build(host: Path, entries: list[tuple[str, str, str, int]]) -> None:
    """The initial tree on the host, parents made as needed; entries that do not fit (a
    parent is not a directory, the name is taken) are left out. Every time is in the past."""
    files: list[Path] = []
    for kind, rel, text, mode in entries:
        path = host / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            continue
        if path.is_symlink() or path.exists():
            continue
        if kind == "dir":
            path.mkdir()
            path.chmod(mode | 0o700)
        elif kind == "link":
            path.symlink_to(text or "x")
        elif kind == "hard" and files:
            os.link(files[len(text) % len(files)], path)
        else:
            path.write_text(text)
            path.chmod(mode)
            files.append(path)
    for i, (top, dirs, names) in enumerate(os.walk(host, topdown=False)):
        for name in names + dirs:
            os.utime(Path(top, name), ns=(0, (1_200_000_000 + i) * 10**9), follow_symlinks=False)
    os.utime(host, ns=(0, 1_100_000_000 * 10**9))


def host_tree(host: Path) -> dict[str, os.stat_result]:
    """Every entry below ``host`` by ``lstat``. A directory the script made impassable to a
    normal user (root is not held by modes) is opened up to be walked, after its mode was
    recorded: the reference is read once the script is done, and then thrown away."""
    out = {}
    stack = [host]
    while stack:
        top = stack.pop()
        for name in os.listdir(top):
            path = top / name
            st = out["/" + str(path.relative_to(host))] = path.lstat()
            if stat.S_ISDIR(st.st_mode):
                if not os.access(path, os.R_OK | os.X_OK):
                    path.chmod(st.st_mode | 0o500)
                stack.append(path)
    return out


def user_xattrs(names: list[str], get: Callable[[str], bytes]) -> dict[str, bytes]:
    return {name: get(name) for name in names if name.startswith("user.")}


def assert_same(ws: agentfs.Workspace, host: Path, started_ns: int) -> None:
    ref = host_tree(host)
    mine = {}
    for top, dirs, names in ws.walk("/"):
        for name in dirs + names:
            path = f"{top.rstrip('/')}/{name}"
            mine[path] = ws.lstat(path)
    assert sorted(mine) == sorted(ref)
    groups_ref: dict[int, set[str]] = {}
    groups_ws: dict[int, set[str]] = {}
    for path, want in ref.items():
        got = mine[path]
        assert stat.S_IFMT(got.st_mode) == stat.S_IFMT(want.st_mode), path
        if not stat.S_ISLNK(want.st_mode):
            assert got.st_mode & 0o7777 == want.st_mode & 0o7777, path
            on_host = host / path[1:]
            assert user_xattrs(
                ws.listxattr(path, follow_symlinks=False),
                lambda n: ws.getxattr(path, n, follow_symlinks=False),  # noqa: B023
            ) == user_xattrs(
                os.listxattr(on_host, follow_symlinks=False),
                lambda n: os.getxattr(on_host, n, follow_symlinks=False),  # noqa: B023
            ), path
        if stat.S_ISREG(want.st_mode):
            assert ws.read(path) == (host / path[1:]).read_bytes(), path
            groups_ref.setdefault(want.st_ino, set()).add(path)
            groups_ws.setdefault(got.st_ino, set()).add(path)
        if stat.S_ISLNK(want.st_mode):
            assert ws.readlink(path) == os.readlink(host / path[1:]), path
        if want.st_mtime_ns < started_ns:  # a time the tree or the script set, not "now"
            assert got.st_mtime_ns == want.st_mtime_ns, path
    assert sorted(map(sorted, groups_ws.values())) == sorted(map(sorted, groups_ref.values()))


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(entries=initial_trees(), script=shell_ops())
def test_copy_exec_matches_the_same_script_on_a_directory(
    entries: list[tuple[str, str, str, int]], script: str
) -> None:
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        host = Path(tmp, "ref")
        host.mkdir()
        build(host, entries)
        with agentfs.open(Path(tmp, "ws.db")) as ws:
            import_tree(ws, host)
            ws.utime("/", (0, 1_100_000_000 * 10**9))
            before = host_tree(host)
            untouched_versions = {
                p: len(ws.history(p)) for p in before if stat.S_ISREG(before[p].st_mode)
            }
            inodes = {p: ws.lstat(p).st_ino for p in untouched_versions}
            started_ns = time.time_ns() - 10**9
            result = ws.run(script, mode="copy")
            done = os.system(f"cd {shlex.quote(str(host))} && sh -c {shlex.quote(script)}")
            assert (result.exit_code, done, result.skipped, result.conflicts) == (0, 0, (), ())
            assert_same(ws, host, started_ns)
            after = host_tree(host)
            for path, old in before.items():
                new = after.get(path)
                if (
                    stat.S_ISREG(old.st_mode)
                    and new is not None
                    and new.st_ctime_ns == old.st_ctime_ns
                ):
                    assert len(ws.history(path)) == untouched_versions[path], path
                    assert ws.lstat(path).st_ino == inodes[path], path
            report = fsck.check(ws)
            assert report.clean, report.problems
