"""What the hypothesis state machines share: a workspace in a temporary directory of its own that
fsck must find clean after every step, a host directory to run the same calls on, path
strategies that make operations collide, and the settings they run under."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant

import agentfs
from agentfs import fsck

#: Few names, so that operations often meet the same path.
NAMES = ("a", "b", "c")


def paths(names: Sequence[str] = NAMES, depth: int = 2) -> st.SearchStrategy[str]:
    """Absolute paths of 1 to ``depth`` components drawn from ``names``."""
    return st.lists(st.sampled_from(names), min_size=1, max_size=depth).map(
        lambda parts: "/" + "/".join(parts)
    )


def machine_settings(
    max_examples: int,
    steps: int,
    *,
    fixed: bool = True,
    suppress: Sequence[HealthCheck] = (),
    **more: Any,
) -> settings:
    """``max_examples`` runs of ``steps`` steps each, with no deadline (a step may be slow);
    ``fixed``: the same sequences on every run and machine (derandomized, no example
    database)."""
    if fixed:
        more.update(derandomize=True, database=None)
    return settings(
        max_examples=max_examples,
        stateful_step_count=steps,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, *suppress],
        **more,
    )


def assert_clean(ws: agentfs.Workspace) -> None:
    report = fsck.check(ws)
    assert report.clean, report.problems


class WorkspaceMachine(RuleBasedStateMachine):
    """A workspace (``self.ws``) in a temporary directory (``self.tmp``) made for each run and
    removed at its teardown, which fsck must find clean after every step. The keyword
    arguments are ``agentfs.open``'s."""

    #: Where the temporary directory is made (None: the system's default).
    tmp_dir: ClassVar[str | None] = None

    def __init__(self, **options: Any) -> None:
        super().__init__()
        prefix = f"agentfs-{type(self).__name__.lower()}-"
        self.tmp = tempfile.mkdtemp(prefix=prefix, dir=self.tmp_dir)
        self._opened: list[agentfs.Workspace] = []
        self.ws = self.open_workspace(**options)

    def open_workspace(self, **options: Any) -> agentfs.Workspace:
        """The workspace file opened once more (closed at teardown)."""
        ws = agentfs.open(os.path.join(self.tmp, "ws.db"), **options)
        self._opened.append(ws)
        return ws

    def teardown(self) -> None:
        for ws in reversed(self._opened):
            ws.close()
        shutil.rmtree(self.tmp)

    @invariant()
    def fsck_finds_the_workspace_clean(self) -> None:
        assert_clean(self.ws)


def _errno_name(exc: OSError | None) -> str:
    if exc is None:
        return "success"
    return errno.errorcode.get(exc.errno or 0, str(exc.errno))


class HostMachine(WorkspaceMachine):
    """A workspace and a directory on the host (``self.host``, in the same temporary
    directory) that each rule runs the same call on, through ``both``."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.host = os.path.join(self.tmp, "host")
        os.mkdir(self.host, 0o755)

    def h(self, path: str) -> str:
        """The host's path for the workspace's ``path``."""
        return self.host + path

    def both(
        self, label: str, on_ws: Callable[[], Any], on_host: Callable[[], Any]
    ) -> tuple[Any, Any]:
        """Run the same operation on both sides; both succeed or both fail with one errno.
        Returns what each returned (None for a failure)."""
        results: list[Any] = []
        errors: list[OSError | None] = []
        for call in (on_ws, on_host):
            try:
                results.append(call())
                errors.append(None)
            except OSError as exc:
                results.append(None)
                errors.append(exc)
        ws_exc, host_exc = errors
        codes = [None if exc is None else exc.errno for exc in errors]
        assert codes[0] == codes[1], (
            f"{label}: workspace {_errno_name(ws_exc)} ({ws_exc}),"
            f" host {_errno_name(host_exc)} ({host_exc})"
        )
        return results[0], results[1]
