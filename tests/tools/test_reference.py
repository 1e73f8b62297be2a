"""docs/tools.md is generated from the tools (so it cannot drift), and ``agentfs tools`` lists,
exports and calls them from a shell."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import agentfs
from agentfs.tools import catalog, reference
from agentfs.tools.errors import ERROR_CODES, ERROR_MEANINGS
from tests.clirun import AGENTFS

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTFS), *args], input=stdin, capture_output=True, text=True, timeout=120
    )


def test_docs_tools_md_is_what_the_code_generates() -> None:
    result = run("tools", "docs", "--output", str(ROOT / "docs" / "tools.md"), "--check")
    assert result.returncode == 0, (
        f"{result.stderr}docs/tools.md is stale: run `agentfs tools docs --output docs/tools.md`"
    )


def test_the_reference_covers_every_tool_and_error_with_a_real_example() -> None:
    examples = set(reference.EXAMPLES) | set(reference.BASE_EXAMPLES)
    assert examples == {spec.name for spec in catalog.all_tools()}
    assert set(ERROR_MEANINGS) == set(ERROR_CODES)
    page = reference.render()
    for spec in catalog.all_tools():
        section = page.split(f"\n## {spec.name}\n", 1)[1].split("\n## ", 1)[0]
        example = section.split("Example:", 1)[1]
        result = json.loads(example.split("```json\n")[2].split("\n```")[0])
        # every example ran and succeeded (a result, not an error), so the page shows real use
        assert "error" not in result, (spec.name, result)
    for code in ERROR_CODES:
        assert f"| `{code}` |" in page


def test_tools_list_schema_and_call(tmp_path: Path) -> None:
    listed = json.loads(run("tools", "list", "--json").stdout)
    assert [t["name"] for t in listed] == [s.name for s in catalog.all_tools()]
    one = json.loads(run("tools", "schema", "edit_file", "--format", "anthropic").stdout)
    assert one["name"] == "edit_file" and "old_string" in one["input_schema"]["properties"]
    every = json.loads(run("tools", "schema").stdout)
    assert len(every) == len(listed) and every[0]["type"] == "function"
    unknown = run("tools", "schema", "nope")
    assert unknown.returncode == 1 and "no tool 'nope'" in unknown.stderr
    ws = tmp_path / "ws.db"
    agentfs.open(ws).close()
    wrote = run("tools", "call", str(ws), "write_file", '{"path": "a.md", "content": "hi\\n"}')
    assert wrote.returncode == 0 and json.loads(wrote.stdout)["created"]
    read = run("tools", "call", str(ws), "read_file", "-", "--text", stdin='{"path": "/a.md"}')
    assert read.stdout == "     1\thi\n"
    for command in (["list"], ["schema"], ["call", str(ws), "read_file", "{}"]):
        refused = run("tools", *command, "--profile", "nope")
        assert (refused.returncode, refused.stdout) == (1, "")
        assert "no profile 'nope'; the profiles are: agentfs" in refused.stderr
    assert json.loads(run("tools", "list", "--json", "--profile", "agentfs").stdout) == listed
    total = run("tools", "list", "--preset", "coding").stdout.splitlines()[-1]
    assert total.startswith("25 tools, ") and total.endswith(" of schema (OpenAI format)")
    assert sum(t["schema_chars"] for t in listed) > int(total.split()[2].replace(",", ""))
    refused = run("tools", "list", "--preset", "nope")
    assert refused.returncode == 1 and "the presets are: coding, memory" in refused.stderr
    missing = run("tools", "call", str(ws), "read_file", '{"path": "/zz"}')
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"]["code"] == "not_found"
    broken = run("tools", "call", str(ws), "read_file", '{"path": ')
    assert json.loads(broken.stdout)["error"]["code"] == "invalid_argument"
    with agentfs.open(ws) as opened:
        assert {c.name for c in opened.tool_calls.list()} == {"write_file", "read_file"}
        assert opened.version("/a.md").actor == "cli"
