#!/usr/bin/env bash
# The five-minute tour, runnable: `make demo` runs it on the default workspace
# (.agentfs/workspace.db, or $WORKSPACE). It works under /tour only and leaves the rest of the
# workspace alone, so it can be run again and again.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENTFS=${AGENTFS:-.venv/bin/agentfs}
PYTHON=${PYTHON:-.venv/bin/python}
WS=${WORKSPACE:-.agentfs/workspace.db}
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

step "a workspace is one SQLite file ($WS)"
[ -f "$WS" ] || $AGENTFS init "$WS"
$AGENTFS rm "$WS" -r -f /tour

step "write files: from an argument, from stdin, appending"
$AGENTFS write "$WS" /tour/notes/todo.md "todo: read the design" -p
printf "\ntodo: write the core\n" | $AGENTFS write "$WS" /tour/notes/todo.md --append
$AGENTFS cat "$WS" /tour/notes/todo.md

step "import a real tree: this project's own source"
$AGENTFS import "$WS" agentfs /tour/src
$AGENTFS ls "$WS" /tour/src -l | sed -n 1,8p

step "rename, copy, link: POSIX semantics inside the file"
$AGENTFS mv "$WS" /tour/notes/todo.md /tour/notes/plan.md
$AGENTFS cp "$WS" -r /tour/notes /tour/notes-copy
$AGENTFS ln "$WS" -s notes/plan.md /tour/PLAN
$AGENTFS cat "$WS" /tour/PLAN
$AGENTFS tree "$WS" /tour/notes-copy
$AGENTFS stat "$WS" /tour/PLAN --json

step "the Python API: the same workspace, plus the kv store and the tool-call log"
WORKSPACE="$WS" "$PYTHON" - <<'PY'
import os, time
import agentfs

with agentfs.open(os.environ["WORKSPACE"]) as ws:
    started = time.time()
    text = ws.read_text("/tour/notes/plan.md")
    ws.tool_calls.record("read_file", {"path": "/tour/notes/plan.md"},
                         result={"lines": text.count("\n")}, started_at=started)
    with ws.transaction():  # several operations, one atomic commit
        ws.write("/tour/out/report.md", f"# Report\n\n{text}", parents=True)
        ws.kv.set("tour/last_report", {"path": "/tour/out/report.md", "bytes": len(text)})
    try:
        ws.read("/tour/missing.txt")
    except FileNotFoundError as exc:
        print(f"errors are OSError subclasses with errno and path: {exc}")
    print("walk:", [(d, len(f)) for d, _, f in ws.walk("/tour/out")])
PY
$AGENTFS kv "$WS" get tour/last_report
$AGENTFS timeline "$WS" --limit 3

step "history: every write is a version, and snapshots rewind the whole tree"
$AGENTFS history "$WS" /tour/notes/plan.md
before="tour-$(date +%s%N)"
$AGENTFS snapshot create "$WS" "$before" --label "before the risky edit" --meta '{"turn": 7}'
$AGENTFS write "$WS" /tour/notes/plan.md "todo: rewrite everything"
$AGENTFS rm "$WS" -r /tour/notes-copy
$AGENTFS diff "$WS" /tour/notes/plan.md
$AGENTFS snapshot diff "$WS" "$before"
$AGENTFS snapshot restore "$WS" "$before"
$AGENTFS cat "$WS" /tour/notes/plan.md

step "find things: by name (glob), by text (grep, narrowed by a trigram index), by meaning"
$AGENTFS glob "$WS" '**/search/*.py' --path /tour/src --sort name
$AGENTFS grep "$WS" 'def (glob|grep|search)\(' /tour/src
$AGENTFS search "$WS" "turn a regular expression into trigrams" --path /tour/src -k 3 --mode bm25
$AGENTFS index "$WS"   # the first index chooses minilm, a real offline model (the embed extra)
$AGENTFS search "$WS" "which files hold a literal string" --path /tour/src -k 3

step "the agent tools: what an agent calls, audited, with errors it can act on"
$AGENTFS tools call "$WS" read_file '{"path": "/tour/notes/plan.md"}' --text
$AGENTFS tools call "$WS" edit_file \
  '{"path": "/tour/notes/plan.md", "old_string": "no such text", "new_string": "x"}' \
  || echo "(an error result, exit status 1: the model reads the closest lines and retries)"
