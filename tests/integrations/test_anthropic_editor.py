"""The text editor tool (``text_editor_20250728``) over a workspace: the texts of Anthropic's
reference implementation, each command through a ``Toolset``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError

import agentfs
from agentfs.integrations.anthropic import AgentFSTextEditorTool
from agentfs.tools.policy import Policy, ToolPolicy


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[agentfs.Workspace]:
    with agentfs.open(tmp_path / "ws.db") as opened:
        yield opened


@pytest.fixture
def editor(ws: agentfs.Workspace) -> AgentFSTextEditorTool:
    return AgentFSTextEditorTool(ws, thread="t")


def call(editor: AgentFSTextEditorTool, **arguments: Any) -> str:
    return str(editor.call(arguments))


def error(editor: AgentFSTextEditorTool, **arguments: Any) -> str:
    with pytest.raises(ToolError) as caught:
        editor.call(arguments)
    return str(caught.value)


def test_create_view_and_view_range(editor: AgentFSTextEditorTool, ws: agentfs.Workspace) -> None:
    assert call(editor, command="create", path="/src/app.py", file_text="a\n\tb\nc") == (
        "File created successfully at: /src/app.py"
    )
    assert ws.read_text("/src/app.py") == "a\n\tb\nc"
    assert call(editor, command="view", path="/src/app.py") == (
        "Here's the result of running `cat -n` on /src/app.py:\n"
        "     1\ta\n     2\t        b\n     3\tc\n"
    )
    assert call(editor, command="view", path="/src/app.py", view_range=[2, -1]) == (
        "Here's the result of running `cat -n` on /src/app.py:\n     2\t        b\n     3\tc\n"
    )
    assert error(editor, command="view", path="/src/app.py", view_range=[0, 2]) == (
        "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of"
        " lines of the file: [1, 3]"
    )
    assert error(editor, command="view", path="/src/app.py", view_range=[1, 9]) == (
        "Invalid `view_range`: [1, 9]. Its second element `9` should be smaller than the number"
        " of lines in the file: `3`"
    )
    assert error(editor, command="view", path="/src/app.py", view_range=[3, 2]) == (
        "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than"
        " its first `3`"
    )
    assert error(editor, command="create", path="/src/app.py", file_text="x") == (
        "File already exists at: /src/app.py. Cannot overwrite files using command `create`."
    )
    assert error(editor, command="view", path="src/app.py") == (
        "The path src/app.py is not an absolute path, it should start with `/`. Maybe you meant"
        " src/app.py?"
    )
    assert error(editor, command="view", path="/nope.txt") == (
        "The path /nope.txt does not exist. Please provide a valid path."
    )
    assert error(editor, command="undo_edit", path="/src/app.py") == (
        "Unrecognized command undo_edit. The allowed commands for the"
        " str_replace_based_edit_tool tool are: view, create, str_replace, insert"
    )


def test_directories_are_viewed_two_levels_deep(
    editor: AgentFSTextEditorTool, ws: agentfs.Workspace
) -> None:
    for path in ("/p/a.txt", "/p/sub/b.txt", "/p/sub/deep/c.txt", "/p/.git/config"):
        ws.write(path, "x", parents=True)
    assert call(editor, command="view", path="/p/") == (
        "Here's the files and directories up to 2 levels deep in /p, excluding hidden items:\n"
        "/p\n/p/a.txt\n/p/sub\n/p/sub/b.txt\n/p/sub/deep\n\n"
    )
    assert error(editor, command="view", path="/p", view_range=[1, 2]) == (
        "The `view_range` parameter is not allowed when `path` points to a directory."
    )
    assert error(editor, command="insert", path="/p", insert_line=0, insert_text="x") == (
        "The path /p is a directory and only the `view` command can be used on directories"
    )


def test_str_replace_and_insert(editor: AgentFSTextEditorTool, ws: agentfs.Workspace) -> None:
    ws.write("/f.py", "".join(f"line {n}\n" for n in range(1, 11)))
    assert call(editor, command="str_replace", path="/f.py", old_str="line 6", new_str="six") == (
        "The file /f.py has been edited. Here's the result of running `cat -n` on a snippet of"
        " /f.py:\n     2\tline 2\n     3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tsix\n"
        "     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tline 10\n"
        "Review the changes and make sure they are as expected. Edit the file again if"
        " necessary."
    )
    assert error(editor, command="str_replace", path="/f.py", old_str="line 1", new_str="") == (
        "No replacement was performed. Multiple occurrences of old_str `line 1` in lines"
        " [1, 10]. Please ensure it is unique"
    )
    assert error(editor, command="str_replace", path="/f.py", old_str="zz", new_str="") == (
        "No replacement was performed, old_str `zz` did not appear verbatim in /f.py."
    )
    assert call(editor, command="insert", path="/f.py", insert_line=1, insert_text="new") == (
        "The file /f.py has been edited. Here's the result of running `cat -n` on a snippet of"
        " the edited file:\n     1\tline 1\n     2\tnew\n     3\tline 2\n     4\tline 3\n"
        "     5\tline 4\n     6\tline 5\n"
        "Review the changes and make sure they are as expected (correct indentation, no"
        " duplicate lines, etc). Edit the file again if necessary."
    )
    assert ws.read_text("/f.py").split("\n")[:3] == ["line 1", "new", "line 2"]
    assert error(editor, command="insert", path="/f.py", insert_line=40, insert_text="x") == (
        "Invalid `insert_line` parameter: 40. It should be within the range of lines of the"
        " file: [0, 12]"
    )
    assert [v.n for v in ws.history("/f.py")] == [1, 2, 3]


def test_max_characters_clips_the_view(ws: agentfs.Workspace) -> None:
    editor = AgentFSTextEditorTool(ws, max_characters=5)
    assert editor.to_dict() == {
        "type": "text_editor_20250728",
        "name": "str_replace_based_edit_tool",
        "max_characters": 5,
    }
    ws.write("/long.txt", "abcdefghij")
    assert str(editor.call({"command": "view", "path": "/long.txt"})).startswith(
        "Here's the result of running `cat -n` on /long.txt:\n     1\tabcde<response clipped>"
    )


def test_the_policy_rules_the_editor(ws: agentfs.Workspace) -> None:
    ws.write("/secrets/key", "k", parents=True)
    policy = Policy(
        defaults=ToolPolicy(deny=["/secrets/**"]), tools={"edit_file": ToolPolicy(enabled=False)}
    )
    editor = AgentFSTextEditorTool(ws, policy=policy)
    assert "does not let text_editor_view read" in error(
        editor, command="view", path="/secrets/key"
    )
    ws.write("/a.txt", "a")
    assert "disabled" in error(
        editor, command="str_replace", path="/a.txt", old_str="a", new_str="b"
    )
    assert ws.read_text("/a.txt") == "a"
