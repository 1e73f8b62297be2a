"""The agent tools through ``Toolset.call``: every tool's success path and its documented
errors, results that are JSON and match their output schemas, ``edit_file`` against
``str.replace``, and random tool sequences against a plain directory."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.tools import Policy, Toolset, catalog
from agentfs.tools.errors import ERROR_CODES
from agentfs.tools.export import anthropic_tool, json_schema, mcp_output_schema, openai_tool
from tests.trees import host_tree, workspace_tree

APP = "".join(f"line {i}\n" for i in range(1, 11))


@pytest.fixture
def tools(ws: agentfs.Workspace) -> Toolset:
    ws.write("/src/app.py", APP, parents=True)
    ws.write("/src/util.py", "def util():\n    return 'util'\n")
    ws.write("/bin.dat", b"\x89PNG\r\n\x1a\n" + bytes(100))
    return Toolset(ws, thread="t1", actor="agent")


def ok(tools: Toolset, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool that must succeed; its result must be JSON, valid for its schema, and
    what the output model dumps (an output's own ``data()`` must not drift from its model)."""
    called = tools.invoke(name, arguments)
    result = called.data
    assert "error" not in result, result
    assert called.output is not None
    assert result == called.output.model_dump(mode="json")
    spec = catalog.find(name)
    assert spec is not None
    for schema in (json_schema(spec.output), mcp_output_schema(spec.output)):
        jsonschema.validate(json.loads(json.dumps(result)), schema)
    return result


