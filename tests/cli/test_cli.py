"""The ``agentfs`` command line, driven through click's CliRunner and checked through the library.

Each test runs a command the way a user types it (``agentfs cat WS.db /notes.txt``), checks the
exit status and output, then opens the workspace with ``agentfs.open`` to verify what the
command did. The last tests run the installed ``agentfs`` script in a real subprocess.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from clirun import AGENTFS, assert_user_error, ok, run

import agentfs
from agentfs.cli import cli

ROOT = Path(__file__).resolve().parents[2]
#: Bytes no text layer would survive: NUL, 0xff, a lone CR, invalid UTF-8.
BINARY = bytes(range(256)) + b"\x00\xff\r\n\xc3\x28" * 100


@pytest.fixture
def ws_file(ws_path: Path) -> Path:
    """An existing, empty workspace file (made and closed by the library)."""
    agentfs.open(ws_path).close()
    return ws_path


@pytest.fixture
def tree_ws(ws_file: Path) -> Path:
    """A workspace holding /notes/todo.md, /notes/a.txt, /notes/link -> todo.md, /data/x.bin."""
    with agentfs.open(ws_file) as ws:
        ws.write("/notes/todo.md", "- ship it\n", parents=True)
        ws.write("/notes/a.txt", "a")
        ws.symlink("todo.md", "/notes/link")
        ws.write("/data/x.bin", BINARY, parents=True)
    return ws_file


def command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and subcommand as the words that name it: ("ls",), ("kv", "get")..."""
    found = []
    for name, command in sorted(group.commands.items()):
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found.extend(command_paths(command, (*prefix, name)))
    return found


# --- the workspace ------------------------------------------------------------------------------


def test_init_creates_a_workspace_with_the_chosen_chunk_size(ws_path: Path) -> None:
    result = ok("init", ws_path, "--chunk-size", 4096)
    assert result.stdout == f"created {ws_path}\n"
    with agentfs.open(ws_path) as ws:
        assert ws.info().chunk_size == 4096
        assert ws.listdir("/") == []


def test_init_refuses_an_existing_file(ws_file: Path) -> None:
    assert_user_error(run("init", ws_file), str(ws_file), "already exists")


def test_init_refuses_a_bad_chunk_size_without_creating_a_file(ws_path: Path) -> None:
    assert_user_error(run("init", ws_path, "--chunk-size", 100), "chunk_size")
    assert not ws_path.exists()


def test_info_json_is_the_library_summary(tree_ws: Path) -> None:
    data = json.loads(ok("info", tree_ws, "--json").stdout)
    with agentfs.open(tree_ws) as ws:
        expected = ws.info().as_dict()
    assert {k: v for k, v in data.items() if k != "database_bytes"} == {
        k: v for k, v in expected.items() if k != "database_bytes"
    }
    assert data["files"] == 3 and data["symlinks"] == 1


def test_info_text_has_one_line_per_field(tree_ws: Path) -> None:
    lines = ok("info", tree_ws).stdout.splitlines()
    assert lines[0].split() == ["path:", str(tree_ws)]
    assert ["files:", "3"] in [line.split() for line in lines]


def test_limits_show_set_and_refuse_in_one_line(ws_file: Path) -> None:
    assert json.loads(ok("limits", ws_file, "--json").stdout)["workspace_size"] is None
    data = json.loads(
        ok("limits", ws_file, "--file-size", "1K", "--workspace-size", "64M", "--json").stdout
    )
    assert (data["file_size"], data["workspace_size"]) == (1024, 64 << 20)
    assert "largest file:" in ok("limits", ws_file, "--workspace-size", "none").stdout
    assert json.loads(ok("limits", ws_file, "--json").stdout)["workspace_size"] is None
    assert_user_error(run("write", ws_file, "/big", "x" * 1025), "/big", "File too large")
    assert run("limits", ws_file, "--file-size", "12X").exit_code == 2  # click's usage error
    with agentfs.open(ws_file) as ws:
        assert not ws.exists("/big") and ws.limits.file_size == 1024


def test_write_over_the_versioning_limit_notes_it_on_stderr(ws_file: Path) -> None:
    ok("retention", ws_file, "--max-size", 10)
    result = ok("write", ws_file, "/big", "x" * 11)
    assert (
        result.stderr.startswith("agentfs: note: /big: no version")
        and "history.max_bytes" in result.stderr
    )
    assert ok("write", ws_file, "/small", "x").stderr == ""


