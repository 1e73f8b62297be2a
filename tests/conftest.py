"""Shared fixtures: a fresh workspace per test, and the agentfs-sdk peer (its own venv)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs

ROOT = Path(__file__).resolve().parent.parent
PEER_PYTHON = ROOT / ".venv-peer" / "bin" / "python"
PEER_SCRIPT = ROOT / "tests" / "peer" / "sdk_peer.py"


@pytest.fixture
def ws_path(tmp_path: Path) -> Path:
    return tmp_path / "ws.db"


@pytest.fixture
def ws(ws_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(ws_path) as workspace:
        yield workspace


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
        raise AssertionError(f"sdk_peer {args[0]} failed ({proc.returncode}): {proc.stdout}"
                             f"{proc.stderr}")
    return json.loads(proc.stdout)