$AGENTFS tools call "$WS" apply_patch '{"patch": "*** Begin Patch\n*** Add File: tour/notes/next.md\n+- serve the tools over MCP\n*** End Patch"}'
$AGENTFS tools call "$WS" grep '{"pattern": "def (glob|grep)\\(", "path": "/tour/src", "output_mode": "count"}'
$AGENTFS timeline "$WS" --limit 4
echo "serve them to any MCP client: agentfs serve mcp $WS   (docs/mcp.md)"

step "the mount: real programs see the workspace as a directory, and every command can be undone"
# what this host allows: the mount, and each part of the sandbox (docs/security.md)
$AGENTFS doctor || echo "(a part is missing here: sandboxed commands would be refused)"
# mounted with FUSE; where /dev/fuse is missing, run in a copy carried back (exec says which)
$AGENTFS exec "$WS" --cwd /tour -- sh -c 'git init -q -b main repo && cp -r notes repo/ &&
  cd repo && git add -A && git -c user.email=tour@example.com -c user.name=tour commit -qm notes &&
  git log --oneline --stat'
$AGENTFS exec "$WS" --sandbox --cwd /tour -- sh -c 'rm -rf notes repo; ls; ls ~ /root 2>&1 | head -2' \
  2> "$scratch/exec.err"
cat "$scratch/exec.err"
$AGENTFS snapshot restore "$WS" "$(sed -n 's/.*snapshot restore [^ ]* //p' "$scratch/exec.err")" \
  > "$scratch/restored"
echo "restored $(wc -l < "$scratch/restored") paths the command removed, e.g.:"
head -3 "$scratch/restored"
$AGENTFS cat "$WS" /tour/notes/plan.md

step "sync: the same workspace on two machines, through a Turso sync server"
# the real server from npm turso (make installs it), on a free port; two scratch workspaces
# play two machines, so the tour's own workspace keeps no remote
tursodb=$(ls "$PWD"/.npm/node_modules/@tursodatabase/cli-*/tursodb 2>/dev/null | head -1 || true)
if [ -n "$tursodb" ]; then
  port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  (cd "$scratch" && TURSO_TMPDIR="$scratch" exec "$tursodb" --sync-server "127.0.0.1:$port" remote.db >/dev/null 2>&1) &
  server=$!
  trap 'kill $server 2>/dev/null; rm -rf "$scratch"' EXIT
  "$PYTHON" -c 'import socket, sys, time
for _ in range(500):
    if socket.socket().connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0: break
    time.sleep(0.02)' "$port"
  mkdir "$scratch/laptop" "$scratch/sandbox"
  $AGENTFS export "$WS" /tour/notes "$scratch/notes" >/dev/null
  $AGENTFS init "$scratch/laptop/ws.db" >/dev/null
  $AGENTFS import "$scratch/laptop/ws.db" "$scratch/notes" /notes >/dev/null
  $AGENTFS sync setup "$scratch/laptop/ws.db" --remote "http://127.0.0.1:$port"
  $AGENTFS sync push "$scratch/laptop/ws.db" -m "the notes"
  $AGENTFS clone "http://127.0.0.1:$port" "$scratch/sandbox/ws.db"
  echo "- sync the workspace" | $AGENTFS write "$scratch/sandbox/ws.db" /notes/plan.md --append
  $AGENTFS sync push "$scratch/sandbox/ws.db"
  $AGENTFS sync pull "$scratch/laptop/ws.db"
  $AGENTFS cat "$scratch/laptop/ws.db" /notes/plan.md
  $AGENTFS sync status "$scratch/laptop/ws.db"
else
  echo "(no tursodb here: run make demo or make test, which install npm turso)"
fi

step "export back to the host, byte for byte"
$AGENTFS export "$WS" /tour/src "$scratch/src"
diff -r agentfs "$scratch/src" --exclude=__pycache__ && echo "identical to ./agentfs"

step "export a plain AgentFS v0.4 file that Turso's agentfs-sdk opens"
$AGENTFS export "$WS" --agentfs "$scratch/plain.db"

step "fsck: every invariant of the spec and ours"
$AGENTFS fsck "$WS"
$AGENTFS info "$WS"
