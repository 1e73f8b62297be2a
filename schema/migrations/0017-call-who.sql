-- Migration 17: who made each tool call (docs/schema.md). The spec's tool_calls keeps no
-- thread or actor; the web view filters the log by thread, and clients over HTTP each work in
-- a thread of their own, so each call's thread and actor are kept beside it.
--
-- ws_tool_call_who: one row per logged call that ran with a thread or an actor.
--   call_id   tool_calls.id of the call
--   thread    the Toolset's thread (NULL: none)
--   actor     who acted (NULL: nobody named)
-- ws_tool_call_staged gains thread and actor (agentfs.db._call_who adds the columns where
-- they are missing): a staged row carries them until it is published.
CREATE TABLE IF NOT EXISTS ws_tool_call_who (
  call_id INTEGER PRIMARY KEY,
  thread TEXT,
  actor TEXT
);
CREATE INDEX IF NOT EXISTS ws_tool_call_who_thread ON ws_tool_call_who(thread);
