"""A mount under a policy (``agentfs mount --policy``, ``agentfs exec --policy``, a command of
``execute_command``): denied files absent by every name, writes outside the allow list
refused, read-only and size limits, each refusal reported; the shell finds no way round."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agentfs
from agentfs.mount.exec import fuse_available
from agentfs.mount.rules import MountRules
from agentfs.tools import Policy, ToolPolicy, Toolset
from tests.mount.conftest import fresh_mount

pytestmark = pytest.mark.skipif(
    fuse_available() is not None, reason=f"no FUSE here: {fuse_available()}"
)

POLICY = """
[defaults]
deny = ["/secrets/**", "**/.env"]

[tools.execute_command]
allow = ["/src/**", "/secrets/**", "/.env"]
"""


def _project(ws: agentfs.Workspace) -> None:
    ws.write("/src/app.py", "print('hi')\n", parents=True)
    ws.write("/secrets/key.txt", "hunter2\n", parents=True)
    ws.write("/.env", "TOKEN=abc\n")
    ws.write("/README", "read me\n")
    ws.link("/secrets/key.txt", "/src/hard.txt")
    ws.symlink("/secrets", "/src/innocent")


def _errno(call: object) -> int:
    try:
        call()  # type: ignore[operator]
    except OSError as exc:
        return exc.errno or 0
    return 0


def test_a_policy_mount_hides_denied_files_and_refuses_writes(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    with fresh_mount(tmp_path, "--policy", str(policy), populate=_project, via_cli=True) as m:
        d = m.dir
        assert sorted(os.listdir(d)) == ["README", "secrets", "src"]  # /secrets/** is inside
        assert os.listdir(d / "secrets") == []
        assert sorted(os.listdir(d / "src")) == ["app.py", "innocent"]  # hard.txt: a name of key
        for hidden in ("secrets/key.txt", ".env", "src/hard.txt", "src/innocent/key.txt"):
            assert _errno(lambda h=hidden: (d / h).read_bytes()) == errno.ENOENT, hidden
        assert (d / "src" / "app.py").read_text() == "print('hi')\n"
        (d / "src" / "new.py").write_text("x")  # inside the allow list
        assert _errno(lambda: (d / "top.txt").write_text("x")) == errno.EACCES
        assert _errno(lambda: (d / "README").write_text("x")) == errno.EACCES  # exists, outside
        emptied = os.O_RDONLY | os.O_TRUNC  # truncates, read-only as it is
        assert _errno(lambda: os.close(os.open(d / "README", emptied))) == errno.EACCES
        assert _errno(lambda: os.rename(d / "src" / "app.py", d / "app.py")) == errno.EACCES
        assert _errno(lambda: os.link(d / "src" / "app.py", d / "src" / ".env")) == errno.EACCES
        assert _errno(lambda: os.rename(d / "src", d / "elsewhere")) == errno.EACCES
        assert _errno(lambda: os.unlink(d / "README")) == errno.EACCES
        assert _errno(lambda: os.chmod(d / "README", 0o600)) == errno.EACCES
    with agentfs.open(tmp_path / "ws.db") as ws:
        assert ws.read("/secrets/key.txt") == b"hunter2\n" and ws.read("/README") == b"read me\n"
        assert ws.read("/src/new.py") == b"x" and not ws.exists("/top.txt")


def test_read_only_and_size_limits(tmp_path: Path) -> None:
    rules = MountRules(max_file_bytes=1000, max_workspace_bytes=None)
    with fresh_mount(tmp_path, "--rules", rules.to_json(), populate=_project) as m:
        f = m.dir / "src" / "big"
        with open(f, "wb", buffering=0) as out:
            out.write(b"x" * 1000)
            assert _errno(lambda: out.write(b"y")) == errno.EFBIG
        assert _errno(lambda: os.truncate(f, 5000)) == errno.EFBIG
    size = (tmp_path / "ws.db").stat().st_size  # checkpointed when the mount closed
    whole = MountRules(max_workspace_bytes=size + 256 * 1024)
    with fresh_mount(tmp_path / "whole", "--rules", whole.to_json(), populate=_project) as m:
        with open(m.dir / "src" / "fill", "wb", buffering=0) as out:
            written = 0
            while not (code := _errno(lambda: out.write(bytes(65536)))):
                written += 65536
                assert written < 8 * 1024 * 1024, "never refused"
        assert code == errno.ENOSPC
    read_only = MountRules(read_only=True)
    with fresh_mount(tmp_path / "ro", "--rules", read_only.to_json(), populate=_project) as m:
        assert (m.dir / "README").read_text() == "read me\n"
        assert _errno(lambda: (m.dir / "new").write_text("x")) == errno.EROFS


def test_the_shell_of_execute_command_sees_what_the_tools_see(ws: agentfs.Workspace) -> None:
    """``cat secrets/key.txt`` in ``execute_command`` finds nothing, nor does any other
    spelling, and the result (so the audit row) counts the refusals."""
    _project(ws)
    policy = Policy(
        defaults=ToolPolicy(deny=["/secrets/**", "**/.env"]),
        tools={
            "execute_command": ToolPolicy(allow=["/src/**", "/secrets/**", "/.env"]),
        },
    )
    tools = Toolset(ws, policy=policy, approve=lambda _request: True)
    attempts = (
        "cat secrets/key.txt; cat src/hard.txt; cat src/innocent/key.txt; cat .env;"
        " ls -a; grep -r hunter2 .; ln src/app.py src/.env; echo done"
    )
    result = tools.call("execute_command", {"command": attempts})
    shown = json.dumps(result)
    assert "hunter2" not in shown and "TOKEN" not in shown, shown
    assert result["stdout"].endswith("done\n") and "key.txt" not in result["stdout"]
    assert result["denied_total"] >= 4 and "lookup /secrets/key.txt" in result["denied"], result
    tools.flush()
    (call,) = ws.tool_calls.list(name="execute_command")
    assert call.result["denied_total"] == result["denied_total"]  # in the audit log


def test_exec_with_a_policy_reports_its_refusals(tmp_path: Path) -> None:
    db, policy = tmp_path / "ws.db", tmp_path / "policy.toml"
    policy.write_text(POLICY)
    with agentfs.open(db) as ws:
        _project(ws)
    done = subprocess.run(
        [
            *(sys.executable, "-m", "agentfs.cli", "exec", str(db), "--policy", str(policy)),
            *("--", "sh", "-c", "cat secrets/key.txt; echo x > top.txt; echo y > src/ok.txt"),
        ],
        capture_output=True,
        text=True,
    )
    assert "hunter2" not in done.stdout
    assert "refused by the policy: lookup /secrets/key.txt" in done.stderr, done.stderr
    assert "refused by the policy: create /top.txt" in done.stderr, done.stderr
    with agentfs.open(db) as ws:
        assert ws.read("/src/ok.txt") == b"y\n" and not ws.exists("/top.txt")
