"""The history commands of ``agentfs`` (history, cat --version, diff, restore-version, snapshot
..., fork, gc, reads, retention), driven through click's CliRunner like tests/cli/test_cli.py.

Each test runs the command as a user types it, checks the exit status and output, and then
checks through the library (``agentfs.open``) that the command did what it printed. User
errors must be one ``agentfs: ...`` line on stderr with exit status 1, never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest
from clirun import assert_user_error, ok, run

import agentfs

V1, V2, V3 = b"one\ntwo\n", b"one\n2\n", b"one\n2\nthree\n"


def blake_hex(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@pytest.fixture
def hist_ws(ws_path: Path) -> Path:
    """A workspace where actor 'coder' in thread 'chat' wrote /src/app.py three times
    (versions 1..3) and /README.md once, then took snapshot 'turn-1' (thread 'chat')."""
    with agentfs.open(ws_path, actor="coder", thread="chat") as ws:
        for content in (V1, V2, V3):
            ws.write("/src/app.py", content, parents=True)
        ws.write("/README.md", b"# readme\n")
        ws.snapshots.create("turn-1")
    return ws_path


# --- history and cat --version --------------------------------------------------------------------


def test_history_lists_every_version_oldest_first(hist_ws: Path) -> None:
    """One line per version: number, time, op, size, start of the digest, actor/thread."""
    lines = ok("history", hist_ws, "/src/app.py").stdout.splitlines()
    assert len(lines) == 3
    for n, (line, content) in enumerate(zip(lines, (V1, V2, V3), strict=True), start=1):
        fields = line.split()
        assert fields[0] == str(n)
        assert fields[3:] == [
            "write",
            str(len(content)),
            "B",
            blake_hex(content)[:12],
            "coder/chat",
        ]


@pytest.mark.parametrize("n", ["9223372036854775808", "-1", "0"])
@pytest.mark.parametrize(
    "command",
    [
        "cat {ws} /src/app.py --version {n}",
        "diff {ws} /src/app.py -- {n}",
        "diff {ws} /src/app.py 1 -- {n}",
        "restore-version {ws} /src/app.py -- {n}",
    ],
)
def test_a_version_number_out_of_range_is_one_line(hist_ws: Path, command: str, n: str) -> None:
    """Past SQLite's 64-bit integers or below 1: "no version N", never a traceback."""
    before = hist_ws.read_bytes()
    assert_user_error(run(*shlex.split(command.format(ws=hist_ws, n=n))), f"no version {n}")
    assert hist_ws.read_bytes() == before


def test_history_json_is_the_library_history(hist_ws: Path) -> None:
    data = json.loads(ok("history", hist_ws, "/src/app.py", "--json").stdout)
    with agentfs.open(hist_ws) as ws:
        assert data == [v.as_dict() for v in ws.history("/src/app.py")]
    assert [v["hash"] for v in data] == [blake_hex(c) for c in (V1, V2, V3)]


def test_history_shows_where_a_file_moved_and_that_it_was_deleted(hist_ws: Path) -> None:
    """A rename shows '(to NEW)' at the old path and '(from OLD)' at the new one; a deleted
    file keeps its history; the CLI's own writes are by actor 'cli' with no thread."""
    ok("mv", hist_ws, "/README.md", "/README.txt")
    ok("rm", hist_ws, "/README.txt")
    old = ok("history", hist_ws, "/README.md").stdout.splitlines()
    assert old[-1].split()[3:] == ["move", "cli", "(to", "/README.txt)"]
    new = ok("history", hist_ws, "/README.txt").stdout.splitlines()
    assert [line.split()[3] for line in new] == ["rename", "delete"]
    assert new[0].endswith("cli (from /README.md)")


def test_history_of_a_path_without_history_is_a_one_line_error(hist_ws: Path) -> None:
    assert_user_error(run("history", hist_ws, "/nope"), "/nope: no history")


def test_cat_version_prints_an_old_version_byte_exact(hist_ws: Path) -> None:
    assert ok("cat", hist_ws, "/src/app.py", "--version", 1).stdout_bytes == V1
    assert ok("cat", hist_ws, "/src/app.py", "--version", 2).stdout_bytes == V2
    assert ok("cat", hist_ws, "/src/app.py").stdout_bytes == V3
    binary = bytes(range(256))
    ok("write", hist_ws, "/blob", input=binary)
    ok("write", hist_ws, "/blob", "new")
    assert ok("cat", hist_ws, "/blob", "--version", 1).stdout_bytes == binary


