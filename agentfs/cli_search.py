"""The search commands of the CLI: glob (grep and search come with their indexes). Thin like
the rest of ``agentfs.cli``: parse, call the core, print."""

from __future__ import annotations

import click

import agentfs
from agentfs.cli import cli, json_option, render, workspace_argument


@cli.command("glob")
@workspace_argument
@click.argument("pattern")
@click.option("--path", default="/", help="The directory to search below (default: the root).")
@click.option(
    "--sort",
    type=click.Choice(["mtime", "name"]),
    default="mtime",
    show_default=True,
    help="Newest first, or by path.",
)
@click.option("--dirs", "include_dirs", is_flag=True, help="List matching directories too.")
@json_option
def glob_(
    ws: agentfs.Workspace, pattern: str, path: str, sort: str, include_dirs: bool, as_json: bool
) -> None:
    """List paths matching PATTERN (**, *, ?, [...], {a,b}), relative to --path unless it
    starts with /, newest first. Reads no content.

    \b
    Example:
      agentfs glob ws.db '**/*.py' --path /src
      agentfs glob ws.db '/docs/*.{md,txt}' --sort name --json
    """
    found = ws.glob(pattern, path, sort=sort, include_dirs=include_dirs)  # type: ignore[arg-type]
    render([m._asdict() for m in found], as_json, lambda ms: [m["path"] for m in ms])


def _grep_lines(lines: list[dict]) -> list[str]:
    """ripgrep's layout: ``path:line:text`` for a match, ``path-line-text`` for context, and
    ``--`` between groups of lines that are not adjacent."""
    out: list[str] = []
    previous: tuple[str, int] | None = None
    for ln in lines:
        here = (ln["path"], ln["line"])
        if previous is not None and (previous[0] != here[0] or previous[1] + 1 != here[1]):
            out.append("--")
        out.append(
            f"{ln['path']}{':' if ln['is_match'] else '-'}{ln['line']}"
            f"{':' if ln['is_match'] else '-'}{ln['text']}"
        )
        previous = here
    return out


@cli.command("grep")
@workspace_argument
@click.argument("pattern")
@click.argument("path", default="/")
@click.option("-i", "--ignore-case", is_flag=True, help="Case-insensitive.")
@click.option("-F", "--fixed-strings", is_flag=True, help="PATTERN is a literal, not a regex.")
@click.option("-l", "--files-with-matches", "files", is_flag=True, help="Only the paths.")
@click.option("-c", "--count", "count", is_flag=True, help="Matching lines per file.")
@click.option("-A", "--after", type=click.IntRange(min=0), default=0, help="Lines after.")
@click.option("-B", "--before", type=click.IntRange(min=0), default=0, help="Lines before.")
@click.option("-C", "--context", type=click.IntRange(min=0), help="Lines before and after.")
@click.option("-U", "--multiline", is_flag=True, help="Let a match span lines (. matches \\n).")
@click.option("--glob", "name_glob", metavar="GLOB", help="Only files matching GLOB.")
@click.option("--max", "max_results", type=click.IntRange(min=0), help="Stop after N results.")
@json_option
def grep_(
    ws: agentfs.Workspace,
    pattern: str,
    path: str,
    ignore_case: bool,
    fixed_strings: bool,
    files: bool,
    count: bool,
    after: int,
    before: int,
    context: int | None,
    multiline: bool,
    name_glob: str | None,
    max_results: int | None,
    as_json: bool,
) -> None:
    """Search text files for PATTERN (a Python regular expression) at or below PATH, sorted by
    path, like ``rg --hidden --no-ignore -n``. Exits 1 when nothing matches, as grep does.

    \b
    Example:
      agentfs grep ws.db 'def \\w+' /src --glob '**/*.py' -C 1
      agentfs grep ws.db TODO -l
      agentfs grep ws.db -F 'a.b(' --count --json
    """
    output = "files" if files else "count" if count else "content"
    result = ws.grep(
        pattern,
        path,
        glob=name_glob,
        ignore_case=ignore_case,
        fixed_strings=fixed_strings,
        output=output,  # type: ignore[arg-type]
        before=before if context is None else context,
        after=after if context is None else context,
        max_results=max_results,
        multiline=multiline,
    )
    if output == "files":
        render(result.files, as_json, lambda fs: fs)
    elif output == "count":
        render(result.counts, as_json, lambda cs: [f"{p}:{n}" for p, n in cs.items()])
    else:
        render([ln._asdict() for ln in result.lines], as_json, _grep_lines)
    if not result.files:
        click.get_current_context().exit(1)
