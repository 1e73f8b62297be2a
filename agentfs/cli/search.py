"""The search commands of the CLI: glob, grep, search and index. Thin like the rest of
``agentfs.cli``: parse, call the core, print."""

from __future__ import annotations

import sys
from dataclasses import asdict
from typing import Any

import click

import agentfs
from agentfs.cli.base import cli, human_size, json_option, render, workspace_argument
from agentfs.search import minilm
from agentfs.search.embedders import BUILTIN
from agentfs.search.ranking import DEFAULTS


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


def _grep_lines(lines: list[dict], context: bool) -> list[str]:
    """ripgrep's layout: ``path:line:text`` for a match, ``path-line-text`` for context, and,
    when context was asked for, ``--`` between groups of lines that are not adjacent."""
    out: list[str] = []
    previous: tuple[str, int] | None = None
    for ln in lines:
        here = (ln["path"], ln["line"])
        apart = previous is not None and (previous[0] != here[0] or previous[1] + 1 != here[1])
        if context and apart:
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
    """Search text files for PATTERN (a regular expression in RE2's syntax, which is rg's) at or
    below PATH, sorted by path, like ``rg --hidden --no-ignore -n``. Exits 1 when nothing
    matches, as grep does; no pattern can make it hang (RE2 runs in linear time).

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
        context = bool(before or after or context)
        render(
            [ln._asdict() for ln in result.lines],
            as_json,
            lambda lines: _grep_lines(lines, context),
        )
    if not result.files:
        click.get_current_context().exit(1)


@cli.command("search")
@workspace_argument
@click.argument("query")
@click.option(
    "--mode",
    type=click.Choice(["bm25", "vector", "hybrid"]),
    help="Ranking (default: hybrid when the workspace has vectors, else bm25).",
)
@click.option(
    "-k", "--top-k", type=click.IntRange(min=1), default=DEFAULTS.top_k, show_default=True
)
@click.option("--path", default=DEFAULTS.path, help="Only files at or below this path.")
@click.option("--glob", "name_glob", metavar="GLOB", help="Only files matching GLOB.")
@click.option(
    "--min-score",
    type=click.FloatRange(0, 1),
    default=DEFAULTS.min_score,
    help="Drop weaker hits.",
)
@click.option(
    "--weight",
    "vector_weight",
    type=click.FloatRange(0, 1),
    default=DEFAULTS.vector_weight,
    show_default=True,
    help="Hybrid: the share of the vector score.",
)
@click.option("--content", "include_content", is_flag=True, help="Print each hit's whole chunk.")
@click.option(
    "--snippet-length",
    type=click.IntRange(min=1),
    default=DEFAULTS.snippet_length,
    show_default=True,
)
@json_option
def search_(
    ws: agentfs.Workspace,
    query: str,
    mode: str | None,
    top_k: int,
    path: str,
    name_glob: str | None,
    min_score: float,
    vector_weight: float,
    include_content: bool,
    snippet_length: int,
    as_json: bool,
) -> None:
    """Find the files that best answer QUERY (words, or a question), best first, each with
    the line range and a snippet of its best chunk. Exits 1 when nothing is found.

    \b
    Example:
      agentfs search ws.db 'retry with exponential backoff'
      agentfs search ws.db 'parse the config file' --mode bm25 --glob '**/*.py' --json
    """
    found = ws.search(
        query,
        mode=mode,  # type: ignore[arg-type]
        top_k=top_k,
        min_score=min_score,
        path=path,
        glob=name_glob,
        include_content=include_content,
        snippet_length=snippet_length,
        vector_weight=vector_weight,
    )
    if found.note:
        click.echo(f"agentfs: {found.note}", err=True)
    render(asdict(found), as_json, _search_lines)
    if not found.hits:
        click.get_current_context().exit(1)


def _search_lines(found: dict[str, Any]) -> list[str]:
    out = []
    for hit in found["hits"]:
        first, last = hit["line_range"]
        details = " ".join(f"{k} {v:.3f}" for k, v in hit["score_details"].items() if v is not None)
        out.append(f"{hit['path']}:{first}-{last}  score {hit['score']:.3f} ({details})")
        body = hit["content"] if hit["content"] is not None else hit["snippet"]
        out.extend(f"    {line}" for line in body.splitlines())
    if found["pending"]:
        out.append(f"({found['pending']} chunks wait for a vector: run agentfs index WS)")
    return out


@cli.command("index")
@workspace_argument
@click.option("--status", "status_only", is_flag=True, help="Only show what is indexed.")
@click.option("--rebuild", is_flag=True, help="Re-index every file from its content first.")
@click.option("--path", default="/", help="With --rebuild: only files at or below this path.")
@click.option(
    "--embedder",
    help=f"Embed chunks with this model ({', '.join(BUILTIN)}); chosen once per workspace.",
)
@click.option("--replace", is_flag=True, help="Switch to another embedder: re-embed everything.")
@click.option(
    "--no-embed", is_flag=True, help="Only BM25 and trigrams: do not choose the default model."
)
@click.option("--on/--off", "enabled", default=None, help="Index text files as they are written.")
@click.option("--max-size", type=click.IntRange(min=0), help="Leave out files larger (bytes).")
@json_option
def index_(
    ws: agentfs.Workspace,
    status_only: bool,
    rebuild: bool,
    path: str,
    embedder: str | None,
    replace: bool,
    no_embed: bool,
    enabled: bool | None,
    max_size: int | None,
    as_json: bool,
) -> None:
    """Bring the search index up to date and embed the chunks that wait for a vector (with a
    progress bar), then show its status. Searches index what was written first by themselves;
    vectors are made here. The first run chooses minilm when the embed extra is installed
    (unless --embedder or --no-embed says otherwise).

    \b
    Example:
      agentfs index ws.db --embedder minilm     # choose the model, embed everything
      agentfs index ws.db                       # embed what changed since
      agentfs index ws.db --status --json
      agentfs index ws.db --rebuild --path /src
    """
    if enabled is not None or max_size is not None:
        ws.configure_index(enabled=enabled, max_bytes=max_size)
    first = embedder is None and not (status_only or no_embed) and ws.embedder() is None
    if first and minilm.available():
        embedder = "minilm"
        click.echo("agentfs: embedding with minilm, the default model", err=True)
    if status_only:
        status = ws.index_status()
    else:
        bar: Any = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            if bar is None:  # made at the first batch: nothing is printed if none comes
                bar = click.progressbar(length=total, label="embedding", file=sys.stderr)
                bar.__enter__()
            bar.update(done - bar.pos)

        try:
            status = ws.index(
                None if no_embed else embedder,
                rebuild=rebuild,
                path=path,
                replace=replace,
                progress=progress,
            )
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
    render(asdict(status), as_json, _status_lines)


def _status_lines(status: dict[str, Any]) -> list[str]:
    files = status["files"]
    lines = [
        f"indexing:  {'on' if status['enabled'] else 'off'},"
        f" files up to {human_size(status['max_bytes'])}",
        f"files:     {files.get('text', 0)} text, {files.get('binary', 0)} binary,"
        f" {files.get('too_large', 0)} too large, {files.get('off', 0)} not indexed (off)",
        f"chunks:    {status['chunks']}",
        f"embedder:  {status['embedder'] or '(none: bm25 only)'}"
        + (f", dimension {status['dim']}" if status["dim"] else ""),
        f"vectors:   {status['embedded']}, {status['pending']} pending",
    ]
    if status["unread"]:
        lines.append(f"base:      {status['unread']} files not read in yet (not indexed)")
    lines.extend(f"skipped:   {path} ({why.replace('_', ' ')})" for path, why in status["skipped"])
    return lines
