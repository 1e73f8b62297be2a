"""Whose files a mount says they are: the workspace's owner presented as another user.

A sandboxed command never runs as root, so that it can read and write the workspace as its
owner can, its mount swaps the two identities: the owner's files show as the command's user's,
and what that user makes is stored as the owner's. The swap is its own inverse, so nothing is
confused, and every other id passes through unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

#: The largest uid or gid (2**32 - 1 is "no id").
MAX_ID = 2**32 - 2


class IdSwap(NamedTuple):
    """Two users (and two groups) whose ids a mount exchanges between the workspace and the
    kernel; equal pairs (the default) change nothing."""

    uids: tuple[int, int] = (-1, -1)
    gids: tuple[int, int] = (-1, -1)

    @classmethod
    def parse(cls, text: str) -> IdSwap:
        """From ``OWNER_UID:OWNER_GID=SHOWN_UID:SHOWN_GID`` (what ``agentfs mount`` is given
        for a sandboxed command's mount)."""
        try:
            stored, shown = (side.split(":") for side in text.split("="))
            (uid, gid), (as_uid, as_gid) = (map(int, stored), map(int, shown))
        except ValueError:
            raise ValueError(f"not UID:GID=UID:GID: {text!r}") from None
        if not all(0 <= n <= MAX_ID for n in (uid, gid, as_uid, as_gid)):
            raise ValueError(f"ids lie between 0 and {MAX_ID}: {text!r}")
        return cls((uid, as_uid), (gid, as_gid))

    def __str__(self) -> str:
        return f"{self.uids[0]}:{self.gids[0]}={self.uids[1]}:{self.gids[1]}"

    def uid(self, uid: int) -> int:
        """``uid`` seen from the other side (the same call both ways)."""
        return _swap(self.uids, uid)

    def gid(self, gid: int) -> int:
        return _swap(self.gids, gid)


#: A mount that shows every id as it is stored.
NO_SWAP = IdSwap()


def _swap(pair: tuple[int, int], value: int) -> int:
    a, b = pair
    if value == a:
        return b
    if value == b:
        return a
    return value
