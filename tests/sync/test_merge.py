"""The three-way merge (``agentfs.sync.tree.merge3``) against its rules, on random trees: it is
symmetric (both machines pick the same result), a side nobody else changed is taken whole,
every kept path has its directories, and no change is dropped without being listed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentfs.sync.tree import Entry, Tree, identity, merge3, same

NAMES = ["a", "b", "c"]

files = st.builds(
    lambda mode, h, t: {"type": "file", "mode": mode, "hash": h, "mtime_ns": t, "size": 1},
    st.sampled_from([0o644, 0o755]),
    st.sampled_from(["h1", "h2", "h3"]),
    st.integers(0, 3),
)
links = st.builds(
    lambda target, t: {"type": "symlink", "target": target, "mtime_ns": t},
    st.sampled_from(["x", "y"]),
    st.integers(0, 3),
)
dirs = st.builds(
    lambda mode: {"type": "directory", "mode": mode, "mtime_ns": 0}, st.sampled_from([0o755, 0o700])
)
kvs = st.builds(
    lambda v, at: {"type": "kv", "value": v, "at": at},
    st.sampled_from(["1", "2"]),
    st.integers(0, 2),
)
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(lambda p: "/" + "/".join(p))


@st.composite
def trees(draw: st.DrawFn) -> Tree:
    """A well-formed tree: every path's parents are directories."""
    tree: Tree = {}
    for path in sorted(draw(st.lists(paths, max_size=8, unique=True)), key=len):
        parent = path.rsplit("/", 1)[0]
        if parent and (parent not in tree or tree[parent]["type"] != "directory"):
            continue
        tree[path] = draw(st.one_of(files, links, dirs))
    for key in draw(st.lists(st.sampled_from(["kv:k1", "kv:k2"]), unique=True)):
        tree[key] = draw(kvs)
    return tree


def derived(base: Tree) -> st.SearchStrategy[Tree]:
    """A tree that mostly agrees with ``base``: the usual case a merge sees."""
    return st.one_of(st.just(dict(base)), trees(), st.builds(lambda t: {**base, **t}, trees()))


def _changes(tree: Tree) -> dict[str, object]:
    """What a merge must keep of a tree: each entry's identity (not a directory's time)."""
    return {key: identity(entry) for key, entry in tree.items()}


def _well_formed(tree: Tree) -> bool:
    for key in tree:
        if key.startswith("/"):
            parent = key.rsplit("/", 1)[0]
            if parent and tree.get(parent, {}).get("type") != "directory":
                return False
    return True


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_merge3_rules(data: st.DataObject) -> None:
    base = data.draw(trees())
    ours = data.draw(derived(base))
    theirs = data.draw(derived(base))
    if not (_well_formed(ours) and _well_formed(theirs)):
        return
    result, conflicts = merge3(base, ours, theirs)
    mirrored, mirrored_conflicts = merge3(base, theirs, ours)
    assert result == mirrored  # symmetric: who is "ours" does not matter
    assert sorted(c.key for c in conflicts) == sorted(c.key for c in mirrored_conflicts)
    assert _well_formed(result)
    if ours == base:
        assert _changes(result) == _changes(theirs) and conflicts == []
    if theirs in (base, ours):
        assert _changes(result) == _changes(ours) and conflicts == []
    lost = {(c.key, str(c.lost)) for c in conflicts}
    for side in (ours, theirs):
        for key in base.keys() | side.keys():
            change: Entry | None = side.get(key)
            if same(change, base.get(key)) or same(change, result.get(key)):
                continue
            # a change that did not make it is listed, or was an unchanged side's deletion
            assert (key, str(change)) in lost or change is None, (key, change, result.get(key))
