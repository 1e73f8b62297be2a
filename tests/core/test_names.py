"""``names``: every path naming what a path leads to, against a host directory's inodes (the
policy judges a file by all of its names)."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.layered import LayeredWorkspace

NAMES = st.sampled_from(["a", "b", "c", "d/a", "d/b", "e/d/c"])
#: (kind, path, other path): a file, a hard link of another path, a symlink to one.
STEPS = st.lists(st.tuples(st.sampled_from(["file", "link", "symlink"]), NAMES, NAMES), max_size=12)


def _apply(ws: agentfs.Workspace, host: Path, kind: str, path: str, other: str) -> None:
    """One step on both sides, where it fits the host (the host's errors decide). Files are
    written and linked by their own names only: what a write or a link through a symlink
    does is another test's subject."""
    target = host / path
    relative = os.path.relpath(host / other, target.parent)  # a symlink's target
    if target.is_symlink() or (kind == "link" and (host / other).is_symlink()):
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "file":
            target.write_text(path)
        elif kind == "link":
            os.link(host / other, target)
        else:
            target.symlink_to(relative)
    except OSError:
        return
    ws.mkdir(str(Path("/", path).parent), parents=True, exist_ok=True)
    if kind == "file":
        ws.write("/" + path, path)
    elif kind == "link":
        ws.link("/" + other, "/" + path)
    else:
        ws.symlink(relative, "/" + path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_names_are_the_host_paths_of_the_same_inode(steps: list[tuple[str, str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        host = Path(tmp, "host")
        host.mkdir()
        with agentfs.open(Path(tmp, "ws.db")) as ws:
            for step in steps:
                _apply(ws, host, *step)
            every = [p for p in host.rglob("*")]
            for entry in every:
                rel = "/" + str(entry.relative_to(host))
                try:
                    st_host = entry.stat()
                except OSError as exc:
                    if exc.errno == errno.ELOOP:  # a loop of symlinks leads nowhere
                        with pytest.raises(OSError) as raised:
                            ws.names(rel)
                        assert raised.value.errno == errno.ELOOP
                    else:  # a dangling symlink: its real path alone
                        assert ws.names(rel) == [ws.realpath(rel)]
                    continue
                if entry.is_dir() or st_host.st_nlink == 1:
                    expected = {ws.realpath(rel)}
                else:
                    expected = {
                        "/" + str(p.relative_to(host))
                        for p in every
                        if not p.is_symlink() and p.stat().st_ino == st_host.st_ino
                    }
                assert set(ws.names(rel)) == expected, rel
            assert ws.names("/missing/x") == ["/missing/x"]


def test_a_layered_workspace_names_a_file_in_the_layer_that_holds_it(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "lower.db") as lower, agentfs.open(tmp_path / "top.db") as top:
        lower.write("/secrets/key", "k", parents=True)
        lower.link("/secrets/key", "/hard")
        top.write("/own", "o")
        union = LayeredWorkspace([top, lower])
        assert sorted(union.names("/hard")) == ["/hard", "/secrets/key"]
        assert union.names("/own") == ["/own"] and union.names("/none") == ["/none"]