def test_cat_of_a_missing_version_is_a_one_line_error(hist_ws: Path) -> None:
    assert_user_error(run("cat", hist_ws, "/src/app.py", "--version", 9), "no version 9")


# --- diff and restore-version ---------------------------------------------------------------------


def test_diff_without_versions_shows_the_last_change(hist_ws: Path) -> None:
    out = ok("diff", hist_ws, "/src/app.py").stdout
    assert out.splitlines() == [
        "--- /src/app.py@2",
        "+++ /src/app.py",
        "@@ -1,2 +1,3 @@",
        " one",
        " 2",
        "+three",
    ]


def test_diff_from_a_version_to_now_and_between_two_versions(hist_ws: Path) -> None:
    to_now = ok("diff", hist_ws, "/src/app.py", 1).stdout.splitlines()
    assert to_now[:2] == ["--- /src/app.py@1", "+++ /src/app.py"]
    assert [line for line in to_now[3:] if line[0] in "+-"] == ["-two", "+2", "+three"]
    between = ok("diff", hist_ws, "/src/app.py", 1, 2).stdout.splitlines()
    assert between == [
        "--- /src/app.py@1",
        "+++ /src/app.py@2",
        "@@ -1,2 +1,2 @@",
        " one",
        "-two",
        "+2",
    ]
    assert ok("diff", hist_ws, "/src/app.py", 3).stdout == ""


def test_diff_of_binary_content_is_one_line(hist_ws: Path) -> None:
    ok("write", hist_ws, "/blob", input=b"\xff\x00")
    ok("write", hist_ws, "/blob", input=b"\xfe\x00")
    assert ok("diff", hist_ws, "/blob").stdout == "Binary files /blob@1 and /blob differ\n"


def test_diff_errors_are_one_line(hist_ws: Path) -> None:
    assert_user_error(run("diff", hist_ws, "/nope"), "/nope: no history")
    assert_user_error(run("diff", hist_ws, "/src/app.py", 7), "no version 7")


def test_restore_version_makes_an_old_version_current(hist_ws: Path) -> None:
    """The output is the new 'restore' version (from N); the file reads as version N."""
    line = ok("restore-version", hist_ws, "/src/app.py", 1).stdout
    assert line.split()[:1] == ["4"]
    assert line.split()[3:] == [
        "restore",
        str(len(V1)),
        "B",
        blake_hex(V1)[:12],
        "cli",
        "(from",
        "1)",
    ]
    with agentfs.open(hist_ws) as ws:
        assert ws.read("/src/app.py") == V1
        assert ws.version("/src/app.py").op == "restore"
    data = json.loads(ok("restore-version", hist_ws, "/src/app.py", 2, "--json").stdout)
    assert (data["n"], data["op"], data["other"], data["hash"]) == (
        5,
        "restore",
        "2",
        blake_hex(V2),
    )
    assert_user_error(run("restore-version", hist_ws, "/src/app.py", 99), "no version 99")


# --- snapshots ------------------------------------------------------------------------------------


def test_snapshot_create_with_thread_label_and_meta(hist_ws: Path) -> None:
    """NAME, --thread, --label and --meta (any JSON) are stored; the line shows them."""
    line = ok(
        "snapshot", "create", hist_ws, "turn-2", "--thread", "chat-42", "--label", "tests green",
        "--meta", '{"turn": 2, "ids": [1, 2]}',
    ).stdout  # fmt: skip
    fields = line.split()
    assert fields[0] == "turn-2"
    assert fields[3:] == ["chat-42", "2", "files", "tests", "green"]
    with agentfs.open(hist_ws) as ws:
        info = ws.snapshots.get("turn-2")
    assert (info.thread, info.label, info.meta, info.actor) == (
        "chat-42",
        "tests green",
        {"turn": 2, "ids": [1, 2]},
        "cli",
    )