def code(tools: Toolset, name: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must fail; its error code (checked to be documented)."""
    result = tools.call(name, arguments)
    assert set(result) == {"error"}, result
    assert result["error"]["code"] in ERROR_CODES
    assert result["error"]["message"]
    return str(result["error"]["code"])


# --- listing --------------------------------------------------------------------------------


def test_ls_list_tree_and_stat(tools: Toolset) -> None:
    listing = ok(tools, "ls", {"path": "/"})
    assert [(e["name"], e["type"]) for e in listing["entries"]] == [
        ("bin.dat", "file"),
        ("src", "directory"),
    ]
    assert listing["entries"][0]["size"] == 108
    assert listing["entries"][0]["modified"].endswith("Z")
    tree = ok(tools, "list_tree", {"path": "/", "max_depth": 1})
    assert (
        tree["tree"] == "/\n  bin.dat\n  src/ ...\n(directories marked ... hold more below depth 1)"
    )
    assert ok(tools, "list_files", {})["tree"].endswith("    util.py")  # the alias
    stat = ok(tools, "stat", {"path": "src/app.py"})  # relative paths are from the root
    assert (stat["type"], stat["size"], stat["mode"], stat["version"]) == ("file", 71, "0644", 1)
    tools.ws.symlink("/src/app.py", "/link")
    assert ok(tools, "stat", {"path": "/link"})["target"] == "/src/app.py"
    assert code(tools, "ls", {"path": "/nope"}) == "not_found"
    assert code(tools, "ls", {"path": "/bin.dat"}) == "not_directory"
    assert code(tools, "stat", {"path": "/nope"}) == "not_found"


def test_listings_are_capped_with_a_marker(ws: agentfs.Workspace) -> None:
    for i in range(30):
        ws.write(f"/many/f{i:02}.txt", "x", parents=True)
    tools = Toolset(ws, policy=Policy.model_validate({"limits": {"max_results": 10}}))
    listing = ok(tools, "ls", {"path": "/many"})
    assert len(listing["entries"]) == 10 and listing["truncated"]
    tree = ok(tools, "list_tree", {"path": "/many"})
    assert tree["truncated"] and len(tree["entries"]) <= 10
    assert "truncated" in tools.invoke("list_tree", {"path": "/many"}).text


# --- reading --------------------------------------------------------------------------------


def test_read_file_numbers_pages_and_tracks(tools: Toolset) -> None:
    page = ok(tools, "read_file", {"path": "/src/app.py", "offset": 3, "limit": 2})
    assert page["content"] == "     3\tline 3\n     4\tline 4"
    assert (page["total_lines"], page["line_range"], page["truncated"]) == (10, [3, 4], True)
    assert page["next_offset"] == 5
    text = tools.invoke("read_file", {"path": "/src/app.py", "limit": 2}).text
    assert text.endswith("... truncated: lines 1-2 of 10 shown; call read_file with offset=3")
    whole = ok(tools, "read_file", {"path": "/src/app.py"})
    assert not whole["truncated"] and whole["next_offset"] is None
    by_bytes = ok(tools, "read_file", {"path": "/src/app.py", "max_bytes": 20})
    assert by_bytes["truncated"] and by_bytes["line_range"][1] < 10
    reads = tools.ws.reads_log("t1")
    assert [r.path for r in reads] == ["/src/app.py"]  # every read is a tracked read
    assert code(tools, "read_file", {"path": "/src/app.py", "offset": 0}) == "invalid_argument"
    past = tools.call("read_file", {"path": "/src/app.py", "offset": 50})
    assert past["error"]["code"] == "invalid_argument"
    assert past["error"]["message"].endswith("it has 10 lines")


def numbered_page(text: str, offset: int, limit: int, max_bytes: int) -> tuple[str, int]:
    """The reference for read_file's page: one row at a time, as ``cat -n`` would number
    them, kept while they fit in ``max_bytes`` (each row's bytes and a newline); a first row
    that does not fit alone is cut to fit, on a character boundary, with the cut marker."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    rows: list[str] = []
    used = 0
    for number in range(offset, min(offset + limit, len(lines) + 1)):
        row = f"{number:>6}\t{lines[number - 1]}"
        cost = len(row.encode("utf-8")) + 1
        if rows and used + cost > max_bytes:
            break
        if not rows and cost > max_bytes:
            line = lines[number - 1]
            budget = max(0, max_bytes - len(f"{number:>6}\t") - 1)
            kept = line.encode("utf-8")[:budget].decode("utf-8", "ignore")
            marker = (
                f"... [line cut at character {len(kept):,} of {len(line):,}; read on with"
                f" offset={number}, column={len(kept) + 1}]"
                if len(kept) < len(line)
                else ""
            )
            row = f"{number:>6}\t{kept}{marker}"
        rows.append(row)
        used += cost
    return "\n".join(rows), len(rows)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(alphabet="ab \n\té中", min_size=1, max_size=300).filter(lambda t: t != "\n"),
    offset=st.integers(1, 40),
    limit=st.integers(1, 40),
    max_bytes=st.integers(1, 400),
)
def test_read_file_pages_agree_with_numbering_one_row_at_a_time(
    ws: agentfs.Workspace, text: str, offset: int, limit: int, max_bytes: int
) -> None:
    ws.write("/f.txt", text)
    result = Toolset(ws).call(
        "read_file", {"path": "/f.txt", "offset": offset, "limit": limit, "max_bytes": max_bytes}
    )
    total = len(text.split("\n")) - text.endswith("\n")
    if offset > total:
        assert result["error"]["code"] == "invalid_argument"
        return
    content, shown = numbered_page(text, offset, limit, max_bytes)
    last = offset + shown - 1
    assert result["content"] == content
    assert (result["total_lines"], result["line_range"]) == (total, [offset, last])
    assert result["truncated"] == (last < total)
    assert result["next_offset"] == (last + 1 if last < total else None)


def test_read_file_cuts_long_lines_describes_binary_and_reads_versions(tools: Toolset) -> None:
    line = "".join(f"{i:05d}" for i in range(1000))  # 5,000 characters
    tools.ws.write("/long.txt", line + "\nshort\n")
    long = ok(tools, "read_file", {"path": "/long.txt"})
    cut = "... [line cut at character 2,000 of 5,000; read on with offset=1, column=2001]"
    assert long["content"] == f"     1\t{line[:2000]}{cut}\n     2\tshort"
    pieces, column = [], 1
    while True:  # the marker says where to read on, to the end of the line
        row = ok(tools, "read_file", {"path": "/long.txt", "limit": 1, "column": column})
        text = row["content"].split("\t", 1)[1]
        piece, _, rest = text.partition("... [line cut at character ")
        pieces.append(piece)
        if not rest:
            break
        column = int(rest.split("column=")[1].rstrip("]"))
    assert "".join(pieces) == line and len(pieces) == 3
    past = tools.call("read_file", {"path": "/long.txt", "offset": 2, "column": 7})
    assert past["error"]["code"] == "invalid_argument" and "has 5 characters" in str(past)
    binary = ok(tools, "read_file", {"path": "/bin.dat"})
    assert (binary["binary"], binary["mime"], binary["content"]) == (True, "image/png", "")
    assert (
        "binary file (108 bytes, image/png)" in tools.invoke("read_file", {"path": "/bin.dat"}).text
    )
    tools.ws.write("/src/app.py", "new\n")
    old = ok(tools, "read_file", {"path": "/src/app.py", "version": 1})
    assert old["content"].startswith("     1\tline 1")
    assert code(tools, "read_file", {"path": "/src/app.py", "version": 9}) == "not_found"
    assert code(tools, "read_file", {"path": "/src"}) == "is_directory"
    empty = tools.ws.write("/empty", "")
    assert empty.st_size == 0
    assert tools.invoke("read_file", {"path": "/empty"}).text == "/empty is empty (0 lines)."


def test_read_multiple_files_reports_each(tools: Toolset) -> None:
    both = ok(tools, "read_multiple_files", {"paths": ["/src/util.py", "/nope", "/src"]})
    first, missing, directory = both["files"]
    assert first["content"].startswith("     1\tdef util():")
    assert missing["error"]["code"] == "not_found"
    assert directory["error"]["code"] == "is_directory"


# --- writing --------------------------------------------------------------------------------


def test_write_and_create(tools: Toolset) -> None:
    written = ok(tools, "write_file", {"path": "/docs/new/readme.md", "content": "hi\n"})
    assert (written["created"], written["version"]) == (True, 1)
    assert tools.ws.read("/docs/new/readme.md") == b"hi\n"
    assert code(tools, "write_file", {"path": "/src/app.py", "content": "x"}) == "exists"
    replaced = ok(tools, "write_file", {"path": "/src/app.py", "content": "x", "overwrite": True})
    assert replaced["created"] is False and tools.ws.read("/src/app.py") == b"x"
    args = {"path": "/nodir/a.txt", "content": "x", "create_parent_dirs": False}
    assert code(tools, "write_file", args) == "not_found"
    assert code(tools, "write_file", {"path": "/src", "content": "x"}) == "is_directory"
    for overwrite in (False, True):
        for parents in (False, True):
            root = {"path": "/", "content": "x", "overwrite": overwrite}
            assert code(tools, "write_file", {**root, "create_parent_dirs": parents}) == (
                "is_directory"
            )
    assert ok(tools, "create_file", {"path": "/c.txt"})["size"] == 0
    again = tools.call("create_file", {"path": "/c.txt", "content": "again"})["error"]
    assert again["code"] == "exists" and "overwrite" not in again["message"].split("write_file")[0]
    assert "write_file and overwrite=true" in again["message"]  # an argument it can take
    assert code(tools, "write_file", {"path": "/bin.dat/x", "content": "x"}) == "not_directory"


def test_write_file_through_symlinks(tools: Toolset) -> None:
    """What ``write_file`` finds through a symlink: a dangling one is followed and its
    target created (overwrite or not); one to a directory is a directory; one to a file is
    that file, which only overwrite replaces."""
    ws = tools.ws
    ws.symlink("made.txt", "/dangling")
    ws.symlink("src", "/to_dir")
    ws.symlink("src/app.py", "/to_file")
    made = ok(tools, "write_file", {"path": "/dangling", "content": "m"})
    assert made["created"] is True and ws.read("/made.txt") == b"m"
    for overwrite in (False, True):
        args = {"path": "/to_dir", "content": "x", "overwrite": overwrite}
        assert code(tools, "write_file", args) == "is_directory"
    assert code(tools, "write_file", {"path": "/to_file", "content": "x"}) == "exists"
    replaced = ok(tools, "write_file", {"path": "/to_file", "content": "x", "overwrite": True})
    assert replaced["created"] is False and ws.read("/src/app.py") == b"x"
    assert ws.lstat("/to_file").is_symlink() and ws.lstat("/dangling").is_symlink()


def test_expected_version_is_optimistic_concurrency(tools: Toolset) -> None:
    seen = ok(tools, "read_file", {"path": "/src/app.py"})["version"]
    tools.ws.actor, tools.ws.thread = "reviewer", "t2"
    tools.ws.write("/src/app.py", APP + "line 11\n")  # someone else moves it on
    before = tools.ws.read("/src/app.py")
    for name, args in [
        ("edit_file", {"path": "/src/app.py", "old_string": "line 1\n", "new_string": "x\n"}),
        ("write_file", {"path": "/src/app.py", "content": "x", "overwrite": True}),
        (
            "multi_edit",
            {"path": "/src/app.py", "edits": [{"old_string": "line 2", "new_string": "y"}]},
        ),
        ("delete_file", {"path": "/src/app.py"}),
    ]:
        result = tools.call(name, {**args, "expected_version": seen})
        assert result["error"]["code"] == "stale_read", (name, result)
        message = result["error"]["message"]
        assert f"version {seen}, now {seen + 1} by reviewer/t2" in message
        assert "read_file again" in message
    assert tools.ws.read("/src/app.py") == before
    fresh = ok(tools, "read_file", {"path": "/src/app.py"})["version"]
    args = {"path": "/src/app.py", "old_string": "line 11", "new_string": "eleven"}
    assert ok(tools, "edit_file", {**args, "expected_version": fresh})["version"] == fresh + 1


def test_edit_file(tools: Toolset) -> None:
    edit = ok(
        tools,
        "edit_file",
        {"path": "/src/app.py", "old_string": "line 1\n", "new_string": "LINE 1\n"},
    )
    assert edit["replacements"] == 1 and "-line 1\n+LINE 1\n" in edit["diff"]
    dry = ok(
        tools,
        "edit_file",
        {"path": "/src/app.py", "old_string": "line 2", "new_string": "two", "dry_run": True},
    )
    assert "+two" in dry["diff"] and b"two" not in tools.ws.read("/src/app.py")
    not_unique = tools.call(
        "edit_file", {"path": "/src/app.py", "old_string": "line", "new_string": "L"}
    )
    assert not_unique["error"]["code"] == "not_unique"
    assert not_unique["error"]["details"]["lines"] == [2, 3, 4, 5, 6, 7, 8, 9, 10]
    every = ok(
        tools,
        "edit_file",
        {"path": "/src/app.py", "old_string": "line", "new_string": "L", "replace_all": True},
    )
    assert every["replacements"] == 9
    miss = tools.call("edit_file", {"path": "/src/app.py", "old_string": "L 33", "new_string": "x"})
    assert miss["error"]["code"] == "no_match"
    assert "closest" in miss["error"]["details"] and "L 3" in miss["error"]["message"]
    same = {"path": "/src/app.py", "old_string": "L 3", "new_string": "L 3"}
    assert code(tools, "edit_file", same) == "invalid_argument"
    assert (
        code(tools, "edit_file", {"path": "/bin.dat", "old_string": "PNG", "new_string": "x"})
        == "invalid_argument"
    )
    assert (
        code(tools, "edit_file", {"path": "/nope", "old_string": "a", "new_string": "b"})
        == "not_found"
    )


def test_multi_edit_is_all_or_nothing(tools: Toolset) -> None:
    before = tools.ws.read("/src/app.py")
    edits = [
        {"old_string": "line 2\n", "new_string": "two\n"},
        {"old_string": "zzz", "new_string": "q"},
    ]
    result = tools.call("multi_edit", {"path": "/src/app.py", "edits": edits})
    assert result["error"]["code"] == "no_match" and "edit 2" in result["error"]["message"]
    assert tools.ws.read("/src/app.py") == before
    edits = [
        {"old_string": "line 2\n", "new_string": "two\n"},
        {"old_string": "two\nline 3", "new_string": "two-three"},  # sees the first edit
    ]
    done = ok(tools, "multi_edit", {"path": "/src/app.py", "edits": edits})
    assert tools.ws.read("/src/app.py").startswith(b"line 1\ntwo-three\n")
    assert done["version"] == 2  # one version for the whole call
    assert code(tools, "multi_edit", {"path": "/src/app.py", "edits": []}) == "invalid_argument"


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(alphabet="ab\n c", max_size=40),
    old=st.text(alphabet="ab\n c", min_size=1, max_size=4),
    new=st.text(alphabet="xy\n", max_size=4),
    replace_all=st.booleans(),
)
def test_edit_file_agrees_with_str_replace(
    ws: agentfs.Workspace, text: str, old: str, new: str, replace_all: bool
) -> None:
    ws.write("/f.txt", text)
    tools = Toolset(ws)
    result = tools.call(
        "edit_file",
        {"path": "/f.txt", "old_string": old, "new_string": new, "replace_all": replace_all},
    )
    count = text.count(old)
    if old == new:
        assert result["error"]["code"] == "invalid_argument"
    elif count == 0:
        assert result["error"]["code"] == "no_match"
    elif count > 1 and not replace_all:
        assert result["error"]["code"] == "not_unique"
    else:
        assert result["replacements"] == count
        assert ws.read("/f.txt").decode() == text.replace(old, new)
        return
    assert ws.read("/f.txt").decode() == text  # a failed edit changes nothing


