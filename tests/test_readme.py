"""README.md's examples, run as a new user runs them, with their output compared with what the
README shows: the tours cannot drift from the code.

The conventions README.md follows, which this file reads:

- A ```console block holds commands and what they print. A line starting with ``$ `` is a
  command; the lines after it that start with ``> `` (the shell's second prompt) continue it;
  the lines up to the next command are its output, stdout and stderr together as a terminal
  shows them. A command must exit 0, unless its comment says ``# exit status N``.
- A ```python block is a script. Every ``print(...)`` in it says what it prints in a comment,
  at the end of its line or on the comment lines right after it; output of several lines (a
  loop) or one line wrapped over several comment lines is compared joined by spaces, and
  ``...`` in a comment stands for any text.
- ``<!-- not run: REASON -->`` on the line before a block keeps this test away from it (for
  a block that needs the network, an API key or a program the tests do not install; none
  does today). ```sh blocks show commands without output and are not run.

How they run: each chain in CHAINS is one test (so they run side by side), which runs the
blocks of its sections in the README's order in one fresh temporary directory. Each command
runs with ``bash -c`` in a process of its own, with a clean environment: PATH is .venv/bin
then the system's, HOME and XDG_CONFIG_HOME are in the temporary directory, LANG is C.UTF-8,
PYTHONUNBUFFERED=1 interleaves stdout and stderr as a terminal does, and nothing comes from
the environment the tests run in (no TURSO_*). A python block runs as ``python3`` (the
venv's) in the same directory, its ``print`` calls recorded by line. The sync section gets a
real sync server (tests/sync/conftest.py) on a free port, whose URL takes the place of the
README's ``http://127.0.0.1:8080`` in the commands, and the other way round in the output.
The blocks that mount (``agentfs mount``, ``agentfs exec``, ``.run(``) run only where
``fuse_available()`` says a mount can be made; elsewhere the rest runs, and then the test is
skipped with the reason. "Finding things" searches three files of the venv's Python 3.11 standard
library: another Python's would move their line numbers and scores.

Before the comparison, the expected and the actual output (of commands and of prints alike)
both go through MASKS, which hide what differs from run to run: the temporary directory
(``<tmp>``); dates and times (``<time>``); nanosecond timestamps (``<ns>``); uid and gid in
``stat --json`` (the user the tests run as); the database's size in pages
(``database_bytes``, which every change of the schema moves); and in the sync section the
replica's commit ids and its traffic. Lines are compared without their trailing whitespace.

To see what a section's commands print now, unmasked, to update README.md:
``.venv/bin/python tests/test_readme.py cli`` (or ``python``, ``sync``).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from textwrap import dedent

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
VENV_BIN = ROOT / ".venv" / "bin"

#: The README's sections (``## `` and ``### `` headings) run together, each list in one
#: directory.
CHAINS: dict[str, tuple[str, ...]] = {
    "cli": ("A 5-minute tour of the CLI",),
    "finding": ("Finding things",),
    "python": ("A 5-minute tour of the Python API",),
    "sync": ("Syncing through Turso",),
    "overlay": ("Working on a project without touching it",),
}
#: The sync server's address as the README writes it.
README_REMOTE = "http://127.0.0.1:8080"
#: What a mount needs: the blocks holding one of these run only where FUSE works.
MOUNTS = re.compile(r"\bagentfs (mount|exec|run)\b|\.run\(")
#: (pattern, replacement): what differs from run to run, hidden on both sides.
MASKS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"), "<time>"),
    (re.compile(r"\b\d{19}\b"), "<ns>"),
    (re.compile(r'"(uid|gid)": \d+'), r'"\1": <id>'),
    (re.compile(r"^(database_bytes: +)\d+$", re.M), r"\1<bytes>"),
    (re.compile(r"\b[0-9a-f]+/[0-9]{12}\b"), "<commit>"),
    (re.compile(r"(sent|received) \d+(\.\d+)? (B|KiB|MiB)"), r"\1 <size>"),
]


@dataclass
class Command:
    line: int  # README's line of the ``$ ``
    text: str
    output: list[str]
    status: int


@dataclass
class Block:
    line: int  # README's line of the block's first line of content
    language: str
    section: str
    text: str
    not_run: str | None  # the reason, from <!-- not run: ... -->
    commands: list[Command] = field(default_factory=list)

    @property
    def mounts(self) -> bool:
        return MOUNTS.search(self.text) is not None


def parse_readme(text: str) -> list[Block]:
    """Every fenced block of the README, with its section and, for console, its commands."""
    blocks: list[Block] = []
    lines = text.splitlines()
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(("## ", "### ")):
            section = line.lstrip("#").strip()
        fence = re.match(r"^```(\S*)\s*$", line)
        if not fence:
            i += 1
            continue
        start = i + 1
        end = start
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        skip = re.fullmatch(r"<!-- not run: (.+?) -->", before.strip())
        block = Block(
            line=start + 1,
            language=fence.group(1),
            section=section,
            text="\n".join(lines[start:end]),
            not_run=skip.group(1) if skip else None,
        )
        if block.language == "console":
            block.commands = parse_console(lines[start:end], start + 1)
        blocks.append(block)
        i = end + 1
    return blocks


def parse_console(lines: list[str], first: int) -> list[Command]:
    commands: list[Command] = []
    for n, line in enumerate(lines, first):
        if line.startswith("$ "):
            status = re.search(r"#.*\bexit status (\d+)\s*$", line)
            commands.append(Command(n, line[2:], [], int(status.group(1)) if status else 0))
        elif not commands:
            raise AssertionError(f"README.md:{n}: a console block starts with output: {line!r}")
        elif line.startswith("> ") and not commands[-1].output:
            commands[-1].text += "\n" + line[2:]
        else:
            commands[-1].output.append(line)
    return commands


def mask(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp), "<tmp>")
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.splitlines())


def workplace(tmp: Path) -> tuple[Path, dict[str, str]]:
    """The empty directory the blocks run in, and what a new user's shell would have in its
    environment (nothing of the environment the tests run in)."""
    work, home = tmp / "work", tmp / "home"
    work.mkdir()
    home.mkdir()
    env = {
        "PATH": f"{VENV_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONUNBUFFERED": "1",
    }
    return work, env


def shell(command: str, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """``bash -c COMMAND``: its exit status, and its stdout and stderr as one text."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=120,
    )
    return done.returncode, done.stdout.decode("utf-8", "replace")