def test_version_option() -> None:
    assert ok("--version").stdout.startswith("agentfs, version ")


# --- reading and writing files -------------------------------------------------------------------


def test_write_from_stdin_and_cat_round_trip_binary_bytes(ws_file: Path) -> None:
    ok("write", ws_file, "/bin/blob", "-p", input=BINARY)
    with agentfs.open(ws_file) as ws:
        assert ws.read("/bin/blob") == BINARY
    assert ok("cat", ws_file, "/bin/blob").stdout_bytes == BINARY


def test_write_content_argument_creates_parents(ws_file: Path) -> None:
    ok("write", ws_file, "/a/b/c.txt", "héllo", "--parents")
    with agentfs.open(ws_file) as ws:
        assert ws.read("/a/b/c.txt") == "héllo".encode()


def test_write_without_parents_needs_the_directory(ws_file: Path) -> None:
    assert_user_error(run("write", ws_file, "/missing/c.txt", "x"), "/missing")


def test_write_from_a_host_file(ws_file: Path, tmp_path: Path) -> None:
    host = tmp_path / "blob.bin"
    host.write_bytes(BINARY)
    ok("write", ws_file, "/blob.bin", "--from-file", host)
    with agentfs.open(ws_file) as ws:
        assert ws.read("/blob.bin") == BINARY


def test_write_append_adds_to_the_end_and_can_create_parents(ws_file: Path) -> None:
    ok("write", ws_file, "/log/today.txt", "one\n", "--append", "-p")
    ok("write", ws_file, "/log/today.txt", "--append", input=b"two\n")
    with agentfs.open(ws_file) as ws:
        assert ws.read("/log/today.txt") == b"one\ntwo\n"


def test_write_replaces_a_whole_file(tree_ws: Path) -> None:
    ok("write", tree_ws, "/notes/todo.md", "done")
    with agentfs.open(tree_ws) as ws:
        assert ws.read_text("/notes/todo.md") == "done"


def test_write_refuses_content_and_from_file_together(ws_file: Path, tmp_path: Path) -> None:
    host = tmp_path / "x"
    host.write_bytes(b"x")
    result = run("write", ws_file, "/x", "content", "--from-file", host)
    assert result.exit_code == 2
    assert "not both" in result.stderr


def test_cat_concatenates_several_files(tree_ws: Path) -> None:
    assert ok("cat", tree_ws, "/notes/a.txt", "/notes/link").stdout_bytes == b"a- ship it\n"


def test_cat_of_a_directory_is_a_one_line_error(tree_ws: Path) -> None:
    assert_user_error(run("cat", tree_ws, "/notes"), "/notes", "Is a directory")


# --- looking around ------------------------------------------------------------------------------


def test_ls_lists_names_sorted(tree_ws: Path) -> None:
    assert ok("ls", tree_ws).stdout == "data\nnotes\n"
    assert ok("ls", tree_ws, "/notes").stdout == "a.txt\nlink\ntodo.md\n"


def test_ls_long_shows_type_permissions_size_and_symlink_target(tree_ws: Path) -> None:
    lines = ok("ls", tree_ws, "/notes", "-l").stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["-rw-r--r--", "lrwxrwxrwx", "-rw-r--r--"]
    assert lines[1].endswith("link -> todo.md")
    assert lines[2].split()[1:3] == ["1", "10"]  # nlink, size
    assert ok("ls", tree_ws, "-l").stdout.startswith("drwxr-xr-x")


def test_ls_of_a_file_shows_that_file(tree_ws: Path) -> None:
    assert ok("ls", tree_ws, "/notes/a.txt").stdout == "a.txt\n"


def test_ls_recursive_prints_a_section_per_directory(tree_ws: Path) -> None:
    out = ok("ls", tree_ws, "-R").stdout
    assert out == "/:\ndata\nnotes\n\n/data:\nx.bin\n\n/notes:\na.txt\nlink\ntodo.md\n"


def test_ls_json_carries_paths_and_stat_fields(tree_ws: Path) -> None:
    data = json.loads(ok("ls", tree_ws, "/", "-R", "--json").stdout)
    assert [e["path"] for e in data] == [
        "/data",
        "/notes",
        "/data/x.bin",
        "/notes/a.txt",
        "/notes/link",
        "/notes/todo.md",
    ]
    with agentfs.open(tree_ws) as ws:
        link = ws.lstat("/notes/link").as_dict()
    assert data[4] == {"name": "link", "path": "/notes/link", **link, "target": "todo.md"}


