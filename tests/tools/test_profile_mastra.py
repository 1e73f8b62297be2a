"""The ``mastra`` profile, behaviour by behaviour: each tool's result shape and values, the
encodings of a read, the policy's limits, deny globs and read-before-write, listings with
symlinks, search and indexing, code and commands in the real mount (approval, the denylist,
the timeout, the snapshot that undoes a run), the audit under the profile's names, and the
profile served over MCP."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from agentfs.tools import Policy, Toolset
from agentfs.tools.commands import MOST_LINE_BYTES
from agentfs.tools.policy import CommandPolicy, Limits, ToolPolicy
from agentfs.tools.profiles.mastra import METADATA_XATTR, SURFACE
from tests.tools.calling import call, error, served

NAMES = [
    "workspace_read_file",
    "workspace_write_file",
    "workspace_list_files",
    "workspace_delete_file",
    "workspace_file_exists",
    "workspace_mkdir",
    "workspace_search",
    "workspace_index",
    "workspace_execute_code",
    "workspace_execute_command",
]
RULED_BY = {
    "workspace_read_file": "read_file",
    "workspace_write_file": "write_file",
    "workspace_list_files": "ls",
    "workspace_delete_file": "delete_file",
    "workspace_file_exists": "stat",
    "workspace_mkdir": "mkdir",
    "workspace_search": "workspace_search",
    "workspace_index": "workspace_index_content",
    "workspace_execute_code": "execute_command",
    "workspace_execute_command": "execute_command",
}
NO_MOUNT = fuse_available()
needs_mount = pytest.mark.skipif(NO_MOUNT is not None, reason=f"no FUSE mount here: {NO_MOUNT}")

LOG = "07:10 tide low\n07:40 heron seen\n08:05 tide turning\n"
CONFIG = '{"station": "north", "interval": 15}\n'
PIXELS = b"\x89\x00\x10\xfe\xffdots\x00"
TOOL = "def tally(counts):\n    return sum(counts)\n"


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as workspace:
        workspace.write("/logs/shore.txt", LOG, parents=True)
        workspace.write("/data/config.json", CONFIG, parents=True)
        workspace.write("/data/sample.csv", "a,b\n1,2\n", parents=True)
        workspace.write("/lib/tally.py", TOOL, parents=True)
        workspace.write("/lib/sub/extra.json", "[]\n", parents=True)
        workspace.write("/sketch.bin", PIXELS)
        workspace.write("/hidden/code.txt", "lighthouse key 4471\n", parents=True)
        yield workspace


def approving(ws: agentfs.Workspace, policy: Policy | None = None) -> Toolset:
    """The profile with every call approved, as a host that trusts its agent runs it."""
    return Toolset(ws, profile="mastra", policy=policy, approve=lambda request: True)


# --- the tools offered --------------------------------------------------------------------------


def test_the_profile_offers_exactly_its_tools_each_ruled_by_its_agentfs_tool(
    ws: agentfs.Workspace,
) -> None:
    tools = Toolset(ws, profile="mastra")
    assert tools.surface is SURFACE
    assert [t.name for t in tools.tools()] == NAMES
    assert {t.name: t.policy_name for t in tools.tools()} == RULED_BY
    params = {t.name: sorted(t.input.model_fields) for t in tools.tools()}
    assert params == {
        "workspace_read_file": ["encoding", "path"],
        "workspace_write_file": ["content", "overwrite", "path"],
        "workspace_list_files": ["extension", "path", "recursive"],
        "workspace_delete_file": ["force", "path"],
        "workspace_file_exists": ["path"],
        "workspace_mkdir": ["path", "recursive"],
        "workspace_search": ["minScore", "mode", "path", "query", "topK"],
        "workspace_index": ["content", "metadata", "path"],
        "workspace_execute_code": ["code", "runtime", "timeout"],
        "workspace_execute_command": ["args", "command", "cwd", "timeout"],
    }
    assert SURFACE.find("workspace_read_file").tracks_reads  # type: ignore[union-attr]
    assert not SURFACE.find("workspace_list_files").mutates  # type: ignore[union-attr]
    assert SURFACE.find("workspace_execute_code").elsewhere  # type: ignore[union-attr]


def test_an_unknown_argument_is_refused(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    code, message = error(tools, "workspace_read_file", path="logs/shore.txt", lines=3)
    assert code == "invalid_argument" and "lines: unknown argument" in message


# --- workspace_read_file ------------------------------------------------------------------------


def test_read_file_gives_utf8_text_with_size_and_path(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    data, text = call(tools, "workspace_read_file", path="/logs/shore.txt")
    assert data == {"content": LOG, "size": len(LOG), "path": "/logs/shore.txt"}
    assert text == LOG
    # relative to the root, and the utf8 spelling
    assert call(tools, "workspace_read_file", path="logs/shore.txt")[0] == data
    assert call(tools, "workspace_read_file", path="logs/shore.txt", encoding="utf8")[0] == data
    ws.write("/greek.txt", "καλημέρα\n")
    greek = call(tools, "workspace_read_file", path="greek.txt")[0]
    assert greek["content"] == "καλημέρα\n" and greek["size"] == len("καλημέρα\n".encode())


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        ("base64", base64.b64encode(PIXELS).decode("ascii")),
        ("hex", PIXELS.hex()),
        ("binary", PIXELS.decode("latin-1")),
    ],
)
def test_read_file_encodes_bytes_as_asked(
    ws: agentfs.Workspace, encoding: str, expected: str
) -> None:
    tools = Toolset(ws, profile="mastra")
    data = call(tools, "workspace_read_file", path="sketch.bin", encoding=encoding)[0]
    assert data == {"content": expected, "size": len(PIXELS), "path": "/sketch.bin"}
    # text read this way is the same bytes
    log = call(tools, "workspace_read_file", path="logs/shore.txt", encoding=encoding)[0]
    assert (
        log["content"]
        == {
            "base64": base64.b64encode(LOG.encode()).decode(),
            "hex": LOG.encode().hex(),
            "binary": LOG,
        }[encoding]
    )


@pytest.mark.parametrize("raw", [PIXELS, b"caf\xe9 au lait\n"], ids=["nul", "latin1"])
def test_a_binary_file_read_as_utf8_is_refused_with_advice(
    ws: agentfs.Workspace, raw: bytes
) -> None:
    ws.write("/odd.dat", raw)
    tools = Toolset(ws, profile="mastra")
    code, message = error(tools, "workspace_read_file", path="odd.dat")
    assert code == "invalid_argument"
    assert f"/odd.dat is a binary file ({len(raw)} bytes" in message
    assert message.endswith("read it with encoding=base64")
    assert ws.read("/odd.dat") == raw and len(ws.history("/odd.dat")) == 1


def test_the_policys_read_limit_cuts_text_on_a_character_boundary(ws: agentfs.Workspace) -> None:
    ws.write("/menu.txt", "pré salé\n")  # p r \xc3\xa9 ...: byte 4 is inside the é
    tools = Toolset(ws, profile="mastra", policy=Policy(limits=Limits(max_read_bytes=3)))
    data, text = call(tools, "workspace_read_file", path="menu.txt")
    size = len("pré salé\n".encode())
    assert data == {"content": "pr", "size": size, "path": "/menu.txt", "truncated": True}
    assert text == f"pr\n... cut at the policy's read limit ({size} bytes)"
    tools = Toolset(ws, profile="mastra", policy=Policy(limits=Limits(max_read_bytes=4)))
    assert call(tools, "workspace_read_file", path="menu.txt")[0]["content"] == "pré"
    # a file within the limit is whole, without the key
    tools = Toolset(ws, profile="mastra", policy=Policy(limits=Limits(max_read_bytes=size)))
    whole = call(tools, "workspace_read_file", path="menu.txt")[0]
    assert whole["content"] == "pré salé\n" and "truncated" not in whole


def test_the_policys_read_limit_refuses_an_encoded_read_over_it(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra", policy=Policy(limits=Limits(max_read_bytes=8)))
    code, message = error(tools, "workspace_read_file", path="sketch.bin", encoding="base64")
    assert code == "too_large" and "/sketch.bin" in message
    assert error(tools, "workspace_read_file", path="logs/shore.txt", encoding="hex")[0] == (
        "too_large"
    )
    ws.write("/tiny.bin", b"\x00\x01")
    assert call(tools, "workspace_read_file", path="tiny.bin", encoding="hex")[0]["content"] == (
        "0001"
    )


def test_read_file_refuses_a_directory_a_missing_file_and_a_climb(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    code, message = error(tools, "workspace_read_file", path="/logs")
    assert code == "is_directory" and "workspace_list_files" in message
    code, message = error(tools, "workspace_read_file", path="logs/river.txt")
    assert code == "not_found" and "workspace_list_files" in message
    for path in ["../logs/shore.txt", "/../x", "logs/../../x", ".."]:
        assert error(tools, "workspace_read_file", path=path)[0] == "invalid_path", path
    # a `..` that stays inside is an ordinary path
    assert call(tools, "workspace_read_file", path="lib/../logs/shore.txt")[1] == LOG


def test_a_read_is_what_read_before_write_asks_for(ws: agentfs.Workspace) -> None:
    strict = Policy(defaults=ToolPolicy(require_read_before_write=True))
    tools = Toolset(ws, profile="mastra", policy=strict)
    code, message = error(tools, "workspace_write_file", path="logs/shore.txt", content="x\n")
    assert code == "read_required"
    assert message.endswith("call workspace_read_file on it, then redo your change")
    assert ws.read("/logs/shore.txt") == LOG.encode()
    call(tools, "workspace_read_file", path="logs/shore.txt")
    call(tools, "workspace_write_file", path="logs/shore.txt", content="rewritten\n")
    assert ws.read("/logs/shore.txt") == b"rewritten\n"
    # changed by someone else since the read: read again
    ws.thread = "keeper"
    ws.write("/logs/shore.txt", "keeper's note\n")
    ws.thread = "main"
    code, message = error(tools, "workspace_write_file", path="logs/shore.txt", content="x")
    assert code == "stale_read" and "call workspace_read_file" in message
    assert ws.read("/logs/shore.txt") == b"keeper's note\n"
    # workspace_index writes the file, so it needs the read as well
    code, message = error(tools, "workspace_index", path="data/config.json", content="{}")
    assert code == "read_required" and "call workspace_read_file" in message
    assert ws.read("/data/config.json") == CONFIG.encode()
    # an encoded read is a read too; a new file needs none
    code = error(tools, "workspace_write_file", path="sketch.bin", content="y")[0]
    assert code == "read_required"
    call(tools, "workspace_read_file", path="sketch.bin", encoding="base64")
    call(tools, "workspace_write_file", path="sketch.bin", content="y")
    call(tools, "workspace_write_file", path="fresh.txt", content="z")
    assert ws.read("/sketch.bin") == b"y" and ws.read("/fresh.txt") == b"z"


# --- workspace_write_file -----------------------------------------------------------------------


def test_write_file_creates_parents_and_replaces_by_default(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    data, text = call(tools, "workspace_write_file", path="out/week/1.md", content="calm sea\n")
    assert data == {"success": True, "path": "/out/week/1.md", "size": 9}
    assert text.startswith("Created /out/week/1.md")
    assert ws.read("/out/week/1.md") == b"calm sea\n"
    data, text = call(tools, "workspace_write_file", path="/out/week/1.md", content="mer ça\n")
    assert data == {"success": True, "path": "/out/week/1.md", "size": len("mer ça\n".encode())}
    assert text.startswith("Replaced /out/week/1.md")
    assert ws.read("/out/week/1.md") == "mer ça\n".encode()


def test_write_file_without_overwrite_leaves_an_existing_file(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    code, message = error(
        tools, "workspace_write_file", path="data/config.json", content="{}", overwrite=False
    )
    assert code == "exists" and "overwrite=true" in message
    assert ws.read("/data/config.json") == CONFIG.encode()
    assert len(ws.history("/data/config.json")) == 1
    made = call(tools, "workspace_write_file", path="data/new.json", content="{}", overwrite=False)
    assert made[0]["path"] == "/data/new.json" and ws.read("/data/new.json") == b"{}"


def test_write_file_refuses_a_directory_and_the_write_limit(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra", policy=Policy(limits=Limits(max_write_bytes=4)))
    assert error(tools, "workspace_write_file", path="lib", content="x")[0] == "is_directory"
    assert ws.stat("/lib").is_dir()
    code, message = error(tools, "workspace_write_file", path="big/deep/x.txt", content="12345")
    assert code == "too_large" and "4-byte limit" in message
    assert not ws.exists("/big")
    code = error(tools, "workspace_write_file", path="logs/shore.txt", content="12345")[0]
    assert code == "too_large" and ws.read("/logs/shore.txt") == LOG.encode()
    assert call(tools, "workspace_write_file", path="ok.txt", content="1234")[0]["size"] == 4


# --- workspace_list_files -----------------------------------------------------------------------


def test_list_files_gives_entries_path_and_count(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    data, text = call(tools, "workspace_list_files", path="lib")
    assert data == {
        "entries": [
            {"name": "sub", "type": "directory"},
            {"name": "tally.py", "type": "file", "size": len(TOOL)},
        ],
        "path": "/lib",
        "count": 2,
    }
    assert text == f"sub/\ntally.py  ({len(TOOL)} bytes)"
    root = call(tools, "workspace_list_files")[0]
    assert root["path"] == "/" and root["count"] == 5
    assert [e["name"] for e in root["entries"]] == ["data", "hidden", "lib", "logs", "sketch.bin"]
    ws.mkdir("/bare")
    assert call(tools, "workspace_list_files", path="bare")[0] == {
        "entries": [],
        "path": "/bare",
        "count": 0,
    }


def test_list_files_recursive_names_by_path_a_directory_before_its_contents(
    ws: agentfs.Workspace,
) -> None:
    tools = Toolset(ws, profile="mastra")
    data = call(tools, "workspace_list_files", path="/lib", recursive=True)[0]
    assert data["entries"] == [
        {"name": "sub", "type": "directory"},
        {"name": "sub/extra.json", "type": "file", "size": 3},
        {"name": "tally.py", "type": "file", "size": len(TOOL)},
    ]
    assert data["count"] == 3
    names = [e["name"] for e in call(tools, "workspace_list_files", recursive=True)[0]["entries"]]
    assert names == [
        "data",
        "data/config.json",
        "data/sample.csv",
        "hidden",
        "hidden/code.txt",
        "lib",
        "lib/sub",
        "lib/sub/extra.json",
        "lib/tally.py",
        "logs",
        "logs/shore.txt",
        "sketch.bin",
    ]


@pytest.mark.parametrize("extension", [".json", "json"])
def test_list_files_keeps_the_extension_asked_for(ws: agentfs.Workspace, extension: str) -> None:
    ws.mkdir("/data/old.json")  # a directory never matches
    tools = Toolset(ws, profile="mastra")
    flat = call(tools, "workspace_list_files", path="data", extension=extension)[0]
    assert flat["entries"] == [{"name": "config.json", "type": "file", "size": len(CONFIG)}]
    deep = call(tools, "workspace_list_files", recursive=True, extension=extension)[0]
    assert [e["name"] for e in deep["entries"]] == ["data/config.json", "lib/sub/extra.json"]
    assert deep["count"] == 2


def test_list_files_shows_a_symlink_as_its_target(ws: agentfs.Workspace) -> None:
    ws.mkdir("/links")
    ws.symlink("/logs/shore.txt", "/links/log")
    ws.symlink("../lib", "/links/code")
    ws.symlink("/nowhere.txt", "/links/gone")
    tools = Toolset(ws, profile="mastra")
    data = call(tools, "workspace_list_files", path="links", recursive=True)[0]
    assert data["entries"] == [
        {"name": "code", "type": "directory"},  # listed, not walked
        {"name": "gone", "type": "file"},  # dangling: no size
        {"name": "log", "type": "file", "size": len(LOG)},
    ]
    # a linked directory is listed when asked for by itself
    inside = call(tools, "workspace_list_files", path="links/code")[0]["entries"]
    assert [e["name"] for e in inside] == ["sub", "tally.py"]


def test_list_files_hides_what_the_policy_denies(ws: agentfs.Workspace) -> None:
    policy = Policy(defaults=ToolPolicy(deny=["/hidden/**", "*.csv"]))
    tools = Toolset(ws, profile="mastra", policy=policy)
    names = [e["name"] for e in call(tools, "workspace_list_files", recursive=True)[0]["entries"]]
    assert "hidden/code.txt" not in names and "data/sample.csv" not in names
    assert "data/config.json" in names and "logs/shore.txt" in names
    assert call(tools, "workspace_list_files", path="hidden")[0]["entries"] == []
    data = call(tools, "workspace_list_files", path="data")[0]
    assert [e["name"] for e in data["entries"]] == ["config.json"] and data["count"] == 1


def test_list_files_caps_its_entries_at_the_policys_max_results(ws: agentfs.Workspace) -> None:
    capped = Toolset(ws, profile="mastra", policy=Policy(limits=Limits(max_results=3)))
    data, text = call(capped, "workspace_list_files", recursive=True)
    assert [e["name"] for e in data["entries"]] == ["data", "data/config.json", "data/sample.csv"]
    assert data["count"] == 3 and data["truncated"] is True
    assert text.endswith("... only the first 3 entries are shown")
    # exactly as many entries as the cap: not truncated, and no key
    exact = call(capped, "workspace_list_files", path="data")[0]
    assert exact["count"] == 2 and "truncated" not in exact


def test_list_files_refuses_a_file_and_a_missing_path(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    code, message = error(tools, "workspace_list_files", path="lib/tally.py")
    assert code == "not_directory" and "workspace_read_file" in message
    assert error(tools, "workspace_list_files", path="attic")[0] == "not_found"
    assert error(tools, "workspace_list_files", path="../")[0] == "invalid_path"


# --- workspace_delete_file ----------------------------------------------------------------------


def test_delete_file_deletes_and_keeps_the_history(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    data, text = call(tools, "workspace_delete_file", path="logs/shore.txt")
    assert data == {"success": True, "path": "/logs/shore.txt"}
    assert text == "Deleted /logs/shore.txt (its versions stay in the history)."
    assert not ws.exists("/logs/shore.txt") and ws.stat("/logs").is_dir()
    history = ws.history("/logs/shore.txt")
    assert [v.op for v in history] == ["write", "delete"]
    assert ws.read_version("/logs/shore.txt", history[0].n) == LOG.encode()


def test_delete_file_removes_a_symlink_not_its_target(ws: agentfs.Workspace) -> None:
    ws.symlink("/lib", "/shortcut")
    tools = Toolset(ws, profile="mastra")
    call(tools, "workspace_delete_file", path="shortcut")
    assert not ws.exists("/shortcut") and ws.read("/lib/tally.py") == TOOL.encode()


def test_delete_file_missing_path_and_directory(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    code, message = error(tools, "workspace_delete_file", path="logs/river.txt")
    assert code == "not_found" and "force=true" in message
    data, text = call(tools, "workspace_delete_file", path="logs/river.txt", force=True)
    assert data == {"success": True, "path": "/logs/river.txt"}
    assert text == "/logs/river.txt did not exist; nothing to delete."
    code, message = error(tools, "workspace_delete_file", path="lib", force=True)
    assert code == "is_directory"
    assert ws.stat("/lib").is_dir() and ws.read("/lib/tally.py") == TOOL.encode()


# --- workspace_file_exists, workspace_mkdir -----------------------------------------------------


def test_file_exists_says_which(ws: agentfs.Workspace) -> None:
    ws.symlink("/data", "/data-link")
    ws.symlink("/missing.txt", "/dangling")
    tools = Toolset(ws, profile="mastra")
    exists = {
        path: call(tools, "workspace_file_exists", path=path)[0]
        for path in ["data/config.json", "data", "data-link", "dangling", "attic"]
    }
    assert exists == {
        "data/config.json": {"exists": True, "type": "file"},
        "data": {"exists": True, "type": "directory"},
        "data-link": {"exists": True, "type": "directory"},
        "dangling": {"exists": False, "type": "none"},
        "attic": {"exists": False, "type": "none"},
    }
    assert call(tools, "workspace_file_exists", path="attic")[1] == "nothing is there"
    assert call(tools, "workspace_file_exists", path="data")[1] == "a directory is there"


def test_mkdir_makes_parents_by_default(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    data, text = call(tools, "workspace_mkdir", path="a/b/c")
    assert data == {"success": True, "path": "/a/b/c"} and text == "Made /a/b/c/"
    assert ws.stat("/a/b/c").is_dir()
    # an existing directory is a success
    data, text = call(tools, "workspace_mkdir", path="/a/b")
    assert data == {"success": True, "path": "/a/b"} and text == "/a/b/ already exists."


def test_mkdir_without_recursive_needs_the_parent(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    code, message = error(tools, "workspace_mkdir", path="x/y", recursive=False)
    assert code == "not_found" and message.startswith("/x does not exist")
    assert not ws.exists("/x")
    call(tools, "workspace_mkdir", path="logs/2024", recursive=False)
    assert ws.stat("/logs/2024").is_dir()


def test_mkdir_over_a_file_is_refused(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    code, message = error(tools, "workspace_mkdir", path="lib/tally.py")
    assert code == "exists" and "is a file" in message
    assert ws.read("/lib/tally.py") == TOOL.encode()


# --- workspace_search, workspace_index ----------------------------------------------------------


@pytest.fixture
def notes(ws: agentfs.Workspace) -> agentfs.Workspace:
    ws.write("/notes/gulls.md", "Gulls circle the pier.\nThey steal chips.\n", parents=True)
    ws.write("/notes/crabs.md", "Crabs hide under rocks.\nA gull ate one.\n", parents=True)
    ws.write("/journal/day1.txt", "no gulls today, only fog\n", parents=True)
    ws.write("/hidden/gull-census.txt", "gulls counted: 40 gulls\n", parents=True)
    return ws


def test_search_gives_ranked_results_in_mastras_shape(notes: agentfs.Workspace) -> None:
    tools = Toolset(notes, profile="mastra")
    data, text = call(tools, "workspace_search", query="gulls pier chips")
    assert data["mode"] == "bm25"  # no vectors in this workspace
    assert data["count"] == len(data["results"]) >= 2
    top = data["results"][0]
    assert top == {
        "id": "/notes/gulls.md",
        "content": "Gulls circle the pier.\nThey steal chips.\n",
        "score": 1.0,
        "lineRange": {"start": 1, "end": 2},
    }
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    assert text.startswith("/notes/gulls.md:1-2 (score 1.00)")


def test_search_top_k_min_score_and_path(notes: agentfs.Workspace) -> None:
    tools = Toolset(notes, profile="mastra")
    every = call(tools, "workspace_search", query="gulls pier")[0]
    assert every["count"] == 4
    two = call(tools, "workspace_search", query="gulls pier", topK=2)[0]
    assert two["count"] == 2 and two["results"] == every["results"][:2]
    assert min(r["score"] for r in every["results"]) < 0.5  # bm25's scores, scaled to 0..1
    kept = call(tools, "workspace_search", query="gulls pier", minScore=0.5)[0]
    assert [r["id"] for r in kept["results"]] == ["/notes/gulls.md"] and kept["count"] == 1
    scoped = call(tools, "workspace_search", query="gulls pier", path="journal")[0]
    assert [r["id"] for r in scoped["results"]] == ["/journal/day1.txt"]
    assert error(tools, "workspace_search", query="gulls", topK=0)[0] == "invalid_argument"
    assert error(tools, "workspace_search", query="gulls", minScore=1.5)[0] == "invalid_argument"


def test_search_never_shows_a_denied_path(notes: agentfs.Workspace) -> None:
    plain = Toolset(notes, profile="mastra")
    ids = [r["id"] for r in call(plain, "workspace_search", query="gulls counted")[0]["results"]]
    assert "/hidden/gull-census.txt" in ids  # found when nothing denies it
    policy = Policy(defaults=ToolPolicy(deny=["/hidden/**"]))
    tools = Toolset(notes, profile="mastra", policy=policy)
    data, text = call(tools, "workspace_search", query="gulls counted", topK=100)
    assert data["count"] >= 1
    assert all(not r["id"].startswith("/hidden/") for r in data["results"])
    assert "gull-census" not in text and "40" not in text


def test_index_stores_the_content_as_the_file_and_search_finds_it(
    ws: agentfs.Workspace,
) -> None:
    tools = Toolset(ws, profile="mastra")
    data, text = call(
        tools, "workspace_index", path="kb/lamps.md", content="Lamp oil keeps the beacon lit."
    )
    assert data == {"success": True, "path": "/kb/lamps.md"}
    assert text.startswith("Indexed /kb/lamps.md (30 bytes)")
    assert ws.read("/kb/lamps.md") == b"Lamp oil keeps the beacon lit."
    assert METADATA_XATTR not in ws.listxattr("/kb/lamps.md")
    found = call(tools, "workspace_search", query="beacon lamp oil")[0]["results"]
    assert found[0]["id"] == "/kb/lamps.md"
    assert found[0]["content"] == "Lamp oil keeps the beacon lit."
    # indexing again replaces the file
    call(tools, "workspace_index", path="kb/lamps.md", content="Wicks need trimming.")
    assert ws.read("/kb/lamps.md") == b"Wicks need trimming."
    assert call(tools, "workspace_search", query="beacon")[0]["count"] == 0


def test_index_keeps_metadata_as_a_json_xattr(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    metadata = {"source": "keeper", "page": 7, "weight": 0.5, "draft": False, "tag": None}
    call(tools, "workspace_index", path="kb/fog.md", content="Fog horn at dusk.", metadata=metadata)
    assert json.loads(ws.getxattr("/kb/fog.md", METADATA_XATTR)) == metadata
    assert METADATA_XATTR == "user.mastra.metadata"
    assert error(
        tools, "workspace_index", path="kb/x.md", content="x", metadata={"deep": {"a": 1}}
    )[0] == ("invalid_argument")
    assert not ws.exists("/kb/x.md")


# --- workspace_execute_code, workspace_execute_command -------------------------------------------


def test_commands_need_approval_by_default(ws: agentfs.Workspace) -> None:
    tools = Toolset(ws, profile="mastra")
    code = error(
        tools, "workspace_execute_code", code="open('ran.txt', 'w').write('1')", runtime="python"
    )[0]
    assert code == "approval_denied"
    assert error(tools, "workspace_execute_command", command="touch ran.txt")[0] == (
        "approval_denied"
    )
    assert not ws.exists("/ran.txt")


@pytest.mark.parametrize(
    ("runtime", "code"),
    [
        ("bash", "sudo touch ran.txt"),
        ("bash", "rm -rf /"),
        ("shell", "su root"),
        ("python", "import os; os.system('shutdown now')"),
    ],
)
def test_the_command_denylist_is_checked_against_the_code(
    ws: agentfs.Workspace, runtime: str, code: str
) -> None:
    tools = approving(ws)
    got, message = error(tools, "workspace_execute_code", code=code, runtime=runtime)
    assert got == "denied" and "forbids" in message and "not run" in message
    assert not ws.exists("/ran.txt")


def test_the_policys_own_denylist_holds_for_code_and_commands(ws: agentfs.Workspace) -> None:
    policy = Policy(commands=CommandPolicy(deny=[r"\bcurl\b"]))
    tools = approving(ws, policy=policy)
    code = error(tools, "workspace_execute_code", code="curl example.org", runtime="bash")[0]
    assert code == "denied"
    command = error(tools, "workspace_execute_command", command="curl", args=["example.org"])[0]
    assert command == "denied"


def test_code_longer_than_one_argument_is_refused(ws: agentfs.Workspace) -> None:
    tools = approving(ws)
    big = "x = 1\n" * (MOST_LINE_BYTES // 6 + 1)
    assert len(big.encode()) > MOST_LINE_BYTES == 128 * 1024 - 1
    code, message = error(tools, "workspace_execute_code", code=big, runtime="python")
    assert code == "too_large" and "write long input to a file" in message
    assert ws.snapshots.list() == []  # refused before the run's snapshot
    assert error(tools, "workspace_execute_code", code="a\0b", runtime="bash")[0] == (
        "invalid_argument"
    )


@needs_mount
@pytest.mark.parametrize(
    ("runtime", "code"),
    [
        ("python", "import sys; print(sum([2, 3]))"),
        ("node", "console.log(2 + 3)"),
        ("bash", "echo $((2 + 3))"),
        ("shell", "expr 2 + 3"),
    ],
)
def test_execute_code_runs_each_runtime(ws: agentfs.Workspace, runtime: str, code: str) -> None:
    tools = approving(ws)
    data, text = call(tools, "workspace_execute_code", code=code, runtime=runtime)
    assert data["stdout"] == "5\n" and data["stderr"] == ""
    assert data["exitCode"] == 0 and data["success"] is True
    assert isinstance(data["executionTimeMs"], int) and data["executionTimeMs"] >= 0
    assert "exit code 0" in text


@needs_mount
def test_execute_code_reports_failure_and_writes_into_the_workspace(
    ws: agentfs.Workspace,
) -> None:
    tools = approving(ws)
    script = (
        "import sys\n"
        "rows = open('data/sample.csv').read().splitlines()\n"
        "open('data/rows.txt', 'w').write(str(len(rows)))\n"
        "sys.stderr.write('quitting\\n')\n"
        "sys.exit(4)\n"
    )
    data = call(tools, "workspace_execute_code", code=script, runtime="python")[0]
    assert data["exitCode"] == 4 and data["success"] is False
    assert data["stderr"] == "quitting\n"
    assert ws.read("/data/rows.txt") == b"2"


@needs_mount
def test_execute_code_times_out(ws: agentfs.Workspace) -> None:
    tools = approving(ws)
    data = call(
        tools,
        "workspace_execute_code",
        code="import time; print('start', flush=True); time.sleep(30)",
        runtime="python",
        timeout=500,
    )[0]
    assert data["exitCode"] == -9 and data["success"] is False
    assert data["stdout"] == "start\n"  # what it printed before it was killed


@needs_mount
def test_execute_command_quotes_its_args_and_runs_from_cwd(ws: agentfs.Workspace) -> None:
    tools = approving(ws)
    data = call(
        tools,
        "workspace_execute_command",
        command="printf '<%s>\\n'",
        args=["two words", "$HOME", "it's"],
    )[0]
    assert data["stdout"] == "<two words>\n<$HOME>\n<it's>\n" and data["success"] is True
    here = call(tools, "workspace_execute_command", command="cat tally.py; ls", cwd="lib")[0]
    assert here["stdout"] == TOOL + "sub\ntally.py\n"
    piped = call(tools, "workspace_execute_command", command="wc -l < logs/shore.txt")[0]
    assert piped["stdout"].strip() == "3"
    failed = call(tools, "workspace_execute_command", command="ls", args=["attic"])[0]
    assert failed["exitCode"] != 0 and failed["success"] is False and "attic" in failed["stderr"]


@needs_mount
def test_the_snapshot_of_a_run_undoes_it(ws: agentfs.Workspace) -> None:
    tools = approving(ws)
    data = call(
        tools,
        "workspace_execute_command",
        command="echo gone > logs/shore.txt && mkdir -p made && echo new > made/f.txt",
    )[0]
    assert data["success"] is True and isinstance(data["snapshot"], str)
    assert ws.read("/logs/shore.txt") == b"gone\n" and ws.exists("/made/f.txt")
    ws.snapshots.restore(data["snapshot"])
    assert ws.read("/logs/shore.txt") == LOG.encode()
    assert not ws.exists("/made")


# --- the audit, MCP -----------------------------------------------------------------------------


def test_calls_are_audited_under_the_profiles_names(ws: agentfs.Workspace) -> None:
    with Toolset(ws, profile="mastra") as tools:
        call(tools, "workspace_read_file", path="logs/shore.txt")
        call(tools, "workspace_write_file", path="a.txt", content="a")
        call(tools, "workspace_list_files")
        call(tools, "workspace_file_exists", path="a.txt")
        call(tools, "workspace_mkdir", path="m")
        call(tools, "workspace_search", query="heron")
        call(tools, "workspace_index", path="i.md", content="tern")
        call(tools, "workspace_delete_file", path="a.txt")
        error(tools, "workspace_delete_file", path="a.txt")
        error(tools, "workspace_execute_command", command="ls")
    for name in NAMES[:3] + NAMES[4:8]:
        assert len(ws.tool_calls.list(name=name)) == 1, name
    assert len(ws.tool_calls.list(name="workspace_delete_file")) == 2
    refused = ws.tool_calls.list(name="workspace_execute_command")
    assert len(refused) == 1 and refused[0].parameters == {"command": "ls"}
    assert refused[0].error is not None and "approval_denied" in refused[0].error
    written = ws.tool_calls.list(name="workspace_write_file")[0]
    assert written.parameters == {"path": "a.txt", "content": "a"} and written.error is None
    # recorded under the profile's names, not the ruling tools'
    for ruler in ["read_file", "ls", "stat", "delete_file", "workspace_index_content"]:
        assert not ws.tool_calls.list(name=ruler), ruler


@pytest.mark.anyio
async def test_served_over_mcp_under_its_names(ws: agentfs.Workspace, tmp_path: Path) -> None:
    ws.close()
    with anyio.fail_after(60):
        async with served(tmp_path / "ws.db", "mastra") as session:
            listed = (await session.list_tools()).tools
            assert [t.name for t in listed] == NAMES
            schema = {t.name: t.input_schema for t in listed}
            assert schema["workspace_read_file"]["required"] == ["path"]
            assert {"topK", "minScore"} <= set(schema["workspace_search"]["properties"])
            got = await session.call_tool("workspace_read_file", {"path": "logs/shore.txt"})
            assert got.content[0].text == LOG  # type: ignore[union-attr]
            assert got.structured_content == {
                "content": LOG,
                "size": len(LOG),
                "path": "/logs/shore.txt",
            }
            out = await session.call_tool("workspace_file_exists", {"path": "../x"})
            assert out.is_error
