"""``execute_command``: a shell command run in the workspace mounted as a directory, or in a copy.

Programs see the agent's files as a real tree and what they write lands in the workspace
(docs/mount.md). Every call is rewindable (a snapshot is taken first), needs approval and runs
in the sandbox by default (docs/security.md), and fails closed: where no sandbox can be built
or no mount made and the policy allows no copy, nothing runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from agentfs.mount.exec import MountError
from agentfs.mount.sandbox import NAME as ENV_NAME
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.spec import ToolInput, ToolOutput, tool

#: Most bytes of a command line: the shell takes it as one argument, and Linux takes at most
#: 128 KiB in one, its closing NUL included (MAX_ARG_STRLEN).
MOST_LINE_BYTES = 128 * 1024 - 1


def check_line(command: str, env: dict[str, str] | None = None) -> None:
    """Refuse, before anything runs (and before the snapshot a run takes), a command line
    or environment no process can be started with: a NUL byte, text that is not UTF-8 (a
    lone surrogate, which JSON can carry), a line longer than one argument may be."""
    texts = [("command", command)] + [(f"env {name}", value) for name, value in (env or {}).items()]
    for where, text in texts:
        if "\0" in text:
            raise ToolError(
                "invalid_argument", f"{where}: a NUL byte cannot be passed to a process"
            )
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise ToolError(
                "invalid_argument", f"{where}: not UTF-8 text (a lone surrogate)"
            ) from None
        if size > MOST_LINE_BYTES:
            raise ToolError(
                "too_large",
                f"{where}: {size:,} bytes, over the {MOST_LINE_BYTES:,} bytes Linux takes in one"
                " argument; not run: write long input to a file and pass its path",
            )


class ExecuteCommandInput(ToolInput):
    command: str = Field(
        min_length=1, description="a shell command line (run by /bin/sh -c), e.g. 'pytest -q'"
    )
    cwd: str | None = Field(
        None, description="the working directory, a workspace path (default: the root)"
    )
    timeout_ms: int = Field(
        10_000, ge=1, le=3_600_000, description="kill the command and all it started after this"
    )
    env: dict[str, str] | None = Field(
        None, description="extra environment variables (names: letters, digits and _)"
    )

    @field_validator("env")
    @classmethod
    def _names(cls, env: dict[str, str] | None) -> dict[str, str] | None:
        bad = [key for key in env or {} if not ENV_NAME.fullmatch(key)]
        if bad:
            raise ValueError(f"not an environment variable's name: {bad[0]!r}")
        return env

    max_output_kb: int = Field(
        64, ge=1, le=10_240, description="keep at most this much of stdout and of stderr"
    )


class ExecuteCommandOutput(ToolOutput):
    stdout: str
    stderr: str
    exit_code: int = Field(
        description="the command's exit status; -9 when its timeout killed it; negative (or,"
        " sandboxed, 128 + N) when a signal N killed it"
    )
    duration_ms: int
    timed_out: bool
    aborted: bool
    stdout_truncated: bool
    stderr_truncated: bool
    snapshot: str | None = Field(description="restore this snapshot to undo the command")
    mode: Literal["mount", "copy"] = Field(
        description="how it saw the workspace: mounted, or a copy whose changes were copied back"
    )
    conflicts: list[str] = Field(
        default_factory=list,
        description="paths also changed by someone else while it ran (the command's result won)",
    )
    skipped: list[str] = Field(
        default_factory=list, description="'path: reason' for each change that was not copied"
    )
    out_of_memory: bool = Field(
        False,
        description="a process of the command was killed: all of them together reached the"
        " sandbox's memory limit",
    )
    denied: list[str] = Field(
        default_factory=list,
        description="'operation path' for what the policy refused through the command's mount"
        " (the first 50)",
    )
    denied_total: int = Field(0, description="how many requests the policy refused in all")

    def text(self) -> str:
        status = "timed out" if self.timed_out else f"exit code {self.exit_code}"
        if self.out_of_memory:
            status += ", a process killed at the memory limit"
        how = ", in a copy" if self.mode == "copy" else ""
        parts = [
            f"$ ({status}, {self.duration_ms} ms{how}; undo: snapshot_restore {self.snapshot})"
        ]
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("[stderr]\n" + self.stderr.rstrip("\n"))
        parts += [
            f"[also changed meanwhile, the command's result kept] {p}" for p in self.conflicts
        ]
        parts += [f"[not copied] {line}" for line in self.skipped]
        parts += [f"[refused by the policy] {line}" for line in self.denied]
        return "\n".join(parts)


@tool(
    "execute_command",
    title="Run a shell command in the workspace",
    mutates=True,
    destructive=True,
    elsewhere=True,
    description="""Run a shell command with the workspace as its directory tree (git, pytest,
    npm, make, a script): its stdout, stderr and exit code. Files it writes land in the
    workspace. A snapshot is taken first: snapshot_restore of the returned `snapshot` undoes
    all it changed. Where no mount can be made it may run in a copy, its changes copied back
    (`mode` says which). Sandboxed: no network, only the
    workspace and /tmp writable, limited memory and processes. The policy may forbid command
    lines by pattern. Prefer the file tools to read and edit; use this to build, test and
    run.""",
)
def execute_command(ctx: Context, args: ExecuteCommandInput) -> ExecuteCommandOutput:
    check_line(args.command, args.env)
    rules = ctx.toolset.policy.commands
    pattern = rules.denied(args.command)
    if pattern is not None:
        raise ToolError(
            "denied", f"the policy forbids this command line (it matches {pattern!r}); not run"
        )
    cwd = ctx.path(args.cwd) if args.cwd is not None else "/"
    run = getattr(ctx.ws, "run", None)
    if run is None:
        raise ToolError("unsupported", "commands cannot run in a layered workspace")
    try:
        result = run(
            args.command,
            cwd=cwd,
            sandbox=rules.sandbox,
            network=rules.network,
            timeout=args.timeout_ms / 1000,
            env=args.env,
            max_output=args.max_output_kb * 1024,
            mode=None if rules.copy_fallback else "mount",  # None: a copy where no mount
            limits=rules.limits(),
            rules=ctx.toolset.policy.mount_rules(),
        )
    except MountError as exc:
        copy = (
            ""
            if rules.copy_fallback
            else "; the policy does not allow a copy ([commands] copy_fallback)"
        )
        raise ToolError("unsupported", f"cannot run commands here: {exc}{copy}") from None
    except OSError as exc:
        if getattr(exc, "errno", None) is None:  # the sandbox or the mount cannot run here
            raise ToolError("unsupported", f"cannot run commands here: {exc}") from None
        raise
    return ExecuteCommandOutput(**result.as_dict())
