"""Who a sandboxed command is on the host, and handing it what it may use.

When agentfs runs as a normal user, the command runs as that user: an unprivileged process
can only make a user namespace that maps its own uid. When agentfs runs as root, the command
runs as ``SANDBOX_IDS``, a uid and gid of its own that no account and no other process has
(not ``nobody``, which daemons of the host run as: a process sharing the command's uid could
signal it, or race it for the directories it is given). Root's command therefore holds
nothing of root's even outside every namespace, and its processes count against its process
limit, which the kernel never applies to root.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

#: The uid and gid of root's sandboxed commands: in the range systemd's conventions leave to
#: no one (above the container ranges, below 2**31), so no account or service has it.
SANDBOX_IDS = (2_000_000_000, 2_000_000_000)
#: Where the system's own programs are (never the caller's PATH).
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def host_identity() -> tuple[int, int]:
    """The uid and gid a sandboxed command runs as on the host (see the module docstring)."""
    uid = os.geteuid()
    return SANDBOX_IDS if uid == 0 else (uid, os.getegid())


def switches_user() -> bool:
    """Does a sandboxed command run as another user than this process (root's does)?"""
    return host_identity()[0] != os.geteuid()


def as_sandbox_user() -> dict[str, Any]:
    """``subprocess.Popen``'s options that start a process as the sandbox's user with no
    supplementary groups (none: we are that user already)."""
    if not switches_user():
        return {}
    uid, gid = host_identity()
    return {"user": uid, "group": gid, "extra_groups": []}


def hand_over(path: Path) -> None:
    """Give ``path`` to the sandbox's user, where that is not us."""
    if switches_user():
        os.lchown(path, *host_identity())


def system_tool(name: str) -> str | None:
    """The system's ``name`` program, or None."""
    return shutil.which(name, path=SYSTEM_PATH)
