"""The attacks a sandboxed command might try, each run as agentfs run by root and by an
unprivileged user (``box``): every test asserts that the attack failed *and* that the host
shows no trace of it, and each probe reports what it got, so a failure says what leaked."""

from __future__ import annotations

import os
import secrets
import shlex
import stat
import time
from pathlib import Path

import pytest
from security_bench import (
    Box,
    host_processes,
    host_uids,
    shown,
    wait_until_gone,
)

import agentfs
from agentfs.mount import cgroup, sandbox
from agentfs.mount.sandbox import Limits

MIB = 1024 * 1024


def _marker() -> str:
    """An argument no other process of the host has."""
    return f"agentfs-probe-{secrets.token_hex(8)}"


def _host_names(path: str) -> set[str]:
    """The account names in one of the host's ``/etc/passwd``-like files."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return {line.split(":")[0] for line in lines if line and not line.startswith("#")}


# --- 1. who the command is -------------------------------------------------------------------


def test_no_capabilities_and_never_host_root(box: Box) -> None:
    """Inside it is uid 1000 with empty capability sets, no_new_privs and the seccomp filter
    on; on the host its processes belong to an unprivileged user (read from the host's /proc
    while it runs), and what it creates is recorded as the workspace owner's."""
    marker = _marker()
    started = box.start(
        "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status;"
        " echo ids $(id -u) $(id -g);"
        f" touch made.txt; exec python3 -c 'import time; time.sleep(1)' {marker}"
    )
    seen: list[int] = []
    while not seen and started.running():
        seen = host_processes(marker)
        time.sleep(0.01)
    assert seen, "the probe never showed up on the host"
    uids = host_uids(seen[0])
    host_caps = [
        line
        for line in Path(f"/proc/{seen[0]}/status").read_text().splitlines()
        if line.startswith("CapEff:")
    ]
    r = started.wait()
    assert r.exit_code == 0, shown(r)
    caps = dict(line.split(":\t") for line in r.stdout.splitlines() if line.startswith("Cap"))
    assert set(caps) == {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}, shown(r)
    assert all(int(value, 16) == 0 for value in caps.values()), shown(r)
    assert "NoNewPrivs:\t1" in r.stdout and "Seccomp:\t2" in r.stdout, shown(r)
    assert "ids 1000 1000" in r.stdout, shown(r)
    assert uids == [box.sandbox_uid] * 4 and 0 not in uids, (uids, shown(r))
    assert host_caps == ["CapEff:\t0000000000000000"], (host_caps, shown(r))
    with box.workspace() as ws:
        assert ws.stat("/made.txt").st_uid == box.owner_uid, shown(r)


# --- 2. the read-only system -----------------------------------------------------------------


def test_cannot_remount_or_write_the_system(box: Box) -> None:
    """Remounting /usr read-write, mounting a tmpfs, and writing into /usr, /etc, /opt, /bin
    and / all fail, and none of the files lands on the host."""
    name = _marker()
    targets = [f"/usr/{name}", f"/etc/{name}", f"/opt/{name}", f"/bin/{name}", f"/{name}"]
    hosts_before = Path("/etc/hosts").read_bytes()
    attempts = [
        "mount -o remount,rw /usr",
        "mount -o remount,rw /",
        "mount -t tmpfs none /tmp/x",
        "mount --bind /workspace /usr/bin",
        *(f"touch {target}" for target in targets),
        f"touch /usr/{name}",  # again, in case a remount above took
        "sh -c 'echo 0.0.0.0 evil >> /etc/hosts'",
        f"mkdir /{name}.d",
    ]
    script = "mkdir -p /tmp/x\n" + "".join(
        f"if {a} 2>/dev/null; then echo {shlex.quote('DONE: ' + a)};"
        f" else echo {shlex.quote('refused: ' + a)}; fi\n"
        for a in attempts
    )
    r = box.run(["bash", "-c", script + "touch /workspace/ok && echo 'workspace ok'"])
    assert "DONE" not in r.stdout, shown(r)
    assert r.stdout.count("refused: ") == len(attempts), shown(r)
    assert "workspace ok" in r.stdout, shown(r)  # the probe could write where it may
    for target in [*targets, f"/{name}.d"]:
        assert not os.path.lexists(target), (target, shown(r))
    assert Path("/etc/hosts").read_bytes() == hosts_before, shown(r)


# --- 3. the host's environment ---------------------------------------------------------------

