"""The audit (agentfs/tools/audit.py): a changing call's log row is staged in the change's own
transaction and published into tool_calls with its links later, in call order, by whichever
process flushes next, so no change is ever left without its row, even after a kill -9."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

import agentfs
from agentfs import db, fsck
from agentfs.tools import audit
from agentfs.tools.toolset import Toolset
from tests.clirun import ok as cli_ok
from tests.old_schema import as_schema_11


@pytest.fixture
def tools(ws: agentfs.Workspace) -> Toolset:
    ws.write("/a.txt", "one\n")
    return Toolset(ws, thread="t1")


def logged(ws: agentfs.Workspace) -> list[tuple[str, list[tuple[str, int]]]]:
    """Each call in tool_calls, oldest first, with the versions it is linked to."""
    calls = sorted(ws.tool_calls.list(), key=lambda call: call.id)
    writes = ws.tool_calls.writes_of(call.id for call in calls)
    return [(call.name, writes[call.id]) for call in calls]


def test_a_change_is_staged_with_its_row_and_published_with_its_links(tools: Toolset) -> None:
    ws = tools.ws
    tools.call("write_file", {"path": "/b.txt", "content": "two\n"})
    assert ws.tool_calls.staged() == 1 and logged(ws) == []
    assert ws.info().tool_calls == 1  # counted while staged
    tools.flush()
    assert ws.tool_calls.staged() == 0
    assert logged(ws) == [("write_file", [("/b.txt", 1)])]
    assert ws.info().tool_calls == 1


def test_calls_are_published_in_the_order_they_were_made(tools: Toolset) -> None:
    ws = tools.ws
    order = ["read_file", "edit_file", "stat", "write_file", "ls", "delete_file", "grep"]
    tools.call("read_file", {"path": "/a.txt"})
    tools.call("edit_file", {"path": "/a.txt", "old_string": "one", "new_string": "uno"})
    tools.call("stat", {"path": "/a.txt"})
    tools.call("write_file", {"path": "/c.txt", "content": "three\n"})
    tools.call("ls", {"path": "/"})
    tools.call("delete_file", {"path": "/c.txt"})
    tools.call("grep", {"pattern": "uno"})
    tools.flush()
    assert [name for name, _ in logged(ws)] == order
    assert dict(logged(ws))["edit_file"] == [("/a.txt", 2)]


def test_a_failed_change_leaves_no_staged_row(tools: Toolset) -> None:
    """The change and its staged row are one transaction: a call that fails inside it rolls
    both back; the failure itself is logged like a read-only call."""
    ws = tools.ws
    failed = tools.call(
        "apply_patch",
        {"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-nope\n+x\n*** End Patch"},
    )
    assert failed["error"]["code"] == "patch_failed"
    assert ws.tool_calls.staged() == 0
    tools.flush()
    [(name, writes)] = logged(ws)
    assert name == "apply_patch" and writes == []
    assert ws.read("/a.txt") == b"one\n"


def test_staged_rows_wait_for_a_batch_then_go_without_being_asked(
    tools: Toolset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit, "STAGED_BATCH", 5)
    for i in range(4):
        tools.call("write_file", {"path": f"/n{i}.txt", "content": "x"})
    assert tools.ws.tool_calls.staged() == 4
    tools.call("write_file", {"path": "/n4.txt", "content": "x"})
    assert tools.ws.tool_calls.staged() == 0 and len(logged(tools.ws)) == 5


def test_closing_the_workspace_publishes_what_its_toolsets_hold(tmp_path: Path) -> None:
    """Read-only calls' rows wait in memory; a toolset nobody flushed (an adapter's, dropped
    with its framework) must not take them away: the workspace's close publishes them."""
    with agentfs.open(tmp_path / "ws.db") as ws:
        ws.write("/a.txt", "one\n")
        Toolset(ws, thread="t1").call("read_file", {"path": "/a.txt"})
        Toolset(ws).call("ls", {"path": "/"})  # dropped at once, never flushed
        assert ws.tool_calls.list() == []
    with agentfs.open(tmp_path / "ws.db") as ws:
        assert sorted(c.name for c in ws.tool_calls.list()) == ["ls", "read_file"]


