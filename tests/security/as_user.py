"""Run one command in a workspace and print what it did as JSON: the tests' way of being an
unprivileged agentfs user (``security_bench.Box`` starts it with ``setpriv`` as uid 2345).

    python as_user.py '{"db": "/path/ws.db", "writes": {"/a.txt": "text"},
                        "command": "ls", "options": {"sandbox": true}, "limits": null}'

``writes`` (and ``symlinks``, path: target) are made through the API first, as this user,
so they are the owner's files;
``options`` are ``Workspace.run``'s keywords and ``limits`` ``Limits``'s fields. It prints
``{"result": CommandResult}``, or ``{"error": {"type": ..., "message": ...}}`` and exits 1
when ``ws.run`` raised. The root side of the tests calls ``perform`` in its own process.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import agentfs
from agentfs.mount.exec import CommandResult
from agentfs.mount.sandbox import Limits


def perform(request: dict[str, Any]) -> CommandResult:
    """Open (or create) the workspace, make the writes and links, run the command."""
    limits = request.get("limits")
    with agentfs.open(request["db"]) as ws:
        for path, text in (request.get("writes") or {}).items():
            ws.write(path, text, parents=True)
        for path, target in (request.get("symlinks") or {}).items():
            ws.symlink(target, path)
        return ws.run(
            request["command"],
            **(request.get("options") or {}),
            limits=None if limits is None else Limits(**limits),
        )


def main(argv: list[str]) -> int:
    request = json.loads(argv[1])
    try:
        result = perform(request)
    except Exception as exc:
        print(json.dumps({"error": {"type": type(exc).__name__, "message": str(exc)}}))
        return 1
    print(json.dumps({"result": result.as_dict()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
