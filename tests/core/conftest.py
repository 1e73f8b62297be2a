"""Fixtures for the core tests: a workspace with small chunks, so multi-chunk paths are cheap."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs

#: The smallest chunk size a workspace accepts: a few hundred bytes already span chunks.
SMALL_CHUNK = 512


@pytest.fixture
def small_ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "small.db", chunk_size=SMALL_CHUNK) as workspace:
        yield workspace