def test_snapshot_create_json_and_default_names(hist_ws: Path) -> None:
    """Without NAME the snapshot is snap-N (N its generation); --json is its info; with no
    --thread it belongs to AGENTFS_THREAD."""
    data = json.loads(ok("snapshot", "create", hist_ws, "--json", thread="env-thread").stdout)
    assert data["name"] == "snap-2"
    assert data["thread"] == "env-thread"
    assert (data["files"], data["bytes"], data["meta"]) == (2, len(V3) + 9, None)
    with agentfs.open(hist_ws) as ws:
        assert ws.snapshots.get("snap-2").as_dict() == data


def test_snapshot_create_refuses_bad_meta_and_existing_names(hist_ws: Path) -> None:
    """--meta that is not JSON is a usage error (exit 2) and creates nothing; an existing
    name is a one-line user error."""
    result = run("snapshot", "create", hist_ws, "bad", "--meta", "{turn: 2}")
    assert result.exit_code == 2
    assert "--meta" in result.stderr and "not JSON" in result.stderr
    assert "Traceback" not in result.stderr
    with agentfs.open(hist_ws) as ws:
        assert [s.name for s in ws.snapshots.list()] == ["turn-1"]
    assert_user_error(run("snapshot", "create", hist_ws, "turn-1"), "turn-1", "exists")


def test_snapshot_list_all_or_one_thread(hist_ws: Path) -> None:
    ok("snapshot", "create", hist_ws, "other-1", "--thread", "other")
    ok("snapshot", "create", hist_ws, "chat-2", "--thread", "chat", "--label", "L")
    names = [line.split()[0] for line in ok("snapshot", "list", hist_ws).stdout.splitlines()]
    assert names == ["turn-1", "other-1", "chat-2"]
    chat = ok("snapshot", "list", hist_ws, "--thread", "chat").stdout.splitlines()
    assert [line.split()[0] for line in chat] == ["turn-1", "chat-2"]
    assert chat[1].endswith("  L")
    data = json.loads(ok("snapshot", "list", hist_ws, "--thread", "other", "--json").stdout)
    assert [s["name"] for s in data] == ["other-1"]
    assert ok("snapshot", "list", hist_ws, "--thread", "nobody").stdout == ""


def test_snapshot_show_lists_entries_below_a_path(hist_ws: Path) -> None:
    """Type, permissions and path of each entry, after the snapshot's own line."""
    ok("write", hist_ws, "/src/later.py", "later")  # not in turn-1
    lines = ok("snapshot", "show", hist_ws, "turn-1").stdout.splitlines()
    assert lines[0].split()[0] == "turn-1"
    assert [line.split() for line in lines[1:]] == [
        ["file", "0644", "/README.md"],
        ["dir", "0755", "/src"],
        ["file", "0644", "/src/app.py"],
    ]
    below = ok("snapshot", "show", hist_ws, "turn-1", "/src").stdout.splitlines()
    assert [line.split()[-1] for line in below[1:]] == ["/src", "/src/app.py"]
    data = json.loads(ok("snapshot", "show", hist_ws, "turn-1", "/src/app.py", "--json").stdout)
    assert data["snapshot"]["name"] == "turn-1"
    assert data["entries"] == [{"path": "/src/app.py", "type": "file", "mode": 0o644}]
    assert_user_error(run("snapshot", "show", hist_ws, "turn-1", "/src/later.py"), "/src/later.py")


def test_snapshot_diff_to_now_between_snapshots_and_below_a_path(hist_ws: Path) -> None:
    ok("write", hist_ws, "/src/app.py", "changed")
    ok("write", hist_ws, "/docs/new.md", "new", "-p")
    ok("rm", hist_ws, "/README.md")
    assert ok("snapshot", "diff", hist_ws, "turn-1").stdout.splitlines() == [
        "D /README.md",
        "A /docs",
        "A /docs/new.md",
        "M /src/app.py",
    ]
    ok("snapshot", "create", hist_ws, "turn-2")
    ok("write", hist_ws, "/src/app.py", "again")
    between = ok("snapshot", "diff", hist_ws, "turn-1", "turn-2", "--path", "/src").stdout
    assert between == "M /src/app.py\n"
    data = json.loads(ok("snapshot", "diff", hist_ws, "turn-2", "--json").stdout)
    assert data == {"added": [], "removed": [], "modified": ["/src/app.py"]}
    assert ok("snapshot", "diff", hist_ws, "turn-2", "--path", "/docs").stdout == ""


