"""Saved sync tokens live outside the workspace file, which travels: in a 0600 file of the
user's configuration directory (0700), keyed by the remote and the workspace's origin; a
token an earlier release stored inside the file moves there when the file is opened."""

from __future__ import annotations

import http.server
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import agentfs
from agentfs import credentials, sync
from agentfs.credentials import CredentialWarning
from agentfs.sync import SyncError
from agentfs.sync.state import SyncState
from tests.clirun import ok
from tests.old_schema import as_schema_13_with_token
from tests.sync.conftest import SyncServer
from tests.sync.test_sync import machine


def origin_of(workspace: Path) -> str:
    with agentfs.Workspace(workspace, create=False, readonly=True) as ws:
        origin: str = SyncState(ws.conn).get("origin")
        return origin


def files_holding(top: Path, secret: bytes) -> list[Path]:
    """Every file below ``top`` whose bytes contain ``secret``."""
    return sorted(p for p in top.rglob("*") if p.is_file() and secret in p.read_bytes())


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o000, 0o022, 0o077], ids=lambda u: f"umask{u:03o}")
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process's umask for the test (the sync worker inherits it), then the old one."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_a_saved_token_lives_in_a_private_file_of_the_configuration_directory(
    tmp_path: Path, server: SyncServer, config_home: Path, umask: int
) -> None:
    a = machine(tmp_path, "a")
    ok("init", a)
    ok("sync", "setup", a, "--remote", server.url, "--token", "secret-saved", "--save-token")
    saved = credentials.token_path(server.url, origin_of(a))
    assert saved.parent == config_home / "agentfs" / "sync-tokens"
    assert credentials.load_token(server.url, origin_of(a)) == "secret-saved"
    assert mode_of(saved) == 0o600
    for folder in (saved.parent, saved.parent.parent, config_home):
        assert mode_of(folder) == 0o700, folder
    assert mode_of(sync.replica_path(a).parent) == 0o700  # pyturso's files are inside
    ok("sync", "push", a)
    assert files_holding(tmp_path, b"secret-saved") == [saved]  # not the workspace nor replica
    ok("sync", "setup", a, "--remote", server.url)  # without --save-token: forgotten
    assert not saved.exists()


def test_without_xdg_config_home_the_token_goes_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    saved = credentials.save_token("http://127.0.0.1:1", "0123456789", "t")
    assert saved.parent == tmp_path / ".config" / "agentfs" / "sync-tokens"
    assert mode_of(tmp_path / ".config") == 0o700


@given(
    pairs=st.lists(
        st.tuples(st.text(min_size=1), st.text(min_size=1), st.text()),
        min_size=1,
        max_size=5,
        unique_by=lambda p: (p[0], p[1]),
    )
)
def test_each_remote_and_origin_has_its_own_token(pairs: list[tuple[str, str, str]]) -> None:
    """A token is read back only for the remote and origin it was saved for, so it is never
    sent to another server nor used by another copy; forgetting one forgets only it."""
    for remote, origin, token in pairs:
        credentials.save_token(remote, origin, token)
    for remote, origin, token in pairs:
        assert credentials.load_token(remote, origin) == token
        assert credentials.load_token(remote + "/", origin) is None
    first = pairs[0]
    assert credentials.forget_token(first[0], first[1])
    assert credentials.load_token(first[0], first[1]) is None
    for remote, origin, token in pairs[1:]:
        assert credentials.load_token(remote, origin) == token
        credentials.forget_token(remote, origin)


class _Recording(http.server.BaseHTTPRequestHandler):
    """Refuses every request, as Turso Cloud refuses a bad token, keeping the token sent."""

    seen: list[str | None]

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Authorization"))
        self.send_response(401)
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        return None


def test_a_given_token_wins_then_the_environment_then_the_saved_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str | None] = []
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), type("Handler", (_Recording,), {"seen": seen})
    )
    serving = threading.Thread(target=httpd.serve_forever, daemon=True)
    serving.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        a = machine(tmp_path, "a")
        with agentfs.Workspace(a) as ws:  # set up earlier, when this server took the token
            SyncState(ws.conn).create(url, "0123456789")
        credentials.save_token(url, "0123456789", "saved")

        def sent(operation: object) -> str | None:
            del seen[:]
            with pytest.raises(SyncError, match="refused the token"):
                operation()
            assert len(set(seen)) == 1, seen
            return seen[0]

        assert sent(lambda: sync.push(a)) == "Bearer saved"
        monkeypatch.setenv("TURSO_AUTH_TOKEN", "from-env")
        assert sent(lambda: sync.pull(a)) == "Bearer from-env"
        assert sent(lambda: sync.setup(a, url, token="given")) == "Bearer given"
        assert credentials.load_token(url, "0123456789") == "saved"  # a failed setup kept it
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_token_an_earlier_release_stored_in_the_file_moves_out_when_it_is_opened(
    tmp_path: Path, server: SyncServer
) -> None:
    a = machine(tmp_path, "a")
    agentfs.open(a).close()
    sync.setup(a, server.url)
    as_schema_13_with_token(a, "secret-in-file")
    assert files_holding(tmp_path, b"secret-in-file") == [a]
    with pytest.warns(CredentialWarning, match="moved to"):
        agentfs.open(a).close()
    saved = credentials.token_path(server.url, origin_of(a))
    assert credentials.load_token(server.url, origin_of(a)) == "secret-in-file"
    assert mode_of(saved) == 0o600
    # the row's bytes are overwritten in the file (secure_delete), not left on a free page
    assert files_holding(tmp_path, b"secret-in-file") == [saved]
    sync.push(a)


def test_the_sync_command_that_moved_a_token_says_so(tmp_path: Path, server: SyncServer) -> None:
    """The move happens in the sync worker's process; its warning reaches the caller, and
    the command line shows it as one line."""
    a = machine(tmp_path, "a")
    agentfs.open(a).close()
    sync.setup(a, server.url)
    as_schema_13_with_token(a, "secret-in-file")
    result = ok("sync", "push", a)
    assert result.stderr.startswith("agentfs: warning: ")
    assert "the sync token saved in the workspace file was moved to" in result.stderr
    assert result.stderr.count("\n") == 1
    assert credentials.load_token(server.url, origin_of(a)) == "secret-in-file"


def test_a_token_that_cannot_be_saved_is_still_taken_out_of_the_file(
    tmp_path: Path, server: SyncServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = machine(tmp_path, "a")
    agentfs.open(a).close()
    sync.setup(a, server.url)
    as_schema_13_with_token(a, "secret-in-file")
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocked))
    with pytest.warns(CredentialWarning, match="could not be saved"):
        agentfs.open(a).close()
    assert files_holding(tmp_path, b"secret-in-file") == []
