#!/usr/bin/env python3
"""Interop and benchmark peer built on the upstream ``agentfs-sdk`` PyPI package.

Why this exists: our ``agentfs`` library claims to write databases that follow the
AgentFS v0.4 schema.  The strongest evidence for that claim is that the reference
implementation (Turso's own Python SDK) can read what we write, and that we can read
what it writes.  This script is the "other side" of those round trips, and also runs
the same small-files workload as our benchmarks so the numbers can be compared.

It must be run with the peer virtualenv's interpreter (``.venv-peer/bin/python``),
because ``agentfs-sdk==0.6.4`` pins ``pyturso==0.4.4`` while the main venv uses a newer
pyturso; the two cannot share one environment.  It deliberately does not import
anything from our own ``agentfs`` package.

Every subcommand prints exactly one JSON document on stdout.  Exit status is 0 on
success, 1 when the operation ran but found problems (reported in the JSON), and 2
for usage errors.

Known limits of agentfs-sdk 0.6.4 that shape this script (checked against its source):

* no symlink API at all (no symlink/readlink/lstat); ``stat`` does not follow links,
  ``read_file``/``readdir``/``rm``/``rename`` raise ENOSYS on a symlink inode;
* no hard link, chmod, chown, utime/utimens, truncate, pread/pwrite or append;
* ``read_file`` updates ``atime`` and commits, so even ``dump`` writes to the database;
* the tool-call reader assumes a ``status`` column that the v0.4 spec table lacks.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import stat as stat_mod
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import agentfs_sdk  # type: ignore[import-untyped]  # the SDK ships no py.typed
import turso
from agentfs_sdk import AgentFS, AgentFSOptions, ErrnoException

# Informative only (goes into every output); never fail because it is missing.
SDK_VERSION: str = str(getattr(agentfs_sdk, "__version__", "unknown"))

JsonDict = dict[str, Any]

# Lower bound for ToolCalls.get_recent(): it filters with ``started_at > since``, so a
# very negative value makes it return every row, whatever clock the writer used.
_ALL_TIME = -(2**62)

# The SDK gives every new file this permission set and offers no chmod.
_SDK_FILE_PERM = 0o644
_SDK_DIR_PERM = 0o755


def _emit(doc: JsonDict) -> None:
    """Print one JSON document; sorted keys keep outputs diffable between runs."""
    json.dump(doc, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def _child(parent: str, name: str) -> str:
    """Join a directory path and an entry name without doubling the root slash."""
    return f"/{name}" if parent == "/" else f"{parent}/{name}"


def _kind(mode: int) -> str:
    """Map an st_mode to the three node types the spec knows (anything else is 'other')."""
    if stat_mod.S_ISREG(mode):
        return "file"
    if stat_mod.S_ISDIR(mode):
        return "dir"
    if stat_mod.S_ISLNK(mode):
        return "symlink"
    return "other"


async def _open_existing(db: str) -> AgentFS:
    """Open a database that must already exist.

    ``AgentFS.open`` silently creates a fresh database for a missing path, which would
    turn a typo into a misleading "empty tree" result, so existence is checked first.
    """
    if not Path(db).is_file():
        raise FileNotFoundError(f"database not found: {db}")
    return await AgentFS.open(AgentFSOptions(path=db))


# --------------------------------------------------------------------------- dump


async def _readlink(agent: AgentFS, ino: int) -> str | None:
    """Return a symlink's target.

    Fallback, by necessity: agentfs-sdk 0.6.4 has no readlink (nor any symlink API)
    in Python, and its ``read_file`` refuses symlink inodes with ENOSYS.  The lowest
    SDK-level facility left is the SDK's own turso connection (``get_database()``), so
    this reads ``fs_symlink`` through it, keyed by the inode number the SDK's ``stat``
    reported.
    """
    cursor = await agent.get_database().execute(
        "SELECT target FROM fs_symlink WHERE ino = ?", (ino,)
    )
    row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def _dump_tool_calls(agent: AgentFS) -> tuple[list[JsonDict], str, str | None]:
    """Read every tool call, preferring the SDK's reader.

    ``ToolCalls.get_recent`` maps rows positionally and assumes the SDK's own table
    layout, which has a ``status`` column between ``error`` and ``started_at``.  A
    table made exactly as the v0.4 spec says has no such column, and the SDK then
    fails with IndexError.  In that case the rows are read by column name through the
    SDK's connection instead, and the failure is reported so the caller can see it.
    """
    try:
        calls = await agent.tools.get_recent(_ALL_TIME)
        rows = sorted((asdict(c) for c in calls), key=lambda r: int(r["id"]))
        return rows, "sdk:ToolCalls.get_recent", None
    except (IndexError, TypeError, ValueError, turso.Error) as exc:
        # Any failure of the SDK reader is itself a finding, so it is reported.
        sdk_error = f"{type(exc).__name__}: {exc}"
    cursor = await agent.get_database().execute("SELECT * FROM tool_calls ORDER BY id")
    names = [d[0] for d in cursor.description or ()]
    out: list[JsonDict] = []
    for raw in await cursor.fetchall():
        rec: JsonDict = dict(zip(names, raw, strict=True))
        for key in ("parameters", "result"):
            if isinstance(rec.get(key), str):
                # Undecodable text is kept as-is: the dump is for inspection.
                with contextlib.suppress(ValueError):
                    rec[key] = json.loads(rec[key])
        out.append(rec)
    return out, "sdk-connection:SELECT tool_calls (SDK reader failed)", sdk_error


async def cmd_dump(db: str) -> int:
    """Walk the whole tree with the SDK's public API and print what it sees."""
    agent = await _open_existing(db)
    errors: list[JsonDict] = []
    nodes: list[JsonDict] = []
    try:
        pending = ["/"]
        while pending:
            path = pending.pop()
            try:
                st = await agent.fs.stat(path)  # the SDK's stat never follows symlinks
            except ErrnoException as exc:
                errors.append({"path": path, "op": "stat", "error": str(exc)})
                continue
            node: JsonDict = {
                "path": path,
                "type": _kind(st.mode),
                "mode": st.mode,
                "size": st.size,
                "nlink": st.nlink,
                "ino": st.ino,
                "uid": st.uid,
                "gid": st.gid,
            }
            try:
                if node["type"] == "dir":
                    names = await agent.fs.readdir(path)
                    pending.extend(_child(path, n) for n in reversed(names))
                elif node["type"] == "file":
                    data = await agent.fs.read_file(path, encoding=None)
                    if not isinstance(data, bytes):  # encoding=None promises bytes
                        raise TypeError(f"read_file returned {type(data).__name__}")
                    node["data_b64"] = base64.b64encode(data).decode("ascii")
                    if len(data) != st.size:
                        errors.append(
                            {
                                "path": path,
                                "op": "read_file",
                                "error": f"read {len(data)} bytes but stat size is {st.size}",
                            }
                        )
                elif node["type"] == "symlink":
                    node["target"] = await _readlink(agent, st.ino)
                    if node["target"] is None:
                        errors.append({"path": path, "op": "readlink", "error": "no target"})
            except ErrnoException as exc:
                errors.append({"path": path, "op": node["type"], "error": str(exc)})
            nodes.append(node)
        nodes.sort(key=lambda n: str(n["path"]))

        kv = {item["key"]: item["value"] for item in await agent.kv.list("")}
        tool_calls, tc_source, tc_sdk_error = await _dump_tool_calls(agent)
        doc: JsonDict = {
            "sdk_version": SDK_VERSION,
            "chunk_size": agent.fs.get_chunk_size(),
            "nodes": nodes,
            "kv": dict(sorted(kv.items())),
            "tool_calls": tool_calls,
            "tool_calls_source": tc_source,
            "errors": errors,
            "notes": [
                "symlink targets are read via the SDK's turso connection: no readlink in SDK",
                "the SDK's read_file updates atime, so dumping modifies the database",
            ],
        }
        if tc_sdk_error is not None:
            doc["tool_calls_sdk_error"] = tc_sdk_error
        _emit(doc)
    finally:
        await agent.close()
    return 1 if errors else 0


