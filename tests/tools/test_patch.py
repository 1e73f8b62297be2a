"""``apply_patch``: both formats, hunks found where the file moved on, and all or nothing.

The text layer (``agentfs.tools.patch``) is checked against a reference: a diff that
``difflib`` (or ``agentfs.history.api.unified_diff``, which adds git's no-newline markers) makes
from A to B, applied to A, gives B exactly, also when lines were added above it since. The tool
is checked through ``Toolset.call`` on real workspaces: a patch that fails anywhere changes
nothing, whatever it would have done before the failure.
"""

from __future__ import annotations

import difflib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.history.api import unified_diff
from agentfs.tools.patch import HunkFailed, PatchSyntaxError, apply_hunks, parse
from agentfs.tools.policy import Policy
from agentfs.tools.toolset import Toolset

# --- the text layer against difflib -----------------------------------------------------------

#: Few distinct lines, so contexts repeat and a hunk could go to the wrong copy.
LINES = st.lists(st.sampled_from(["a", "b", "c", "", "  indented", "x = 1", "}"]), max_size=30)


def texts(lines: list[str], final_newline: bool) -> str:
    return "\n".join(lines) + ("\n" if final_newline and lines else "")


def apply_text(patch: str, text: str) -> str:
    (file_patch,) = parse(patch)
    return apply_hunks("/f", text, file_patch.hunks)[0]


@settings(max_examples=300, deadline=None)
@given(
    old=LINES,
    new=LINES,
    old_nl=st.booleans(),
    new_nl=st.booleans(),
    context=st.integers(0, 3),
)
def test_a_unified_diff_turns_a_into_b(
    old: list[str], new: list[str], old_nl: bool, new_nl: bool, context: int
) -> None:
    a, b = texts(old, old_nl), texts(new, new_nl)
    if a == b:
        return
    if context == 3:  # the project's own diff, with "\ No newline at end of file" markers
        patch = unified_diff(a.encode(), b.encode(), "a/f", "b/f")
    else:
        diff = difflib.unified_diff(
            a.splitlines(keepends=True), b.splitlines(keepends=True), "a/f", "b/f", n=context
        )
        patch = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
        if not (old_nl and new_nl):
            return  # difflib alone cannot say "no newline"; the markers are tested above
    assert apply_text(patch, a) == b


@settings(max_examples=200, deadline=None)
@given(old=LINES, new=LINES, above=st.lists(st.sampled_from(["p", "q"]), min_size=1, max_size=5))
def test_a_hunk_still_applies_below_new_lines_and_says_how_far(
    old: list[str], new: list[str], above: list[str]
) -> None:
    """The file gained lines above since the diff was made: every hunk moves down by that many
    lines, and says so. The old lines are distinct (with a context repeated nearer the header's
    line than the true place, no tool can tell which copy was meant) and not empty (a hunk
    with no context has nothing to find)."""
    old = list(dict.fromkeys(old))
    a, b = texts(old, True), texts(new, True)
    if a == b or not old:
        return
    patch = unified_diff(a.encode(), b.encode(), "a/f", "b/f")
    (file_patch,) = parse(patch)
    shifted = texts(above, True) + a
    result, placements = apply_hunks("/f", shifted, file_patch.hunks)
    assert result == texts(above, True) + b
    assert all(p.offset == len(above) for p in placements if p.offset is not None)


def v4a_from(a: str, b: str) -> str:
    """A ``*** Begin Patch`` update made from difflib's opcodes: hunks with three lines of
    context and bare ``@@`` separators, no line numbers."""
    body = []
    for group in difflib.SequenceMatcher(None, a.splitlines(), b.splitlines()).get_grouped_opcodes(
        3
    ):
        body.append("@@")
        x, y = a.splitlines(), b.splitlines()
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                body += [" " + line for line in x[i1:i2]]
                continue
            body += ["-" + line for line in x[i1:i2]]
            body += ["+" + line for line in y[j1:j2]]
    return "*** Begin Patch\n*** Update File: f\n" + "\n".join(body) + "\n*** End Patch\n"


