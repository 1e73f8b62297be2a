"""Scopes: ``LayeredWorkspace`` shows several workspace files as one tree, the most specific
layer winning, writes going to the first layer and never changing the ones below."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs import LayeredWorkspace, StaleReadError, open_layers
from agentfs.tools.policy import Policy, ToolPolicy
from agentfs.tools.toolset import Toolset


@pytest.fixture
def layers(tmp_path: Path) -> Iterator[LayeredWorkspace]:
    thread, agent, team = (agentfs.open(tmp_path / f"{n}.db") for n in ("thread", "agent", "team"))
    team.write("/README.md", "team readme\n")
    team.write("/src/app.py", "print('team')\n", parents=True)
    team.write("/src/lib/util.py", "def util(): pass\n", parents=True, mode=0o755)
    team.write("/docs/guide.md", "the team guide\n", parents=True)
    agent.write("/src/app.py", "print('agent')\n", parents=True)
    agent.write("/notes.md", "agent notes\n")
    thread.write("/scratch.txt", "thread scratch\n")
    thread.write("/docs", "a file hiding the team's docs directory\n")
    with LayeredWorkspace([thread, agent, team]) as union:
        yield union


def bytes_of(ws: agentfs.Workspace) -> dict[str, bytes]:
    return {
        f"{d.rstrip('/')}/{n}": ws.read(f"{d.rstrip('/')}/{n}", track=False)
        for d, _dirs, names in ws.walk("/")
        for n in names
    }


def test_reads_see_the_union_most_specific_first(layers: LayeredWorkspace) -> None:
    assert layers.listdir("/") == ["README.md", "docs", "notes.md", "scratch.txt", "src"]
    assert layers.read("/src/app.py") == b"print('agent')\n"  # agent beats team
    assert layers.read("/src/lib/util.py") == b"def util(): pass\n"  # merged directory
    assert layers.listdir("/src") == ["app.py", "lib"]
    # a file in a higher layer hides the directory below it, and everything under it
    assert layers.stat("/docs").type == "file"
    assert not layers.exists("/docs/guide.md")
    with pytest.raises(NotADirectoryError):
        layers.read("/docs/guide.md")
    walked = {d: (sorted(ds), sorted(fs)) for d, ds, fs in layers.walk("/")}
    assert walked["/"] == (["src"], ["README.md", "docs", "notes.md", "scratch.txt"])
    assert walked["/src/lib"] == ([], ["util.py"])


def test_writes_go_to_the_first_layer_and_lower_layers_never_change(
    layers: LayeredWorkspace,
) -> None:
    before = [bytes_of(layer) for layer in layers.layers[1:]]
    layers.write("/src/app.py", "print('thread')\n")
    layers.write("/src/lib/util.py", "def util(): return 1\n")
    layers.write("/new/deep/file.txt", "new\n", parents=True)
    layers.mkdir("/src/lib/sub")
    layers.copy("/README.md", "/README.copy.md")
    assert [bytes_of(layer) for layer in layers.layers[1:]] == before
    top = layers.top
    assert top.read("/src/app.py") == b"print('thread')\n"
    assert layers.read("/src/app.py") == b"print('thread')\n"
    assert top.stat("/src/lib/util.py").st_mode & 0o777 == 0o755  # copy-up keeps the mode
    assert top.read("/README.copy.md") == b"team readme\n"
    assert top.lstat("/src/lib/sub").is_dir()
    assert layers.listdir("/src/lib") == ["sub", "util.py"]


def test_a_write_into_a_missing_directory_needs_parents(layers: LayeredWorkspace) -> None:
    with pytest.raises(FileNotFoundError):
        layers.write("/nowhere/file.txt", "x")
    with pytest.raises(IsADirectoryError):
        layers.write("/src", "x")
    assert not layers.top.exists("/nowhere")


@pytest.mark.parametrize(
    ("action", "path"),
    [
        (lambda u: u.remove("/README.md"), "/README.md"),
        (lambda u: u.remove("/src", recursive=True), "/src"),
        (lambda u: u.rename("/notes.md", "/notes2.md"), "/notes.md"),
        (lambda u: u.rename("/scratch.txt", "/src"), "/src"),
    ],
)
def test_what_lives_below_cannot_be_removed_or_renamed(
    layers: LayeredWorkspace, action: object, path: str
) -> None:
    before = [bytes_of(layer) for layer in layers.layers]
    with pytest.raises(OSError) as raised:
        action(layers)  # type: ignore[operator]
    assert raised.value.errno == errno.EROFS
    assert "lower layer" in str(raised.value)
    assert [bytes_of(layer) for layer in layers.layers] == before


def test_the_first_layers_own_files_move_and_go(layers: LayeredWorkspace) -> None:
    layers.rename("/scratch.txt", "/src/lib/scratch.txt")  # into a directory from below
    assert layers.read("/src/lib/scratch.txt") == b"thread scratch\n"
    layers.rename("/src/lib/scratch.txt", "/README.md")  # a file may shadow a file below
    assert layers.read("/README.md") == b"thread scratch\n"
    assert layers.layers[2].read("/README.md") == b"team readme\n"
    layers.write("/tmp.txt", "x")
    layers.remove("/tmp.txt")
    assert not layers.exists("/tmp.txt")


def test_symlinks_resolve_through_the_union(layers: LayeredWorkspace) -> None:
    layers.symlink("/src/lib", "/lib")  # a first-layer link into a lower layer's directory
    assert layers.read("/lib/util.py") == b"def util(): pass\n"
    assert layers.realpath("/lib/util.py") == "/src/lib/util.py"
    assert layers.readlink("/lib") == "/src/lib"
    assert layers.lstat("/lib").type == "symlink"
    layers.write("/lib/util.py", "changed\n")  # writes land at the real path, in the top
    assert layers.top.read("/src/lib/util.py") == b"changed\n"
    layers.symlink("loop2", "/loop1")
    layers.symlink("loop1", "/loop2")
    with pytest.raises(OSError) as raised:
        layers.read("/loop1")
    assert raised.value.errno == errno.ELOOP
    with pytest.raises(FileExistsError):
        layers.symlink("/x", "/README.md")


def test_glob_grep_and_search_merge_without_shadowed_files(layers: LayeredWorkspace) -> None:
    names = [m.path for m in layers.glob("**/*.py", sort="name")]
    assert names == ["/src/app.py", "/src/lib/util.py"]
    assert "/docs/guide.md" not in [m.path for m in layers.glob("**/*")]
    found = layers.grep("print", output="content")
    assert [(line.path, line.text) for line in found.lines] == [("/src/app.py", "print('agent')")]
    # the team's app.py is shadowed by the agent's, its docs/ by the thread's file /docs
    assert layers.grep("team", output="files").files == ["/README.md", "/docs"]
    capped = layers.grep(".", output="files", max_results=2)
    assert len(capped.files) == 2 and capped.truncated
    assert layers.search("guide", mode="bm25").hits == []  # only the shadowed file has it
    hits = layers.search("readme", mode="bm25", top_k=10)
    assert [h.path for h in hits.hits] == ["/README.md"]
    assert [m.path for m in layers.glob("*.py", "/src/lib")] == ["/src/lib/util.py"]


def test_history_is_the_owning_layers(layers: LayeredWorkspace) -> None:
    team = layers.layers[2]
    team.write("/README.md", "team readme v2\n")
    assert [v.n for v in layers.history("/README.md")] == [1, 2]
    assert layers.read_version("/README.md", 1) == b"team readme\n"
    assert "v2" in layers.diff("/README.md")
    layers.restore_version("/README.md", 1)  # written into the first layer
    assert layers.top.read("/README.md") == b"team readme\n"
    assert team.read("/README.md") == b"team readme v2\n"


def test_read_before_write_covers_copy_up(layers: LayeredWorkspace) -> None:
    layers.thread = "t1"
    layers.read_before_write = True
    with pytest.raises(StaleReadError) as unread:
        layers.write("/README.md", "blind overwrite\n")
    assert unread.value.reason == "unread"
    layers.read("/README.md")
    # the read is recorded in the first layer's log, so another handle sees it too
    assert [r.path for r in layers.top.reads_log("t1")] == ["/README.md"]
    assert layers.layers[2].reads_log() == []  # the lower layer is never written
    layers.layers[2].write("/README.md", "changed by the team\n")  # after our read
    with pytest.raises(StaleReadError) as stale:
        layers.write("/README.md", "stale overwrite\n")
    assert stale.value.reason == "changed"
    assert layers.read("/README.md") == b"changed by the team\n"
    layers.read("/README.md")
    again = LayeredWorkspace(layers.layers)  # a new handle over the same files
    again.write("/README.md", "informed overwrite\n")
    layers.write("/README.md", "and again\n")  # the writer has seen its own write
    assert layers.top.read("/README.md") == b"and again\n"
    layers.write("/brand-new.md", "no read needed for a new file\n")


def test_write_file_over_layers_tells_what_the_union_held(layers: LayeredWorkspace) -> None:
    """A file below is not created by a write that copies it up, and is not replaced
    without overwrite; a path no layer holds is created in the first."""
    tools = Toolset(layers, thread="t1")
    below = {"path": "/src/lib/util.py", "content": "x"}
    assert tools.call("write_file", below)["error"]["code"] == "exists"
    replaced = tools.call("write_file", {**below, "overwrite": True})
    assert replaced["created"] is False and layers.top.read("/src/lib/util.py") == b"x"
    assert layers.layers[2].read("/src/lib/util.py") == b"def util(): pass\n"
    new = tools.call("write_file", {"path": "/src/new.py", "content": "n"})
    assert new["created"] is True and layers.top.read("/src/new.py") == b"n"
    layers.layers[2].symlink("src", "/to_src")
    for path in ("/src/lib", "/to_src/", "/"):
        for overwrite in (False, True):
            args = {"path": path, "content": "x", "overwrite": overwrite}
            assert tools.call("write_file", args)["error"]["code"] == "is_directory", args


def test_toolset_works_over_layers_unchanged(layers: LayeredWorkspace) -> None:
    layers.layers[2].write(
        "/skills/review/SKILL.md",
        "---\nname: review\ndescription: Review a change.\n---\nRead the diff.\n",
        parents=True,
    )
    policy = Policy(defaults=ToolPolicy(require_read_before_write=True))
    tools = Toolset(layers, thread="t1", policy=policy)
    listing = tools.call("ls", {"path": "/src"})
    assert [e["name"] for e in listing["entries"]] == ["app.py", "lib"]
    blind = {"path": "/README.md", "old_string": "team", "new_string": "x"}
    refused = tools.call("edit_file", blind)
    assert refused["error"]["code"] == "read_required"
    read = tools.call("read_file", {"path": "/README.md"})
    assert "team readme" in read["content"]
    edited = tools.call(
        "edit_file", {"path": "/README.md", "old_string": "team", "new_string": "our"}
    )
    assert "error" not in edited, edited
    assert layers.top.read("/README.md") == b"our readme\n"
    assert layers.layers[2].read("/README.md") == b"team readme\n"
    grep = tools.call("grep", {"pattern": "readme", "output_mode": "content"})
    assert "/README.md" in str(grep)
    deleted = tools.call("delete_file", {"path": "/notes.md"})
    assert deleted["error"]["code"] == "read_only"
    skills = tools.call("workspace_list_skills", {})
    assert [s["id"] for s in skills["skills"]] == ["review"]
    assert tools.call("workspace_activate_skill", {"skill_id": "review"})["active"]
    assert layers.active_skills("t1") == ["review"]
    tools.flush()
    names = [c.name for c in layers.top.tool_calls.list()]  # the audit lives in the first layer
    assert names[-3:] == ["read_file", "edit_file", "ls"] and len(names) == 8  # newest first


def test_open_layers_can_keep_lower_layers_read_only(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "team.db") as team:
        team.write("/shared.md", "shared\n")
    with open_layers(tmp_path / "mine.db", tmp_path / "team.db", readonly_below=True) as union:
        assert union.layers[1].readonly and not union.top.readonly
        assert union.read("/shared.md") == b"shared\n"
        union.write("/shared.md", "mine\n")
        assert union.read("/shared.md") == b"mine\n"
    with agentfs.open(tmp_path / "team.db") as team:
        assert team.read("/shared.md") == b"shared\n"
    with pytest.raises(ValueError):
        LayeredWorkspace([])


# --- the union against a brute-force reference ------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map(lambda parts: "/" + "/".join(parts))
LAYER = st.dictionaries(PATHS, st.binary(max_size=8), max_size=6)


def consistent(files: dict[str, bytes]) -> dict[str, bytes]:
    """Drop files that would need another file of the same layer to be a directory."""
    kept: dict[str, bytes] = {}
    for path in sorted(files, key=len):
        if not any(path.startswith(other + "/") for other in kept):
            kept[path] = files[path]
    return kept


def reference_union(layer_files: list[dict[str, bytes]]) -> dict[str, bytes]:
    """The union by its definition: a file of layer i shows when no layer before it has an
    entry at its path, nor a non-directory at any of its ancestors."""

    def kind(files: dict[str, bytes], path: str) -> str | None:
        if path in files:
            return "file"
        return "dir" if any(p.startswith(path + "/") for p in files) else None

    shown: dict[str, bytes] = {}
    for i, files in enumerate(layer_files):
        for path, data in files.items():
            parts = path.split("/")[1:]
            ancestors = ["/" + "/".join(parts[:k]) for k in range(1, len(parts))]
            if all(
                kind(before, path) is None
                and all(kind(before, a) in (None, "dir") for a in ancestors)
                for before in layer_files[:i]
            ):
                shown[path] = data
    return shown


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(LAYER, min_size=1, max_size=3))
def test_the_union_matches_its_definition(tmp_path: Path, raw: list[dict[str, bytes]]) -> None:
    layer_files = [consistent(files) for files in raw]
    opened = []
    for i, files in enumerate(layer_files):
        file = tmp_path / f"layer{i}.db"
        file.unlink(missing_ok=True)
        ws = agentfs.open(file)
        for path, data in files.items():
            ws.write(path, data, parents=True)
        opened.append(ws)
    with LayeredWorkspace(opened) as union:
        expected = reference_union(layer_files)
        walked = {
            f"{d.rstrip('/')}/{n}": union.read(f"{d.rstrip('/')}/{n}")
            for d, _dirs, names in union.walk("/")
            for n in names
        }
        assert walked == expected
        assert {m.path for m in union.glob("**/*")} == set(expected)
        for path in {p for files in layer_files for p in files} - set(expected):
            # a hidden file is gone from the union, or a higher layer's directory stands there
            assert not union.exists(path) or union.stat(path).is_dir()


def test_every_member_of_the_protocol_is_on_both_kinds(layers: LayeredWorkspace) -> None:
    members = [n for n in dir(agentfs.WorkspaceAPI) if not n.startswith("_")]
    assert len(members) > 70
    for kind in (layers, layers.top):
        assert isinstance(kind, agentfs.WorkspaceAPI)
        assert [n for n in members if not hasattr(kind, n)] == []


def test_changes_of_a_lower_file_copy_it_up_and_leave_it_as_it_was(
    layers: LayeredWorkspace,
) -> None:
    team, agent = layers.layers[2], layers.layers[1]
    before = {ws.path: bytes_of(ws) for ws in layers.layers[1:]}
    team.setxattr("/README.md", "user.tag", b"team")
    layers.append("/README.md", "more\n")
    layers.pwrite("/src/app.py", "P", 0)
    layers.truncate("/notes.md", 5)
    layers.utime("/src/lib/util.py", (1, 2_000_000_000))
    layers.setxattr("/docs", "user.k", b"v")  # the first layer's own file
    assert layers.getxattr("/README.md", "user.tag") == b"team"  # copied up with the file
    layers.removexattr("/README.md", "user.tag")
    assert layers.read("/README.md") == b"team readme\nmore\n"
    assert layers.read("/src/app.py") == b"Print('agent')\n"
    assert layers.read("/notes.md") == b"agent"
    assert layers.stat("/src/lib/util.py").st_mtime_ns == 2_000_000_000
    assert layers.stat("/src/lib/util.py").st_mode & 0o777 == 0o755
    assert {ws.path: bytes_of(ws) for ws in layers.layers[1:]} == before
    assert team.getxattr("/README.md", "user.tag") == b"team"
    assert agent.read("/src/app.py") == b"print('agent')\n"
    with layers.open("/src/lib/util.py") as f:  # read where it lives
        assert f.read() == "def util(): pass\n"
    with layers.open("/src/lib/util.py", "a") as f:
        f.write("# mine\n")
    assert layers.top.read("/src/lib/util.py") == b"def util(): pass\n# mine\n"


def test_new_names_and_links_stay_in_the_first_layer(layers: LayeredWorkspace) -> None:
    for make in (lambda p: layers.create(p), lambda p: layers.mknod(p, 0o10644)):
        with pytest.raises(FileExistsError):
            make("/README.md")  # a lower layer has the name
    layers.create("/src/new.txt")
    assert layers.top.read("/src/new.txt") == b""
    with pytest.raises(OSError) as raised:
        layers.link("/README.md", "/readme-link")
    assert raised.value.errno == errno.EXDEV
    layers.link("/scratch.txt", "/scratch-link")
    assert layers.top.stat("/scratch-link").st_nlink == 2
    with pytest.raises(FileExistsError):
        layers.open("/notes.md", "x")


def test_what_a_layered_workspace_cannot_do_says_why(layers: LayeredWorkspace) -> None:
    with pytest.raises(agentfs.UnsupportedError, match="mount of one workspace file"):
        layers.run("true")
    assert layers.limits == layers.top.limits
    assert layers.reads_log() == layers.top.reads_log()


def test_changing_a_lower_file_in_place_needs_having_read_it(layers: LayeredWorkspace) -> None:
    layers.thread, layers.read_before_write = "t1", True
    for change in (
        lambda: layers.append("/README.md", "x"),
        lambda: layers.pwrite("/README.md", "x", 0),
        lambda: layers.truncate("/README.md", 0),
    ):
        with pytest.raises(StaleReadError):
            change()
    assert not layers.top.exists("/README.md")
    layers.read("/README.md")
    layers.append("/README.md", "x")
    assert layers.read("/README.md") == b"team readme\nx"


def test_a_change_below_that_fails_copies_nothing_up(layers: LayeredWorkspace) -> None:
    before = bytes_of(layers.top)
    with pytest.raises(OSError):
        layers.setxattr("/README.md", "bogus.name", b"v")  # no such namespace
    with pytest.raises(OSError):
        layers.truncate("/src/app.py", -1)
    with pytest.raises(OSError):
        layers.setxattr("/notes.md", "user.big", bytes(70_000))  # over the 64 KiB a value may hold
    assert bytes_of(layers.top) == before and not layers.top.exists("/README.md")


def test_an_open_below_that_fails_copies_nothing_up(layers: LayeredWorkspace) -> None:
    before = bytes_of(layers.top)
    with pytest.raises(OSError):
        layers.open("/README.md", "r+z")  # no such mode
    with pytest.raises(IsADirectoryError):
        layers.open("/src/lib", "r+b")
    assert bytes_of(layers.top) == before
    assert not layers.top.exists("/README.md") and not layers.top.exists("/src/lib")