# --------------------------------------------------------------------------- build


def _perm_of(mode: object) -> int | None:
    """Return the permission bits of a spec ``mode`` (int or octal string), or None."""
    if mode is None:
        return None
    value = int(mode, 8) if isinstance(mode, str) else int(str(mode))
    return value & 0o7777


def _entry_path(entry: object) -> str:
    """Accept a directory spec entry as either a bare path or ``{"path": ..., ...}``."""
    return str(entry["path"]) if isinstance(entry, dict) else str(entry)


async def _mkdir_p(agent: AgentFS, path: str, made: list[str]) -> None:
    """Create ``path`` and any missing ancestors, one SDK ``mkdir`` each.

    The SDK's ``mkdir`` is not recursive; recording each directory it really made lets
    the caller see implicit parents as well as the ones the spec named.
    """
    current = "/"
    for name in (p for p in path.split("/") if p):
        current = _child(current, name)
        try:
            st = await agent.fs.stat(current)
        except ErrnoException:
            await agent.fs.mkdir(current)
            made.append(current)
            continue
        if not st.is_directory():
            raise NotADirectoryError(current)


def _mode_skip(kind: str, path: str, entry: object, sdk_perm: int) -> list[JsonDict]:
    """Report a requested mode the SDK cannot apply (it has no chmod in Python)."""
    perm = _perm_of(entry.get("mode")) if isinstance(entry, dict) else None
    if perm is None or perm == sdk_perm:
        return []
    reason = f"SDK has no chmod: wanted {perm:#o}, SDK always writes {sdk_perm:#o}"
    return [{"kind": f"{kind}_mode", "path": path, "reason": reason}]