def run_console(
    block: Block, tmp: Path, work: Path, env: dict[str, str], remote: str | None
) -> None:
    for command in block.commands:
        text = command.text if remote is None else command.text.replace(README_REMOTE, remote)
        status, printed = shell(text, work, env)
        if remote is not None:
            printed = printed.replace(remote, README_REMOTE)
        expected = mask("\n".join(command.output), tmp)
        actual = mask(printed, tmp)
        assert (actual, status) == (expected, command.status), (
            f"README.md:{command.line}: $ {command.text}\n"
            f"--- expected (exit status {command.status}, masked)\n{expected}\n"
            f"--- actual (exit status {status}, masked)\n{actual}"
        )


# --- python blocks ------------------------------------------------------------------------------

#: Runs a block as README.md's lines (so a traceback names them), with ``print`` recording what
#: each call on a README line printed; writes [[line, text], ...] as JSON to argv[2].
DRIVER = r"""
import builtins, io, json, sys
source, out = open(sys.argv[1]).read(), sys.argv[2]
records = []
real_print = builtins.print
def recording_print(*args, sep=" ", end="\n", file=None, flush=False):
    frame = sys._getframe(1)
    if file is None and frame.f_code.co_filename == "README.md":
        text = io.StringIO()
        real_print(*args, sep=sep, end=end, file=text)
        records.append([frame.f_lineno, text.getvalue()])
    real_print(*args, sep=sep, end=end, file=file, flush=flush)
builtins.print = recording_print
try:
    exec(compile(source, "README.md", "exec"), {"__name__": "__main__"})
finally:
    with open(out, "w") as f:
        json.dump(records, f)
"""


