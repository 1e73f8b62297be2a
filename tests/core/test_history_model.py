"""History against a model: a hypothesis state machine runs writes, appends, renames, removes,
mkdirs, snapshots, snapshot restores and deletes, and version restores on a workspace, and the
same on an in-memory model (a dict of file bytes and a set of directories; a snapshot is a copy
of both).

After every step:
- the live tree equals the model (every file's bytes, every directory);
- every snapshot, the automatic undo snapshots of restores included, still shows exactly its
  model copy through ``snapshots.show`` and ``snapshots.read``, and its diff against the live
  tree adds, removes and modifies what the model says;
- history tells the truth: each live file's newest version is its current content, each other
  path's newest event carries no content (it was deleted or moved away), and every version's
  bytes still hash to its recorded digest and are bytes that path really held at some step;
- fsck finds the workspace clean.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections import defaultdict

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

import agentfs
from agentfs import fsck

NAMES = ("a", "b", "c")
PATHS = st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map(
    lambda parts: "/" + "/".join(parts)
)
#: None: write the bytes the file already has (no new version must appear).
DATA = st.one_of(st.none(), st.binary(max_size=40))

#: A state of the tree: file path -> bytes, and the set of directories (the root excluded).
State = tuple[dict[str, bytes], frozenset[str]]


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


class HistoryModel(RuleBasedStateMachine):
    """The workspace and the model side by side; see the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="agentfs-history-model-")
        self.ws = agentfs.open(os.path.join(self.tmp, "ws.db"), actor="model", thread="t")
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()
        self.snaps: dict[str, State] = {}
        self.seen: defaultdict[str, set[bytes]] = defaultdict(set)
        self.counter = 0

    def teardown(self) -> None:
        self.ws.close()
        shutil.rmtree(self.tmp)

    # --- helpers ------------------------------------------------------------------------------

    def is_dir(self, path: str) -> bool:
        return path == "/" or path in self.dirs

    def state(self) -> State:
        return dict(self.files), frozenset(self.dirs)

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
        ok = path not in self.dirs and not any(a in self.files for a in ancestors(path))
        call = lambda: self.ws.write(path, data, parents=True)  # noqa: E731
        if self.expect(ok, f"write {path}", call):
            self.dirs.update(ancestors(path))
            self.files[path] = data

    @rule(path=PATHS, data=st.binary(max_size=20))
    def append(self, path: str, data: bytes) -> None:
        ok = path not in self.dirs and not any(a in self.files for a in ancestors(path))
        call = lambda: self.ws.append(path, data, parents=True)  # noqa: E731
        if self.expect(ok, f"append {path}", call):
            self.dirs.update(ancestors(path))
            self.files[path] = self.files.get(path, b"") + data

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
        del self.files[path]

    @precondition(lambda self: self.dirs)
    @rule(data=st.data())
    def remove_dir(self, data: st.DataObject) -> None:
        top = data.draw(st.sampled_from(sorted(self.dirs)))
        self.ws.remove(top, recursive=True)
        self.files = {p: b for p, b in self.files.items() if not within(p, top)}
        self.dirs = {d for d in self.dirs if not within(d, top)}

    @precondition(lambda self: self.files)
    @rule(data=st.data(), dst=PATHS)
    def rename_file(self, data: st.DataObject, dst: str) -> None:
        src = data.draw(st.sampled_from(sorted(self.files)))
        ok = self.is_dir(parent_of(dst)) and dst not in self.dirs
        if self.expect(ok, f"rename {src} {dst}", lambda: self.ws.rename(src, dst)) and dst != src:
            self.files[dst] = self.files.pop(src)

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
        files, dirs = self.snaps[name]
        self.files, self.dirs = dict(files), set(dirs)

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
        ok = path not in self.dirs and not any(a in self.files for a in ancestors(path))
        call = lambda: self.ws.restore_version(path, n)  # noqa: E731
        if self.expect(ok, f"restore_version {path}@{n}", call):
            self.dirs.update(ancestors(path))
            self.files[path] = content

    # --- invariants ---------------------------------------------------------------------------

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
    def every_snapshot_still_equals_its_copy(self) -> None:
        assert {s.name for s in self.ws.snapshots.list()} == set(self.snaps)
        for name, (files, dirs) in self.snaps.items():
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
        for name, (files, dirs) in self.snaps.items():
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
            assert hash_ == blake(content), f"{path}: newest event {op} is not the content"
        for path, (op, ino, _) in newest.items():
            if path not in self.files:  # gone, or a directory now
                assert ino is None, f"{path} is no file, its newest event is {op}"

    @invariant()
    def fsck_finds_the_workspace_clean(self) -> None:
        report = fsck.check(self.ws)
        assert report.clean, report.problems


TestHistoryModel = HistoryModel.TestCase
TestHistoryModel.settings = settings(
    max_examples=40,
    stateful_step_count=30,
    derandomize=True,  # the same sequences on every run and machine
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
