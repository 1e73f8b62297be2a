"""The skill tools: list, search, read, activate and deactivate skills, and read their files.

An agent sees every skill's name and description, reads the one that fits and activates it for
its thread, so a resumed conversation knows which instructions it followed; a skill's own files
are handed out only by the names it exposes (``agentfs.skills`` holds the convention).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from agentfs.core.errors import AgentFSError
from agentfs.skills import SKILLS_DIR, FileKind, Skill
from agentfs.tools.context import Context
from agentfs.tools.errors import ToolError
from agentfs.tools.reading import ReadFileInput, ReadFileOutput, read_one
from agentfs.tools.spec import ToolInput, ToolOutput, tool

SKILL_ID_DOC = "a skill's id: its directory under /skills (see workspace_list_skills)"


class SkillSummary(BaseModel):
    id: str
    name: str
    description: str
    active: bool = Field(description="activated for this thread")
    license: str | None = None
    allowed_tools: list[str] = Field(default_factory=list)
    files: dict[str, list[str]] = Field(
        description="what the skill exposes: references, scripts and assets, by file name"
    )


class SkillProblemOut(BaseModel):
    path: str
    reason: str


class ListSkillsInput(ToolInput):
    pass


class ListSkillsOutput(ToolOutput):
    skills: list[SkillSummary]
    problems: list[SkillProblemOut] = Field(
        description="skills that could not be read, with the reason (they are left out)"
    )

    def text(self) -> str:
        if not self.skills and not self.problems:
            return f"No skills in this workspace (they live in {SKILLS_DIR}/<id>/SKILL.md)."
        lines = [f"- {s.id}{' (active)' if s.active else ''}: {s.description}" for s in self.skills]
        lines += [f"! {p.path}: {p.reason}" for p in self.problems]
        return f"{len(self.skills)} skill(s):\n" + "\n".join(lines)


def _summary(skill: Skill, active: set[str]) -> SkillSummary:
    return SkillSummary(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        active=skill.id in active,
        license=skill.license,
        allowed_tools=list(skill.allowed_tools),
        files={kind: list(names) for kind, names in skill.files.items()},
    )


@tool(
    "workspace_list_skills",
    title="List skills",
    description="""List the workspace's skills (id, name, description, whether active for
    this thread, files exposed); read one with workspace_read_skill when its description fits
    your task.""",
)
def workspace_list_skills(ctx: Context, args: ListSkillsInput) -> ListSkillsOutput:
    found = ctx.ws.skills()
    active = set(ctx.ws.active_skills(ctx.thread))
    return ListSkillsOutput(
        skills=[_summary(s, active) for s in found.skills if ctx.visible(s.path)],
        problems=[
            SkillProblemOut(path=p.path, reason=p.reason)
            for p in found.problems
            if ctx.visible(p.path)
        ],
    )


class SearchSkillsInput(ToolInput):
    query: str = Field(min_length=1, description="what the task needs, in words")
    top_k: int = Field(10, ge=1, le=100, description="most skills to return")


class SkillHit(BaseModel):
    id: str
    name: str
    description: str
    score: float
    active: bool


class SearchSkillsOutput(ToolOutput):
    hits: list[SkillHit]
    mode: str = Field(description="how they were ranked: hybrid, bm25 or keywords")

    def text(self) -> str:
        if not self.hits:
            return "No skill matches; workspace_list_skills shows them all."
        return "\n".join(f"- {h.id} ({h.score:.2f}): {h.description}" for h in self.hits)


_WORD = re.compile(r"\w+")


@tool(
    "workspace_search_skills",
    title="Search skills",
    description="""Find the skills that fit a task, best first: the workspace's search
    (keywords and meaning) over each skill's name, description and instructions.""",
)
def workspace_search_skills(ctx: Context, args: SearchSkillsInput) -> SearchSkillsOutput:
    ws = ctx.ws
    found = ws.skills()
    skills = {s.id: s for s in found.skills if ctx.visible(s.path)}
    active = set(ws.active_skills(ctx.thread))
    mode = "keywords"
    scores: dict[str, float] = {}
    try:  # hybrid when the workspace has vectors, else bm25 (search's own default)
        result = ws.search(args.query, top_k=100, path=SKILLS_DIR, glob="*/SKILL.md")
    except AgentFSError:
        result = None
    if result is not None:
        mode = result.mode
        for hit in result.hits:
            skill_id = hit.path[len(SKILLS_DIR) + 1 :].split("/", 1)[0]
            if skill_id in skills:
                scores.setdefault(skill_id, hit.score)
    if not scores:  # not indexed (indexing off, a read-only handle): words in common
        mode = "keywords"
        wanted = {w.lower() for w in _WORD.findall(args.query)}
        for skill in skills.values():
            words = {
                w.lower() for w in _WORD.findall(f"{skill.name} {skill.description} {skill.body}")
            }
            if wanted and (common := len(wanted & words)):
                scores[skill.id] = common / len(wanted)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[: args.top_k]
    hits = [
        SkillHit(
            id=skill_id,
            name=skills[skill_id].name,
            description=skills[skill_id].description,
            score=round(score, 4),
            active=skill_id in active,
        )
        for skill_id, score in ranked
    ]
    return SearchSkillsOutput(hits=hits, mode=mode)