# --- the namespace ------------------------------------------------------------------------------


def test_delete_mkdir_rmdir_move_copy(tools: Toolset) -> None:
    assert ok(tools, "mkdir", {"path": "/a/b"})["created"]
    assert ok(tools, "mkdir", {"path": "/a/b"})["created"] is False  # already there
    assert code(tools, "mkdir", {"path": "/x/y", "recursive": False}) == "not_found"
    assert code(tools, "mkdir", {"path": "/bin.dat"}) == "exists"
    assert code(tools, "rmdir", {"path": "/a"}) == "not_empty"
    assert code(tools, "rmdir", {"path": "/bin.dat"}) == "not_directory"
    ok(tools, "rmdir", {"path": "/a", "recursive": True})
    assert not tools.ws.exists("/a")
    assert code(tools, "delete_file", {"path": "/src"}) == "is_directory"
    assert code(tools, "delete_file", {"path": "/nope"}) == "not_found"
    ok(tools, "copy_file", {"source": "/src", "destination": "/src2", "recursive": True})
    assert tools.ws.read("/src2/app.py") == APP.encode()
    assert code(tools, "copy_file", {"source": "/src", "destination": "/src3"}) == "is_directory"
    assert (
        code(tools, "copy_file", {"source": "/src/app.py", "destination": "/bin.dat"}) == "exists"
    )
    ok(tools, "copy_file", {"source": "/src/app.py", "destination": "/bin.dat", "overwrite": True})
    assert (
        code(tools, "move_file", {"source": "/src2/app.py", "destination": "/bin.dat"}) == "exists"
    )
    ok(tools, "move_file", {"source": "/src2/app.py", "destination": "/moved/app.py"})
    assert tools.ws.read("/moved/app.py") == APP.encode()
    ok(
        tools,
        "move_file",
        {"source": "/moved/app.py", "destination": "/bin.dat", "overwrite": True},
    )
    assert code(tools, "move_file", {"source": "/nope", "destination": "/x"}) == "not_found"
    assert (
        code(tools, "move_file", {"source": "/src", "destination": "/src/inside"})
        == "invalid_argument"
    )
    ok(tools, "delete_file", {"path": "/src2", "recursive": True})
    assert not tools.ws.exists("/src2")


