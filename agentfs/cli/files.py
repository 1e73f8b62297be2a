"""The file commands: init, info, limits, ls, tree, stat, cat, write, mkdir, rm, mv, cp, ln, chmod,
touch, import/export, kv, fsck, timeline and the rest of the plain workspace operations."""

from __future__ import annotations

import errno
import json
import posixpath
import stat as statmod
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import click

import agentfs
from agentfs import fsck as fsck_checks
from agentfs import transfer
from agentfs.cli.base import (
    WORKSPACE_FILE,
    ByteSize,
    CLIError,
    cli,
    count_of,
    fields_of,
    group_workspace,
    human_size,
    json_option,
    render,
    when_text,
    workspace_argument,
    workspace_for_command,
)
from agentfs.core import paths
from agentfs.db import DEFAULT_CHUNK_SIZE

# --- the workspace -------------------------------------------------------------------------------


@cli.command()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.option(
    "--chunk-size",
    type=int,
    default=DEFAULT_CHUNK_SIZE,
    show_default=True,
    help="Bytes per content chunk (512 B .. 4 MiB); fixed for the workspace's lifetime.",
)
@click.option(
    "--base",
    metavar="DIR",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A host directory under the workspace, brought in as it is read; never written.",
)
@json_option
def init(workspace: Path, chunk_size: int, base: Path | None, as_json: bool) -> None:
    """Create a new, empty workspace file (in a new file or an empty one; refuses any other).

    With --base, the workspace starts as the host directory DIR: each directory of it comes
    in the first time it is needed, and the workspace's changes never touch DIR.

    \b
    Example:
      agentfs init ws.db
      agentfs init big.db --chunk-size 262144
      agentfs init .agentfs/work.db --base .
    """
    if workspace.exists() and (workspace.is_dir() or workspace.stat().st_size > 0):
        raise FileExistsError(
            errno.EEXIST,
            "already exists (init makes a new workspace, in a new or empty file)",
            str(workspace),
        )
    ws = workspace_for_command(workspace, create=True, chunk_size=chunk_size, base=base)
    render(ws.info().as_dict(), as_json, lambda i: [f"created {i['path']}"])


@cli.command()
@workspace_argument
@click.option(
    "--file-size", type=ByteSize(), metavar="SIZE", help="The largest file (EFBIG beyond it)."
)
@click.option(
    "--workspace-size",
    type=ByteSize(allow_none=True),
    metavar="SIZE|none",
    help="The largest the workspace file may grow (ENOSPC beyond it); none: no quota.",
)
@json_option
def limits(
    ws: agentfs.Workspace, file_size: int | None, workspace_size: int | None, as_json: bool
) -> None:
    """Show or set how large a file and the whole workspace may grow.

    A hole costs its size (it is stored as zeros), so the largest file bounds what one write
    or truncate can cost; the quota counts the database's used pages, history and indexes
    included. Shrinking and removing always work, so a full workspace can be cleaned up.

    \b
    Example:
      agentfs limits ws.db
      agentfs limits ws.db --file-size 1G --workspace-size 20G
      agentfs limits ws.db --workspace-size none
    """
    source = click.get_current_context().get_parameter_source("workspace_size")
    if file_size is not None or source is click.core.ParameterSource.COMMANDLINE:
        now = ws.set_limits(
            file_size=file_size,
            workspace_size=workspace_size
            if source is click.core.ParameterSource.COMMANDLINE
            else ...,
        )
    else:
        now = ws.limits
    data = {
        "file_size": now.file_size,
        "workspace_size": now.workspace_size,
        "used": ws.database_bytes(),
    }

    def lines(d: dict[str, Any]) -> list[str]:
        quota = "none" if d["workspace_size"] is None else human_size(d["workspace_size"])
        return fields_of(
            {
                "largest file": human_size(d["file_size"]),
                "workspace quota": quota,
                "used": human_size(d["used"]),
            }
        )

    render(data, as_json, lines)


@cli.command()
@workspace_argument
@json_option
def info(ws: agentfs.Workspace, as_json: bool) -> None:
    """Show counts and sizes: files, directories, bytes, chunks, keys, tool calls.

    \b
    Example:
      agentfs info ws.db
      agentfs info ws.db --json
    """
    render(ws.info().as_dict(), as_json)


# --- looking around ------------------------------------------------------------------------------


