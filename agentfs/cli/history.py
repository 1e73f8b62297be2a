"""The history commands of the CLI: history, diff, restore-version, snapshot ..., fork, gc,
reads, retention. Thin like the rest of ``agentfs.cli``: parse, call the core, print."""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

import agentfs
from agentfs.cli.base import WORKSPACE_FILE, cli, json_option, render, when_text, workspace_argument


def _stamp(ns: int) -> str:
    return when_text(ns / 1e9)


def _version_line(v: dict[str, Any]) -> str:
    who = "/".join(x for x in (v["actor"], v["thread"]) if x) or "-"
    size = f"{v['size']} B" if v["size"] is not None else ""
    other = f" ({'to' if v['op'] == 'move' else 'from'} {v['other']})" if v["other"] else ""
    digest = (v["hash"] or "")[:12]
    return f"{v['n']:>4}  {_stamp(v['at_ns'])}  {v['op']:<8} {size:>10}  {digest:<12}  {who}{other}"


@cli.command()
@workspace_argument
@click.argument("path")
@json_option
def history(ws: agentfs.Workspace, path: str, as_json: bool) -> None:
    """List every version of PATH, oldest first (deleted files too).

    \b
    Example:
      agentfs history ws.db /src/app.py
      agentfs cat ws.db /src/app.py --version 2
    """
    rows = [v.as_dict() for v in ws.history(path)]
    if not rows:
        raise agentfs.HistoryNotFoundError(f"{path}: no history")
    render(rows, as_json, lambda vs: [_version_line(v) for v in vs])


@cli.command()
@workspace_argument
@click.argument("path")
@click.argument("a", type=int, required=False)
@click.argument("b", type=int, required=False)
def diff(ws: agentfs.Workspace, path: str, a: int | None, b: int | None) -> None:
    """Unified diff of PATH: version A to version B, A to now, or (no A) the last change.

    \b
    Example:
      agentfs diff ws.db /src/app.py          # what the last write changed
      agentfs diff ws.db /src/app.py 1        # version 1 -> now
      agentfs diff ws.db /src/app.py 1 3      # version 1 -> version 3
    """
    click.echo(ws.diff(path, a, b), nl=False)


_LETTER = {"added": "A", "modified": "M", "deleted": "D", "renamed": "R"}


def _change_line(c: dict[str, Any]) -> str:
    where = f"{c['old_path']} -> {c['path']}" if c["old_path"] else c["path"]
    counted = c["insertions"] is not None
    stats = f"  (+{c['insertions']} -{c['deletions']})" if counted else ""
    return f"{_LETTER[c['kind']]}  {where}{stats}"


def _change_lines(found: list[dict[str, Any]]) -> list[str]:
    if not found:
        return ["no changes"]
    plus = sum(c["insertions"] or 0 for c in found)
    minus = sum(c["deletions"] or 0 for c in found)
    total = f"{len(found)} changed, {plus} insertions(+), {minus} deletions(-)"
    return [*map(_change_line, found), total]


@cli.command()
@workspace_argument
@click.argument("path", default="/")
@click.option("--patch", is_flag=True, help="Print the unified diff against the base instead.")
@json_option
def changes(ws: agentfs.Workspace, path: str, patch: bool, as_json: bool) -> None:
    """What a workspace over a host directory (init --base) changed there, at or below PATH:
    each file or symlink added (A), modified (M), deleted (D) or renamed (R), with the lines
    added and removed. Reads nothing of the host but what a diff needs.

    \b
    Example:
      agentfs changes .agentfs/work.db
      agentfs changes .agentfs/work.db /src --patch
      agentfs changes .agentfs/work.db --json
    """
    from agentfs import overlay

    found = overlay.changes(ws, path)
    if patch:
        click.echo(overlay.patch(ws, found), nl=False)
        return
    render([asdict(c) for c in found], as_json, _change_lines)


def _applied_lines(done: dict[str, Any]) -> list[str]:
    if done["conflicts"]:
        lines = [f"conflict  {c['path']}: {c['reason']}" for c in done["conflicts"]]
        return [
            *lines,
            "nothing was written; resolve each with --ours PATH (the workspace's side) or"
            " --theirs PATH (the host's), --merge for text, or leave it out",
        ]
    verb = "would " if done["dry_run"] else ""
    lines = [f"{verb}write   {p}" for p in done["written"]]
    lines += [f"{verb}delete  {p}" for p in done["deleted"]]
    lines += [f"took the host's  {p}" for p in done["taken"]]
    lines += [f"merged  {p}" for p in done["merged"]]
    lines += [f"skipped {p}: {why}" for p, why in done["skipped"]]
    return lines or ["no changes to apply"]


