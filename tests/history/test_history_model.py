"""History against a model: a hypothesis state machine runs writes (of sizes around
``KEPT_MAX`` and the chunk boundaries too), appends, pwrites, truncates, writes through
``ws.open`` handles, hard links, renames, removes, mkdirs, snapshots, snapshot restores and
deletes, and version restores on a workspace, and the same on an in-memory model (a dict of
file bytes, a set of directories, and which paths are names of one file; a snapshot is a copy
of all three).

After every step:
- the live tree equals the model (every file's bytes, every directory);
- every live file keeps the inode number it had (copy-down: history takes old bytes into a
  new inode, never the live one's number); only a restore (of a snapshot or a version) gives
  a path another file, and a new file gets a number never issued before; names of one file
  share its number, other files have others;
- every snapshot, the automatic undo snapshots of restores included, still shows exactly its
  model copy through ``snapshots.show`` and ``snapshots.read``, and its diff against the live
  tree adds, removes and modifies what the model says;
- history tells the truth: each live file's newest version is its current content (unless it
  is, or was, a hard link: a write through another name makes no version here), each other
  path's newest event carries no content (it was deleted or moved away), and every version's
  bytes still hash to its recorded digest and are bytes that path really held at some step;
- fsck finds the workspace clean.
"""

from __future__ import annotations

import hashlib
import random
import stat
from collections import defaultdict

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, precondition, rule

from agentfs.history.versions import KEPT_MAX
from tests.model import WorkspaceMachine, machine_settings, paths

PATHS = paths()
#: The model's chunk size: KEPT_MAX is four chunks, so sizes around it cross chunk edges too.
CHUNK = 4096
#: Sizes where the rules change: chunk edges, and KEPT_MAX (kept aside below, copied down above).
EDGES = sorted({n + d for n in (CHUNK, 2 * CHUNK, KEPT_MAX, KEPT_MAX + CHUNK) for d in (-1, 0, 1)})
SIZES = st.one_of(st.sampled_from([0, 1, *EDGES]), st.integers(0, KEPT_MAX + 2 * CHUNK))
#: Bytes of a drawn size (seeded: cheap to draw and shrink, different at every offset).
SIZED = st.builds(lambda size, seed: random.Random(seed).randbytes(size), SIZES, st.integers())
#: None: write the bytes the file already has (no new version must appear).
DATA = st.one_of(st.none(), st.binary(max_size=40), SIZED)
OFFSETS = st.one_of(st.sampled_from([0, *EDGES]), st.integers(0, KEPT_MAX + 2 * CHUNK))
#: What a handle does: writes at offsets, each maybe followed by a flush.
HANDLE_WRITES = st.lists(
    st.tuples(OFFSETS, st.one_of(st.binary(min_size=1, max_size=40), SIZED), st.booleans()),
    min_size=1,
    max_size=3,
)

#: A state of the tree: file path -> bytes, the set of directories (the root excluded), and
#: the paths that name one file (hard links), as groups of two or more.
State = tuple[dict[str, bytes], frozenset[str], frozenset[frozenset[str]]]


def blake(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def parent_of(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def ancestors(path: str) -> list[str]:
    """'/a/b/c' -> ['/a', '/a/b']."""
    parts = path.strip("/").split("/")
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts))]


def within(path: str, top: str) -> bool:
    return path == top or path.startswith(top + "/")


def written_at(old: bytes, offset: int, data: bytes) -> bytes:
    """``old`` with ``data`` written at ``offset`` (zeros fill a gap after the end; writing
    nothing changes nothing)."""
    if not data:
        return old
    return old[:offset].ljust(offset, b"\0") + data + old[offset + len(data) :]


