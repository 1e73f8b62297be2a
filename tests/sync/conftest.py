"""A real Turso sync server per test: ``tursodb --sync-server`` from npm ``turso`` (installed
by ``make test``), on a free loopback port, in the test's own directory; and a configuration
directory of the test's own, where saved tokens go (never the user's)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI_PACKAGES = ROOT / ".npm" / "node_modules" / "@tursodatabase"


def tursodb() -> Path:
    """The native server binary (not npm's node launcher, so a test signals the server itself)."""
    found = sorted(CLI_PACKAGES.glob("cli-*/tursodb"))
    if not found:
        pytest.fail(f"no tursodb under {CLI_PACKAGES}: run `make test` (it installs npm turso)")
    return found[0]


class SyncServer:
    """One ``tursodb --sync-server`` on ``remote.db`` in ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = (self.directory / "server.log").open("ab")
        self.process = subprocess.Popen(
            [str(tursodb()), "--sync-server", f"127.0.0.1:{self.port}", "remote.db"],
            cwd=self.directory,
            # its temporary database goes with the test's files, not into /tmp for good
            env={**os.environ, "TURSO_TMPDIR": str(self.directory)},
            stdout=log,
            stderr=log,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)
        raise RuntimeError(f"the sync server did not listen on {self.port}")

    def kill(self) -> None:
        """kill -9, as a crash."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def pause(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$XDG_CONFIG_HOME`` for this test (and the sync workers it starts), not yet made,
    and no ``TURSO_AUTH_TOKEN`` from the environment the tests run in."""
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("TURSO_AUTH_TOKEN", raising=False)
    return home


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SyncServer]:
    running = SyncServer(tmp_path / "server")
    running.start()
    try:
        yield running
    finally:
        if running.process is not None:
            running.resume()
        running.kill()
