"""``agentfs sync setup|push|pull|status|resolve`` and ``agentfs clone``: the workspace on
many machines through a Turso / libSQL server (docs/sync.md). Thin over ``agentfs.sync``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from agentfs import sync as syncing
from agentfs.cli.base import (
    WORKSPACE_FILE,
    cli,
    count_of,
    human_size,
    json_option,
    render,
    when_text,
)

token_option = click.option(
    "--token",
    envvar="TURSO_AUTH_TOKEN",
    help="The server's auth token (default: $TURSO_AUTH_TOKEN).",
)


@cli.group()
def sync() -> None:
    """Push the workspace to a Turso / libSQL server and pull what others pushed.

    \b
    Example:
      agentfs sync setup ws.db --remote http://127.0.0.1:8080
      agentfs sync push ws.db
      agentfs sync status ws.db
    """


@sync.command()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.option("--remote", required=True, help="http://HOST:PORT, or a libsql:// Turso URL.")
@token_option
@click.option(
    "--save-token",
    is_flag=True,
    help="Save the token for later commands, in a 0600 file of ~/.config/agentfs (never in"
    " the workspace file); without it, a token saved before is forgotten.",
)
@click.option(
    "--merge",
    is_flag=True,
    help="Join a server that holds another workspace: its files merge with WS's at the next pull.",
)
@json_option
def setup(
    workspace: Path, remote: str, token: str | None, save_token: bool, merge: bool, as_json: bool
) -> None:
    """Make WS sync with a server: connects once (a wrong URL fails here and changes nothing)
    and remembers the URL; the token is saved (outside WS) only with --save-token. A server
    already holding another workspace's files is refused while WS holds files too, unless
    --merge (clone it instead to get a copy of that workspace).

    \b
    Example:
      agentfs sync setup ws.db --remote http://127.0.0.1:8080
      TURSO_AUTH_TOKEN=... agentfs sync setup ws.db --remote libsql://team-ws.turso.io
    """
    report = syncing.setup(workspace, remote, token=token, save_token=save_token, merge=merge)
    render(report, as_json, lambda r: [f"{workspace} syncs with {r['remote']}"])


@sync.command()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.option("-m", "--message", default="", help="A note kept with the commit.")
@json_option
def push(workspace: Path, message: str, as_json: bool) -> None:
    """Merge what the server has, then send what changed here as one commit.

    \b
    Example:
      agentfs sync push ws.db -m "turn 12"
    """
    render(syncing.push(workspace, message=message), as_json, _pushed)


def _pushed(r: dict[str, Any]) -> list[str]:
    lines = _exchanged(r)
    lines.append(f"sent {human_size(r['sent_bytes'])}, received {human_size(r['received_bytes'])}")
    return lines


@sync.command()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@json_option
def pull(workspace: Path, as_json: bool) -> None:
    """Merge what others pushed into WS (the later of two edits of one file wins; the other
    is kept as a version and listed by `sync status`).

    \b
    Example:
      agentfs sync pull ws.db
    """
    render(syncing.pull(workspace), as_json, lambda r: _exchanged(r) or ["already up to date"])


def _exchanged(r: dict[str, Any]) -> list[str]:
    lines = []
    if r["commit"] is not None:
        lines.append(f"committed {count_of(r['committed'], 'change')} as {r['commit']}")
    if r["merged"]:
        line = f"merged {count_of(len(r['merged']), 'commit')}: {count_of(r['changed'], 'change')}"
        if r["conflicts"]:
            line += f", {count_of(r['conflicts'], 'conflict')} (see: agentfs sync status)"
        lines.append(line)
    return lines


@sync.command()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.option("--offline", is_flag=True, help="Do not ask the server (behind is unknown).")
@json_option
def status(workspace: Path, offline: bool, as_json: bool) -> None:
    """What is not pushed, what is not merged, the last push and pull, bytes on the wire,
    and the conflicts.

    \b
    Example:
      agentfs sync status ws.db
      agentfs sync status ws.db --offline --json
    """
    render(syncing.status(workspace, offline=offline), as_json, _status)


def _status(r: dict[str, Any]) -> list[str]:
    behind = "unknown (offline)" if r["behind"] is None else count_of(r["behind"], "commit")
    lines = [
        f"remote:   {r['remote']}",
        f"changed:  {count_of(r['changed'], 'path')} since the last sync",
        f"unpushed: {count_of(len(r['unpushed']), 'commit')}",
        f"behind:   {behind} not merged",
        f"pushed:   {when_text(r['last_push']) if r['last_push'] else 'never'}",
        f"pulled:   {when_text(r['last_pull']) if r['last_pull'] else 'never'}",
        f"traffic:  sent {human_size(r['sent_bytes'])}, received {human_size(r['received_bytes'])}",
    ]
    for c in r["conflicts"]:
        lines.append(f"conflict: {c['path']}: {c['reason']}")
    return lines


@sync.command()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.argument("paths", metavar="[PATH]...", nargs=-1)
@json_option
def resolve(workspace: Path, paths: tuple[str, ...], as_json: bool) -> None:
    """Clear conflicts from the list (all of them, or those of PATH...); the losing
    versions stay in the files' history.

    \b
    Example:
      agentfs sync resolve ws.db /notes/plan.md
    """
    cleared = syncing.resolve(workspace, paths)
    render({"cleared": cleared}, as_json, lambda r: [f"cleared {count_of(cleared, 'conflict')}"])


@cli.command()
@click.argument("remote")
@click.argument("out", metavar="OUT", type=WORKSPACE_FILE)
@token_option
@json_option
def clone(remote: str, out: Path, token: str | None, as_json: bool) -> None:
    """A new workspace OUT with what the server REMOTE holds, set up to sync with it.

    \b
    Example:
      agentfs clone http://127.0.0.1:8080 copy.db
    """
    report = syncing.clone(remote, out, token=token)
    render(
        report, as_json, lambda r: [f"cloned {remote} into {out}: {count_of(r['changed'], 'path')}"]
    )
