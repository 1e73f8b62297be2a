"""The fixture every anyio test of the tools shares: the event loop they run on."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """asyncio, once: anyio's own fixture would run each test on every backend installed."""
    return "asyncio"
