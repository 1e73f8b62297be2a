"""``agentfs serve mcp``: the agent tools over MCP on stdio. Thin like the rest of the CLI:
build the workspace, the policy and the toolset, then hand them to the server."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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
from agentfs.layered import LayeredWorkspace
from agentfs.protocol import WorkspaceAPI

if TYPE_CHECKING:
    from agentfs.tools.policy import Policy


@cli.group()
def serve() -> None:
    """Serve the workspace to agents (MCP over stdio).

    \b
    Example:
      agentfs serve mcp ws.db --thread main
    """


@serve.command("mcp")
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.option("--tools", "names", metavar="A,B,...", help="Offer only these tools.")
@profile_option
@preset_option
@click.option("--read-only", is_flag=True, help="Open read-only; list no tool that changes it.")
@policy_option
@click.option("--thread", metavar="T", default="main", show_default=True, help="The thread.")
@click.option("--actor", metavar="A", help="Who acts (recorded with versions).")
@click.option(
    "--layer",
    "layers",
    metavar="WS2",
    multiple=True,
    type=WORKSPACE_FILE,
    help="A lower layer, opened read-only (repeat; most specific first; docs/layers.md).",
)
@click.option(
    "--sync-on-snapshot",
    is_flag=True,
    help="Push to the workspace's sync server after each snapshot (docs/sync.md).",
)
def serve_mcp(
    workspace: Path,
    names: str | None,
    profile: str,
    preset: str | None,
    read_only: bool,
    policy: Policy,
    thread: str,
    actor: str | None,
    layers: tuple[Path, ...],
    sync_on_snapshot: bool,
) -> None:
    """Serve the workspace's agent tools over MCP on stdin/stdout.

    The tools, their schemas and errors are in docs/tools.md; approval prompts go to the client
    as MCP elicitations (docs/mcp.md).

    \b
    Example:
      agentfs serve mcp ws.db --read-only
      agentfs serve mcp ws.db --tools read_file,grep,edit_file --policy policy.toml
      agentfs serve mcp ws.db --profile mcp-filesystem
      agentfs serve mcp ws.db --preset coding
      claude mcp add agentfs -- agentfs serve mcp /path/ws.db --thread main
      agentfs serve mcp thread.db --layer agent.db --layer team.db
    """
    if read_only:
        policy = policy.model_copy(update={"read_only": True})
    first = workspace_for_command(workspace, readonly=read_only)
    ws: WorkspaceAPI = first
    if layers:
        below = [workspace_for_command(layer, readonly=True) for layer in layers]
        ws = LayeredWorkspace([first, *below])
    from agentfs.tools.toolset import Toolset  # not imported by every agentfs command

    tools = [n.strip() for n in names.split(",") if n.strip()] if names else None
    surface = surface_of(profile)
    try:
        toolset = Toolset(
            ws,
            thread=thread,
            actor=actor,
            policy=policy,
            tools=tools,
            surface=surface,
            preset=preset,
        )
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    from agentfs.tools.mcp_server import serve_stdio  # the MCP SDK takes 1.2 s to import

    serve_stdio(toolset, sync_on_snapshot=sync_on_snapshot)