SECRETS = {
    "AGENTFS_TEST_TOKEN": f"agentfs-{secrets.token_hex(8)}",
    "TURSO_AUTH_TOKEN": f"turso-{secrets.token_hex(8)}",
    "LIBSQL_AUTH_TOKEN": f"libsql-{secrets.token_hex(8)}",
    "OPENAI_API_KEY": f"openai-{secrets.token_hex(8)}",
}


def test_host_environment_is_not_visible_inside(box: Box) -> None:
    """Secrets in the environment of the process running agentfs reach no process inside:
    not ``env``, not any ``/proc/*/environ`` (bubblewrap's own included)."""
    script = (
        "env; n=0; for f in /proc/[0-9]*/environ; do"
        " tr '\\0' '\\n' < $f && n=$((n+1)); done; echo \"environ files read: $n\""
    )
    r = box.run(["sh", "-c", script], host_env=SECRETS)
    assert r.exit_code == 0, shown(r)
    read = int(r.stdout.rsplit("environ files read: ", 1)[1])
    assert read >= 2, shown(r)  # bubblewrap's PID 1 and the shell at least
    for key, value in SECRETS.items():
        assert value not in r.stdout + r.stderr, (key, shown(r))
        assert key not in r.stdout, (key, shown(r))


def test_unsandboxed_command_does_not_inherit_agentfs_or_sync_tokens(box: Box) -> None:
    """Without a sandbox the command inherits the caller's environment, less agentfs's own
    variables and the sync server's tokens (a control variable shows the rest comes)."""
    control = {"SECURITY_TEST_CONTROL": "visible"}
    r = box.run("env", sandbox=False, host_env=SECRETS | control)
    assert r.exit_code == 0, shown(r)
    assert "SECURITY_TEST_CONTROL=visible" in r.stdout.splitlines(), shown(r)
    for key in ("AGENTFS_TEST_TOKEN", "TURSO_AUTH_TOKEN", "LIBSQL_AUTH_TOKEN"):
        assert key not in r.stdout and SECRETS[key] not in r.stdout, (key, shown(r))


# --- 4. /etc ---------------------------------------------------------------------------------


def test_etc_has_no_secrets_and_no_host_accounts(box: Box) -> None:
    """No shadow, gshadow or sudoers inside, and the users and groups it sees are its own
    three, none of the host's accounts (root and nobody aside)."""
    script = (
        "for f in shadow gshadow sudoers sudoers.d shadow- gshadow- passwd- ssh machine-id;"
        " do test -e /etc/$f && echo PRESENT $f; done;"
        " cat /etc/shadow; echo '--- passwd'; cat /etc/passwd; echo '--- group'; cat /etc/group;"
        " echo '--- getent'; getent passwd; getent group"
    )
    r = box.run(script)
    assert "PRESENT" not in r.stdout, shown(r)
    assert "No such file" in r.stderr, shown(r)  # cat /etc/shadow
    inside = {line.split(":")[0] for line in r.stdout.splitlines() if ":" in line}
    assert inside == {"root", "agent", "nobody", "nogroup"}, shown(r)
    host = (_host_names("/etc/passwd") | _host_names("/etc/group")) - {"root", "nobody", "nogroup"}
    assert host, "the host has no other accounts to look for"
    assert not host & inside, shown(r)


# --- 5. host paths ---------------------------------------------------------------------------


def test_no_host_path_is_visible(box: Box, tmp_path: Path) -> None:
    """The mount table, the working directory and error messages name /workspace, never the
    workspace file, its directory, the mount's temporary directory or the test's."""
    script = (
        "cat /proc/self/mountinfo /proc/self/mounts; pwd; readlink /proc/self/cwd;"
        " ls -l /proc/self/fd; cat missing.txt;"
        " python3 -c 'import os; open(os.path.abspath(\"gone.txt\"))'"
    )
    r = box.run(script)
    everything = r.stdout + r.stderr
    for host_path in (str(box.db), str(box.dir), str(tmp_path), "agentfs-exec-"):
        assert host_path not in everything, (host_path, shown(r))
    lines = r.stdout.splitlines()
    assert lines.count("/workspace") == 2, shown(r)  # pwd, readlink
    assert "/workspace/gone.txt" in r.stderr and "missing.txt" in r.stderr, shown(r)
    workspace = [line.split() for line in lines if " /workspace " in line]
    assert workspace and all("agentfs" in fields for fields in workspace), shown(r)


# --- 6. other processes ----------------------------------------------------------------------

