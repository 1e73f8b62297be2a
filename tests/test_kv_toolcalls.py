"""The spec's key-value store and tool-call log."""

from __future__ import annotations

import math
import time

import pytest

import agentfs

# --- kv_store ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [None, True, 0, -7, 2**62, 1.5, "", "text ✓", [], [1, "two", None], {"nested": {"a": [1, {}]}}],
    ids=repr,
)
def test_kv_round_trips_json_values(ws: agentfs.Workspace, value: object) -> None:
    ws.kv.set("k", value)
    assert ws.kv.get("k") == value
    assert "k" in ws.kv


def test_kv_stores_json_text_in_the_spec_table(ws: agentfs.Workspace) -> None:
    ws.kv.set("k", {"é": [1, 2]})
    assert ws.conn.execute("SELECT value FROM kv_store WHERE key = 'k'").get == '{"é": [1, 2]}'


def test_kv_set_overwrites_and_keeps_created_at(ws: agentfs.Workspace) -> None:
    ws.kv.set("k", 1)
    ws.conn.execute("UPDATE kv_store SET created_at = 100, updated_at = 100")
    ws.kv.set("k", 2)
    (entry,) = ws.kv.list()
    assert (entry.key, entry.value, entry.created_at) == ("k", 2, 100)
    assert entry.updated_at > 100


def test_kv_get_of_a_missing_key_raises_or_returns_the_default(ws: agentfs.Workspace) -> None:
    with pytest.raises(KeyError):
        ws.kv.get("absent")
    assert ws.kv.get("absent", None) is None
    assert ws.kv.get("absent", "fallback") == "fallback"
    assert "absent" not in ws.kv


@pytest.mark.parametrize("value", [object(), {1, 2}, b"bytes", math.nan, math.inf, {"k": object()}])
def test_kv_refuses_non_json_and_stores_nothing(ws: agentfs.Workspace, value: object) -> None:
    ws.kv.set("k", "before")
    with pytest.raises(agentfs.InvalidValueError) as info:
        ws.kv.set("k", value)
    assert "'k'" in str(info.value)
    with pytest.raises(agentfs.InvalidValueError):
        ws.kv.set("other", value)
    assert [(e.key, e.value) for e in ws.kv.list()] == [("k", "before")]


def test_kv_delete_reports_whether_the_key_existed(ws: agentfs.Workspace) -> None:
    ws.kv.set("k", 1)
    assert ws.kv.delete("k") is True
    assert ws.kv.delete("k") is False
    assert ws.kv.list() == []


KEYS = [
    "",
    "%",
    "50%",
    "_",
    "a",
    "a/",
    "a/b",
    "a/c",
    "a_b",
    "ab",
    "b",
    "é",
    "é/x",
    "日本",
    "日本語",
    "\U0010ffff",
    "\U0010ffffz",
    "z\U0010ffff",
    "😀",
]


@pytest.fixture
def keyed(ws: agentfs.Workspace) -> agentfs.Workspace:
    for i, key in enumerate(reversed(KEYS)):
        ws.kv.set(key, i)
    return ws


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "a",
        "a/",
        "a/b",
        "a_",
        "%",
        "5",
        "é",
        "日本",
        "\U0010ffff",
        "z",
        "z\U0010ffff",
        "😀",
        "q",
    ],
    ids=ascii,
)
def test_kv_list_returns_exactly_the_keys_with_the_prefix_sorted(
    keyed: agentfs.Workspace, prefix: str
) -> None:
    expected = sorted((k for k in KEYS if k.startswith(prefix)), key=lambda k: k.encode())
    assert [e.key for e in keyed.kv.list(prefix)] == expected


def test_kv_list_carries_values_and_timestamps(ws: agentfs.Workspace) -> None:
    ws.kv.set("p/1", {"x": 1})
    (entry,) = ws.kv.list("p/")
    assert (entry.key, entry.value) == ("p/1", {"x": 1})
    assert entry.created_at > 0 and entry.updated_at >= entry.created_at


def test_kv_list_accepts_a_prefix_ending_below_the_surrogate_range(ws: agentfs.Workspace) -> None:
    ws.kv.set("\ud7ff/key", 1)
    ws.kv.set("\ue000", 2)
    assert [e.key for e in ws.kv.list("\ud7ff")] == ["\ud7ff/key"]


# --- tool_calls ----------------------------------------------------------------------------------


def test_tool_call_round_trips_with_duration_from_float_times(ws: agentfs.Workspace) -> None:
    call_id = ws.tool_calls.record(
        "read_file", {"path": "/a"}, result={"lines": 3}, started_at=100.25, completed_at=101.5
    )
    (call,) = ws.tool_calls.list()
    assert call.as_dict() == {
        "id": call_id,
        "name": "read_file",
        "parameters": {"path": "/a"},
        "result": {"lines": 3},
        "error": None,
        "started_at": 100,
        "completed_at": 101,
        "duration_ms": 1250,
        "thread": None,
        "actor": None,
    }


