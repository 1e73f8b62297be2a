"""``agentfs mount`` and ``agentfs umount``: the workspace as a directory tree (docs/mount.md).
Thin: the mount itself is ``agentfs.mount`` and its daemon ``agentfs.mountd``; here are the
arguments, the wait for a background mount, and the listing."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import agentfs
    from agentfs.mount.daemon_args import MountOptions
    from agentfs.mount.doctor import Check
    from agentfs.tools.policy import Policy

from agentfs.cli.base import (
    WORKSPACE_FILE,
    CLIError,
    cli,
    json_option,
    render,
    workspace_for_command,
)

#: How long a background mount may take to appear before it counts as failed.
START_TIMEOUT = 30.0

policy_option = click.option(
    "--policy",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Apply this policy file's rules for execute_command: denied paths absent, writes"
    " outside its allow list refused (docs/policies.md).",
)


@cli.command()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE, required=False)
@click.argument("mountpoint", metavar="DIR", required=False, type=click.Path(path_type=Path))
@click.option("--root", default="/", show_default=True, help="Mount this directory of WS.")
@click.option("--read-only", is_flag=True, help="Refuse every change.")
@click.option("--foreground", is_flag=True, help="Serve in this process until unmounted.")
@click.option("--allow-other", is_flag=True, help="Let other users in (needs user_allow_other).")
@click.option(
    "--cache-timeout",
    type=float,
    default=1.0,
    show_default=True,
    help="Seconds the kernel may cache names and attributes.",
)
@click.option(
    "--no-xattr",
    is_flag=True,
    help="No extended attributes: the kernel stops asking for them, one round trip less "
    "per write(2).",
)
@policy_option
def mount(
    workspace: Path | None,
    mountpoint: Path | None,
    root: str,
    read_only: bool,
    foreground: bool,
    allow_other: bool,
    cache_timeout: float,
    no_xattr: bool,
    policy: Path | None,
) -> None:
    """Mount WS on DIR so any program sees it as a directory tree; with no arguments, list
    the active mounts.

    Everything written in the mount gets the same versions, read tracking and search indexing
    as the API; the workspace stays usable from other processes meanwhile.

    \b
    Example:
      agentfs mount ws.db /mnt/ws && git -C /mnt/ws status && agentfs umount /mnt/ws
      agentfs mount ws.db /mnt/src --root /src --read-only
      agentfs mount ws.db /mnt/ws --policy policy.toml
      agentfs mount
    """
    from agentfs import mountd
    from agentfs.mount import daemon, daemon_args

    if workspace is None or mountpoint is None:
        if workspace is not None:
            raise CLIError("mount needs both WS and DIR (or neither, to list mounts)")
        for m in daemon.active_mounts():
            click.echo(f"{m.source} on {m.mountpoint} ({m.options})")
        return
    loaded = _policy(policy)
    options = daemon_args.MountOptions(
        root=root,
        read_only=read_only,
        allow_other=allow_other,
        cache_timeout=cache_timeout,
        xattrs=not no_xattr,
        rules=loaded.mount_rules() if loaded is not None else None,
    )
    workspace_for_command(workspace, readonly=options.read_only)  # a bad file: said here
    target = daemon.mountpoint_ready(mountpoint)
    if daemon.is_mounted(target):
        raise CLIError(f"{mountpoint}: already mounted")
    if foreground:
        try:
            mountd.serve(workspace, target, options)
        except NotADirectoryError as exc:
            raise CLIError(str(exc)) from None
        return
    _start_in_background(workspace, target, options)


def _policy(path: Path | None) -> Policy | None:
    """The policy file ``--policy`` names, or a usage error that says what is wrong with it."""
    from agentfs.tools.policy import Policy

    try:
        return None if path is None else Policy.load(path)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _start_in_background(workspace: Path, mountpoint: Path, options: MountOptions) -> None:
    """Start the mount daemon and return once the mount is there (or say why it could not
    mount)."""
    from agentfs.mount import daemon, daemon_args

    deadline = time.monotonic() + START_TIMEOUT
    with tempfile.TemporaryFile() as errors:
        child = daemon_args.start(workspace, mountpoint, options, errors)
        while not daemon.wait_until(mountpoint, True, 0.1):
            if child.poll() is not None:
                errors.seek(0)
                said = errors.read().decode(errors="replace").strip()
                raise CLIError(said or f"the mount exited ({child.returncode})")
            if time.monotonic() > deadline:
                child.kill()
                raise CLIError(f"{mountpoint}: not mounted after {START_TIMEOUT:.0f} s")


@cli.command()
@click.argument("mountpoint", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--lazy", is_flag=True, help="Detach now even if the mount is busy.")
def umount(mountpoint: Path, lazy: bool) -> None:
    """Unmount DIR; open files are committed first.

    \b
    Example:
      agentfs umount /mnt/ws
    """
    from agentfs.mount import daemon

    daemon.unmount(mountpoint, lazy=lazy)
    if not daemon.wait_until(mountpoint, False, 10.0):
        raise CLIError(f"{mountpoint}: still mounted")


@cli.command("exec", context_settings={"ignore_unknown_options": True})
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--root", default="/", show_default=True, help="The directory of WS to run in.")
@click.option("--cwd", help="Working directory, relative to --root.")
@click.option("--sandbox", is_flag=True, help="Run under bubblewrap (docs/mount.md).")
@click.option("--network", is_flag=True, help="With --sandbox: keep the network.")
@click.option("--thread", help="The thread the command's snapshot belongs to.")
@click.option("--timeout", type=float, help="Kill the command after this many seconds.")
@click.option(
    "--copy", is_flag=True, help="Run in a copy, carry the changes back (no mount needed)."
)
@policy_option
def exec_command(
    workspace: Path,
    command: tuple[str, ...],
    root: str,
    cwd: str | None,
    sandbox: bool,
    network: bool,
    thread: str | None,
    timeout: float | None,
    copy: bool,
    policy: Path | None,
) -> None:
    """Run COMMAND in WS mounted on a temporary directory; exit with its exit code.

    A snapshot is taken first, so `agentfs snapshot restore WS NAME` undoes everything the
    command did (its name is printed on stderr). The mount goes away when the command ends,
    fails or is interrupted. Where FUSE is missing (or with --copy) the command runs in a
    temporary copy of WS instead, and what it changed is copied back in one transaction.
    With --policy, the mount (or the copy) applies the policy file's rules for
    execute_command (the command's sandbox limits too); refusals are listed on stderr.

    \b
    Example:
      agentfs exec ws.db -- git status
      agentfs exec ws.db --sandbox --timeout 300 -- pytest -q
      agentfs exec ws.db --thread t1 -- sh -c 'npm install && npm test'
      agentfs exec ws.db --copy -- make
      agentfs exec ws.db --sandbox --policy policy.toml -- make
    """
    loaded = _policy(policy)
    ws = workspace_for_command(workspace, thread=thread)
    code = _run_command(ws, workspace, command, root, cwd, sandbox, network, timeout, copy, loaded)
    raise SystemExit(code)


def _run_command(
    ws: agentfs.Workspace,
    workspace: Path,
    command: tuple[str, ...],
    root: str,
    cwd: str | None,
    sandbox: bool,
    network: bool,
    timeout: float | None,
    copy: bool,
    loaded: Policy | None,
) -> int:
    """Run ``command`` in ``ws`` as ``exec`` does, say on stderr what the policy refused and
    how to undo it; the exit status to leave with."""
    from agentfs.mount.exec import fuse_available

    reason = None if copy else fuse_available()
    if reason is not None:
        click.echo(
            f"agentfs: cannot mount ({reason}): running in a copy of the workspace"
            " (its changes are copied back after the command)",
            err=True,
        )
    result = ws.run(
        list(command),
        root=root,
        cwd=cwd,
        sandbox=sandbox,
        network=network,
        timeout=timeout,
        max_output=None,
        capture=False,
        mode="copy" if copy or reason is not None else "mount",
        rules=None if loaded is None else loaded.mount_rules(),
        limits=None if loaded is None else loaded.commands.limits(),
    )
    for line in result.denied:
        click.echo(f"agentfs: refused by the policy: {line}", err=True)
    if result.denied_total > len(result.denied):
        click.echo(f"agentfs: ... {result.denied_total} refusals in all", err=True)
    for path in result.conflicts:
        click.echo(f"agentfs: {path}: also changed meanwhile; the command's result won", err=True)
    for line in result.skipped:
        click.echo(f"agentfs: {line}", err=True)
    click.echo(
        f"agentfs: undo with: agentfs snapshot restore {workspace} {result.snapshot}", err=True
    )
    if result.timed_out:
        click.echo(f"agentfs: killed after {timeout:g} s", err=True)
    if result.out_of_memory:
        click.echo("agentfs: a process was killed at the sandbox's memory limit", err=True)
    return result.exit_code if result.exit_code >= 0 else 128 - result.exit_code


#: Where ``agentfs run`` keeps its workspace, below the directory it runs in.
RUN_WORKSPACE = Path(".agentfs") / "run.db"


@cli.command("run", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option(
    "--ws",
    "workspace",
    type=WORKSPACE_FILE,
    help=f"The workspace to keep the changes in (default: {RUN_WORKSPACE}).",
)
@click.option("--sandbox", is_flag=True, help="Run under bubblewrap (docs/mount.md).")
@click.option("--network", is_flag=True, help="With --sandbox: keep the network.")
@click.option("--timeout", type=float, help="Kill the command after this many seconds.")
def run_command(
    command: tuple[str, ...],
    workspace: Path | None,
    sandbox: bool,
    network: bool,
    timeout: float | None,
) -> None:
    """Run COMMAND over the current directory without touching it: the directory is the
    base of a workspace (created the first time, kept for the next run), the command runs
    in its mount, and what it changed stays in the workspace, to review (agentfs changes)
    and apply (agentfs apply). Exits with the command's exit status.

    Not `ws.run()`, which runs a command in any workspace (`agentfs exec`).

    \b
    Example:
      agentfs run -- make test
      agentfs run --sandbox -- sh -c 'npm install && npm test'
      agentfs run --ws .agentfs/refactor.db -- ./agent.sh
    """
    here = Path.cwd()
    db = workspace if workspace is not None else RUN_WORKSPACE
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        ignore = db.parent / ".gitignore"
        if db.parent.name == ".agentfs" and not ignore.exists():
            ignore.write_text("*\n")  # the host's git sees nothing of it
    ws = workspace_for_command(db, create=True, base=here)
    code = _run_command(ws, db, command, "/", None, sandbox, network, timeout, False, None)
    from agentfs import overlay

    found = overlay.changes(ws)
    if not found:
        click.echo("agentfs: nothing changed", err=True)
    else:
        click.echo("agentfs: changed in the workspace, not in this directory:", err=True)
        for change in found[:20]:
            where = f"{change.old_path} -> {change.path}" if change.old_path else change.path
            click.echo(f"agentfs:   {change.kind:8} {where}", err=True)
        if len(found) > 20:
            click.echo(f"agentfs:   ... and {len(found) - 20} more", err=True)
        click.echo(f"agentfs: review: agentfs changes {db} --patch", err=True)
        click.echo(f"agentfs: apply:  agentfs apply {db}", err=True)
    raise SystemExit(code)


@cli.command()
@json_option
def doctor(as_json: bool) -> None:
    """Say what this host lets agentfs do: the mount, each part of the sandbox, and what a
    missing part disables (nothing runs unsandboxed in its place). Exits 1 when a part
    something needs is missing (not for the memory cgroup, which only adds a bound).

    \b
    Example:
      agentfs doctor
      agentfs doctor --json
    """
    from agentfs.mount.doctor import checks

    found = checks()
    render([c.as_dict() for c in found], as_json, lambda _rows: _doctor_lines(found))
    if not all(c.ok for c in found if c.needed):
        raise SystemExit(1)


def _doctor_lines(found: list[Check]) -> list[str]:
    width = max(len(c.name) for c in found)
    lines = []
    for c in found:
        mark = "ok" if c.ok else "NO" if c.needed else "--"
        lines.append(f"{mark:<3} {c.name:<{width}}  {c.detail}")
        if not c.ok:
            lines.append(f"    {'':<{width}}  missing: {c.problem}")
            lines.append(f"    {'':<{width}}  so: {c.disables}")
    return lines
