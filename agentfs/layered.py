"""Scopes: several workspace files seen as one tree (``LayeredWorkspace``; docs/layers.md).

Reads see the union, the most specific layer winning name by name: a directory merges with the
same directory below, a file or symlink hides what is below it. Writes go to the first layer,
a lower file copied up before it changes (read-before-write checked against the first layer's
read log); removing or renaming what lives below is refused (``EROFS``), as the lower layers
are never changed through the union. What is not a path (the key-value store, snapshots, the
search index, read tracking) is the first layer's; history is the owning layer's.
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import EllipsisType, TracebackType
from typing import Any, Literal, Unpack

from agentfs import skills
from agentfs.core import paths, treeops
from agentfs.core.errors import UnsupportedError, fs_error, not_found
from agentfs.core.fs import MAX_SYMLINK_HOPS
from agentfs.core.handle import WorkspaceFile
from agentfs.core.inodes import DirEntry, Stat, is_dir, is_symlink
from agentfs.core.limits import Limits
from agentfs.db import Transaction
from agentfs.history.api import GcReport
from agentfs.history.cow import HistorySettings
from agentfs.history.identity import Identity
from agentfs.history.reads import Read
from agentfs.history.snapshots import Snapshots
from agentfs.history.versions import Version
from agentfs.kv import KVStore
from agentfs.mount.exec import CommandResult
from agentfs.search.background import BackgroundEmbedder
from agentfs.search.embedders import Embedder
from agentfs.search.glob import GlobMatch
from agentfs.search.grep import GrepFields, GrepLine, GrepResult, Output
from agentfs.search.index import IndexStatus
from agentfs.search.ranking import SearchFields, SearchHit, SearchOptions, SearchResults
from agentfs.toolcalls import ToolCallLog
from agentfs.workspace import Workspace, WorkspaceInfo


@dataclass(frozen=True)
class _Place:
    """Where a path leads in the union.

    Attributes:
        real: the path with every symlink on the way resolved (the last one too, if followed);
            when something is missing, the rest as written.
        owner: the index of the layer whose entry ``real`` is, or None when it does not exist.
        stat: that entry's ``lstat``.
        holders: every layer with an entry at ``real`` (the owner first).
        merged: the layers in which ``real`` is a directory merged into the union's.
    """

    real: str
    owner: int | None
    stat: Stat | None
    holders: tuple[int, ...] = ()
    merged: tuple[int, ...] = ()


class LayeredWorkspace:
    """Workspaces seen as one tree, the first the most specific (see the module docstring).

    Attributes:
        layers: the workspaces, most specific first; writes go to ``layers[0]``.
    """

    def __init__(self, layers: Sequence[Workspace]) -> None:
        if not layers:
            raise ValueError("a LayeredWorkspace needs at least one layer")
        self.layers: tuple[Workspace, ...] = tuple(layers)

    @property
    def top(self) -> Workspace:
        """The first, most specific layer: where every write goes."""
        return self.layers[0]

    def close(self) -> None:
        """Close every layer."""
        for layer in self.layers:
            layer.close()

    def __enter__(self) -> LayeredWorkspace:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- the handle: the first layer's, passed on to every layer where reads need it -------

    @property
    def path(self) -> Path:
        return self.top.path

    @property
    def readonly(self) -> bool:
        return self.top.readonly

    @property
    def thread(self) -> str | None:
        return self.top.thread

    @thread.setter
    def thread(self, value: str | None) -> None:
        for layer in self.layers:
            layer.thread = value

    @property
    def actor(self) -> str | None:
        return self.top.actor

    @actor.setter
    def actor(self, value: str | None) -> None:
        for layer in self.layers:
            layer.actor = value

    @contextmanager
    def acting(
        self,
        *,
        thread: str | None,
        actor: str | None = None,
        read_before_write: bool | str | Iterable[str] = (),
    ) -> Iterator[None]:
        """``Workspace.acting`` on every layer."""
        with self.acting_as(Identity.of(thread, actor, read_before_write)):
            yield

    @contextmanager
    def acting_as(self, identity: Identity) -> Iterator[None]:
        """``Workspace.acting_as`` on every layer."""
        with ExitStack() as stack:
            for layer in self.layers:
                stack.enter_context(layer.acting_as(identity))
            yield

    @property
    def read_before_write(self) -> tuple[str, ...]:
        return self.top.read_before_write

    @read_before_write.setter
    def read_before_write(self, value: bool | str | Sequence[str]) -> None:
        self.top.read_before_write = value

    @property
    def kv(self) -> KVStore:
        return self.top.kv

    @property
    def tool_calls(self) -> ToolCallLog:
        return self.top.tool_calls

    @property
    def snapshots(self) -> Snapshots:
        return self.top.snapshots

    def transaction(self, *, savepoints: bool = True) -> Transaction:
        """The first layer's transaction: every write of a ``LayeredWorkspace`` lands there,
        so a block of writes is atomic; reads of lower layers are not isolated by it."""
        return self.top.transaction(savepoints=savepoints)

    def read_transaction(self) -> Transaction:
        """The first layer's read transaction (lower layers are read as they are)."""
        return self.top.read_transaction()

    def recording_versions(self) -> AbstractContextManager[list[tuple[str, int]]]:
        return self.top.recording_versions()

    def database_bytes(self) -> int:
        return self.top.database_bytes()

    def embedder(self) -> Embedder | None:
        return self.top.embedder()

    def index(self, embedder: Embedder | str | None = None, **options: object) -> IndexStatus:
        """Index the first layer (lower layers are indexed through their own handles)."""
        return self.top.index(embedder, **options)  # type: ignore[arg-type]

    def index_status(self) -> IndexStatus:
        return self.top.index_status()

    def refresh_index(self, *, batches: int | None = None) -> int:
        """Index what was written to the first layer (the only one written through here)."""
        return self.top.refresh_index(batches=batches)

    def embed_in_background(
        self, *, interval: float = 5.0, embedder: Embedder | None = None
    ) -> BackgroundEmbedder:
        return self.top.embed_in_background(interval=interval, embedder=embedder)

    # --- resolving a path in the union --------------------------------------------------------

    def _place(self, path: str, *, follow: bool, strict: bool = True) -> _Place:
        """Resolve ``path`` over the layers (see the module docstring). ``follow``: follow a
        symlink at the end too. ``strict``: a missing directory on the way is ENOENT (else
        the rest is kept as written, like ``realpath``)."""
        given = paths.normalize(path)
        everyone = tuple(range(len(self.layers)))
        pending = paths.split(given)
        real, merged, hops = "/", everyone, 0
        place = None
        while pending:
            name = pending.pop(0)
            child = paths.join(real, name)
            found = [(i, st) for i in merged if (st := self._lstat_in(i, child)) is not None]
            if not found:
                if pending and strict:
                    raise not_found(given)
                return _Place(paths.normalize("/".join([child, *pending])), None, None)
            owner, st = found[0]
            if is_symlink(st.st_mode) and (pending or follow):
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    raise fs_error(errno.ELOOP, given)
                target = self.layers[owner].readlink(child)
                target = paths.normalize(target if target.startswith("/") else f"{real}/{target}")
                pending = paths.split(target) + pending
                real, merged = "/", everyone
                continue
            if pending and not is_dir(st.st_mode):
                raise fs_error(errno.ENOTDIR, given)
            run: list[int] = []
            for i, other in found:
                if not is_dir(other.st_mode):
                    break
                run.append(i)
            real, merged = child, tuple(run)
            place = _Place(real, owner, st, tuple(i for i, _ in found), merged)
        if real == "/":  # the root (perhaps through a symlink to it): every layer's, merged
            return _Place("/", 0, self.top.lstat("/"), everyone, everyone)
        assert place is not None
        if type(given) is paths.DirPath and not self._is_dir(place):
            raise fs_error(errno.ENOTDIR, given)
        return place

    def _lstat_in(self, layer: int, path: str) -> Stat | None:
        try:
            return self.layers[layer].lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def _is_dir(self, place: _Place) -> bool:
        return place.stat is not None and is_dir(place.stat.st_mode)

    def _existing(self, path: str, *, follow: bool) -> tuple[Workspace, _Place]:
        place = self._place(path, follow=follow)
        if place.owner is None:
            raise not_found(paths.normalize(path))
        return self.layers[place.owner], place

    def _visible(self, layer: int, path: str) -> bool:
        """Is ``path`` of layer ``layer`` what the union shows at ``path``?"""
        if layer == 0:  # the first layer's own entries always win
            return True
        try:
            place = self._place(path, follow=False)
        except OSError:
            return False
        return place.owner == layer and place.real == path

    # --- reading -------------------------------------------------------------------------------

    def lstat(self, path: str) -> Stat:
        return self._stat(path, follow=False)

    def stat(self, path: str, *, follow_symlinks: bool = True) -> Stat:
        return self._stat(path, follow=follow_symlinks)

    def _stat(self, path: str, *, follow: bool) -> Stat:
        _layer, place = self._existing(path, follow=follow)
        assert place.stat is not None
        return place.stat

    def exists(self, path: str) -> bool:
        """True when ``path`` names something in any layer (following symlinks)."""
        return treeops.exists(self, path)

    def read(
        self, path: str, offset: int = 0, length: int | None = None, *, track: bool = True
    ) -> bytes:
        """The bytes of the file ``path`` resolves to, from the layer that holds it. A tracked
        read of a lower layer is recorded in the first layer's read log (module docstring)."""
        layer, place = self._existing(path, follow=True)
        if place.owner == 0:
            return layer.read(place.real, offset, length, track=track)
        data = layer.read(place.real, offset, length, track=False)
        thread = self.thread
        if track and thread is not None and not self.top.readonly and place.stat is not None:
            whole = offset == 0 and len(data) == place.stat.st_size
            with self.top.transaction():
                layer.hooks.remember_read(
                    thread, place.real, place.stat, data if whole else None, self.top.hooks.reads
                )
        return data

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read(path).decode(encoding)

    def readlink(self, path: str) -> str:
        layer, place = self._existing(path, follow=False)
        return layer.readlink(place.real)

    def realpath(self, path: str) -> str:
        """``path`` with every symlink resolved through the union; what does not exist is
        kept as written (like ``os.path.realpath``)."""
        return self._place(path, follow=True, strict=False).real

    def names(self, path: str) -> list[str]:
        """Every path naming what ``path`` leads to: the names of the file in the layer that
        holds it (hard links stay within a layer), or the real path of what does not exist."""
        place = self._place(path, follow=True, strict=False)
        if place.owner is None:
            return [place.real]
        return self.layers[place.owner].names(place.real)

    def readdir_plus(self, path: str = "/") -> list[tuple[str, Stat]]:
        """The union of the directory's entries in every merged layer, sorted by name; a name
        in several layers is the most specific layer's."""
        place = self._place(path, follow=True)
        if place.owner is None:
            raise not_found(paths.normalize(path))
        if not self._is_dir(place):
            raise fs_error(errno.ENOTDIR, paths.normalize(path))
        entries: dict[str, Stat] = {}
        for i in place.merged:
            for name, st in self.layers[i].readdir_plus(place.real):
                entries.setdefault(name, st)
        return sorted(entries.items())

    def scandir(self, path: str = "/") -> list[DirEntry]:
        return [DirEntry(name, st.st_ino, st.st_mode) for name, st in self.readdir_plus(path)]

    def listdir(self, path: str = "/") -> list[str]:
        return [name for name, _st in self.readdir_plus(path)]

    def walk(self, top: str = "/") -> Iterator[tuple[str, list[str], list[str]]]:
        return treeops.walk(self, top)

    # --- writing: always into the first layer -----------------------------------------------

    def write(
        self, path: str, data: bytes | str, *, parents: bool = False, mode: int = 0o644
    ) -> Stat:
        """Write into the first layer; a file that lives below is copied up (its mode kept,
        read-before-write checked against what this handle read of it)."""
        place = self._place(path, follow=True, strict=not parents)
        if self._is_dir(place):
            raise fs_error(errno.EISDIR, paths.normalize(path))
        if place.owner == 0:
            return self.top.write(place.real, data, parents=parents, mode=mode)
        if place.owner is not None and place.stat is not None:
            self._check_lower_read(place)
            mode = place.stat.st_mode & 0o7777
        return self.top.write(place.real, data, parents=True, mode=mode)

    def put(
        self, path: str, data: bytes | str, *, parents: bool = False, exclusive: bool = False
    ) -> tuple[Stat, bool]:
        """``write`` that says whether it created the file in the union: ``(stat, created)``
        (a file copied up from a lower layer was not created). ``exclusive``: EEXIST when
        anything is at ``path`` in any layer, and nothing changes."""
        with self.top.transaction():
            if exclusive and self._taken(path):
                raise fs_error(errno.EEXIST, paths.normalize(path))
            existed = self.exists(path)
            return self.write(path, data, parents=parents), not existed

    def _taken(self, path: str) -> bool:
        """Is anything at ``path`` itself in some layer (a symlink there, dangling too)? A
        path that cannot name anything (``x/`` through a file) is left to ``write`` to
        refuse as it refuses it."""
        try:
            return self._place(path, follow=False, strict=False).owner is not None
        except OSError:
            return False

    def _check_lower_read(self, place: _Place) -> None:
        """Read-before-write for a copy-up: the core's check of the lower file as it is now,
        against this thread's record in the first layer's read log (module docstring)."""
        assert place.owner is not None and place.stat is not None
        lower = self.layers[place.owner]
        lower.hooks.check_read(place.real, place.stat.st_ino, self.top.hooks.reads, self.thread)

    def mkdir(
        self, path: str, mode: int = 0o755, *, parents: bool = False, exist_ok: bool = False
    ) -> Stat:
        place = self._place(path, follow=False, strict=not parents)
        if place.stat is not None:
            if exist_ok and self._is_dir(place):
                return place.stat
            raise fs_error(errno.EEXIST, paths.normalize(path))
        return self.top.mkdir(place.real, mode, parents=True, exist_ok=False)

    def symlink(self, target: str, path: str) -> Stat:
        place = self._place(path, follow=False)
        if place.owner is not None:
            raise fs_error(errno.EEXIST, paths.normalize(path))
        self._make_parent(place.real)
        return self.top.symlink(target, place.real)

    def chmod(self, path: str, mode: int) -> None:
        """Change the mode in the first layer (what lives below is copied up first, in the
        same transaction, as for every change below: a change that fails copies nothing)."""
        with self.top.transaction():
            self.top.chmod(self._copied_up(path), mode)

    def chown(self, path: str, uid: int, gid: int, *, follow_symlinks: bool = True) -> None:
        with self.top.transaction():
            real = self._copied_up(path, follow=follow_symlinks)
            self.top.chown(real, uid, gid, follow_symlinks=False)

    def utime(
        self, path: str, ns: tuple[int, int] | None = None, *, follow_symlinks: bool = True
    ) -> None:
        with self.top.transaction():
            self.top.utime(self._copied_up(path, follow=follow_symlinks), ns, follow_symlinks=False)

    def setxattr(
        self,
        path: str,
        name: str | bytes,
        value: bytes,
        flags: int = 0,
        *,
        follow_symlinks: bool = True,
    ) -> None:
        with self.top.transaction():
            real = self._copied_up(path, follow=follow_symlinks)
            self.top.setxattr(real, name, value, flags, follow_symlinks=False)

    def removexattr(self, path: str, name: str | bytes, *, follow_symlinks: bool = True) -> None:
        with self.top.transaction():
            real = self._copied_up(path, follow=follow_symlinks)
            self.top.removexattr(real, name, follow_symlinks=False)

    def getxattr(self, path: str, name: str | bytes, *, follow_symlinks: bool = True) -> bytes:
        layer, place = self._existing(path, follow=follow_symlinks)
        return layer.getxattr(place.real, name, follow_symlinks=False)

    def listxattr(self, path: str = "/", *, follow_symlinks: bool = True) -> list[str]:
        layer, place = self._existing(path, follow=follow_symlinks)
        return layer.listxattr(place.real, follow_symlinks=False)

    def append(self, path: str, data: bytes | str, *, parents: bool = False) -> int:
        """Append in the first layer; a lower file is copied up first (read-before-write
        checked as by ``write``)."""
        with self.top.transaction():
            place = self._place(path, follow=True, strict=not parents)
            if place.owner is None:
                self._make_parent(place.real)
                return self.top.append(place.real, data)
            return self.top.append(self._copied_up(path, content=True), data)

    def pwrite(self, path: str, data: bytes | str, offset: int) -> int:
        with self.top.transaction():
            return self.top.pwrite(self._copied_up(path, content=True), data, offset)

    def truncate(self, path: str, size: int) -> None:
        with self.top.transaction():
            self.top.truncate(self._copied_up(path, content=True), size)

    def create(self, path: str, mode: int = 0o644) -> Stat:
        """A new empty file in the first layer; EEXIST when any layer has the name."""
        return self.top.create(self._new_name(path), mode)

    def mknod(self, path: str, mode: int, rdev: int = 0) -> Stat:
        return self.top.mknod(self._new_name(path), mode, rdev)

    def link(self, src: str, dst: str) -> Stat:
        """A hard link within the first layer (EXDEV for a file that lives below: a link
        cannot join two workspace files)."""
        source = self._place(src, follow=False)
        if source.owner is None:
            raise not_found(paths.normalize(src))
        if source.owner != 0:
            raise fs_error(
                errno.EXDEV,
                source.real,
                f"it lives in the lower layer {self.layers[source.owner].path}",
            )
        return self.top.link(source.real, self._new_name(dst))

    def open(
        self, path: str, mode: str = "r", *, encoding: str = "utf-8", buffer_limit: int = 256 << 20
    ) -> WorkspaceFile | io.TextIOWrapper:
        """Read from the layer holding the file; any other mode writes in the first layer
        (a lower file copied up first, unless ``w`` replaces it whole)."""
        if mode.strip("bt") == "r":
            layer, place = self._existing(path, follow=True)
            return layer.open(place.real, mode, encoding=encoding, buffer_limit=buffer_limit)
        place = self._place(path, follow=True)
        if place.owner is not None and "x" in mode:
            raise fs_error(errno.EEXIST, paths.normalize(path))
        with self.top.transaction():  # an open that fails copies nothing up
            if place.owner not in (None, 0) and "w" not in mode:
                self._copied_up(path, content=True)
            self._make_parent(place.real)
            return self.top.open(place.real, mode, encoding=encoding, buffer_limit=buffer_limit)

    def _copied_up(self, path: str, *, follow: bool = True, content: bool = False) -> str:
        """The first layer's path of the entry at ``path``, copied up when it lives below: a
        directory as its first-layer twin, a symlink as a symlink, a file with its bytes and
        mode, each with its extended attributes (``content``: the caller changes the bytes,
        so read-before-write is checked)."""
        layer, place = self._existing(path, follow=follow)
        st = place.stat
        if place.owner == 0 or st is None:
            return place.real
        if is_dir(st.st_mode):
            self.top.mkdir(place.real, st.st_mode & 0o7777, parents=True, exist_ok=True)
        elif is_symlink(st.st_mode):
            self._make_parent(place.real)
            self.top.symlink(layer.readlink(place.real), place.real)
        else:
            if content:
                self._check_lower_read(place)
            data = layer.read(place.real, track=False)
            self.top.write(place.real, data, parents=True, mode=st.st_mode & 0o7777)
        for name in layer.listxattr(place.real, follow_symlinks=False):
            value = layer.getxattr(place.real, name, follow_symlinks=False)
            self.top.setxattr(place.real, name, value, follow_symlinks=False)
        return place.real

    def _new_name(self, path: str) -> str:
        """The first layer's path for a new entry at ``path`` (its parent made there); EEXIST
        when any layer has the name."""
        place = self._place(path, follow=False)
        if place.owner is not None:
            raise fs_error(errno.EEXIST, paths.normalize(path))
        self._make_parent(place.real)
        return place.real

    def remove(self, path: str, *, recursive: bool = False) -> None:
        place = self._place(path, follow=False)
        if place.owner is None:
            raise not_found(paths.normalize(path))
        self._only_in_top(place, "remove")
        self.top.remove(place.real, recursive=recursive)

    def rename(self, src: str, dst: str) -> None:
        """Rename within the first layer; ``src`` must live there only, and a ``dst`` in a
        lower layer may only be shadowed by a file (not replaced when either is a directory)."""
        source = self._place(src, follow=False)
        if source.owner is None:
            raise not_found(paths.normalize(src))
        self._only_in_top(source, "rename")
        target = self._place(dst, follow=False)
        lower = [i for i in target.holders if i != 0]
        if lower and (self._is_dir(source) or self._is_dir(target)):
            raise self._read_only_below(target.real, lower[0], "replace")
        self._make_parent(target.real)
        self.top.rename(source.real, target.real)

    def exchange(self, a: str, b: str) -> None:
        """Swap two names of the first layer; neither may exist in a lower layer (a lower
        twin would show through, or be hidden, under the other name)."""
        places = [self._place(p, follow=False) for p in (a, b)]
        for path, place in zip((a, b), places, strict=True):
            if place.owner is None:
                raise not_found(paths.normalize(path))
            self._only_in_top(place, "exchange")
        self.top.exchange(places[0].real, places[1].real)

    def copy(self, src: str, dst: str, *, recursive: bool = False) -> None:
        """Copy from the union into the first layer, in one transaction of the first layer."""
        with self.top.transaction():
            treeops.copy(self, paths.normalize(src), paths.normalize(dst), recursive=recursive)

    def _make_parent(self, real: str) -> None:
        parent, _name = paths.parent_and_name(real)
        self.top.mkdir(parent, parents=True, exist_ok=True)

    def _only_in_top(self, place: _Place, action: str) -> None:
        lower = [i for i in place.holders if i != 0]
        if lower:
            raise self._read_only_below(place.real, lower[0], action)

    def _read_only_below(self, path: str, layer: int, action: str) -> OSError:
        return fs_error(
            errno.EROFS,
            path,
            f"cannot {action}: it exists in the lower layer {self.layers[layer].path}, which"
            " a LayeredWorkspace never changes",
        )

    # --- finding: every layer's answer, merged ----------------------------------------------

    def glob(
        self,
        pattern: str,
        path: str = "/",
        *,
        sort: Literal["mtime", "name"] = "mtime",
        include_dirs: bool = False,
    ) -> list[GlobMatch]:
        found: dict[str, GlobMatch] = {}
        real, layers = self._search_scope(path)
        for i in layers:
            for m in self.layers[i].glob(pattern, real, sort=sort, include_dirs=include_dirs):
                if m.path not in found and self._visible(i, m.path):
                    found[m.path] = m
        if sort == "name":
            return sorted(found.values(), key=lambda m: m.path)
        return sorted(found.values(), key=lambda m: (-m.mtime_ns, m.path))

    def grep(self, pattern: str, path: str = "/", **options: Unpack[GrepFields]) -> GrepResult:
        """Each layer's grep, merged by path; a path is searched in the layer the union
        shows. ``max_results`` caps the merged result as it caps one workspace's."""
        real, layers = self._search_scope(path)
        results = [(i, self.layers[i].grep(pattern, real, **options)) for i in layers]
        output = options.get("output", "content")
        return _merge_grep(results, self._visible, output, options.get("max_results"))

    def _search_scope(self, path: str) -> tuple[str, tuple[int, ...]]:
        """The real path a search under ``path`` starts from and the layers it runs in: the
        merged layers of a directory, the owner of a file, none for a missing path (where
        every layer finds nothing, as one workspace's glob does)."""
        place = self._place(path, follow=True, strict=False)
        if place.owner is None:
            return place.real, (0,)
        return place.real, place.merged if self._is_dir(place) else (place.owner,)

    def search(
        self, query: str, *, embedder: Embedder | None = None, **options: Unpack[SearchFields]
    ) -> SearchResults:
        """Each layer's best ``top_k``, merged by score; a layer without vectors answers a
        hybrid or vector query from BM25 (the first layer's note says so). A file is
        reported by one layer only (the one the union shows), so no hit repeats."""
        wanted = SearchOptions(**options)
        first: SearchResults | None = None
        hits: list[SearchHit] = []
        pending = 0
        real, layers = self._search_scope(wanted.path)
        scoped = options.copy()
        scoped["path"] = real
        for i in layers:
            found = self.layers[i].search(query, embedder=embedder, **scoped)
            first = first or found
            pending += found.pending
            hits.extend(h for h in found.hits if self._visible(i, h.path))
        hits.sort(key=lambda h: -h.score)
        assert first is not None
        return SearchResults(first.mode, hits[: wanted.top_k], pending, first.note)

    # --- history: the owning layer's ---------------------------------------------------------

    def _owner_of(self, path: str) -> tuple[Workspace, str]:
        """The layer holding ``path`` and its real path there; the first layer (which keeps
        the history of what it deleted) when nothing holds it."""
        try:
            place = self._place(path, follow=True)
        except (FileNotFoundError, NotADirectoryError):
            return self.top, paths.normalize(path)
        if place.owner is None:
            return self.top, place.real
        return self.layers[place.owner], place.real

    def history(self, path: str) -> list[Version]:
        layer, real = self._owner_of(path)
        return layer.history(real)

    def history_path(self, path: str) -> str:
        layer, real = self._owner_of(path)
        return layer.history_path(real)

    def version(self, path: str, n: int | None = None) -> Version:
        layer, real = self._owner_of(path)
        return layer.version(real, n)

    @property
    def history_settings(self) -> HistorySettings:
        """The writable layer's: every write lands there."""
        return self.top.history_settings

    def read_version(self, path: str, n: int) -> bytes:
        layer, real = self._owner_of(path)
        return layer.read_version(real, n)

    def diff(self, path: str, a: int | None = None, b: int | None = None) -> str:
        layer, real = self._owner_of(path)
        return layer.diff(real, a, b)

    def restore_version(self, path: str, n: int) -> Version:
        """Make version ``n`` current again; a lower layer's version is restored by writing
        its bytes into the first layer."""
        layer, real = self._owner_of(path)
        if layer is self.top:
            return self.top.restore_version(real, n)
        self.top.write(real, layer.read_version(real, n), parents=True)
        return self.top.version(real)

    # --- skills: from every layer, the most specific first ----------------------------------

    def skills(self) -> skills.SkillCatalog:
        """The skills of the union's ``/skills``: a skill id in several layers is the most
        specific layer's."""
        return skills.catalog(self)

    def active_skills(self, thread: str | None = None) -> list[str]:
        return self.top.active_skills(thread)

    def activate_skill(self, skill_id: str, thread: str | None = None) -> bool:
        """Activate a skill of the union for ``thread`` (kept in the first layer)."""
        thread = thread if thread is not None else (self.thread or "")
        return skills.activate(self.top.conn, thread, skill_id, self.skills())

    def deactivate_skill(self, skill_id: str, thread: str | None = None) -> bool:
        return self.top.deactivate_skill(skill_id, thread)

    # --- the first layer's (module docstring) -------------------------------------------------

    def reads_log(self, thread: str | None = None) -> list[Read]:
        return self.top.reads_log(thread)

    def configure_history(
        self, *, keep: int | str | EllipsisType | None = ..., max_bytes: int | None = None
    ) -> HistorySettings:
        return self.top.configure_history(keep=keep, max_bytes=max_bytes)

    def configure_index(
        self, *, enabled: bool | None = None, max_bytes: int | None = None
    ) -> IndexStatus:
        return self.top.configure_index(enabled=enabled, max_bytes=max_bytes)

    @property
    def limits(self) -> Limits:
        return self.top.limits

    def set_limits(
        self, *, file_size: int | None = None, workspace_size: int | EllipsisType | None = ...
    ) -> Limits:
        return self.top.set_limits(file_size=file_size, workspace_size=workspace_size)

    def gc(self) -> GcReport:
        return self.top.gc()

    def info(self) -> WorkspaceInfo:
        return self.top.info()

    def sync(self) -> None:
        self.top.sync()

    def fork(self, snapshot: str, out: str | os.PathLike[str]) -> Path:
        return self.top.fork(snapshot, out)

    def run(self, command: str | Sequence[str], **options: Any) -> CommandResult:
        raise UnsupportedError(
            "a command runs in the mount of one workspace file, and a LayeredWorkspace has"
            " none: run it through one layer's Workspace (its files only)"
        )


