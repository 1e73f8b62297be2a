"""What a policy lets a command do through its mount: the tools' path rules, read-only, sizes.

``Policy.mount_rules`` makes them; they travel to the mount's process as JSON (``agentfs mount
--rules``) and ``agentfs.mount.ruled`` applies them to every request, or, in a copy,
``agentfs.mount.copyrules`` to what is copied out and carried back.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from agentfs.core.rules import allowed_by, denied_by

#: How many refusals a report names (the count is whole).
REPORTED = 50


@dataclass(frozen=True)
class MountRules:
    """Denied paths are absent (ENOENT, and left out of listings); writes outside ``allow``
    or to a denied path are refused (EACCES); ``read_only`` mounts read-only; a file may not
    grow past ``max_file_bytes`` (EFBIG), nor the workspace's files in all past
    ``max_workspace_bytes`` (ENOSPC). Each rule judges a file by all of its names."""

    deny: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    read_only: bool = False
    max_file_bytes: int | None = None
    max_workspace_bytes: int | None = None

    @property
    def judges_paths(self) -> bool:
        return bool(self.deny or self.allow)

    @property
    def restricts(self) -> bool:
        """Does any rule say anything? (None does: the mount is served as it is without.)"""
        return self != MountRules()

    def hidden(self, names: list[str]) -> bool:
        """Is a file with these names denied (absent through the mount)?"""
        return denied_by(self.deny, *names) is not None

    def writable(self, names: list[str]) -> bool:
        """May a file with these names (or a new one at that one name) be changed?"""
        return not self.hidden(names) and allowed_by(self.allow, *names)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> MountRules:
        data = json.loads(text)
        return cls(
            deny=tuple(data.get("deny", ())),
            allow=tuple(data.get("allow", ())),
            read_only=bool(data.get("read_only", False)),
            max_file_bytes=data.get("max_file_bytes"),
            max_workspace_bytes=data.get("max_workspace_bytes"),
        )


class Refusals:
    """What the rules refused: the first ``REPORTED`` as ``"op path"``, and how many in all
    (a command's ``denied`` and ``denied_total``); a mount writes them to its report file
    when it ends."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.total = 0

    def add(self, op: str, path: str) -> None:
        self.total += 1
        if len(self.shown) < REPORTED:
            self.shown.append(f"{op} {path}")

    def write(self, report: Path) -> None:
        report.write_text(json.dumps({"denied": self.shown, "denied_total": self.total}))