def test_ls_of_a_missing_directory_is_a_one_line_error(tree_ws: Path) -> None:
    assert_user_error(run("ls", tree_ws, "/nope"), "/nope", "No such file or directory")


def test_tree_draws_the_hierarchy_and_counts(tree_ws: Path) -> None:
    assert ok("tree", tree_ws).stdout == (
        "/\n"
        "├── data\n"
        "│   └── x.bin\n"
        "└── notes\n"
        "    ├── a.txt\n"
        "    ├── link -> todo.md\n"
        "    └── todo.md\n"
        "\n"
        "2 directories, 4 files\n"
    )


def test_tree_json_nests_children(tree_ws: Path) -> None:
    data = json.loads(ok("tree", tree_ws, "/notes", "--json").stdout)
    assert data == {
        "name": "/notes",
        "type": "dir",
        "children": [
            {"name": "a.txt", "type": "file"},
            {"name": "link", "type": "symlink", "target": "todo.md"},
            {"name": "todo.md", "type": "file"},
        ],
    }


def test_stat_json_is_the_library_lstat(tree_ws: Path) -> None:
    data = json.loads(ok("stat", tree_ws, "notes/todo.md", "--json").stdout)
    with agentfs.open(tree_ws) as ws:
        expected = ws.lstat("/notes/todo.md").as_dict()
    assert data == {"name": "todo.md", "path": "/notes/todo.md", **expected}


def test_stat_text_shows_mode_and_size(tree_ws: Path) -> None:
    out = ok("stat", tree_ws, "/notes/todo.md").stdout
    assert "0644 (-rw-r--r--)" in out
    assert ["size:", "10"] in [line.split() for line in out.splitlines()]


# --- the namespace -------------------------------------------------------------------------------


def test_mkdir_creates_directories_and_parents(ws_file: Path) -> None:
    ok("mkdir", ws_file, "/src")
    ok("mkdir", ws_file, "-p", "/src/pkg/tests", "/docs")
    ok("mkdir", ws_file, "-p", "/src")  # -p: an existing directory is fine
    with agentfs.open(ws_file) as ws:
        assert ws.stat("/src/pkg/tests").is_dir() and ws.stat("/docs").is_dir()


def test_mkdir_of_an_existing_directory_fails_without_p(tree_ws: Path) -> None:
    assert_user_error(run("mkdir", tree_ws, "/notes"), "/notes", "File exists")


def test_rm_removes_files_and_with_r_whole_trees(tree_ws: Path) -> None:
    ok("rm", tree_ws, "/data/x.bin")
    ok("rm", tree_ws, "-r", "/notes")
    with agentfs.open(tree_ws) as ws:
        assert ws.listdir("/") == ["data"]
        assert ws.listdir("/data") == []


def test_rm_of_a_non_empty_directory_needs_r(tree_ws: Path) -> None:
    assert_user_error(run("rm", tree_ws, "/notes"), "/notes", "Directory not empty")
    with agentfs.open(tree_ws) as ws:
        assert ws.exists("/notes/todo.md")


def test_rm_force_ignores_missing_paths_only(tree_ws: Path) -> None:
    assert_user_error(run("rm", tree_ws, "/nope"), "/nope", "No such file or directory")
    ok("rm", tree_ws, "-f", "/nope", "/notes/a.txt")
    with agentfs.open(tree_ws) as ws:
        assert not ws.exists("/notes/a.txt")
    assert_user_error(run("rm", tree_ws, "-f", "/notes"), "Directory not empty")


def test_mv_renames(tree_ws: Path) -> None:
    ok("mv", tree_ws, "/notes", "/archive")
    with agentfs.open(tree_ws) as ws:
        assert ws.listdir("/") == ["archive", "data"]
        assert ws.read_text("/archive/todo.md") == "- ship it\n"


def test_mv_into_itself_is_refused(tree_ws: Path) -> None:
    assert_user_error(run("mv", tree_ws, "/notes", "/notes/inner"), "/notes/inner")


def test_cp_copies_files_and_with_r_trees(tree_ws: Path) -> None:
    ok("cp", tree_ws, "/notes/todo.md", "/todo.bak")
    ok("cp", tree_ws, "-r", "/notes", "/notes2")
    with agentfs.open(tree_ws) as ws:
        assert ws.read_text("/todo.bak") == "- ship it\n"
        assert ws.listdir("/notes2") == ["a.txt", "link", "todo.md"]
        assert ws.readlink("/notes2/link") == "todo.md"


