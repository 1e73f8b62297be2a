"""fsck: check every invariant of a workspace file, and repair the ones that are safe to repair.

One small function per invariant (``check_<table>_<what>``, the rules written next to each table
in ``schema/*.sql``), run in the fixed order of ``CHECKS`` so that later checks may rely on what
earlier ones established; ``repair`` runs each check and its repair (``REPAIRS``) in ONE write
transaction, so a failure part-way leaves the file exactly as it was. Repairs never delete data a
user could still want. This module holds the ordered tables and the entry points; docs/fsck.md
explains each module, check and repair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import apsw

from agentfs.db import read_transaction, write_transaction
from agentfs.fsck.base import (
    check_ws_apply_values,
    check_ws_base_root,
    check_ws_origin_unread,
    check_ws_origin_values,
)
from agentfs.fsck.content import (
    check_fs_data_layout,
    check_fs_data_type,
    check_fs_inode_size,
    check_fs_symlink_size,
    check_fs_symlink_target,
    check_kv_store_json,
    check_tool_calls_json,
    check_tool_calls_outcome,
    check_tool_calls_times,
    check_ws_tool_call_staged_values,
    repair_fs_inode_size,
    repair_fs_symlink_size,
)
from agentfs.fsck.history import (
    check_ws_config_values,
    check_ws_dirty_baseline,
    check_ws_entry_baseline,
    check_ws_entry_frozen,
    check_ws_entry_inode,
    check_ws_entry_overlap,
    check_ws_kept_named,
    check_ws_snapshot_meta,
    check_ws_version_inode,
    repair_ws_config_values,
    repair_ws_dirty_baseline,
    repair_ws_entry_baseline,
    repair_ws_entry_frozen,
    repair_ws_kept_named,
    repair_ws_version_inode,
)
from agentfs.fsck.lost_found import LOST_FOUND
from agentfs.fsck.report import CheckFn, FsckReport, Problem, RepairFn
from agentfs.fsck.search import (
    check_ws_chunk_layout,
    check_ws_config_search,
    check_ws_embed_queue_text,
    check_ws_index_file_live,
    check_ws_text_fts,
    check_ws_vector_parked_size,
    check_ws_vector_text,
    repair_ws_chunk_layout,
    repair_ws_config_search,
    repair_ws_embed_queue_text,
    repair_ws_index_file_live,
    repair_ws_text_fts,
    repair_ws_vector_parked_size,
    repair_ws_vector_text,
)
from agentfs.fsck.sqlite import (
    UNIQUE_KEYS,
    check_fs_config_chunk_size,
    check_fs_config_schema_version,
    check_sqlite_integrity,
    check_sqlite_unique_keys,
    repair_fs_config_schema_version,
    repair_sqlite_integrity,
)
from agentfs.fsck.strays import STRAY_CHECKS, STRAY_REPAIRS
from agentfs.fsck.tree import (
    FILE_TYPES,
    NSEC,
    check_fs_dentry_directory_links,
    check_fs_dentry_name,
    check_fs_dentry_parent,
    check_fs_dentry_root,
    check_fs_inode_named,
    check_fs_inode_nlink,
    check_fs_inode_reachable,
    check_fs_inode_root,
    check_fs_inode_times,
    check_fs_inode_type,
    check_ws_keeper_holder,
    check_ws_orphan_unlinked,
    check_ws_pin_holder,
    repair_fs_dentry_directory_links,
    repair_fs_dentry_name,
    repair_fs_dentry_parent,
    repair_fs_dentry_root,
    repair_fs_inode_named,
    repair_fs_inode_nlink,
    repair_fs_inode_reachable,
    repair_fs_inode_root,
    repair_fs_inode_times,
    repair_ws_keeper_holder,
    repair_ws_orphan_unlinked,
    repair_ws_pin_holder,
)

if TYPE_CHECKING:
    from agentfs.workspace import Workspace

__all__ = [
    "CHECKS",
    "FILE_TYPES",
    "LOST_FOUND",
    "NSEC",
    "REPAIRS",
    "UNIQUE_KEYS",
    "CheckFn",
    "FsckReport",
    "Problem",
    "RepairFn",
    "check",
    "check_connection",
    "check_fs_config_chunk_size",
    "check_fs_config_schema_version",
    "check_fs_data_layout",
    "check_fs_data_type",
    "check_fs_dentry_directory_links",
    "check_fs_dentry_name",
    "check_fs_dentry_parent",
    "check_fs_dentry_root",
    "check_fs_inode_named",
    "check_fs_inode_nlink",
    "check_fs_inode_reachable",
    "check_fs_inode_root",
    "check_fs_inode_size",
    "check_fs_inode_times",
    "check_fs_inode_type",
    "check_fs_symlink_size",
    "check_fs_symlink_target",
    "check_kv_store_json",
    "check_sqlite_integrity",
    "check_sqlite_unique_keys",
    "check_tool_calls_json",
    "check_tool_calls_outcome",
    "check_tool_calls_times",
    "check_ws_apply_values",
    "check_ws_base_root",
    "check_ws_config_values",
    "check_ws_dirty_baseline",
    "check_ws_entry_baseline",
    "check_ws_entry_frozen",
    "check_ws_entry_inode",
    "check_ws_entry_overlap",
    "check_ws_keeper_holder",
    "check_ws_kept_named",
    "check_ws_origin_unread",
    "check_ws_origin_values",
    "check_ws_orphan_unlinked",
    "check_ws_pin_holder",
    "check_ws_snapshot_meta",
    "check_ws_tool_call_staged_values",
    "check_ws_version_inode",
    "repair",
    "repair_connection",
    "repair_fs_config_schema_version",
    "repair_fs_dentry_directory_links",
    "repair_fs_dentry_name",
    "repair_fs_dentry_parent",
    "repair_fs_dentry_root",
    "repair_fs_inode_named",
    "repair_fs_inode_nlink",
    "repair_fs_inode_reachable",
    "repair_fs_inode_root",
    "repair_fs_inode_size",
    "repair_fs_inode_times",
    "repair_fs_symlink_size",
    "repair_sqlite_integrity",
    "repair_ws_config_values",
    "repair_ws_dirty_baseline",
    "repair_ws_entry_baseline",
    "repair_ws_entry_frozen",
    "repair_ws_keeper_holder",
    "repair_ws_kept_named",
    "repair_ws_orphan_unlinked",
    "repair_ws_pin_holder",
    "repair_ws_version_inode",
]

# --- running --------------------------------------------------------------------------------------

#: Every check, in the order they run: structure first, then names, links, content, the logs.
CHECKS: tuple[CheckFn, ...] = (
    check_sqlite_integrity,
    check_sqlite_unique_keys,
    check_fs_config_chunk_size,
    check_fs_config_schema_version,
    check_fs_inode_root,
    check_fs_inode_type,
    check_fs_inode_times,
    check_fs_dentry_root,
    STRAY_CHECKS["check_fs_dentry_inode"],
    check_fs_dentry_parent,
    check_fs_dentry_name,
    check_fs_dentry_directory_links,
    check_ws_orphan_unlinked,
    check_ws_pin_holder,
    check_ws_keeper_holder,
    check_fs_inode_named,
    check_fs_inode_reachable,
    check_fs_inode_nlink,
    STRAY_CHECKS["check_fs_symlink_inode"],
    check_fs_symlink_target,
    check_fs_symlink_size,
    STRAY_CHECKS["check_fs_data_inode"],
    check_fs_data_type,
    check_fs_data_layout,
    check_fs_inode_size,
    STRAY_CHECKS["check_ws_xattr_inode"],
    check_ws_config_values,
    check_ws_version_inode,
    check_ws_kept_named,
    check_ws_snapshot_meta,
    check_ws_entry_inode,
    check_ws_entry_overlap,
    check_ws_entry_frozen,
    check_ws_entry_baseline,
    check_ws_dirty_baseline,
    STRAY_CHECKS["check_ws_read_values"],
    check_ws_config_search,
    STRAY_CHECKS["check_ws_index_queue_issued"],
    check_ws_index_file_live,
    check_ws_chunk_layout,
    check_ws_text_fts,
    check_ws_embed_queue_text,
    check_ws_vector_text,
    check_ws_vector_parked_size,
    check_kv_store_json,
    check_tool_calls_json,
    check_tool_calls_outcome,
    check_tool_calls_times,
    STRAY_CHECKS["check_ws_tool_write_call"],
    STRAY_CHECKS["check_ws_tool_call_who_call"],
    check_ws_tool_call_staged_values,
    STRAY_CHECKS["check_ws_skill_active_values"],
    check_ws_base_root,
    check_ws_origin_values,
    check_ws_origin_unread,
    check_ws_apply_values,
)

#: The repair of each check that has one; it runs only when its check found repairable problems.
REPAIRS: dict[CheckFn, RepairFn] = {
    check_sqlite_integrity: repair_sqlite_integrity,
    check_fs_config_schema_version: repair_fs_config_schema_version,
    check_fs_inode_root: repair_fs_inode_root,
    check_fs_inode_times: repair_fs_inode_times,
    check_fs_dentry_root: repair_fs_dentry_root,
    check_fs_dentry_parent: repair_fs_dentry_parent,
    check_fs_dentry_name: repair_fs_dentry_name,
    check_fs_dentry_directory_links: repair_fs_dentry_directory_links,
    check_ws_orphan_unlinked: repair_ws_orphan_unlinked,
    check_ws_pin_holder: repair_ws_pin_holder,
    check_ws_keeper_holder: repair_ws_keeper_holder,
    check_fs_inode_named: repair_fs_inode_named,
    check_fs_inode_reachable: repair_fs_inode_reachable,
    check_fs_inode_nlink: repair_fs_inode_nlink,
    check_fs_symlink_size: repair_fs_symlink_size,
    check_fs_inode_size: repair_fs_inode_size,
    check_ws_config_values: repair_ws_config_values,
    check_ws_version_inode: repair_ws_version_inode,
    check_ws_kept_named: repair_ws_kept_named,
    check_ws_entry_frozen: repair_ws_entry_frozen,
    check_ws_entry_baseline: repair_ws_entry_baseline,
    check_ws_dirty_baseline: repair_ws_dirty_baseline,
    check_ws_config_search: repair_ws_config_search,
    check_ws_index_file_live: repair_ws_index_file_live,
    check_ws_chunk_layout: repair_ws_chunk_layout,
    check_ws_text_fts: repair_ws_text_fts,
    check_ws_embed_queue_text: repair_ws_embed_queue_text,
    check_ws_vector_text: repair_ws_vector_text,
    check_ws_vector_parked_size: repair_ws_vector_parked_size,
    **STRAY_REPAIRS,
}


def __getattr__(name: str) -> CheckFn | RepairFn:
    """The checks and repairs ``strays`` makes, by name: ``fsck.check_fs_data_inode``."""
    check = STRAY_CHECKS.get(name.replace("repair_", "check_", 1))
    if check is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return STRAY_REPAIRS[check] if name.startswith("repair_") else check


def _run(check: CheckFn, conn: apsw.Connection) -> list[Problem]:
    """The check's problems; one that SQLite cannot even answer (a query through a damaged
    index) is itself a problem, left for the integrity repair that runs before it."""
    try:
        return list(check(conn))
    except apsw.CorruptError as exc:
        return [Problem(check.__name__, f"could not run on the damaged file: {exc}", False)]


def check_connection(conn: apsw.Connection) -> FsckReport:
    """Run every check in one read transaction; never writes."""
    problems: list[Problem] = []
    try:
        with read_transaction(conn):
            for run in CHECKS:
                problems.extend(_run(run, conn))
    except apsw.CorruptError:
        pass  # already reported by the check that met it; SQLite then fails the COMMIT too
    return FsckReport(problems)


def repair_connection(conn: apsw.Connection) -> FsckReport:
    """Check and repair in one write transaction, then re-check; see ``repair``."""
    repaired: list[str] = []
    try:
        with write_transaction(conn):
            for run in CHECKS:
                found = _run(run, conn)
                fix = REPAIRS.get(run)
                if fix is not None and any(p.repairable for p in found):
                    repaired.extend(fix(conn))
    except apsw.CorruptError:
        repaired = []  # a damage REINDEX could not fix: SQLite rolled everything back
    report = check_connection(conn)
    report.repaired = repaired
    return report


def check(ws: Workspace) -> FsckReport:
    """Every invariant of ``ws``'s file, checked read-only."""
    return check_connection(ws.conn)


def repair(ws: Workspace) -> FsckReport:
    """Fix what is safely repairable in one write transaction, then re-check.

    The returned report holds what is still wrong (problems no repair may touch) and, in
    ``repaired``, one line per action taken."""
    try:
        return repair_connection(ws.conn)
    finally:
        ws.drop_caches()  # names may have moved; the path cache must not outlive them
