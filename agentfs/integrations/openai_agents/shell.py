"""The SDK's ``shell`` tool over a workspace: ``ShellExecutor``, for ``ShellTool(executor=...)``.

Each command of a shell call runs as one call of agentfs's own ``execute_command`` tool: in the
workspace mounted as a directory (or a copy, where the policy allows one), sandboxed, after a
snapshot that undoes it, audited with the operator's policy for ``execute_command`` applied.
What it did comes back in the SDK's shape: a ``ShellCommandOutput`` per command (stdout,
stderr, and an ``exit`` or ``timeout`` outcome), the request's timeout and output length
honoured. A command the policy or the host refuses ran nowhere: its output is agentfs's
message on stderr with exit code 126, as a shell reports a command it cannot run.
"""

from __future__ import annotations

from typing import Any

from agents.tool import (
    ShellCallOutcome,
    ShellCommandOutput,
    ShellCommandRequest,
    ShellResult,
)

from agentfs.integrations.openai_agents.editor import ACTOR
from agentfs.integrations.toolsets import Flushing, toolset_for
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.policy import Policy
from agentfs.tools.toolset import Approve, Toolset

#: The exit code of a command that did not run (refused by the policy, or no sandbox here).
NOT_RUN = 126
#: ``execute_command``'s bounds on its output (KiB of each stream) and timeout (ms).
_MOST_KB = 10_240
_MOST_MS = 3_600_000


class ShellExecutor(Flushing):
    """A ``ShellExecutor`` for ``agents.ShellTool``::

        ShellTool(executor=ShellExecutor(ws, thread="chat-42"), needs_approval=True)

    ``timeout_ms`` applies when the request gives none. The SDK's ``needs_approval`` is the
    way to ask a person first: the default policy asks none of its own for commands (an
    operator's policy applies as written). Given a ``Toolset``, its workspace, thread, actor,
    policy and approval. Close it (or leave its ``with`` block) to publish the audit rows of
    the last refused calls at once.
    """

    def __init__(
        self,
        ws: WorkspaceAPI | Toolset,
        *,
        thread: str = "main",
        actor: str | None = ACTOR,
        policy: Policy | None = None,
        approve: Approve | None = None,
        timeout_ms: int = 60_000,
        cwd: str | None = None,
    ) -> None:
        self.toolset = toolset_for(ws, thread=thread, actor=actor, policy=policy, approve=approve)
        self.timeout_ms = timeout_ms
        self.cwd = cwd

    def __call__(self, request: ShellCommandRequest) -> ShellResult:
        action = request.data.action
        most = action.max_output_length
        most = None if most is None else max(0, most)
        timeout = action.timeout_ms if action.timeout_ms is not None else self.timeout_ms
        outputs = [
            self.run(command, timeout_ms=timeout, max_output_length=most)
            for command in action.commands
        ]
        return ShellResult(output=outputs, max_output_length=most)

    def run(
        self, command: str, *, timeout_ms: int | None = None, max_output_length: int | None = None
    ) -> ShellCommandOutput:
        """One command, as ``execute_command`` runs it; its output in the SDK's shape, each
        of stdout and stderr (in that order) cut to ``max_output_length`` characters in all."""
        arguments: dict[str, Any] = {
            "command": command,
            "timeout_ms": min(max(1, timeout_ms or self.timeout_ms), _MOST_MS),
        }
        if max_output_length is not None:  # KiB enough for that many characters
            arguments["max_output_kb"] = min(max(1, -(-max_output_length * 4 // 1024)), _MOST_KB)
        if self.cwd is not None:
            arguments["cwd"] = self.cwd
        result = self.toolset.invoke("execute_command", arguments)
        data = result.data
        if result.error is not None:
            output = ShellCommandOutput(
                stderr=f"agentfs: {result.text}\n",
                outcome=ShellCallOutcome(type="exit", exit_code=NOT_RUN),
                command=command,
            )
        else:
            outcome = (
                ShellCallOutcome(type="timeout")
                if data["timed_out"]
                else ShellCallOutcome(type="exit", exit_code=data["exit_code"])
            )
            stderr = data["stderr"] + "".join(f"agentfs: {note}\n" for note in _notes(data))
            output = ShellCommandOutput(
                stdout=data["stdout"],
                stderr=stderr,
                outcome=outcome,
                command=command,
                provider_data={"snapshot": data["snapshot"], "mode": data["mode"]},
            )
        return _cut(output, max_output_length)


def _notes(data: dict[str, Any]) -> list[str]:
    """What agentfs has to add to a command's stderr: how to undo it, what the policy refused
    through the mount, what a copy did not carry back."""
    notes = [f"refused by the policy: {line}" for line in data.get("denied", [])]
    notes += [f"not copied back: {line}" for line in data.get("skipped", [])]
    notes += [
        f"also changed meanwhile (the command's result kept): {p}"
        for p in data.get("conflicts", [])
    ]
    if data.get("out_of_memory"):
        notes.append("a process was killed at the sandbox's memory limit")
    return notes


def _cut(output: ShellCommandOutput, most: int | None) -> ShellCommandOutput:
    if most is None:
        return output
    output.stdout = output.stdout[:most]
    output.stderr = output.stderr[: most - len(output.stdout)]
    return output
