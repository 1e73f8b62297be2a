"""The mount daemon's command line: the options one mount serves with (``MountOptions``), the
flags that carry them to the daemon's process (``agentfs.mountd``, a module above the
workspace, which this package may not import), and starting it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from agentfs.mount.owners import NO_SWAP, IdSwap
from agentfs.mount.rules import MountRules

#: How the daemon is started: this interpreter running ``agentfs.mountd``.
DAEMON = (sys.executable, "-m", "agentfs.mountd")
SERVES = "Serve one workspace on a directory until it is unmounted (docs/mount.md)."


@dataclass(frozen=True)
class MountOptions:
    """How one mount serves (``daemon.serve``'s options, by the daemon's flags)."""

    root: str = "/"
    read_only: bool = False
    allow_other: bool = False
    cache_timeout: float = 1.0
    xattrs: bool = True
    rules: MountRules | None = None
    report: Path | None = None
    ids: IdSwap = field(default=NO_SWAP)
    source: str | None = None
    write_budget: int | None = None
    #: Who the workspace records as writing through the mount (None: ``mountd``'s default).
    actor: str | None = None
    thread: str | None = None

    def argv(self) -> list[str]:
        """The daemon's flags for these options (``parse`` reads them back)."""
        args = ["--root", self.root, "--cache-timeout", str(self.cache_timeout)]
        args += ["--read-only"] if self.read_only else []
        args += ["--allow-other"] if self.allow_other else []
        args += [] if self.xattrs else ["--no-xattr"]
        args += ["--rules", self.rules.to_json()] if self.rules is not None else []
        args += ["--report", str(self.report)] if self.report is not None else []
        args += ["--swap-ids", str(self.ids)] if self.ids != NO_SWAP else []
        args += ["--source", self.source] if self.source is not None else []
        args += ["--write-budget", str(self.write_budget)] if self.write_budget is not None else []
        args += ["--actor", self.actor] if self.actor is not None else []
        args += ["--thread", self.thread] if self.thread is not None else []
        return args


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=" ".join(DAEMON[1:]), description=SERVES)
    parser.add_argument("workspace", type=Path)
    parser.add_argument("mountpoint", type=Path)
    parser.add_argument("--root", default="/")
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--allow-other", action="store_true")
    parser.add_argument("--cache-timeout", type=float, default=1.0)
    parser.add_argument("--no-xattr", action="store_true")
    parser.add_argument("--rules", type=MountRules.from_json, help="as JSON")
    parser.add_argument("--report", type=Path, help="where the rules' refusals go")
    parser.add_argument("--swap-ids", type=IdSwap.parse, default=NO_SWAP, help="UID:GID=UID:GID")
    parser.add_argument("--source", help="what the mount table shows as the source")
    parser.add_argument("--write-budget", type=int, help="bytes the mount may take")
    parser.add_argument("--actor", help="who the versions written through the mount name")
    parser.add_argument("--thread", help="the thread the versions written through it are in")
    return parser


def parse(argv: list[str]) -> tuple[Path, Path, MountOptions]:
    """The workspace, the mount point and the options of a daemon's command line."""
    a = _parser().parse_args(argv)
    options = MountOptions(
        a.root,
        a.read_only,
        a.allow_other,
        a.cache_timeout,
        not a.no_xattr,
        a.rules,
        a.report,
        a.swap_ids,
        a.source,
        a.write_budget,
        a.actor,
        a.thread,
    )
    return a.workspace, a.mountpoint, options


def command(
    workspace: str | os.PathLike[str], mountpoint: Path, options: MountOptions
) -> list[str]:
    """The command line that serves this mount."""
    return [*DAEMON, os.fspath(workspace), str(mountpoint), *options.argv()]


def start(
    workspace: str | os.PathLike[str], mountpoint: Path, options: MountOptions, log: IO[bytes] | int
) -> subprocess.Popen[bytes]:
    """The daemon in a new session (a Ctrl-C meant for a command does not reach it), its
    output into ``log``; the caller waits for the mount to appear."""
    return subprocess.Popen(
        command(workspace, mountpoint, options),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
