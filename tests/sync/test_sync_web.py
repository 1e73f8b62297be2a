"""The web view's sync page against a real sync server: what the workspace has not pushed,
and, when asked, what the server has that it has not pulled."""

from __future__ import annotations

from pathlib import Path

import httpx2

import agentfs
from agentfs import sync
from tests.clirun import AGENTFS
from tests.serving import server_process
from tests.sync.conftest import SyncServer


def test_the_sync_page_shows_what_is_not_pushed_and_what_is_behind(
    tmp_path: Path, server: SyncServer
) -> None:
    laptop, desk = tmp_path / "laptop.db", tmp_path / "desk.db"
    with agentfs.open(laptop) as ws:
        ws.write("/notes.md", "one\n")
    sync.setup(laptop, server.url)
    sync.push(laptop)
    sync.clone(server.url, desk)
    with agentfs.open(desk) as ws:
        ws.write("/from-desk.md", "desk\n")
    sync.push(desk)
    with agentfs.open(laptop) as ws:
        ws.write("/draft.md", "not pushed\n")
    command = [AGENTFS, "serve", "web", laptop, "--port", "0"]
    with server_process(command, "open ") as (line, _printed):
        base, token = line.split()[1].split("/?token=")
        with httpx2.Client(cookies={"agentfs_web": token}) as http:
            assert ">Sync</a>" in http.get(base + "/").text
            local = http.get(base + "/sync").text
            asked = http.get(base + "/sync?ask=1").text
    assert server.url in local and "<td>1</td>" in local  # /draft.md changed since the push
    assert "ask the server" in local and "ask the server" not in asked
    assert "<th>behind the server</th><td>1</td>" in asked  # the desk's push
    assert "1970" not in local and "never" not in local  # pushed and pulled, with real times
