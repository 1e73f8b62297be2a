"""Hash states of large files' newest contents, so an append hashes only what it adds
(docs/history.md): a BLAKE2b state kept per (inode, size, digest) is continued with the
appended bytes, which a version naming that inode, size and digest proves are all that changed.
"""

from __future__ import annotations

import hashlib

from agentfs.core.digests import hasher

#: Contents smaller than this are hashed again: well under a millisecond.
MIN_BYTES = 1 << 20
#: States kept (about 200 bytes each).
LIMIT = 16


class PrefixHashes:
    """BLAKE2b states of the last few large contents hashed (see the module docstring)."""

    def __init__(self) -> None:
        self._states: dict[tuple[int, int, bytes], hashlib.blake2b] = {}

    def whole(self, ino: int, data: bytes) -> bytes:
        """The digest of ``data``, the content of inode ``ino``, remembered if large."""
        state = hasher()
        state.update(data)
        return self._keep(ino, len(data), state)

    def continued(self, ino: int, size: int, digest: bytes, more: bytes) -> bytes | None:
        """The digest of the content ``(ino, size, digest)`` followed by ``more``, or None
        when that content's state is not remembered."""
        state = self._states.get((ino, size, digest))
        if state is None:
            return None
        state = state.copy()
        state.update(more)
        return self._keep(ino, size + len(more), state)

    def _keep(self, ino: int, size: int, state: hashlib.blake2b) -> bytes:
        digest = state.digest()
        if size >= MIN_BYTES:
            if len(self._states) >= LIMIT:
                del self._states[next(iter(self._states))]  # the oldest (insertion order)
            self._states[(ino, size, digest)] = state
        return digest