@cli.command()
@workspace_argument
@click.argument("paths", nargs=-1)
@click.option("--dry-run", is_flag=True, help="Say what would be written; write nothing.")
@click.option(
    "--include-git", is_flag=True, help="Apply changes inside .git/ too (not hooks, config)."
)
@click.option("--ours", multiple=True, metavar="PATH", help="Apply PATH over a host change.")
@click.option("--theirs", multiple=True, metavar="PATH", help="Take the host's PATH instead.")
@click.option("--merge", is_flag=True, help="Merge text files the host changed too, 3 ways.")
@json_option
def apply(
    ws: agentfs.Workspace,
    paths: tuple[str, ...],
    dry_run: bool,
    include_git: bool,
    ours: tuple[str, ...],
    theirs: tuple[str, ...],
    merge: bool,
    as_json: bool,
) -> None:
    """Write a workspace's changes (all, or those at or below PATHS) into its base directory.

    Nothing is written if a host file it would touch changed since the workspace read it:
    each such conflict is named and the exit status is 1 (with --merge, a text file whose
    changes on the two sides touch different lines is merged instead, in the workspace and
    on the host). Each file is replaced atomically;
    a run killed part-way is finished by the next. .git/hooks and .git/config are never
    applied, the rest of .git/ only with --include-git.

    \b
    Example:
      agentfs apply .agentfs/work.db --dry-run
      agentfs apply .agentfs/work.db /src
      agentfs apply .agentfs/work.db --theirs /README.md
      agentfs apply .agentfs/work.db --merge
    """
    from agentfs import overlay

    done = asdict(
        overlay.apply(
            ws,
            paths,
            dry_run=dry_run,
            include_git=include_git,
            ours=ours,
            theirs=theirs,
            merge=merge,
        )
    )
    render(done, as_json, _applied_lines)
    if done["conflicts"]:
        raise SystemExit(1)


@cli.command("restore-version")
@workspace_argument
@click.argument("path")
@click.argument("n", type=int)
@json_option
def restore_version(ws: agentfs.Workspace, path: str, n: int, as_json: bool) -> None:
    """Make version N of PATH current again (recorded as a new version; no bytes copied).

    \b
    Example:
      agentfs restore-version ws.db /src/app.py 2
    """
    render(ws.restore_version(path, n).as_dict(), as_json, lambda v: [_version_line(v)])


# --- snapshots --------------------------------------------------------------------------------


@cli.group()
def snapshot() -> None:
    """Copy-on-write snapshots of the whole tree: create, list, show, diff, restore, delete.

    \b
    Example:
      agentfs snapshot create ws.db turn-3 --thread chat-42 --meta '{"turn": 3}'
      agentfs snapshot diff ws.db turn-3
      agentfs snapshot restore ws.db turn-3
    """


def _snapshot_line(s: dict[str, Any]) -> str:
    thread = s["thread"] or "-"
    label = f"  {s['label']}" if s["label"] else ""
    return f"{s['name']:<24} {_stamp(s['created_ns'])}  {thread:<12} {s['files']:>7} files{label}"


@snapshot.command("create")
@workspace_argument
@click.argument("name", required=False)
@click.option("--thread", help="The conversation thread it belongs to.")
@click.option("--label", help="Free text shown by list.")
@click.option("--meta", metavar="JSON", help="Any JSON value (a turn number, a message id).")
@json_option
def snapshot_create(
    ws: agentfs.Workspace,
    name: str | None,
    thread: str | None,
    label: str | None,
    meta: str | None,
    as_json: bool,
) -> None:
    """Snapshot the whole tree as NAME (default snap-N). Costs what changed since the last.

    \b
    Example:
      agentfs snapshot create ws.db before-refactor --label "tests green"
    """
    try:
        meta_value = json.loads(meta) if meta is not None else None
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--meta") from None
    info = ws.snapshots.create(name, thread=thread, label=label, meta=meta_value)
    render(info.as_dict(), as_json, lambda s: [_snapshot_line(s)])


@snapshot.command("list")
@workspace_argument
@click.option("--thread", help="Only this thread's snapshots.")
@json_option
def snapshot_list(ws: agentfs.Workspace, thread: str | None, as_json: bool) -> None:
    """List snapshots, oldest first.

    \b
    Example:
      agentfs snapshot list ws.db --thread chat-42
    """
    rows = [s.as_dict() for s in ws.snapshots.list(thread)]
    render(rows, as_json, lambda ss: [_snapshot_line(s) for s in ss])


@snapshot.command("show")
@workspace_argument
@click.argument("name")
@click.argument("path", default="/")
@json_option
def snapshot_show(ws: agentfs.Workspace, name: str, path: str, as_json: bool) -> None:
    """List what snapshot NAME holds at or below PATH.

    \b
    Example:
      agentfs snapshot show ws.db turn-3 /src
    """
    info = ws.snapshots.get(name).as_dict()
    entries = [
        {"path": p, "type": agentfs.core.inodes.type_name(e.mode), "mode": e.mode & 0o7777}
        for p, e in ws.snapshots.show(name, path)
    ]
    render(
        {"snapshot": info, "entries": entries},
        as_json,
        lambda d: (
            [_snapshot_line(d["snapshot"])]
            + [f"{e['type']:<8} {e['mode']:04o}  {e['path']}" for e in d["entries"]]
        ),
    )