def _entry(ws: agentfs.Workspace, path: str, st: agentfs.Stat) -> dict[str, Any]:
    """One listing entry: name, path, ``lstat`` fields and a symlink's target."""
    entry = {"name": posixpath.basename(path) or "/", "path": path, **st.as_dict()}
    if st.is_symlink():
        entry["target"] = ws.readlink(path)
    return entry


def _listing(ws: agentfs.Workspace, path: str, recursive: bool) -> list[tuple[str, list[dict]]]:
    """(directory, entries) groups for ``ls``; a non-directory is listed as itself."""
    path = paths.normalize(path)
    if not ws.stat(path).is_dir():
        return [(path, [_entry(ws, path, ws.lstat(path))])]
    tops = [d for d, _, _ in ws.walk(path)] if recursive else [path]
    return [
        (d, [_entry(ws, paths.join(d, name), st) for name, st in ws.readdir_plus(d)]) for d in tops
    ]


def _long_line(entry: dict[str, Any]) -> str:
    mtime = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry["mtime_ns"] / 1e9))
    target = f" -> {entry['target']}" if "target" in entry else ""
    mode = statmod.filemode(entry["mode"])
    return f"{mode} {entry['nlink']:>3} {entry['size']:>10} {mtime} {entry['name']}{target}"


def _ls_lines(groups: list[tuple[str, list[dict]]], long: bool, headers: bool) -> Iterator[str]:
    for i, (directory, entries) in enumerate(groups):
        if headers:
            yield from ([""] if i else []) + [f"{directory}:"]
        yield from (_long_line(e) if long else e["name"] for e in entries)


@cli.command()
@workspace_argument
@click.argument("path", default="/")
@click.option("-l", "long", is_flag=True, help="Long format: type/permissions, links, size, mtime.")
@click.option("-R", "recursive", is_flag=True, help="List subdirectories recursively.")
@json_option
def ls(ws: agentfs.Workspace, path: str, long: bool, recursive: bool, as_json: bool) -> None:
    """List a directory (default /), sorted by name. --json gives every entry's stat fields.

    \b
    Example:
      agentfs ls ws.db
      agentfs ls ws.db /notes -l
      agentfs ls ws.db / -R --json
    """
    groups = _listing(ws, path, recursive)
    if as_json:
        render([entry for _, entries in groups for entry in entries], True)
    else:
        render(groups, False, lambda g: _ls_lines(g, long, headers=recursive))


def _tree(ws: agentfs.Workspace, top: str) -> dict[str, Any]:
    """The subtree at ``top`` as nested ``{name, type, children | target}`` (no recursion, so
    depth is bounded only by the longest path, paths.TREE_PATH_MAX)."""
    top = paths.normalize(top)
    root: dict[str, Any] = {"name": top, "type": ws.stat(top).type}
    stack = [(top, root)] if root["type"] == "dir" else []
    while stack:
        directory, node = stack.pop()
        node["children"] = []
        for e in ws.scandir(directory):
            child: dict[str, Any] = {"name": e.name, "type": e.type}
            if e.is_dir():
                stack.append((paths.join(directory, e.name), child))
            elif e.is_symlink():
                child["target"] = ws.readlink(paths.join(directory, e.name))
            node["children"].append(child)
    return root


def _tree_lines(root: dict[str, Any]) -> Iterator[str]:
    """``tree(1)``-style lines, then a count of directories and other entries."""
    stack: list[tuple[dict[str, Any], str, bool]] = []

    def push(children: list[dict[str, Any]], prefix: str) -> None:
        last = len(children) - 1
        stack.extend((child, prefix, i == last) for i, child in reversed(list(enumerate(children))))

    yield root["name"]
    push(root.get("children", []), "")
    dirs = others = 0
    while stack:
        node, prefix, last = stack.pop()
        dirs, others = (dirs + 1, others) if node["type"] == "dir" else (dirs, others + 1)
        target = f" -> {node['target']}" if "target" in node else ""
        yield f"{prefix}{'└── ' if last else '├── '}{node['name']}{target}"
        push(node.get("children", []), prefix + ("    " if last else "│   "))
    yield ""
    yield f"{count_of(dirs, 'directory', 'directories')}, {count_of(others, 'file')}"