@dataclass
class Expectation:
    first: int  # README lines of the print call
    last: int
    text: str  # what its comment says it prints


def expectations(block: Block) -> list[Expectation]:
    """Each print call of a python block and what its comment says it prints."""
    offset = block.line - 1
    comments: dict[int, str] = {}  # line in the block -> its comment
    code: set[int] = set()  # lines in the block with code
    for token in tokenize.generate_tokens(StringIO(block.text + "\n").readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string[1:].strip()
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code.add(token.start[0])
    found = []
    for node in ast.walk(ast.parse(block.text)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print"):
            continue
        last = node.end_lineno or node.lineno
        if last in comments:  # print(x)  # what it prints
            said = [comments[last]]
        else:  # print(x), then comment lines saying what it prints
            said, following = [], last + 1
            while following in comments and following not in code:
                said.append(comments[following])
                following += 1
        assert said, f"README.md:{offset + last}: a print without a comment saying what it prints"
        found.append(Expectation(offset + node.lineno, offset + last, " ".join(said)))
    return sorted(found, key=lambda e: e.first)


def python_prints(
    block: Block, tmp: Path, work: Path, env: dict[str, str]
) -> list[tuple[int, str]]:
    """Run a python block as ``python3`` in ``work``: what each print printed, by README line."""
    script, out = tmp / "block.py", tmp / "prints.json"
    script.write_text("\n" * (block.line - 1) + block.text + "\n", encoding="utf-8")
    done = subprocess.run(
        ["python3", "-c", DRIVER, str(script), str(out)],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"README.md:{block.line}: the block failed\n{done.stderr}"
    return [(line, text) for line, text in json.loads(out.read_text(encoding="utf-8"))]


def run_python(block: Block, tmp: Path, work: Path, env: dict[str, str]) -> None:
    records = python_prints(block, tmp, work, env)
    for want in expectations(block):
        printed = [
            text.removesuffix("\n") for line, text in records if want.first <= line <= want.last
        ]
        expected = mask(want.text, tmp)
        actual = mask(" ".join(printed), tmp)
        pattern = ".*".join(re.escape(part) for part in expected.split("..."))
        assert re.fullmatch(pattern, actual, re.S), (
            f"README.md:{want.first}: the print there\n"
            f"--- expected (masked; ... stands for any text)\n{expected}\n"
            f"--- actual (masked)\n{actual}"
        )


# --- the tests ----------------------------------------------------------------------------------


def blocks_of(chain: str) -> list[Block]:
    sections = CHAINS[chain]
    return [
        b
        for b in parse_readme(README.read_text(encoding="utf-8"))
        if b.section in sections and b.language in ("console", "python") and b.not_run is None
    ]


@contextmanager
def server_for(chain: str, tmp: Path) -> Iterator[str | None]:
    """The sync section's server (its URL), or None for a chain that needs none."""
    if chain != "sync":
        yield None
        return
    from tests.sync.conftest import SyncServer

    server = SyncServer(tmp / "server")
    server.start()
    try:
        yield server.url
    finally:
        server.kill()


def unmount_under(tmp: Path) -> None:
    """Lazily unmount whatever a failed block left mounted under ``tmp``."""
    root = os.path.realpath(tmp) + os.sep
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        points = [line.split()[4] for line in table]
    for point in points:
        if point.startswith(root):
            subprocess.run(["fusermount3", "-u", "-z", point], capture_output=True)


#: The CLI tour is the longest test here: it starts before the rest (tests/conftest.py).
SLOW = {"cli"}


@pytest.mark.parametrize(
    "chain", [pytest.param(c, marks=pytest.mark.runs_first) if c in SLOW else c for c in CHAINS]
)
def test_the_readme_runs_as_shown(chain: str, tmp_path: Path) -> None:
    """The chain's blocks in order in a new directory; skipped at the end, with the reason, if
    the blocks that mount could not run (the others have run by then)."""
    from agentfs.mount.exec import fuse_available

    cannot_mount = fuse_available()
    skipped = []
    work, env = workplace(tmp_path)
    with server_for(chain, tmp_path) as remote:
        try:
            for block in blocks_of(chain):
                if block.mounts and cannot_mount:
                    skipped.append(f"README.md:{block.line}")
                elif block.language == "console":
                    run_console(block, tmp_path, work, env, remote)
                else:
                    run_python(block, tmp_path, work, env)
        finally:
            unmount_under(tmp_path)
    if skipped:
        pytest.skip(f"{', '.join(skipped)} not run ({cannot_mount}); the rest ran")


def test_every_block_that_shows_output_is_run() -> None:
    """A console or python block outside CHAINS would never be checked, and a sh block with
    prompts is a console block by another name."""
    sections = {s for chain in CHAINS.values() for s in chain}
    blocks = parse_readme(README.read_text(encoding="utf-8"))
    loose = [
        f"README.md:{b.line} ({b.section})"
        for b in blocks
        if b.language in ("console", "python") and b.not_run is None and b.section not in sections
    ]
    assert loose == []
    prompts = [
        f"README.md:{b.line}"
        for b in blocks
        if b.language in ("sh", "bash", "shell") and re.search(r"^\$ ", b.text, re.M)
    ]
    assert prompts == []
    for chain in CHAINS:
        assert blocks_of(chain), f"no block of {CHAINS[chain]} in README.md"


def test_the_conventions_are_read_as_documented() -> None:
    text = dedent(
        """\
        ## One

        ```console
        $ printf 'a\\nb\\n'
        a
        b
        $ python3 - <<'EOF'     # exit status 3
        > raise SystemExit(3)
        > EOF
        (no output)
        ```

        <!-- not run: needs a server -->
        ```console
        $ curl http://example.com
        ```
        """
    )
    first, second = parse_readme(text)
    assert (first.section, first.language, first.line, first.not_run) == ("One", "console", 4, None)
    assert [(c.line, c.text, c.output, c.status) for c in first.commands] == [
        (4, "printf 'a\\nb\\n'", ["a", "b"], 0),
        (
            7,
            "python3 - <<'EOF'     # exit status 3\nraise SystemExit(3)\nEOF",
            ["(no output)"],
            3,
        ),
    ]
    assert second.not_run == "needs a server"
    block = Block(
        10,
        "python",
        "One",
        "x = 1\nprint(x)  # 1\nfor i in (1, 2):\n    print(i)\n# 1\n# 2\n",
        None,
    )
    assert [(e.first, e.last, e.text) for e in expectations(block)] == [
        (11, 11, "1"),
        (13, 13, "1 2"),
    ]
    assert mask("2026-11-28 12:24:05 <tmp>", Path("/x")) == "<time> <tmp>"


def transcript(chain: str, tmp: Path) -> Iterator[str]:
    """What the chain's blocks print now, unmasked: each command with its exit status and
    output, each python print with its README line."""
    work, env = workplace(tmp)
    with server_for(chain, tmp) as remote:
        try:
            for block in blocks_of(chain):
                yield f"--- README.md:{block.line} ({block.language})"
                if block.language == "python":
                    for line, text in python_prints(block, tmp, work, env):
                        yield f"{line}: {text.rstrip()}"
                    continue
                for command in block.commands:
                    text = command.text
                    if remote is not None:
                        text = text.replace(README_REMOTE, remote)
                    status, printed = shell(text, work, env)
                    if remote is not None:
                        printed = printed.replace(remote, README_REMOTE)
                    yield f"$ {command.text}  [exit status {status}]"
                    yield printed.rstrip("\n")
        finally:
            unmount_under(tmp)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        for shown in transcript(sys.argv[1] if len(sys.argv) > 1 else "cli", Path(scratch)):
            print(shown, flush=True)