@settings(max_examples=200, deadline=None)
@given(
    old=st.lists(st.integers(0, 60), unique=True, max_size=30),
    edits=st.lists(st.tuples(st.integers(0, 29), st.integers(100, 999)), max_size=6),
)
def test_a_begin_patch_update_turns_a_into_b(old: list[int], edits: list[tuple[int, int]]) -> None:
    """Unique lines (the format has no line numbers: with repeated context only an ``@@``
    anchor can say which copy is meant)."""
    lines = [f"line {n}" for n in old]
    new = list(lines)
    for at, value in edits:
        if new and value % 3 == 0:
            del new[at % len(new)]
        elif new and value % 3 == 1:
            new[at % len(new)] = f"changed {value}"
        else:
            new.insert(at % (len(new) + 1), f"added {value}")
    a, b = texts(lines, True), texts(new, True)
    if a == b:
        return
    assert apply_text(v4a_from(a, b), a) == b


def test_a_hunk_that_does_not_apply_names_the_lines_and_the_closest() -> None:
    patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2\n"
    with pytest.raises(HunkFailed) as failed:
        apply_text(patch, "x\ndef  main():\n    return 7\n")
    assert failed.value.hunk == 1 and failed.value.expected == ["def main():", "    return 1"]
    assert failed.value.closest_line == 2
    assert "Nothing was changed" in failed.value.message


@pytest.mark.parametrize(
    ("file", "match"),
    [
        ("def f():   \n    return 1  \n", "trailing_whitespace"),
        ("def f():\n        return 1\n", "whitespace"),
        ("def f(\u201cq\u201d):\n    return 1\n", "punctuation"),
    ],
)
def test_forgiving_passes_find_hunks_and_say_which(file: str, match: str) -> None:
    header = 'def f("q"):' if match == "punctuation" else "def f():"
    patch = f"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n {header}\n-    return 1\n+    return 2\n"
    (file_patch,) = parse(patch)
    result, (placement,) = apply_hunks("/f", file, file_patch.hunks)
    assert placement.match == match
    assert result.splitlines()[0] == file.splitlines()[0]  # context keeps the file's own text
    assert result.splitlines()[1] == "    return 2"


def test_crlf_files_stay_crlf() -> None:
    patch = "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n one\n-two\n+TWO\n+three\n"
    assert apply_text(patch, "one\r\ntwo\r\n") == "one\r\nTWO\r\nthree\r\n"


def test_anchors_choose_among_repeated_lines() -> None:
    text = "def a():\n    return 1\n\ndef b():\n    return 1\n"
    patch = (
        "*** Begin Patch\n*** Update File: f\n@@ def b():\n-    return 1\n+    return 2\n"
        "*** End Patch\n"
    )
    assert apply_text(patch, text) == "def a():\n    return 1\n\ndef b():\n    return 2\n"


def test_end_of_file_matches_at_the_end() -> None:
    text = "x\nend\nx\nend\n"
    patch = (
        "*** Begin Patch\n*** Update File: f\n@@\n x\n-end\n+END\n*** End of File\n*** End Patch"
    )
    assert apply_text(patch, text) == "x\nend\nx\nEND\n"


def test_miscounted_hunk_headers_are_read_by_their_lines() -> None:
    """Models often get the counts wrong; the lines decide."""
    patch = "--- a/f\n+++ b/f\n@@ -1,9 +1,1 @@\n a\n-b\n+B\n c\n"
    assert apply_text(patch, "a\nb\nc\n") == "a\nB\nc\n"


def test_fenced_and_git_headers_and_timestamps() -> None:
    patch = (
        "```diff\ndiff --git a/f b/f\nindex 1..2 100644\n--- a/f\t2024-01-01\n+++ b/f\t2024-01-02\n"
        "@@ -1 +1 @@\n-a\n+b\n```\n"
    )
    assert apply_text(patch, "a\n") == "b\n"


@pytest.mark.parametrize(
    ("patch", "line", "says"),
    [
        ("", 1, "empty"),
        ("just some words\n", 1, "no file changes found"),
        ("@@ -1 +1 @@\n-a\n+b\n", 1, "hunk before any"),
        ("--- a/f\n+++ b/f\n@@ nonsense @@\n", 3, "not a hunk header"),
        ("*** Begin Patch\n*** Frobnicate: f\n*** End Patch\n", 2, "expected"),
        ("*** Begin Patch\n*** Update File: f\n@@\nno prefix\n*** End Patch\n", 4, "must start"),
        ("*** Begin Patch\n*** Add File: f\nnot plus\n", 3, "must start with '+'"),
        ("*** Begin Patch\n*** Update File: f\n*** End Patch\n", 2, "no hunks"),
        ("```diff\n--- a/f\n+++ b/f\n", 1, "never closed"),
        ("--- a/f\n+++ b/f\nGIT binary patch\n", 3, "binary"),
    ],
)
def test_what_is_not_a_patch_is_named_by_line(patch: str, line: int, says: str) -> None:
    with pytest.raises(PatchSyntaxError) as exc:
        parse(patch)
    assert exc.value.line == line and says in str(exc.value)


