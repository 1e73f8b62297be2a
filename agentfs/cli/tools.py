"""``agentfs tools``: the agent tools from a shell: list them, print their schemas, call one,
and generate docs/tools.md. Thin: the toolset and the reference do the work. Each command
imports the tools itself, so that every other ``agentfs`` command starts without them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agentfs.cli.base import (
    WORKSPACE_FILE,
    CLIError,
    cli,
    policy_option,
    preset_option,
    profile_option,
    surface_of,
    workspace_for_command,
)

if TYPE_CHECKING:
    from agentfs.tools.policy import Policy


@cli.group()
def tools() -> None:
    """The agent tools: list, schemas, call one, the reference page.

    \b
    Example:
      agentfs tools list
      agentfs tools call ws.db read_file '{"path": "/src/app.py"}'
    """


@tools.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@profile_option
@preset_option
def tools_list(as_json: bool, profile: str, preset: str | None) -> None:
    """Every tool of a profile (or of a preset of it): name, whether it changes the
    workspace, the characters its schema takes in a prompt, and its title; then the total.

    \b
    Example:
      agentfs tools list
      agentfs tools list --preset coding
      agentfs tools list --json --profile mcp-filesystem
    """
    from agentfs.tools import catalog
    from agentfs.tools.export import openai_tool

    specs = surface_of(profile).all_tools()
    if preset is not None:
        try:
            kept = catalog.preset(preset)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        specs = [s for s in specs if s.policy_name in kept]
    sizes = {s.name: len(json.dumps(openai_tool(s))) for s in specs}
    if as_json:
        rows = [
            {
                "name": s.name,
                "title": s.title,
                "mutates": s.mutates,
                "destructive": s.destructive,
                "idempotent": s.idempotent,
                "aliases": list(s.aliases),
                "schema_chars": sizes[s.name],
            }
            for s in specs
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(s.name) for s in specs)
    for s in specs:
        marks = "writes" if s.mutates else "reads"
        click.echo(f"{s.name:<{width}}  {marks:<6}  {sizes[s.name]:>6,}  {s.title}")
    total = sum(sizes.values())
    click.echo(f"{len(specs)} tools, {total:,} characters of schema (OpenAI format)")


@tools.command("schema")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["openai", "anthropic", "input", "output"]),
    default="openai",
    show_default=True,
    help="Function-calling format, or the bare input or output JSON Schema.",
)
@profile_option
def tools_schema(names: tuple[str, ...], fmt: str, profile: str) -> None:
    """Print tool schemas as JSON (all tools, or the named ones).

    \b
    Example:
      agentfs tools schema --format anthropic > tools.json
      agentfs tools schema edit_file --format output
    """
    from agentfs.tools.export import anthropic_tool, json_schema, openai_tool

    surface = surface_of(profile)
    specs = []
    for name in names or [s.name for s in surface.all_tools()]:
        spec = surface.find(name)
        if spec is None:
            raise CLIError(f"no tool {name!r} (agentfs tools list shows them)")
        specs.append(spec)
    render = {
        "openai": openai_tool,
        "anthropic": anthropic_tool,
        "input": lambda s: json_schema(s.input),
        "output": lambda s: json_schema(s.output),
    }[fmt]
    schemas = [render(s) for s in specs]
    click.echo(json.dumps(schemas[0] if len(names) == 1 else schemas, indent=2))


@tools.command("call")
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.argument("name")
@click.argument("arguments", default="{}", metavar="[JSON]")
@click.option("--thread", metavar="T", default="main", show_default=True, help="The thread.")
@click.option("--actor", metavar="A", default="cli", show_default=True, help="Who acts.")
@policy_option
@profile_option
@click.option("--text", "as_text", is_flag=True, help="Print what a model would read.")
def tools_call(
    workspace: Path,
    name: str,
    arguments: str,
    thread: str,
    actor: str,
    policy: Policy,
    profile: str,
    as_text: bool,
) -> None:
    """Call one tool with JSON arguments ('-' reads them from stdin) and print its result;
    exit status 1 when the result is an error. The call is audited like any other.

    \b
    Example:
      agentfs tools call ws.db grep '{"pattern": "TODO", "output_mode": "content"}'
      echo '{"path": "notes.md", "content": "hi"}' | agentfs tools call ws.db write_file -
    """
    from agentfs.tools.toolset import Toolset

    text = sys.stdin.read() if arguments == "-" else arguments
    ws = workspace_for_command(workspace)
    surface = surface_of(profile)
    with Toolset(ws, thread=thread, actor=actor, policy=policy, surface=surface) as toolset:
        result = toolset.invoke(name, text)
    click.echo(result.text if as_text else _dumps(result.data))
    if result.is_error:
        sys.exit(1)


@tools.command("docs")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the page here instead of printing it.",
)
@click.option("--check", is_flag=True, help="Fail if --output differs from what the code says.")
def tools_docs(output: Path | None, check: bool) -> None:
    """Generate the tools reference (docs/tools.md) from the tools themselves.

    \b
    Example:
      agentfs tools docs --output docs/tools.md
      agentfs tools docs --output docs/tools.md --check
    """
    from agentfs.tools import reference

    page = reference.render()
    if check:
        if output is None:
            raise CLIError("--check needs --output FILE to compare with")
        current = output.read_text(encoding="utf-8") if output.exists() else ""
        if current != page:
            raise CLIError(f"{output} is out of date: run agentfs tools docs --output {output}")
        return
    if output is None:
        click.echo(page, nl=False)
    else:
        output.write_text(page, encoding="utf-8")


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)