@cli.command()
@workspace_argument
@click.argument("path", default="/")
@json_option
def tree(ws: agentfs.Workspace, path: str, as_json: bool) -> None:
    """Show a directory tree (default /); symlinks are shown, never followed.

    \b
    Example:
      agentfs tree ws.db
      agentfs tree ws.db /src --json
    """
    render(_tree(ws, path), as_json, _tree_lines)


def _stat_lines(data: dict[str, Any]) -> list[str]:
    shown = dict(data, mode=f"{data['perm']} ({statmod.filemode(data['mode'])})")
    del shown["perm"]
    for key in ("atime_ns", "mtime_ns", "ctime_ns"):
        shown[key[:-3]] = when_text(shown.pop(key) / 1e9)
    return fields_of(shown)


@cli.command()
@workspace_argument
@click.argument("path")
@json_option
def stat(ws: agentfs.Workspace, path: str, as_json: bool) -> None:
    """Show a file's metadata (of a symlink itself, not its target, like lstat).

    \b
    Example:
      agentfs stat ws.db /notes/todo.md
      agentfs stat ws.db /notes --json
    """
    path = paths.normalize(path)
    render(_entry(ws, path, ws.lstat(path)), as_json, _stat_lines)


# --- reading and writing files -------------------------------------------------------------------


@cli.command()
@workspace_argument
@click.argument("files", metavar="PATH...", nargs=-1, required=True)
@click.option("--version", "version", type=int, metavar="N", help="Version N (see history).")
def cat(ws: agentfs.Workspace, files: tuple[str, ...], version: int | None) -> None:
    """Write files' raw bytes to stdout, one after another.

    \b
    Example:
      agentfs cat ws.db /notes/todo.md
      agentfs cat ws.db /data/model.bin > model.bin
      agentfs cat ws.db /notes/todo.md --version 2
    """
    out = sys.stdout.buffer
    for path in files:
        out.write(ws.read(path) if version is None else ws.read_version(path, version))
    out.flush()


@cli.command()
@workspace_argument
@click.argument("path")
@click.argument("content", required=False)
@click.option(
    "--from-file",
    "host_file",
    metavar="HOSTFILE",
    type=click.File("rb"),
    help="Take the content from this host file ('-' for stdin).",
)
@click.option("-p", "--parents", is_flag=True, help="Create missing parent directories.")
@click.option("--append", is_flag=True, help="Add to the end of the file instead of replacing it.")
def write(
    ws: agentfs.Workspace,
    path: str,
    content: str | None,
    host_file: Any,
    parents: bool,
    append: bool,
) -> None:
    """Create or replace a file with CONTENT, a host file's bytes, or stdin (binary-safe).

    \b
    Example:
      agentfs write ws.db /notes/todo.md "ship it" -p
      agentfs write ws.db /data/blob.bin --from-file blob.bin
      curl -s https://example.com | agentfs write ws.db /pages/example.html
      date | agentfs write ws.db /log.txt --append
    """
    if content is not None and host_file is not None:
        raise click.UsageError("give CONTENT or --from-file, not both")
    if content is not None:
        data = content.encode("utf-8", "surrogateescape")  # argv bytes come back unchanged
    else:
        data = (host_file or sys.stdin.buffer).read()
    if append:
        size = ws.append(path, data, parents=parents)
    else:
        size = ws.write(path, data, parents=parents).st_size
    note = ws.history_settings.unversioned(size)
    if note is not None:
        click.echo(f"agentfs: note: {paths.normalize(path)}: {note}", err=True)


# --- the namespace -------------------------------------------------------------------------------


@cli.command()
@workspace_argument
@click.argument("targets", metavar="PATH...", nargs=-1, required=True)
@click.option("-p", "--parents", is_flag=True, help="Create parents; no error if it exists.")
def mkdir(ws: agentfs.Workspace, targets: tuple[str, ...], parents: bool) -> None:
    """Create directories.

    \b
    Example:
      agentfs mkdir ws.db /src
      agentfs mkdir ws.db -p /src/pkg/tests
    """
    for path in targets:
        ws.mkdir(path, parents=parents, exist_ok=parents)


@cli.command()
@workspace_argument
@click.argument("targets", metavar="PATH...", nargs=-1, required=True)
@click.option("-r", "--recursive", is_flag=True, help="Remove directories and their contents.")
@click.option("-f", "--force", is_flag=True, help="No error for paths that do not exist.")
def rm(ws: agentfs.Workspace, targets: tuple[str, ...], recursive: bool, force: bool) -> None:
    """Remove files, symlinks and empty directories; with -r, whole trees.

    \b
    Example:
      agentfs rm ws.db /notes/old.md
      agentfs rm ws.db -r /tmp
      agentfs rm ws.db -f /maybe-there
    """
    for path in targets:
        try:
            ws.remove(path, recursive=recursive)
        except FileNotFoundError:
            if not force:
                raise


