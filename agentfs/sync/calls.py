"""The tool-call log travels (docs/sync.md): each copy sends the calls it logged itself as
insert-only objects, and stores the calls other copies sent, unchanged, once each.

Who made each call (``ws_tool_call_who``) travels in objects of its own kind, ``callers``,
beside the ``calls`` objects whose rows keep the spec's eight columns: a copy that does not
know the kind reads the calls as before and leaves the callers alone."""

from __future__ import annotations

import agentfs
from agentfs.sync.replica import Replica
from agentfs.sync.state import SyncState


def send(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> int:
    """Put the calls logged here since the last send into the replica; how many."""
    ws.tool_calls.publish()  # staged rows of changing calls travel too
    rows = ws.tool_calls.rows_after(state.get("calls_sent", 0))
    if not rows:
        return 0
    arrived = state.arrived_calls(rows[0][0])
    own = [list(row) for row in rows if row[0] not in arrived]
    if own:
        replica.write_object("calls", own)
        callers = ws.tool_calls.callers(own[0][0], own[-1][0])
        mine = [list(row) for row in callers if row[0] not in arrived]
        if mine:
            replica.write_object("callers", mine)
    state.record(calls_sent=rows[-1][0])
    return len(own)


def receive(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> int:
    """Store the calls other copies sent that are not here yet; how many."""
    seen: dict[str, str] = state.get("calls_seen", {})
    stored = 0
    for key, rows in replica.objects("calls"):
        origin = key.split("/", 1)[0]
        if key <= seen.get(origin, ""):
            continue
        with ws.transaction():
            new = [row for row in rows if not state.has_call(origin, row[0])]
            ids = ws.tool_calls.insert_rows(new)
            state.add_calls(origin, [row[0] for row in new], ids)
            seen[origin] = key
            state.record(calls_seen=seen)
        stored += len(new)
    _receive_callers(ws, replica, state)
    return stored


def _receive_callers(ws: agentfs.Workspace, replica: Replica, state: SyncState) -> None:
    """Who made the calls other copies sent (their ``callers`` objects, each read once):
    kept for the calls stored here, found by their id at the origin."""
    seen: dict[str, str] = state.get("callers_seen", {})
    for key, rows in replica.objects("callers"):
        origin = key.split("/", 1)[0]
        if key <= seen.get(origin, ""):
            continue
        with ws.transaction():
            local = state.local_calls(origin, [row[0] for row in rows])
            ws.tool_calls.add_callers(
                [(local[row[0]], row[1], row[2]) for row in rows if row[0] in local]
            )
            seen[origin] = key
            state.record(callers_seen=seen)
