"""``Workspace.grep`` against the real ripgrep on the same tree exported to disk: the same files
and the same numbered lines, for literals, regexes, case folding, context and file filters.

ripgrep runs as ``rg --hidden --no-ignore`` (our grep searches hidden files and ignores no
file) with ``--sort path``. Both engines read RE2's syntax (rg's Rust regex follows it), so
patterns include RE2-only syntax Python's ``re`` lacks: POSIX classes, ``\\p`` classes, ``(?U)``.
"""

from __future__ import annotations

import errno
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import re2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.search.pattern import compile_pattern
from agentfs.transfer import export_tree

RG = shutil.which("rg")
#: Search as our grep does (hidden files, nothing ignored), sorted, in the layout we print.
RG_LAYOUT = (
    *("--hidden", "--no-ignore", "--sort", "path"),
    *("--no-heading", "-n", "--with-filename", "--color", "never"),
)
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (Debian: ripgrep) is not installed")

FILES = {
    "/src/app.py": "import os\n\ndef main():\n    print('Hello')\n    return os.getcwd()\n",
    "/src/util.py": "def helper(x):\n    # TODO: faster\n    return x * 2\n",
    "/src/.hidden.py": "def secret():\n    pass\n",
    "/docs/readme.md": "# Title\nhello world\nHELLO again\n",
    "/docs/notes.txt": "no newline at the end",
    "/data/blob.bin": "binary\0data def main",
}


@pytest.fixture
def corpus(ws: agentfs.Workspace) -> agentfs.Workspace:
    for path, text in FILES.items():
        ws.write(path, text, parents=True)
    return ws


def rg(root: Path, pattern: str, *flags: str) -> list[str]:
    """What ``rg`` prints for ``pattern`` under ``root``, paths made workspace-absolute
    (``./a`` -> ``/a``); ``--`` separators are kept."""
    proc = subprocess.run(
        [RG or "rg", *RG_LAYOUT, *flags, "-e", pattern, "."],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return [line[1:] if line.startswith(".") else line for line in proc.stdout.splitlines()]


def ours(ws: agentfs.Workspace, pattern: str, **kw: object) -> list[str]:
    result = ws.grep(pattern, **kw)  # type: ignore[arg-type]
    return [f"{ln.path}:{ln.line}:{ln.text}" for ln in result.lines if ln.is_match]


@pytest.fixture
def exported(corpus: agentfs.Workspace, tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    export_tree(corpus, "/", root)
    return root


@needs_rg
@pytest.mark.parametrize(
    ("pattern", "kw", "flags"),
    [
        ("def", {}, ()),
        (r"def \w+\(", {}, ()),
        ("hello", {"ignore_case": True}, ("-i",)),
        ("a.b(", {"fixed_strings": True}, ("-F",)),
        ("return", {"glob": "**/*.py"}, ("--glob", "*.py")),
        ("^#", {}, ()),
        ("end$", {}, ()),
        ("nothing-matches-this", {}, ()),
        ("[[:upper:]]{2}", {}, ()),
        (r"\pL+\(", {}, ()),
        ("(?U)d.+e", {}, ()),
        (r"[[:^alpha:]]{2}", {"ignore_case": True}, ("-i",)),
        (r"end\z", {}, ()),
    ],
)
def test_matches_are_ripgreps(
    corpus: agentfs.Workspace, exported: Path, pattern: str, kw: dict, flags: tuple[str, ...]
) -> None:
    assert ours(corpus, pattern, **kw) == rg(exported, pattern, *flags)


def test_binary_files_are_skipped_and_said(corpus: agentfs.Workspace) -> None:
    result = corpus.grep("def main")
    assert result.files == ["/src/app.py"]
    assert result.skipped == ["/data/blob.bin"]


def test_files_and_count_outputs(corpus: agentfs.Workspace) -> None:
    assert corpus.grep("def", output="files").files == [
        "/src/.hidden.py",
        "/src/app.py",
        "/src/util.py",
    ]
    assert corpus.grep("return", output="count").counts == {"/src/app.py": 1, "/src/util.py": 1}


def test_context_lines_surround_matches(corpus: agentfs.Workspace) -> None:
    lines = corpus.grep("TODO", "/src/util.py", before=1, after=1).lines
    assert [(ln.line, ln.is_match) for ln in lines] == [(1, False), (2, True), (3, False)]


@needs_rg
@pytest.mark.parametrize("flags", [("-C", "1"), ("-A", "2"), ()], ids=["-C 1", "-A 2", "none"])
def test_cli_output_is_ripgreps(
    corpus: agentfs.Workspace, exported: Path, flags: tuple[str, ...]
) -> None:
    """The CLI prints what ``rg`` prints: ``--`` between groups only when context was asked
    for (it printed one between any two distant matches once)."""
    from click.testing import CliRunner

    from agentfs.cli import cli

    ws_path = corpus.path
    result = CliRunner().invoke(cli, ["grep", str(ws_path), "def", *flags])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == rg(exported, "def", *flags)


def test_multiline_matches_report_every_line_they_span(corpus: agentfs.Workspace) -> None:
    lines = corpus.grep(r"main\(\):\n\s+print", multiline=True).lines
    assert [(ln.path, ln.line) for ln in lines] == [("/src/app.py", 3), ("/src/app.py", 4)]


def test_max_results_stops_early(corpus: agentfs.Workspace) -> None:
    result = corpus.grep("def", max_results=2)
    assert (result.matches, result.truncated) == (2, True)
    assert corpus.grep("def", max_results=0).lines == []


def test_a_path_prefix_limits_the_search(corpus: agentfs.Workspace) -> None:
    assert corpus.grep("hello", "/docs", ignore_case=True).files == ["/docs/readme.md"]
    assert corpus.grep("def", "/docs").files == []


def test_deleted_and_renamed_files_are_never_returned(corpus: agentfs.Workspace) -> None:
    corpus.remove("/src/util.py")
    corpus.rename("/src/app.py", "/src/main.py")
    assert corpus.grep("def", output="files").files == ["/src/.hidden.py", "/src/main.py"]


def test_grep_is_not_a_tracked_read(corpus: agentfs.Workspace) -> None:
    corpus.thread = "t"
    corpus.grep("def")
    assert corpus.reads_log() == []


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("(", "missing )"),
        ("a{2,1}", "invalid repetition size"),
        (r"(a)\1", "backreferences (\\1) are not supported"),
        ("foo(?=bar)", "lookahead ((?=...) is not supported"),
        ("(?<!x)y", "lookbehind ((?<!...) is not supported"),
        (r"end\Z", "\\Z is written \\z"),
        ("a{1001}", "invalid repetition size"),
    ],
)
def test_a_bad_regex_is_refused_saying_why(corpus: agentfs.Workspace, bad: str, says: str) -> None:
    with pytest.raises(OSError) as exc:
        corpus.grep(bad)
    assert exc.value.errno == errno.EINVAL
    assert says in str(exc.value) and exc.value.filename == bad


