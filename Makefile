# Two entry points for a fresh machine: `make demo` and `make test` (see README.md).
# Everything they need is installed here: Debian packages when missing, the project and its
# test tools into .venv, and Turso's agentfs-sdk (the interop peer) into .venv-peer, a venv of
# its own because it pins an older pyturso than the rest of the project may use.

PYTHON ?= python3
VENV := .venv
PEER := .venv-peer
NPM := .npm
PY := $(VENV)/bin/python
WORKSPACE ?= .agentfs/workspace.db
# rsync: the anchor benchmarks/history.py compares restores with; ripgrep: what grep is tested
# and measured against; fuse3 and libfuse3-dev (with pkg-config, to build pyfuse3): the mount;
# bubblewrap: the sandbox of `agentfs exec --sandbox`; bindfs (a C FUSE passthrough, the floor)
# and fio: what benchmarks/mount.py measures the mount against; libseccomp2: the sandbox's
# seccomp filter; util-linux (prlimit, setpriv): the sandbox's limits, and the tests that drop
# to an unprivileged user; python3: Debian's interpreter, which that user can execute (this
# venv's may live in root's private home); chromium: the browser the web view's tests drive
# through Playwright (whose own browser download cannot work offline).
APT_PACKAGES := rsync ripgrep fuse3 libfuse3-dev pkg-config bubblewrap bindfs fio attr \
	libseccomp2 util-linux python3 chromium

.PHONY: demo test lint bench clean system-deps

$(VENV)/.installed: pyproject.toml | system-deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,embed,mount,sync,langchain,deepagents,anthropic,openai-agents]'
	touch $@

$(PEER)/.installed: tests/peer/requirements.txt
	$(PYTHON) -m venv $(PEER)
	$(PEER)/bin/python -m pip install --quiet -r tests/peer/requirements.txt
	touch $@

# npm packages the tests and benchmarks run: the MCP Inspector's CLI (a second real MCP client),
# the official MCP filesystem server (the peer benchmarks/tools.py measures against), the
# TypeScript MCP SDK (whose client benchmarks/mcp_client.mjs drives both servers with) and
# Turso's CLI, whose `tursodb --sync-server` is the real sync server the sync tests push to.
NPM_PACKAGES := @modelcontextprotocol/inspector@2.12.0 @modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/sdk@1.32.2 turso@0.6.0

$(NPM)/.installed: Makefile
	mkdir -p $(NPM)
	npm install --prefix $(NPM) --no-audit --no-fund --loglevel=error $(NPM_PACKAGES)
	touch $@

system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

demo: system-deps $(VENV)/.installed $(NPM)/.installed
	WORKSPACE=$(WORKSPACE) bash docs/tour.sh

test: system-deps $(VENV)/.installed $(PEER)/.installed $(NPM)/.installed
	$(VENV)/bin/ruff check agentfs tests benchmarks examples
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/python -m pytest --numprocesses auto --dist worksteal --durations=25

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check agentfs tests benchmarks examples
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff format --check agentfs tests benchmarks examples

bench: system-deps $(VENV)/.installed $(PEER)/.installed $(NPM)/.installed
	$(PY) benchmarks/report.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(PEER) $(NPM) .pytest_cache .ruff_cache .hypothesis
