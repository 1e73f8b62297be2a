"""The content hash of the workspace: what versions, read records and the search index store
to tell one file's bytes from another's, and what a handle computes as it writes."""

from __future__ import annotations

import hashlib


def digest(data: bytes | bytearray | memoryview) -> bytes:
    """BLAKE2b, 128 bits: collision-safe for content identity, and cheap."""
    return hashlib.blake2b(data, digest_size=16).digest()


def hasher() -> hashlib.blake2b:
    """An incremental ``digest``: ``hasher().update(a); .update(b)`` gives ``digest(a + b)``."""
    return hashlib.blake2b(digest_size=16)
