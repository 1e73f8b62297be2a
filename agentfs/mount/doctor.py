"""What this host lets agentfs do: each piece the mount and the sandbox need, whether it
works here, and what its absence disables (``agentfs doctor``).

Nothing here turns anything off: the mount and the sandbox check for themselves and fail
closed (docs/security.md). This only says ahead of time what they would find.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from agentfs.mount import cgroup, identity, sandbox
from agentfs.mount.exec import fuse_available

#: What a missing sandbox part disables.
NO_SANDBOX = (
    "sandboxed commands (agentfs exec --sandbox, ws.run(sandbox=True), execute_command) are refused"
)


@dataclass(frozen=True)
class Check:
    """One piece: ``problem`` is None when it works here."""

    name: str
    problem: str | None
    detail: str
    disables: str
    #: Does anything refuse to run without it (else it only makes something stronger)?
    needed: bool = True

    @property
    def ok(self) -> bool:
        return self.problem is None

    def as_dict(self) -> dict[str, object]:
        return asdict(self) | {"ok": self.ok}


def checks() -> list[Check]:
    """Every piece, in the order a reader would fix them."""
    found = [
        Check(
            "FUSE",
            fuse_available(),
            "/dev/fuse, fusermount3 and pyfuse3",
            "agentfs mount; agentfs exec and ws.run run commands in a copy, execute_command"
            " refuses them unless the policy sets [commands] copy_fallback",
        )
    ]
    details = {
        "bubblewrap": "namespaces for the command (Debian bubblewrap)",
        "seccomp": "the system-call filter (libseccomp2 through pyseccomp)",
        "limits": "memory, processes, files and CPU bounded (prlimit)",
        "user namespaces": "the command as an unprivileged user without capabilities",
    }
    for name, problem in sandbox.parts():
        found.append(Check(name, problem, details[name], NO_SANDBOX))
    uid, gid = identity.host_identity()
    who = "a user of their own" if identity.switches_user() else "this user"
    found.append(
        Check(
            "sandbox user",
            None,
            f"sandboxed commands run as {who} ({uid}:{gid}) on the host, uid"
            f" {sandbox.INSIDE_UID} inside",
            "",
        )
    )
    found.append(_cgroups())
    return found


def _cgroups() -> Check:
    """A memory cgroup is the one part a sandbox runs without (each process's limits still
    hold), so its absence is reported but is no failure."""
    place = cgroup.find()
    where = f" ({place.describe()})" if isinstance(place, cgroup.Place) else ""
    return Check(
        "memory cgroup",
        place if isinstance(place, str) else None,
        f"memory of all of a command's processes together, shared memory included{where}",
        "only each process's own memory is bounded (docs/security.md: Memory in all)",
        needed=False,
    )