PROCESS_PROBE = """
import ctypes, errno, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long

def report(name, rc):
    code = ctypes.get_errno()
    print(name, "OK" if rc != -1 else errno.errorcode.get(code, code), flush=True)

pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("pids", *pids)
for host_pid in map(int, sys.argv[1:]):
    try:
        os.kill(host_pid, 0)
        print("kill", host_pid, "OK")
    except OSError as e:
        print("kill", host_pid, errno.errorcode[e.errno])
    print("see", host_pid, os.path.exists(f"/proc/{host_pid}"))

secret = ctypes.create_string_buffer(b"child's memory")
sys.stdout.flush()  # a child's flush must not print this again
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
report("PTRACE_ATTACH", libc.ptrace(16, child, None, None))
report("PTRACE_SEIZE", libc.ptrace(0x4206, child, None, None))

class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

buf = ctypes.create_string_buffer(32)
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 32)
remote = iovec(ctypes.cast(secret, ctypes.c_void_p), len(secret))
libc.process_vm_readv.restype = ctypes.c_ssize_t
libc.process_vm_writev.restype = ctypes.c_ssize_t
args = (child, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
report("process_vm_readv", libc.process_vm_readv(*args))
report("process_vm_writev", libc.process_vm_writev(*args))
print("read", buf.value, flush=True)
os.kill(child, 9)
os.waitpid(child, 0)

traced = os.fork()
if traced == 0:
    report("PTRACE_TRACEME", libc.ptrace(0, 0, None, None))
    os._exit(0)
os.waitpid(traced, 0)
"""


def test_cannot_see_signal_or_trace_other_processes(box: Box) -> None:
    """Its PID namespace holds only its own few processes: the test's process and its parent
    are out of reach (no signal, no /proc entry); ptrace and process_vm_readv/writev are
    refused even on its own child."""
    host_pids = [pid for pid in (os.getpid(), os.getppid()) if pid >= 10]
    assert host_pids, "no host process with a number the sandbox's own could not have"
    r = box.run(["python3", "-c", PROCESS_PROBE, *map(str, host_pids)])
    assert r.exit_code == 0, shown(r)
    out = r.stdout.splitlines()
    pids = [int(p) for p in next(line for line in out if line.startswith("pids")).split()[1:]]
    assert len(pids) <= 3 and max(pids) < 10, shown(r)  # bubblewrap, the probe (and a child)
    for pid in host_pids:
        assert f"kill {pid} ESRCH" in out and f"see {pid} False" in out, shown(r)
    for call in ("PTRACE_ATTACH", "PTRACE_SEIZE", "PTRACE_TRACEME"):
        assert f"{call} EPERM" in out, shown(r)
    for call in ("process_vm_readv", "process_vm_writev"):
        assert f"{call} EPERM" in out, shown(r)
    assert "read b''" in out, shown(r)


# --- 7. device nodes -------------------------------------------------------------------------


def test_cannot_make_device_nodes(box: Box) -> None:
    """mknod of a character or block device fails in /tmp and in the workspace, and no
    device lands in the workspace (a FIFO, which needs no privilege, does)."""
    script = (
        "for target in /tmp/null /workspace/dev dev2; do"
        " mknod $target c 1 3 && echo MADE $target; done;"
        " mknod blk b 8 0 && echo MADE blk;"
        " python3 -c 'import os; os.mknod(\"dev3\", 0o20666, os.makedev(1, 3))' && echo MADE dev3;"
        " mkfifo fifo && echo fifo made; grep ' /workspace ' /proc/self/mountinfo"
    )
    r = box.run(script)
    assert "MADE" not in r.stdout and "fifo made" in r.stdout, shown(r)
    options = r.stdout.split(" /workspace ")[1].split()[0].split(",")
    assert "nodev" in options and "nosuid" in options, shown(r)
    with box.workspace() as ws:
        kinds = {name: ws.lstat(f"/{name}").st_mode for name in ws.listdir("/")}
    assert stat.S_ISFIFO(kinds.pop("fifo")), (kinds, shown(r))
    assert not any(stat.S_ISCHR(m) or stat.S_ISBLK(m) for m in kinds.values()), (kinds, shown(r))


# --- 8. resource limits ----------------------------------------------------------------------

LIMITS = Limits(
    memory_mb=1536, processes=77, open_files=333, file_size_mb=12, cpu_seconds=99, tmp_mb=20
)
LIMIT_PROBE = """
import resource
names = ["DATA", "NPROC", "NOFILE", "FSIZE", "CPU", "CORE"]
for name in names:
    print("limit", name, *resource.getrlimit(getattr(resource, "RLIMIT_" + name)))
for name in names:
    which = getattr(resource, "RLIMIT_" + name)
    try:
        resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print("RAISED", name)
    except (ValueError, OSError) as e:
        print("refused", name, e)
"""