@pytest.mark.parametrize(
    ("path", "lands_at"),
    [
        ("/../../etc/passwd", "/etc/passwd"),
        ("../outside", "/outside"),
        ("/src/../../../bin.dat", "/bin.dat"),
        ("a\0b", None),
        ("/" + "n" * 256, None),
        ("/src/" + "p/" * 33000, None),
    ],
)
def test_bad_paths_never_escape_and_change_nothing(
    tools: Toolset, tmp_path: Path, path: str, lands_at: str | None
) -> None:
    host_before = sorted(p.name for p in tmp_path.iterdir())
    before = workspace_tree(tools.ws)
    result = tools.call("write_file", {"path": path, "content": "x", "overwrite": True})
    if lands_at is None:  # NUL, a name over 255 bytes, a path over 65,535: refused
        assert result["error"]["code"] == "invalid_path"
        assert len(result["error"]["message"]) < 300
        assert workspace_tree(tools.ws) == before
    else:  # `..` stops at the root, as in a chroot: the write lands inside the workspace
        assert result["path"] == lands_at
        assert tools.ws.read(lands_at) == b"x"
    assert sorted(p.name for p in tmp_path.iterdir()) == host_before


# --- finding ------------------------------------------------------------------------------------


def test_glob_is_newest_first_and_paged(ws: agentfs.Workspace) -> None:
    for i in range(5):
        ws.write(f"/g/f{i}.txt", "x", parents=True)
        ws.utime(f"/g/f{i}.txt", (i * 10**9, i * 10**9))
    tools = Toolset(ws)
    first = ok(tools, "glob", {"pattern": "**/*.txt", "limit": 2})
    assert [m["path"] for m in first["matches"]] == ["/g/f4.txt", "/g/f3.txt"]
    assert (first["total"], first["truncated"], first["next_offset"]) == (5, True, 2)
    rest = ok(tools, "glob", {"pattern": "*.txt", "path": "/g", "offset": 4})
    assert [m["path"] for m in rest["matches"]] == ["/g/f0.txt"] and not rest["truncated"]
    assert code(tools, "glob", {"pattern": "a\0b"}) == "invalid_argument"