#: Deprecated: annotate with ``agentfs.WorkspaceAPI``, which every kind satisfies.
AnyWorkspace = Workspace | LayeredWorkspace


def open_layers(
    *files: str | os.PathLike[str], readonly_below: bool = False, **options: object
) -> LayeredWorkspace:
    """Open workspace files as layers, most specific first; ``readonly_below`` opens every
    layer after the first read-only (a shared workspace this process must not change)."""
    opened: list[Workspace] = []
    try:
        for i, file in enumerate(files):
            readonly = readonly_below and i > 0
            opened.append(Workspace(file, readonly=readonly, create=not readonly, **options))  # type: ignore[arg-type]
    except BaseException:
        for ws in opened:
            ws.close()
        raise
    return LayeredWorkspace(opened)


def _merge_grep(
    results: list[tuple[int, GrepResult]],
    visible: Callable[[int, str], bool],
    output: Output,
    max_results: int | None,
) -> GrepResult:
    """One ``GrepResult`` from each layer's: paths the union does not show from that layer
    dropped, the rest in path order, cut at ``max_results`` as one workspace's grep cuts."""
    owner: dict[str, int] = {}
    for i, found in results:
        for p in found.files:
            if p not in owner and visible(i, p):
                owner[p] = i
    merged = GrepResult()
    by_layer = dict(results)
    files = sorted(owner)
    for p in files:
        found = by_layer[owner[p]]
        count = found.counts.get(p, 0)
        if output != "content":
            if max_results is not None and len(merged.files) >= max_results:
                merged.truncated = True
                break
        elif max_results is not None and merged.matches + count > max_results:
            if merged.matches >= max_results:
                merged.truncated = True
                break
            count = max_results - merged.matches
            merged.truncated = True
        lines = [ln for ln in found.lines if ln.path == p]
        if output == "content":
            lines = _first_matches(lines, count)
            merged.matches += count
        merged.lines.extend(lines)
        merged.files.append(p)
        merged.counts[p] = count
        if merged.truncated:
            break
    merged.truncated = merged.truncated or any(f.truncated for _, f in results)
    merged.skipped = sorted({s for i, f in results for s in f.skipped if visible(i, s)})
    return merged


def _first_matches(lines: list[GrepLine], count: int) -> list[GrepLine]:
    """``lines`` up to and including the ``count``-th match (context lines kept)."""
    kept: list[GrepLine] = []
    matches = 0
    for line in lines:
        if line.is_match:
            if matches == count:
                break
            matches += 1
        kept.append(line)
    return kept