def test_cannot_raise_its_limits(box: Box) -> None:
    """Every process starts with the hard limits asked for, and neither prlimit, ulimit nor
    setrlimit can raise them (afterwards a new process still has them)."""
    script = (
        "prlimit --pid $$ --nproc=unlimited && echo RAISED prlimit;"
        " prlimit --pid $$ --nofile=100000:100000 && echo RAISED prlimit-nofile;"
        " (ulimit -H -u unlimited) && echo RAISED ulimit;"
        " (ulimit -H -f unlimited) && echo RAISED ulimit-f;"
        f" python3 -c '{LIMIT_PROBE}'"
    )
    r = box.run(["bash", "-c", script], limits=LIMITS)
    assert "RAISED" not in r.stdout, shown(r)
    assert r.stdout.count("refused") == 6, shown(r)
    seen = {
        fields[1]: (int(fields[2]), int(fields[3]))
        for fields in (line.split() for line in r.stdout.splitlines())
        if fields[0] == "limit"
    }
    expected = {
        "DATA": LIMITS.memory_mb * MIB,
        "NPROC": LIMITS.processes,
        "NOFILE": LIMITS.open_files,
        "FSIZE": LIMITS.file_size_mb * MIB,
        "CORE": 0,
    }
    hard_cpu = LIMITS.cpu_seconds + sandbox.CPU_GRACE  # SIGXCPU first, SIGKILL at the hard one
    assert seen == {
        **{name: (value, value) for name, value in expected.items()},
        "CPU": (LIMITS.cpu_seconds, hard_cpu),
    }, shown(r)


# --- 9. fork bomb ----------------------------------------------------------------------------

FORK_BOMB = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""


def test_fork_bomb_is_bounded_and_cleaned_up(box: Box) -> None:
    """A fork bomb under ``processes=64`` never has more than 64 processes (counted on the
    host while it runs), the timeout ends it promptly, and none of it survives."""
    marker = _marker()
    began = time.monotonic()
    bomb = f"exec python3 -c {shlex.quote(FORK_BOMB)} {marker}"  # only the bomb has marker alone
    started = box.start(bomb, limits=Limits(processes=64), timeout=2)
    most = 0
    while started.running():
        most = max(most, len(host_processes(marker)))
        time.sleep(0.05)
    r = started.wait()
    elapsed = time.monotonic() - began
    assert r.timed_out, shown(r)
    assert elapsed < 15, f"returned after {elapsed:.1f} s\n{shown(r)}"
    assert 1 < most <= 64, f"{most} processes of the bomb at once\n{shown(r)}"
    assert wait_until_gone(marker) == [], f"the bomb outlived the command\n{shown(r)}"


# --- 10. filling the disk --------------------------------------------------------------------


def test_file_size_and_tmp_limits_stop_a_disk_fill(box: Box) -> None:
    """``file_size_mb=8``: a 100 MB write stops at 8 MiB (SIGXFSZ for head, EFBIG for
    Python, which ignores the signal), and the workspace keeps at most 8 MiB; /tmp and
    /dev/shm hold ``tmp_mb`` and then say ENOSPC."""
    script = (
        'head -c 100000000 /dev/zero > big; echo "head exit $?";'
        ' python3 -c \'open("big2", "wb").write(bytes(100_000_000))\'; echo "python exit $?";'
        ' head -c 6000000 /dev/zero > /tmp/fill; echo "tmp exit $?";'
        ' head -c 6000000 /dev/zero > /dev/shm/fill; echo "shm exit $?"'
    )
    r = box.run(script, limits=Limits(file_size_mb=8, tmp_mb=4), timeout=60)
    out = r.stdout.splitlines()
    assert "head exit 153" in out, shown(r)  # 128 + SIGXFSZ
    assert "python exit 1" in out and "File too large" in r.stderr, shown(r)
    assert "tmp exit 1" in out and "shm exit 1" in out, shown(r)
    assert r.stderr.count("No space left on device") == 2, shown(r)
    with box.workspace() as ws:
        for name in ("/big", "/big2"):
            size = ws.stat(name).st_size
            assert 0 < size <= 8 * MIB, (name, size, shown(r))


# --- 11. outliving the command ---------------------------------------------------------------