@cli.command()
@workspace_argument
@click.argument("src")
@click.argument("dst")
def mv(ws: agentfs.Workspace, src: str, dst: str) -> None:
    """Rename SRC to DST atomically (rename(2): DST is replaced, never moved into).

    \b
    Example:
      agentfs mv ws.db /draft.md /notes/final.md
    """
    ws.rename(src, dst)


@cli.command()
@workspace_argument
@click.argument("src")
@click.argument("dst")
@click.option("-r", "--recursive", is_flag=True, help="Copy a directory tree.")
def cp(ws: agentfs.Workspace, src: str, dst: str, recursive: bool) -> None:
    """Copy a file (bytes and mode) or, with -r, a directory tree, in one transaction.

    \b
    Example:
      agentfs cp ws.db /notes/todo.md /notes/todo.bak
      agentfs cp ws.db -r /src /src-backup
    """
    ws.copy(src, dst, recursive=recursive)


@cli.command()
@workspace_argument
@click.argument("target")
@click.argument("link")
@click.option("-s", "--symbolic", is_flag=True, help="Make a symlink instead of a hard link.")
def ln(ws: agentfs.Workspace, target: str, link: str, symbolic: bool) -> None:
    """Make LINK a hard link to TARGET, or with -s a symlink whose text is TARGET.

    \b
    Example:
      agentfs ln ws.db /data/v2.csv /data/current.csv
      agentfs ln ws.db -s ../data/v2.csv /notes/latest.csv
    """
    if symbolic:
        ws.symlink(target, link)
    else:
        ws.link(target, link)


# --- moving trees in and out --------------------------------------------------------------------


@contextmanager
def _progress(label: str, show: bool) -> Iterator[Callable[[int, int], None]]:
    """A ``progress(done_files, total_files)`` callback that draws a bar on stderr, only when
    stderr is a terminal and the output is not JSON."""
    stderr = sys.stderr
    with ExitStack() as stack:
        bars: list[Any] = []

        def update(done: int, total: int) -> None:
            if not bars:
                bar = click.progressbar(length=max(total, 1), label=label, file=stderr)
                bars.append(stack.enter_context(bar))
            bars[0].length = max(total, 1)
            bars[0].update(done - bars[0].pos)

        yield update if show and stderr.isatty() else (lambda done, total: None)


def _report_transfer(stats: Any, as_json: bool, verb: str, where: str) -> None:
    """Skipped entries as warnings on stderr, then a one-line summary (or the JSON stats)."""
    for skipped in stats.skipped:
        click.echo(f"agentfs: warning: skipped {skipped}", err=True)
    render(
        stats.as_dict(),
        as_json,
        lambda s: [
            f"{verb} {count_of(s['files'], 'file')}, "
            f"{count_of(s['directories'], 'directory', 'directories')}, "
            f"{count_of(s['symlinks'], 'symlink')} ({human_size(s['bytes'])}) {where}"
            + (f", {len(s['skipped'])} skipped" if s["skipped"] else "")
        ],
    )


@cli.command("import")
@workspace_argument
@click.argument("host_dir", metavar="HOSTDIR", type=click.Path(exists=True, file_okay=False))
@click.argument("dest", default="/")
@json_option
def import_(ws: agentfs.Workspace, host_dir: str, dest: str, as_json: bool) -> None:
    """Copy the contents of a host directory into DEST (default /) of the workspace.

    \b
    Example:
      agentfs import ws.db ./project
      agentfs import ws.db ./project /src --json
    """
    with _progress("importing", not as_json) as progress:
        stats = transfer.import_tree(ws, host_dir, dest, progress=progress)
    _report_transfer(stats, as_json, "imported", f"from {host_dir} into {dest}")