def test_grep_modes_context_and_paging(tools: Toolset) -> None:
    files = ok(tools, "grep", {"pattern": "line [23]"})
    assert files["files"] == ["/src/app.py"] and files["mode"] == "files_with_matches"
    content = ok(tools, "grep", {"pattern": "line [23]", "output_mode": "content"})
    assert [(h["line"], h["content"]) for h in content["lines"]] == [(2, "line 2"), (3, "line 3")]
    assert (
        "/src/app.py:2:line 2"
        in tools.invoke("grep", {"pattern": "line 2", "output_mode": "content"}).text
    )
    counted = ok(tools, "grep", {"pattern": "line", "output_mode": "count"})
    assert counted["counts"] == {"/src/app.py": 10}
    around = ok(tools, "grep", {"pattern": "line 5$", "output_mode": "content", "context": 1})
    assert [(h["line"], h["match"]) for h in around["lines"]] == [(4, False), (5, True), (6, False)]
    paged = ok(
        tools, "grep", {"pattern": "line", "output_mode": "content", "head_limit": 3, "offset": 3}
    )
    assert [h["line"] for h in paged["lines"]] == [4, 5, 6] and paged["next_offset"] == 6
    insensitive = ok(
        tools, "grep", {"pattern": "LINE 1$", "case_insensitive": True, "output_mode": "count"}
    )
    assert insensitive["counts"] == {"/src/app.py": 1}
    fixed = ok(
        tools, "grep", {"pattern": "util()", "fixed_strings": True, "glob": "*.py", "path": "/src"}
    )
    assert fixed["files"] == ["/src/util.py"]
    multi = ok(tools, "grep", {"pattern": "util\\(\\):\\n\\s+return", "multiline": True})
    assert multi["files"] == ["/src/util.py"]
    hang = ok(tools, "grep", {"pattern": "(a+)+$", "output_mode": "count"})
    assert hang["counts"] == {}
    backref = tools.call("grep", {"pattern": "(a)\\1"})
    assert backref["error"]["code"] == "invalid_argument"
    assert "backreference" in backref["error"]["message"]
    assert code(tools, "grep", {"pattern": "x", "path": "/nope"}) == "not_found"


def test_search_files_by_name_or_content(tools: Toolset) -> None:
    names = ok(tools, "search_files", {"path": "/", "pattern": "*.py"})
    assert sorted(names["paths"]) == ["/src/app.py", "/src/util.py"]  # at any depth
    content = ok(
        tools, "search_files", {"path": "/src", "pattern": "return", "content_search": True}
    )
    assert content["paths"] == ["/src/util.py"]


def test_workspace_search_index_and_index_content(tools: Toolset) -> None:
    index = ok(tools, "workspace_index", {})
    states = {f["path"]: f["state"] for f in index["files"]}
    assert states == {"/bin.dat": "binary", "/src/app.py": "text", "/src/util.py": "text"}
    added = ok(
        tools,
        "workspace_index_content",
        {"path": "/notes/meeting.md", "content": "We chose SQLite for the workspace store."},
    )
    assert added["searchable"]
    found = ok(tools, "workspace_search", {"query": "which store did we choose", "top_k": 3})
    assert found["hits"][0]["path"] == "/notes/meeting.md"
    assert found["mode"] == "bm25" and "note" not in found  # no vectors: keywords, quietly
    asked = ok(tools, "workspace_search", {"query": "which store", "mode": "hybrid"})
    assert asked["mode"] == "bm25" and "bm25" in asked["note"]  # asked for more: said so
    hit = found["hits"][0]
    assert 0 < hit["score"] <= 1 and hit["line_range"] == [1, 1] and "SQLite" in hit["content"]
    assert code(tools, "workspace_search", {"query": ""}) == "invalid_argument"
    assert code(tools, "workspace_search", {"query": "x", "top_k": 0}) == "invalid_argument"


