"""What the core tells the layer above it at each change, and the answer it needs back.

``FileSystem`` calls these hooks inside each operation's own transaction, so what the layer
above records commits with the change or not at all; this base class does nothing (a plain
filesystem), and the workspace installs ``agentfs.history.hooks.HistoryHooks``. Every change
of a file's content, whoever makes it, is told the same way: ``guard``, ``changing`` with a
``Change``, the bytes written, ``changed``, and ``closed`` for a handle. A file keeps its inode
for life: what the layer above must keep it takes at ``changing``, answering how many committed
bytes are still in place (all, or none when it moved the chunks away).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from agentfs.core.fs import WriteTarget
    from agentfs.core.inodes import Stat


#: Where an entry is: its directory's inode and its name there. The hooks are told places, not
#: paths: whoever needs a path makes it from the inode numbers (``FileSystem.path_in``).
Place = tuple[int, str]


class Change(NamedTuple):
    """One change of a file's content, as ``changing`` and ``changed`` are told of it."""

    #: The whole new content (a ``put``); None: the file changes in place.
    data: bytes | None = None
    #: The change leaves the bytes before this offset as they are (an append or a growing
    #: truncate leaves all of them).
    unchanged_below: int = 0
    #: The change only added these bytes at the old end.
    appended: bytes | None = None
    #: Every byte is rewritten (a handle writing from 0): the layer above may take the chunks.
    whole: bool = False
    #: An open handle's commit: its version comes when it closes (``closed``), and only its
    #: first commit of this content (``first``) has older bytes to keep.
    by_handle: bool = False
    first: bool = True


class Rewrite(NamedTuple):
    """The answer to ``Changes.changing``: how much of the file's committed content is still
    in place, and what the layer above wants handed back at ``changed`` (so it need not look
    it up or hash again)."""

    #: Committed bytes the file still holds: its size, or 0 when the layer above took its
    #: chunks away (the inode's row still says the old size; the core writes the whole new
    #: content as fresh chunks).
    in_place: int
    memo: object = None
    #: False: a ``put`` of exactly the bytes the file holds, which the layer above already
    #: knows: nothing is written, only the times change.
    needed: bool = True


class Changes:
    """The hooks of the core (see the module docstring). Every method is a no-op here."""

    # --- transactions --------------------------------------------------------------------

    def begin(self, data_version: int, others_committed: bool) -> None:
        """A transaction starts; ``others_committed``: another connection committed since
        the last one (``data_version`` is SQLite's counter of that)."""

    def invalidate(self) -> None:
        """A transaction rolled back, or the tables were changed by hand: forget caches."""

    # --- names and inodes ------------------------------------------------------------------

    def created(self, ino: int) -> None:
        """``ino`` was born in this transaction (nothing older can hold it)."""

    def dir_changed(self, dir_ino: int) -> None:
        """An entry of directory ``dir_ino`` was added, removed, renamed or re-stamped."""

    def names_changed(self, dentry_id: int | None, ino: int) -> None:
        """The metadata of ``ino`` (named by ``dentry_id``; 0: by none; None: by whichever
        names it has) changed: mode or times."""

    def brought_in(self, dir_ino: int) -> None:
        """The entries of directory ``dir_ino`` came in from the workspace's base
        (``agentfs.core.base``): they were there all along, not made now."""

    def holds(self, ino: int) -> bool:
        """Does something above the core still need ``ino`` once its last name is gone?"""
        return False

    def tracks_dirs(self) -> bool:
        """Must a subtree's removal report every directory it empties (``dir_changed``)?"""
        return False

    def linked(self, parent_ino: int, name: str, ino: int) -> None:
        """The regular file ``ino`` got another name, ``name`` in directory ``parent_ino``
        (a hard link)."""

    def deleting(self, parent_ino: int, name: str, mode: int) -> None:
        """The entry ``name`` of directory ``parent_ino`` (a file, or a directory with
        everything below it) is about to go."""

    def moving(self, src: Place, dst: Place, ino: int, mode: int) -> None:
        """The entry at ``src`` (inode ``ino``, a file or a directory tree) is about to move
        to ``dst``."""

    def exchanging(self, a: Place, b: Place, at_a: tuple[int, int], at_b: tuple[int, int]) -> None:
        """The entries at ``a`` and ``b`` are about to swap: what is at each, ``(ino, mode)``
        (a file or a directory tree), moves to the other place."""

    # --- reads ---------------------------------------------------------------------------

    def reader(self) -> str | None:
        """Who a tracked read is recorded for (None: reads are not tracked)."""
        return None

    def read(self, reader: str, path: str, st: Stat, whole: bytes | None) -> None:
        """``reader`` read the file ``st`` at ``path`` (all of it, ``whole``, or a part)."""

    # --- writes --------------------------------------------------------------------------

    def digest_limit(self) -> int:
        """The largest content whose digest the layer above records (``closed`` gets it):
        a handle hashes what it writes only up to this size (0: never)."""
        return 0

    def guard(self, target: WriteTarget) -> None:
        """May the existing file ``target`` be changed? Raise to refuse (nothing changed)."""

    def touched(self, target: WriteTarget) -> None:
        """A write left ``target``'s bytes as they were; only its times changed."""

    def changing(self, target: WriteTarget, change: Change) -> Rewrite:
        """``target``'s content is about to change as ``change`` says (``guard`` allowed it;
        a new file's first content gets no ``changing``: it has nothing to keep)."""
        return Rewrite(target.size)

    def changed(self, target: WriteTarget, change: Change, size: int, memo: object = None) -> None:
        """``target`` now holds its new content, ``size`` long; ``memo``: what ``changing``
        handed back."""

    def detached(self, ino: int) -> None:
        """``ino`` has no name left and a handle is about to change its content in place:
        whatever else holds it must let go first (a plain filesystem holds nothing)."""

    def closed(self, target: WriteTarget, size: int, hash_: bytes | None) -> None:
        """A handle that wrote closed on ``target`` (``size`` long; its content's digest if
        the handle computed it while writing, else None)."""