@cli.command()
@workspace_argument
@click.argument("args", metavar="[SRC] HOSTDIR", nargs=-1)
@click.option(
    "--agentfs",
    "agentfs_out",
    metavar="OUT.db",
    type=WORKSPACE_FILE,
    help="Write a plain AgentFS v0.4 file (opens in Turso's agentfs) instead of a directory.",
)
@click.option(
    "--overwrite", is_flag=True, help="Replace host files that differ from the workspace's."
)
@json_option
def export(
    ws: agentfs.Workspace,
    args: tuple[str, ...],
    agentfs_out: Path | None,
    overwrite: bool,
    as_json: bool,
) -> None:
    """Copy SRC (default /) out to a host directory, or the workspace to a plain AgentFS file.

    Into an existing directory, files and symlinks that differ from the workspace's (edited
    there since the last export) are listed and nothing is written, unless --overwrite.

    \b
    Example:
      agentfs export ws.db ./out
      agentfs export ws.db /src ./src-copy --overwrite
      agentfs export ws.db --agentfs plain.db
    """
    if agentfs_out is not None and args:
        raise click.UsageError("--agentfs OUT.db takes no SRC or HOSTDIR")
    if agentfs_out is None and len(args) not in (1, 2):
        raise click.UsageError("expected [SRC] HOSTDIR (or --agentfs OUT.db)")
    with _progress("exporting", not as_json) as progress:
        if agentfs_out is not None:
            stats = transfer.export_agentfs(ws, agentfs_out, progress=progress)
            where = f"to {agentfs_out}"
        else:
            src, host_dir = args if len(args) == 2 else ("/", args[0])
            stats = transfer.export_tree(ws, src, host_dir, overwrite=overwrite, progress=progress)
            where = f"from {src} to {host_dir}"
    _report_transfer(stats, as_json, "exported", where)


# --- checking ------------------------------------------------------------------------------------


def _fsck_lines(report: Any) -> Iterator[str]:
    for problem in report.problems:
        yield f"{problem.check}: {problem.message}" + (
            " (repairable)" if problem.repairable else ""
        )
    yield from (f"repaired: {what}" for what in report.repaired)
    if report.clean:
        yield "clean: no problems found" if not report.repaired else "clean after repair"


def _workspace_to_check(path: Path) -> agentfs.Workspace:
    """Read-only, so a check writes nothing; a file agentfs has not opened yet (made by
    agentfs-sdk, or a plain export) cannot be read that way and is adopted first, as by any
    other command."""
    try:
        return workspace_for_command(path, readonly=True)
    except OSError as exc:
        if exc.errno != errno.EROFS:
            raise
    return workspace_for_command(path)


@cli.command()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.option("--repair", is_flag=True, help="Fix what can be fixed, then report.")
@json_option
def fsck(workspace: Path, repair: bool, as_json: bool) -> None:
    """Check the workspace's invariants (writing nothing); exit 1 when problems remain.

    \b
    Example:
      agentfs fsck ws.db
      agentfs fsck ws.db --repair
      agentfs fsck ws.db --json
    """
    if repair:
        report = fsck_checks.repair(workspace_for_command(workspace))
    else:
        report = fsck_checks.check(_workspace_to_check(workspace))
    render(report.as_dict(), as_json, lambda _: _fsck_lines(report))
    if not report.clean:
        click.get_current_context().exit(1)


# --- the key-value store -------------------------------------------------------------------------


@cli.group()
@click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
@click.pass_context
def kv(ctx: click.Context, workspace: Path) -> None:
    """The workspace's key-value store: JSON values under text keys.

    \b
    Example:
      agentfs kv ws.db set config '{"model": "small", "retries": 3}'
      agentfs kv ws.db get config
      agentfs kv ws.db list session/ --json
    """
    ctx.obj = workspace


def _json_or_text(value: str) -> Any:
    """VALUE as JSON when it parses (NaN and Infinity do not count), else as a JSON string."""

    def no_constants(name: str) -> Any:
        raise ValueError(name)

    try:
        return json.loads(value, parse_constant=no_constants)
    except ValueError:
        return value


@kv.command("get")
@click.argument("key")
@group_workspace
def kv_get(ws: agentfs.Workspace, key: str) -> None:
    """Print the value of KEY as JSON (exit 1 when it is not set).

    \b
    Example:
      agentfs kv ws.db get config
    """
    click.echo(json.dumps(ws.kv.get(key), ensure_ascii=False))


