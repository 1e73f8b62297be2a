"""The ``mcp-filesystem`` profile against the server it stands for: the reference MCP
filesystem server from npm runs over a host directory, the profile over a workspace holding the
same tree (both built from one dict), and every tool is called with the same arguments on both.
The texts must be the same once the host directory is written as ``/``, errors included, and
after each change both trees must hold the same files."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import agentfs
from agentfs.tools import Policy, Toolset
from agentfs.tools.policy import ToolPolicy
from agentfs.tools.profiles.mcp_filesystem import SURFACE
from agentfs.tools.profiles.mcp_filesystem.minimatch import minimatch
from agentfs.tools.profiles.mcp_filesystem.texts import format_size
from tests.trees import host_tree, workspace_tree

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".npm" / "node_modules" / ".bin" / "mcp-server-filesystem"

#: One tree, built on the host for the server and in a workspace for the profile.
BIG = "".join(f"line {n} of the log, some words to fill it\n" for n in range(1, 400))
TREE: dict[str, str | bytes | None] = {
    "/a.txt": "alpha\nbeta\ngamma\n",
    "/notes.md": "# Notes\n\n- one\n- two",
    "/crlf.txt": "one\r\ntwo\r\nthree",
    "/src/app.py": "def main():\n    print('hi')\n    return 1\n\n\nif __name__ == '__main__':\n"
    "    main()\n",
    "/src/util/helpers.py": "def helper(x):\n    if x:\n        return x * 2\n    return 0\n",
    "/src/.hidden": "dot file\n",
    "/docs/guide.txt": "".join(f"guide line {n}\n" for n in range(1, 61)),
    "/docs/empty.txt": "",
    "/docs/tick.md": "use ```code``` fences\n",
    "/café/naïve ✓.txt": "unicode ✓ content\n",
    "/big.log": BIG,
    "/image.png": b"\x89PNG\r\n\x1a\n" + bytes(range(40)),
    "/sound.mp3": b"ID3" + bytes(20),
    "/data bin#1.bin": b"ok\xff\xfe bytes \xc3\x28 here\n",
    "/emptydir": None,
    "/node_modules/pkg/index.js": "module.exports = 1;\n",
}


def build_host(top: Path, tree: dict[str, str | bytes | None]) -> None:
    for child in top.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    for path, body in tree.items():
        where = top / path.lstrip("/")
        if body is None:
            where.mkdir(parents=True, exist_ok=True)
            continue
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_bytes(body.encode() if isinstance(body, str) else body)
    for folder, dirs, files in os.walk(top):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


def build_workspace(ws: agentfs.Workspace, tree: dict[str, str | bytes | None]) -> None:
    for path, body in tree.items():
        if body is None:
            ws.mkdir(path, parents=True, exist_ok=True)
        else:
            ws.write(path, body, parents=True)


class Peer:
    """The npm server over ``top``, driven by the ``mcp`` SDK's stdio client on a loop of its
    own thread, so plain (and hypothesis) tests call it synchronously."""

    def __init__(self, top: Path) -> None:
        self.top = str(top)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.session: ClientSession | None = None
        self.ready: Future[None] = Future()
        self.stop: asyncio.Event | None = None
        self.served = asyncio.run_coroutine_threadsafe(self._serve(), self.loop)
        self.ready.result(timeout=30)

    async def _serve(self) -> None:
        self.stop = asyncio.Event()
        params = StdioServerParameters(
            command=str(SERVER), args=[self.top], env={**os.environ, "TZ": "UTC"}
        )
        try:
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self.session = session
                self.ready.set_result(None)
                await self.stop.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str, Any]:
        assert self.session is not None
        done = asyncio.run_coroutine_threadsafe(
            self.session.call_tool(name, arguments), self.loop
        ).result(timeout=30)
        text = "".join(getattr(block, "text", "") for block in done.content)
        return bool(done.is_error), text, done.structured_content

    def close(self) -> None:
        assert self.stop is not None
        self.loop.call_soon_threadsafe(self.stop.set)
        self.served.result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(os.path.realpath(tmp_path_factory.mktemp("allowed")))


@pytest.fixture(scope="module")
def peer(host: Path) -> Iterator[Peer]:
    if not SERVER.exists() or shutil.which("node") is None:
        pytest.fail(f"{SERVER} or node is missing: run `make test` (it installs them)")
    server = Peer(host)
    yield server
    server.close()


class Pair:
    """The server and the profile over the same tree."""

    def __init__(self, peer: Peer, host: Path, db: Path, tree: dict[str, Any]) -> None:
        self.peer, self.host = peer, host
        build_host(host, tree)
        if db.exists():
            db.unlink()
        self.ws = agentfs.open(db)
        build_workspace(self.ws, tree)
        self.tools = Toolset(self.ws, surface=SURFACE)

    def on_host(self, value: Any) -> Any:
        if isinstance(value, str) and value.startswith("/"):
            return self.peer.top + value.rstrip("/") if value != "/" else self.peer.top
        return value

    def server_args(self, args: dict[str, Any]) -> dict[str, Any]:
        out = dict(args)
        for key in ("path", "source", "destination"):
            if key in out:
                out[key] = self.on_host(out[key])
        if "paths" in out:
            out["paths"] = [self.on_host(p) for p in out["paths"]]
        return out

    def shown(self, text: str) -> str:
        """The server's text with the host directory written as ``/``."""
        top = self.peer.top
        return text.replace(top + "/", "/").replace(top, "/")

    def both(self, name: str, args: dict[str, Any]) -> tuple[tuple[bool, str], tuple[bool, str]]:
        failed, text, _ = self.peer.call(name, self.server_args(args))
        result = self.tools.invoke(name, args)
        ours = result.error.message if result.error else result.text
        return (failed, self.shown(text)), (result.is_error, ours)

    def same_files(self) -> None:
        assert host_tree(self.host) == workspace_tree(self.ws)

    def close(self) -> None:
        self.tools.close()
        self.ws.close()