def test_setsid_survivor_is_killed_at_the_timeout(box: Box) -> None:
    """A ``setsid`` child (another session, so outside the command's process group) does
    not outlive a timeout: the run returns within seconds, what it wrote stays, and its
    ``sleep`` is gone from the host."""
    seconds = f"100.{secrets.randbelow(10**6):06d}"
    began = time.monotonic()
    r = box.run(
        f"setsid sh -c 'echo partial > part.txt; exec sleep {seconds}' & sleep {seconds}",
        timeout=1,
    )
    elapsed = time.monotonic() - began
    assert r.timed_out, shown(r)
    assert elapsed < 8, f"returned after {elapsed:.1f} s\n{shown(r)}"
    assert wait_until_gone(seconds) == [], f"the setsid child outlived the timeout\n{shown(r)}"
    with box.workspace() as ws:
        assert ws.read("/part.txt") == b"partial\n", shown(r)


def test_daemons_die_when_the_command_exits(box: Box) -> None:
    """A command that exits at once, leaving ``setsid`` and ``nohup`` daemons that hold its
    output open: ``ws.run`` returns promptly and the daemons are gone."""
    seconds = f"100.{secrets.randbelow(10**6):06d}"
    began = time.monotonic()
    r = box.run(
        f"setsid sleep {seconds} & nohup sleep {seconds} 2>/dev/null &"
        f" (setsid sh -c 'sleep {seconds}' &) ; echo started",
        timeout=60,
    )
    elapsed = time.monotonic() - began
    assert not r.timed_out and r.exit_code == 0 and r.stdout == "started\n", shown(r)
    assert elapsed < 8, f"returned after {elapsed:.1f} s\n{shown(r)}"
    assert wait_until_gone(seconds) == [], f"a daemon outlived the command\n{shown(r)}"


# --- 12. typing into a terminal --------------------------------------------------------------

TIOCSTI_PROBE = """
import ctypes, errno, fcntl, os, struct, sys, termios
libc = ctypes.CDLL(None, use_errno=True)

def push(label, fd, request):
    char = ctypes.c_char(b"x")
    rc = libc.ioctl(fd, ctypes.c_ulong(request), ctypes.byref(char))
    print(label, "OK" if rc == 0 else errno.errorcode[ctypes.get_errno()], flush=True)

try:
    tty = os.open("/dev/tty", os.O_RDWR)
    push("/dev/tty", tty, termios.TIOCSTI)
except OSError as e:
    print("/dev/tty open", errno.errorcode[e.errno])
master, slave = os.openpty()
sys.stdout.flush()  # a child's flush must not print this again
child = os.fork()
if child == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)  # our own controlling terminal
    push("TIOCSTI", slave, termios.TIOCSTI)
    push("TIOCSTI+high bits", slave, termios.TIOCSTI | 1 << 32)
    queued = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\\0" * 4))[0]
    print("queued", queued, flush=True)
    os._exit(0)
os.waitpid(child, 0)
"""


def test_cannot_push_input_into_a_terminal(box: Box) -> None:
    """TIOCSTI on the command's own controlling terminal is refused (also with high bits
    set in the request, which the kernel would drop), and nothing reaches the input queue;
    /dev/tty (the caller's terminal) cannot even be opened."""
    r = box.run(["python3", "-c", TIOCSTI_PROBE])
    out = r.stdout.splitlines()
    assert r.exit_code == 0, shown(r)
    assert "TIOCSTI EPERM" in out and "TIOCSTI+high bits EPERM" in out, shown(r)
    assert "queued 0" in out, shown(r)
    assert "/dev/tty open ENXIO" in out, shown(r)


# --- 13. new user namespaces -----------------------------------------------------------------

USERNS_PROBE = """
import ctypes, errno, os, platform
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17
for name, flags in (("unshare NEWUSER", CLONE_NEWUSER), ("unshare NEWNS", CLONE_NEWNS)):
    rc = libc.unshare(flags)
    print(name, "OK" if rc == 0 else errno.errorcode[ctypes.get_errno()])
number = {"x86_64": 56, "aarch64": 220}.get(platform.machine())
if number is not None:
    libc.syscall.restype = ctypes.c_long
    pid = libc.syscall(ctypes.c_long(number), ctypes.c_ulong(CLONE_NEWUSER | SIGCHLD), 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    print("clone NEWUSER", "OK" if pid > 0 else errno.errorcode[ctypes.get_errno()])
else:
    print("clone NEWUSER not tried here")
"""