def test_cp_of_a_directory_needs_r(tree_ws: Path) -> None:
    assert_user_error(run("cp", tree_ws, "/notes", "/n2"), "/notes", "Is a directory")


def test_ln_makes_hard_links_and_with_s_symlinks(tree_ws: Path) -> None:
    ok("ln", tree_ws, "/notes/a.txt", "/hard")
    ok("ln", tree_ws, "-s", "notes/todo.md", "/soft")
    with agentfs.open(tree_ws) as ws:
        assert ws.lstat("/hard").st_ino == ws.lstat("/notes/a.txt").st_ino
        assert ws.lstat("/hard").st_nlink == 2
        assert ws.readlink("/soft") == "notes/todo.md"
        assert ws.read_text("/soft") == "- ship it\n"


# --- paths the core refuses or confines ----------------------------------------------------------


def test_a_nul_byte_in_a_path_is_a_one_line_error(tree_ws: Path) -> None:
    assert_user_error(run("cat", tree_ws, "/notes/a\0b"), "NUL")
    assert_user_error(run("write", tree_ws, "/x\0y", "data"), "NUL")


def test_dotdot_cannot_climb_out_of_the_workspace(tree_ws: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("host secret")
    depth = "/..".join([""] * 30)
    result = run("cat", tree_ws, f"{depth}/{tmp_path}/secret.txt")
    assert_user_error(result, "No such file or directory")
    assert result.stdout_bytes == b""
    ok("write", tree_ws, "../../escape.txt", "inside")
    assert not (tmp_path.parent / "escape.txt").exists()
    with agentfs.open(tree_ws) as ws:
        assert ws.read_text("/escape.txt") == "inside"


# --- errors --------------------------------------------------------------------------------------


def test_a_missing_workspace_is_refused_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    for args in (("ls",), ("cat", "/x"), ("write", "/x", "data"), ("kv",)):
        command, *rest = args
        argv = [command, missing, *rest] if command != "kv" else ["kv", missing, "list"]
        assert_user_error(run(*argv), str(missing), "no such workspace", "agentfs init")
    assert not missing.exists()


def test_a_file_that_is_not_a_database_is_a_one_line_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a sqlite database" * 100)
    assert_user_error(run("ls", junk), str(junk))


#: What a command might be given instead of a workspace: nothing yet, text, another program's
#: database (switching it to WAL, as opening a workspace does, would rewrite its header).
NOT_WORKSPACES = {
    "empty": (b"", "an empty file, not a workspace"),
    "text": (b"hello, world\n" * 50, "not a SQLite database"),
    "sqlite": (None, "not an agentfs workspace"),
}

#: A command of each kind: reads, writes, the history, the tools, checks and repairs.
SOME_COMMANDS = [
    "ls {ws}",
    "cat {ws} /x",
    "write {ws} /x data",
    "info {ws}",
    "fsck {ws}",
    "fsck {ws} --repair",
    "kv {ws} list",
    "kv {ws} set k 1",
    "history {ws} /x",
    "snapshot create {ws} s",
    "gc {ws}",
    "retention {ws} --keep 3",
    "mkdir {ws} /d",
    "grep {ws} x",
    "tools call {ws} ls {{}}",
]


@pytest.mark.parametrize("kind", NOT_WORKSPACES)
@pytest.mark.parametrize("command", SOME_COMMANDS)
def test_a_file_that_is_not_a_workspace_is_refused_untouched(
    tmp_path: Path, kind: str, command: str
) -> None:
    """One line, and the file byte-for-byte as it was, with no -wal, -shm or -readers left."""
    path = tmp_path / "given.db"
    content, says = NOT_WORKSPACES[kind]
    if content is None:
        with sqlite3.connect(path) as other:
            other.execute("CREATE TABLE notes (text)")
        other.close()
    else:
        path.write_bytes(content)
    before = path.read_bytes()
    assert_user_error(run(*shlex.split(command.format(ws=path))), str(path), says)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["given.db"]


def test_init_makes_an_empty_file_a_workspace_and_refuses_any_other(tmp_path: Path) -> None:
    """An empty file (``mktemp``'s) is a new workspace; a file with anything in it is not
    init's to overwrite."""
    empty, text = tmp_path / "empty.db", tmp_path / "text.db"
    empty.write_bytes(b"")
    text.write_bytes(b"hello\n")
    ok("init", empty)
    with agentfs.open(empty, create=False) as ws:
        assert ws.listdir("/") == []
    assert_user_error(run("init", text), str(text), "already exists")
    assert text.read_bytes() == b"hello\n"


def test_usage_errors_exit_2(ws_file: Path) -> None:
    assert run("ls", ws_file, "/", "extra").exit_code == 2
    assert run("cat", ws_file).exit_code == 2
    assert run("nosuchcommand").exit_code == 2
    assert run("kv", ws_file, "frobnicate").exit_code == 2


# --- the key-value store -------------------------------------------------------------------------


def test_kv_set_parses_json_and_keeps_other_text_as_a_string(ws_file: Path) -> None:
    ok("kv", ws_file, "set", "config", '{"model": "small", "retries": 3}')
    ok("kv", ws_file, "set", "n", "3")
    ok("kv", ws_file, "set", "owner", "alice")
    ok("kv", ws_file, "set", "nan", "NaN")
    with agentfs.open(ws_file) as ws:
        assert ws.kv.get("config") == {"model": "small", "retries": 3}
        assert ws.kv.get("n") == 3
        assert ws.kv.get("owner") == "alice"
        assert ws.kv.get("nan") == "NaN"


def test_kv_get_prints_the_value_as_json(ws_file: Path) -> None:
    with agentfs.open(ws_file) as ws:
        ws.kv.set("config", {"model": "small", "tags": ["a", "é"]})
        ws.kv.set("owner", "alice")
    assert json.loads(ok("kv", ws_file, "get", "config").stdout) == {
        "model": "small",
        "tags": ["a", "é"],
    }
    assert ok("kv", ws_file, "get", "owner").stdout == '"alice"\n'


def test_kv_get_of_a_missing_key_is_a_one_line_error(ws_file: Path) -> None:
    assert_user_error(run("kv", ws_file, "get", "nope"), "no such key", "nope")


def test_kv_list_by_prefix_as_text_and_json(ws_file: Path) -> None:
    with agentfs.open(ws_file) as ws:
        ws.kv.set("session/1", {"turns": 3})
        ws.kv.set("session/2", "done")
        ws.kv.set("other", 1)
    assert ok("kv", ws_file, "list", "session/").stdout == (
        'session/1\t{"turns": 3}\nsession/2\t"done"\n'
    )
    data = json.loads(ok("kv", ws_file, "list", "--json").stdout)
    assert [(e["key"], e["value"]) for e in data] == [
        ("other", 1),
        ("session/1", {"turns": 3}),
        ("session/2", "done"),
    ]
    assert set(data[0]) == {"key", "value", "created_at", "updated_at"}


def test_kv_rm_deletes_and_refuses_a_missing_key(ws_file: Path) -> None:
    with agentfs.open(ws_file) as ws:
        ws.kv.set("k", 1)
    ok("kv", ws_file, "rm", "k")
    with agentfs.open(ws_file) as ws:
        assert "k" not in ws.kv
    assert_user_error(run("kv", ws_file, "rm", "k"), "no such key")


# --- the tool-call log ---------------------------------------------------------------------------


@pytest.fixture
def calls_ws(ws_file: Path) -> Path:
    """Three logged calls: read_file twice (one failed), grep once."""
    with agentfs.open(ws_file) as ws:
        t = time.time() - 100
        ws.tool_calls.record(
            "read_file", {"path": "/a"}, result="a", started_at=t, completed_at=t + 0.010
        )
        ws.tool_calls.record(
            "grep", {"pattern": "x"}, result=[], started_at=t + 1, completed_at=t + 1.5
        )
        ws.tool_calls.record(
            "read_file", {"path": "/b"}, error="ENOENT", started_at=t + 2, completed_at=t + 2.03
        )
    return ws_file


def test_timeline_json_is_the_library_list_newest_first(calls_ws: Path) -> None:
    data = json.loads(ok("timeline", calls_ws, "--json").stdout)
    with agentfs.open(calls_ws) as ws:
        # each call also lists the file versions it wrote (none: these were logged by hand)
        assert data == [{**call.as_dict(), "writes": []} for call in ws.tool_calls.list()]
    assert [c["name"] for c in data] == ["read_file", "grep", "read_file"]


def test_timeline_shows_the_versions_a_tool_call_wrote(ws_path: Path) -> None:
    from agentfs.tools.toolset import Toolset

    with agentfs.open(ws_path) as ws:
        tools = Toolset(ws, thread="t1")
        tools.call("write_file", {"path": "/app.py", "content": "v1\n"})
        tools.call("write_file", {"path": "/app.py", "content": "v2\n", "overwrite": True})
        tools.call("ls", {})
        tools.flush()
    data = json.loads(ok("timeline", ws_path, "--json").stdout)
    assert [(c["name"], c["writes"]) for c in data] == [
        ("ls", []),
        ("write_file", [{"path": "/app.py", "version": 2}]),
        ("write_file", [{"path": "/app.py", "version": 1}]),
    ]
    one = json.loads(ok("timeline", ws_path, "--path", "app.py", "--version", 2, "--json").stdout)
    assert [(c["name"], c["parameters"]["content"]) for c in one] == [("write_file", "v2\n")]
    text = ok("timeline", ws_path).stdout
    assert "wrote /app.py v2" in text
    assert_user_error(run("timeline", ws_path, "--version", 2), "--version needs --path")
    assert_user_error(
        run("timeline", ws_path, "--path", "/app.py", "--version", 9), "no tool call wrote"
    )


def test_timeline_filters_by_tool_and_limits(calls_ws: Path) -> None:
    data = json.loads(
        ok("timeline", calls_ws, "--tool", "read_file", "--limit", 1, "--json").stdout
    )
    assert [(c["name"], c["error"]) for c in data] == [("read_file", "ENOENT")]


def test_timeline_text_shows_one_line_per_call(calls_ws: Path) -> None:
    lines = ok("timeline", calls_ws).stdout.splitlines()
    assert len(lines) == 3
    assert "read_file" in lines[0] and "error: ENOENT" in lines[0]
    assert "grep" in lines[1] and " ok " in lines[1]


def test_timeline_stats_totals_per_tool(calls_ws: Path) -> None:
    data = json.loads(ok("timeline", calls_ws, "--stats", "--json").stdout)
    assert [(r["name"], r["total_calls"], r["successful"], r["failed"]) for r in data] == [
        ("read_file", 2, 1, 1),
        ("grep", 1, 1, 0),
    ]
    lines = ok("timeline", calls_ws, "--stats").stdout.splitlines()
    assert lines[0].split() == ["tool", "calls", "ok", "failed", "avg", "ms"]
    assert lines[1].split()[:4] == ["read_file", "2", "1", "1"]


# --- moving trees in and out --------------------------------------------------------------------


@pytest.fixture
def host_tree(tmp_path: Path) -> Path:
    """A host directory: a.txt, sub/b.bin (binary), sub/link -> ../a.txt."""
    root = tmp_path / "host"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "sub" / "b.bin").write_bytes(BINARY)
    (root / "sub" / "link").symlink_to("../a.txt")
    return root