def test_a_file_s_text_is_logged_briefly_other_strings_in_full(tools: Toolset) -> None:
    text = "".join(f"line {i}\n" for i in range(200))
    tools.call("write_file", {"path": "/long.txt", "content": text})
    tools.call(
        "edit_file", {"path": "/long.txt", "old_string": "line 7\n", "new_string": "x" * 1000}
    )
    tools.call("read_file", {"path": "/long.txt"})
    tools.flush()
    calls = {call.name: call for call in tools.ws.tool_calls.list()}
    content = calls["write_file"].parameters["content"]
    assert content.startswith(text[: audit.CONTENT_LIMIT]) and content.endswith(" more chars]")
    assert len(content) < audit.CONTENT_LIMIT + 40
    assert calls["edit_file"].parameters["new_string"] == "x" * 1000
    shown = calls["read_file"].result["content"]
    assert len(shown) < audit.CONTENT_LIMIT + 40 and calls["read_file"].result["total_lines"] == 199


def test_a_file_s_text_up_to_content_limit_is_logged_whole(tools: Toolset) -> None:
    """A file's text of up to ``CONTENT_LIMIT`` characters is logged as it is; one more and
    it is cut (the version keeps it all), whatever the rest of the call's JSON weighs."""
    fits = "y" * audit.CONTENT_LIMIT
    tools.call("write_file", {"path": "/s.txt", "content": fits})
    tools.call("write_file", {"path": "/t.txt", "content": fits + "y"})
    tools.flush()
    logged = {
        call.parameters["path"]: call.parameters["content"] for call in tools.ws.tool_calls.list()
    }
    assert logged["/s.txt"] == fits
    assert logged["/t.txt"] == fits + "...[1 more chars]"
    assert tools.ws.read_text("/t.txt") == fits + "y"


def test_a_cut_text_keeps_its_count_when_the_rest_is_cut_too(tools: Toolset) -> None:
    """A text whose cut is still over ``WHOLE_BYTES`` of JSON (four-byte characters) is not
    cut a second time: its marker counts what the version has and the log does not."""
    text = "\N{GRINNING FACE}" * 5000
    tools.call("write_file", {"path": "/e.txt", "content": text})
    tools.flush()
    [call] = tools.ws.tool_calls.list()
    assert call.parameters["content"] == text[: audit.CONTENT_LIMIT] + "...[4,744 more chars]"


def test_a_duration_is_rounded_alike_recorded_or_published(ws: agentfs.Workspace) -> None:
    """``record`` (Python) and ``publish`` (SQL) round a duration's half millisecond up."""
    ws.tool_calls.record("recorded", {}, result=1, started_at=0.0, completed_at=0.0025)
    ws.conn.execute(
        "INSERT INTO ws_tool_call_staged(name, parameters, result, error, started_at,"
        " completed_at, writes) VALUES ('published', '{}', '1', NULL, 0.0, 0.0025, '[]')"
    )
    ws.tool_calls.publish()
    assert {c.name: c.duration_ms for c in ws.tool_calls.list()} == {"recorded": 3, "published": 3}


KILLED = """
import os, sys
import agentfs
from agentfs.tools.toolset import Toolset
ws = agentfs.open(sys.argv[1])
tools = Toolset(ws, thread="gone")
tools.call("write_file", {"path": "/from-the-dead.txt", "content": "still here\\n"})
tools.call("read_file", {"path": "/from-the-dead.txt"})
os.kill(os.getpid(), 9)
"""


def test_rows_staged_by_a_killed_process_are_published_by_the_next(tmp_path: Path) -> None:
    """kill -9 after a change: the change and its staged row survive, fsck is clean, and the
    next writable open (the CLI timeline's here) publishes it: the call shows with its
    version; the killed process's waiting read-only row is what a crash may lose."""
    path = tmp_path / "ws.db"
    agentfs.open(path).close()
    killed = subprocess.run([sys.executable, "-c", KILLED, str(path)], check=False)
    assert killed.returncode == -9
    with agentfs.open(path, readonly=True) as ws:  # a read-only handle moves nothing
        assert ws.read("/from-the-dead.txt") == b"still here\n"
        ws.tool_calls.publish()
        assert ws.tool_calls.staged() == 1 and fsck.check(ws).clean
    shown = json.loads(cli_ok("timeline", str(path), "--json").stdout)
    assert [(c["name"], c["writes"]) for c in shown] == [
        ("write_file", [{"path": "/from-the-dead.txt", "version": 1}])
    ]
    with agentfs.open(path) as ws:
        assert ws.tool_calls.staged() == 0