async def _build_dirs(agent: AgentFS, spec: JsonDict, made: list[str]) -> list[JsonDict]:
    """Create the spec's directories (parents first) and return what was skipped."""
    skipped: list[JsonDict] = []
    for entry in sorted(spec.get("dirs", []), key=_entry_path):
        path = _entry_path(entry)
        try:
            await _mkdir_p(agent, path, made)
        except (ErrnoException, NotADirectoryError) as exc:
            skipped.append({"kind": "dir", "path": path, "reason": str(exc)})
            continue
        skipped += _mode_skip("dir", path, entry, _SDK_DIR_PERM)
    return skipped


async def _build_files(agent: AgentFS, spec: JsonDict, made: list[str]) -> list[JsonDict]:
    """Write the spec's files with one ``write_file`` each; return what was skipped."""
    skipped: list[JsonDict] = []
    for entry in spec.get("files", []):
        path = str(entry["path"])
        try:
            # write_file creates missing parent directories itself.
            await agent.fs.write_file(path, base64.b64decode(entry.get("data_b64", "")))
        except ErrnoException as exc:
            skipped.append({"kind": "file", "path": path, "reason": str(exc)})
            continue
        made.append(path)
        skipped += _mode_skip("file", path, entry, _SDK_FILE_PERM)
    return skipped


def _unsupported_links(spec: JsonDict) -> list[JsonDict]:
    """List the spec's symlinks and hard links as skipped.

    Not emulated with raw SQL on purpose: ``build`` exists to show what the SDK itself
    writes, and agentfs-sdk 0.6.4 has neither a symlink nor a link API in Python.
    """
    out: list[JsonDict] = [
        {
            "kind": "symlink",
            "path": str(e["path"]),
            "target": str(e["target"]),
            "reason": "agentfs-sdk Python has no symlink API",
        }
        for e in spec.get("symlinks", [])
    ]
    out += [
        {"kind": "hardlink", "path": str(e.get("path")), "reason": "no link API in SDK"}
        for e in spec.get("hardlinks", [])
    ]
    return out


async def _record_tool_call(agent: AgentFS, call: JsonDict) -> int:
    """Insert one tool call through the SDK.

    With explicit ``started_at``/``completed_at`` the SDK's ``record`` is used (it
    derives duration_ms itself); without them the live start/success/error path runs,
    which stamps the current time in whole seconds.
    """
    name = str(call["name"])
    params = call.get("parameters")
    error = call.get("error")
    if "started_at" in call and "completed_at" in call:
        recorded = await agent.tools.record(
            name,
            int(call["started_at"]),
            int(call["completed_at"]),
            parameters=params,
            result=call.get("result"),
            error=error,
        )
        return int(recorded)
    call_id = int(await agent.tools.start(name, params))
    if error:
        await agent.tools.error(call_id, str(error))
    else:
        await agent.tools.success(call_id, call.get("result"))
    return call_id


async def cmd_build(db: str, spec_path: str) -> int:
    """Create a new database with the SDK and fill it from a JSON spec."""
    if Path(db).exists():
        raise FileExistsError(f"refusing to build over an existing file: {db}")
    spec: JsonDict = json.loads(Path(spec_path).read_text())
    created: dict[str, list[Any]] = {"dirs": [], "files": [], "kv": [], "tool_calls": []}
    agent = await AgentFS.open(AgentFSOptions(path=db))
    try:
        skipped = await _build_dirs(agent, spec, created["dirs"])
        skipped += await _build_files(agent, spec, created["files"])
        skipped += _unsupported_links(spec)
        for key, value in spec.get("kv", {}).items():
            await agent.kv.set(key, value)
            created["kv"].append(key)
        for call in spec.get("tool_calls", []):
            try:
                created["tool_calls"].append(await _record_tool_call(agent, call))
            except (turso.Error, KeyError, TypeError, ValueError) as exc:
                skipped.append({"kind": "tool_call", "item": call, "reason": repr(exc)})
    finally:
        await agent.close()
    _emit({"db": db, "sdk_version": SDK_VERSION, "created": created, "skipped": skipped})
    return 0


