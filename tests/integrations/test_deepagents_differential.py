"""``AgentFSBackend`` against deepagents' own ``FilesystemBackend(root, virtual_mode=True)`` on a
temporary directory: the same operations, in the same order, give the same results (errors,
pagination, grep and glob hits, overwrites) and leave the same files.

What legitimately differs is normalised before comparing, and nothing else: the real root's
path in the reference's messages, the system error's wording after a failed change's own
message, modification times (checked for form), the order of grep hits (ripgrep's threads
make it arbitrary; ours is sorted) and, for a capped grep, which hits are kept.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from deepagents.backends.filesystem import FilesystemBackend
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.integrations.deepagents import AgentFSBackend
from tests.trees import host_tree, workspace_tree

pytestmark = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is deepagents' grep")

NAMES = ["a", "b.txt", "c.md", "sub", ".h", "img.png", "é.txt"]
TEXT = st.text(alphabet="ab \n\r\té.\x0b\u2028", max_size=40)
PATTERN = st.text(alphabet="ab \ré.", min_size=1, max_size=3)


@st.composite
def _paths(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3))
    path = "/".join(parts)
    form = draw(st.sampled_from(["/", "/", "/", "", "/./", "//", "/../", "/~"]))
    if form in ("/", ""):
        return form + path
    if form == "/~":
        return "~/" + path
    head, _, tail = path.rpartition("/")
    return "/" + (head + form + tail if head else tail)


PATH = _paths()
DIRECTORY = st.one_of(
    st.none(), st.sampled_from(["/", "/sub", "sub", "/.h", "/b.txt", "/nope"]), PATH
)
GLOB = st.sampled_from(
    [
        "*",
        "*.txt",
        "**/*.txt",
        "sub/*",
        "/*.md",
        "*.{txt,md}",
        "**",
        "?.txt",
        "[ab]*",
        ".h*",
        "sub/**",
        "**/.h/*",
        "../x",
        "a/../b",
        "*.png",
    ]
)
CONTENT = st.one_of(
    TEXT.map(lambda text: text.encode()),
    TEXT.map(lambda text: text.encode() + b"\0"),  # binary: ripgrep skips it below a directory
    TEXT.map(lambda text: b"x\xff" + text.encode()),  # not UTF-8, searched all the same
    st.binary(max_size=30).map(lambda data: b"x" + data),  # no byte order mark in front
)

OPERATION = st.one_of(
    st.tuples(st.just("write"), PATH, TEXT),
    st.tuples(st.just("write"), PATH, TEXT),
    st.tuples(st.just("edit"), PATH, PATTERN, TEXT, st.booleans()),
    st.tuples(st.just("read"), PATH, st.integers(-2, 6), st.integers(-1, 4)),
    st.tuples(st.just("ls"), st.one_of(st.just("/"), PATH)),
    st.tuples(st.just("glob"), GLOB, DIRECTORY),
    st.tuples(
        st.just("grep"),
        PATTERN,
        DIRECTORY,
        st.one_of(st.none(), GLOB),
        st.sampled_from([None, None, 0, 1, 3]),
    ),
    st.tuples(st.just("delete"), PATH),
    st.tuples(st.just("upload"), PATH, CONTENT),
    st.tuples(st.just("download"), st.one_of(st.just("/"), PATH)),
)


def _call(backend: Any, operation: tuple[Any, ...]) -> Any:
    kind, *args = operation
    if kind == "write":
        return backend.write(args[0], args[1])
    if kind == "edit":
        return backend.edit(*args)
    if kind == "read":
        return backend.read(*args)
    if kind == "ls":
        return backend.ls(*args)
    if kind == "glob":
        return backend.glob(*args)
    if kind == "grep":
        return backend.grep(args[0], args[1], args[2], max_count=args[3])
    if kind == "delete":
        return backend.delete(*args)
    if kind == "upload":
        return backend.upload_files([(args[0], args[1])])
    return backend.download_files([args[0]])


def _outcome(backend: Any, operation: tuple[Any, ...], root: str) -> Any:
    """What the call gave, comparable across the two backends."""
    try:
        result = _call(backend, operation)
    except ValueError as raised:
        return ("raised", type(raised).__name__)
    if isinstance(result, list):
        return [asdict(item) for item in result]
    found = asdict(result)
    if found.get("error"):
        error = found["error"].replace(root, "")
        found["error"] = re.sub(r": \[Errno (\d+)\].*", r": [Errno \1]", error, flags=re.S)
    for key in ("entries", "matches"):
        if found.get(key) is not None:
            for info in found[key]:
                if "modified_at" in info:
                    datetime.fromisoformat(info.pop("modified_at"))  # naive local ISO form
            if operation[0] == "grep":
                found[key] = sorted(found[key], key=lambda m: (m["path"], m["line"]))
                if operation[4] is not None:
                    found[key] = len(found[key])
    return found


@pytest.fixture
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as where:
        yield Path(where)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(OPERATION, min_size=1, max_size=12))
def test_every_operation_answers_as_deepagents_filesystem_backend(
    scratch: Path, operations: list[tuple[Any, ...]]
) -> None:
    with tempfile.TemporaryDirectory(dir=scratch) as where:
        root = Path(where, "root")
        root.mkdir()
        reference = FilesystemBackend(root, virtual_mode=True)
        with agentfs.open(Path(where, "ws.db")) as ws:
            ours = AgentFSBackend(ws)
            for operation in operations:
                expected = _outcome(reference, operation, str(root))
                assert _outcome(ours, operation, str(root)) == expected, operation
            assert workspace_tree(ws) == host_tree(root)


#: A tree with every case ripgrep and deepagents treat apart: hidden names at each depth,
#: CRLF, no final newline, binary files with text before or at their NUL byte, text that is
#: not UTF-8, media files read as base64, empty and blank files.
TRICKY = {
    "/a.txt": b"ab\r\nxab\n",
    "/noeol.md": b"ab",
    "/.env": b"ab\n",
    "/.h/x.txt": b"ab\n",
    "/sub/.hid/y.txt": b"ab\n",
    "/sub/deep/z.txt": b"b a\nab\n",
    "/sub/w.md": b"ab\n",
    "/bin.dat": b"ab\n\0ab\n",
    "/late.txt": b"zz\nab\0\nab\n",
    "/nul0.txt": b"\0ab",
    "/latin.txt": b"x\xffab\nab\n",
    "/\u00e9.txt": "\u00e9 ab\n".encode(),
    "/img.png": b"\x89PNGab",
    "/empty.txt": b"",
    "/blank.txt": b"  \n",
}
WHERE = [None, "/", "/sub", "sub", "/.h", "/a.txt", "/bin.dat", "/late.txt", "/nope", "/x/../a"]
PATTERNS = [
    "*.txt",
    "**/*.txt",
    "sub/*",
    "/*.md",
    "*.{txt,md}",
    "**",
    "[ab]*",
    ".h*",
    "deep/*",
    "sub/**",
    "../x",
    "*",
]


@pytest.fixture
def both(scratch: Path) -> Iterator[tuple[FilesystemBackend, AgentFSBackend, str]]:
    root = scratch / "root"
    root.mkdir()
    reference = FilesystemBackend(root, virtual_mode=True)
    with agentfs.open(scratch / "ws.db") as ws:
        ours = AgentFSBackend(ws)
        for backend in (reference, ours):
            assert all(r.error is None for r in backend.upload_files(list(TRICKY.items())))
        yield reference, ours, str(root)


def test_grep_finds_what_ripgrep_finds_in_every_corner(
    both: tuple[FilesystemBackend, AgentFSBackend, str],
) -> None:
    reference, ours, root = both
    for pattern in ("ab", "a", "b a", "\u00e9", "\r", "zz"):
        for where in WHERE:
            for include in [None, *PATTERNS]:
                operation = ("grep", pattern, where, include, None)
                assert _outcome(ours, operation, root) == _outcome(reference, operation, root), (
                    operation
                )
    for cap in (0, 1, 5, 100):
        capped = ("grep", "ab", None, None, cap)
        assert _outcome(ours, capped, root) == _outcome(reference, capped, root), capped


def test_glob_ls_read_and_download_answer_alike_in_every_corner(
    both: tuple[FilesystemBackend, AgentFSBackend, str],
) -> None:
    reference, ours, root = both
    operations: list[tuple[Any, ...]] = [("glob", p, w) for p in PATTERNS for w in WHERE]
    operations += [("ls", w) for w in ["/", "/sub", "/.h", "/a.txt", "/nope", "sub/deep"]]
    operations += [
        ("read", path, offset, limit)
        for path in [*TRICKY, "/sub", "/nope"]
        for offset, limit in [(0, 2000), (1, 1), (-1, 0), (5, 2)]
    ]
    operations += [("download", path) for path in [*TRICKY, "/sub", "/nope"]]
    for operation in operations:
        assert _outcome(ours, operation, root) == _outcome(reference, operation, root), operation
