"""A workspace is its owner's, through the mount as through the API, for root and for a
normal user alike (``box``): real programs (git, python, the shell's file commands) run in
the mount (or a copy) as that user, unsandboxed and sandboxed, and everything they make is
recorded as the owner's. Before migration 13 a normal user could not write their own
workspace at all."""

from __future__ import annotations

import pytest
from security_bench import Box, shown

#: What a developer does in a checkout: a repository, a commit, a script's output, the
#: usual file operations; then the owner of what was made, as the mount shows it.
WORK = """set -e
git init -q -b main repo && cd repo
printf 'print("hi")\\n' > app.py
git add app.py
git -c user.email=a@example.com -c user.name=a commit -qm first
python3 app.py > out.txt
mkdir -p build/sub && chmod 700 build && mv out.txt build/sub/
ln -s app.py link.py && ln app.py hard.py && rm hard.py
echo more >> app.py && git -c user.email=a@example.com -c user.name=a commit -qam second
git log --oneline | wc -l
stat -c '%u' . app.py build build/sub/out.txt
"""


@pytest.mark.parametrize("mode", ["mount", "copy"])
@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandbox"])
def test_the_owner_works_in_the_workspace_with_real_programs(
    box: Box, sandboxed: bool, mode: str
) -> None:
    r = box.run(WORK, sandbox=sandboxed, timeout=120, mode=mode)
    assert r.exit_code == 0, shown(r)
    commits, *owners = r.stdout.split()
    inside = 1000 if sandboxed else box.owner_uid  # the sandbox's user is uid 1000 inside
    assert commits == "2" and owners == [str(inside)] * 4, shown(r)
    with box.workspace() as ws:
        assert ws.read("/repo/build/sub/out.txt") == b"hi\n"
        made = ["/", "/repo", "/repo/app.py", "/repo/build", "/repo/.git/HEAD"]
        assert {ws.lstat(p).st_uid for p in made} == {box.owner_uid}
        assert ws.lstat("/repo/build").st_mode & 0o777 == 0o700