# --- history and snapshots ------------------------------------------------------------------


def test_history_diff_and_restore(tools: Toolset) -> None:
    ok(tools, "edit_file", {"path": "/src/app.py", "old_string": "line 1\n", "new_string": "one\n"})
    history = ok(tools, "file_history", {"path": "/src/app.py"})
    assert [(v["version"], v["actor"], v["thread"]) for v in history["versions"]] == [
        (1, None, None),
        (2, "agent", "t1"),
    ]
    diff = ok(tools, "file_diff", {"path": "/src/app.py"})
    assert "-line 1\n+one\n" in diff["diff"]
    assert "-line 1" in ok(tools, "file_diff", {"path": "/src/app.py", "a": 1, "b": 2})["diff"]
    restored = ok(tools, "restore_version", {"path": "/src/app.py", "version": 1})
    assert (restored["restored"], restored["version"]) == (1, 3)
    assert tools.ws.read("/src/app.py") == APP.encode()
    assert code(tools, "restore_version", {"path": "/src/app.py", "version": 42}) == "not_found"
    assert ok(tools, "file_history", {"path": "/never"})["versions"] == []


@pytest.mark.parametrize("n", [2**63, 2**70, -(2**63) - 1, -1])
@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", lambda n: {"path": "/src/app.py", "version": n}),
        ("file_diff", lambda n: {"path": "/src/app.py", "a": n}),
        ("file_diff", lambda n: {"path": "/src/app.py", "a": 1, "b": n}),
        ("restore_version", lambda n: {"path": "/src/app.py", "version": n}),
        ("write_file", lambda n: {"path": "/src/app.py", "content": "x", "expected_version": n}),
        ("delete_file", lambda n: {"path": "/src/app.py", "expected_version": n}),
        (
            "edit_file",
            lambda n: {
                "path": "/src/app.py",
                "old_string": "line 1\n",
                "new_string": "one\n",
                "expected_version": n,
            },
        ),
        (
            "multi_edit",
            lambda n: {
                "path": "/src/app.py",
                "edits": [{"old_string": "line 1\n", "new_string": "one\n"}],
                "expected_version": n,
            },
        ),
        (
            "apply_patch",
            lambda n: {
                "patch": "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-line 1\n+one\n",
                "expected_versions": {"/src/app.py": n},
            },
        ),
    ],
)
def test_a_version_number_out_of_range_is_an_invalid_argument(
    tools: Toolset, name: str, arguments: Any, n: int
) -> None:
    """Past SQLite's 64-bit integers, or below what a version can be: refused by the tool's
    model as invalid_argument (not an internal error from inside SQLite), nothing changed."""
    before = (tools.ws.read("/src/app.py"), tools.ws.history("/src/app.py"))
    assert code(tools, name, arguments(n)) == "invalid_argument"
    assert (tools.ws.read("/src/app.py"), tools.ws.history("/src/app.py")) == before


def test_snapshots(tools: Toolset) -> None:
    made = ok(tools, "snapshot_create", {"name": "before"})
    assert (made["name"], made["thread"], made["files"]) == ("before", "t1", 3)
    assert code(tools, "snapshot_create", {"name": "before"}) == "exists"
    ok(tools, "write_file", {"path": "/new.txt", "content": "x"})
    ok(tools, "delete_file", {"path": "/src/util.py"})
    diff = ok(tools, "snapshot_diff", {"name": "before"})
    assert ok(tools, "snapshot_diff", {"a": "before"}) == diff  # the deprecated name
    assert (diff["added"], diff["removed"]) == (["/new.txt"], ["/src/util.py"])
    assert [s["name"] for s in ok(tools, "snapshot_list", {})["snapshots"]] == ["before"]
    back = ok(tools, "snapshot_restore", {"name": "before"})
    assert back["undo"] and not tools.ws.exists("/new.txt") and tools.ws.exists("/src/util.py")
    assert code(tools, "snapshot_restore", {"name": "never"}) == "not_found"
    assert code(tools, "snapshot_diff", {"name": "never"}) == "not_found"
    assert code(tools, "snapshot_diff", {"name": "before", "a": "before"}) == "invalid_argument"


# --- key-value --------------------------------------------------------------------------------


def test_kv(tools: Toolset) -> None:
    assert ok(tools, "kv_set", {"key": "plan", "value": {"step": 1}})["created"]
    assert ok(tools, "kv_set", {"key": "plan", "value": {"step": 2}})["created"] is False
    assert ok(tools, "kv_get", {"key": "plan"})["value"] == {"step": 2}
    ok(tools, "kv_set", {"key": "other", "value": [1, "two"]})
    assert [e["key"] for e in ok(tools, "kv_list", {"prefix": "pl"})["entries"]] == ["plan"]
    assert ok(tools, "kv_delete", {"key": "plan"})["deleted"]
    assert code(tools, "kv_get", {"key": "plan"}) == "not_found"
    assert ok(tools, "kv_delete", {"key": "plan"})["deleted"] is False  # idempotent


# --- the dispatcher -----------------------------------------------------------------------------