def test_cannot_make_user_namespaces(box: Box) -> None:
    """No new user namespace, by any route: ``unshare -U``, ``unshare -r``, a nested
    bubblewrap, unshare(2) and a raw clone(2) with CLONE_NEWUSER."""
    script = (
        "for how in '-U' '-r' '-m' '-p -f'; do"
        " unshare $how true 2>/dev/null && echo MADE unshare $how; done;"
        " bwrap --unshare-user --ro-bind / / true 2>/dev/null && echo MADE bwrap;"
        f" python3 -c '{USERNS_PROBE}'"
    )
    r = box.run(["bash", "-c", script])
    assert "MADE" not in r.stdout, shown(r)
    out = r.stdout.splitlines()
    assert "unshare NEWUSER EPERM" in out and "unshare NEWNS EPERM" in out, shown(r)
    assert "clone NEWUSER EPERM" in out or "clone NEWUSER not tried here" in out, shown(r)


# --- 14. symlinks and .. ---------------------------------------------------------------------


def test_symlinks_and_dotdot_stay_inside(box: Box, open_dir: Path) -> None:
    """Links made inside, links planted through the API, and ``..`` chains resolve in the
    sandbox's tree: a world-readable host file stays unread, /etc/passwd is the sandbox's,
    and the workspace keeps the links as links (the API does not follow them to the host
    either)."""
    secret = open_dir / "secret.txt"
    token = secrets.token_hex(16)
    secret.write_text(token)
    secret.chmod(0o644)
    relative = "../" * 12 + str(secret).lstrip("/")
    script = (
        f"ln -s {secret} inside-abs; ln -s ../../../../etc/passwd inside-up;"
        " ln -s /etc/hostname inside-hostname;"
        " for link in inside-abs inside-up inside-hostname planted-abs planted-rel; do"
        ' echo "== $link"; cat $link; done;'
        f" echo '== dotdot'; cat /workspace/../../../../{str(secret).lstrip('/')};"
        " cat /workspace/../../../../etc/shadow; cat /proc/1/root/etc/shadow"
    )
    r = box.run(script, symlinks={"/planted-abs": str(secret), "/planted-rel": relative})
    assert token not in r.stdout, shown(r)
    inside_up = r.stdout.split("== inside-up\n")[1].split("==")[0]
    assert {line.split(":")[0] for line in inside_up.splitlines()} == {
        "root",
        "agent",
        "nobody",
    }, shown(r)
    assert r.stderr.count("No such file or directory") == 7, shown(r)
    with box.workspace() as ws:
        assert ws.readlink("/inside-abs") == str(secret), shown(r)
        assert ws.readlink("/planted-rel") == relative, shown(r)
        for link in ("/inside-abs", "/planted-abs", "/planted-rel", "/inside-up"):
            with pytest.raises(FileNotFoundError):
                leaked = ws.read(link)
                raise AssertionError(f"the API read {link} through the host: {leaked!r}")


# --- 15. ownership ---------------------------------------------------------------------------


def test_command_owns_the_workspace_as_its_owner(box: Box) -> None:
    """The command can change, chmod and delete the owner's files (made through the API) and
    make its own; everything is recorded as the workspace owner's (root's workspace: 0; the
    user's: the user), and it cannot give a file away."""
    writes = {"/owner.txt": "from the api\n", "/dir/keep.txt": "delete me\n"}
    script = (
        "echo more >> owner.txt && chmod 600 owner.txt && rm dir/keep.txt"
        " && echo new > new.txt && mv new.txt renamed.txt && chmod 750 renamed.txt"
        " && mkdir sub && echo s > sub/f && stat -c '%u %g %a %n' owner.txt renamed.txt sub"
        " && echo ALL-DONE; chown 0 renamed.txt 2>/dev/null && echo GAVE-AWAY"
    )
    r = box.run(script, writes=writes)
    assert "ALL-DONE" in r.stdout and "GAVE-AWAY" not in r.stdout, shown(r)
    assert "1000 1000 600 owner.txt" in r.stdout, shown(r)
    owner = box.owner_uid
    with box.workspace() as ws:
        assert ws.stat("/").st_uid == owner, shown(r)
        assert ws.read("/owner.txt") == b"from the api\nmore\n", shown(r)
        assert not ws.exists("/dir/keep.txt") and not ws.exists("/new.txt"), shown(r)
        assert stat.S_IMODE(ws.stat("/owner.txt").st_mode) == 0o600, shown(r)
        assert stat.S_IMODE(ws.stat("/renamed.txt").st_mode) == 0o750, shown(r)
        for path in ("/owner.txt", "/renamed.txt", "/sub", "/sub/f"):
            st = ws.stat(path)
            assert (st.st_uid, st.st_gid) == (owner, owner), (path, st, shown(r))


