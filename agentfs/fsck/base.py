"""The base's tables (``ws_base``, ``ws_origin``: schema/migrations/0015-base.sql): where the
host directory is and what the workspace saw of each entry it brought in. A damaged row cannot
be guessed back (only the host knew what it held), so these checks report and never repair."""

from __future__ import annotations

import apsw

from agentfs.core.inodes import S_IFDIR, S_IFREG
from agentfs.fsck.report import INODE_COUNTER, _check, _Finding, _is


@_check
def check_ws_base_root(conn: apsw.Connection) -> _Finding:
    """The base is an absolute path, and a workspace with origins has a base."""
    root = conn.execute("SELECT root FROM ws_base WHERE id = 1").get
    if root is not None and not str(root).startswith("/"):
        yield f"the base {root!r} is not an absolute path", False
    if root is None and conn.execute("SELECT 1 FROM ws_origin LIMIT 1").get is not None:
        yield "ws_origin has rows but the workspace has no base (ws_base)", False


_BAD_ORIGINS = (
    "SELECT o.ino, o.path, o.present, length(o.hash), i.mode FROM ws_origin o"
    " LEFT JOIN fs_inode i ON i.ino = o.ino"
    f" WHERE o.ino > {INODE_COUNTER} OR o.ino < 1 OR o.present NOT IN (0, 1)"
    " OR (o.hash IS NOT NULL AND length(o.hash) <> 32)"
    " OR o.path LIKE '/%' OR o.path LIKE '%/' OR '/' || o.path || '/' LIKE '%/../%'"
    " OR '/' || o.path || '/' LIKE '%/./%' OR (o.path = '' AND o.ino <> 1)"
    f" OR (o.present = 0 AND NOT (coalesce({_is(S_IFDIR, 'i.mode')}, 0)"
    f" OR ({_is(S_IFREG, 'o.mode')} AND o.hash IS NULL"
    f" AND coalesce({_is(S_IFREG, 'i.mode')}, 1))))"
)


@_check
def check_ws_origin_values(conn: apsw.Connection) -> _Finding:
    """Each origin names an inode number that was issued, a path relative to the base with
    no ``.`` or ``..`` (the root's is '' and is inode 1's), a SHA-256 or no hash; what is not
    in yet is a live directory, or a file (live or deleted) whose bytes were never hashed."""
    for ino, path, present, hash_size, mode in conn.execute(_BAD_ORIGINS):
        yield (
            f"origin of inode {ino} ({path!r}, present={present}, hash of {hash_size} bytes,"
            f" mode {mode}) is not a valid record of the base",
            False,
        )


@_check
def check_ws_origin_unread(conn: apsw.Connection) -> _Finding:
    """A file whose bytes are still to come from the host has no chunks yet (they would be
    read as its content, and the host's never brought in)."""
    for (ino,) in conn.execute(
        "SELECT DISTINCT o.ino FROM ws_origin o WHERE o.present = 0"
        " AND EXISTS (SELECT 1 FROM fs_data d WHERE d.ino = o.ino)"
    ):
        yield f"file {ino} is marked as not read in from the base, but has chunks", False


_BAD_PLANS = (
    "SELECT path, length(hash), mode FROM ws_apply"
    " WHERE path = '' OR path LIKE '/%' OR '/' || path || '/' LIKE '%/../%'"
    " OR '/' || path || '/' LIKE '%/./%' OR (hash IS NULL) <> (mode IS NULL)"
    " OR (hash IS NOT NULL AND length(hash) <> 32)"
)


@_check
def check_ws_apply_values(conn: apsw.Connection) -> _Finding:
    """Each planned host path is relative to the base without ``.`` or ``..``, and a write has
    a SHA-256 and a mode where a deletion has neither (an apply under way: rerun it)."""
    for path, hash_size, mode in conn.execute(_BAD_PLANS):
        yield (
            f"apply plan for {path!r} (hash of {hash_size} bytes, mode {mode}) is malformed",
            False,
        )