def _diff_lines(d: dict[str, list[str]]) -> list[str]:
    marks = (("added", "A"), ("removed", "D"), ("modified", "M"))
    return sorted((f"{mark} {p}" for key, mark in marks for p in d[key]), key=lambda x: x[2:])


@snapshot.command("diff")
@workspace_argument
@click.argument("a")
@click.argument("b", required=False)
@click.option("--path", default="/", help="Only paths at or below this one.")
@json_option
def snapshot_diff(ws: agentfs.Workspace, a: str, b: str | None, path: str, as_json: bool) -> None:
    """Paths added (A), removed (D), modified (M) from snapshot A to B (default: now).

    \b
    Example:
      agentfs snapshot diff ws.db turn-3
      agentfs snapshot diff ws.db turn-3 turn-5 --json
    """
    render(ws.snapshots.diff(a, b, path).as_dict(), as_json, _diff_lines)


@snapshot.command("restore")
@workspace_argument
@click.argument("name")
@click.option("--path", default="/", help="Restore only this file or subtree.")
@json_option
def snapshot_restore(ws: agentfs.Workspace, name: str, path: str, as_json: bool) -> None:
    """Make the tree (or --path) what snapshot NAME holds; atomic, and undoable.

    \b
    Example:
      agentfs snapshot restore ws.db turn-3
      agentfs snapshot restore ws.db turn-3 --path /src
    """
    result = ws.snapshots.restore(name, path)
    data = {"undo": result.undo, "changes": result.changes.as_dict()}
    render(
        data,
        as_json,
        lambda d: [
            *_diff_lines(d["changes"]),
            f"undo with: agentfs snapshot restore {shlex.quote(str(ws.path))} {d['undo']}",
        ],
    )


@snapshot.command("delete")
@workspace_argument
@click.argument("name")
def snapshot_delete(ws: agentfs.Workspace, name: str) -> None:
    """Delete snapshot NAME; what only it held is freed.

    \b
    Example:
      agentfs snapshot delete ws.db turn-1
    """
    ws.snapshots.delete(name)


# --- whole-workspace history commands ----------------------------------------------------------


@cli.command()
@workspace_argument
@click.argument("name")
@click.argument("out", type=WORKSPACE_FILE)
def fork(ws: agentfs.Workspace, name: str, out: Path) -> None:
    """Start a new workspace file OUT from snapshot NAME, with the history up to it.

    \b
    Example:
      agentfs fork ws.db turn-3 branch.db
    """
    click.echo(ws.fork(name, out))


@cli.command()
@workspace_argument
@json_option
def gc(ws: agentfs.Workspace, as_json: bool) -> None:
    """Free versions beyond the retention setting and what no snapshot needs.

    \b
    Example:
      agentfs retention ws.db --keep 20
      agentfs gc ws.db
    """
    render(ws.gc().as_dict(), as_json)


@cli.command()
@workspace_argument
@click.option("--thread", help="Only this thread's reads.")
@json_option
def reads(ws: agentfs.Workspace, thread: str | None, as_json: bool) -> None:
    """List the last read of each file by each thread (read tracking).

    \b
    Example:
      agentfs reads ws.db --thread chat-42
    """
    rows = [r.as_dict() for r in ws.reads_log(thread)]

    def lines(rs: list[dict[str, Any]]) -> list[str]:
        return [
            f"{r['thread']:<12} {_stamp(r['at_ns'])}  v{r['n'] or '-':<4} {r['path']}"
            + ("  (part)" if r["ranged"] else "")
            for r in rs
        ]

    render(rows, as_json, lines)


@cli.command()
@workspace_argument
@click.option("--keep", metavar="all|none|N", help="Versions kept per path.")
@click.option(
    "--max-size", "max_bytes", type=int, metavar="BYTES", help="Larger files get no versions."
)
@json_option
def retention(
    ws: agentfs.Workspace, keep: str | None, max_bytes: int | None, as_json: bool
) -> None:
    """Show or set how much history the workspace keeps.

    \b
    Example:
      agentfs retention ws.db
      agentfs retention ws.db --keep 20 --max-size 1048576
    """
    if keep is not None or max_bytes is not None:
        settings = ws.configure_history(keep=... if keep is None else keep, max_bytes=max_bytes)
    else:
        settings = ws.history_settings
    data = {
        "keep": "all"
        if settings.keep is None
        else ("none" if settings.keep == 0 else settings.keep),
        "max_bytes": settings.max_bytes,
    }
    render(data, as_json)
