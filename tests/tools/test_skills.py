"""Skills: ``/skills/<id>/SKILL.md`` read from the workspace, malformed ones reported without
hiding the rest, files handed out only from what a skill exposes, the active set per thread."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentfs
from agentfs.tools.policy import Policy
from agentfs.tools.toolset import Toolset

PDF = """---
name: pdf-forms
description: Fill in PDF forms from a JSON answer sheet.
license: MIT
allowed-tools: [read_file, write_file]
metadata:
  version: "1.2"
---
# Filling PDF forms

Run scripts/fill.py with the form and the answers.
"""

REVIEW = """---
name: code-review
description: "Review a change: correctness, tests, naming."
---
Read the diff first; then the tests.
"""


@pytest.fixture
def skilled(ws: agentfs.Workspace) -> agentfs.Workspace:
    ws.write("/skills/pdf-forms/SKILL.md", PDF, parents=True)
    ws.write("/skills/pdf-forms/references/fields.md", "# Field types\n", parents=True)
    ws.write("/skills/pdf-forms/references/deep/more.md", "deeper\n", parents=True)
    ws.write("/skills/pdf-forms/scripts/fill.py", "print('fill')\n", parents=True)
    ws.write("/skills/pdf-forms/assets/logo.txt", "LOGO\n", parents=True)
    ws.write("/skills/pdf-forms/notes.md", "not exposed\n")
    ws.write("/skills/code-review/SKILL.md", REVIEW, parents=True)
    ws.write("/secrets/key", "hunter2\n", parents=True)
    ws.symlink("/secrets/key", "/skills/pdf-forms/references/key.md")
    return ws


MALFORMED = {
    "no-front-matter": ("# Just markdown\n", "no YAML front matter"),
    "bad-yaml": ("---\nname: [unclosed\ndescription: x\n---\nbody\n", "not valid YAML"),
    "no-name": ("---\ndescription: something\n---\n", "no name"),
    "no-description": ("---\nname: no-description\n---\n", "no description"),
    "bad-name": ("---\nname: Bad Name!\ndescription: x\n---\n", "lowercase letters"),
    "list-front": ("---\n- a\n- b\n---\n", "must be a mapping"),
    "long-description": (f"---\nname: x\ndescription: {'d' * 1100}\n---\n", "longer than 1024"),
    "bad-tools": (
        "---\nname: bad-tools\ndescription: x\nallowed-tools: {a: 1}\n---\n",
        "allowed-tools",
    ),
}


def test_catalog_reads_front_matter_body_and_exposed_files(skilled: agentfs.Workspace) -> None:
    found = skilled.skills()
    assert [s.id for s in found.skills] == ["code-review", "pdf-forms"] and not found.problems
    pdf = found.get("pdf-forms")
    assert pdf is not None
    assert (pdf.name, pdf.license, pdf.allowed_tools) == (
        "pdf-forms",
        "MIT",
        ("read_file", "write_file"),
    )
    assert pdf.metadata == {"version": "1.2"}
    assert pdf.body.startswith("# Filling PDF forms")
    assert pdf.files == {
        "references": ("deep/more.md", "fields.md"),  # the symlink to /secrets is not exposed
        "scripts": ("fill.py",),
        "assets": ("logo.txt",),
    }


@pytest.mark.parametrize("skill_id", sorted(MALFORMED))
def test_a_malformed_skill_is_reported_and_hides_nothing(
    skilled: agentfs.Workspace, skill_id: str
) -> None:
    text, reason = MALFORMED[skill_id]
    skilled.write(f"/skills/{skill_id}/SKILL.md", text, parents=True)
    found = skilled.skills()
    assert [s.id for s in found.skills] == ["code-review", "pdf-forms"]
    (problem,) = found.problems
    assert problem.path == f"/skills/{skill_id}/SKILL.md" and reason in problem.reason
    tools = Toolset(skilled)
    listed = tools.call("workspace_list_skills", {})
    assert [p["path"] for p in listed["problems"]] == [problem.path]
    error = tools.call("workspace_read_skill", {"skill_id": skill_id})["error"]
    assert error["code"] == "invalid_argument" and reason in error["message"]


def test_a_directory_without_skill_md_and_a_stray_file_are_handled(ws: agentfs.Workspace) -> None:
    ws.mkdir("/skills/empty", parents=True)
    ws.write("/skills/README.md", "not a skill\n")
    found = ws.skills()
    assert found.skills == [] and [p.path for p in found.problems] == ["/skills/empty/SKILL.md"]
    assert agentfs.open(ws.path).skills().problems  # the same from another handle


def test_no_skills_directory_is_an_empty_catalog(ws: agentfs.Workspace) -> None:
    assert ws.skills().skills == [] and Toolset(ws).skills_prompt() == ""
    assert "No skills" in Toolset(ws).invoke("workspace_list_skills", {}).text


def test_read_activate_and_deactivate_per_thread(skilled: agentfs.Workspace) -> None:
    t1, t2 = Toolset(skilled, thread="t1"), Toolset(skilled, thread="t2")
    read = t1.call("workspace_read_skill", {"skill_id": "pdf-forms"})
    assert read["instructions"].startswith("# Filling PDF forms")
    assert read["skill"]["files"]["scripts"] == ["fill.py"]
    assert [r.path for r in skilled.reads_log(thread="t1")] == ["/skills/pdf-forms/SKILL.md"]
    on = t1.call("workspace_activate_skill", {"skill_id": "pdf-forms"})
    assert on["changed"] and on["active_skills"] == ["pdf-forms"]
    assert not t1.call("workspace_activate_skill", {"skill_id": "pdf-forms"})["changed"]
    assert t2.call("workspace_list_skills", {})["skills"][1]["active"] is False
    with agentfs.open(skilled.path) as other:  # kept in the workspace, not in the toolset
        assert other.active_skills("t1") == ["pdf-forms"] and other.active_skills("t2") == []
    off = t1.call("workspace_deactivate_skill", {"skill_id": "pdf-forms"})
    assert off["changed"] and off["active_skills"] == []
    missing = t1.call("workspace_activate_skill", {"skill_id": "nope"})["error"]
    assert missing["code"] == "not_found" and "code-review, pdf-forms" in missing["message"]


@pytest.mark.parametrize(
    ("tool", "file", "expect"),
    [
        ("workspace_read_skill_reference", "fields.md", "# Field types"),
        ("workspace_read_skill_reference", "references/fields.md", "# Field types"),
        ("workspace_read_skill_reference", "deep/more.md", "deeper"),
        ("workspace_read_skill_script", "fill.py", "print('fill')"),
        ("workspace_read_skill_asset", "logo.txt", "LOGO"),
    ],
)
def test_exposed_files_are_read(
    skilled: agentfs.Workspace, tool: str, file: str, expect: str
) -> None:
    result = Toolset(skilled).call(tool, {"skill_id": "pdf-forms", "file": file})
    assert expect in result["content"]


@pytest.mark.parametrize(
    ("tool", "file"),
    [
        ("workspace_read_skill_reference", "../SKILL.md"),
        ("workspace_read_skill_reference", "../notes.md"),
        ("workspace_read_skill_reference", "references/../../code-review/SKILL.md"),
        ("workspace_read_skill_reference", "/secrets/key"),
        ("workspace_read_skill_reference", "key.md"),  # a symlink out of the skill
        ("workspace_read_skill_reference", "fill.py"),  # a script, not a reference
        ("workspace_read_skill_script", "../references/fields.md"),
        ("workspace_read_skill_asset", "FIELDS.MD"),
        ("workspace_read_skill_asset", "logo.txt\x00"),
    ],
)
def test_anything_a_skill_does_not_list_is_denied(
    skilled: agentfs.Workspace, tool: str, file: str
) -> None:
    result = Toolset(skilled).call(tool, {"skill_id": "pdf-forms", "file": file})
    assert result["error"]["code"] == "denied", result
    assert "hunter2" not in str(result)


def test_the_policy_deny_list_covers_skills(skilled: agentfs.Workspace) -> None:
    tools = Toolset(
        skilled, policy=Policy.model_validate({"defaults": {"deny": ["/skills/pdf-forms/**"]}})
    )
    assert [s["id"] for s in tools.call("workspace_list_skills", {})["skills"]] == ["code-review"]
    assert (
        tools.call("workspace_read_skill", {"skill_id": "pdf-forms"})["error"]["code"]
        == "not_found"
    )
    assert "pdf-forms" not in tools.skills_prompt()


def test_search_ranks_the_fitting_skill_first(skilled: agentfs.Workspace) -> None:
    for query, best in [("fill a pdf form", "pdf-forms"), ("review my change", "code-review")]:
        hits = Toolset(skilled).call("workspace_search_skills", {"query": query})["hits"]
        assert hits and hits[0]["id"] == best, (query, hits)


def test_search_without_an_index_matches_words(tmp_path: Path) -> None:
    with agentfs.open(tmp_path / "ws.db") as ws:
        ws.configure_index(enabled=False)
        ws.write("/skills/code-review/SKILL.md", REVIEW, parents=True)
        result = Toolset(ws).call("workspace_search_skills", {"query": "review tests"})
        assert result["mode"] == "keywords" and result["hits"][0]["id"] == "code-review"


def test_skills_prompt_lists_all_and_carries_active_instructions(
    skilled: agentfs.Workspace,
) -> None:
    tools = Toolset(skilled, thread="t1")
    tools.call("workspace_activate_skill", {"skill_id": "code-review"})
    prompt = tools.skills_prompt()
    assert prompt.startswith("<workspace_skills>") and prompt.endswith("</workspace_skills>")
    assert '<skill id="code-review" active="true">' in prompt and '<skill id="pdf-forms">' in prompt
    assert "Read the diff first" in prompt  # active: its instructions are in
    assert "Run scripts/fill.py" not in prompt  # not active: only its description
    assert "Review a change: correctness" in prompt
    assert Toolset(skilled, thread="t2").skills_prompt().count("active=") == 0