# --- the tool -------------------------------------------------------------------------------------


@pytest.fixture
def toolset(ws: agentfs.Workspace) -> Toolset:
    ws.write("/src/app.py", "import os\n\ndef main():\n    return 1\n", parents=True)
    ws.write("/src/util.py", "def helper():\n    return 2\n")
    ws.write("/README.md", "# app\n")
    return Toolset(ws)


def everything(ws: agentfs.Workspace) -> dict[str, Any]:
    """Every file and directory with its bytes, and every version: what must not change."""
    files: dict[str, bytes | None] = {}
    for top, dirs, names in ws.walk("/"):
        base = top.rstrip("/")
        files.update({f"{base}/{d}": None for d in dirs})
        files.update({f"{base}/{n}": ws.read(f"{base}/{n}", track=False) for n in names})
    versions = {p: [v.n for v in ws.history(p)] for p, data in files.items() if data is not None}
    return {"files": files, "versions": versions}


HEADER = "--- a/src/app.py\n+++ b/src/app.py\n"
BEGIN_UTIL = "*** Begin Patch\n*** Update File: src/util.py\n"
MULTI = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    return 1
+    return 10
*** Add File: src/new.py
+print("new")
*** Delete File: README.md
*** Update File: src/util.py
*** Move to: lib/util.py
@@
 def helper():
