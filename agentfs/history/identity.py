"""Who acts through a workspace handle: the thread and actor recorded with each version and
snapshot, and the read-before-write globs its writes are held to. ``ws.acting(...)`` sets them
for one block, in this thread or asyncio task only (a context variable), so calls made through
one handle for several agents at once never record each other's names.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar, Token
from typing import NamedTuple

from agentfs.core.globs import compile_glob


class Identity(NamedTuple):
    thread: str | None = None
    actor: str | None = None
    #: Globs of paths whose existing files may be written only once read unchanged.
    read_before_write: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        thread: str | None,
        actor: str | None = None,
        read_before_write: bool | str | Iterable[str] = (),
    ) -> Identity:
        """The identity of ``ws.acting``'s arguments (``read_before_write_globs``)."""
        return cls(thread, actor, read_before_write_globs(read_before_write))


def read_before_write_globs(value: bool | str | Iterable[str]) -> tuple[str, ...]:
    """A ``read_before_write`` setting as globs: True is every path, False none, a string one
    glob. A bad pattern fails here, not at the first write it would have checked."""
    if value is True:
        globs: tuple[str, ...] = ("/**",)
    elif value is False:
        globs = ()
    elif isinstance(value, str):
        globs = (value,)
    else:
        globs = tuple(value)
    for glob in globs:
        compile_glob(glob)
    return globs


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