def test_snapshot_restore_prints_the_changes_and_the_undo_command(hist_ws: Path) -> None:
    """Restore lists what it changed and names the command that undoes it; running that
    command brings the state before the restore back."""
    ok("write", hist_ws, "/src/app.py", "broken")
    ok("write", hist_ws, "/extra", "x")
    lines = ok("snapshot", "restore", hist_ws, "turn-1").stdout.splitlines()
    assert lines[:-1] == ["D /extra", "M /src/app.py"]
    prefix = f"undo with: agentfs snapshot restore {shlex.quote(str(hist_ws))} "
    assert lines[-1].startswith(prefix)
    undo = lines[-1].removeprefix(prefix)
    with agentfs.open(hist_ws) as ws:
        assert ws.read("/src/app.py") == V3
        assert not ws.exists("/extra")
        assert undo in [s.name for s in ws.snapshots.list()]
    ok(*shlex.split(lines[-1].removeprefix("undo with: agentfs ")))
    with agentfs.open(hist_ws) as ws:
        assert ws.read("/src/app.py") == b"broken"
        assert ws.read("/extra") == b"x"


def test_snapshot_restore_of_one_path(hist_ws: Path) -> None:
    """--path restores only that file or subtree; --json gives the undo name and changes."""
    ok("write", hist_ws, "/src/app.py", "broken")
    ok("write", hist_ws, "/README.md", "kept")
    data = json.loads(
        ok("snapshot", "restore", hist_ws, "turn-1", "--path", "/src", "--json").stdout
    )
    assert data["changes"] == {"added": [], "removed": [], "modified": ["/src/app.py"]}
    assert data["undo"].startswith("before-restore-")
    with agentfs.open(hist_ws) as ws:
        assert ws.read("/src/app.py") == V3
        assert ws.read("/README.md") == b"kept"


def test_snapshot_delete(hist_ws: Path) -> None:
    ok("snapshot", "create", hist_ws, "turn-2")
    assert ok("snapshot", "delete", hist_ws, "turn-1").stdout == ""
    with agentfs.open(hist_ws) as ws:
        assert [s.name for s in ws.snapshots.list()] == ["turn-2"]
    assert_user_error(run("snapshot", "delete", hist_ws, "turn-1"), "no snapshot named 'turn-1'")


@pytest.mark.parametrize(
    "words",
    [
        ("snapshot", "show", "{ws}", "ghost"),
        ("snapshot", "diff", "{ws}", "ghost"),
        ("snapshot", "diff", "{ws}", "turn-1", "ghost"),
        ("snapshot", "restore", "{ws}", "ghost"),
        ("snapshot", "delete", "{ws}", "ghost"),
        ("fork", "{ws}", "ghost", "{out}"),
    ],
    ids=["show", "diff", "diff-to-b", "restore", "delete", "fork"],
)
def test_an_unknown_snapshot_is_a_one_line_error(
    hist_ws: Path, tmp_path: Path, words: tuple[str, ...]
) -> None:
    out = tmp_path / "fork.db"
    args = [w.format(ws=hist_ws, out=out) for w in words]
    assert_user_error(run(*args), "no snapshot named 'ghost'")
    assert not out.exists()


# --- fork, gc, reads, retention -------------------------------------------------------------------


def test_fork_starts_a_new_workspace_from_a_snapshot(hist_ws: Path, tmp_path: Path) -> None:
    """OUT holds the snapshot's tree and the history up to it, nothing after."""
    ok("write", hist_ws, "/src/app.py", "after the snapshot")
    ok("snapshot", "create", hist_ws, "turn-2")
    out = tmp_path / "branch.db"
    assert ok("fork", hist_ws, "turn-1", out).stdout == f"{out}\n"
    with agentfs.open(out) as fork:
        assert fork.read("/src/app.py") == V3
        assert [v.n for v in fork.history("/src/app.py")] == [1, 2, 3]
        assert [s.name for s in fork.snapshots.list()] == ["turn-1"]
    with agentfs.open(hist_ws) as ws:
        assert ws.read("/src/app.py") == b"after the snapshot"


