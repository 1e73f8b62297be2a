"""Shared fixtures: a fresh workspace per test, and the agentfs-sdk peer (its own venv).

Where a test lives: in the directory named after the agentfs package it tests (tests/core,
fsck, history, search, tools, mount, sync, cli), or at tests/ top level for one of agentfs's
single modules (kv, toolcalls, transfer, workspace, layered, skills, db); a command-line test
stays beside the feature whose fixtures it needs (a mount, a sync server), tests as another user
or against another implementation have directories of their own (security, interop), and
helpers more than one directory uses live at tests/ top level."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs import fsck

ROOT = Path(__file__).resolve().parent.parent
PEER_PYTHON = ROOT / ".venv-peer" / "bin" / "python"
PEER_SCRIPT = ROOT / "tests" / "peer" / "sdk_peer.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``runs_first`` go to the front, the rest keep their order: spread over the
    cores (``make test``), a test of minutes started last would be the whole run's tail."""
    items.sort(key=lambda item: item.get_closest_marker("runs_first") is None)


@pytest.fixture
def ws_path(tmp_path: Path) -> Path:
    return tmp_path / "ws.db"


@pytest.fixture
def ws(ws_path: Path, request: pytest.FixtureRequest) -> Iterator[agentfs.Workspace]:
    """A fresh workspace; afterwards fsck must find it clean (S3QL's postcondition), unless
    the test damages it on purpose and says so with ``@pytest.mark.damages_workspace``."""
    with agentfs.open(ws_path) as workspace:
        yield workspace
        if request.node.get_closest_marker("damages_workspace") is None:
            report = fsck.check(workspace)
            assert report.clean, f"fsck after the test: {report.problems}"


@pytest.fixture
def plain_ws(ws: agentfs.Workspace) -> agentfs.Workspace:
    """The ``ws`` fixture with versioning off: for tests of the live tree's own rules (inode
    numbers kept by overwrites, unlinked inodes freed), which history deliberately changes."""
    ws.configure_history(keep="none")
    return ws


def run_peer(*args: str | Path, check: bool = True) -> dict:
    """Run tests/peer/sdk_peer.py under the peer venv and return its JSON output.

    `make test` creates .venv-peer; a missing peer is a broken set-up, so it fails, not skips.
    """
    if not PEER_PYTHON.exists():
        pytest.fail(f"{PEER_PYTHON} is missing: run `make test` (it installs agentfs-sdk)")
    proc = subprocess.run(
        [str(PEER_PYTHON), str(PEER_SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"sdk_peer {args[0]} failed ({proc.returncode}): {proc.stdout}{proc.stderr}"
        )
    return json.loads(proc.stdout)
