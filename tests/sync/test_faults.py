"""Faults during sync, against the real server: the worker killed at several points of a push
or a pull, the server killed mid-push, a hung server. Each leaves both sides consistent, and
running the operation again completes it with nothing duplicated or lost."""

from __future__ import annotations

import http.server
import json
import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import agentfs
from agentfs import sync
from agentfs.sync import SyncError
from tests.sync.conftest import SyncServer
from tests.sync.test_sync import build, clean, machine, picture, two_machines


def start_worker(op: str, workspace: Path) -> subprocess.Popen[str]:
    request = json.dumps({"op": op, "workspace": str(workspace)})
    return subprocess.Popen(
        [sys.executable, "-m", "agentfs.sync.worker", request],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def heavy(path: Path) -> None:
    """Enough to push that a kill lands in the middle: 3,000 small files and 32 MiB in 1 MiB
    files that do not compress (several replica transactions, so several requests)."""
    build(path, 3000)
    with agentfs.Workspace(path, create=False) as ws, ws.transaction():
        for i in range(32):
            ws.write(f"/big/{i}.bin", random.Random(i).randbytes(1 << 20), parents=True)


def kill_after(worker: subprocess.Popen[str], seconds: float) -> None:
    time.sleep(seconds)
    assert worker.poll() is None, "the operation finished before the kill: make it heavier"
    worker.kill()
    worker.wait()


@pytest.mark.parametrize("after", [0.3, 1.5])
def test_a_push_killed_midway_completes_when_run_again(
    tmp_path: Path, server: SyncServer, after: float
) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    heavy(a)
    sync.setup(a, server.url)
    kill_after(start_worker("push", a), after)
    clean(a)
    sync.push(a)
    assert sync.status(a)["unpushed"] == []
    sync.clone(server.url, b)
    assert picture(b) == picture(a)
    clean(b)


@pytest.mark.parametrize("after", [0.4])
def test_a_pull_killed_midway_completes_when_run_again(
    tmp_path: Path, server: SyncServer, after: float
) -> None:
    a, b = two_machines(tmp_path, server, "/seed.txt", "x")
    with agentfs.Workspace(b, create=False) as ws:  # a local change the pull must keep
        ws.write("/mine.txt", "kept\n")
    heavy(a)
    sync.push(a)
    kill_after(start_worker("pull", b), after)
    clean(b)
    sync.pull(b)
    got = picture(b)
    assert got["/mine.txt"][3] == b"kept\n"
    sync.push(b)
    sync.pull(a)
    assert picture(a) == picture(b)


def test_the_server_killed_mid_push_then_restarted(tmp_path: Path, server: SyncServer) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    heavy(a)
    sync.setup(a, server.url)
    worker = start_worker("push", a)
    time.sleep(0.8)
    server.kill()
    out, _ = worker.communicate(timeout=120)
    if worker.returncode:  # it failed with one line (or it had finished before the kill)
        assert "error" in json.loads(out.strip().splitlines()[-1])
    server.start()
    sync.push(a)
    sync.clone(server.url, b)
    assert picture(b) == picture(a)


def test_a_hung_server_times_out_and_the_retry_completes(
    tmp_path: Path, server: SyncServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    build(a, 50)
    sync.setup(a, server.url)
    monkeypatch.setenv("AGENTFS_SYNC_SOCKET_TIMEOUT", "2")
    server.pause()
    with pytest.raises(SyncError, match="did not answer in time"):  # not the deadline's
        sync.push(a, timeout=60)
    server.resume()
    before = picture(a)
    sync.push(a)
    assert picture(a) == before
    sync.clone(server.url, b)
    assert picture(b) == before


def test_a_deadline_stops_the_worker(tmp_path: Path, server: SyncServer) -> None:
    a = machine(tmp_path, "a")
    build(a, 5)
    sync.setup(a, server.url)
    server.pause()
    try:
        with pytest.raises(SyncError, match="took over 1 s and was stopped"):
            sync.push(a, timeout=1)
    finally:
        server.resume()
    sync.push(a)
    assert sync.status(a)["unpushed"] == []


def test_the_hazards_of_row_sync_cannot_reach_the_replica(
    tmp_path: Path, server: SyncServer
) -> None:
    """The replica's one table has a primary key and nothing else (a remote UNIQUE, CHECK or
    foreign-key error would commit half a push), and its WAL is checkpointed after each
    operation (it holds 4-5x the pending data until then)."""
    a = machine(tmp_path, "a")
    heavy(a)
    sync.setup(a, server.url)
    sync.push(a)
    replica = sync.replica_path(a)
    conn = sqlite3.connect(f"file:{replica}?mode=ro", uri=True)
    try:
        tables = conn.execute(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name = 'objects'"
        ).fetchall()
        assert len(tables) == 1
        sql = tables[0][1].upper()
        assert "PRIMARY KEY" in sql
        assert not any(word in sql for word in ("UNIQUE", "CHECK", "REFERENCES"))
        indexes = conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'objects'"
        ).fetchall()
        assert all(name.startswith("sqlite_autoindex") for (name,) in indexes)
    finally:
        conn.close()
    wal = Path(f"{replica}-wal")
    assert not wal.exists() or wal.stat().st_size < 4 << 20, wal.stat().st_size


def test_pyturso_never_runs_in_the_callers_process(tmp_path: Path, server: SyncServer) -> None:
    """pyturso holds the GIL for up to 0.7 s during a push and blocks forever on a hung
    server: every operation runs it in a worker, so the caller never even imports it."""
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    build(a, 20)
    program = (
        "import sys\n"
        "from agentfs import sync\n"
        f"a, b, url = {str(a)!r}, {str(b)!r}, {server.url!r}\n"
        "sync.setup(a, url); sync.push(a); sync.clone(url, b); sync.pull(b); sync.status(b)\n"
        "print(sorted(m for m in sys.modules if m == 'turso' or m.startswith('turso.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert picture(b) == picture(a)  # the operations did run


class _Refusing(http.server.BaseHTTPRequestHandler):
    """An HTTP server that answers every request with one status (as Turso Cloud refuses a
    bad token with 401; the local sync server checks no token, so it cannot show that)."""

    status = 401

    def do_GET(self) -> None:
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(b"refused")

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        return None


@pytest.mark.parametrize(("status", "says"), [(401, "refused the token"), (404, "no such")])
def test_a_refusing_server_is_one_clear_error_and_changes_nothing(
    tmp_path: Path, status: int, says: str
) -> None:
    handler = type("Handler", (_Refusing,), {"status": status})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serving = threading.Thread(target=httpd.serve_forever, daemon=True)
    serving.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        a = machine(tmp_path, "a")
        build(a, 2)
        before = picture(a)
        with pytest.raises(SyncError, match=says):
            sync.setup(a, url, token="wrong")
        assert picture(a) == before and not sync.replica_path(a).parent.exists()
        with pytest.raises(SyncError, match=says):
            sync.clone(url, machine(tmp_path, "b"), token="wrong")
        assert list((tmp_path / "b").iterdir()) == []
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_snapshot_sent_twice_is_received_once(tmp_path: Path, server: SyncServer) -> None:
    """The sender died between writing a snapshot's object and noting that it had: the next
    push sends it again, and the receiver recognises it."""
    a, b = machine(tmp_path, "a"), machine(tmp_path, "b")
    build(a, 3)
    sync.setup(a, server.url)
    sync.push(a)
    with agentfs.Workspace(a, create=False) as ws, ws.transaction():
        ws.conn.execute("DELETE FROM ws_sync_snapshot")  # as if never noted
    sync.push(a)
    sync.clone(server.url, b)
    with agentfs.Workspace(b, create=False) as ws:
        assert sorted(s.name for s in ws.snapshots.list()) == ["first", "second", "third"]
    sync.pull(b)
    with agentfs.Workspace(b, create=False) as ws:
        assert len(ws.snapshots.list()) == 3


OLD_FORMAT = """
import sys, turso.sync
conn = turso.sync.connect(sys.argv[1], remote_url=sys.argv[2], client_name="old")
conn.execute("CREATE TABLE objects (key TEXT PRIMARY KEY, kind TEXT NOT NULL, data BLOB NOT NULL)")
conn.execute("INSERT INTO objects VALUES ('0123456789abcdef/000000000001', 'calls', x'00')")
conn.commit()
conn.push()
"""


def test_a_remote_in_the_text_key_format_is_refused(tmp_path: Path, server: SyncServer) -> None:
    """A remote an earlier agentfs wrote (objects keyed by text) is one clear error, and
    nothing is left behind."""
    subprocess.run(
        [sys.executable, "-c", OLD_FORMAT, str(tmp_path / "old.db"), server.url], check=True
    )
    a = machine(tmp_path, "a")
    build(a, 2)
    before = picture(a)
    with pytest.raises(SyncError, match="earlier agentfs format"):
        sync.setup(a, server.url)
    assert picture(a) == before and not sync.replica_path(a).parent.exists()


SAME_ORIGIN = """
import sys, itertools
import agentfs
from agentfs.sync import worker
drawn = itertools.chain(["00000000aa", "00000000aa"], iter(lambda: "00000000bb", None))
worker.new_origin = lambda: next(drawn)
for name in ("a.db", "b.db"):
    with agentfs.Workspace(sys.argv[1] + "/" + name) as ws:
        replica = worker.connect(ws, sys.argv[2], None, False)
        replica.write_object("calls", [])
        replica.push()
        replica.close()
        print(replica.origin)
"""


def test_an_origin_the_remote_holds_already_is_drawn_again(
    tmp_path: Path, server: SyncServer
) -> None:
    """Two copies that draw the same origin would write the same rows; the second one sees
    the first one's objects under it and draws another."""
    done = subprocess.run(
        [sys.executable, "-c", SAME_ORIGIN, str(tmp_path), server.url],
        check=True,
        capture_output=True,
        text=True,
    )
    assert done.stdout.split() == ["00000000aa", "00000000bb"]
