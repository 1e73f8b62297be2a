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
