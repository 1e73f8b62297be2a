"""What every ``agentfs`` command shares: the group, one-line user errors, the workspace
argument, ``--json`` and rendering.

Every command names the workspace file first (``agentfs cat WS.db /notes.txt``; for the
key-value store, ``agentfs kv WS.db get KEY``), makes one library call and prints the result
through ``render``: lines for people, ``--json`` for programs. The logic lives in the core.

Exit status: 0 on success; 1 for a user error (printed as one line, ``agentfs: <reason>``, on
stderr) and when ``fsck`` finds problems; 2 for a usage error (click's default). User errors
are converted in exactly one place, ``AgentFSGroup.invoke``: ``OSError`` from the core and
``agentfs.AgentFSError`` (a missing kv key, a value that is not JSON). Anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

import agentfs

if TYPE_CHECKING:
    from agentfs.tools.policy import Policy
    from agentfs.tools.spec import Surface

# --- errors: the one place user errors become a line and an exit status ----------------------


class CLIError(click.ClickException):
    """A user error: printed as ``agentfs: <message>`` on one line, exit status 1."""

    def show(self, file: Any = None) -> None:
        click.echo(f"agentfs: {self.format_message()}", err=True)


def _one_line(text: str) -> str:
    return " ".join(text.split("\n"))


def _describe_os_error(exc: OSError) -> str:
    """``/a -> /b: Reason: detail`` from the path(s) and message the core put in the error."""
    names = " -> ".join(str(name) for name in (exc.filename, exc.filename2) if name is not None)
    reason = exc.strerror or str(exc)
    return f"{names}: {reason}" if names else reason


class AgentFSGroup(click.Group):
    """The root command group; its ``invoke`` turns user errors into one line and exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise  # click quiets a closed pipe (agentfs cat ... | head)
            raise CLIError(_one_line(_describe_os_error(exc))) from exc
        except agentfs.AgentFSError as exc:
            raise CLIError(_one_line(str(exc))) from exc


def _show_warning(message: Warning | str, *_args: object, **_kwargs: object) -> None:
    """A warning from the library (a saved token moved out of a workspace file) as one line
    on stderr, like an error, instead of Python's file-and-line form."""
    click.echo(f"agentfs: warning: {_one_line(str(message))}", err=True)


# --- shared parameters: the workspace, --json ------------------------------------------------

WORKSPACE_FILE = click.Path(dir_okay=False, path_type=Path)

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _policy_from(_ctx: click.Context, _param: click.Parameter, path: Path | None) -> Policy:
    """The ``--policy`` file as a ``Policy`` (none given: the default policy); a bad file is
    one error line. The tools are imported here, by the commands that take a policy, not by
    every command (they are a third of ``agentfs``'s start-up)."""
    from agentfs.tools.policy import Policy

    try:
        return Policy.load(path) if path is not None else Policy()
    except ValueError as exc:
        raise CLIError(str(exc)) from None


policy_option = click.option(
    "--policy",
    "policy",
    metavar="FILE",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    callback=_policy_from,
    help="A policy in TOML or JSON (docs/policies.md).",
)


profile_option = click.option(
    "--profile",
    metavar="NAME",
    default="agentfs",
    show_default=True,
    help='The tools under one ecosystem\'s names and shapes (docs/mcp.md, "Profiles").',
)


preset_option = click.option(
    "--preset",
    metavar="NAME",
    help='Only the tools of one kind of agent: coding or memory (docs/mcp.md, "Profiles").',
)


def surface_of(profile: str) -> Surface:
    """The tools of ``profile``; an unknown one is a ``CLIError`` that lists the profiles."""
    from agentfs.tools import catalog  # the tools load for the commands that use them

    try:
        return catalog.profile(profile)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def workspace_for_command(path: Path, *, create: bool = False, **options: Any) -> agentfs.Workspace:
    """Open ``path`` for the running command; it is closed when the command's context ends.

    Only ``init`` creates: any other command refuses a missing file instead of making one.
    """
    options.setdefault("actor", os.environ.get("AGENTFS_ACTOR", "cli"))
    options.setdefault("thread", os.environ.get("AGENTFS_THREAD") or None)
    try:
        ws = agentfs.Workspace(path, create=create, **options)
    except FileNotFoundError as exc:
        if create:
            raise
        what = "an empty file, not a workspace" if path.is_file() else "no such workspace"
        raise CLIError(f"{path}: {what} (create it with: agentfs init {path})") from exc
    return click.get_current_context().with_resource(ws)


def workspace_argument(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the ``WS`` argument (first) and call ``command`` with the open ``Workspace``."""

    @click.argument("workspace", metavar="WS", type=WORKSPACE_FILE)
    @functools.wraps(command)
    def wrapper(workspace: Path, **kwargs: Any) -> Any:
        return command(workspace_for_command(workspace), **kwargs)

    return wrapper


def group_workspace(command: Callable[..., Any]) -> Callable[..., Any]:
    """For subcommands of a group that took ``WS`` (``agentfs kv WS get KEY``): open it lazily,
    so ``agentfs kv WS get --help`` works without a workspace."""

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        return command(workspace_for_command(click.get_current_context().obj), **kwargs)

    return wrapper


# --- rendering ----------------------------------------------------------------------------------


def render(data: Any, as_json: bool, text: Callable[[Any], Iterable[str]] | None = None) -> None:
    """Print JSON-ready ``data`` as JSON, or as the lines ``text(data)`` makes (default: one
    ``key: value`` line per field)."""
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for line in (text or fields_of)(data):
        click.echo(line)


def fields_of(data: dict[str, Any]) -> list[str]:
    width = max(map(len, data), default=0) + 1
    return [f"{key + ':':<{width}} {value}" for key, value in data.items()]


def when_text(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class ByteSize(click.ParamType):
    """A size in bytes, with an optional binary suffix (``512K``, ``64M``, ``4G``, ``1T``);
    ``none`` too where ``allow_none`` (no limit)."""

    name = "size"

    def __init__(self, *, allow_none: bool = False) -> None:
        self.allow_none = allow_none

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int) or value is None:
            return value
        text = str(value).strip().upper().removesuffix("B").removesuffix("I")
        if self.allow_none and text == "NONE":
            return None
        number, unit = (text[:-1], text[-1]) if text[-1:] in _SIZE_UNITS else (text, "")
        if not number.isdigit():
            self.fail(f"{value!r} is not a size (bytes, or a number with K, M, G or T)", param, ctx)
        return int(number) * _SIZE_UNITS[unit]


def count_of(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


# --- the command group -----------------------------------------------------------------------


@click.group(cls=AgentFSGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agentfs-workspace", prog_name="agentfs")
def cli() -> None:
    """An AI agent's workspace in one SQLite file: files, a key-value store, a tool-call log.

    Every command names the workspace file first. Errors print one line on stderr and exit 1;
    usage errors exit 2.

    \b
    Example:
      agentfs init ws.db
      echo "- ship it" | agentfs write ws.db /notes/todo.md -p
      agentfs ls ws.db /notes -l
      agentfs cat ws.db /notes/todo.md
    """
