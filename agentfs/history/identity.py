"""Who acts through a workspace handle: the thread and actor recorded with each version and
snapshot, and the read-before-write globs its writes are held to.

A handle has an identity of its own (``ws.thread = ...``); ``ws.acting(...)`` gives another to
the code run inside the block, in this thread or asyncio task only (a context variable), so
calls made through one handle for several agents at once never record each other's names.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import NamedTuple


class Identity(NamedTuple):
    thread: str | None = None
    actor: str | None = None
    #: Globs of paths whose existing files may be written only once read unchanged.
    read_before_write: tuple[str, ...] = ()


class Acting:
    """One handle's identity: its own, or the one an ``acting`` block set in this context."""

    __slots__ = ("_block", "own")

    def __init__(self) -> None:
        self.own = Identity()
        self._block: ContextVar[Identity | None] = ContextVar("agentfs.acting", default=None)

    @property
    def now(self) -> Identity:
        return self._block.get() or self.own

    def block(self, identity: Identity) -> ActingBlock:
        return ActingBlock(self._block, identity)


class ActingBlock:
    """``with``: ``identity`` acts inside (a class, not a generator: it wraps every tool call)."""

    __slots__ = ("_identity", "_token", "_var")

    def __init__(self, var: ContextVar[Identity | None], identity: Identity) -> None:
        self._var, self._identity = var, identity

    def __enter__(self) -> Identity:
        self._token: Token[Identity | None] = self._var.set(self._identity)
        return self._identity

    def __exit__(self, *exc: object) -> None:
        self._var.reset(self._token)
