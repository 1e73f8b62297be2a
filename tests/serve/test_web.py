"""``agentfs serve web``: the review view in a real browser (Debian's chromium, driven by
Playwright) and, at the HTTP level, tried as an attacker would: without the token, with
another Host or Origin, a form without its CSRF field, an action on a read-only view."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

import agentfs
from agentfs.tools.toolset import Toolset
from tests.clirun import AGENTFS
from tests.serving import server_process

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@dataclass
class Served:
    url: str  # the printed URL, with its token
    base: str


@contextmanager
def serving(ws: Path, *args: str) -> Iterator[Served]:
    """``agentfs serve web ws --port 0 args`` until the block ends."""
    with server_process([AGENTFS, "serve", "web", ws, "--port", "0", *args], "open ") as (
        line,
        _printed,
    ):
        url = line.split()[1]
        yield Served(url, url.split("/?token=")[0])


def signed_in(browser: Any, served: Served) -> Any:
    """A new page of ``browser`` that opened the printed URL (so it holds the cookie)."""
    page = browser.new_page()
    page.goto(served.url)
    return page


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A thread's work: a file written then edited by tool calls, a failed call, snapshots."""
    path = tmp_path / "ws.db"
    with agentfs.open(path) as workspace:
        tools = Toolset(workspace, thread="t1", actor="coder")
        tools.call("write_file", {"path": "/src/app.py", "content": "def main():\n    return 1\n"})
        workspace.snapshots.create("before-edit", thread="t1")
        tools.call(
            "edit_file", {"path": "/src/app.py", "old_string": "return 1", "new_string": "return 2"}
        )
        tools.call("read_file", {"path": "/missing.txt"})
        workspace.snapshots.create("after-edit", thread="t1")
        tools.flush()
    return path


