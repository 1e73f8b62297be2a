"""The mount daemon: ``python -m agentfs.mountd WS DIR [options]`` opens the workspace and
serves one mount in the foreground until it is unmounted or signalled (docs/mount.md).
``agentfs mount`` and every command run in a mount start it. Writes through it are recorded as
``--actor`` and ``--thread`` (a command run by ``ws.run``: the handle's), else as actor
``mount`` (``AGENTFS_ACTOR`` overrides it) and thread ``AGENTFS_THREAD``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agentfs.mount import daemon
from agentfs.mount.daemon_args import MountOptions, parse
from agentfs.workspace import Workspace


def serve(workspace: Path, mountpoint: Path, options: MountOptions) -> None:
    """Open ``workspace`` and serve it on ``mountpoint`` until unmounted."""
    read_only = options.read_only or (options.rules is not None and options.rules.read_only)
    actor = options.actor or os.environ.get("AGENTFS_ACTOR", "mount")
    thread = options.thread or os.environ.get("AGENTFS_THREAD") or None
    with Workspace(workspace, create=False, readonly=read_only, actor=actor, thread=thread) as ws:
        st = ws.stat(options.root)
        if not st.is_dir():
            raise NotADirectoryError(f"--root {options.root}: not a directory")
        daemon.serve(
            ws,
            mountpoint,
            root=st.st_ino,
            readonly=read_only,
            allow_other=options.allow_other,
            timeout=options.cache_timeout,
            xattrs=options.xattrs,
            ids=options.ids,
            write_budget=options.write_budget,
            source=options.source,
            rules=options.rules,
            report=options.report,
        )


def main(argv: list[str] | None = None) -> int:
    workspace, mountpoint, options = parse(sys.argv[1:] if argv is None else argv)
    try:
        serve(workspace, mountpoint, options)
    except (OSError, ValueError) as exc:
        print(f"agentfs mount: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
