"""``Workspace.glob``: names matched over the directory tables, against the host's own glob.

The reference is Python's ``glob.glob(..., recursive=True, include_hidden=True)`` on the same
tree exported to a host directory: for patterns without braces (which it does not know) the two
must list exactly the same files.
"""

from __future__ import annotations

import contextlib
import glob as hostglob
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.transfer import export_tree


def paths_of(ws: agentfs.Workspace, pattern: str, path: str = "/", **kw: object) -> list[str]:
    return [m.path for m in ws.glob(pattern, path, **kw)]  # type: ignore[arg-type]


@pytest.fixture
def tree(ws: agentfs.Workspace) -> agentfs.Workspace:
    for p in ["/src/a.py", "/src/b.txt", "/src/pkg/c.py", "/src/pkg/deep/d.py", "/docs/x.md"]:
        ws.write(p, p.encode(), parents=True)
        time.sleep(0.002)  # distinct mtimes, oldest first
    ws.write("/README.md", b"r")
    ws.symlink("../src", "/docs/src-link")
    return ws


def test_relative_patterns_are_relative_to_path(tree: agentfs.Workspace) -> None:
    """``*.py`` is one level below ``path``; ``**/*.py`` any depth below it."""
    assert paths_of(tree, "*.py", "/src", sort="name") == ["/src/a.py"]
    assert paths_of(tree, "**/*.py", "/src", sort="name") == [
        "/src/a.py",
        "/src/pkg/c.py",
        "/src/pkg/deep/d.py",
    ]
    assert paths_of(tree, "**/*.py", sort="name") == paths_of(tree, "/src/**/*.py", sort="name")


def test_results_are_newest_first_or_by_name(tree: agentfs.Workspace) -> None:
    assert paths_of(tree, "**/*.py") == ["/src/pkg/deep/d.py", "/src/pkg/c.py", "/src/a.py"]
    tree.utime("/src/a.py")  # now the newest
    assert paths_of(tree, "**/*.py")[0] == "/src/a.py"


def test_braces_classes_and_question_marks(tree: agentfs.Workspace) -> None:
    assert paths_of(tree, "**/*.{md,txt}", sort="name") == [
        "/README.md",
        "/docs/x.md",
        "/src/b.txt",
    ]
    assert paths_of(tree, "/src/[ab].*", sort="name") == ["/src/a.py", "/src/b.txt"]
    assert paths_of(tree, "/src/?.py") == ["/src/a.py"]


def test_symlinks_are_listed_but_never_followed_by_the_walk(tree: agentfs.Workspace) -> None:
    """A walk never descends through a symlink (so it always ends); a symlink the pattern
    names literally as its starting directory is followed, as a shell does."""
    assert paths_of(tree, "**/*", "/docs", sort="name") == ["/docs/src-link", "/docs/x.md"]
    assert paths_of(tree, "/docs/src-link/*", sort="name") == [
        "/docs/src-link/a.py",
        "/docs/src-link/b.txt",
    ]


def test_directories_only_when_asked(tree: agentfs.Workspace) -> None:
    assert paths_of(tree, "/src/*", sort="name") == ["/src/a.py", "/src/b.txt"]
    assert paths_of(tree, "/src/*", sort="name", include_dirs=True) == [
        "/src/a.py",
        "/src/b.txt",
        "/src/pkg",
    ]


def test_deleted_and_renamed_files_are_never_returned(tree: agentfs.Workspace) -> None:
    tree.remove("/src/pkg", recursive=True)
    tree.rename("/src/a.py", "/src/z.py")
    assert paths_of(tree, "**/*.py", sort="name") == ["/src/z.py"]


def test_a_pattern_outside_path_or_a_missing_path_finds_nothing(tree: agentfs.Workspace) -> None:
    assert paths_of(tree, "/docs/*", "/src") == []
    assert paths_of(tree, "*", "/no/such/dir") == []
    assert paths_of(tree, "*", "/README.md") == []


@pytest.mark.parametrize("bad", ["", "a\0b"])
def test_bad_patterns_are_refused(tree: agentfs.Workspace, bad: str) -> None:
    with pytest.raises(OSError) as exc:
        tree.glob(bad)
    assert exc.value.errno == 22


def test_bad_sort_is_refused(tree: agentfs.Workspace) -> None:
    with pytest.raises(OSError):
        tree.glob("*", sort="size")  # type: ignore[arg-type]


# --- against the host's glob --------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "ab", "a.py", "b.py", ".h", "c.txt", "x"])
COMPONENT = st.sampled_from(["*", "?", "a*", "*.py", "[ab]", "[!a]*", "a", "b.py", "**", ".*"])


@st.composite
def trees_and_patterns(draw: st.DrawFn) -> tuple[list[str], str]:
    files = draw(
        st.lists(
            st.lists(NAMES, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts)),
            min_size=1,
            max_size=12,
        )
    )
    pattern = "/".join(draw(st.lists(COMPONENT, min_size=1, max_size=4)))
    return files, pattern


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=trees_and_patterns())
def test_glob_lists_what_the_host_glob_lists(tmp_path: Path, case: tuple[list[str], str]) -> None:
    files, pattern = case
    root = tmp_path / f"t{time.monotonic_ns()}"
    with agentfs.open(root.with_suffix(".db")) as ws:
        for f in files:
            with contextlib.suppress(OSError):  # a name taken by a directory (or a file)
                ws.write(f, b"x", parents=True)
        export_tree(ws, "/", root)
        ours = sorted(paths_of(ws, pattern, sort="name"))
    theirs = sorted(  # a set: Python's glob lists a file twice for '**/**'
        {
            "/" + p
            for p in hostglob.glob(pattern, root_dir=root, recursive=True, include_hidden=True)
            # a trailing '**' also yields 'a/a/' for a file a/a (CPython's glob does not
            # check the '' it adds is a directory): a path ending in '/' names no file
            if (root / p).is_file() and not p.endswith("/")
        }
    )
    assert ours == theirs, pattern
