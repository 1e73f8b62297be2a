"""``agentfs serve mcp``: the agent tools over MCP on stdio or Streamable HTTP. Thin like the rest
of the CLI: build the workspace, the policy and the toolsets, then hand them to the server."""

from __future__ import annotations

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
from agentfs.layered import LayeredWorkspace
from agentfs.protocol import WorkspaceAPI

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentfs.serve.mcp_http import Defaults
    from agentfs.tools.policy import Policy
    from agentfs.tools.profiles.baf import Space
    from agentfs.tools.toolset import Toolset


#: Where an MCP server over HTTP gets its tokens (docs/mcp.md, "Over HTTP").
token_file_option = click.option(
    "--token-file",
    metavar="FILE",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Over HTTP: the token, or the clients and their rights (0600; docs/mcp.md).",
)
#: A name besides the bound address that a server over HTTP answers to.
allow_host_option = click.option(
    "--allow-host",
    "allow_hosts",
    metavar="NAME",
    multiple=True,
    help="Over HTTP: another Host name to answer to (a reverse proxy's; repeat).",
)


@cli.group()
def serve() -> None:
    """Serve the workspace to agents (MCP over stdio or HTTP).

    \b
    Example:
      agentfs serve mcp ws.db --thread main
    """


@serve.command("mcp")
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE, required=False)
@click.option("--tools", "names", metavar="A,B,...", help="Offer only these tools.")
@profile_option
@preset_option
@click.option("--read-only", is_flag=True, help="Open read-only; list no tool that changes it.")
@policy_option
@click.option(
    "--thread",
    metavar="T",
    help="The thread (default: main; over HTTP, one per client session).",
)
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
    "--spaces",
    metavar="FILE",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="With --profile baf: the named workspaces to serve, from a TOML file, instead of WS.",
)
@click.option(
    "--sync-on-snapshot",
    is_flag=True,
    help="Push to the workspace's sync server after each snapshot (docs/sync.md).",
)
@click.option(
    "--http",
    "http",
    metavar="HOST:PORT",
    help="Serve over MCP's Streamable HTTP at http://HOST:PORT/mcp instead of stdio.",
)
@token_file_option
@allow_host_option
def serve_mcp(
    workspace: Path,
    names: str | None,
    profile: str,
    preset: str | None,
    read_only: bool,
    policy: Policy,
    thread: str | None,
    actor: str | None,
    layers: tuple[Path, ...],
    spaces: Path | None,
    sync_on_snapshot: bool,
    http: str | None,
    token_file: Path | None,
    allow_hosts: tuple[str, ...],
) -> None:
    """Serve the workspace's agent tools over MCP on stdin/stdout, or over HTTP (--http).

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
      agentfs serve mcp --profile baf --spaces spaces.toml
      AGENTFS_TOKEN=... agentfs serve mcp ws.db --http 0.0.0.0:8765
      agentfs serve mcp ws.db --http 127.0.0.1:8765 --token-file clients.toml

    \b
    A spaces file names each workspace baf's tools choose with `workspace`:
      [[workspace]]
      name = "docs"
      path = "docs.db"          # relative to the spaces file
      description = "The product manual"
      writable = false
    """
    if read_only:
        policy = policy.model_copy(update={"read_only": True})
    if (workspace is None) == (spaces is None):
        raise CLIError("give the workspace WS, or --spaces FILE with --profile baf")
    if spaces is not None and (profile != "baf" or layers):
        raise CLIError("--spaces serves baf's named workspaces: give --profile baf, no --layer")
    if http is None and (token_file is not None or allow_hosts):
        raise CLIError("--token-file and --allow-host go with --http")
    from agentfs.tools.toolset import Toolset  # not imported by every agentfs command

    tools = [n.strip() for n in names.split(",") if n.strip()] if names else None
    options: dict[str, Any] = {"tools": tools, "preset": preset}
    instructions = None
    make: Callable[[str, str | None, Policy], Toolset]
    try:
        if profile == "baf":
            from agentfs.tools.profiles.baf import Workspaces

            members = _spaces(workspace, spaces, layers, read_only)

            def make(thread: str, actor: str | None, policy: Policy) -> Toolset:
                return Workspaces(members, thread=thread, actor=actor, policy=policy, **options)

            instructions = Workspaces(members, policy=policy, **options).system_prompt()
        else:
            assert workspace is not None  # checked above
            ws = _workspace(workspace, layers, read_only)
            surface = surface_of(profile)

            def make(thread: str, actor: str | None, policy: Policy) -> Toolset:
                return Toolset(
                    ws, surface=surface, thread=thread, actor=actor, policy=policy, **options
                )

        toolset = make(thread or "main", actor, policy)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if http is not None:
        from agentfs.serve import mcp_http  # the MCP SDK takes 1.2 s to import

        where = workspace if workspace is not None else spaces
        assert where is not None  # one of the two is given
        try:
            address = mcp_http.parse_address(http)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        _serve_http(
            where,
            address,
            token_file,
            make,
            mcp_http.Defaults(thread, actor, policy),
            allowed_hosts=allow_hosts,
            instructions=instructions,
            sync_on_snapshot=sync_on_snapshot,
            started=lambda url: click.echo(f"serving MCP at {url}{mcp_http.ENDPOINT}", err=True),
        )
        return
    from agentfs.tools.mcp_server import serve_stdio  # the MCP SDK takes 1.2 s to import

    serve_stdio(toolset, sync_on_snapshot=sync_on_snapshot, instructions=instructions)