# --------------------------------------------------------------------------- write


async def cmd_write(db: str, path: str, data_b64: str) -> int:
    """Write one file into an existing database through the SDK.

    Used to let the SDK (pyturso's own B-tree code) modify a file that our library
    made, so our fsck can be tested on whatever that leaves behind.
    """
    data = base64.b64decode(data_b64)
    agent = await _open_existing(db)
    try:
        await agent.fs.write_file(path, data)
        st = await agent.fs.stat(path)
    finally:
        await agent.close()
    _emit({"db": db, "path": path, "ino": st.ino, "size": st.size, "mode": st.mode, "ok": True})
    return 0


# --------------------------------------------------------------------------- bench


def _op(count: int, seconds: float) -> JsonDict:
    """Format one timed operation the same way our own benchmark does."""
    return {
        "count": count,
        "seconds": round(seconds, 6),
        "ops_per_s": round(count / seconds, 2) if seconds > 0 else None,
    }


async def _timed(count: int, fn: Callable[[], Awaitable[None]]) -> JsonDict:
    """Run an async workload step once under perf_counter and format it."""
    t0 = time.perf_counter()
    await fn()
    return _op(count, time.perf_counter() - t0)


def _remove_db(path: Path) -> None:
    """Delete a database and its WAL/SHM side files, ignoring ones that are absent."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


@dataclass(frozen=True)
class BenchParams:
    """The workload shape; mirrors the options of our own benchmark driver."""

    out_dir: Path
    files: int
    dirs: int
    size: int
    large_mib: int | None
    keep: bool


async def _bench_small(
    agent: AgentFS, prm: BenchParams, results: JsonDict, problems: list[str]
) -> None:
    """Time the small-files workload: mkdir, write, read, stat, listdir, delete.

    Each step is one SDK call per item, and every SDK call commits on its own, which
    is exactly the per-operation durability cost the comparison is meant to expose.
    """
    dirs = [f"/d{i:02d}" for i in range(prm.dirs)]
    paths = [f"{dirs[i % prm.dirs]}/f{i:06d}.bin" for i in range(prm.files)]
    # Payloads are generated before timing so only SDK work is measured.
    payloads = [os.urandom(prm.size) for _ in range(prm.files)]

    async def mkdirs() -> None:
        for d in dirs:
            await agent.fs.mkdir(d)

    async def writes() -> None:
        for p, data in zip(paths, payloads, strict=True):
            await agent.fs.write_file(p, data)

    async def reads() -> None:
        bad = 0
        for p, data in zip(paths, payloads, strict=True):
            if await agent.fs.read_file(p, encoding=None) != data:
                bad += 1
        if bad:
            problems.append(f"{bad} small files read back different bytes")

    async def stats() -> None:
        for p in paths:
            await agent.fs.stat(p)

    async def listdirs() -> None:
        seen = 0
        for d in dirs:
            seen += len(await agent.fs.readdir(d))
        if seen != prm.files:
            problems.append(f"listdir saw {seen} entries, expected {prm.files}")

    async def deletes() -> None:
        for p in paths:
            await agent.fs.unlink(p)

    results["mkdir"] = await _timed(prm.dirs, mkdirs)
    results["write_small"] = await _timed(prm.files, writes)
    results["read_small"] = await _timed(prm.files, reads)
    results["stat"] = await _timed(prm.files, stats)
    results["listdir"] = await _timed(prm.dirs, listdirs)
    results["delete"] = await _timed(prm.files, deletes)


async def _bench_large(agent: AgentFS, mib: int, results: JsonDict, problems: list[str]) -> None:
    """Time writing and reading one ``mib`` MiB file.

    agentfs-sdk 0.6.4 has no pwrite/pread/append in Python, so the 1 MiB-piece pattern
    of our own benchmark cannot be reproduced: the file goes in with one write_file and
    comes back with one read_file (count=1 each).  Both still stream through the SDK's
    chunking, so MiB/s is comparable, the per-piece call overhead is not.
    """
    big = os.urandom(mib * 1024 * 1024)

    async def big_write() -> None:
        await agent.fs.write_file("/large.bin", big)

    async def big_read() -> None:
        if await agent.fs.read_file("/large.bin", encoding=None) != big:
            problems.append("large file read back different bytes")

    for name, fn in (("write_large", big_write), ("read_large", big_read)):
        rec = await _timed(1, fn)
        rec["mib"] = mib
        rec["mib_per_s"] = round(mib / rec["seconds"], 2) if rec["seconds"] else None
        results[name] = rec


async def cmd_bench(prm: BenchParams) -> int:
    """Run the small-files workload (and optionally the large-file one) on the SDK."""
    prm.out_dir.mkdir(parents=True, exist_ok=True)
    db = prm.out_dir / f"sdk-bench-{os.getpid()}-{time.time_ns()}.db"
    _remove_db(db)
    results: JsonDict = {}
    problems: list[str] = []
    notes = [
        "each SDK call commits on its own (the SDK calls commit() inside every operation)",
        "mkdir is timed separately and is not part of write_small",
    ]
    agent = await AgentFS.open(AgentFSOptions(path=str(db)))
    try:
        await _bench_small(agent, prm, results, problems)
        if prm.large_mib:
            notes.append(
                "large file: agentfs-sdk Python has no pwrite/pread/append, so the file "
                "is written with one write_file and read with one read_file; count=1"
            )
            await _bench_large(agent, prm.large_mib, results, problems)
    finally:
        await agent.close()

    results["notes"] = notes + [f"PROBLEM: {p}" for p in problems]
    results["meta"] = {
        "impl": "agentfs-sdk",
        "sdk_version": SDK_VERSION,
        "files": prm.files,
        "dirs": prm.dirs,
        "size": prm.size,
        "large_mib": prm.large_mib,
        "db": str(db),
        "db_bytes": db.stat().st_size if db.exists() else None,
        "kept": prm.keep,
    }
    if not prm.keep:
        _remove_db(db)
    _emit(results)
    return 1 if problems else 0


# --------------------------------------------------------------------------- main


def _parser() -> argparse.ArgumentParser:
    """Build the CLI; kept separate so tests can inspect it without running anything."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = p.add_subparsers(dest="cmd", required=True)

    d = sub.add_parser("dump", help="print the tree, kv and tool calls as the SDK sees them")
    d.add_argument("db")

    b = sub.add_parser("build", help="create a new db with the SDK from a JSON spec")
    b.add_argument("db")
    b.add_argument("spec_json")

    w = sub.add_parser("write", help="write one file into an existing db with the SDK")
    w.add_argument("db")
    w.add_argument("path")
    w.add_argument("data_b64")

    bn = sub.add_parser("bench", help="run the small-files (and large-file) workload")
    bn.add_argument("dir", help="directory for the fresh benchmark database")
    bn.add_argument("--files", type=int, default=1000)
    bn.add_argument("--dirs", type=int, default=20)
    bn.add_argument("--size", type=int, default=1024)
    bn.add_argument("--large-mib", type=int, default=None)
    bn.add_argument("--keep", action="store_true", help="keep the database afterwards")
    return p


def main(argv: list[str] | None = None) -> int:
    """Dispatch a subcommand; errors become a JSON object so callers can always parse."""
    args = _parser().parse_args(argv)
    coro: Coroutine[Any, Any, int]
    if args.cmd == "dump":
        coro = cmd_dump(args.db)
    elif args.cmd == "build":
        coro = cmd_build(args.db, args.spec_json)
    elif args.cmd == "write":
        coro = cmd_write(args.db, args.path, args.data_b64)
    else:
        if args.files < 0 or args.dirs < 1 or args.size < 0:
            _emit({"error": "need --files >= 0, --dirs >= 1, --size >= 0"})
            return 2
        coro = cmd_bench(
            BenchParams(
                out_dir=Path(args.dir),
                files=args.files,
                dirs=args.dirs,
                size=args.size,
                large_mib=args.large_mib,
                keep=args.keep,
            )
        )
    try:
        return asyncio.run(coro)
    except (OSError, ErrnoException, ValueError, KeyError, turso.Error) as exc:
        _emit({"error": f"{type(exc).__name__}: {exc}"})
        return 1


if __name__ == "__main__":
    sys.exit(main())
