"""``agentfs sync`` and ``agentfs clone`` from the command line, against the real server."""

from __future__ import annotations

import json
from pathlib import Path

import agentfs
from agentfs import credentials
from agentfs.sync.state import SyncState
from tests.clirun import assert_user_error, ok, run
from tests.sync.conftest import SyncServer
from tests.sync.test_sync import both_edit, machine


def test_two_machines_from_the_command_line(tmp_path: Path, server: SyncServer) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    ok("init", a)
    ok("write", a, "/notes/todo.md", "-p", input="- ship it\n")
    assert "syncs with" in ok("sync", "setup", a, "--remote", server.url).stdout
    pushed = ok("sync", "push", a, "-m", "first").stdout
    assert "committed 2 changes as" in pushed and "sent" in pushed
    assert "cloned" in ok("clone", server.url, b).stdout
    assert ok("cat", b, "/notes/todo.md").stdout == "- ship it\n"
    ok("write", b, "/notes/todo.md", input="- shipped\n")
    ok("sync", "push", b)
    assert "merged 1 commit: 1 change" in ok("sync", "pull", a).stdout
    assert ok("sync", "pull", a).stdout == "already up to date\n"
    state = json.loads(ok("sync", "status", a, "--json").stdout)
    assert (state["changed"], state["unpushed"], state["behind"]) == (0, [], 0)
    text = ok("sync", "status", a, "--offline").stdout
    assert "behind:   unknown (offline)" in text and "changed:  0 paths" in text


def test_conflicts_are_listed_and_resolved(tmp_path: Path, server: SyncServer) -> None:
    a, b = both_edit(tmp_path, server)
    ok("sync", "push", a)
    assert "1 conflict" in ok("sync", "push", b).stdout
    assert "conflict: /doc.txt: changed on both sides" in ok("sync", "status", b).stdout
    assert ok("sync", "resolve", b, "/doc.txt").stdout == "cleared 1 conflict\n"
    assert "conflict:" not in ok("sync", "status", b).stdout


def test_user_errors_are_one_line(tmp_path: Path, server: SyncServer) -> None:
    a = machine(tmp_path, "a")
    ok("init", a)
    assert_user_error(run("sync", "push", a), "has no remote", "agentfs sync setup")
    assert_user_error(
        run("sync", "setup", a, "--remote", "http://127.0.0.1:1"), "connection refused"
    )
    ok("sync", "setup", a, "--remote", server.url)
    assert_user_error(run("clone", server.url, a), "already exists")


def test_the_token_is_saved_only_when_asked_and_never_in_the_workspace(
    tmp_path: Path, server: SyncServer
) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    ok("init", a)
    ok("init", b)
    ok("sync", "setup", a, "--remote", server.url, "--token", "secret-a")
    ok("sync", "setup", b, "--remote", server.url, "--token", "secret-b", "--save-token")
    for path, saved in ((a, None), (b, "secret-b")):
        with agentfs.Workspace(path, create=False) as ws:
            origin = SyncState(ws.conn).get("origin")
            assert SyncState(ws.conn).get("token") is None
        assert credentials.load_token(server.url, origin) == saved
        assert b"secret-" not in path.read_bytes()
