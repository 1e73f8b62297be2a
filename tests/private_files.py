"""Makes a workspace and every file agentfs keeps beside one, under a umask of its own (a
process-wide setting, hence a process of its own): ``python private_files.py DIR UMASK``
prints one JSON object, each file's name in DIR mapped to its permission bits and owner.

The files: the workspace and its ``-wal`` and ``-shm`` (open, in WAL mode), the read-only
mount's ``-readers`` lock file, a fork (``Workspace.fork``, made by ``VACUUM INTO``) and a
spec copy (``export --agentfs``) with their own ``-wal`` and ``-shm``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import agentfs
from agentfs.core.readers import ReaderHold
from agentfs.transfer import export_agentfs


def main(directory: Path, umask: int) -> None:
    os.umask(umask)
    with agentfs.open(directory / "ws.db") as ws:
        ws.write("/notes.txt", "private\n")
        ws.snapshots.create("first")
        ws.fork("first", directory / "fork.db")
        export_agentfs(ws, directory / "spec.db")
        hold = ReaderHold(ws.conn.filename)
        try:  # the others open too, so that their -wal and -shm exist
            with agentfs.open(directory / "fork.db"), agentfs.open(directory / "spec.db"):
                modes = {
                    entry.name: [stat.S_IMODE(st.st_mode), st.st_uid]
                    for entry in directory.iterdir()
                    for st in [entry.lstat()]
                }
        finally:
            hold.release()
    print(json.dumps(modes))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2], 8))
