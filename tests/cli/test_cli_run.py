"""``agentfs run``: a command over the current directory, in the mount of a workspace whose base
it is, kept for the next run; the directory untouched, the command's exit status passed on."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from tests.clirun import assert_user_error, run

needs_mount = pytest.mark.skipif(
    fuse_available() is not None, reason=f"no FUSE here: {fuse_available()}"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("print('hello')\n")
    monkeypatch.chdir(root)
    return root


@needs_mount
def test_a_run_changes_the_workspace_and_the_next_run_sees_it(
    project: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    first = run("run", "--", "sh", "-c", "echo changed > app.py && echo new > NEW.md")
    assert first.exit_code == 0, (first.output, first.exception)
    assert "modified /app.py" in first.stderr and "added    /NEW.md" in first.stderr
    assert "agentfs: apply:  agentfs apply .agentfs/run.db" in first.stderr
    assert (project / "app.py").read_text() == "print('hello')\n"  # untouched
    assert not (project / "NEW.md").exists()
    assert (project / ".agentfs" / ".gitignore").read_text() == "*\n"
    capfd.readouterr()
    second = run("run", "--", "sh", "-c", "cat app.py NEW.md; exit 7")
    assert second.exit_code == 7
    assert capfd.readouterr().out == "changed\nnew\n"  # the command's own output
    with agentfs.open(project / ".agentfs" / "run.db") as ws:
        assert ws.base is not None and ws.base.root == str(project)


@needs_mount
def test_nothing_changed_is_said(project: Path) -> None:
    done = run("run", "--", "true")
    assert done.exit_code == 0 and "agentfs: nothing changed" in done.stderr


def test_a_workspace_over_another_directory_is_refused(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    agentfs.open(tmp_path / "other.db", base=elsewhere).close()
    assert_user_error(run("run", "--ws", tmp_path / "other.db", "--", "true"), "its base is")