class SkillInput(ToolInput):
    skill_id: str = Field(description=SKILL_ID_DOC)


class ReadSkillOutput(ToolOutput):
    skill: SkillSummary
    instructions: str = Field(description="the body of SKILL.md: what to do when using it")

    def text(self) -> str:
        files = [f"{kind}/{name}" for kind, names in self.skill.files.items() for name in names]
        listed = "\nFiles: " + ", ".join(files) if files else ""
        return f"Skill {self.skill.id}: {self.skill.description}{listed}\n\n{self.instructions}"


def _skill(ctx: Context, skill_id: str) -> Skill:
    found = ctx.ws.skills()
    skill = found.get(skill_id)
    if skill is None or not ctx.visible(skill.path):
        problem = next(
            (p for p in found.problems if p.path.startswith(f"{SKILLS_DIR}/{skill_id}/")), None
        )
        if problem is not None:
            raise ToolError("invalid_argument", f"skill {skill_id} is malformed: {problem.reason}")
        ids = ", ".join(s.id for s in found.skills) or "none"
        raise ToolError(
            "not_found", f"no skill {skill_id!r}; the skills are: {ids} (workspace_list_skills)"
        )
    ctx.path(skill.path)  # the policy's deny list applies to skills too
    return skill


@tool(
    "workspace_read_skill",
    title="Read a skill",
    tracks_reads=True,
    description="""Read a skill's instructions (the body of its SKILL.md) and the list of
    files it exposes.""",
)
def workspace_read_skill(ctx: Context, args: SkillInput) -> ReadSkillOutput:
    skill = _skill(ctx, args.skill_id)
    ctx.ws.read(skill.path)  # a tracked read: this thread has seen the skill
    active = set(ctx.ws.active_skills(ctx.thread))
    return ReadSkillOutput(skill=_summary(skill, active), instructions=skill.body)


class ActivationOutput(ToolOutput):
    skill_id: str
    active: bool
    changed: bool = Field(description="false when it already was in that state")
    active_skills: list[str] = Field(description="every skill now active for this thread")

    def text(self) -> str:
        state = "active" if self.active else "not active"
        already = "" if self.changed else " (already)"
        now = ", ".join(self.active_skills) or "none"
        return f"Skill {self.skill_id} is {state}{already}. Active skills: {now}."


@tool(
    "workspace_activate_skill",
    title="Activate a skill",
    idempotent=True,
    description="""Mark a skill active for this thread (kept in the workspace, so a resumed
    thread still knows it). Read it first with workspace_read_skill.""",
)
def workspace_activate_skill(ctx: Context, args: SkillInput) -> ActivationOutput:
    _skill(ctx, args.skill_id)
    changed = ctx.ws.activate_skill(args.skill_id, ctx.thread)
    now = ctx.ws.active_skills(ctx.thread)
    return ActivationOutput(skill_id=args.skill_id, active=True, changed=changed, active_skills=now)


@tool(
    "workspace_deactivate_skill",
    title="Deactivate a skill",
    idempotent=True,
    description="Stop using a skill in this thread.",
)
def workspace_deactivate_skill(ctx: Context, args: SkillInput) -> ActivationOutput:
    changed = ctx.ws.deactivate_skill(args.skill_id, ctx.thread)
    now = ctx.ws.active_skills(ctx.thread)
    return ActivationOutput(
        skill_id=args.skill_id, active=False, changed=changed, active_skills=now
    )


class SkillFileInput(ToolInput):
    skill_id: str = Field(description=SKILL_ID_DOC)
    file: str = Field(description="the file's name as workspace_read_skill lists it")
    offset: int = Field(1, ge=1, description="first line to show (1-based)")
    limit: int = Field(2000, ge=1, description="most lines to show")
    max_bytes: int = Field(200_000, ge=1, description="most bytes of text to show")


def _skill_file(ctx: Context, args: SkillFileInput, kind: FileKind) -> ReadFileOutput:
    skill = _skill(ctx, args.skill_id)
    path = skill.file_path(kind, args.file)
    if path is None:
        exposed = ", ".join(skill.files.get(kind, ())) or "none"
        raise ToolError(
            "denied",
            f"skill {skill.id} does not expose {kind} file {args.file!r}; its {kind}: {exposed}",
        )
    paging = args.model_dump(include={"offset", "limit", "max_bytes"})
    return read_one(ctx, ReadFileInput(path=path, **paging))


def _file_tool(kind: FileKind) -> Any:
    singular = kind.removesuffix("s")

    def run(ctx: Context, args: SkillFileInput) -> ReadFileOutput:
        return _skill_file(ctx, args, kind)

    run.__name__ = f"workspace_read_skill_{singular}"
    run.__module__ = __name__
    return tool(
        f"workspace_read_skill_{singular}",
        title=f"Read a skill's {singular}",
        tracks_reads=True,
        description=f"""Read one of a skill's {kind}, numbered and paged like read_file;
        a file the skill does not list is denied.""",
    )(run)


workspace_read_skill_reference = _file_tool("references")
workspace_read_skill_script = _file_tool("scripts")
workspace_read_skill_asset = _file_tool("assets")