# --- 16. failing closed ----------------------------------------------------------------------


def test_no_bubblewrap_means_no_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, machine: None
) -> None:
    """Where bubblewrap is missing, a sandboxed run raises SandboxError naming it, and the
    command never runs (not even unsandboxed)."""
    real = sandbox.system_tool
    monkeypatch.setattr(
        sandbox, "system_tool", lambda name: None if name == "bwrap" else real(name)
    )
    sandbox._probe.cache_clear()
    try:
        with agentfs.open(tmp_path / "ws.db") as ws:
            with pytest.raises(sandbox.SandboxError, match="bubblewrap"):
                ws.run("touch x", sandbox=True, mode="mount")
            assert not ws.exists("/x")
    finally:
        monkeypatch.undo()
        sandbox._probe.cache_clear()
    assert sandbox.unavailable() is None


# --- 17. through the command's own variables, the copy, the sockets, the bits ---------------


def test_the_callers_variables_never_reach_the_program_that_sets_the_limits(box: Box) -> None:
    """``env`` is the agent's: were it given to the program that sets the limits,
    ``LD_PRELOAD`` or ``LD_AUDIT`` would run the agent's code before them. The loader's
    trace (``LD_DEBUG``) shows which programs a variable reached: the command, not prlimit."""
    r = box.run(["true"], env={"LD_DEBUG": "files"})
    assert r.exit_code == 0, shown(r)
    assert "true" in r.stderr and "prlimit" not in r.stderr, shown(r)
    with pytest.raises((ValueError, AssertionError), match="name"):
        box.run(["true"], env={"A=B": "x"})  # env would take it for an assignment


@pytest.mark.parametrize("mode", ["mount", "copy"])
def test_nothing_of_the_sandbox_is_alive_when_a_timeout_returns(box: Box, mode: str) -> None:
    """After a timeout, ``run`` returns only once every process of the sandbox is gone (a
    copy is read back by root: nothing may still be changing it), and says -9."""
    seconds = f"100.{secrets.randbelow(10**6):06d}"
    many = " ".join(f"sleep {seconds} &" for _ in range(12))
    r = box.run(f"{many} setsid sleep {seconds} & sleep {seconds}", timeout=1, mode=mode)
    assert r.timed_out and r.exit_code == -9, shown(r)
    assert host_processes(seconds) == [], f"alive after the return\n{shown(r)}"


@pytest.mark.parametrize("mode", ["mount", "copy"])
def test_a_copy_is_as_closed_as_a_mount(box: Box, mode: str) -> None:
    """The same walls whichever way the workspace reaches the command: no capabilities, no
    host environment, the owner's files writable, no host account."""
    r = box.run(
        "grep CapEff /proc/self/status; env; echo x > made.txt && echo WROTE;"
        " cat /etc/shadow 2>/dev/null && echo SHADOW",
        writes={"/owners.txt": "o"},
        host_env={"AGENTFS_TEST_TOKEN": "leak-me"},
        mode=mode,
    )
    assert "CapEff:\t0000000000000000" in r.stdout and "WROTE" in r.stdout, shown(r)
    assert "leak-me" not in r.stdout and "SHADOW" not in r.stdout, shown(r)
    with box.workspace() as ws:
        assert ws.stat("/made.txt").st_uid == box.owner_uid


SOCKETS = """
import errno, socket
for name in ("AF_VSOCK", "AF_ALG", "AF_PACKET", "AF_KEY", "AF_BLUETOOTH"):
    family = getattr(socket, name, None)
    if family is None:
        continue
    try:
        socket.socket(family, socket.SOCK_DGRAM if name != "AF_ALG" else socket.SOCK_SEQPACKET)
        print("OPENED", name)
    except OSError as e:
        print("refused", name, errno.errorcode[e.errno])
for name in ("AF_UNIX", "AF_INET", "AF_INET6"):
    socket.socket(getattr(socket, name), socket.SOCK_STREAM).close()
    print("usable", name)
try:
    socket.socketpair(socket.AF_INET)
    print("OPENED pair")
except OSError as e:
    print("refused pair", errno.errorcode[e.errno])
"""


def test_only_unix_ip_and_netlink_sockets(box: Box) -> None:
    """``AF_VSOCK`` reaches the hypervisor whatever the network namespace, ``AF_ALG`` the
    kernel's crypto: refused, with the families programs use left open."""
    r = box.run(["python3", "-c", SOCKETS])
    assert "OPENED" not in r.stdout, shown(r)
    assert r.stdout.count("usable") == 3 and "refused AF_VSOCK EAFNOSUPPORT" in r.stdout, shown(r)