@pytest.mark.damages_workspace
def test_fsck_reports_a_malformed_staged_row(ws: agentfs.Workspace) -> None:
    ws.conn.execute(
        "INSERT INTO ws_tool_call_staged(name, parameters, result, error, started_at,"
        " completed_at, writes) VALUES ('write_file', '{', NULL, NULL, 2.0, 1.0, 'x')"
    )
    report = fsck.check(ws)
    assert [p.message for p in report.problems] == [
        "staged log row 1 of a write_file call is malformed"
    ]


def test_what_a_caller_does_with_a_result_later_is_not_what_is_logged(tools: Toolset) -> None:
    listing = tools.call("ls", {"path": "/"})
    arguments = {"path": "/a.txt"}
    tools.call("stat", arguments)
    listing["entries"].clear()
    arguments["path"] = "/changed"
    tools.flush()
    calls = {call.name: call for call in tools.ws.tool_calls.list()}
    assert [e["name"] for e in calls["ls"].result["entries"]] == ["a.txt"]
    assert calls["stat"].parameters == {"path": "/a.txt"}


def test_a_value_json_cannot_hold_is_noted_and_stops_no_other_row(tools: Toolset) -> None:
    """A NaN, a lone surrogate a client sent, an object JSON has no form for, in a call's
    arguments: that call is refused and logged (NaN as a string, the character escaped, the
    object as a note); the next calls and their rows are not held up."""
    assert tools.call("stat", {"path": float("nan")})["error"]["code"] == "invalid_argument"
    assert "error" in tools.call("read_file", {"path": "/\ud800"})
    assert tools.call("ls", {"path": object()})["error"]["code"] == "invalid_argument"
    assert tools.call("write_file", {"path": "/after.txt", "content": "ok"})["version"] == 1
    tools.flush()
    calls = {call.name: call for call in tools.ws.tool_calls.list()}
    assert calls["stat"].parameters == {"path": "NaN"}
    assert calls["read_file"].parameters == {"path": "/\ud800"}  # escaped, read back whole
    assert "unlogged" in calls["ls"].parameters
    assert tools.ws.tool_calls.writes(calls["write_file"].id) == [("/after.txt", 1)]


def test_a_staged_row_with_a_value_json_cannot_hold_keeps_its_links(ws: agentfs.Workspace) -> None:
    """The same escapes for a changing call's staged row (no tool makes one today: every
    change refuses such input first), which keeps its links."""
    log = audit.AuditLog(ws)
    with ws.transaction(), ws.recording_versions() as journal:
        ws.write("/odd.txt", "x")
        log.record(
            "write_file", {"path": "/odd.txt", "note": "\ud800"}, {"v": 1}, None, 1.0, journal
        )
    with ws.transaction(), ws.recording_versions() as journal:
        ws.write("/odd.txt", "y")
        log.record("write_file", {"path": "/odd.txt", "x": object()}, {"v": 2}, None, 2.0, journal)
    log.flush()
    first, second = sorted(ws.tool_calls.list(), key=lambda call: call.id)
    assert first.parameters == {"path": "/odd.txt", "note": "\ud800"}  # escaped, read back whole
    assert "unlogged" in second.parameters and "unlogged" in second.result
    assert ws.tool_calls.writes(first.id) == [("/odd.txt", 1)]
    assert ws.tool_calls.writes(second.id) == [("/odd.txt", 2)]