def test_unknown_tools_and_bad_arguments(tools: Toolset) -> None:
    assert code(tools, "nope", {}) == "unknown_tool"
    bad = tools.call("read_file", {"pth": "/x"})
    assert bad["error"]["code"] == "invalid_argument"
    assert "path: Field required" in bad["error"]["message"] and "pth" in bad["error"]["message"]
    assert code(tools, "read_file", '{"path": ') == "invalid_argument"  # broken JSON text
    assert ok(tools, "stat", '{"path": "/src"}')["type"] == "directory"  # JSON text is fine
    assert code(tools, "read_file", {"path": 7}) == "invalid_argument"


def test_every_call_is_audited_and_linked_to_what_it_wrote(tools: Toolset) -> None:
    ok(tools, "read_file", {"path": "/src/app.py"})
    edit = tools.invoke(
        "edit_file", {"path": "/src/app.py", "old_string": "line 1\n", "new_string": "one\n"}
    )
    assert edit.versions == [("/src/app.py", 2)]
    code(tools, "edit_file", {"path": "/src/app.py", "old_string": "zzz", "new_string": "q"})
    tools.flush()
    writer = tools.ws.tool_calls.writer("/src/app.py", 2)
    assert writer is not None and tools.ws.tool_calls.writes(writer.id) == edit.versions
    assert writer.name == "edit_file" and writer.parameters["new_string"] == "one\n"
    calls = {c.name: c for c in tools.ws.tool_calls.list()}
    assert set(calls) == {"read_file", "edit_file"}
    failed = [c for c in tools.ws.tool_calls.list() if c.error is not None]
    assert len(failed) == 1 and json.loads(failed[0].error)["code"] == "no_match"


def test_exported_schemas_are_valid_in_both_formats(tools: Toolset) -> None:
    openai, anthropic = tools.openai_tools(), tools.anthropic_tools()
    assert [t["function"]["name"] for t in openai] == [t["name"] for t in anthropic]
    for spec in catalog.all_tools():
        for schema in (
            openai_tool(spec)["function"]["parameters"],
            anthropic_tool(spec)["input_schema"],
        ):
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object" and "$ref" not in json.dumps(schema)
        jsonschema.Draft202012Validator.check_schema(json_schema(spec.output))
        assert spec.description and spec.title


def test_openai_strict_mode_and_the_responses_api(tools: Toolset) -> None:
    """``openai_tools(api="responses", strict=True)``: the flat Responses API entries, their
    parameters in the strict form OpenAI checks (the Agents SDK's own checker leaves each
    unchanged), and a model's arguments in that form called with ``invoke(strict=True)``."""
    from agents.strict_schema import ensure_strict_json_schema

    responses = tools.openai_tools(api="responses", strict=True)
    chat = tools.openai_tools(strict=True)
    assert [t["name"] for t in responses] == [t["function"]["name"] for t in chat]
    for flat, nested in zip(responses, chat, strict=True):
        assert flat["type"] == "function" and flat["strict"] is True
        assert nested["function"]["strict"] is True
        assert flat["parameters"] == nested["function"]["parameters"]
        parameters = json.loads(json.dumps(flat["parameters"]))
        assert ensure_strict_json_schema(parameters) == flat["parameters"], flat["name"]
        properties = flat["parameters"]["properties"]
        assert sorted(flat["parameters"]["required"]) == sorted(properties)
    plain = tools.openai_tools(api="responses")
    assert "strict" in plain[0] and plain[0]["strict"] is False
    assert plain[0]["parameters"] == json_schema(catalog.all_tools()[0].input)
    # a strict model sends every argument, null where it means the default
    nulls = {"path": "/src/app.py", "offset": None, "limit": None, "column": None}
    nulls |= {"max_bytes": None, "version": None}
    strict = tools.invoke("read_file", json.dumps(nulls), strict=True)
    assert strict.data == tools.call("read_file", {"path": "/src/app.py"})
    assert tools.invoke("read_file", nulls).is_error  # not strict: a null offset is refused
    stored = tools.invoke("kv_set", {"key": "plan", "value": '{"step": 2}'}, strict=True)
    assert not stored.is_error and tools.ws.kv.get("plan") == {"step": 2}


def test_mcp_output_schemas_describe_object_arrays_instead_of_typing_their_items() -> None:
    """What MCP clients check item by item (an ``ls`` of 500 entries) is declared as an
    array whose description names every field of its items (worded as ``ls``'s shows);
    everything else is the full schema, unchanged. That every result still passes the
    declared schema is checked by ``ok`` on every call of this module."""

    def compare(full: Any, declared: Any, where: str) -> int:
        if not isinstance(full, dict):
            assert declared == full, where
            return 0
        items = full.get("items")
        if isinstance(items, dict) and items.get("type") == "object":
            assert "items" not in declared, where
            for name in items["properties"]:
                assert f"{name} (" in declared["description"], (where, name)
            rest = {k: v for k, v in full.items() if k not in ("items", "description")}
            assert {k: v for k, v in declared.items() if k != "description"} == rest, where
            return 1
        assert declared.keys() == full.keys(), where
        return sum(compare(full[key], declared[key], f"{where}.{key}") for key in full)

    described = 0
    for spec in catalog.all_tools():
        declared = mcp_output_schema(spec.output)
        jsonschema.Draft202012Validator.check_schema(declared)
        described += compare(json_schema(spec.output), declared, spec.name)
    entries = mcp_output_schema(catalog.find("ls").output)["properties"]["entries"]  # type: ignore[union-attr]
    assert entries == {
        "type": "array",
        "description": "Each item: name (string), type (one of file, directory, symlink,"
        " other), size (integer), modified (string: last modification, ISO 8601 UTC)",
    }
    assert described >= 8  # ls, list_tree, grep's lines, the searches' hits, the histories, ...