def test_no_setuid_program_can_be_made_for_the_owner(box: Box) -> None:
    """Where the command's files are stored as another user's (root's, in root's
    workspace), a setuid or setgid bit it sets is not stored, so no later mount or copy
    holds a setuid program of root's that the agent wrote. A directory's setgid bit stays.
    (A normal user's command is that user: its setuid program gives nobody more.)"""
    r = box.run(
        "cp /bin/true t && chmod 6755 t && mkdir d && chmod 2775 d && stat -c '%a' t d",
        writes={"/owners.txt": "o"},
    )
    bits = 0o755 if box.owner_uid != box.sandbox_uid else 0o6755
    assert r.stdout.split() == [f"{bits:o}", "2775"], shown(r)
    with box.workspace() as ws:
        assert ws.stat("/t").st_mode & 0o7777 == bits
        assert ws.stat("/d").st_mode & 0o7777 == 0o2775


def test_other_processes_memory_and_descriptors_are_out_of_reach(box: Box) -> None:
    """Besides ptrace and process_vm_*: no ``pidfd_getfd`` (another process's descriptors),
    ``kcmp`` or ``process_madvise``."""
    probe = (
        "import ctypes, errno, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "numbers = {'pidfd_getfd': 438, 'process_madvise': 440, 'kcmp': 312}\n"
        "pidfd = os.pidfd_open(os.getppid())\n"
        "for name, number in numbers.items():\n"
        "    ctypes.set_errno(0)\n"
        "    result = libc.syscall(number, pidfd, 0, 0, 0, 0)\n"
        "    print(name, result, errno.errorcode.get(ctypes.get_errno(), 'none'))\n"
    )
    if os.uname().machine != "x86_64":
        pytest.skip("the probe numbers x86-64's system calls")
    r = box.run(["python3", "-c", probe])
    lines = r.stdout.split("\n")
    assert all(line.endswith("-1 EPERM") for line in lines if line), shown(r)
    assert len([line for line in lines if line]) == 3, shown(r)


def test_many_files_each_within_its_limit_cannot_fill_the_disk(box: Box) -> None:
    """``file_size_mb`` bounds one file; the mount's write budget (``write_mb``) bounds them
    all: past it, writes fail with ENOSPC, and the workspace holds what fit."""
    r = box.run(
        "for i in 1 2 3 4 5 6 7 8; do head -c 1048576 /dev/zero > f$i || echo FULL $i; done",
        limits=Limits(write_mb=3, file_size_mb=64),
    )
    assert "FULL" in r.stdout and "No space left on device" in r.stderr, shown(r)
    with box.workspace() as ws:
        written = sum(ws.stat(f"/f{i}").st_size for i in range(1, 9) if ws.exists(f"/f{i}"))
    assert 2 * MIB <= written <= 3 * MIB, shown(r)


# --- 18. memory in all -----------------------------------------------------------------------

#: One process of 150 MB, within ``memory_mb=256`` alone; it prints "kept" if it was not killed.
HOG = "python3 -c 'import time; b = bytearray(150 << 20); time.sleep(2); print(\"kept\")'"


def test_memory_of_all_processes_together_is_bounded(
    box: Box, memory_cgroup: dict[str, str]
) -> None:
    """Under ``memory_mb=256``, 100 MB in one process is left alone; four processes of
    150 MB at once (each within the per-process limit) and 400 MB of shared memory in
    ``/dev/shm`` (a 1 GB tmpfs) are stopped by the kernel at 256 MB in all, and the result
    says so. The command's cgroup is gone afterwards."""
    limits = Limits(memory_mb=256)
    small = box.run(
        "python3 -c 'print(len(bytearray(100 << 20)))'", limits=limits, host_env=memory_cgroup
    )
    assert small.stdout == f"{100 * MIB}\n" and not small.out_of_memory, shown(small)
    together = box.run(
        f"for i in 1 2 3 4; do {HOG} & done; wait", limits=limits, host_env=memory_cgroup
    )
    assert together.out_of_memory and together.stdout.count("kept") <= 1, shown(together)
    shared = box.run(
        "head -c 400M /dev/zero > /dev/shm/fill; echo $?", limits=limits, host_env=memory_cgroup
    )
    assert shared.out_of_memory and shared.stdout != "0\n", shown(shared)
    if box.identity == "root":
        place = cgroup.find()
        assert isinstance(place, cgroup.Place)
        assert list(place.parent.glob(f"agentfs-{os.getpid()}-*")) == []
