"""Fixtures for a workspace over a host directory: each test module makes its own host tree (its
``host`` fixture), and ``ws`` is a workspace whose base it is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs


@pytest.fixture
def ws(tmp_path: Path, host: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db", base=host) as workspace:
        yield workspace