@pytest.fixture
def browser() -> Iterator[object]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run `make test` (it installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def test_a_person_reviews_a_threads_work_and_restores_a_version(ws: Path, browser: object) -> None:
    with serving(ws) as served:
        page = signed_in(browser, served)
        assert "token" not in page.url  # the token went into a cookie
        assert "edit_file" in page.inner_text("table.calls")
        page.click("text=Files")
        page.click("text=src/")
        page.click("text=app.py")
        assert "return 2" in page.inner_text(".content")
        assert page.locator(".highlighttable .linenos").count() == 1  # numbered lines
        history = page.inner_text(".history")
        assert "v1" in history and "v2" in history and "t1" in history
        page.click(".history li:has-text('v2') >> text=diff")
        assert "-    return 1" in page.inner_text("pre.diff")
        assert "+    return 2" in page.inner_text("pre.diff")
        page.go_back()
        page.click(".history li:has-text('v1') >> button:has-text('restore')")
        assert "return 1" in page.inner_text(".content")
    with agentfs.open(ws) as workspace:
        assert workspace.read("/src/app.py") == b"def main():\n    return 1\n"


def test_snapshots_on_a_timeline_with_their_changes_and_restore(ws: Path, browser: object) -> None:
    with serving(ws) as served:
        page = signed_in(browser, served)
        page.click("header >> text=Snapshots")
        assert page.inner_text("ol.timeline").index("before-edit") < page.inner_text(
            "ol.timeline"
        ).index("after-edit")
        page.click("text=after-edit")
        assert "/src/app.py" in page.inner_text("main")  # modified since before-edit
        page.go_back()
        page.click("text=before-edit")
        page.click("button:has-text('Restore the workspace')")
    with agentfs.open(ws) as workspace:
        assert workspace.read("/src/app.py") == b"def main():\n    return 1\n"


def test_the_tool_call_log_filters_and_links_to_what_a_call_wrote(
    ws: Path, browser: object
) -> None:
    with serving(ws) as served:
        page = signed_in(browser, served)
        page.click("header >> text=Tool calls")
        page.select_option("select[name=outcome]", "error")
        page.click("button:has-text('Filter')")
        rows = page.locator("table.calls tbody tr")
        assert rows.count() == 1 and "read_file" in rows.inner_text()
        assert "t1" in rows.inner_text()  # a call that wrote nothing has its thread too
        page.select_option("select[name=outcome]", "")
        page.select_option("select[name=thread]", "t1")
        page.click("button:has-text('Filter')")
        assert page.locator("table.calls tbody tr").count() == 3
        page.select_option("select[name=thread]", "")
        page.select_option("select[name=tool]", "edit_file")
        page.click("button:has-text('Filter')")
        page.click("table.calls a:has-text('/src/app.py v2')")
        assert "+    return 2" in page.inner_text("pre.diff")


def test_search_and_grep(ws: Path, browser: object) -> None:
    with serving(ws) as served:
        page = signed_in(browser, served)
        page.click("header >> text=Search")
        page.fill("input[name=q]", "return 2")
        page.check("input[value=grep]")
        page.click("button:has-text('Find')")
        assert "/src/app.py:2" in page.inner_text("ul.hits")


def test_what_an_agent_writes_appears_without_a_reload(ws: Path, browser: object) -> None:
    with serving(ws) as served:
        page = signed_in(browser, served)
        page.click("text=Files")
        page.wait_for_selector("#live.on")  # the event stream is open
        with agentfs.open(ws) as workspace:  # another process: the agent
            workspace.write("/NEW.md", "fresh\n")
        page.wait_for_selector("text=NEW.md", timeout=10_000)


def test_the_overlays_changes_are_applied_and_discarded_per_file(
    tmp_path: Path, browser: object
) -> None:
    host = tmp_path / "project"
    host.mkdir()
    (host / "a.txt").write_text("a\n")
    (host / "b.txt").write_text("b\n")
    db = tmp_path / "over.db"
    with agentfs.open(db, base=host) as workspace:
        workspace.write("/a.txt", "a, changed\n")
        workspace.write("/b.txt", "b, changed\n")
    with serving(db) as served:
        page = signed_in(browser, served)
        page.click("header >> text=Changes")
        page.click("tr:has-text('/a.txt') >> button:has-text('apply')")
        page.click("tr:has-text('/b.txt') >> button:has-text('discard')")
        assert "no changes" in page.inner_text("table.changes")
    assert (host / "a.txt").read_text() == "a, changed\n"
    assert (host / "b.txt").read_text() == "b\n"
    with agentfs.open(db) as workspace:
        assert workspace.read("/b.txt") == b"b\n"


def test_a_read_only_view_serves_no_action(ws: Path, browser: object) -> None:
    with serving(ws, "--read-only") as served:
        page = signed_in(browser, served)
        page.goto(served.base + "/file/src/app.py")
        assert page.locator("button:has-text('restore')").count() == 0
        cookies = {c["name"]: c["value"] for c in page.context.cookies()}
        answer = httpx2.post(served.base + "/restore/src/app.py", data={"n": "1"}, cookies=cookies)
        assert answer.status_code in (404, 405)
    with agentfs.open(ws) as workspace:
        assert workspace.read("/src/app.py") == b"def main():\n    return 2\n"


def test_no_request_passes_without_the_token_or_from_elsewhere(ws: Path) -> None:
    with serving(ws) as served:
        token = served.url.split("token=")[1]
        port = served.base.rsplit(":", 1)[1]
        assert httpx2.get(served.base + "/tree/").status_code == 401
        assert (
            httpx2.get(served.base + "/tree/", cookies={"agentfs_web": "x" * 32}).status_code == 401
        )
        assert httpx2.get(served.url + "x").status_code == 401  # a wrong token in the URL
        entered = httpx2.get(served.url)
        assert entered.status_code == 303 and entered.headers["location"] == "/"
        cookie = entered.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        jar = {"agentfs_web": token}
        page = httpx2.get(served.base + "/tree/", cookies=jar)
        assert page.status_code == 200
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY"
        assert page.headers["referrer-policy"] == "same-origin"
        rebound = httpx2.get(
            served.base + "/tree/", cookies=jar, headers={"Host": f"evil.example:{port}"}
        )
        assert rebound.status_code == 421
        forged = httpx2.post(
            served.base + "/restore/src/app.py",
            data={"n": "1"},
            cookies=jar,
            headers={"Origin": "http://evil.example"},
        )
        assert forged.status_code == 403
        no_csrf = httpx2.post(served.base + "/restore/src/app.py", data={"n": "1"}, cookies=jar)
        assert no_csrf.status_code == 403
        time.sleep(0.1)
    with agentfs.open(ws) as workspace:
        assert workspace.read("/src/app.py") == b"def main():\n    return 2\n"


def _run_catching(failed: list[BaseException], *call: Any) -> None:
    import anyio

    try:
        anyio.run(*call)
    except BaseException as exc:  # reported by the test's thread
        failed.append(exc)


async def _agent_writes(url: str, token: str) -> None:
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with anyio.fail_after(60):
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool(
                "write_file", {"path": "/FROM-AGENT.md", "content": "over MCP\n"}
            )
            assert not result.is_error


def test_a_person_watches_an_agent_that_works_through_the_same_server(
    ws: Path, browser: object
) -> None:
    """``serve web --mcp``: the agent's calls at /mcp (its bearer token) appear in the page a
    person has open, without a reload."""
    token = "agent-token-0123456789abcdef"
    os.environ["AGENTFS_TOKEN"] = token
    try:
        with serving(ws, "--mcp") as served:
            page = signed_in(browser, served)
            page.click("text=Files")
            page.wait_for_selector("#live.on")
            assert httpx2.post(served.base + "/mcp", json={}).status_code == 401
            # the agent in a thread of its own: Playwright's loop runs in this one
            failed: list[BaseException] = []
            agent = threading.Thread(
                target=lambda: _run_catching(failed, _agent_writes, served.base + "/mcp", token)
            )
            agent.start()
            agent.join(timeout=90)
            assert not failed, failed
            page.wait_for_selector("text=FROM-AGENT.md", timeout=10_000)
    finally:
        del os.environ["AGENTFS_TOKEN"]


def test_a_large_file_is_shown_in_part_and_plain(ws: Path) -> None:
    """Past 128 KiB a file's text is not highlighted by its language (that costs seconds on
    the thread every request shares), past 1 MiB only its start is shown; both are said."""
    with agentfs.open(ws) as workspace:
        workspace.write("/big.py", "".join(f"x{i} = {i}\n" for i in range(200_000)))
    with serving(ws) as served:
        jar = {"agentfs_web": served.url.split("token=")[1]}
        page = httpx2.get(served.base + "/file/big.py", cookies=jar).text
    assert "the first 1,048,576 of 3,177,780 bytes" in page and "not highlighted" in page
    assert "x1000 = 1000" in page and "x199999" not in page


def test_no_path_or_query_a_visitor_makes_up_breaks_a_page(ws: Path) -> None:
    """What a hostile or careless URL holds (a NUL byte, a name that is not UTF-8, ``..``, a
    path deeper than any, versions that do not exist, a regex that does not compile) gets a
    page saying so, never a server error."""
    odd = [
        "/file/%00",
        "/tree/%00",
        "/diff/%00",
        "/file/a%ffb",
        "/file/..%2f..%2fetc%2fpasswd",
        "/tree/../../etc",
        "/file" + "/a" * 3000,
        "/diff/src/app.py?a=999&b=1000",
        "/diff/src/app.py?a=-1",
        "/diff/missing?a=1",
        "/snapshot/missing",
        "/snapshot/%00",
        "/calls?before=abc&tool=%00&outcome=maybe&thread=%ff",
        "/calls?before=99999999999999999999999999",
        "/diff/src/app.py?a=99999999999999999999999&b=%C2%B2",
        "/search?q=%28&kind=grep",
        "/search?q=%00",
        "/search?q=x&kind=other",
        "/changes",
        "/sync",
    ]
    with serving(ws) as served:
        jar = {"agentfs_web": served.url.split("token=")[1]}
        with httpx2.Client(cookies=jar) as http:
            answers = {path: http.get(served.base + path).status_code for path in odd}
            posted = http.post(
                served.base + "/restore/%00",
                data={"n": "x", "csrf": _csrf(http, served.base)},
            ).status_code
    assert {path: code for path, code in answers.items() if code >= 500} == {}
    assert posted == 400


def _csrf(http: httpx2.Client, base: str) -> str:
    page = http.get(base + "/file/src/app.py").text
    return page.split('name="csrf" value="')[1].split('"')[0]