-    return 2
+    return 20
*** End Patch
"""


def test_a_patch_over_many_files(toolset: Toolset, ws: agentfs.Workspace) -> None:
    result = toolset.call("apply_patch", {"patch": MULTI})
    assert "error" not in result, result
    assert [(f["path"], f["action"]) for f in result["files"]] == [
        ("/src/app.py", "updated"),
        ("/src/new.py", "added"),
        ("/README.md", "deleted"),
        ("/src/util.py", "moved"),
    ]
    assert ws.read("/src/app.py").endswith(b"return 10\n")
    assert ws.read("/src/new.py") == b'print("new")\n'
    assert not ws.exists("/README.md") and not ws.exists("/src/util.py")
    assert ws.read("/lib/util.py") == b"def helper():\n    return 20\n"
    toolset.flush()  # the call's log row, staged with the change, into tool_calls
    call = ws.tool_calls.writer("/src/app.py", ws.version("/src/app.py").n)
    assert call is not None and call.name == "apply_patch"


def test_dry_run_shows_the_diff_and_writes_nothing(toolset: Toolset, ws: agentfs.Workspace) -> None:
    before = everything(ws)
    result = toolset.call("apply_patch", {"patch": MULTI, "dry_run": True})
    assert result["dry_run"] and "+    return 10" in result["diff"]
    assert everything(ws) == before


@pytest.mark.parametrize(
    ("tail", "code"),
    [
        ("*** Update File: src/util.py\n@@\n-    return 999\n+    return 0\n", "patch_failed"),
        ("*** Add File: src/app.py\n+x\n", "exists"),
        ("*** Update File: nope.py\n@@\n-a\n+b\n", "not_found"),
        ("*** Delete File: src\n", "is_directory"),
        ("*** Update File: ../../etc/passwd\n@@\n-a\n+b\n", "not_found"),  # /etc/passwd, inside
        ("*** Add File: a\x00b\n+x\n", "invalid_path"),
        (f"*** Add File: {'n' * 300}\n+x\n", "invalid_path"),
    ],
)
def test_one_bad_file_and_nothing_changes(
    toolset: Toolset, ws: agentfs.Workspace, tail: str, code: str
) -> None:
    """The failing file comes after three good ones: still nothing is written."""
    good = MULTI.replace("*** End Patch\n", "")
    good = good[: good.index("*** Update File: src/util.py")]
    before = everything(ws)
    result = toolset.call("apply_patch", {"patch": good + tail + "*** End Patch\n"})
    assert result["error"]["code"] == code, result
    assert everything(ws) == before


def test_patch_failed_carries_the_hunk(toolset: Toolset) -> None:
    patch = HEADER + "@@ -3,2 +3,2 @@\n def main():\n-    return 5\n+    return 6\n"
    error = toolset.call("apply_patch", {"patch": patch})["error"]
    assert error["code"] == "patch_failed"
    assert error["details"]["path"] == "/src/app.py" and error["details"]["hunk"] == 1
    assert error["details"]["expected"] == ["def main():", "    return 5"]
    assert "    return 1" in error["message"]  # the closest lines, to copy


def test_offsets_and_passes_are_reported(toolset: Toolset, ws: agentfs.Workspace) -> None:
    ws.write("/src/app.py", "# header\n# more\nimport os\n\ndef main():   \n    return 1\n")
    patch = HEADER + "@@ -3,2 +3,2 @@\n def main():\n-    return 1\n+    return 3\n"
    result = toolset.call("apply_patch", {"patch": patch})
    (hunk,) = result["files"][0]["hunks"]
    assert (hunk["line"], hunk["offset"], hunk["match"]) == (5, 2, "trailing_whitespace")
    assert (
        ws.read("/src/app.py") == b"# header\n# more\nimport os\n\ndef main():   \n    return 3\n"
    )


def test_a_unified_deletion_must_match_the_file(toolset: Toolset, ws: agentfs.Workspace) -> None:
    wrong = "--- a/README.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# other\n"
    assert toolset.call("apply_patch", {"patch": wrong})["error"]["code"] == "patch_failed"
    right = "--- a/README.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# app\n"
    assert "error" not in toolset.call("apply_patch", {"patch": right})
    assert not ws.exists("/README.md")


def test_a_git_rename_with_changes(toolset: Toolset, ws: agentfs.Workspace) -> None:
    patch = (
        "diff --git a/src/util.py b/src/helpers.py\nsimilarity index 80%\n"
        "rename from src/util.py\nrename to src/helpers.py\n"
        "--- a/src/util.py\n+++ b/src/helpers.py\n"
        "@@ -1,2 +1,2 @@\n def helper():\n-    return 2\n+    return 3\n"
    )
    result = toolset.call("apply_patch", {"patch": patch})
    assert result["files"][0]["move_to"] == "/src/helpers.py"
    assert ws.read("/src/helpers.py") == b"def helper():\n    return 3\n"
    assert not ws.exists("/src/util.py")


def test_the_same_file_twice_in_one_patch(toolset: Toolset, ws: agentfs.Workspace) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/util.py\n@@\n-    return 2\n+    return 3\n"
        "*** Update File: src/util.py\n@@\n-    return 3\n+    return 4\n*** End Patch\n"
    )
    assert "error" not in toolset.call("apply_patch", {"patch": patch})
    assert ws.read("/src/util.py") == b"def helper():\n    return 4\n"


def test_policy_refusals_change_nothing(ws: agentfs.Workspace) -> None:
    ws.write("/secrets/key", "k\n", parents=True)
    ws.write("/ok.txt", "a\n")
    before = everything(ws)
    denied = Toolset(ws, policy=Policy.model_validate({"defaults": {"deny": ["/secrets/**"]}}))
    patch = (
        "*** Begin Patch\n*** Update File: ok.txt\n@@\n-a\n+b\n"
        "*** Delete File: secrets/key\n*** End Patch\n"
    )
    assert denied.call("apply_patch", {"patch": patch})["error"]["code"] == "denied"
    small = Toolset(ws, policy=Policy.model_validate({"limits": {"max_write_bytes": 10}}))
    big = "*** Begin Patch\n*** Add File: big.txt\n" + "+0123456789\n" * 3 + "*** End Patch\n"
    assert small.call("apply_patch", {"patch": big})["error"]["code"] == "too_large"
    read_only = Toolset(ws, policy=Policy(read_only=True))
    assert "apply_patch" not in {t.name for t in read_only.tools()}
    assert everything(ws) == before


def test_expected_versions_guard_every_file(toolset: Toolset, ws: agentfs.Workspace) -> None:
    seen = ws.version("/src/util.py").n
    ws.write("/src/util.py", "def helper():\n    return 2\n# someone else\n")
    before = everything(ws)
    patch = BEGIN_UTIL + "@@\n-    return 2\n+    return 3\n*** End Patch\n"
    result = toolset.call(
        "apply_patch", {"patch": patch, "expected_versions": {"src/util.py": seen}}
    )
    assert result["error"]["code"] == "stale_read"
    assert everything(ws) == before


# --- a patch cut off ------------------------------------------------------------------------------

#: Lines of the files a cut-off patch changes: few, so a cut hunk's lines could still match.
CUT_LINES = st.lists(st.sampled_from(["a", "b", "", "-- x", "c"]), min_size=1, max_size=8)


@st.composite
def changed_files(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    """One to three files, each with an old and a different new text (whole lines)."""
    count = draw(st.integers(1, 3))
    files = []
    for k in range(count):
        old = draw(CUT_LINES)
        new = draw(CUT_LINES.filter(lambda lines, old=old: lines != old))
        files.append((f"f{k}.txt", texts(old, True), texts(new, True)))
    return files


def one_hunk_body(old: str, new: str) -> list[str]:
    """The ``' '``/``'-'``/``'+'`` lines turning ``old`` into ``new``, as one hunk."""
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=100)
    return [line for line in diff if line[:1] in " -+" and line[:3] not in ("---", "+++")]


def unified_patch(files: list[tuple[str, str, str]], git: bool) -> tuple[list[str], list[int]]:
    """The patch's lines, and after which line each file's section is whole."""
    lines: list[str] = []
    ends = []
    for name, old, new in files:
        if git:
            lines.append(f"diff --git a/{name} b/{name}")
        lines += [f"--- a/{name}", f"+++ b/{name}"]
        diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=100)
        lines += list(diff)[2:]
        ends.append(len(lines))
    return lines, ends


def v4a_patch(files: list[tuple[str, str, str]]) -> list[str]:
    lines = ["*** Begin Patch"]
    for name, old, new in files:
        lines += [f"*** Update File: {name}", "@@", *one_hunk_body(old, new)]
    return [*lines, "*** End Patch"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=changed_files(), git=st.booleans())
def test_a_cut_off_patch_applies_nothing_or_whole_files(
    ws: agentfs.Workspace, files: list[tuple[str, str, str]], git: bool
) -> None:
    """Cut a patch after any line: a unified diff is refused as invalid_argument and changes
    nothing, unless the cut falls exactly between whole files (a well-formed shorter patch,
    which has no end marker to tell it by: then exactly those files change); the
    ``*** Begin Patch`` format, which ends with ``*** End Patch``, is refused at every cut."""
    toolset = Toolset(ws)
    for name, old, _new in files:
        ws.write(f"/{name}", old)
    before = everything(ws)
    lines, ends = unified_patch(files, git)
    for cut in range(1, len(lines)):
        result = toolset.call("apply_patch", {"patch": "\n".join(lines[:cut]) + "\n"})
        if cut not in ends:
            assert result["error"]["code"] == "invalid_argument", (cut, result)
            assert everything(ws) == before
            continue
        assert "error" not in result, result
        whole = ends.index(cut) + 1
        for k, (name, old, new) in enumerate(files):
            assert ws.read(f"/{name}") == (new if k < whole else old).encode()
            ws.write(f"/{name}", old)
        before = everything(ws)
    lines = v4a_patch(files)
    for cut in range(1, len(lines)):
        result = toolset.call("apply_patch", {"patch": "\n".join(lines[:cut]) + "\n"})
        assert result["error"]["code"] == "invalid_argument", (cut, result)
        assert everything(ws) == before


@pytest.mark.parametrize(
    ("patch", "line", "says"),
    [
        ("--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n", 3, "'@@ -1,5 +1,5 @@' says 5 old"),
        ("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/g b/g\n", 6, "not followed"),
        ("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/g\n", 6, "without its '+++'"),
        ("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/g\n", 6, "ends at g's"),
        ("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n", 5, "without '*** End Patch'"),
    ],
)
def test_a_cut_off_patch_names_where_it_stops(patch: str, line: int, says: str) -> None:
    with pytest.raises(PatchSyntaxError, match="cut off") as exc:
        parse(patch)
    assert exc.value.line == line and says in str(exc.value)
