"""Agent Skills kept in the workspace: ``/skills/<id>/SKILL.md`` and the files a skill exposes.

The convention is Anthropic's: ``SKILL.md``'s front matter gives ``name`` and ``description``,
its body the instructions, and ``references/``, ``scripts/`` and ``assets/`` hold the only files
it hands out (any other name is refused). The active set is kept in ``ws_skill_active``, so a
resumed thread or another process sees the same, and a ``SKILL.md`` that cannot be read is a
``SkillProblem`` that never hides the other skills (docs/skills.md).
"""

from __future__ import annotations

import errno
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import yaml

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.db import write_transaction

if TYPE_CHECKING:
    import apsw

    from agentfs.core.treeops import Tree

#: Where skills live in a workspace.
SKILLS_DIR = "/skills"
SKILL_FILE = "SKILL.md"
#: The directories whose files a skill exposes, by the kind of file.
FileKind = Literal["references", "scripts", "assets"]
FILE_KINDS: tuple[FileKind, ...] = ("references", "scripts", "assets")
#: The format's limits on the front matter.
MAX_NAME = 64
MAX_DESCRIPTION = 1024
#: A SKILL.md larger than this is not parsed (a skill's instructions should be short).
MAX_SKILL_BYTES = 1 << 20
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Skill:
    """One skill: ``id`` is its directory name, ``path`` its SKILL.md, ``body`` the Markdown
    after the front matter, ``files`` what it exposes by kind (paths relative to the kind's
    directory, sorted)."""

    id: str
    name: str
    description: str
    path: str
    body: str
    license: str | None = None
    allowed_tools: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def file_path(self, kind: str, name: str) -> str | None:
        """The workspace path of exposed file ``name`` of ``kind`` (given relative to the kind's
        directory or to the skill's), or None when the skill does not expose it."""
        relative = name.strip()
        if relative.startswith(f"{kind}/"):
            relative = relative[len(kind) + 1 :]
        if relative not in self.files.get(kind, ()):
            return None
        return f"{SKILLS_DIR}/{self.id}/{kind}/{relative}"


@dataclass(frozen=True)
class SkillProblem:
    """A skill that could not be read: where, and why."""

    path: str
    reason: str


@dataclass
class SkillCatalog:
    """Every readable skill (sorted by id) and every problem found on the way."""

    skills: list[Skill] = field(default_factory=list)
    problems: list[SkillProblem] = field(default_factory=list)

    def get(self, skill_id: str) -> Skill | None:
        return next((s for s in self.skills if s.id == skill_id), None)