def test_fork_refuses_an_existing_out_file(hist_ws: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken.db"
    out.write_bytes(b"precious")
    assert_user_error(run("fork", hist_ws, "turn-1", out), str(out), "File exists")
    assert out.read_bytes() == b"precious"


def test_gc_json_reports_what_it_freed(hist_ws: Path) -> None:
    """With nothing to free every count is 0; after lowering retention to one version, gc
    prunes the older ones and the bytes kept for them (the snapshot still holds version 3's
    inode)."""
    data = json.loads(ok("gc", hist_ws, "--json").stdout)
    assert data == {"versions_pruned": 0, "entries_pruned": 0, "inodes_freed": 0, "kept_freed": 0}
    ok("retention", hist_ws, "--keep", 1)
    data = json.loads(ok("gc", hist_ws, "--json").stdout)
    assert data == {"versions_pruned": 2, "entries_pruned": 0, "inodes_freed": 0, "kept_freed": 2}
    with agentfs.open(hist_ws) as ws:
        assert [v.n for v in ws.history("/src/app.py")] == [3]
    text = ok("gc", hist_ws).stdout.splitlines()
    assert [line.split() for line in text] == [
        ["versions_pruned:", "0"],
        ["entries_pruned:", "0"],
        ["inodes_freed:", "0"],
        ["kept_freed:", "0"],
    ]


def test_reads_lists_what_a_thread_read_through_the_cli(hist_ws: Path) -> None:
    """cat with AGENTFS_THREAD set records the read; without it nothing is recorded;
    ``reads`` shows thread, version and path, --thread filters, --json is the library list."""
    ok("cat", hist_ws, "/README.md")
    assert ok("reads", hist_ws).stdout == ""
    ok("cat", hist_ws, "/src/app.py", thread="chat-7")
    ok("cat", hist_ws, "/README.md", thread="other")
    lines = [line.split() for line in ok("reads", hist_ws).stdout.splitlines()]
    assert [(f[0], f[3], f[4]) for f in lines] == [
        ("chat-7", "v3", "/src/app.py"),
        ("other", "v1", "/README.md"),
    ]
    only = ok("reads", hist_ws, "--thread", "chat-7").stdout.splitlines()
    assert len(only) == 1 and only[0].endswith("/src/app.py")
    data = json.loads(ok("reads", hist_ws, "--thread", "chat-7", "--json").stdout)
    with agentfs.open(hist_ws) as ws:
        assert data == [r.as_dict() for r in ws.reads_log("chat-7")]
    assert data[0]["hash"] == blake_hex(V3)
    assert ok("reads", hist_ws, "--thread", "nobody").stdout == ""


def test_retention_shows_and_sets_the_history_settings(hist_ws: Path) -> None:
    assert [line.split() for line in ok("retention", hist_ws).stdout.splitlines()] == [
        ["keep:", "all"],
        ["max_bytes:", "16777216"],
    ]
    set_out = ok("retention", hist_ws, "--keep", 5, "--max-size", 1000).stdout
    assert [line.split() for line in set_out.splitlines()] == [
        ["keep:", "5"],
        ["max_bytes:", "1000"],
    ]
    assert json.loads(ok("retention", hist_ws, "--json").stdout) == {"keep": 5, "max_bytes": 1000}
    assert json.loads(ok("retention", hist_ws, "--keep", "none", "--json").stdout)["keep"] == "none"
    data = json.loads(ok("retention", hist_ws, "--keep", "all", "--json").stdout)
    assert data == {"keep": "all", "max_bytes": 1000}
    with agentfs.open(hist_ws) as ws:
        assert (ws.history_settings.keep, ws.history_settings.max_bytes) == (None, 1000)


@pytest.mark.parametrize(
    "args",
    [("--keep", "bogus"), ("--keep", "-3"), ("--max-size", "-1")],
    ids=["keep-bogus", "keep-negative", "max-size-negative"],
)
def test_retention_refuses_bad_values_in_one_line(hist_ws: Path, args: tuple[str, ...]) -> None:
    result = run("retention", hist_ws, *args)
    assert_user_error(result, str(hist_ws))
    with agentfs.open(hist_ws) as ws:
        assert (ws.history_settings.keep, ws.history_settings.max_bytes) == (None, 16777216)
