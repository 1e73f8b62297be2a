"""Run a command, and when it ends, end everything it started: the unsandboxed twin of the
sandbox's PID namespace (``python reaper.py COMMAND...``; standard library only, as it runs
with ``-I -S``).

A process group is not enough: ``setsid``, ``nohup`` and daemons leave it, keep the output
pipes open (so the caller never sees the end of the output) and hold files open in the
mount. This process makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every
orphan of the command is re-parented to it rather than to init; when the command exits, or
this process gets SIGTERM (the caller's timeout) or SIGHUP, it kills every process below it
until none is left, then exits as the command did (the same code, or the same signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


#: What tells the reaper to end the command now: the caller's timeout (SIGTERM), a
#: terminal's hang-up.
STOP = {signal.SIGTERM, signal.SIGHUP}


def main(argv: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"agentfs: cannot become a subreaper: {os.strerror(ctypes.get_errno())}")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl-C is the command's
    # Signals are taken synchronously (sigwaitinfo), never by a handler: one that arrived
    # between two steps could not interrupt the clean-up.
    waited = {signal.SIGCHLD, *STOP}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, waited)
    command = os.fork()
    if command == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            print(f"{argv[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)
    status = _wait_for(command, waited)
    _kill_all_below(os.getpid())
    if status is not None and not os.WIFSIGNALED(status):
        sys.exit(os.waitstatus_to_exitcode(status))
    sig = signal.SIGKILL if status is None else os.WTERMSIG(status)
    if sig != signal.SIGKILL:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # a signal this process cannot die of


def _wait_for(command: int, waited: set[signal.Signals]) -> int | None:
    """The command's wait status once it ends (orphans re-parented here are reaped on the
    way), or None when told to stop first."""
    while True:
        while True:  # reap what has ended
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return None  # cannot happen while the command is ours to wait for
            if pid == 0:
                break
            if pid == command:
                return status
        if signal.sigwaitinfo(waited).si_signo in STOP:
            return None


def _kill_all_below(me: int) -> None:
    """Stop every descendant, then kill them all and reap them, until none is left. Stopped
    first, so that none acts on another's death (a shell running its next command when its
    child is killed); a process forked meanwhile is found on the next pass, and the killed
    ones' children come to us. Each is held by a pidfd, and signalled only if it is still
    below us once held: a pid reused by an unrelated process meanwhile is never touched."""
    while True:
        held: dict[int, int] = {}
        try:
            while found := _descendants(me) - held.keys():
                for pid in found:
                    with contextlib.suppress(ProcessLookupError):
                        held[pid] = os.pidfd_open(pid)
                still = _descendants(me)
                for pid in found & held.keys():
                    if pid in still:
                        _signal(held[pid], signal.SIGSTOP)
            if not held:
                return
            for pidfd in held.values():
                _signal(pidfd, signal.SIGKILL)
        finally:
            for pidfd in held.values():
                os.close(pidfd)
        _reap_for(1.0)


def _signal(pidfd: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(pidfd, sig)


def _reap_for(seconds: float) -> None:
    """Reap what has ended, for up to ``seconds`` or until no child is left."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.005)


def _descendants(root: int) -> set[int]:
    """Every process whose chain of parents leads to ``root`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


if __name__ == "__main__":
    main(sys.argv[1:])