@pytest.mark.damages_workspace
@pytest.mark.parametrize(
    ("writes", "linked"),
    [
        ('[["/a"]]', []),
        ("not json", []),
        ('{"x": ["/a", 1]}', []),
        ("5", []),
        ('[["/a", "1"], [2, 3], ["/b", 1.5], ["/c", true]]', []),
        ('[["/a", 1], ["/b"], ["/c", 2, 3]]', [("/a", 1)]),
    ],
)
def test_a_staged_row_with_malformed_links_is_published_without_them(
    ws: agentfs.Workspace, writes: str, linked: list[tuple[str, int]]
) -> None:
    """A hand-edited staged row never blocks opening the workspace: it goes into the log
    with only its well-formed ``[path, n]`` links, and fsck reported it before. The rows
    staged before and after it keep their own links."""
    stage = (
        "INSERT INTO ws_tool_call_staged(name, parameters, result, error, started_at,"
        " completed_at, writes) VALUES (?, '{}', '{}', NULL, ?, ?, ?)"
    )
    ws.conn.execute(stage, ("after", 5.0, 6.0, '[["/after", 2]]'))
    ws.conn.execute(stage, ("write_file", 3.0, 4.0, writes))
    ws.conn.execute(stage, ("before", 1.0, 2.0, '[["/before", 1]]'))
    assert [p.message for p in fsck.check(ws).problems] == [
        "staged log row 2 of a write_file call is malformed"
    ]
    ws.tool_calls.publish()
    calls = {call.name: call.id for call in ws.tool_calls.list()}
    assert ws.tool_calls.staged() == 0 and list(calls) == ["after", "write_file", "before"]
    assert ws.tool_calls.writes(calls["write_file"]) == linked
    assert ws.tool_calls.writes(calls["before"]) == [("/before", 1)]
    assert ws.tool_calls.writes(calls["after"]) == [("/after", 2)]


def test_a_call_that_makes_several_versions_is_linked_to_all_of_them(tools: Toolset) -> None:
    """A staged row keeps its first link in columns and the others as JSON (migration 12):
    publish links every one, and the calls either side keep theirs."""
    tools.call("write_file", {"path": "/before.txt", "content": "b\n"})
    patch = (
        "*** Begin Patch\n"
        + "".join(f"*** Add File: p{i}.txt\n+{i}\n" for i in range(3))
        + "*** Update File: a.txt\n@@\n-one\n+uno\n*** End Patch"
    )
    assert "error" not in tools.call("apply_patch", {"patch": patch})
    tools.call("mkdir", {"path": "/d"})
    tools.flush()
    assert logged(tools.ws) == [
        ("write_file", [("/before.txt", 1)]),
        ("apply_patch", [("/a.txt", 2), ("/p0.txt", 1), ("/p1.txt", 1), ("/p2.txt", 1)]),
        ("mkdir", []),
    ]


@pytest.mark.damages_workspace
@pytest.mark.parametrize(
    ("path", "n"),
    [("/a", "one"), ("/a", None), (None, 3), ("/a", 1.5), (b"/a", 1)],
)
def test_a_staged_row_with_a_malformed_first_link_is_published_without_it(
    ws: agentfs.Workspace, path: object, n: object
) -> None:
    """The first link's columns hold a text path and an integer version, or nothing: anything
    else (their affinities turn '1' into 1 and 5 into '5', not these) is reported by fsck and
    left out when the row is published, with its other links kept."""
    ws.conn.execute(
        "INSERT INTO ws_tool_call_staged(name, parameters, result, error, started_at,"
        " completed_at, path, n, writes) VALUES ('apply_patch', '{}', '{}', NULL, 1.0, 2.0,"
        " ?, ?, '[[\"/b\", 2]]')",
        (path, n),
    )
    assert [p.message for p in fsck.check(ws).problems] == [
        "staged log row 1 of a apply_patch call is malformed"
    ]
    ws.tool_calls.publish()
    [call] = ws.tool_calls.list()
    assert ws.tool_calls.staged() == 0 and ws.tool_calls.writes(call.id) == [("/b", 2)]


def test_rows_staged_before_migration_12_are_published_with_their_links(
    tmp_path: Path,
) -> None:
    """A schema-11 file's staged rows keep all their links in ``writes``: the next writable
    open adds the link columns and publishes those rows with every link."""
    path = tmp_path / "ws.db"
    agentfs.open(path).close()
    as_schema_11(path)
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(
            "INSERT INTO ws_tool_call_staged(name, parameters, result, error, started_at,"
            " completed_at, writes) VALUES ('apply_patch', '{}', '{}', NULL, 1.0, 2.0,"
            ' \'[["/a", 1], ["/b", 3]]\')'
        )
    conn.close()
    with agentfs.open(path) as ws:
        assert db.schema_version(ws.conn) == db.SCHEMA_VERSION
        [call] = ws.tool_calls.list()
        assert ws.tool_calls.writes(call.id) == [("/a", 1), ("/b", 3)]
        assert ws.tool_calls.staged() == 0 and fsck.check(ws).clean