def test_who_made_a_call_is_kept_beside_it(ws: agentfs.Workspace) -> None:
    """Recorded directly, staged by a changing tool call, or waiting in memory for a
    read-only one: each call keeps its thread and actor (the spec's table has neither)."""
    from agentfs.tools.toolset import Toolset

    ws.tool_calls.record("grep", {}, result={}, started_at=1, thread="direct", actor="me")
    tools = Toolset(ws, thread="t1", actor="coder")
    tools.call("write_file", {"path": "/a.txt", "content": "a\n"})
    tools.call("read_file", {"path": "/a.txt"})
    Toolset(ws).call("ls", {"path": "/"})
    tools.flush()
    who = {c.name: (c.thread, c.actor) for c in ws.tool_calls.list()}
    assert who == {
        "grep": ("direct", "me"),
        "write_file": ("t1", "coder"),
        "read_file": ("t1", "coder"),
        "ls": ("main", None),
    }


def test_tool_call_with_an_error_stores_no_result(ws: agentfs.Workspace) -> None:
    ws.tool_calls.record(
        "grep", result={"ignored": True}, error="boom", started_at=1, completed_at=1
    )
    (call,) = ws.tool_calls.list()
    assert (call.parameters, call.result, call.error) == (None, None, "boom")


def test_tool_call_refuses_completion_before_start(ws: agentfs.Workspace) -> None:
    with pytest.raises(agentfs.InvalidValueError):
        ws.tool_calls.record("t", started_at=10.0, completed_at=9.0)
    assert ws.tool_calls.list() == []


def test_tool_call_refuses_non_json_and_stores_nothing(ws: agentfs.Workspace) -> None:
    with pytest.raises(agentfs.InvalidValueError):
        ws.tool_calls.record("t", {"x": object()}, started_at=1.0, completed_at=2.0)
    with pytest.raises(agentfs.InvalidValueError):
        ws.tool_calls.record("t", result=math.nan, started_at=1.0, completed_at=2.0)
    assert ws.tool_calls.list() == []


def test_tool_call_without_completion_time_completes_now(ws: agentfs.Workspace) -> None:
    started = time.time() - 2
    ws.tool_calls.record("t", started_at=started)
    (call,) = ws.tool_calls.list()
    assert 1900 <= call.duration_ms <= 60_000


@pytest.fixture
def logged(ws: agentfs.Workspace) -> agentfs.Workspace:
    log = ws.tool_calls
    log.record("read", started_at=10, completed_at=11)
    log.record("write", started_at=20, completed_at=20.5, error="EISDIR")
    log.record("read", started_at=30, completed_at=30.1)
    log.record("read", started_at=30, completed_at=30.3, error="ENOENT")
    log.record("grep", started_at=40, completed_at=40)
    return ws


def test_tool_calls_list_newest_first_with_ties_by_id(logged: agentfs.Workspace) -> None:
    calls = logged.tool_calls.list()
    assert [(c.id, c.name, c.started_at) for c in calls] == [
        (5, "grep", 40),
        (4, "read", 30),
        (3, "read", 30),
        (2, "write", 20),
        (1, "read", 10),
    ]


def test_tool_calls_filter_by_name_since_and_limit(logged: agentfs.Workspace) -> None:
    log = logged.tool_calls
    assert [c.id for c in log.list(name="read")] == [4, 3, 1]
    assert [c.id for c in log.list(since=20)] == [5, 4, 3]  # strictly after
    assert [c.id for c in log.list(name="read", since=10, limit=1)] == [4]
    assert log.list(name="absent") == []
    assert log.list(limit=0) == []


def test_tool_call_stats_count_successes_failures_and_mean_duration(
    logged: agentfs.Workspace,
) -> None:
    stats = {s.name: s for s in logged.tool_calls.stats()}
    assert [s.name for s in logged.tool_calls.stats()] == ["read", "grep", "write"]
    read = stats["read"]
    assert (read.total_calls, read.successful, read.failed) == (3, 2, 1)
    assert read.avg_duration_ms == pytest.approx((1000 + 100 + 300) / 3)
    assert (stats["write"].failed, stats["grep"].avg_duration_ms) == (1, 0)


def test_tool_call_log_only_grows(logged: agentfs.Workspace) -> None:
    before = [c.as_dict() for c in logged.tool_calls.list()]
    logged.tool_calls.record("read", started_at=50, completed_at=51)
    after = [c.as_dict() for c in logged.tool_calls.list()]
    assert after[1:] == before
    assert after[0]["id"] == 6