def test_optional_values_are_single_typed_branches(tools: Toolset) -> None:
    """``X | None`` is exported as ``anyOf`` of ``X`` and ``null``, each branch of one type
    (no ``"type": [X, "null"]``, which one-type dialects refuse); it accepts what it should."""
    assert json_schema(catalog.find("grep").input)["properties"]["glob"]["anyOf"] == [
        {"type": "string"},
        {"type": "null"},
    ]
    for spec in catalog.all_tools():
        for model in (spec.input, spec.output):
            text = json.dumps(json_schema(model))
            assert '"type": [' not in text, (spec.name, model.__name__)
    schema = json_schema(catalog.find("read_file").output)
    check = jsonschema.Draft202012Validator(schema)
    read = ok(tools, "read_file", {"path": "/src/app.py"})
    empty = {**read, "line_range": None, "next_offset": None, "mime": None}
    assert check.is_valid(read) and check.is_valid(empty)
    for bad in ({"line_range": [1]}, {"line_range": "1-2"}, {"next_offset": "2"}, {"mime": 3}):
        assert not check.is_valid({**read, **bad}), bad


# --- random tool calls against a plain directory ----------------------------------------------

FILES = st.sampled_from(["/a.txt", "/d/b.txt", "/d/e/c.txt", "/f.txt"])
DIRS = st.sampled_from(["/d", "/d/e", "/g"])
CONTENT = st.text(alphabet="xyz\n", max_size=12)
OPS = st.one_of(
    st.tuples(st.just("write_file"), FILES, CONTENT),
    st.tuples(st.just("create_file"), FILES, CONTENT),
    st.tuples(st.just("delete_file"), FILES),
    st.tuples(st.just("mkdir"), DIRS),
    st.tuples(st.just("rmdir"), DIRS),
    st.tuples(st.just("move_file"), FILES, FILES),
    st.tuples(st.just("copy_file"), FILES, FILES),
)


def host_apply(root: Path, op: tuple[str, ...]) -> bool:
    """Do ``op`` on a real directory; True when it succeeded."""
    name = op[0]
    real = [root / p.lstrip("/") for p in op[1:] if p.startswith("/")]
    try:
        if name == "write_file" or name == "create_file":
            if real[0].exists():
                return False
            real[0].parent.mkdir(parents=True, exist_ok=True)
            real[0].write_text(op[2])
        elif name == "delete_file":
            real[0].unlink()
        elif name == "mkdir":
            real[0].mkdir(parents=True, exist_ok=True)
        elif name == "rmdir":
            real[0].rmdir()
        elif name in ("move_file", "copy_file"):
            src, dst = real
            if not src.is_file() or dst.exists():
                return False
            dst.parent.mkdir(parents=True, exist_ok=True)
            if name == "move_file":
                os.rename(src, dst)
            else:
                shutil.copyfile(src, dst)
    except OSError:
        return False
    return True


def tool_args(op: tuple[str, ...]) -> dict[str, Any]:
    name = op[0]
    if name in ("write_file", "create_file"):
        return {"path": op[1], "content": op[2]}
    if name in ("move_file", "copy_file"):
        return {"source": op[1], "destination": op[2]}
    if name == "rmdir":
        return {"path": op[1], "recursive": False}
    return {"path": op[1]}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(OPS, max_size=12))
def test_random_tool_calls_match_a_plain_directory(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, ...]]
) -> None:
    root = tmp_path_factory.mktemp("host")
    with agentfs.open(root.parent / f"{root.name}.db") as ws:
        tools = Toolset(ws)
        for op in ops:
            expected = host_apply(root, op)
            result = tools.call(op[0], tool_args(op))
            assert ("error" not in result) == expected, (op, result)
        assert workspace_tree(ws) == host_tree(root)


def test_a_write_over_the_versioning_limit_says_no_version_was_kept(tools: Toolset) -> None:
    tools.ws.configure_history(max_bytes=100)
    big = "x" * 101
    written = tools.call("write_file", {"path": "/big.txt", "content": big})
    assert written["version"] == 0 and "history.max_bytes" in written["note"]
    tools.call("read_file", {"path": "/big.txt"})
    edited = tools.call(
        "edit_file",
        {"path": "/big.txt", "old_string": "xx", "new_string": "yyy", "replace_all": True},
    )
    assert edited["version"] == 0 and "no version" in edited["note"]
    small = tools.call("write_file", {"path": "/small.txt", "content": "x"})
    assert small["version"] == 1 and "note" not in small
    tools.ws.configure_history(keep="none")  # history off: nobody expects a version
    assert "note" not in tools.call("write_file", {"path": "/b2.txt", "content": big})