@kv.command("set")
@click.argument("key")
@click.argument("value")
@group_workspace
def kv_set(ws: agentfs.Workspace, key: str, value: str) -> None:
    """Set KEY to VALUE, parsed as JSON; text that is not JSON is stored as a string.

    \b
    Example:
      agentfs kv ws.db set retries 3
      agentfs kv ws.db set owner alice
      agentfs kv ws.db set config '{"model": "small"}'
    """
    ws.kv.set(key, _json_or_text(value))


@kv.command("list")
@click.argument("prefix", default="")
@json_option
@group_workspace
def kv_list(ws: agentfs.Workspace, prefix: str, as_json: bool) -> None:
    """List keys starting with PREFIX (default: all), with their JSON values.

    \b
    Example:
      agentfs kv ws.db list
      agentfs kv ws.db list session/ --json
    """
    entries = [entry.as_dict() for entry in ws.kv.list(prefix)]
    render(
        entries,
        as_json,
        lambda es: [f"{e['key']}\t{json.dumps(e['value'], ensure_ascii=False)}" for e in es],
    )


@kv.command("rm")
@click.argument("key")
@group_workspace
def kv_rm(ws: agentfs.Workspace, key: str) -> None:
    """Delete KEY (exit 1 when it is not set).

    \b
    Example:
      agentfs kv ws.db rm session/42
    """
    if not ws.kv.delete(key):
        raise agentfs.KeyNotFoundError(key)


# --- the tool-call log ---------------------------------------------------------------------------


def _call_lines(calls: list[dict[str, Any]]) -> Iterator[str]:
    for call in calls:
        outcome = f"error: {call['error']}" if call["error"] is not None else "ok"
        params = json.dumps(call["parameters"], ensure_ascii=False)
        params = params if len(params) <= 60 else params[:57] + "..."
        yield (
            f"{when_text(call['started_at'])}  #{call['id']:<5} {call['name']:<16} "
            f"{call['duration_ms']:>7} ms  {outcome:<6} {params}"
        )
        for write in call["writes"]:
            yield f"{'':<28}wrote {write['path']} v{write['version']}"


def _stats_lines(rows: list[dict[str, Any]]) -> Iterator[str]:
    yield f"{'tool':<24} {'calls':>7} {'ok':>7} {'failed':>7} {'avg ms':>9}"
    for r in rows:
        yield (
            f"{r['name']:<24} {r['total_calls']:>7} {r['successful']:>7} {r['failed']:>7}"
            f" {r['avg_duration_ms']:>9.1f}"
        )


@cli.command()
@workspace_argument
@click.option("--tool", metavar="NAME", help="Only calls of this tool.")
@click.option("--path", metavar="PATH", help="Only calls that wrote a version of this file.")
@click.option(
    "--version",
    "version",
    metavar="N",
    type=click.IntRange(min=1),
    help="With --path: the call that wrote version N.",
)
@click.option("--limit", metavar="N", type=click.IntRange(min=0), help="At most this many calls.")
@click.option("--stats", "show_stats", is_flag=True, help="Per-tool totals instead of calls.")
@json_option
def timeline(
    ws: agentfs.Workspace,
    tool: str | None,
    path: str | None,
    version: int | None,
    limit: int | None,
    show_stats: bool,
    as_json: bool,
) -> None:
    """Show the tool-call log, newest first, with the file versions each call wrote; or
    per-tool totals with --stats.

    \b
    Example:
      agentfs timeline ws.db --limit 20
      agentfs timeline ws.db --tool read_file --json
      agentfs timeline ws.db --path /src/app.py --version 7
      agentfs timeline ws.db --stats
    """
    ws.tool_calls.publish()  # calls a running toolset staged but has not published yet
    if show_stats:
        rows = [s.as_dict() for s in ws.tool_calls.stats() if tool in (None, s.name)]
        render(rows, as_json, _stats_lines)
        return
    if version is not None and path is None:
        raise CLIError("--version needs --path")
    key = ws.history_path(path) if path is not None else None
    if key is not None and version is not None:
        found = ws.tool_calls.writer(key, version)
        if found is None:
            raise CLIError(f"no tool call wrote version {version} of {key}")
        calls = [found]
    else:
        calls = ws.tool_calls.list(name=tool, limit=limit, path=key)
    writes = ws.tool_calls.writes_of(call.id for call in calls)
    rows = [
        {**call.as_dict(), "writes": [{"path": p, "version": n} for p, n in writes[call.id]]}
        for call in calls
    ]
    render(rows, as_json, _call_lines)