@pytest.fixture
def pair(peer: Peer, host: Path, tmp_path: Path) -> Iterator[Pair]:
    made = Pair(peer, host, tmp_path / "ws.db", TREE)
    yield made
    made.close()


def _tmp_names(text: str) -> str:
    return re.sub(r"\.[0-9a-f]{32}\.tmp", ".<random>.tmp", text)


def _sorted_tree(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for entry in entries:
        if "children" in entry:
            entry["children"] = _sorted_tree(entry["children"])
    return sorted(entries, key=lambda entry: entry["name"])


def _canonical(name: str, text: str, failed: bool) -> Any:
    """What must be equal: the order of a listing or a search is the host's (meaningless), a
    time is when the tree was built, a directory's size is the host's."""
    if failed:
        return _tmp_names(text)
    if name in ("list_directory", "search_files"):
        return sorted(text.split("\n"))
    if name == "directory_tree":
        return _sorted_tree(json.loads(text))
    if name == "get_file_info":
        lines = dict(line.split(": ", 1) for line in text.split("\n"))
        for key in ("created", "modified", "accessed"):
            assert re.fullmatch(
                r"\w{3} \w{3} \d\d \d{4} \d\d:\d\d:\d\d GMT\+0000 \(Coordinated Universal Time\)",
                lines[key],
            ), lines[key]
            lines[key] = "<time>"
        if lines["isDirectory"] == "true":
            lines["size"] = "<size>"
        return lines
    return text


CASES: list[tuple[str, dict[str, Any]]] = [
    ("list_allowed_directories", {}),
    # reading
    ("read_text_file", {"path": "/a.txt"}),
    ("read_text_file", {"path": "a.txt"}),
    ("read_text_file", {"path": "/src/../a.txt"}),
    ("read_file", {"path": "/notes.md"}),
    ("read_text_file", {"path": "/missing.txt"}),
    ("read_text_file", {"path": "/nodir/missing.txt"}),
    ("read_text_file", {"path": "/a.txt/below"}),
    ("read_text_file", {"path": "/src"}),
    ("read_text_file", {"path": "/src", "head": 2}),
    ("read_text_file", {"path": "/café/naïve ✓.txt"}),
    ("read_text_file", {"path": "/data bin#1.bin"}),
    ("read_text_file", {"path": "/docs/empty.txt"}),
    ("read_text_file", {"path": "/docs/empty.txt", "tail": 3}),
    ("read_text_file", {"path": "/crlf.txt"}),
    ("read_text_file", {"path": "/crlf.txt", "head": 2}),
    ("read_text_file", {"path": "/crlf.txt", "tail": 2}),
    ("read_text_file", {"path": "/a.txt", "head": 2}),
    ("read_text_file", {"path": "/a.txt", "tail": 2}),
    ("read_text_file", {"path": "/a.txt", "head": 0}),
    ("read_text_file", {"path": "/a.txt", "tail": 0}),
    ("read_text_file", {"path": "/a.txt", "tail": -1}),
    ("read_text_file", {"path": "/a.txt", "head": -1}),
    ("read_text_file", {"path": "/a.txt", "head": 1.5}),
    ("read_text_file", {"path": "/a.txt", "tail": 1.5}),
    ("read_text_file", {"path": "/a.txt", "head": 99}),
    ("read_text_file", {"path": "/a.txt", "head": 1, "tail": 1}),
    ("read_text_file", {"path": "/missing.txt", "head": 1, "tail": 1}),
    ("read_text_file", {"path": "/big.log", "tail": 7}),
    ("read_text_file", {"path": "/big.log", "tail": 60}),
    ("read_text_file", {"path": "/big.log", "head": 70}),
    ("read_text_file", {"path": "/notes.md", "tail": 1}),
    ("read_text_file", {"path": "/notes.md", "head": 4}),
    ("read_text_file", {"path": "C:\\Users\\x.txt"}),
    ("read_multiple_files", {"paths": ["/a.txt", "/missing", "/src", "café/naïve ✓.txt"]}),
    ("read_multiple_files", {"paths": ["/docs/empty.txt"]}),
    # writing
    ("write_file", {"path": "/new.txt", "content": "fresh\n"}),
    ("write_file", {"path": "/a.txt", "content": "replaced ✓"}),
    ("write_file", {"path": "/nodir/new.txt", "content": "x"}),
    ("write_file", {"path": "/a.txt/new.txt", "content": "x"}),
    ("write_file", {"path": "/src", "content": "x"}),
    ("write_file", {"path": "/café/naïve ✓.txt", "content": ""}),
    ("create_directory", {"path": "/made/deep/down"}),
    ("create_directory", {"path": "/src"}),
    ("create_directory", {"path": "/a.txt"}),
    ("create_directory", {"path": "/a.txt/sub"}),
    ("move_file", {"source": "/a.txt", "destination": "/b.txt"}),
    ("move_file", {"source": "/src", "destination": "/emptydir/src"}),
    ("move_file", {"source": "/a.txt", "destination": "/notes.md"}),
    ("move_file", {"source": "/missing", "destination": "/b.txt"}),
    ("move_file", {"source": "/missing", "destination": "/notes.md"}),
    ("move_file", {"source": "/a.txt", "destination": "/nodir/b.txt"}),
    ("move_file", {"source": "/src", "destination": "/src/util/src"}),
    ("move_file", {"source": "/café/naïve ✓.txt", "destination": "/ünïcode.txt"}),
    # listing
    ("list_directory", {"path": "/"}),
    ("list_directory", {"path": "/src"}),
    ("list_directory", {"path": "/emptydir"}),
    ("list_directory", {"path": "/missing"}),
    ("list_directory", {"path": "/a.txt"}),
    ("list_directory_with_sizes", {"path": "/"}),
    ("list_directory_with_sizes", {"path": "/docs"}),
    ("list_directory_with_sizes", {"path": "/docs", "sortBy": "size"}),
    ("list_directory_with_sizes", {"path": "/emptydir"}),
    ("list_directory_with_sizes", {"path": "/missing"}),
    ("directory_tree", {"path": "/"}),
    ("directory_tree", {"path": "src"}),
    ("directory_tree", {"path": "/", "excludePatterns": ["node_modules", "*.py"]}),
    ("directory_tree", {"path": "/", "excludePatterns": ["**/util", ".hidden"]}),
    ("directory_tree", {"path": "/", "excludePatterns": ["src/util"]}),
    ("directory_tree", {"path": "/a.txt"}),
    ("directory_tree", {"path": "/missing"}),
    # searching
    ("search_files", {"path": "/", "pattern": "*.txt"}),
    ("search_files", {"path": "/", "pattern": "**/*.py"}),
    ("search_files", {"path": "/", "pattern": "**/*"}),
    ("search_files", {"path": "/", "pattern": "**", "excludePatterns": ["node_modules"]}),
    ("search_files", {"path": "/", "pattern": "**/*.{py,md}", "excludePatterns": ["src/util"]}),
    ("search_files", {"path": "/src", "pattern": "**/.*"}),
    ("search_files", {"path": "/", "pattern": "src"}),
    ("search_files", {"path": "/", "pattern": "**/[a-c]*"}),
    ("search_files", {"path": "/", "pattern": "**/*ï*"}),
    ("search_files", {"path": "/", "pattern": "nothing*"}),
    ("search_files", {"path": "/a.txt", "pattern": "*"}),
    ("search_files", {"path": "/missing", "pattern": "*"}),
    ("get_file_info", {"path": "/a.txt"}),
    ("get_file_info", {"path": "/src"}),
    ("get_file_info", {"path": "/missing"}),
    # editing
    ("edit_file", {"path": "/a.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}),
    (
        "edit_file",
        {
            "path": "/a.txt",
            "edits": [{"oldText": "alpha\n", "newText": ""}, {"oldText": "gamma", "newText": "z"}],
            "dryRun": True,
        },
    ),
    ("edit_file", {"path": "/a.txt", "edits": [{"oldText": "delta", "newText": "x"}]}),
    ("edit_file", {"path": "/a.txt", "edits": []}),
    ("edit_file", {"path": "/missing", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("edit_file", {"path": "/src", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("edit_file", {"path": "/crlf.txt", "edits": [{"oldText": "two\r\nthree", "newText": "2"}]}),
    ("edit_file", {"path": "/notes.md", "edits": [{"oldText": "- two", "newText": "- two\n"}]}),
    ("edit_file", {"path": "/docs/tick.md", "edits": [{"oldText": "use", "newText": "````"}]}),
    (
        "edit_file",
        {
            "path": "/src/util/helpers.py",
            "edits": [
                {
                    "oldText": "if x:\n    return x * 2",
                    "newText": "if x > 1:\n      return x * 3\n  # done",
                }
            ],
        },
    ),
    (
        "edit_file",
        {
            "path": "/docs/guide.txt",
            "edits": [
                {"oldText": "guide line 2\n", "newText": "second\n"},
                {"oldText": "guide line 30\n", "newText": ""},
                {"oldText": "guide line 60\n", "newText": "last"},
            ],
        },
    ),
]


@pytest.mark.parametrize(
    ("name", "args"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
)
def test_the_profile_answers_what_the_server_answers(
    pair: Pair, name: str, args: dict[str, Any]
) -> None:
    (theirs_failed, theirs), (ours_failed, ours) = pair.both(name, args)
    assert ours_failed == theirs_failed, (theirs, ours)
    assert _canonical(name, ours, ours_failed) == _canonical(name, theirs, theirs_failed)
    pair.same_files()


def test_media_files_are_the_same_blocks(pair: Pair) -> None:
    for path in ("/image.png", "/sound.mp3", "/data bin#1.bin", "/café/naïve ✓.txt"):
        failed, _, theirs = pair.peer.call("read_media_file", pair.server_args({"path": path}))
        assert not failed
        ours = pair.tools.call("read_media_file", {"path": path})
        assert json.loads(pair.shown(json.dumps(theirs, ensure_ascii=False))) == ours
    for path in ("/missing.png", "/src"):
        (failed, theirs_text), (ours_failed, ours_text) = pair.both(
            "read_media_file", {"path": path}
        )
        assert failed and ours_failed and theirs_text == ours_text


LINES = st.sampled_from(["alpha", "  beta", "gamma", "    delta", "", "alpha", "ε ✓", "\tτ"])


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    lines=st.lists(LINES, min_size=1, max_size=14),
    ends=st.booleans(),
    edits=st.lists(
        st.tuples(
            st.integers(0, 14), st.integers(0, 4), st.lists(LINES, max_size=3), st.booleans()
        ),
        min_size=1,
        max_size=3,
    ),
    dry=st.booleans(),
)
def test_random_edits_give_the_servers_diff_and_file(
    peer: Peer,
    host: Path,
    tmp_path: Path,
    lines: list[str],
    ends: bool,
    edits: list[tuple[int, int, list[str], bool]],
    dry: bool,
) -> None:
    """Edits cut from the file (whole lines, or lines with their indentation changed, which
    only the server's line-by-line match finds) and texts that are not there."""
    text = "\n".join(lines) + ("\n" if ends else "")
    made = Pair(peer, host, tmp_path / "edits.db", {"/f.txt": text})
    try:
        chosen = []
        for start, count, new, reindent in edits:
            old = "\n".join(lines[start : start + count])
            if reindent:
                old = "\n".join(" " + line.strip() for line in old.split("\n"))
            chosen.append({"oldText": old, "newText": "\n".join(new)})
        args = {"path": "/f.txt", "edits": chosen, "dryRun": dry}
        (theirs_failed, theirs), (ours_failed, ours) = made.both("edit_file", args)
        assert (ours_failed, ours) == (theirs_failed, theirs)
        made.same_files()
    finally:
        made.close()


NAMES = ["a.txt", "b.md", ".env", "src", "lib", "x.py", "READ ME", "ü.txt"]
PATTERN_PARTS = st.sampled_from(
    [
        "*",
        "**",
        "?",
        "*.txt",
        "*.{txt,md}",
        "[a-c]*",
        "src",
        "lib",
        ".*",
        "x.py",
        "!(x).py",
        "+(a|b).*",
    ]
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    pattern=st.lists(PATTERN_PARTS, min_size=1, max_size=3).map("/".join),
    exclude=st.lists(st.lists(PATTERN_PARTS, min_size=1, max_size=2).map("/".join), max_size=2),
)
def test_search_patterns_match_as_the_servers(
    peer: Peer, host: Path, tmp_path: Path, pattern: str, exclude: list[str]
) -> None:
    tree: dict[str, Any] = {f"/{a}/{b}": "x" for a in ("src", "lib") for b in NAMES[:3]}
    tree |= {f"/{name}": "y" for name in NAMES if name not in ("src", "lib")}
    tree["/src/lib/x.py"] = "z"
    made = Pair(peer, host, tmp_path / "search.db", tree)
    try:
        for name in ("search_files", "directory_tree"):
            args = {"path": "/", "pattern": pattern, "excludePatterns": exclude}
            if name == "directory_tree":
                del args["pattern"]
            (theirs_failed, theirs), (ours_failed, ours) = made.both(name, args)
            assert ours_failed == theirs_failed
            assert _canonical(name, ours, ours_failed) == _canonical(name, theirs, theirs_failed)
    finally:
        made.close()


def test_sizes_and_patterns_by_themselves() -> None:
    assert [format_size(n) for n in (0, 1, 1023, 1024, 1152, 1536, 1048576, 5 * 1024**5)] == [
        "0 B",
        "1 B",
        "1023 B",
        "1.00 KB",
        "1.13 KB",
        "1.50 KB",
        "1.00 MB",
        "5120.00 TB",
    ]
    assert minimatch("a/b", "a/**") and not minimatch("a", "a/**")
    assert minimatch("x.txt", "**/*.txt") and not minimatch("a/x.txt", "*.txt")
    assert minimatch("a1", "a{1..3}") and not minimatch("a", "{a}")
    assert minimatch("a.txt", "!*.js") and not minimatch("a", "#a")


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as ws:
        build_workspace(ws, TREE)
        ws.write("/secrets/key", "hunter2\n", parents=True)
        yield ws


def test_the_governing_tools_policy_holds(guarded: agentfs.Workspace) -> None:
    ws = guarded
    tools = Toolset(ws, surface=SURFACE, policy=Policy(defaults=ToolPolicy(deny=["/secrets/**"])))

    def refused(name: str, args: dict[str, Any]) -> bool:
        return tools.call(name, args).get("error", {}).get("code") == "denied"

    assert refused("read_text_file", {"path": "/secrets/key"})
    assert refused("read_text_file", {"path": "secrets/../secrets/key"})
    assert refused("read_media_file", {"path": "/secrets/key"})
    assert refused("write_file", {"path": "/secrets/new", "content": "x"})
    assert refused("edit_file", {"path": "/secrets/key", "edits": []})
    assert refused("move_file", {"source": "/secrets/key", "destination": "/key"})
    assert refused("move_file", {"source": "/a.txt", "destination": "/secrets/a.txt"})
    assert refused("move_file", {"source": "/secrets", "destination": "/open"})
    assert refused("get_file_info", {"path": "/secrets/key"})
    many = tools.call("read_multiple_files", {"paths": ["/a.txt", "/secrets/key"]})["content"]
    assert "alpha" in many and "hunter2" not in many and "/secrets/key: Error - " in many
    everything = tools.call("search_files", {"path": "/", "pattern": "**"})["content"]
    assert "/secrets/key" not in everything.split("\n") and "/a.txt" in everything
    assert "key" not in tools.call("list_directory", {"path": "/secrets"})["content"]
    assert "key" not in tools.call("directory_tree", {"path": "/"})["content"]
    assert ws.read("/secrets/key") == b"hunter2\n" and not ws.exists("/secrets/new")

    off = Toolset(
        ws, surface=SURFACE, policy=Policy(tools={"write_file": ToolPolicy(enabled=False)})
    )
    assert "write_file" not in [t.name for t in off.tools()]
    assert off.call("write_file", {"path": "/x", "content": ""})["error"]["code"] == "denied"

    reader = Toolset(ws, surface=SURFACE, policy=Policy(read_only=True))
    offered = {t.name for t in reader.tools()}
    assert offered == {t.name for t in SURFACE.all_tools() if not t.mutates}
    assert {"write_file", "edit_file", "create_directory", "move_file"}.isdisjoint(offered)
    assert reader.call("edit_file", {"path": "/a.txt", "edits": []})["error"]["code"] == "read_only"
    assert reader.call("read_text_file", {"path": "/a.txt"}) == {"content": "alpha\nbeta\ngamma\n"}

    tracked = Toolset(ws, surface=SURFACE, thread="t1")
    tracked.call("read_multiple_files", {"paths": ["/notes.md", "/a.txt"]})
    assert sorted(r.path for r in ws.reads_log("t1")) == ["/a.txt", "/notes.md"]


def test_every_tool_is_governed_by_an_agentfs_tool_of_the_same_job() -> None:
    governed = {t.name: t.policy_name for t in SURFACE.all_tools()}
    assert governed == {
        "read_text_file": "read_file",
        "read_file": "read_file",
        "read_media_file": "read_file",
        "read_multiple_files": "read_multiple_files",
        "write_file": "write_file",
        "edit_file": "edit_file",
        "create_directory": "mkdir",
        "list_directory": "ls",
        "list_directory_with_sizes": "ls",
        "directory_tree": "list_tree",
        "move_file": "move_file",
        "search_files": "search_files",
        "get_file_info": "stat",
        "list_allowed_directories": "ls",
    }
    reads = {t.name for t in SURFACE.all_tools() if t.tracks_reads}
    assert reads == {"read_text_file", "read_file", "read_media_file", "read_multiple_files"}