def _workspace(path: Path, layers: tuple[Path, ...], read_only: bool) -> WorkspaceAPI:
    """The workspace at ``path``, above its ``layers`` (opened read-only) if any."""
    first = workspace_for_command(path, readonly=read_only)
    if not layers:
        return first
    below = [workspace_for_command(layer, readonly=True) for layer in layers]
    return LayeredWorkspace([first, *below])


def _spaces(
    workspace: Path | None, spaces: Path | None, layers: tuple[Path, ...], read_only: bool
) -> list[Space]:
    """baf's workspaces: those of the spaces file, each opened read-only unless it is
    writable, or the one workspace ``workspace`` named ``workspace``."""
    from agentfs.tools.profiles.baf import Space, SpacesFile

    if spaces is None:
        assert workspace is not None  # one of the two is given
        return [Space(_workspace(workspace, layers, read_only))]
    found = SpacesFile.load(spaces)
    for s in found:  # as WS is checked (WORKSPACE_FILE): SQLite fails obscurely on a directory
        if s.path.is_dir():
            raise ValueError(f"{s.path}: a directory, not a workspace file ({s.name} in {spaces})")
    return [
        Space(
            workspace_for_command(s.path, readonly=read_only or not s.writable),
            s.name,
            s.description,
            s.writable,
            s.max_read_bytes,
        )
        for s in found
    ]


@serve.command("web")
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=int, default=8765, show_default=True, help="0: any free port.")
@click.option("--read-only", is_flag=True, help="Open read-only; serve no action.")
@allow_host_option
@click.option(
    "--mcp",
    "with_mcp",
    is_flag=True,
    help="Also serve the agent tools over MCP at /mcp, with a bearer token (docs/mcp.md).",
)
@token_file_option
@policy_option
@click.option("--thread", metavar="T", help="With --mcp: the thread (default: one per session).")
@click.option("--actor", metavar="A", help="With --mcp: who acts.")
def serve_web(
    workspace: Path,
    host: str,
    port: int,
    read_only: bool,
    allow_hosts: tuple[str, ...],
    with_mcp: bool,
    token_file: Path | None,
    policy: Policy,
    thread: str | None,
    actor: str | None,
) -> None:
    """Serve a web view of the workspace for people: files with their history and diffs,
    snapshots, the tool-call log, search, the overlay's changes; restore and apply with a
    click (docs/web.md).

    It prints one URL that carries a random token: open it in a browser. Every request needs
    that token (kept in a cookie); the Host header is checked.

    \b
    Example:
      agentfs serve web ws.db
      agentfs serve web ws.db --read-only --port 0
      AGENTFS_TOKEN=... agentfs serve web ws.db --mcp
    """
    if not with_mcp and (token_file is not None or thread or actor):
        raise CLIError("--token-file, --thread and --actor go with --mcp")
    from agentfs.serve.guard import host_names
    from agentfs.serve.listen import listening, serve
    from agentfs.serve.web.app import new_token, web_app

    if read_only:
        policy = policy.model_copy(update={"read_only": True})
    ws = workspace_for_command(workspace, readonly=read_only)
    token = new_token()
    view = web_app(ws, token, host_names(host, allow_hosts), read_only=read_only)

    def started(url: str) -> None:
        click.echo(f"open {url}/?token={token}", err=True)
        if with_mcp:
            click.echo(f"serving MCP at {url}/mcp", err=True)

    if not with_mcp:
        with listening(host, port) as sock:
            serve(view, sock, started)
        return
    from agentfs.serve import mcp_http
    from agentfs.tools.toolset import Toolset

    def make(thread: str, actor: str | None, policy: Policy) -> Toolset:
        return Toolset(ws, thread=thread, actor=actor, policy=policy)

    _serve_http(
        workspace,
        (host, port),
        token_file,
        make,
        mcp_http.Defaults(thread, actor, policy),
        allowed_hosts=allow_hosts,
        started=started,
        beside=view,
    )


def _serve_http(
    workspace: Path,
    address: tuple[str, int],
    token_file: Path | None,
    make: Callable[[str, str | None, Policy], Toolset],
    defaults: Defaults,
    **options: Any,
) -> None:
    """Serve the tools over HTTP at ``address`` (``mcp_http.serve_http``), with the clients
    of ``token_file``, ``AGENTFS_TOKEN`` or a token made for ``workspace`` (its file shown)."""
    from agentfs.serve import clients as known
    from agentfs.serve import mcp_http

    try:
        clients, generated = known.clients_for(address[0], token_file, workspace)
    except (ValueError, OSError) as exc:
        raise CLIError(str(exc)) from None
    if generated is not None:
        click.echo(f"MCP token: in {generated} (Authorization: Bearer <token>)", err=True)
    mcp_http.serve_http(make, defaults, clients, address, **options)