def test_import_copies_a_host_directory_into_dest(ws_file: Path, host_tree: Path) -> None:
    result = ok("import", ws_file, host_tree, "/src")
    assert result.stdout.startswith("imported 2 files, ")
    assert "1 symlink" in result.stdout and "into /src" in result.stdout
    with agentfs.open(ws_file) as ws:
        assert ws.read_text("/src/a.txt") == "alpha\n"
        assert ws.read("/src/sub/b.bin") == BINARY
        assert ws.readlink("/src/sub/link") == "../a.txt"


def test_import_json_reports_the_transfer_stats(ws_file: Path, host_tree: Path) -> None:
    data = json.loads(ok("import", ws_file, host_tree, "--json").stdout)
    assert (data["files"], data["symlinks"], data["skipped"]) == (2, 1, [])
    assert data["bytes"] == len("alpha\n") + len(BINARY)
    with agentfs.open(ws_file) as ws:
        assert ws.read_text("/a.txt") == "alpha\n"  # DEST defaults to /


def test_import_warns_about_skipped_entries(ws_file: Path, host_tree: Path) -> None:
    os.mkfifo(host_tree / "pipe")
    result = ok("import", ws_file, host_tree, "/src")
    assert "agentfs: warning: skipped pipe" in result.stderr
    assert "1 skipped" in result.stdout