@pytest.mark.parametrize("multiline", [False, True])
@pytest.mark.parametrize(
    "pattern", ["(a+)+$", "(a|aa)+$", "(a*)*b$", "(x+x+)+y", "^(a|a?)+$", r"(\w+\s?)*$"]
)
def test_no_pattern_hangs(ws: agentfs.Workspace, pattern: str, multiline: bool) -> None:
    """Patterns that take Python's backtracking ``re`` exponential time (30 a's and a b: 2^30
    steps) answer at once: RE2 is linear in the text. The alarm fails the test instead of
    hanging the suite should that ever regress."""
    line = "a" * 30 + "b"
    ws.write("/evil.txt", f"{line}\n{'x' * 40}\n{line}")
    previous = signal.signal(signal.SIGALRM, _too_slow)
    signal.alarm(10)
    try:
        result = ws.grep(pattern, multiline=multiline)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    if not multiline:
        lines = ws.read_text("/evil.txt").split("\n")
        expected = [i + 1 for i, line in enumerate(lines) if re2.search(pattern, line)]
        assert [ln.line for ln in result.lines] == expected


def _too_slow(signum: int, frame: object) -> None:
    raise TimeoutError("grep ran for more than 10 s")


@pytest.mark.parametrize(
    "pattern",
    ["[[:alpha:]]ine", "[^[:space:]]ne", "x{,2}line", r"\Qa.b\E", r"\pLine", "(?i-s:line)"],
)
def test_syntax_python_reads_differently_is_not_narrowed(pattern: str) -> None:
    """Narrowing reads the pattern with Python's parser, which reads ``[[:alpha:]]ine`` as a
    class and the literal ``]ine``; such patterns must get no trigram query at all."""
    compiled = compile_pattern(pattern, ignore_case=False, fixed_strings=False, multiline=False)
    assert compiled.trigrams is None


def test_patterns_with_rg_syntax_find_their_lines(ws: agentfs.Workspace) -> None:
    ws.write("/a.txt", "line one\n1ine two\nnothing\n")
    ws.write("/b.txt", "a.b\naxb\n")
    assert ours(ws, "[[:alpha:]]ine") == ["/a.txt:1:line one"]
    assert ours(ws, "[^[:space:]]ine") == ["/a.txt:1:line one", "/a.txt:2:1ine two"]
    assert ours(ws, r"\Qa.b\E") == ["/b.txt:1:a.b"]


def test_bad_options_are_refused(corpus: agentfs.Workspace) -> None:
    with pytest.raises(OSError):
        corpus.grep("x", output="lines")  # type: ignore[arg-type]
    with pytest.raises(OSError):
        corpus.grep("x", before=-1)
    with pytest.raises(FileNotFoundError):
        corpus.grep("x", "/missing")


# --- random trees and patterns against ripgrep ----------------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "Gamma", "def", "x = 1", "TODO", "", "a.b", "end"])
PATTERNS = st.sampled_from(
    [
        *("alpha", "beta|Gamma", r"\bdef\b", "^x", "1$", "a\\.b", "[A-Z]", "T.DO", r"\d", "z"),
        *("[[:alpha:]]{4}", r"\p{Lu}", "(?U)a.+a", r"\Aend", r"a\z", "(?i)gamma|TODO"),
    ]
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@needs_rg
@given(
    files=st.dictionaries(
        st.sampled_from(["/a.txt", "/d/b.py", "/d/e/c.md", "/.h"]),
        st.lists(WORDS, max_size=6).map("\n".join),
        min_size=1,
    ),
    pattern=PATTERNS,
    ignore_case=st.booleans(),
)
def test_random_trees_match_ripgrep(
    tmp_path: Path, files: dict[str, str], pattern: str, ignore_case: bool
) -> None:
    base = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    with agentfs.open(base.with_suffix(".db")) as ws:
        for path, text in files.items():
            ws.write(path, text, parents=True)
        export_tree(ws, "/", base)
        got = ours(ws, pattern, ignore_case=ignore_case)
    assert got == rg(base, pattern, *(["-i"] if ignore_case else []))