def catalog(fs: Tree) -> SkillCatalog:
    """The skills under ``/skills`` of ``fs`` (an empty catalog when there is no such dir)."""
    found = SkillCatalog()
    try:
        ids = sorted(fs.listdir(SKILLS_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return found
    for skill_id in ids:
        base = f"{SKILLS_DIR}/{skill_id}"
        if not fs.lstat(base).is_dir():
            continue
        try:
            found.skills.append(_load(fs, skill_id))
        except _Malformed as exc:
            found.problems.append(SkillProblem(exc.path, exc.reason))
    return found


class _Malformed(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _load(fs: Tree, skill_id: str) -> Skill:
    path = f"{SKILLS_DIR}/{skill_id}/{SKILL_FILE}"
    try:
        st = fs.lstat(path)
    except FileNotFoundError:
        raise _Malformed(path, f"no {SKILL_FILE} in the skill's directory") from None
    if st.type != "file":
        raise _Malformed(path, f"{SKILL_FILE} is not a regular file ({st.type})")
    if st.st_size > MAX_SKILL_BYTES:
        raise _Malformed(path, f"larger than {MAX_SKILL_BYTES:,} bytes")
    try:
        text = fs.read(path, track=False).decode("utf-8")
    except UnicodeDecodeError:
        raise _Malformed(path, "not UTF-8 text") from None
    front, body = parse_front_matter(path, text)
    name = _text_field(path, front, "name", MAX_NAME)
    if not _NAME.fullmatch(name):
        raise _Malformed(path, f"name {name!r} must be lowercase letters, digits and hyphens")
    description = _text_field(path, front, "description", MAX_DESCRIPTION)
    license_ = front.get("license")
    tools = front.get("allowed-tools", ())
    if isinstance(tools, str):
        tools = tools.replace(",", " ").split()
    if not isinstance(tools, list | tuple) or not all(isinstance(t, str) for t in tools):
        raise _Malformed(path, "allowed-tools must be a list of tool names (or one string)")
    metadata = front.get("metadata", {})
    if not isinstance(metadata, dict):
        raise _Malformed(path, "metadata must be a mapping")
    return Skill(
        id=skill_id,
        name=name,
        description=description,
        path=path,
        body=body,
        license=None if license_ is None else str(license_),
        allowed_tools=tuple(tools),
        metadata=metadata,
        files={kind: tuple(_exposed(fs, f"{SKILLS_DIR}/{skill_id}/{kind}")) for kind in FILE_KINDS},
    )


def parse_front_matter(path: str, text: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter of a SKILL.md (between ``---`` lines at the top) and the body."""
    text = text.removeprefix("\ufeff")
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise _Malformed(path, "no YAML front matter (a '---' line, name: and description:, '---')")
    try:
        front = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 2}" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _Malformed(path, f"front matter is not valid YAML{at}: {problem}") from None
    if not isinstance(front, dict):
        raise _Malformed(path, "front matter must be a mapping (name: ..., description: ...)")
    return front, text[match.end() :].lstrip("\r\n")


def _text_field(path: str, front: dict[str, Any], key: str, limit: int) -> str:
    value = front.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _Malformed(path, f"front matter has no {key}")
    value = value.strip()
    if len(value) > limit:
        raise _Malformed(path, f"{key} is longer than {limit} characters")
    return value


def _exposed(fs: Tree, top: str) -> Iterable[str]:
    """Regular files below ``top``, relative to it, sorted; symlinks are not followed."""
    try:
        if not fs.lstat(top).is_dir():
            return []
    except FileNotFoundError:
        return []
    out: list[str] = []
    pending = [top]
    while pending:
        directory = pending.pop()
        for entry in fs.scandir(directory):
            full = paths.join(directory, entry.name)
            if entry.is_dir():
                pending.append(full)
            elif entry.type == "file":
                out.append(full[len(top) + 1 :])
    return sorted(out)


# --- the active set, per thread -------------------------------------------------------------------


def active(conn: apsw.Connection, thread: str) -> list[str]:
    """The ids of the skills ``thread`` has activated, in activation order."""
    rows = conn.execute(
        "SELECT skill_id FROM ws_skill_active WHERE thread = ? ORDER BY at_ns, skill_id",
        (thread,),
    )
    return [skill_id for (skill_id,) in rows]


def activate(conn: apsw.Connection, thread: str, skill_id: str, known: SkillCatalog) -> bool:
    """Activate ``skill_id`` for ``thread``; False when it already was. ENOENT when ``known``
    (the catalog the caller sees: one workspace's, or a layered union's) has no such skill."""
    if known.get(skill_id) is None:
        raise fs_error(errno.ENOENT, f"{SKILLS_DIR}/{skill_id}", "no such skill")
    with write_transaction(conn):
        conn.execute(
            "INSERT OR IGNORE INTO ws_skill_active(thread, skill_id, at_ns) VALUES (?, ?, ?)",
            (thread, skill_id, time.time_ns()),
        )
        return conn.changes() == 1


def deactivate(conn: apsw.Connection, thread: str, skill_id: str) -> bool:
    """Deactivate ``skill_id`` for ``thread``; False when it was not active."""
    with write_transaction(conn):
        conn.execute(
            "DELETE FROM ws_skill_active WHERE thread = ? AND skill_id = ?", (thread, skill_id)
        )
        return conn.changes() == 1