def test_import_of_a_missing_host_directory_is_a_usage_error(ws_file: Path, tmp_path: Path) -> None:
    result = run("import", ws_file, tmp_path / "nope")
    assert result.exit_code == 2
    assert "nope" in result.stderr


def test_export_writes_a_subtree_to_a_host_directory(tree_ws: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = ok("export", tree_ws, "/notes", out)
    assert result.stdout.startswith("exported 2 files, ")
    assert (out / "todo.md").read_text() == "- ship it\n"
    assert os.readlink(out / "link") == "todo.md"


def test_export_without_src_exports_everything(tree_ws: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    data = json.loads(ok("export", tree_ws, out, "--json").stdout)
    assert (data["files"], data["directories"], data["symlinks"]) == (3, 2, 1)
    assert (out / "data" / "x.bin").read_bytes() == BINARY


def test_export_into_edited_files_refuses_unless_overwrite(tree_ws: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    ok("export", tree_ws, out)
    (out / "notes" / "a.txt").write_text("edited on the host")
    assert_user_error(run("export", tree_ws, out), "notes/a.txt", "--overwrite")
    assert (out / "notes" / "a.txt").read_text() == "edited on the host"
    ok("export", tree_ws, out, "--overwrite")
    assert (out / "notes" / "a.txt").read_text() == "a"


def test_export_agentfs_writes_a_plain_spec_file(tree_ws: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.db"
    data = json.loads(ok("export", tree_ws, "--agentfs", plain, "--json").stdout)
    assert data["files"] == 3
    with agentfs.open(plain) as copy:
        assert copy.read("/data/x.bin") == BINARY
        assert copy.readlink("/notes/link") == "todo.md"


def test_export_agentfs_refuses_an_existing_file(tree_ws: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain.db"
    plain.write_bytes(b"")
    assert_user_error(run("export", tree_ws, "--agentfs", plain), str(plain))


def test_export_argument_combinations_are_checked(tree_ws: Path, tmp_path: Path) -> None:
    assert run("export", tree_ws).exit_code == 2
    assert run("export", tree_ws, "/a", "/b", tmp_path).exit_code == 2
    assert run("export", tree_ws, tmp_path, "--agentfs", tmp_path / "x.db").exit_code == 2


# --- fsck ----------------------------------------------------------------------------------------


def test_fsck_of_a_clean_workspace_exits_0(tree_ws: Path) -> None:
    ok("fsck", tree_ws)
    data = json.loads(ok("fsck", tree_ws, "--json").stdout)
    assert data["problems"] == []


def test_fsck_reports_problems_exits_1_and_repair_fixes_them(tree_ws: Path) -> None:
    with agentfs.open(tree_ws) as ws:
        ino = ws.lstat("/notes/a.txt").st_ino
        ws.conn.execute("UPDATE fs_inode SET nlink = 7 WHERE ino = ?", (ino,))
    result = run("fsck", tree_ws)
    assert result.exit_code == 1
    assert result.stdout.strip() and "Traceback" not in result.stdout + result.stderr
    data = json.loads(run("fsck", tree_ws, "--json").stdout)
    assert data["problems"]
    repaired = ok("fsck", tree_ws, "--repair").stdout
    assert "repaired: " in repaired and repaired.endswith("clean after repair\n")
    assert ok("fsck", tree_ws).stdout == "clean: no problems found\n"
    with agentfs.open(tree_ws) as ws:
        assert ws.lstat("/notes/a.txt").st_nlink == 1


# --- help and docs --------------------------------------------------------------------------------


@pytest.mark.parametrize("words", [(), *command_paths(cli)], ids=lambda w: " ".join(w) or "agentfs")
def test_every_command_has_help_with_an_example(words: tuple[str, ...], tmp_path: Path) -> None:
    if words[:1] == ("kv",) and len(words) > 1:  # the group takes WS before the subcommand;
        words = ("kv", str(tmp_path / "missing.db"), *words[1:])  # help needs no workspace
    result = ok(*words, "--help")
    assert "Example:" in result.stdout
    assert "\n    agentfs " in result.stdout  # the example lines kept their breaks (\b)


@pytest.mark.parametrize("words", command_paths(cli), ids=" ".join)
def test_every_command_is_in_the_cli_docs(words: tuple[str, ...]) -> None:
    docs = (ROOT / "docs" / "cli.md").read_text()
    assert f"agentfs {' '.join(words)}" in docs.replace("agentfs kv WS ", "agentfs kv ")


# --- the installed script, in a real process ----------------------------------------------------


def test_the_cli_starts_without_numpy_or_the_tools() -> None:
    """numpy (sqlite-vec's package, vectors) and the tool catalog load where they are used:
    loaded at start they would be two thirds of every command's start (docs/cli.md)."""
    code = (
        "import sys, agentfs.cli; print(sorted(m for m in ('numpy', 'sqlite_vec',"
        " 'agentfs.tools', 'pydantic', 'mcp') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def agentfs_process(*args: object, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(AGENTFS), *map(str, args)], input=input, capture_output=True, timeout=60
    )


def test_the_installed_script_round_trips_bytes_and_reports_errors(tmp_path: Path) -> None:
    ws = tmp_path / "proc.db"
    assert agentfs_process("init", ws).returncode == 0
    written = agentfs_process("write", ws, "/blob", "-p", input=BINARY)
    assert (written.returncode, written.stdout, written.stderr) == (0, b"", b"")
    cat = agentfs_process("cat", ws, "/blob")
    assert (cat.returncode, cat.stdout) == (0, BINARY)
    missing = agentfs_process("cat", ws, "/nope")
    assert missing.returncode == 1
    assert missing.stderr == b"agentfs: /nope: No such file or directory\n"
    no_ws = agentfs_process("ls", tmp_path / "none.db")
    assert no_ws.returncode == 1 and b"Traceback" not in no_ws.stderr
    assert not (tmp_path / "none.db").exists()
    assert agentfs_process("ls", ws, "--bogus").returncode == 2


def test_the_installed_script_survives_a_closed_pipe(tmp_path: Path) -> None:
    ws = tmp_path / "pipe.db"
    with agentfs.open(ws) as w:
        w.write("/big", b"x" * (4 << 20))
    proc = subprocess.run(
        f"'{AGENTFS}' cat '{ws}' /big | head -c 10",
        shell=True,
        capture_output=True,
        timeout=60,
    )
    assert proc.stdout == b"x" * 10
    assert b"Traceback" not in proc.stderr


def test_a_sqlite_file_that_is_not_a_workspace_is_refused_and_left_alone(tmp_path: Path) -> None:
    foreign = tmp_path / "app.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t(x)")
    conn.close()
    assert_user_error(run("ls", foreign), str(foreign))
    with sqlite3.connect(foreign) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_schema")]
    conn.close()
    assert tables == ["t"]


def test_fsck_without_repair_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ws.db"
    with agentfs.open(path) as ws:
        ws.configure_history(keep="none")  # an orphan no version holds
        ws.write("/a", b"x")
        with ws.conn:  # a queued orphan, which an ordinary open would purge
            ino = ws.write("/b", b"y").st_ino
            ws.conn.execute("DELETE FROM fs_dentry WHERE ino = ?", (ino,))
            ws.conn.execute("UPDATE fs_inode SET nlink = 0 WHERE ino = ?", (ino,))
            ws.conn.execute("INSERT INTO ws_orphan(ino, queued_at) VALUES (?, 0)", (ino,))
    files = [path, path.with_name("ws.db-wal")]  # a missing WAL reads as empty
    before = [p.read_bytes() if p.exists() else b"" for p in files]
    result = run("fsck", path)
    assert result.exit_code == 0, result.output
    assert [p.read_bytes() if p.exists() else b"" for p in files] == before


def test_grep_of_a_catastrophic_pattern_answers_at_once(tmp_path: Path) -> None:
    """The issue's measurement: ``(a+)+$`` on thirty ``a``s and a ``b`` ran for more than 20 s
    under Python's ``re``. A real process with a timeout, so a regression fails, not hangs."""
    db = tmp_path / "ws.db"
    with agentfs.open(db) as ws:
        ws.write("/evil.txt", "a" * 30 + "b\n")
    run = subprocess.run(
        [str(AGENTFS), "grep", str(db), "(a+)+$"], capture_output=True, text=True, timeout=60
    )
    assert (run.returncode, run.stdout) == (1, "")
    run = subprocess.run(
        [str(AGENTFS), "grep", str(db), r"(a)\1"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1 and "backreferences" in run.stderr and run.stderr.count("\n") == 1


def test_doctor_reports_each_part_and_what_its_absence_disables() -> None:
    from agentfs.mount.doctor import checks

    found = checks()
    result = run("doctor")
    assert result.exit_code == (0 if all(c.ok for c in found if c.needed) else 1), result.output
    for c in found:
        assert c.name in result.stdout
    rows = json.loads(run("doctor", "--json").stdout)
    names = [r["name"] for r in rows]
    assert names[:2] == ["FUSE", "bubblewrap"] and "user namespaces" in names
    assert all({"ok", "problem", "detail", "disables"} <= set(r) for r in rows)
    assert all(r["disables"] for r in rows if not r["ok"])
    assert [r["name"] for r in rows if not r["needed"]] == ["memory cgroup"]