class HistoryModel(WorkspaceMachine):
    """The workspace and the model side by side; see the module docstring."""

    def __init__(self) -> None:
        super().__init__(actor="model", thread="t", chunk_size=CHUNK)
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()
        self.snaps: dict[str, State] = {}
        self.seen: defaultdict[str, set[bytes]] = defaultdict(set)
        self.counter = 0
        #: Identities whose number was learned before the current step.
        self.known: set[int] = set()
        #: Which file each path names: names of one file (hard links) share an identity.
        self.ident: dict[str, int] = {}
        self.identities = 0
        #: The inode number of each identity, learned after the step that made it.
        self.inos: dict[int, int] = {}
        #: Identities a restore made (their number may be an old one: a frozen inode).
        self.restored: set[int] = set()
        #: The highest inode number seen: a file created later must get a higher one.
        self.high = 0
        #: Paths that are or were a hard link (their newest version may be another name's).
        self.shared: set[str] = set()

    # --- helpers ------------------------------------------------------------------------------

    def is_dir(self, path: str) -> bool:
        return path == "/" or path in self.dirs

    def groups(self) -> frozenset[frozenset[str]]:
        by: defaultdict[int, set[str]] = defaultdict(set)
        for path, ident in self.ident.items():
            by[ident].add(path)
        return frozenset(frozenset(paths) for paths in by.values() if len(paths) > 1)

    def state(self) -> State:
        return dict(self.files), frozenset(self.dirs), self.groups()

    def new_identity(self, restored: bool = False) -> int:
        self.identities += 1
        if restored:
            self.restored.add(self.identities)
        return self.identities

    def set_content(self, path: str, data: bytes) -> None:
        """``path`` now holds ``data``: a new file, or every name of the one it names."""
        if path not in self.ident:
            self.ident[path] = self.new_identity()
        ident = self.ident[path]
        for other, same in self.ident.items():
            if same == ident:
                self.files[other] = data

    def creatable(self, path: str) -> bool:
        """May a file be written at ``path`` (its parent made by the write if asked)?"""
        return path not in self.dirs and not any(a in self.files for a in ancestors(path))

    def expect(self, ok: bool, label: str, call) -> bool:
        """Run ``call``; it must succeed exactly when the model says ``ok``."""
        try:
            call()
        except OSError as exc:
            assert not ok, f"{label}: the model expects success, got {exc!r}"
            return False
        assert ok, f"{label}: the model expects a failure, the workspace succeeded"
        return True

    # --- content ------------------------------------------------------------------------------

    @initialize()
    def seed(self) -> None:
        """Start from a small tree, so that early steps already find things to change."""
        for path in ("/a/a", "/a/b/c", "/b"):
            self.write(path, path.encode())

    @rule(path=PATHS, data=DATA)
    def write(self, path: str, data: bytes | None) -> None:
        """Write a whole file (creating missing parent directories); None: the same bytes."""
        if data is None:
            data = self.files.get(path, b"same")
        call = lambda: self.ws.write(path, data, parents=True)  # noqa: E731
        if self.expect(self.creatable(path), f"write {path}", call):
            self.dirs.update(ancestors(path))
            self.set_content(path, data)

    @rule(path=PATHS, data=st.one_of(st.binary(max_size=20), SIZED))
    def append(self, path: str, data: bytes) -> None:
        call = lambda: self.ws.append(path, data, parents=True)  # noqa: E731
        if self.expect(self.creatable(path), f"append {path}", call):
            self.dirs.update(ancestors(path))
            self.set_content(path, self.files.get(path, b"") + data)

    @rule(path=PATHS, offset=OFFSETS, data=st.one_of(st.binary(max_size=40), SIZED))
    def pwrite(self, path: str, offset: int, data: bytes) -> None:
        ok = self.is_dir(parent_of(path)) and self.creatable(path)
        call = lambda: self.ws.pwrite(path, data, offset)  # noqa: E731
        if self.expect(ok, f"pwrite {path} at {offset}", call):
            old = self.files.get(path, b"")
            self.set_content(path, written_at(old, offset, data))

    @precondition(lambda self: self.files)
    @rule(data=st.data(), size=SIZES)
    def truncate(self, data: st.DataObject, size: int) -> None:
        path = data.draw(st.sampled_from(sorted(self.files)))
        self.ws.truncate(path, size)
        self.set_content(path, self.files[path][:size].ljust(size, b"\0"))

    @rule(path=PATHS, mode=st.sampled_from(["r+b", "wb", "ab"]), writes=HANDLE_WRITES)
    def write_through_a_handle(
        self, path: str, mode: str, writes: list[tuple[int, bytes, bool]]
    ) -> None:
        """``ws.open``: writes at offsets (an append handle writes at the end whatever the
        offset), some followed by a flush; one version at close."""
        exists = path in self.files
        ok = (exists or (mode != "r+b" and self.is_dir(parent_of(path)))) and self.creatable(path)
        content = b"" if mode == "wb" or not exists else self.files[path]

        def run() -> None:
            with self.ws.open(path, mode) as f:
                for offset, data, flush in writes:
                    f.seek(offset)
                    f.write(data)
                    if flush:
                        f.flush()

        if self.expect(ok, f"open {path} {mode}", run):
            for offset, data, _ in writes:
                at = len(content) if mode == "ab" else offset
                content = written_at(content, at, data)
            self.set_content(path, content)

    @precondition(lambda self: self.files)
    @rule(data=st.data(), dst=PATHS)
    def link(self, data: st.DataObject, dst: str) -> None:
        src = data.draw(st.sampled_from(sorted(self.files)))
        ok = (
            self.is_dir(parent_of(dst))
            and dst not in self.files
            and dst not in self.dirs
            and dst != "/"
        )
        if self.expect(ok, f"link {src} {dst}", lambda: self.ws.link(src, dst)):
            self.ident[dst] = self.ident[src]
            self.files[dst] = self.files[src]
            self.shared.update((src, dst))

    # --- names --------------------------------------------------------------------------------

    @rule(path=PATHS)
    def mkdir(self, path: str) -> None:
        ok = self.is_dir(parent_of(path)) and path not in self.dirs and path not in self.files
        if self.expect(ok, f"mkdir {path}", lambda: self.ws.mkdir(path)):
            self.dirs.add(path)

    @precondition(lambda self: self.files)
    @rule(data=st.data())
    def remove_file(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from(sorted(self.files)))
        self.ws.remove(path)
        del self.files[path], self.ident[path]

    @precondition(lambda self: self.dirs)
    @rule(data=st.data())
    def remove_dir(self, data: st.DataObject) -> None:
        top = data.draw(st.sampled_from(sorted(self.dirs)))
        self.ws.remove(top, recursive=True)
        self.files = {p: b for p, b in self.files.items() if not within(p, top)}
        self.ident = {p: i for p, i in self.ident.items() if not within(p, top)}
        self.dirs = {d for d in self.dirs if not within(d, top)}

    @precondition(lambda self: self.files)
    @rule(data=st.data(), dst=PATHS)
    def rename_file(self, data: st.DataObject, dst: str) -> None:
        src = data.draw(st.sampled_from(sorted(self.files)))
        ok = self.is_dir(parent_of(dst)) and dst not in self.dirs
        if not self.expect(ok, f"rename {src} {dst}", lambda: self.ws.rename(src, dst)):
            return
        if dst == src or self.ident.get(dst) == self.ident[src]:
            return  # the same file under both names: rename(2) does nothing
        self.files[dst] = self.files.pop(src)
        self.ident[dst] = self.ident.pop(src)
        if src in self.shared:
            self.shared.add(dst)

    @precondition(lambda self: self.dirs)
    @rule(data=st.data(), dst=PATHS)
    def rename_dir(self, data: st.DataObject, dst: str) -> None:
        src = data.draw(st.sampled_from(sorted(self.dirs)))
        replaced_empty = dst in self.dirs and not any(
            parent_of(p) == dst for p in (*self.files, *self.dirs)
        )
        ok = (
            self.is_dir(parent_of(dst))
            and not (dst != src and within(dst, src))
            and dst not in self.files
            and (dst not in self.dirs or dst == src or replaced_empty)
        )
        if not self.expect(ok, f"rename {src} {dst}", lambda: self.ws.rename(src, dst)):
            return
        if dst == src:
            return

        def moved(p: str) -> str:
            return dst + p[len(src) :] if within(p, src) else p

        self.dirs = {moved(d) for d in self.dirs}
        self.files = {moved(p): b for p, b in self.files.items()}
        self.ident = {moved(p): i for p, i in self.ident.items()}
        self.shared |= {moved(p) for p in self.shared}

    # --- snapshots ----------------------------------------------------------------------------

    @rule()
    def snapshot(self) -> None:
        self.counter += 1
        name = f"s{self.counter}"
        self.ws.snapshots.create(name)
        self.snaps[name] = self.state()

    @precondition(lambda self: self.snaps)
    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.snaps)))
        before = self.state()
        result = self.ws.snapshots.restore(name)
        assert result.undo not in self.snaps
        self.snaps[result.undo] = before
        files, dirs, groups = self.snaps[name]
        self.files, self.dirs = dict(files), set(dirs)
        # The restored names may be other files now (the snapshot's frozen inodes): learn
        # their numbers again; names the snapshot had as one file are one file again.
        self.ident = {}
        for group in groups:
            ident = self.new_identity(restored=True)
            self.ident.update(dict.fromkeys(group, ident))
            self.shared |= group
        for path in files:
            if path not in self.ident:
                self.ident[path] = self.new_identity(restored=True)

    @precondition(lambda self: self.snaps)
    @rule(data=st.data())
    def delete_snapshot(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.snaps)))
        self.ws.snapshots.delete(name)
        del self.snaps[name]

    # --- versions -----------------------------------------------------------------------------

    @rule(data=st.data())
    def restore_version(self, data: st.DataObject) -> None:
        rows = self.ws.conn.execute(
            "SELECT path, n FROM ws_version WHERE ino IS NOT NULL ORDER BY path, n"
        ).fetchall()
        if not rows:
            return
        path, n = data.draw(st.sampled_from(rows))
        content = self.ws.read_version(path, n)
        ok = self.creatable(path)
        version = self.ws.version(path, n)
        now = self.ws.lstat(path) if path in self.files else None
        # the version is the file as it is now (same inode and size): nothing is relinked
        current = now is not None and (version.ino, version.size) == (now.st_ino, now.st_size)
        call = lambda: self.ws.restore_version(path, n)  # noqa: E731
        if self.expect(ok, f"restore_version {path}@{n}", call) and not current:
            self.dirs.update(ancestors(path))
            self.files[path] = content
            self.ident[path] = self.new_identity(restored=True)  # relinked: another inode

    # --- invariants (and fsck's, WorkspaceMachine's) ------------------------------------------

    @invariant()
    def live_tree_equals_the_model(self) -> None:
        files: dict[str, bytes] = {}
        dirs: set[str] = set()
        for top, dirnames, filenames in self.ws.walk("/"):
            for name in dirnames:
                dirs.add(top.rstrip("/") + "/" + name)
            for name in filenames:
                path = top.rstrip("/") + "/" + name
                files[path] = self.ws.read(path)
        assert dirs == self.dirs
        assert files == self.files
        for path, content in files.items():
            self.seen[path].add(content)

    @invariant()
    def live_files_keep_their_inode_numbers(self) -> None:
        owner: dict[int, int] = {}
        for path, ident in sorted(self.ident.items()):
            st_ = self.ws.lstat(path)
            ino = self.inos.setdefault(ident, st_.st_ino)
            assert st_.st_ino == ino, f"{path}: inode {ino} became {st_.st_ino}"
            assert owner.setdefault(ino, ident) == ident, f"{path}: shares inode {ino}"
            if ident not in self.known and ident not in self.restored:
                assert ino > self.high, f"{path}: a new file got an old number, {ino}"
            names = sum(1 for other in self.ident.values() if other == ident)
            assert st_.st_nlink == names, f"{path}: nlink {st_.st_nlink}, {names} names"
        self.known = set(self.inos)
        self.high = self.ws.conn.execute("SELECT max(ino) FROM fs_inode").get

    @invariant()
    def every_snapshot_still_equals_its_copy(self) -> None:
        assert {s.name for s in self.ws.snapshots.list()} == set(self.snaps)
        for name, (files, dirs, _) in self.snaps.items():
            shown = self.ws.snapshots.show(name)
            got_dirs = {p for p, e in shown if stat.S_ISDIR(e.mode)}
            got_files = {
                p: self.ws.snapshots.read(name, p) for p, e in shown if stat.S_ISREG(e.mode)
            }
            assert (got_files, got_dirs) == (files, dirs), f"snapshot {name}"

    @invariant()
    def every_snapshot_diffs_against_now_like_the_model(self) -> None:
        """``diff(snapshot)`` adds and removes exactly the paths the model does, and lists as
        modified every path whose type or bytes changed."""
        live = {**{d: None for d in self.dirs}, **self.files}
        for name, (files, dirs, _) in self.snaps.items():
            then = {**{d: None for d in dirs}, **files}
            diff = self.ws.snapshots.diff(name)
            assert diff.added == sorted(live.keys() - then.keys()), f"diff {name}: added"
            assert diff.removed == sorted(then.keys() - live.keys()), f"diff {name}: removed"
            changed = {p for p in live.keys() & then.keys() if live[p] != then[p]}
            assert changed <= set(diff.modified), f"diff {name}: modified"

    @invariant()
    def history_tells_the_truth(self) -> None:
        for path, content in self.files.items():
            self.seen[path].add(content)
        newest: dict[str, tuple[str, int | None, bytes | None]] = {}
        for path, op, ino, size, hash_ in self.ws.conn.execute(
            "SELECT path, op, ino, size, hash FROM ws_version ORDER BY path, n"
        ):
            newest[path] = (op, ino, hash_)
            if ino is not None:
                content = self.ws.chunks.read(ino, size)
                assert blake(content) == hash_, f"{path}: a frozen inode changed"
                assert content in self.seen[path], f"{path}: a version of bytes never there"
        for path, content in self.files.items():
            op, ino, hash_ = newest[path]
            if path in self.shared:  # another name's write made no version of this path
                continue
            assert hash_ == blake(content), f"{path}: newest event {op} is not the content"
        for path, (op, ino, _) in newest.items():
            if path not in self.files:  # gone, or a directory now
                assert ino is None, f"{path} is no file, its newest event is {op}"


TestHistoryModel = HistoryModel.TestCase
TestHistoryModel.settings = machine_settings(50, 30)

#: Minutes of hypothesis: started before the rest of the suite (tests/conftest.py).
pytestmark = pytest.mark.runs_first
